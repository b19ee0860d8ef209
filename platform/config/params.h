// A model's parameters declared once: name, unit, range, help, and the member
// of its configuration struct that the value lands in. The default is read
// from a default-constructed struct, so the model's header stays the one
// place a default is written. From one table come the schema (validation and
// the reference in docs/config.md) and the parsing of a validated document.
//
//   ParamTable<DmaConfig> t;
//   t.add("burst_bytes", &DmaConfig::burst_bytes, 4, 4096, "bytes", "Size of each burst.");
//   object(t.fields(), "...");           // schema
//   t.read(validated_json, cfg);          // parse
//
// When the JSON object and the struct are not shaped alike, within() declares
// fields of the object whose members lie in a struct inside S, group() a JSON
// sub-object (of a nested struct, or of S itself), and custom() a field that
// is not a plain parameter, with its own schema node and setter. required()
// after a declaration drops its default: documents must give the value.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "config/schema.h"

namespace smmu_vp::config {

template <class S>
class ParamTable;

// One field of a table of Root: its schema and how its validated value lands.
template <class Root>
struct ParamEntry {
  std::string name;
  NodePtr node;
  std::function<void(const json& value, Root&)> set;
};

// Declares fields of a table of Root whose members belong to S: Root itself
// (ParamTable<S>), or a struct inside it (ParamTable::within()). Every method
// appends one field, in documentation order.
template <class Root, class S>
class ParamScope {
 public:
  // A number, an unsigned integer or a switch (by the member's type).
  template <class V>
  ParamScope& add(const char* name, V S::*member, double min, double max, const char* unit, const char* help) {
    static_assert(std::is_arithmetic_v<V>, "add() takes numeric or bool members; use choice() or address()");
    const V d = defaults().*member;
    NodePtr node;
    if constexpr (std::is_same_v<V, bool>) node = leaf(Type::kBool, d, unit, help);
    else if constexpr (std::is_floating_point_v<V>) node = ranged(Type::kNumber, d, min, max, unit, help);
    else node = ranged(Type::kUint, static_cast<uint64_t>(d), min, max, unit, help);
    return push(name, node, [member](const json& v, S& s) { s.*member = v.template get<V>(); });
  }
  ParamScope& add(const char* name, bool S::*member, const char* help) { return add(name, member, 0, 1, "", help); }

  // An address or size: an integer or a string like "0x1000" / "64KiB";
  // without min and max, any 64-bit value.
  ParamScope& address(const char* name, uint64_t S::*member, double min, double max, const char* unit,
                      const char* help) {
    return push(name, ranged(Type::kAddress, defaults().*member, min, max, unit, help), set_address(member));
  }
  ParamScope& address(const char* name, uint64_t S::*member, const char* unit, const char* help) {
    return push(name, leaf(Type::kAddress, defaults().*member, unit, help), set_address(member));
  }

  // One of a few named values of an enumeration (or any type).
  template <class V>
  ParamScope& choice(const char* name, V S::*member, std::vector<std::pair<std::string, V>> values,
                     const char* help) {
    const V d = defaults().*member;
    std::string def;
    std::vector<std::string> names;
    for (const auto& [n, v] : values) {
      names.push_back(n);
      if (v == d) def = n;
    }
    return push(name, config::choice(def, names, help), [member, values](const json& v, S& s) {
      for (const auto& [n, value] : values)
        if (n == v.template get<std::string>()) s.*member = value;
    });
  }

  // A group of parameters of a nested struct, as a JSON object of its own.
  template <class N>
  ParamScope& group(const char* name, N S::*member, const ParamTable<N>& table, const char* help) {
    return push(name, object(table.fields(), help), [member, table](const json& v, S& s) { table.read(v, s.*member); });
  }
  // A JSON object of its own whose parameters are members of S itself.
  ParamScope& group(const char* name, const ParamTable<S>& table, const char* help) {
    return push(name, object(table.fields(), help), [table](const json& v, S& s) { table.read(v, s); });
  }

  // A field that is not a plain parameter: its schema, and what its validated
  // value does to S.
  ParamScope& custom(const char* name, NodePtr node, std::function<void(const json& value, S&)> set) {
    return push(name, std::move(node), std::move(set));
  }

  // Fields of this same JSON object whose members are in S::*member.
  template <class N>
  ParamScope<Root, N> within(N S::*member) {
    auto get = get_;
    return ParamScope<Root, N>(entries_, [get, member](Root& r) -> N& { return get(r).*member; });
  }

  // The field just declared has no default: a document must give it.
  ParamScope& required() {
    auto n = std::make_shared<Node>(*entries_->back().node);
    n->default_value = json();
    entries_->back().node = std::move(n);
    return *this;
  }

 protected:
  template <class, class>
  friend class ParamScope;
  ParamScope(std::vector<ParamEntry<Root>>* entries, std::function<S&(Root&)> get)
      : entries_(entries), get_(std::move(get)) {}

 private:
  // S's members as a default-constructed Root has them.
  S defaults() const {
    Root r{};
    return get_(r);
  }
  static std::function<void(const json&, S&)> set_address(uint64_t S::*member) {
    return [member](const json& v, S& s) { s.*member = v.template get<uint64_t>(); };
  }
  ParamScope& push(const char* name, NodePtr node, std::function<void(const json&, S&)> set) {
    entries_->push_back(
        {name, std::move(node), [get = get_, set = std::move(set)](const json& v, Root& r) { set(v, get(r)); }});
    return *this;
  }

  std::vector<ParamEntry<Root>>* entries_;
  std::function<S&(Root&)> get_;
};

template <class S>
class ParamTable : public ParamScope<S, S> {
 public:
  ParamTable() : ParamScope<S, S>(&entries_, identity) {}
  ParamTable(const ParamTable& o) : ParamScope<S, S>(&entries_, identity), entries_(o.entries_) {}
  ParamTable& operator=(const ParamTable& o) {
    entries_ = o.entries_;
    return *this;
  }

  // Schema fields, in declaration order, for object().
  std::vector<std::pair<std::string, NodePtr>> fields() const {
    std::vector<std::pair<std::string, NodePtr>> f;
    for (const auto& e : entries_) f.emplace_back(e.name, e.node);
    return f;
  }

  // Sets every declared member from an object validated against fields().
  void read(const json& validated, S& s) const {
    for (const auto& e : entries_) e.set(validated.at(e.name), s);
  }

 private:
  static S& identity(S& s) { return s; }
  std::vector<ParamEntry<S>> entries_;
};

}  // namespace smmu_vp::config

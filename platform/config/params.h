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
#pragma once

#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "config/schema.h"

namespace smmu_vp::config {

template <class S>
class ParamTable {
 public:
  // A number, an unsigned integer or a switch (by the member's type).
  template <class V>
  ParamTable& add(const char* name, V S::*member, double min, double max, const char* unit, const char* help) {
    static_assert(std::is_arithmetic_v<V>, "add() takes numeric or bool members; use choice() or address()");
    const S defaults{};
    const V d = defaults.*member;
    NodePtr node;
    if constexpr (std::is_same_v<V, bool>) node = leaf(Type::kBool, d, unit, help);
    else if constexpr (std::is_floating_point_v<V>) node = ranged(Type::kNumber, d, min, max, unit, help);
    else node = ranged(Type::kUint, static_cast<uint64_t>(d), min, max, unit, help);
    entries_.push_back({name, node, [name, member](const json& j, S& s) { s.*member = j.at(name).template get<V>(); }});
    return *this;
  }
  ParamTable& add(const char* name, bool S::*member, const char* help) {
    return add(name, member, 0, 1, "", help);
  }

  // An address or size: an integer or a string like "0x1000" / "64KiB".
  ParamTable& address(const char* name, uint64_t S::*member, double min, double max, const char* unit,
                      const char* help) {
    const S defaults{};
    entries_.push_back({name, ranged(Type::kAddress, defaults.*member, min, max, unit, help),
                        [name, member](const json& j, S& s) { s.*member = j.at(name).template get<uint64_t>(); }});
    return *this;
  }

  // One of a few named values of an enumeration (or any type).
  template <class V>
  ParamTable& choice(const char* name, V S::*member, std::vector<std::pair<std::string, V>> values,
                     const char* help) {
    const S defaults{};
    std::string def;
    std::vector<std::string> names;
    for (const auto& [n, v] : values) {
      names.push_back(n);
      if (v == defaults.*member) def = n;
    }
    entries_.push_back({name, config::choice(def, names, help), [name, member, values](const json& j, S& s) {
                          const std::string got = j.at(name).template get<std::string>();
                          for (const auto& [n, v] : values)
                            if (n == got) s.*member = v;
                        }});
    return *this;
  }

  // A group of parameters of a nested struct, as a JSON object of its own.
  template <class N>
  ParamTable& group(const char* name, N S::*member, const ParamTable<N>& table, const char* help) {
    entries_.push_back({name, object(table.fields(), help), [name, member, table](const json& j, S& s) {
                          table.read(j.at(name), s.*member);
                        }});
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
    for (const auto& e : entries_) e.set(validated, s);
  }

 private:
  struct Entry {
    std::string name;
    NodePtr node;
    std::function<void(const json&, S&)> set;
  };
  std::vector<Entry> entries_;
};

}  // namespace smmu_vp::config

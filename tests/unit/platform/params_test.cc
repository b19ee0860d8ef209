// ParamTable (config/params.h): one declaration per parameter gives the schema
// (defaults read from the struct, ranges, choices, groups) and the parse of a
// validated document into the struct.
#include "config/params.h"

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

namespace smmu_vp::config {
namespace {

enum class Colour { kRed, kGreen, kBlue };

struct Inner {
  unsigned depth = 3;
  double rate = 1.5;
};

struct Timing {
  double step_ns = 2.0;
};

struct Outer {
  unsigned count = 4;
  double latency_ns = 12.5;
  bool enabled = true;
  uint64_t base = 0x1000;
  uint64_t size = 64 << 10;
  Colour colour = Colour::kGreen;
  Inner inner;
  Timing timing{7.0};  // a nested default the outer struct overrides
  unsigned flat_a = 1, flat_b = 2;  // members of Outer, JSON object "pair"
  unsigned line = 0;
  std::string label = "none";
};

ParamTable<Outer> outer_table() {
  ParamTable<Inner> inner;
  inner.add("depth", &Inner::depth, 1, 8, "levels", "How deep.");
  inner.add("rate", &Inner::rate, 0, 10, "", "How fast.");
  ParamTable<Outer> pair;
  pair.add("a", &Outer::flat_a, 0, 9, "", "First.");
  pair.add("b", &Outer::flat_b, 0, 9, "", "Second.");

  ParamTable<Outer> t;
  t.add("count", &Outer::count, 1, 16, "items", "How many.");
  t.add("latency_ns", &Outer::latency_ns, 0, 100, "ns", "How long.");
  t.add("enabled", &Outer::enabled, "On or off.");
  t.address("base", &Outer::base, "address", "Where.");
  t.address("size", &Outer::size, 4096, 1 << 20, "bytes", "How big.");
  t.choice("colour", &Outer::colour, {{"red", Colour::kRed}, {"green", Colour::kGreen}, {"blue", Colour::kBlue}},
           "Which.");
  t.group("inner", &Outer::inner, inner, "A nested struct.");
  t.within(&Outer::timing).add("step_ns", &Timing::step_ns, 0, 50, "ns", "A nested member at this level.");
  t.group("pair", pair, "Members of the outer struct in a sub-object.");
  t.add("line", &Outer::line, 0, 31, "line", "Must be given.").required();
  t.custom("label", leaf(Type::kString, "none", "", "Free text."),
           [](const json& v, Outer& o) { o.label = "<" + v.get<std::string>() + ">"; });
  return t;
}

// The schema node of `name` in `t`.
NodePtr field(const ParamTable<Outer>& t, const std::string& name) {
  for (const auto& [n, node] : t.fields())
    if (n == name) return node;
  return nullptr;
}

// The path of the ConfigError validating `doc` throws, or "(no error)".
std::string error_path(const json& doc) {
  try {
    validate(*object(outer_table().fields()), doc, "/root");
  } catch (const ConfigError& e) {
    return e.path();
  }
  return "(no error)";
}

TEST(ParamTable, FieldsInDeclarationOrder) {
  std::vector<std::string> names;
  for (const auto& [n, node] : outer_table().fields()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"count", "latency_ns", "enabled", "base", "size", "colour", "inner",
                                             "step_ns", "pair", "line", "label"}));
}

TEST(ParamTable, DefaultsAndTypesReadFromTheStruct) {
  const ParamTable<Outer> t = outer_table();
  EXPECT_EQ(field(t, "count")->type, Type::kUint);
  EXPECT_EQ(field(t, "count")->default_value, 4u);
  EXPECT_EQ(field(t, "count")->unit, "items");
  EXPECT_EQ(field(t, "count")->help, "How many.");
  EXPECT_TRUE(field(t, "count")->has_range);
  EXPECT_EQ(field(t, "count")->max, 16.0);
  EXPECT_EQ(field(t, "latency_ns")->type, Type::kNumber);
  EXPECT_EQ(field(t, "latency_ns")->default_value, 12.5);
  EXPECT_EQ(field(t, "enabled")->type, Type::kBool);
  EXPECT_EQ(field(t, "enabled")->default_value, true);
  EXPECT_FALSE(field(t, "enabled")->has_range);
  EXPECT_EQ(field(t, "base")->type, Type::kAddress);
  EXPECT_EQ(field(t, "base")->default_value, 0x1000u);
  EXPECT_FALSE(field(t, "base")->has_range);  // no min and max: any 64-bit value
  EXPECT_TRUE(field(t, "size")->has_range);
  EXPECT_EQ(field(t, "colour")->default_value, "green");
  EXPECT_EQ(field(t, "colour")->choices, (std::vector<std::string>{"red", "green", "blue"}));
  EXPECT_EQ(field(t, "inner")->type, Type::kObject);
  EXPECT_EQ(field(t, "inner")->fields.at(0).second->default_value, 3u);
  // within(): the default of the member as the outer struct has it.
  EXPECT_EQ(field(t, "step_ns")->default_value, 7.0);
  EXPECT_EQ(field(t, "pair")->fields.at(1).second->default_value, 2u);
  EXPECT_TRUE(field(t, "line")->default_value.is_null());  // required()
  EXPECT_EQ(field(t, "line")->help, "Must be given.");
}

TEST(ParamTable, ReadFillsEveryMemberWithItsDefault) {
  const ParamTable<Outer> t = outer_table();
  const json v = validate(*object(t.fields()), json{{"line", 5}});
  Outer o;
  o.count = 99;
  o.latency_ns = 99;
  o.enabled = false;
  o.colour = Colour::kBlue;
  o.inner.depth = 99;
  o.timing.step_ns = 99;
  o.flat_b = 99;
  t.read(v, o);
  const Outer d;
  EXPECT_EQ(o.count, d.count);
  EXPECT_EQ(o.latency_ns, d.latency_ns);
  EXPECT_EQ(o.enabled, d.enabled);
  EXPECT_EQ(o.colour, d.colour);
  EXPECT_EQ(o.inner.depth, d.inner.depth);
  EXPECT_EQ(o.timing.step_ns, 7.0);
  EXPECT_EQ(o.flat_b, d.flat_b);
  EXPECT_EQ(o.line, 5u);
  EXPECT_EQ(o.label, "<none>");
}

TEST(ParamTable, ReadSetsEachMember) {
  const ParamTable<Outer> t = outer_table();
  const json doc = json::parse(R"({"count": 9, "latency_ns": 3.25, "enabled": false, "base": "0x8000",
      "size": "64KiB", "colour": "blue", "inner": {"depth": 6}, "step_ns": 4, "pair": {"a": 7},
      "line": 31, "label": "x"})");
  Outer o;
  t.read(validate(*object(t.fields()), doc), o);
  EXPECT_EQ(o.count, 9u);
  EXPECT_EQ(o.latency_ns, 3.25);
  EXPECT_FALSE(o.enabled);
  EXPECT_EQ(o.base, 0x8000u);
  EXPECT_EQ(o.size, 64u << 10);
  EXPECT_EQ(o.colour, Colour::kBlue);
  EXPECT_EQ(o.inner.depth, 6u);
  EXPECT_EQ(o.inner.rate, 1.5);  // the group's own default
  EXPECT_EQ(o.timing.step_ns, 4.0);
  EXPECT_EQ(o.flat_a, 7u);
  EXPECT_EQ(o.flat_b, 2u);
  EXPECT_EQ(o.line, 31u);
  EXPECT_EQ(o.label, "<x>");
}

TEST(ParamTable, ErrorsAtTheParameterPath) {
  EXPECT_EQ(error_path({{"line", 0}}), "(no error)");
  EXPECT_EQ(error_path({{"line", 0}, {"count", 17}}), "/root/count");
  EXPECT_EQ(error_path({{"line", 0}, {"count", 0}}), "/root/count");
  EXPECT_EQ(error_path({{"line", 0}, {"latency_ns", "slow"}}), "/root/latency_ns");
  EXPECT_EQ(error_path({{"line", 0}, {"size", "2MiB"}}), "/root/size");
  EXPECT_EQ(error_path({{"line", 0}, {"colour", "pink"}}), "/root/colour");
  EXPECT_EQ(error_path({{"line", 0}, {"inner", {{"depth", 9}}}}), "/root/inner/depth");
  EXPECT_EQ(error_path({{"line", 0}, {"inner", {{"width", 1}}}}), "/root/inner/width");
  EXPECT_EQ(error_path({{"line", 0}, {"pair", {{"b", 10}}}}), "/root/pair/b");
  EXPECT_EQ(error_path({{"line", 0}, {"step_ns", 51}}), "/root/step_ns");
  EXPECT_EQ(error_path(json::object()), "/root/line");  // required
  EXPECT_EQ(error_path({{"line", 32}}), "/root/line");
  try {
    validate(*object(outer_table().fields()), {{"line", 0}, {"count", 17}}, "/root");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "/root/count: must be between 1 and 16 items (got 17)");
  }
}

// A table copied (as group() and the static tables do) reads into the copy's
// struct, and adding to one does not change the other.
TEST(ParamTable, CopiesAreIndependent) {
  ParamTable<Inner> a;
  a.add("depth", &Inner::depth, 1, 8, "", "");
  ParamTable<Inner> b = a;
  b.add("rate", &Inner::rate, 0, 10, "", "");
  EXPECT_EQ(a.fields().size(), 1u);
  EXPECT_EQ(b.fields().size(), 2u);
  Inner i;
  b.read(json{{"depth", 2}, {"rate", 0.5}}, i);
  EXPECT_EQ(i.depth, 2u);
  EXPECT_EQ(i.rate, 0.5);
}

}  // namespace
}  // namespace smmu_vp::config

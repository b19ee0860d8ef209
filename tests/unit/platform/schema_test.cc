// The schema engine behind the configuration: validate() on small schemas,
// parse_address(), and the generated parameter reference.
#include "config/schema.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "apps/apps.h"
#include "config/run_config.h"
#include "hal/hal.h"

namespace smmu_vp::config {
namespace {

// The path of the ConfigError `fn` throws, or "(no error)".
template <typename Fn>
std::string error_path(Fn fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e.path();
  }
  return "(no error)";
}

// ---- validate() on a hand-made schema, for types the run schema lacks.

NodePtr sample_schema() {
  return object({
      {"enabled", leaf(Type::kBool, false, "", "A flag.")},
      {"mode", choice("fast", {"fast", "slow"}, "A choice.")},
      {"limit", ranged(Type::kUint, 10, 0, 0xFFFFFFFFu, "", "32-bit.")},
      {"big", leaf(Type::kUint, 0, "", "Any 64-bit value.")},
      {"ratio", ranged(Type::kNumber, 0.5, 0.0, 1.0, "", "A fraction.")},
      {"name", leaf(Type::kString, json(), "", "Required.")},
      {"note", optional(leaf(Type::kString, json(), "", "May be absent."))},
      {"inner", object({{"x", leaf(Type::kUint, 3, "", "")}})},
      {"extra", optional(object({{"y", leaf(Type::kUint, 4, "", "")}}))},
      {"list", array_of(leaf(Type::kUint, 0, "", ""), json::array({1, 2}), "A list.")},
  });
}

TEST(SchemaValidate, DefaultsFilled) {
  const json out = validate(*sample_schema(), json{{"name", "n"}});
  EXPECT_EQ(out, json::parse(R"({"enabled": false, "mode": "fast", "limit": 10, "big": 0, "ratio": 0.5,
                                 "name": "n", "inner": {"x": 3}, "list": [1, 2]})"));
  EXPECT_FALSE(out.contains("note"));   // optional, no default: stays absent
  EXPECT_FALSE(out.contains("extra"));  // optional object: stays absent
}

TEST(SchemaValidate, OptionalObjectValidatedWhenPresent) {
  const json out = validate(*sample_schema(), json{{"name", "n"}, {"extra", json::object()}, {"note", "hi"}});
  EXPECT_EQ(out["extra"]["y"], 4);
  EXPECT_EQ(out["note"], "hi");
  EXPECT_EQ(error_path([] { validate(*sample_schema(), json{{"name", "n"}, {"extra", {{"z", 1}}}}); }), "/extra/z");
}

TEST(SchemaValidate, Bool) {
  const auto s = sample_schema();
  EXPECT_EQ(validate(*s, json{{"name", "n"}, {"enabled", true}})["enabled"], true);
  for (const json& bad : {json(1), json(0), json("true"), json(nullptr)}) {
    try {
      validate(*s, json{{"name", "n"}, {"enabled", bad}});
      ADD_FAILURE() << bad.dump() << " accepted as a boolean";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.path(), "/enabled");
      EXPECT_NE(e.reason().find("expected true or false"), std::string::npos) << e.what();
    }
  }
}

TEST(SchemaValidate, Choice) {
  const auto s = sample_schema();
  EXPECT_EQ(validate(*s, json{{"name", "n"}, {"mode", "slow"}})["mode"], "slow");
  try {
    validate(*s, json{{"name", "n"}, {"mode", "medium"}});
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/mode");
    EXPECT_NE(e.reason().find("\"medium\" is not one of: fast, slow"), std::string::npos) << e.what();
  }
  EXPECT_EQ(error_path([&] { validate(*s, json{{"name", "n"}, {"mode", "FAST"}}); }), "/mode");  // case matters
}

TEST(SchemaValidate, UnsignedLimits) {
  const auto s = sample_schema();
  auto with = [&](const char* key, const json& v) { return validate(*s, json{{"name", "n"}, {key, v}}); };
  EXPECT_EQ(with("limit", 0xFFFFFFFFu)["limit"], 0xFFFFFFFFu);
  EXPECT_EQ(error_path([&] { with("limit", 0x100000000ull); }), "/limit");
  EXPECT_EQ(with("big", UINT64_MAX)["big"], UINT64_MAX);
  // An integral float is accepted and stored as an integer.
  const json f = with("limit", 3.0)["limit"];
  EXPECT_TRUE(f.is_number_unsigned());
  EXPECT_EQ(f, 3u);
  EXPECT_EQ(error_path([&] { with("limit", 1e10); }), "/limit");  // range applies to floats too
}

// A float too big for 64 bits has no integer value to store.
TEST(SchemaValidate, HugeFloatForUnsignedRejected) {
  const auto s = sample_schema();
  json out;
  EXPECT_EQ(error_path([&] { out = validate(*s, json{{"name", "n"}, {"big", 1e30}}); }), "/big")
      << "stored as " << out["big"].dump();
}

TEST(SchemaValidate, NumberRangeAndType) {
  const auto s = sample_schema();
  EXPECT_EQ(validate(*s, json{{"name", "n"}, {"ratio", 1}})["ratio"], 1.0);  // integers are numbers
  EXPECT_EQ(error_path([&] { validate(*s, json{{"name", "n"}, {"ratio", 1.01}}); }), "/ratio");
  EXPECT_EQ(error_path([&] { validate(*s, json{{"name", "n"}, {"ratio", "0.5"}}); }), "/ratio");
}

TEST(SchemaValidate, RequiredAndUnknown) {
  const auto s = sample_schema();
  EXPECT_EQ(error_path([&] { validate(*s, json::object()); }), "/name");
  EXPECT_EQ(error_path([&] { validate(*s, json{{"name", "n"}, {"inner", {{"x", 1}, {"w", 2}}}}); }), "/inner/w");
  EXPECT_EQ(error_path([&] { validate(*s, json{{"name", "n"}, {"list", {1, -2}}}); }), "/list/1");
  EXPECT_EQ(error_path([&] { validate(*s, json{{"name", "n"}}, "/root"); }), "(no error)");
  EXPECT_EQ(error_path([&] { validate(*s, json{{"name", 1}}, "/root"); }), "/root/name");  // path prefix
}

// ---- parse_address

TEST(ParseAddress, AcceptedForms) {
  const struct {
    json in;
    uint64_t out;
  } cases[] = {
      {json(4096), 4096},
      {json(0), 0},
      {json(UINT64_MAX), UINT64_MAX},
      {json("4096"), 4096},
      {json("0x80000000"), 0x80000000},
      {json("0X10"), 16},
      {json("0xffffffffffffffff"), UINT64_MAX},
      {json("64KiB"), 64 * 1024},
      {json("1MiB"), 1 << 20},
      {json("1GiB"), 1ull << 30},
      {json("2TiB"), 2ull << 40},
      {json("4K"), 4096},
      {json("3M"), 3u << 20},
      {json("1G"), 1ull << 30},
      {json("1T"), 1ull << 40},
      {json("16777215TiB"), 16777215ull << 40},
  };
  for (const auto& c : cases) EXPECT_EQ(parse_address(c.in, "/a"), c.out) << c.in.dump();
}

TEST(ParseAddress, RejectedForms) {
  for (const json& bad : {json("0xZZ"), json("12XiB"), json("-5"), json(-5), json(""), json("KiB"), json("1.5GiB"),
                          json("64 KiB"), json("1kib"), json("16777216TiB"), json("18446744073709551616"),
                          json(1.5), json(true), json(nullptr), json::array(), json::object()}) {
    EXPECT_EQ(error_path([&] { parse_address(bad, "/x/y"); }), "/x/y") << bad.dump() << " accepted";
  }
}

// What parse_address makes of `text`: the value, or "error".
std::string parsed(const char* text) {
  try {
    return std::to_string(parse_address(json(text), "/a"));
  } catch (const ConfigError&) {
    return "error";
  }
}

// The header promises "integer, 0x... hex, decimal string": a leading zero
// must not switch to octal, and a sign behind whitespace must not wrap
// around to a huge value.
TEST(ParseAddress, DecimalStringsAreDecimal) {
  EXPECT_EQ(parsed("010"), "10");
  EXPECT_EQ(parsed("08"), "8");
  EXPECT_EQ(parsed("0100KiB"), "102400");
  EXPECT_EQ(parsed(" -5"), "error");
  EXPECT_EQ(parsed("\t-1"), "error");
}

// ---- The generated reference (docs/config.md)

// Paths the reference names, following its conventions: map entries are
// NAME, array elements N, variants share their map entry's path; a map or
// array of plain values is one parameter.
void collect_leaf_paths(const Node& n, const std::string& path, std::vector<std::string>& out) {
  auto join = [&](const std::string& name) { return path.empty() ? name : path + "." + name; };
  switch (n.type) {
    case Type::kObject:
      for (const auto& [name, child] : n.fields) collect_leaf_paths(*child, join(name), out);
      return;
    case Type::kVariant:
      for (const auto& [name, child] : n.variants) collect_leaf_paths(*child, path, out);
      return;
    case Type::kMap:
    case Type::kArray:
      if (n.element->type == Type::kObject || n.element->type == Type::kVariant) {
        collect_leaf_paths(*n.element, join(n.type == Type::kMap ? "NAME" : "N"), out);
        return;
      }
      out.push_back(path);
      return;
    default:
      out.push_back(path);
  }
}

// The table row documenting `path`, or "".
std::string row_of(const std::string& doc, const std::string& path) {
  const std::string head = "| `" + path + "` |";
  const size_t at = doc.find(head);
  if (at == std::string::npos) return "";
  return doc.substr(at, doc.find('\n', at) - at);
}

TEST(ConfigReference, MentionsEveryLeafParameter) {
  std::vector<std::string> paths;
  collect_leaf_paths(run_schema(), "", paths);
  // The walk itself found the parameters we know of.
  const std::set<std::string> all(paths.begin(), paths.end());
  for (const char* known : {"platform.cpu.count", "platform.cpu.costs", "platform.dram.dma_region.size",
                            "platform.intc.lines", "platform.devices.NAME.irq", "platform.devices.NAME.type",
                            "scenario.apps.N.app", "scenario.apps.N.cores", "scenario.apps.N.params",
                            "scenario.stop.max_time_us"})
    EXPECT_EQ(all.count(known), 1u) << known;
  ASSERT_GT(paths.size(), 30u);

  const std::string doc = render_reference(run_schema());
  for (const auto& p : paths) {
    const std::string row = row_of(doc, p);
    EXPECT_FALSE(row.empty()) << "no row for " << p;
  }
}

TEST(ConfigReference, RowsShowTypeDefaultAndUnit) {
  const std::string doc = render_reference(run_schema());
  EXPECT_NE(row_of(doc, "platform.cpu.count").find("| unsigned integer | 4 | cores |"), std::string::npos)
      << row_of(doc, "platform.cpu.count");
  EXPECT_NE(row_of(doc, "platform.dram.base").find("| address/size | 0x80000000 |"), std::string::npos)
      << row_of(doc, "platform.dram.base");
  EXPECT_NE(row_of(doc, "platform.devices.NAME.base").find("(required)"), std::string::npos);
  EXPECT_NE(row_of(doc, "platform.devices.NAME.channels").find("Range 1 to 64."), std::string::npos)
      << row_of(doc, "platform.devices.NAME.channels");
  // Each device type's section lists only itself (the first section is now the camera's).
  EXPECT_NE(row_of(doc, "platform.devices.NAME.type").find("One of: `camera`."), std::string::npos);
  EXPECT_NE(doc.find("One of: `dma`."), std::string::npos);
  for (const char* section : {"### `platform`", "### `scenario`"}) EXPECT_NE(doc.find(section), std::string::npos) << section;
}

TEST(ConfigReference, IncludesEveryAppAndParameter) {
  std::vector<const hal_app*> apps(sw_apps, sw_apps + sw_app_count);
  const std::string doc = render_config_reference(apps);
  for (const hal_app* app : apps) {
    EXPECT_NE(doc.find("`" + std::string(app->name) + "`: " + app->summary), std::string::npos) << app->name;
    for (const hal_param_decl* p = app->params; p && p->name; ++p)
      EXPECT_NE(doc.find("| `" + std::string(p->name) + "` | " + std::to_string(p->default_value) + " |"),
                std::string::npos)
          << app->name << "." << p->name;
  }
  static const hal_app kNoParams = {"bare", "Nothing to set.", nullptr, nullptr};
  EXPECT_NE(render_config_reference({&kNoParams}).find("No parameters."), std::string::npos);
}

// ---- anchor_paths(): a planned sweep's job names the same files from elsewhere.

TEST(AnchorPaths, MakesRelativePathParametersAbsoluteWhereverTheyAre) {
  const NodePtr file = leaf(Type::kString, json(), "path", "A file.");
  const NodePtr schema = object({
      {"top", file},
      {"label", leaf(Type::kString, json(), "", "Not a path.")},
      {"devices", map_of(variant({{"player", object({{"trace", file}})}, {"other", object({{"name", leaf(Type::kString, json(), "", "")}})}}, ""),
                         json::object(), "")},
      {"list", array_of(file, json::array(), "")},
  });
  const json doc = {{"top", "a/b.trace"},
                    {"label", "x/y"},
                    {"devices", {{"p", {{"type", "player"}, {"trace", "../t.gz"}}}, {"o", {{"type", "other"}, {"name", "n/m"}}}}},
                    {"list", {"/abs/file", "rel"}}};
  const json out = anchor_paths(*schema, doc, "/base/dir");
  EXPECT_EQ(out["top"], "/base/dir/a/b.trace");
  EXPECT_EQ(out["label"], "x/y") << "a string that is not a path stays";
  EXPECT_EQ(out["devices"]["p"]["trace"], "/base/t.gz") << "inside a map of variants, normalised";
  EXPECT_EQ(out["devices"]["o"]["name"], "n/m");
  EXPECT_EQ(out["list"], json::array({"/abs/file", "/base/dir/rel"})) << "an absolute path stays";
}

}  // namespace
}  // namespace smmu_vp::config

// build_run_config / load_run_config: every class of bad configuration is
// rejected with the JSON path of the problem, and good ones resolve to a
// complete document and RunConfig.
#include "config/run_config.h"
#include "devices/camera_device.h"
#include "devices/dma_device.h"
#include "devices/nic_device.h"
#include "devices/nvme_device.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "apps/apps.h"
#include "hal/hal.h"

namespace smmu_vp::config {
namespace {

// Apps the test scenarios can name: one with parameters, one without.
int noop_main(void) { return 0; }
const hal_param_decl kAlphaParams[] = {
    {"count", 10, "How many.", 0, 0},
    {"size", 4096, "How big.", 0, 0},
    {nullptr, 0, nullptr, 0, nullptr},
};
const hal_app kAlpha = {"alpha", "An app with parameters.", noop_main, kAlphaParams};
const hal_app kBeta = {"beta", "An app without parameters.", noop_main, nullptr};
const std::vector<const hal_app*> kTestApps = {&kAlpha, &kBeta};

// A small valid scenario; each test patches what it needs.
json base_doc() {
  return json::parse(R"({
    "platform": {
      "cpu": { "count": 4 },
      "devices": { "dma0": { "type": "dma", "base": "0x10000000", "irq": 32 } }
    },
    "scenario": { "apps": [ { "app": "alpha", "cores": [0] } ] }
  })");
}

// base_doc() with an RFC 7386 merge patch applied (null deletes a key).
json patched(const char* patch) {
  json d = base_doc();
  d.merge_patch(json::parse(patch));
  return d;
}

RunConfig build(const json& doc, const std::vector<std::string>& overrides = {}) {
  return build_run_config(doc, ".", overrides, kTestApps);
}

// Succeeds when building `doc` throws a ConfigError at exactly `path` whose
// message contains each of `words`.
::testing::AssertionResult fails_at(const json& doc, const std::string& path, std::vector<std::string> words,
                                    const std::vector<std::string>& overrides = {}) {
  try {
    build(doc, overrides);
  } catch (const ConfigError& e) {
    if (e.path() != path) return ::testing::AssertionFailure() << "error at '" << e.path() << "', expected '" << path << "': " << e.what();
    for (const auto& w : words)
      if (std::string(e.what()).find(w) == std::string::npos)
        return ::testing::AssertionFailure() << "message lacks \"" << w << "\": " << e.what();
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "not a ConfigError: " << e.what();
  }
  return ::testing::AssertionFailure() << "accepted";
}

TEST(RunConfig, BaseDocumentIsValid) {
  const RunConfig rc = build(base_doc());
  ASSERT_EQ(rc.apps.size(), 1u);
  EXPECT_EQ(rc.apps[0].app, &kAlpha);
  ASSERT_EQ(rc.devices.size(), 1u);
}

// ---- Each class of bad configuration, with the path it must be reported at.

struct BadCase {
  const char* label;
  const char* patch;  // merge patch over base_doc()
  const char* path;
  std::vector<std::string> words;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.label; }

class BadConfig : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadConfig, RejectedAtPath) {
  const BadCase& c = GetParam();
  EXPECT_TRUE(fails_at(patched(c.patch), c.path, c.words)) << "patch: " << c.patch;
}

const BadCase kBadCases[] = {
    // unknown keys, at every level
    {"unknown_top_key", R"({"extra": 1})", "/extra", {"unknown key", "platform, scenario"}},
    {"unknown_nested_key", R"({"platform": {"dram": {"latency_ns": 5}}})", "/platform/dram/latency_ns", {"unknown key"}},
    {"unknown_deep_key", R"({"platform": {"dram": {"dma_region": {"start": 0}}}})", "/platform/dram/dma_region/start", {"unknown key"}},
    {"unknown_device_key", R"({"platform": {"devices": {"dma0": {"colour": "red"}}}})", "/platform/devices/dma0/colour", {"unknown key"}},
    {"unknown_app_entry_key", R"({"scenario": {"apps": [{"app": "alpha", "cores": [0], "core": 1}]}})", "/scenario/apps/0/core", {"unknown key"}},
    {"unknown_stop_key", R"({"scenario": {"stop": {"max_time_ns": 5}}})", "/scenario/stop/max_time_ns", {"unknown key"}},
    // wrong types
    {"string_for_number", R"({"platform": {"dram": {"read_latency_ns": "fast"}}})", "/platform/dram/read_latency_ns", {"expected a number"}},
    {"string_for_uint", R"({"platform": {"cpu": {"count": "four"}}})", "/platform/cpu/count", {"expected an unsigned integer"}},
    {"bool_for_number", R"({"platform": {"intc": {"reg_latency_ns": true}}})", "/platform/intc/reg_latency_ns", {"expected a number"}},
    {"number_for_string", R"({"scenario": {"name": 5}})", "/scenario/name", {"expected a string"}},
    {"array_for_object", R"({"platform": {"cpu": [1]}})", "/platform/cpu", {"expected an object"}},
    {"number_for_platform", R"({"platform": 5})", "/platform", {"expected an object"}},
    {"object_for_array", R"({"scenario": {"apps": {"app": "alpha"}}})", "/scenario/apps", {"expected an array"}},
    {"number_for_device", R"({"platform": {"devices": {"dma0": 5}}})", "/platform/devices/dma0", {"expected an object"}},
    {"string_for_cost", R"({"platform": {"cpu": {"costs": {"cache_miss": "lots"}}}})", "/platform/cpu/costs/cache_miss", {"expected an unsigned integer"}},
    {"spread_of_unknown_cost", R"({"platform": {"cpu": {"cost_spread": {"cache_mis": 0.5}}}})", "/platform/cpu/cost_spread/cache_mis", {"no cost class of that name", "cache_miss"}},
    {"spread_above_one", R"({"platform": {"cpu": {"cost_spread": {"cache_miss": 1.5}}}})", "/platform/cpu/cost_spread/cache_miss", {"must be between 0 and 1"}},
    {"negative_uint", R"({"platform": {"cpu": {"count": -1}}})", "/platform/cpu/count", {"must not be negative"}},
    {"negative_seed", R"({"scenario": {"seed": -3}})", "/scenario/seed", {"must not be negative"}},
    {"negative_float_uint", R"({"platform": {"cpu": {"dmb_cycles": -2.0}}})", "/platform/cpu/dmb_cycles", {"must not be negative"}},
    {"fractional_uint", R"({"platform": {"cpu": {"count": 2.5}}})", "/platform/cpu/count", {"expected an unsigned integer"}},
    {"fractional_param", R"({"scenario": {"apps": [{"app": "alpha", "cores": [0], "params": {"count": 1.5}}]}})", "/scenario/apps/0/params/count", {"expected an unsigned integer"}},
    {"fractional_core", R"({"scenario": {"apps": [{"app": "alpha", "cores": [0.5]}]}})", "/scenario/apps/0/cores/0", {"expected an unsigned integer"}},
    // out of range
    {"above_range", R"({"platform": {"cpu": {"count": 257}}})", "/platform/cpu/count", {"must be between 1 and 256"}},
    {"below_range", R"({"platform": {"cpu": {"count": 0}}})", "/platform/cpu/count", {"must be between 1 and 256"}},
    {"number_below_range", R"({"platform": {"dram": {"bandwidth_gbps": 0}}})", "/platform/dram/bandwidth_gbps", {"must be between"}},
    {"negative_number", R"({"platform": {"dram": {"read_latency_ns": -1}}})", "/platform/dram/read_latency_ns", {"must be between"}},
    {"address_below_range", R"({"platform": {"dram": {"size": "1KiB"}}})", "/platform/dram/size", {"must be between"}},
    {"device_field_range", R"({"platform": {"devices": {"dma0": {"channels": 0}}}})", "/platform/devices/dma0/channels", {"must be between 1 and 64"}},
    {"core_number_range", R"({"scenario": {"apps": [{"app": "alpha", "cores": [256]}]}})", "/scenario/apps/0/cores/0", {"must be between 0 and 255"}},
    {"stop_time_zero", R"({"scenario": {"stop": {"max_time_us": 0}}})", "/scenario/stop/max_time_us", {"must be between"}},
    {"intc_lines_range", R"({"platform": {"intc": {"lines": 2000}}})", "/platform/intc/lines", {"must be between 1 and 1024"}},
    // bad choices
    {"bad_device_type", R"({"platform": {"devices": {"dma0": {"type": "gpu"}}}})", "/platform/devices/dma0/type", {"\"gpu\" is not one of: camera, dma"}},
    {"device_type_not_string", R"({"platform": {"devices": {"dma0": {"type": 5}}}})", "/platform/devices/dma0/type", {"one of: camera, dma"}},
    // missing required fields
    {"missing_device_type", R"({"platform": {"devices": {"dma0": {"type": null}}}})", "/platform/devices/dma0/type", {"missing"}},
    {"missing_device_base", R"({"platform": {"devices": {"dma0": {"base": null}}}})", "/platform/devices/dma0/base", {"required", "missing"}},
    {"missing_app_name", R"({"scenario": {"apps": [{"cores": [0]}]}})", "/scenario/apps/0/app", {"required string is missing"}},
    {"missing_app_cores", R"({"scenario": {"apps": [{"app": "alpha"}]}})", "/scenario/apps/0/cores", {"required", "missing"}},
    // device names
    {"empty_device_name", R"({"platform": {"devices": {"": {"type": "dma", "base": 0, "irq": 0}}}})", "/platform/devices", {"empty key"}},
    {"reserved_device_name", R"({"platform": {"devices": {"dma0": null, "intc": {"type": "dma", "base": "0x20000000", "irq": 40}}}})", "/platform/devices/intc", {"reserved"}},
    // interrupt lines
    {"shared_irq_line", R"({"platform": {"devices": {"dma1": {"type": "dma", "base": "0x20000000", "irq": 33}}}})", "/platform/devices/dma1/irq", {"line 33", "already", "dma0"}},
    // the address map
    {"device_over_dram", R"({"platform": {"devices": {"dma0": {"base": "0x80001000"}}}})", "/platform/devices/dma0/base", {"overlaps", "'dma0'", "'dram'"}},
    {"device_over_dram_end", R"({"platform": {"dram": {"size": "1GiB"}, "devices": {"dma0": {"base": "0xBFFFFF00"}}}})", "/platform/devices/dma0/base", {"'dram'"}},
    {"device_over_intc", R"({"platform": {"devices": {"dma0": {"base": "0x08000800"}}}})", "/platform/devices/dma0/base", {"overlaps", "'dma0'", "'intc'"}},
    {"two_devices_overlap", R"({"platform": {"devices": {"dma1": {"type": "dma", "base": "0x10000100", "irq": 40}}}})", "/platform/devices/dma1/base", {"overlaps", "'dma0'", "'dma1'"}},
    {"intc_over_dram", R"({"platform": {"intc": {"base": "0x80000000"}}})", "/platform/intc/base", {"overlaps", "'intc'", "'dram'"}},
    {"dram_wraps", R"({"platform": {"dram": {"base": "0xFFFFFFFFF0000000"}}})", "/platform/dram/size", {"wraps"}},
    {"dma_region_offset_outside", R"({"platform": {"dram": {"size": "1GiB", "dma_region": {"offset": "1GiB"}}}})", "/platform/dram/dma_region", {"inside DRAM"}},
    {"dma_region_too_long", R"({"platform": {"dram": {"size": "1GiB", "dma_region": {"offset": "512MiB", "size": "768MiB"}}}})", "/platform/dram/dma_region", {"inside DRAM"}},
    // interrupts
    {"irq_beyond_lines", R"({"platform": {"devices": {"dma0": {"irq": 255}}}})", "/platform/devices/dma0/irq", {"255..256", "intc.lines = 256"}},
    {"irq_beyond_small_intc", R"({"platform": {"intc": {"lines": 32}}})", "/platform/devices/dma0/irq", {"32..33", "intc.lines = 32"}},
    {"irq_beyond_with_channels", R"({"platform": {"devices": {"dma0": {"irq": 250, "channels": 8}}}})", "/platform/devices/dma0/irq", {"250..257"}},
    // apps
    {"unknown_app", R"({"scenario": {"apps": [{"app": "gamma", "cores": [0]}]}})", "/scenario/apps/0/app", {"no app named \"gamma\"", "alpha, beta"}},
    {"unknown_app_param", R"({"scenario": {"apps": [{"app": "alpha", "cores": [0], "params": {"speed": 1}}]}})", "/scenario/apps/0/params/speed", {"no such parameter", "count, size"}},
    {"param_of_app_without_params", R"({"scenario": {"apps": [{"app": "beta", "cores": [0], "params": {"x": 1}}]}})", "/scenario/apps/0/params/x", {"it has: none"}},
    {"core_out_of_range", R"({"scenario": {"apps": [{"app": "alpha", "cores": [4]}]}})", "/scenario/apps/0/cores/0", {"core 4 does not exist", "cpu.count = 4"}},
    {"core_out_of_range_small_cluster", R"({"platform": {"cpu": {"count": 1}}, "scenario": {"apps": [{"app": "alpha", "cores": [0, 1]}]}})", "/scenario/apps/0/cores/1", {"does not exist"}},
    {"core_used_twice_in_app", R"({"scenario": {"apps": [{"app": "alpha", "cores": [0, 2, 0]}]}})", "/scenario/apps/0/cores/2", {"core 0 already runs"}},
    {"core_used_by_two_apps", R"({"scenario": {"apps": [{"app": "alpha", "cores": [0, 1]}, {"app": "beta", "cores": [1]}]}})", "/scenario/apps/1/cores/0", {"core 1 already runs"}},
    {"empty_cores", R"({"scenario": {"apps": [{"app": "alpha", "cores": []}]}})", "/scenario/apps/0/cores", {"at least one core"}},
    // address strings
    {"address_bad_hex", R"({"platform": {"dram": {"base": "0xZZ"}}})", "/platform/dram/base", {"0xZZ"}},
    {"address_bad_suffix", R"({"platform": {"dram": {"base": "12XiB"}}})", "/platform/dram/base", {"unknown suffix \"XiB\""}},
    {"address_negative_string", R"({"platform": {"dram": {"base": "-5"}}})", "/platform/dram/base", {"cannot read \"-5\""}},
    {"address_negative_number", R"({"platform": {"dram": {"base": -5}}})", "/platform/dram/base", {"must not be negative"}},
    {"address_not_a_number", R"({"platform": {"dram": {"base": "dram"}}})", "/platform/dram/base", {"cannot read"}},
    {"address_empty", R"({"platform": {"dram": {"base": ""}}})", "/platform/dram/base", {"cannot read"}},
    {"address_too_big", R"({"platform": {"dram": {"base": "99999999999999999999"}}})", "/platform/dram/base", {"cannot read"}},
    {"address_suffix_overflow", R"({"platform": {"dram": {"base": "17179869184GiB"}}})", "/platform/dram/base", {"does not fit in 64 bits"}},
    {"address_wrong_type", R"({"platform": {"dram": {"base": true}}})", "/platform/dram/base", {"expected an integer or a string"}},
    {"address_fractional", R"({"platform": {"dram": {"base": 4096.5}}})", "/platform/dram/base", {"expected an integer or a string"}},
    {"address_in_device", R"({"platform": {"devices": {"dma0": {"base": "0x1000 0000"}}}})", "/platform/devices/dma0/base", {"unknown suffix"}},
};

INSTANTIATE_TEST_SUITE_P(RunConfig, BadConfig, ::testing::ValuesIn(kBadCases),
                         [](const ::testing::TestParamInfo<BadCase>& p) { return std::string(p.param.label); });

// ---- A distributed SMMU's TBUs: each device behind exactly one.

json with_tbus(const char* tbus) {
  json d = patched(R"({"platform": {"smmu": {"base": "0x09000000", "eventq_irq": 100, "gerror_irq": 101, "sync_irq": 102},
                       "devices": {"dma0": {"stream_id": 16},
                                   "dma1": {"type": "dma", "base": "0x20000000", "irq": 40, "stream_id": 17}}}})");
  d["platform"]["smmu"]["tbus"] = json::parse(tbus);
  return d;
}

TEST(RunConfig, TbusMapEachDevicesPortToItsTbu) {
  const RunConfig rc = build(with_tbus(R"([{"name": "a", "masters": ["dma1"]}, {"name": "b", "masters": ["dma0"]}])"));
  const smmu::DistributedConfig& d = rc.smmu.translation.distributed;
  ASSERT_EQ(d.tbus.size(), 2u);
  ASSERT_EQ(rc.devices.size(), 2u);
  ASSERT_EQ(rc.devices[0].name, "dma0");  // port 0
  EXPECT_EQ(d.port_tbu, (std::vector<unsigned>{1, 0}));
}

TEST(RunConfig, BadTbusNameWhatIsWrong) {
  EXPECT_TRUE(fails_at(with_tbus(R"([{"name": "a", "masters": ["dma0", "nic9"]}])"), "/platform/smmu/tbus/0/masters/1",
                       {"no device named \"nic9\""}));
  EXPECT_TRUE(fails_at(with_tbus(R"([{"name": "a", "masters": ["dma0"]}, {"name": "b", "masters": ["dma0", "dma1"]}])"),
                       "/platform/smmu/tbus/1/masters/0", {"\"dma0\" is already behind TBU \"a\""}));
  EXPECT_TRUE(fails_at(with_tbus(R"([{"name": "a", "masters": ["dma0"]}])"), "/platform/smmu/tbus",
                       {"\"dma1\" is behind no TBU"}));
  EXPECT_TRUE(fails_at(with_tbus(R"([{"name": "a", "masters": ["dma0"]}, {"name": "a", "masters": ["dma1"]}])"),
                       "/platform/smmu/tbus/1/name", {"named twice"}));
  EXPECT_TRUE(fails_at(with_tbus(R"([{"name": "a.b", "masters": ["dma0", "dma1"]}])"), "/platform/smmu/tbus/0/name",
                       {"without dots"}));
  EXPECT_TRUE(fails_at(with_tbus(R"([{"masters": ["dma0", "dma1"]}])"), "/platform/smmu/tbus/0/name", {"missing"}));
}

// The model's own checks (SmmuConfig::validate) come back at the JSON path
// of the parameter, wherever platform_params.cc puts it.
TEST(RunConfig, SmmuStructChecksNameTheJsonParameter) {
  const char* tbu = R"([{"name": "a", "masters": ["dma0", "dma1"]}])";
  EXPECT_TRUE(fails_at(with_tbus("[]"), "/platform/smmu/tlb/ways", {"entries (256) must be a multiple of ways (3)"},
                       {"platform.smmu.tlb.ways=3"}));
  EXPECT_TRUE(fails_at(with_tbus("[]"), "/platform/smmu/walk_cache/ways", {"multiple of ways"},
                       {"platform.smmu.walk_cache.ways=5"}));
  EXPECT_TRUE(fails_at(with_tbus(tbu), "/platform/smmu/micro_tlb/entries", {"the TBUs'"},
                       {"platform.smmu.micro_tlb.entries=8"}));
  EXPECT_TRUE(fails_at(with_tbus(tbu), "/platform/smmu/tbu/tlb/ways", {"multiple of ways"},
                       {"platform.smmu.tbu.tlb.ways=7"}));
  EXPECT_TRUE(fails_at(with_tbus(tbu), "/platform/smmu/stale_check", {"not available with TBUs"},
                       {"platform.smmu.stale_check=true"}));
  EXPECT_TRUE(fails_at(with_tbus("[]"), "/platform/smmu/features", {"not a valid SMMU"},
                       {"platform.smmu.features.stage1=false", "platform.smmu.features.stage2=false"}));
}

// A far atomic's home node takes a core id of its own, so the option needs
// one spare (CoherenceTracker holds 256).
TEST(RunConfig, FarAtomicsNeedACoreIdToSpare) {
  EXPECT_TRUE(fails_at(base_doc(), "/platform/cpu/far_atomics", {"below 256", "it is 256"},
                       {"platform.cpu.far_atomics=true", "platform.cpu.count=256"}));
  EXPECT_NO_THROW(build(base_doc(), {"platform.cpu.far_atomics=true", "platform.cpu.count=255"}));
}

// Two devices with one StreamID behind the SMMU once ran to "completed"
// with garbage (issue 31); without an SMMU StreamIDs mean nothing.
TEST(RunConfig, TwoDevicesWithOneStreamIdBehindTheSmmuAreRefused) {
  json doc = with_tbus(R"([])");
  doc["platform"]["devices"]["dma1"]["stream_id"] = 16;
  doc["platform"]["devices"]["dma0"]["stream_id"] = 16;
  EXPECT_TRUE(fails_at(doc, "/platform/devices/dma1/stream_id", {"StreamID 16 is already dma0's"}));
  doc["platform"].erase("smmu");
  EXPECT_NO_THROW(build(doc));
}

// ---- Several SMMU instances (platform.smmus): copies of platform.smmu, each
// with the devices it names.

json with_smmus(const char* smmus) {
  json d = with_tbus("[]");
  d["platform"]["smmus"] = json::parse(smmus);
  return d;
}

constexpr const char* kSmmu1 =
    R"([{"name": "smmu1", "base": "0x09100000", "eventq_irq": 103, "gerror_irq": 104, "sync_irq": 105, "masters": ["dma1"]}])";

TEST(RunConfig, SmmusCopyPlatformSmmuAndTakeTheDevicesTheyName) {
  json doc = with_smmus(kSmmu1);
  doc["platform"]["smmu"]["tlb"] = {{"entries", 512}};
  const RunConfig rc = build(doc);
  ASSERT_EQ(rc.smmu_count(), 2u);
  EXPECT_EQ(rc.smmu_name(1), "smmu1");
  EXPECT_EQ(rc.smmu_config(1).base, 0x09100000u);
  EXPECT_EQ(rc.smmu_config(1).sync_irq, 105u);
  EXPECT_EQ(rc.smmu_config(1).translation.tlb.entries, 512u);  // platform.smmu's value
  EXPECT_EQ(rc.device_smmu, (std::vector<unsigned>{0, 1}));    // dma0, dma1
  // Each instance has a StreamID space of its own.
  doc["platform"]["devices"]["dma1"]["stream_id"] = 16;
  EXPECT_NO_THROW(build(doc));
}

TEST(RunConfig, BadSmmusSayWhatIsWrong) {
  auto one = [](const char* patch) {
    json d = with_smmus(kSmmu1);
    d["platform"]["smmus"][0].merge_patch(json::parse(patch));
    return d;
  };
  EXPECT_TRUE(fails_at(one(R"({"masters": ["dma9"]})"), "/platform/smmus/0/masters/0", {"no device named \"dma9\""}));
  EXPECT_TRUE(fails_at(one(R"({"name": "smmu"})"), "/platform/smmus/0/name", {"named twice"}));
  EXPECT_TRUE(fails_at(one(R"({"name": "dma0"})"), "/platform/smmus/0/name", {"also a device's name"}));
  EXPECT_TRUE(fails_at(one(R"({"name": "a.b"})"), "/platform/smmus/0/name", {"without dots"}));
  EXPECT_TRUE(fails_at(one(R"({"name": "dram"})"), "/platform/smmus/0/name", {"reserved"}));
  EXPECT_TRUE(fails_at(one(R"({"base": "0x09000000"})"), "/platform/smmus/0/base", {"overlaps"}));
  EXPECT_TRUE(fails_at(one(R"({"sync_irq": 102})"), "/platform/smmus/0/sync_irq", {"SMMU \"smmu1\"'s CMD_SYNC"}));
  EXPECT_TRUE(fails_at(one(R"({"eventq_irq": 300})"), "/platform/smmus/0/eventq_irq", {"does not exist"}));
  EXPECT_TRUE(fails_at(one(R"({"base": null})"), "/platform/smmus/0/base", {"missing"}));
  json twice = with_smmus(kSmmu1);
  twice["platform"]["smmus"].push_back(twice["platform"]["smmus"][0]);
  twice["platform"]["smmus"][1].merge_patch(
      json::parse(R"({"name": "smmu2", "base": "0x09200000", "eventq_irq": 106, "gerror_irq": 107, "sync_irq": 108})"));
  EXPECT_TRUE(fails_at(twice, "/platform/smmus/1/masters/0", {"\"dma1\" is already behind SMMU \"smmu1\""}));
  json alone = with_smmus(kSmmu1);
  alone["platform"].erase("smmu");
  EXPECT_TRUE(fails_at(alone, "/platform/smmus", {"need platform.smmu"}));
  json same_sid = with_smmus(kSmmu1);
  same_sid["platform"]["devices"]["dma2"] = {{"type", "dma"}, {"base", "0x20010000"}, {"irq", 48}, {"stream_id", 17}};
  same_sid["platform"]["smmus"][0]["masters"].push_back("dma2");
  EXPECT_TRUE(fails_at(same_sid, "/platform/devices/dma2/stream_id", {"already dma1's", "behind SMMU \"smmu1\""}));
}

// platform.smmu.tbus lists every TBU; each instance takes those of its devices.
TEST(RunConfig, TbusGoToTheSmmuTheirDevicesSitBehind) {
  json doc = with_smmus(kSmmu1);
  doc["platform"]["smmu"]["tbus"] = json::parse(R"([{"name": "a", "masters": ["dma1"]}, {"name": "b", "masters": ["dma0"]}])");
  const RunConfig rc = build(doc);
  const smmu::DistributedConfig& d0 = rc.smmu_config(0).translation.distributed;
  const smmu::DistributedConfig& d1 = rc.smmu_config(1).translation.distributed;
  ASSERT_EQ(d0.tbus.size(), 1u);
  EXPECT_EQ(d0.tbus[0].name, "b");
  EXPECT_EQ(d0.port_tbu, (std::vector<unsigned>{0}));
  ASSERT_EQ(d1.tbus.size(), 1u);
  EXPECT_EQ(d1.tbus[0].name, "a");
  EXPECT_EQ(d1.port_tbu, (std::vector<unsigned>{0}));
  doc["platform"]["smmu"]["tbus"] = json::parse(R"([{"name": "a", "masters": ["dma0", "dma1"]}])");
  EXPECT_TRUE(fails_at(doc, "/platform/smmu/tbus/0/masters/1", {"a TBU serves one SMMU instance"}));
}

// Several instances of one app: each its own results name (sw.<name>.*).
TEST(RunConfig, InstancesOfOneAppGetNamesOfTheirOwn) {
  json doc = base_doc();
  doc["scenario"]["apps"] = json::parse(R"([{"app": "alpha", "cores": [0]}, {"app": "beta", "cores": [1]},
                                           {"app": "alpha", "cores": [2]}, {"app": "alpha", "cores": [3], "name": "third"}])");
  const RunConfig rc = build(doc);
  ASSERT_EQ(rc.apps.size(), 4u);
  EXPECT_EQ(rc.apps[0].name, "alpha");
  EXPECT_EQ(rc.apps[0].instance, 0u);
  EXPECT_EQ(rc.apps[1].name, "beta");
  EXPECT_EQ(rc.apps[2].name, "alpha_1");
  EXPECT_EQ(rc.apps[2].instance, 1u);
  EXPECT_EQ(rc.apps[3].name, "third");
  EXPECT_EQ(rc.apps[3].instance, 2u);
  EXPECT_EQ(rc.resolved["scenario"]["apps"][2]["name"], "alpha_1");
  doc["scenario"]["apps"][3]["name"] = "alpha_1";
  EXPECT_TRUE(fails_at(doc, "/scenario/apps/3/name", {"\"alpha_1\" is already /scenario/apps/2's"}));
  doc["scenario"]["apps"][3]["name"] = "a.b";
  EXPECT_TRUE(fails_at(doc, "/scenario/apps/3/name", {"letters, digits and _"}));
}

// A device without "irq" gets the lowest free block of its lines from 32 on,
// around every line given explicitly.
TEST(RunConfig, DevicesWithoutAnIrqGetFreeLines) {
  json doc = with_tbus("[]");  // SMMU lines 100-102; dma0 32 (2 channels: 32-33)
  doc["platform"]["devices"]["dma1"].erase("irq");
  doc["platform"]["devices"]["dma2"] = {{"type", "dma"}, {"base", "0x20010000"}, {"stream_id", 18}};
  doc["platform"]["devices"]["dma3"] = {{"type", "dma"}, {"base", "0x20020000"}, {"stream_id", 19}, {"irq", 36}};
  const RunConfig rc = build(doc);
  std::map<std::string, std::pair<unsigned, unsigned>> got;
  for (const auto& d : rc.devices) got[d.name] = {d.irq, d.irq_lines};
  ASSERT_EQ(got["dma0"].second, 2u);
  EXPECT_EQ(got["dma0"].first, 32u);
  EXPECT_EQ(got["dma3"].first, 36u);  // explicit: kept
  EXPECT_EQ(got["dma1"].first, 34u);  // the first free block of 2: 34-35
  EXPECT_EQ(got["dma2"].first, 38u);  // then past dma3's 36-37
  EXPECT_EQ(rc.resolved["platform"]["devices"]["dma2"]["irq"], 38);  // recorded in config.json
  doc["platform"]["intc"] = {{"lines", 39}};
  doc["platform"]["smmu"]["eventq_irq"] = 0;
  doc["platform"]["smmu"]["gerror_irq"] = 1;
  doc["platform"]["smmu"]["sync_irq"] = 2;
  EXPECT_TRUE(fails_at(doc, "/platform/devices/dma2/irq", {"no free block of 2 interrupt lines", "intc.lines = 39"}));
}

TEST(RunConfig, DocumentNotAnObject) {
  try {
    build(json::array());
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "");
    EXPECT_EQ(std::string(e.what()).rfind("/: ", 0), 0u) << e.what();  // the root shows as "/"
  }
}

// Unsigned fields without a range (seed, app parameters) must still reject a
// float that no 64-bit integer can hold, rather than store garbage.
TEST(RunConfig, HugeFloatForUnrangedUnsignedRejected) {
  EXPECT_TRUE(fails_at(patched(R"({"scenario": {"seed": 1e30}})"), "/scenario/seed", {}));
  EXPECT_TRUE(fails_at(patched(R"({"scenario": {"apps": [{"app": "alpha", "cores": [0], "params": {"count": 1e20}}]}})"),
                       "/scenario/apps/0/params/count", {}));
}

TEST(RunConfig, IrqRangeUpToLastLineAccepted) {
  // Channels 0 and 1 on lines 254 and 255 of 256: the last lines that exist.
  const RunConfig rc = build(patched(R"({"platform": {"devices": {"dma0": {"irq": 254}}}})"));
  EXPECT_EQ(rc.devices.at(0).irq, 254u);
}

TEST(RunConfig, AdjacentDevicesAccepted) {
  // dma0 with 2 channels spans 0x180 bytes; dma1 may start right after it.
  const RunConfig rc =
      build(patched(R"({"platform": {"devices": {"dma1": {"type": "dma", "base": "0x10000180", "irq": 40}}}})"));
  ASSERT_EQ(rc.devices.size(), 2u);
  EXPECT_EQ(rc.devices[0].size, 0x180u);
  EXPECT_EQ(rc.devices[1].base, 0x10000180u);
}

// ---- Platform given as a file.

class PlatformFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "run_config_test_" + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream out(dir_ + "/" + name);
    out << text;
  }
  json scenario_with_platform(const std::string& platform) {
    json d = base_doc();
    d["platform"] = platform;
    return d;
  }
  std::string dir_;
};

TEST_F(PlatformFile, RelativeToBaseDir) {
  write("plat.json", base_doc()["platform"].dump());
  const RunConfig rc = build_run_config(scenario_with_platform("plat.json"), dir_, {}, kTestApps);
  EXPECT_EQ(rc.cpu.count, 4u);
  ASSERT_EQ(rc.devices.size(), 1u);
  EXPECT_EQ(rc.devices[0].name, "dma0");
  // The resolved document holds the platform itself, not the path.
  EXPECT_TRUE(rc.resolved["platform"].is_object());
}

TEST_F(PlatformFile, AbsolutePath) {
  write("abs.json", base_doc()["platform"].dump());
  const RunConfig rc = build_run_config(scenario_with_platform(dir_ + "/abs.json"), "/nonexistent", {}, kTestApps);
  EXPECT_EQ(rc.devices.size(), 1u);
}

TEST_F(PlatformFile, OverridesApplyAfterLoading) {
  write("plat.json", base_doc()["platform"].dump());
  const RunConfig rc = build_run_config(scenario_with_platform("plat.json"), dir_,
                                        {"platform.cpu.count=8", "platform.devices.dma0.irq=100"}, kTestApps);
  EXPECT_EQ(rc.cpu.count, 8u);
  EXPECT_EQ(rc.devices[0].irq, 100u);
}

TEST_F(PlatformFile, UnreadablePathIsAnError) {
  try {
    build_run_config(scenario_with_platform("missing.json"), dir_, {}, kTestApps);
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    FAIL() << "an unreadable file is not a content error: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(dir_ + "/missing.json"), std::string::npos) << e.what();
  }
}

// What is read is bounded (issue 31): a device or FIFO as the platform file
// (/dev/zero grew to 23.5 GB; a FIFO blocked forever), and a document nested
// 10^5 deep (its error message overflowed the stack).
TEST_F(PlatformFile, ANonRegularFileOrADeepDocumentIsRefused) {
  try {
    build_run_config(scenario_with_platform("/dev/zero"), dir_, {}, kTestApps);
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'/dev/zero' is not a regular file"), std::string::npos) << e.what();
  }
  std::string deep = "{\"cpu\": ";
  for (int i = 0; i < 100000; ++i) deep += "[";
  for (int i = 0; i < 100000; ++i) deep += "]";
  write("deep.json", deep + "}");
  try {
    build_run_config(scenario_with_platform("deep.json"), dir_, {}, kTestApps);
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("nested deeper than 64 levels"), std::string::npos) << e.what();
  }
}

TEST_F(PlatformFile, InvalidJsonIsAnError) {
  write("broken.json", "{ \"cpu\": ");
  try {
    build_run_config(scenario_with_platform("broken.json"), dir_, {}, kTestApps);
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("broken.json"), std::string::npos) << e.what();
  }
}

// A number no double holds (found by an earlier fuzzing trial; the fuzz_config
// corpus keeps it): an error naming the file, like any invalid JSON, not a
// crash, an infinity or a silently clamped seed.
TEST_F(PlatformFile, NumberOverflowNamesTheFile) {
  write("overflow.json", R"({"scenario": {"seed": 1e400}})");
  try {
    load_run_config(dir_ + "/overflow.json", {}, kTestApps);
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(dir_ + "/overflow.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
  }
  // As a --set value it is not JSON either: taken as a string, rejected by the schema.
  EXPECT_THROW(build(base_doc(), {"scenario.seed=1e400"}), ConfigError);
}

TEST_F(PlatformFile, ContentErrorsKeepTheirPath) {
  write("bad.json", R"({"cpu": {"count": 0}})");
  try {
    build_run_config(scenario_with_platform("bad.json"), dir_, {}, kTestApps);
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/platform/cpu/count");
  }
}

TEST(LoadRunConfig, MissingScenarioFile) {
  EXPECT_THROW(load_run_config("/nonexistent/scenario.json", {}, kTestApps), std::runtime_error);
}

// ---- Defaults and resolution.

// Every field the schema declares is present in `doc` (recursively), except
// optional fields without a default.
void expect_complete(const Node& n, const json& doc, const std::string& path) {
  switch (n.type) {
    case Type::kObject:
      ASSERT_TRUE(doc.is_object()) << path;
      for (const auto& [name, child] : n.fields) {
        if (!doc.contains(name)) {
          EXPECT_TRUE(child->optional && child->default_value.is_null()) << path + "/" + name << " missing";
          continue;
        }
        expect_complete(*child, doc.at(name), path + "/" + name);
      }
      return;
    case Type::kVariant:
      expect_complete(*n.variants.at(doc.at("type").get<std::string>()), doc, path);
      return;
    case Type::kMap:
      ASSERT_TRUE(doc.is_object()) << path;
      for (auto it = doc.begin(); it != doc.end(); ++it) expect_complete(*n.element, it.value(), path + "/" + it.key());
      return;
    case Type::kArray:
      ASSERT_TRUE(doc.is_array()) << path;
      for (size_t i = 0; i < doc.size(); ++i) expect_complete(*n.element, doc[i], path + "/" + std::to_string(i));
      return;
    case Type::kAddress:
    case Type::kUint:
    case Type::kUintOrName:  // resolved documents hold the number
      EXPECT_TRUE(doc.is_number_unsigned()) << path << " = " << doc.dump();
      return;
    case Type::kNumber:
      EXPECT_TRUE(doc.is_number()) << path;
      return;
    case Type::kBool:
      EXPECT_TRUE(doc.is_boolean()) << path;
      return;
    case Type::kString:
      EXPECT_TRUE(doc.is_string()) << path;
      return;
  }
}

TEST(RunConfig, ResolvedDocumentHasEveryField) {
  const RunConfig rc = build(base_doc());
  expect_complete(run_schema(), rc.resolved, "");
  // Spot checks of defaults reaching the document ...
  const json& r = rc.resolved;
  EXPECT_EQ(r["platform"]["cpu"]["quantum_ns"], 500.0);
  EXPECT_EQ(r["platform"]["dram"]["base"], 0x80000000u);
  EXPECT_EQ(r["platform"]["dram"]["size"], 1u << 30);
  EXPECT_EQ(r["platform"]["dram"]["dma_region"]["offset"], 0x10000000u);
  EXPECT_EQ(r["platform"]["intc"]["lines"], 256u);
  EXPECT_EQ(r["platform"]["interconnect"]["latency_ns"], 2.0);
  EXPECT_EQ(r["platform"]["devices"]["dma0"]["channels"], 2u);
  EXPECT_EQ(r["platform"]["devices"]["dma0"]["stream_id"], 0u);
  EXPECT_EQ(r["platform"]["devices"]["dma0"]["base"], 0x10000000u);  // string normalised to an integer
  EXPECT_EQ(r["scenario"]["name"], "unnamed");
  EXPECT_EQ(r["scenario"]["seed"], 1u);
  EXPECT_EQ(r["scenario"]["stop"]["max_time_us"], 1e6);
  // ... including every declared app parameter.
  EXPECT_EQ(r["scenario"]["apps"][0]["params"], (json{{"count", 10}, {"size", 4096}}));
}

TEST(RunConfig, DefaultsFillRunConfig) {
  const RunConfig rc = build(base_doc());
  const CpuConfig cpu;
  EXPECT_EQ(rc.cpu.count, 4u);
  EXPECT_EQ(rc.cpu.frequency_mhz, cpu.frequency_mhz);
  EXPECT_EQ(rc.cpu.quantum_ns, cpu.quantum_ns);
  EXPECT_EQ(rc.cpu.atomic_cycles, cpu.atomic_cycles);
  EXPECT_EQ(rc.cpu.stack_kib, cpu.stack_kib);
  EXPECT_EQ(rc.dram.base, 0x80000000u);
  EXPECT_EQ(rc.dram.size, DramConfig{}.size);
  EXPECT_EQ(rc.dram.read_latency_ns, DramConfig{}.read_latency_ns);
  EXPECT_EQ(rc.dram.dma_region.offset, 0x10000000u);
  EXPECT_EQ(rc.dram.dma_region.size, 0x10000000u);
  EXPECT_EQ(rc.intc.base, 0x08000000u);
  EXPECT_EQ(rc.intc.lines, 256u);
  EXPECT_EQ(rc.intc.reg_latency_ns, 10.0);
  EXPECT_EQ(rc.interconnect.latency_ns, 2.0);
  EXPECT_EQ(rc.max_time_ps, 1000000000000u);  // 1e6 us
  EXPECT_EQ(rc.seed, 1u);
  EXPECT_EQ(rc.name, "unnamed");
  EXPECT_EQ(rc.description, "");

  ASSERT_EQ(rc.devices.size(), 1u);
  const DeviceConfig& d = rc.devices[0];
  const DmaConfig dma;
  const DmaConfig got = dma_config(d);
  EXPECT_EQ(d.type, "dma");
  EXPECT_EQ(d.base, 0x10000000u);
  EXPECT_EQ(d.irq, 32u);
  EXPECT_EQ(got.irq, 32u);
  EXPECT_EQ(got.channels, dma.channels);
  EXPECT_EQ(got.burst_bytes, dma.burst_bytes);
  EXPECT_EQ(got.max_outstanding, dma.max_outstanding);
  EXPECT_EQ(got.setup_ns, dma.setup_ns);
  EXPECT_EQ(d.size, DmaEngineCore::register_block_size(dma.channels));
  EXPECT_EQ(d.irq_lines, dma.channels);

  ASSERT_EQ(rc.apps.size(), 1u);
  EXPECT_EQ(rc.apps[0].cores, std::vector<unsigned>{0});
  EXPECT_EQ(rc.apps[0].params, (std::map<std::string, uint64_t>{{"count", 10}, {"size", 4096}}));
}

TEST(RunConfig, EmptyDocumentIsAValidIdleRun) {
  const RunConfig rc = build(json::object());
  EXPECT_TRUE(rc.apps.empty());
  EXPECT_TRUE(rc.devices.empty());
  expect_complete(run_schema(), rc.resolved, "");
}

TEST(RunConfig, AddressStringsParsed) {
  const RunConfig rc = build(patched(R"({"platform": {"dram": {
      "base": "0x80000000", "size": "1GiB",
      "dma_region": {"offset": "64KiB", "size": "256MiB"}},
      "intc": {"base": 134217728}}})"));
  EXPECT_EQ(rc.dram.base, 0x80000000u);
  EXPECT_EQ(rc.dram.size, 1ull << 30);
  EXPECT_EQ(rc.dram.dma_region.offset, 64u * 1024);
  EXPECT_EQ(rc.dram.dma_region.size, 256u << 20);
  EXPECT_EQ(rc.intc.base, 0x08000000u);
  EXPECT_TRUE(rc.resolved["platform"]["dram"]["size"].is_number_unsigned());
}

TEST(RunConfig, AppParamsOverrideDefaults) {
  const RunConfig rc = build(patched(R"({"scenario": {"apps": [
      {"app": "alpha", "cores": [3, 1], "params": {"size": 8192}},
      {"app": "beta", "cores": [0]}]}})"));
  ASSERT_EQ(rc.apps.size(), 2u);
  EXPECT_EQ(rc.apps[0].cores, (std::vector<unsigned>{3, 1}));  // order kept
  EXPECT_EQ(rc.apps[0].params.at("size"), 8192u);
  EXPECT_EQ(rc.apps[0].params.at("count"), 10u);
  EXPECT_EQ(rc.apps[1].app, &kBeta);
  EXPECT_TRUE(rc.apps[1].params.empty());
  EXPECT_EQ(rc.resolved["scenario"]["apps"][0]["params"]["size"], 8192);
  EXPECT_EQ(rc.resolved["scenario"]["apps"][0]["params"]["count"], 10);
}

TEST(RunConfig, ScenarioFields) {
  const RunConfig rc = build(patched(R"({"scenario": {"name": "x", "description": "y", "seed": 77,
                                          "stop": {"max_time_us": 2.5}}})"));
  EXPECT_EQ(rc.name, "x");
  EXPECT_EQ(rc.description, "y");
  EXPECT_EQ(rc.seed, 77u);
  EXPECT_EQ(rc.max_time_ps, 2500000u);
}

TEST(RunConfig, CostsMergedWithDefaults) {
  const RunConfig rc = build(patched(R"({"platform": {"cpu": {"costs": {"cache_miss": 300, "tlb_miss": 50}}}})"));
  EXPECT_EQ(rc.costs.at("cache_miss"), 300u);  // replaced
  EXPECT_EQ(rc.costs.at("tlb_miss"), 50u);     // added
  EXPECT_EQ(rc.costs.at("function_call"), 5u);  // kept
  EXPECT_EQ(rc.costs.at("rbtree_visit"), 30u);
  const size_t defaults = default_cost_table().size();
  EXPECT_EQ(rc.costs.size(), defaults + 1);
  // The resolved document shows the merged table, as the run uses it.
  const json& costs = rc.resolved["platform"]["cpu"]["costs"];
  EXPECT_EQ(costs.size(), defaults + 1);
  EXPECT_EQ(costs["cache_miss"], 300);
  EXPECT_EQ(costs["list_op"], 5);
}

TEST(RunConfig, CostSpreadOfAClassAddedInTheSameDocument) {
  const RunConfig rc = build(patched(R"({"platform": {"cpu": {"costs": {"probe": 10}, "cost_spread": {"probe": 0.25}}}})"));
  EXPECT_EQ(rc.cost_spread.at("probe"), 0.25);
  EXPECT_EQ(rc.cost_spread.size(), 1u);
  EXPECT_TRUE(build(base_doc()).cost_spread.empty());
}

// ---- --set overrides.

TEST(Overrides, NestedPathsAndTypes) {
  const RunConfig rc = build(base_doc(), {"platform.dram.read_latency_ns=100", "scenario.name=hello world",
                                          "scenario.seed=42", "platform.dram.base=0x40000000",
                                          "platform.cpu.costs={\"walk\": 7}"});
  EXPECT_EQ(rc.dram.read_latency_ns, 100.0);
  EXPECT_EQ(rc.name, "hello world");  // not JSON: taken as a string
  EXPECT_EQ(rc.seed, 42u);
  EXPECT_EQ(rc.dram.base, 0x40000000u);  // the string form of an address
  EXPECT_EQ(rc.costs.at("walk"), 7u);
  EXPECT_EQ(rc.costs.at("cache_miss"), 200u);
}

TEST(Overrides, LaterOverrideWins) {
  const RunConfig rc = build(base_doc(), {"scenario.seed=1", "scenario.seed=2"});
  EXPECT_EQ(rc.seed, 2u);
}

TEST(Overrides, ArrayIndexes) {
  const RunConfig rc = build(patched(R"({"scenario": {"apps": [{"app": "alpha", "cores": [0, 1]}]}})"),
                             {"scenario.apps.0.params.count=7", "scenario.apps.0.cores.1=3"});
  EXPECT_EQ(rc.apps[0].params.at("count"), 7u);
  EXPECT_EQ(rc.apps[0].cores, (std::vector<unsigned>{0, 3}));
}

TEST(Overrides, CreateMissingObjects) {
  const RunConfig rc = build(base_doc(), {"platform.devices.dma1.type=dma", "platform.devices.dma1.base=0x20000000",
                                          "platform.devices.dma1.irq=40", "platform.devices.dma1.channels=4"});
  ASSERT_EQ(rc.devices.size(), 2u);
  EXPECT_EQ(rc.devices[1].name, "dma1");
  EXPECT_EQ(rc.devices[1].base, 0x20000000u);
  EXPECT_EQ(dma_config(rc.devices[1]).channels, 4u);
}

TEST(Overrides, ApplyOverrideOnEmptyDocument) {
  json doc;  // null becomes an object
  apply_override(doc, "a.b.c=1");
  apply_override(doc, "a.b.d=[1,2]");
  apply_override(doc, "a.b.d.1=\"x\"");
  apply_override(doc, "a.e=true");
  apply_override(doc, "a.f=");  // empty value: an empty string
  EXPECT_EQ(doc, json::parse(R"({"a": {"b": {"c": 1, "d": [1, "x"]}, "e": true, "f": ""}})"));
}

TEST(Overrides, ValueWithEqualsSign) {
  json doc = json::object();
  apply_override(doc, "k=a=b");  // the first '=' separates path and value
  EXPECT_EQ(doc["k"], "a=b");
}

// Override syntax errors name the --set argument or the path that failed.
::testing::AssertionResult override_fails_at(const std::string& assignment, const std::string& path,
                                             const std::string& words) {
  json doc = base_doc();
  doc["scenario"]["name"] = "n";
  try {
    apply_override(doc, assignment);
  } catch (const ConfigError& e) {
    if (e.path() != path) return ::testing::AssertionFailure() << "error at '" << e.path() << "': " << e.what();
    if (std::string(e.what()).find(words) == std::string::npos)
      return ::testing::AssertionFailure() << "message lacks \"" << words << "\": " << e.what();
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "accepted";
}

TEST(Overrides, BadSyntax) {
  EXPECT_TRUE(override_fails_at("platform.cpu.count", "--set platform.cpu.count", "expected path=value"));
  EXPECT_TRUE(override_fails_at("=5", "--set =5", "expected path=value"));
  EXPECT_TRUE(override_fails_at("platform..count=1", "--set platform..count", "empty path component"));
  EXPECT_TRUE(override_fails_at(".platform=1", "--set .platform", "empty path component"));
  EXPECT_TRUE(override_fails_at("platform.=1", "--set platform.", "empty path component"));
  EXPECT_TRUE(override_fails_at("scenario.apps.1.app=x", "/scenario/apps/1", "index out of range"));
  EXPECT_TRUE(override_fails_at("scenario.apps.first.app=x", "/scenario/apps/first", "index out of range"));
  EXPECT_TRUE(override_fails_at("scenario.apps.-1.app=x", "/scenario/apps/-1", "index out of range"));
  EXPECT_TRUE(override_fails_at("scenario.name.first=x", "/scenario/name/first", "inside a string"));
  EXPECT_TRUE(override_fails_at("platform.cpu.count.x=1", "/platform/cpu/count/x", "inside a number"));
}

// Found by fuzz_config: a --set value (or path) that is not UTF-8 was stored
// as a string and made the loader throw json::type_error from dump().
TEST(Overrides, NotUtf8IsAConfigError) {
  for (const std::string bad : {"platform.cpu.count=\xb8", "scenario.name=ab\xff", "platform.devices.\xc3=1"}) {
    json doc = json::object();
    EXPECT_THROW(apply_override(doc, bad), ConfigError) << bad;
    EXPECT_THROW(build(base_doc(), {bad}), ConfigError) << bad;
  }
  json doc = json::object();
  apply_override(doc, "scenario.name=caf\xc3\xa9");  // UTF-8 is fine
  EXPECT_EQ(doc["scenario"]["name"], "caf\xc3\xa9");
}

TEST(Overrides, ValuesAreStillValidated) {
  EXPECT_TRUE(fails_at(base_doc(), "/platform/cpu/count", {"expected an unsigned integer"}, {"platform.cpu.count=lots"}));
  EXPECT_TRUE(fails_at(base_doc(), "/platform/cpu/typo", {"unknown key"}, {"platform.cpu.typo=1"}));
}

// ---- The shipped scenario with the real built-in apps.

std::vector<const hal_app*> builtin_apps() { return {sw_apps, sw_apps + sw_app_count}; }

TEST(ShippedConfig, DmaCopyScenarioLoads) {
  const RunConfig rc = load_run_config(SMMU_VP_SOURCE_DIR "/platform/scenarios/dma_copy.json", {}, builtin_apps());
  EXPECT_EQ(rc.name, "dma_copy");
  EXPECT_EQ(rc.cpu.count, 4u);
  EXPECT_EQ(rc.dram.base, 0x80000000u);
  EXPECT_EQ(rc.dram.size, 1ull << 30);
  EXPECT_EQ(rc.dram.dma_region.offset, 256u << 20);
  ASSERT_EQ(rc.devices.size(), 7u);  // camera0, dma0, nic0, nvme0..3 (by name)
  EXPECT_EQ(rc.devices[0].name, "camera0");
  EXPECT_EQ(rc.devices[0].stream_id, 64u);
  EXPECT_EQ(rc.devices[1].name, "dma0");
  EXPECT_EQ(rc.devices[1].stream_id, 16u);
  EXPECT_EQ(rc.devices[3].name, "nvme0");
  EXPECT_EQ(rc.devices[3].stream_id, 48u);
  EXPECT_EQ(rc.devices[6].name, "nvme3");
  EXPECT_EQ(rc.devices[6].irq, 140u);
  EXPECT_EQ(rc.devices[2].name, "nic0");
  EXPECT_EQ(rc.devices[2].type, "nic");
  EXPECT_EQ(nic_config(rc.devices[2]).stream_id, 32u);
  EXPECT_EQ(dma_config(rc.devices[1]).stream_id, 16u);
  EXPECT_EQ(dma_config(rc.devices[1]).max_outstanding, 8u);
  ASSERT_EQ(rc.apps.size(), 2u);
  EXPECT_STREQ(rc.apps[0].app->name, "dma_copy");
  EXPECT_EQ(rc.apps[0].cores, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(rc.apps[0].params.at("transfers"), 64u);
  EXPECT_EQ(rc.apps[0].params.count("bookkeeping_cycles"), 1u);  // default filled
  EXPECT_STREQ(rc.apps[1].app->name, "lock_contend");
  EXPECT_EQ(rc.max_time_ps, 100000000000u);  // 100000 us
  expect_complete(run_schema(), rc.resolved, "");
}

TEST(ShippedConfig, DmaCopyScenarioWithOverrides) {
  const RunConfig rc = load_run_config(SMMU_VP_SOURCE_DIR "/platform/scenarios/dma_copy.json",
                                       {"platform.cpu.count=8", "scenario.apps.1.cores.0=7"}, builtin_apps());
  EXPECT_EQ(rc.cpu.count, 8u);
  EXPECT_EQ(rc.apps[1].cores, std::vector<unsigned>{7});
}

TEST(ShippedConfig, BuiltinAppsHaveUniqueNames) {
  const auto apps = builtin_apps();
  ASSERT_FALSE(apps.empty());
  for (size_t i = 0; i < apps.size(); ++i)
    for (size_t j = i + 1; j < apps.size(); ++j) EXPECT_STRNE(apps[i]->name, apps[j]->name);
}

}  // namespace
}  // namespace smmu_vp::config

namespace smmu_vp::config {
namespace {

// ---- platform.smmu

const char* kWithSmmu =
    R"({"platform": {"smmu": {"base": "0x09000000", "eventq_irq": 64, "gerror_irq": 65, "sync_irq": 66}}})";

TEST(RunConfigSmmu, AbsentByDefaultPresentWhenGiven) {
  EXPECT_FALSE(build(base_doc()).has_smmu);
  const RunConfig rc = build(patched(kWithSmmu));
  ASSERT_TRUE(rc.has_smmu);
  EXPECT_EQ(rc.smmu.base, 0x0900'0000u);
  EXPECT_EQ(rc.smmu.features.name, "v3.3");  // the default profile
  EXPECT_EQ(rc.smmu.eventq_irq, 64u);
  EXPECT_EQ(rc.smmu.translation.tlb.entries, 256u);
  EXPECT_FALSE(rc.smmu.stale_check);
}

TEST(RunConfigSmmu, ProfileAndFeatureSwitches) {
  const RunConfig rc = build(patched(kWithSmmu), {"platform.smmu.profile=\"v3.0\"", "platform.smmu.features.sev=true",
                                                  "platform.smmu.features.sidsize=8", "platform.smmu.features.gran16k=true",
                                                  "platform.smmu.tlb.replacement=\"fifo\""});
  EXPECT_EQ(rc.smmu.features.name, "v3.0");
  EXPECT_TRUE(rc.smmu.features.sev);
  EXPECT_TRUE(rc.smmu.features.gran16k);
  EXPECT_EQ(rc.smmu.features.sidsize, 8u);
  EXPECT_FALSE(rc.smmu.features.msi);  // untouched: the profile's
  EXPECT_EQ(rc.smmu.translation.tlb.replacement, smmu::ReplacementPolicy::kFifo);
}

// platform.smmu's JSON is shaped unlike SmmuConfig (translator members at the
// smmu level, micro_tlb an object of TranslatorConfig's own members): each
// value lands in its member.
TEST(RunConfigSmmu, EveryParameterLandsInItsMember) {
  const RunConfig rc = build(patched(R"({"platform": {"smmu": {"base": "0x09000000", "eventq_irq": 64,
      "gerror_irq": 65, "sync_irq": 66, "reg_latency_ns": 11, "bypass_latency_ns": 3, "stale_check": true,
      "tlb_lookup_ns": 4, "config_lookup_ns": 5, "walk_step_ns": 6, "translation_slots": 7, "walker_slots": 8,
      "cmdq": {"fetch_batch": 2, "decode_ns": 1.5, "cfgi_ns": 21, "tlbi_ns": 41, "tlbi_per_entry_ns": 0.25,
               "tlbi_range_ns": 61, "sync_ns": 11, "prefetch_ns": 6, "other_ns": 12, "lanes": 3},
      "tlb": {"entries": 64, "ways": 8, "replacement": "random"},
      "config_cache": {"ste_entries": 9, "cd_entries": 10},
      "micro_tlb": {"entries": 12, "lookup_ns": 0.75},
      "walk_cache": {"entries": 32, "ways": 2}}},
      "scenario": {"seed": 9}})"));
  const smmu::SmmuConfig& c = rc.smmu;
  EXPECT_EQ(c.base, 0x0900'0000u);
  EXPECT_EQ(c.eventq_irq, 64u);
  EXPECT_EQ(c.gerror_irq, 65u);
  EXPECT_EQ(c.sync_irq, 66u);
  EXPECT_EQ(c.reg_latency_ns, 11.0);
  EXPECT_EQ(c.bypass_latency_ns, 3.0);
  EXPECT_TRUE(c.stale_check);
  EXPECT_EQ(c.cmdq.fetch_batch, 2u);
  EXPECT_EQ(c.cmdq.decode_ns, 1.5);
  EXPECT_EQ(c.cmdq.cfgi_ns, 21.0);
  EXPECT_EQ(c.cmdq.tlbi_ns, 41.0);
  EXPECT_EQ(c.cmdq.tlbi_per_entry_ns, 0.25);
  EXPECT_EQ(c.cmdq.tlbi_range_ns, 61.0);
  EXPECT_EQ(c.cmdq.sync_ns, 11.0);
  EXPECT_EQ(c.cmdq.prefetch_ns, 6.0);
  EXPECT_EQ(c.cmdq.other_ns, 12.0);
  EXPECT_EQ(c.cmdq.lanes, 3u);
  const smmu::TranslatorConfig& t = c.translation;
  EXPECT_EQ(t.tlb_lookup_ns, 4.0);
  EXPECT_EQ(t.config_lookup_ns, 5.0);
  EXPECT_EQ(t.walk.step_ns, 6.0);
  EXPECT_EQ(t.translation_slots, 7u);
  EXPECT_EQ(t.walker_slots, 8u);
  EXPECT_EQ(t.tlb.entries, 64u);
  EXPECT_EQ(t.tlb.ways, 8u);
  EXPECT_EQ(t.tlb.replacement, smmu::ReplacementPolicy::kRandom);
  EXPECT_EQ(t.tlb.seed, 9u);  // scenario.seed
  EXPECT_EQ(t.config_cache.ste_entries, 9u);
  EXPECT_EQ(t.config_cache.cd_entries, 10u);
  EXPECT_EQ(t.micro_tlb_entries, 12u);
  EXPECT_EQ(t.micro_tlb_lookup_ns, 0.75);
  EXPECT_EQ(t.walk_cache.entries, 32u);
  EXPECT_EQ(t.walk_cache.ways, 2u);
}

// Absent SMMU parameters take SmmuConfig's defaults (the profile's features).
TEST(RunConfigSmmu, DefaultsAreTheStructs) {
  const RunConfig rc = build(patched(kWithSmmu));
  const smmu::SmmuConfig d;
  const smmu::SmmuConfig& c = rc.smmu;
  EXPECT_EQ(c.features.name, d.features.name);
  EXPECT_EQ(c.features.sidsize, d.features.sidsize);
  EXPECT_EQ(c.reg_latency_ns, d.reg_latency_ns);
  EXPECT_EQ(c.cmdq.tlbi_ns, d.cmdq.tlbi_ns);
  EXPECT_EQ(c.cmdq.lanes, d.cmdq.lanes);
  EXPECT_EQ(c.translation.walk.step_ns, d.translation.walk.step_ns);
  EXPECT_EQ(c.translation.tlb.ways, d.translation.tlb.ways);
  EXPECT_EQ(c.translation.tlb.replacement, d.translation.tlb.replacement);
  EXPECT_EQ(c.translation.micro_tlb_lookup_ns, d.translation.micro_tlb_lookup_ns);
  EXPECT_EQ(c.translation.config_cache.cd_entries, d.translation.config_cache.cd_entries);
  EXPECT_EQ(c.translation.walk_cache.entries, d.translation.walk_cache.entries);
  EXPECT_EQ(rc.resolved["platform"]["smmu"]["profile"], d.features.name);
}

TEST(RunConfigSmmu, Errors) {
  EXPECT_TRUE(fails_at(patched(kWithSmmu), "/platform/smmu/features", {"ECMDQ", "MSI"},
                       {"platform.smmu.features.msi=false"}));
  EXPECT_TRUE(fails_at(patched(kWithSmmu), "/platform/smmu/profile", {"v3.0", "v3.3"}, {"platform.smmu.profile=\"v9\""}));
  EXPECT_TRUE(fails_at(patched(kWithSmmu), "/platform/smmu/eventq_irq", {"does not exist"},
                       {"platform.intc.lines=32"}));
  EXPECT_TRUE(fails_at(patched(kWithSmmu), "/platform/smmu/tlb/ways", {"multiple"}, {"platform.smmu.tlb.ways=3"}));
  // A feature of a later version on an earlier profile.
  EXPECT_TRUE(fails_at(patched(kWithSmmu), "/platform/smmu/features", {"RIL"},
                       {"platform.smmu.profile=\"v3.0\"", "platform.smmu.features.ril=true"}));
  EXPECT_TRUE(fails_at(patched(kWithSmmu), "/platform/devices/dma0/base", {"overlaps", "smmu"},
                       {"platform.smmu.base=\"0x10000000\""}));
  EXPECT_TRUE(fails_at(patched(kWithSmmu), "/platform/smmu/features/bogus", {"unknown key"},
                       {"platform.smmu.features.bogus=1"}));
  EXPECT_TRUE(fails_at(patched(R"({"platform": {"smmu": {"eventq_irq": 1, "gerror_irq": 2, "sync_irq": 3}}})"),
                       "/platform/smmu/base", {"required"}));
}

}  // namespace
}  // namespace smmu_vp::config

namespace smmu_vp::config {
namespace {

TEST(RunConfig, ScenarioSetOverridesItsPlatformBeforeTheCommandLine) {
  const json doc = patched(R"({"set": {"platform.dram.read_latency_ns": 100, "platform.cpu.count": 2}})");
  const RunConfig rc = build(doc);
  EXPECT_EQ(rc.dram.read_latency_ns, 100.0);
  // --set wins over the file's "set".
  EXPECT_EQ(build(doc, {"platform.dram.read_latency_ns=120"}).dram.read_latency_ns, 120.0);
  EXPECT_FALSE(rc.resolved.contains("set"));
  EXPECT_TRUE(fails_at(patched(R"({"set": [1]})"), "/set", {"expected an object"}));
  EXPECT_TRUE(fails_at(patched(R"({"set": {"platform.dram.read_latency_ns": -1}})"), "/platform/dram/read_latency_ns",
                       {"must be between"}));
}

}  // namespace
}  // namespace smmu_vp::config

namespace smmu_vp::config {
namespace {

// Device types come from their registrations (platform/devices/), each
// parameter declared once in a table that gives the schema and the parse.
TEST(DeviceTypes, DmaAndNicRegistered) {
  ASSERT_NE(find_device_type("dma"), nullptr);
  ASSERT_NE(find_device_type("nic"), nullptr);
  EXPECT_EQ(find_device_type("nvme-that-does-not-exist"), nullptr);
}

json nic_doc(const char* extra = "") {
  return json::parse(std::string(R"({
    "platform": { "cpu": { "count": 2 },
      "devices": { "nic0": { "type": "nic", "base": "0x10100000", "irq": 40, "stream_id": 32)") + extra + R"( } } },
    "scenario": {} })");
}

// The models' own checks (each config struct's validate()) come back at the
// parameter's JSON path.
TEST(DeviceTypes, ModelChecksNameTheJsonParameter) {
  EXPECT_TRUE(fails_at(nic_doc(R"(, "mtu": 1000)"), "/platform/devices/nic0/rx_frame_bytes",
                       {"larger than the largest frame, mtu + 14 = 1014 bytes"}));
  EXPECT_TRUE(fails_at(nic_doc(R"(, "mtu": 1000, "rx_frame_mix": "imix")"), "/platform/devices/nic0/mtu",
                       {"imix frame mix needs 1514-byte frames"}));
}

TEST(DeviceTypes, NicParametersParsedWithDefaults) {
  const RunConfig rc = build(nic_doc(R"(, "queues": 4, "link_gbps": 25, "rx_frame_mix": "imix", "desc_batch": 16)"));
  ASSERT_EQ(rc.devices.size(), 1u);
  const DeviceConfig& d = rc.devices[0];
  const NicConfig c = nic_config(d);
  const NicConfig defaults;
  EXPECT_EQ(c.queues, 4u);
  EXPECT_EQ(c.link_gbps, 25.0);
  EXPECT_EQ(c.rx_frame_mix, FrameMix::kImix);
  EXPECT_EQ(c.desc_batch, 16u);
  EXPECT_EQ(c.burst_bytes, defaults.burst_bytes);
  EXPECT_EQ(c.rx_fifo_bytes, defaults.rx_fifo_bytes);
  EXPECT_EQ(c.stream_id, 32u);
  EXPECT_EQ(c.irq, 40u);
  EXPECT_EQ(d.size, Nic::register_block_size(4));
  EXPECT_EQ(d.irq_lines, 4u);
}

TEST(DeviceTypes, NicBadParametersNamed) {
  EXPECT_TRUE(fails_at(nic_doc(R"(, "queues": 0)"), "/platform/devices/nic0/queues", {"between 1 and 64"}));
  EXPECT_TRUE(fails_at(nic_doc(R"(, "rx_frame_mix": "jumbo")"), "/platform/devices/nic0/rx_frame_mix", {"fixed", "imix"}));
  EXPECT_TRUE(fails_at(nic_doc(R"(, "rx_frame_bytes": 3000)"), "/platform/devices/nic0/rx_frame_bytes", {"mtu + 14"}));
  EXPECT_TRUE(fails_at(nic_doc(R"(, "mtu": 1000, "rx_frame_mix": "imix")"), "/platform/devices/nic0/mtu", {"imix"}));
  // 16 queues from line 250 need lines up to 265 of 256.
  EXPECT_TRUE(fails_at(nic_doc(), "/platform/devices/nic0/irq", {"do not exist"}, {"platform.devices.nic0.irq=250"}));
  EXPECT_TRUE(fails_at(nic_doc(R"(, "colour": 1)"), "/platform/devices/nic0/colour", {"unknown key"}));
}

json nvme_doc(const char* extra = "") {
  return json::parse(std::string(R"({
    "platform": { "cpu": { "count": 2 },
      "devices": { "ssd0": { "type": "nvme", "base": "0x10200000", "irq": 60, "stream_id": 48)") + extra + R"( } } },
    "scenario": {} })");
}

TEST(DeviceTypes, NvmeParametersParsedWithDefaults) {
  ASSERT_NE(find_device_type("nvme"), nullptr);
  const RunConfig rc = build(nvme_doc(R"(, "queues": 8, "vectors": 9, "lba_bytes": 512, "read_latency_us": 80)"));
  ASSERT_EQ(rc.devices.size(), 1u);
  const DeviceConfig& d = rc.devices[0];
  const NvmeConfig c = nvme_config(d);
  const NvmeConfig defaults;
  EXPECT_EQ(c.queues, 8u);
  EXPECT_EQ(c.vectors, 9u);
  EXPECT_EQ(c.lba_bytes, 512u);
  EXPECT_EQ(c.read_latency_us, 80.0);
  EXPECT_EQ(c.write_latency_us, defaults.write_latency_us);
  EXPECT_EQ(c.parallelism, defaults.parallelism);
  EXPECT_EQ(c.read_mbps, defaults.read_mbps);
  EXPECT_EQ(c.capacity_gib, defaults.capacity_gib);
  EXPECT_EQ(c.stream_id, 48u);
  EXPECT_EQ(c.irq, 60u);
  EXPECT_EQ(d.size, static_cast<uint64_t>(NVME_REG_BLOCK_SIZE));
  EXPECT_EQ(d.irq_lines, 9u);
}

TEST(DeviceTypes, NvmeBadParametersNamed) {
  EXPECT_TRUE(fails_at(nvme_doc(R"(, "lba_bytes": 1024)"), "/platform/devices/ssd0/lba_bytes", {"512 or 4096"}));
  EXPECT_TRUE(fails_at(nvme_doc(R"(, "vectors": 65)"), "/platform/devices/ssd0/vectors", {"between 1 and 64"}));
  EXPECT_TRUE(fails_at(nvme_doc(R"(, "parallelism": 0)"), "/platform/devices/ssd0/parallelism", {"between"}));
  // 17 vectors from line 250 need lines up to 266 of 256.
  EXPECT_TRUE(fails_at(nvme_doc(), "/platform/devices/ssd0/irq", {"do not exist"}, {"platform.devices.ssd0.irq=250"}));
}

json camera_doc(const char* extra = "") {
  return json::parse(std::string(R"({
    "platform": { "cpu": { "count": 2 },
      "devices": { "cam0": { "type": "camera", "base": "0x10300000", "irq": 70, "stream_id": 64)") + extra + R"( } } },
    "scenario": {} })");
}

TEST(DeviceTypes, CameraParametersParsedWithDefaults) {
  ASSERT_NE(find_device_type("camera"), nullptr);
  const RunConfig rc = build(camera_doc(R"(, "width": 1280, "height": 720, "fps": 60, "line_fifo_lines": 8)"));
  ASSERT_EQ(rc.devices.size(), 1u);
  const DeviceConfig& d = rc.devices[0];
  const CameraConfig c = camera_config(d);
  const CameraConfig defaults;
  EXPECT_EQ(c.width, 1280u);
  EXPECT_EQ(c.height, 720u);
  EXPECT_EQ(c.fps, 60.0);
  EXPECT_EQ(c.line_fifo_lines, 8u);
  EXPECT_EQ(c.bytes_per_pixel, defaults.bytes_per_pixel);
  EXPECT_EQ(c.vblank_lines, defaults.vblank_lines);
  EXPECT_EQ(c.burst_bytes, defaults.burst_bytes);
  EXPECT_EQ(c.outstanding_writes, defaults.outstanding_writes);
  EXPECT_EQ(c.queue_depth, defaults.queue_depth);
  EXPECT_EQ(c.reg_latency_ns, defaults.reg_latency_ns);
  EXPECT_EQ(c.stream_id, 64u);
  EXPECT_EQ(c.irq, 70u);
  EXPECT_EQ(d.size, static_cast<uint64_t>(CAM_REG_BLOCK_SIZE));
  EXPECT_EQ(d.irq_lines, 1u);
}

TEST(DeviceTypes, CameraBadParametersNamed) {
  EXPECT_TRUE(fails_at(camera_doc(R"(, "width": 0)"), "/platform/devices/cam0/width", {"between"}));
  EXPECT_TRUE(fails_at(camera_doc(R"(, "fps": 0)"), "/platform/devices/cam0/fps", {"between"}));
  EXPECT_TRUE(fails_at(camera_doc(R"(, "burst_bytes": 384)"), "/platform/devices/cam0/burst_bytes", {"power of two"}));
  EXPECT_TRUE(fails_at(camera_doc(R"(, "width": 16384, "bytes_per_pixel": 8, "line_fifo_lines": 1024)"),
                       "/platform/devices/cam0/line_fifo_lines", {"FIFO"}));
  EXPECT_TRUE(fails_at(camera_doc(), "/platform/devices/cam0/irq", {}, {"platform.devices.cam0.irq=256"}));
}

TEST(DeviceTypes, UnknownTypeListsTheRegisteredOnes) {
  json d = nic_doc();
  d["platform"]["devices"]["nic0"]["type"] = "gpu";
  EXPECT_TRUE(fails_at(d, "/platform/devices/nic0/type", {"dma", "nic"}));
}

}  // namespace
}  // namespace smmu_vp::config

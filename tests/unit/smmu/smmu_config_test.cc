// SmmuConfig::validate(): what a platform that fills in the structs itself
// (docs/embedding.md) is told about a configuration the model cannot be
// built with: an InvalidConfig naming the field.
#include "smmu/smmu_config.h"

#include <cmath>
#include <functional>
#include <string>

#include <gtest/gtest.h>

namespace smmu_vp::smmu {
namespace {

// The field InvalidConfig names after `change` is applied to the defaults;
// "" when validate() accepts it.
std::string rejected_field(const std::function<void(SmmuConfig&)>& change) {
  SmmuConfig c;
  change(c);
  try {
    c.validate();
  } catch (const InvalidConfig& e) {
    EXPECT_EQ(std::string(e.what()), e.field() + ": " + e.reason());
    return e.field();
  }
  return "";
}

TEST(SmmuConfig, DefaultsAreValid) { EXPECT_EQ(rejected_field([](SmmuConfig&) {}), ""); }

TEST(SmmuConfig, CacheGeometryMustDivide) {
  EXPECT_EQ(rejected_field([](SmmuConfig& c) { c.translation.tlb.ways = 3; }), "translation.tlb.ways");
  EXPECT_EQ(rejected_field([](SmmuConfig& c) { c.translation.tlb.entries = 0; }), "translation.tlb.entries");
  EXPECT_EQ(rejected_field([](SmmuConfig& c) { c.translation.walk_cache.ways = 0; }), "translation.walk_cache.ways");
  EXPECT_EQ(rejected_field([](SmmuConfig& c) { c.translation.tlb.ways = c.translation.tlb.entries; }), "");
}

TEST(SmmuConfig, CountsAndTimes) {
  EXPECT_EQ(rejected_field([](SmmuConfig& c) { c.translation.walker_slots = 0; }), "translation.walker_slots");
  EXPECT_EQ(rejected_field([](SmmuConfig& c) { c.cmdq.lanes = 0; }), "cmdq.lanes");
  EXPECT_EQ(rejected_field([](SmmuConfig& c) { c.cmdq.sync_ns = -1; }), "cmdq.sync_ns");
  EXPECT_EQ(rejected_field([](SmmuConfig& c) { c.reg_latency_ns = std::nan(""); }), "reg_latency_ns");
  EXPECT_EQ(rejected_field([](SmmuConfig& c) { c.translation.walk.step_ns = INFINITY; }), "translation.walk.step_ns");
  EXPECT_EQ(rejected_field([](SmmuConfig& c) { c.cmdq.tlbi_ns = 0; }), "");
}

TEST(SmmuConfig, FeaturesTheModelCannotBe) {
  EXPECT_EQ(rejected_field([](SmmuConfig& c) { c.features.pri = true; }), "features");
  EXPECT_EQ(rejected_field([](SmmuConfig& c) { c.features = SmmuFeatures::v3_0_profile(); }), "");
}

TEST(SmmuConfig, DistributedLayout) {
  auto two_tbus = [](SmmuConfig& c) {
    c.translation.distributed.tbus = {{"a", {"dev0"}}, {"b", {"dev1"}}};
    c.translation.distributed.port_tbu = {0, 1};
  };
  EXPECT_EQ(rejected_field(two_tbus), "");
  EXPECT_EQ(rejected_field([&](SmmuConfig& c) {
              two_tbus(c);
              c.translation.distributed.port_tbu = {0, 2};
            }),
            "translation.distributed.port_tbu.1");
  EXPECT_EQ(rejected_field([&](SmmuConfig& c) {
              two_tbus(c);
              c.translation.micro_tlb_entries = 8;
            }),
            "translation.micro_tlb_entries");
  EXPECT_EQ(rejected_field([&](SmmuConfig& c) {
              two_tbus(c);
              c.translation.distributed.tbu.tlb.ways = 3;
            }),
            "translation.distributed.tbu.tlb.ways");
  // Without TBUs their parameters are not used, and not checked.
  EXPECT_EQ(rejected_field([](SmmuConfig& c) { c.translation.distributed.tbu.tlb.ways = 3; }), "");
}

}  // namespace
}  // namespace smmu_vp::smmu

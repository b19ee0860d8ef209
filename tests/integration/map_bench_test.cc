// The seed 000 / 002 benchmark (sw/apps/map_bench.c) on its shipped
// scenarios: what each policy does to the command stream and to latency.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platform_fixture.h"

namespace smmu_vp::test {
namespace {

TestRun run_shipped(const std::string& file) {
  TestRun t;
  auto cfg = config::load_run_config(SMMU_VP_SOURCE_DIR "/platform/scenarios/" + file, {}, with_builtin({}));
  auto log = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  t.platform = std::make_unique<Platform>(cfg, nullptr, log);
  t.result = t.platform->run();
  return t;
}

double value(const TestRun& t, const std::string& name) {
  const double* v = t.stats().find_value("sw.map_bench." + name);
  EXPECT_NE(v, nullptr) << name;
  return v ? *v : 0.0;
}

const std::vector<std::string> kSizes = {"4K", "64K", "1M", "2M", "12M", "16M", "24M", "32M"};

TEST(MapBench, Seed000AsidWalkFlushReplacesPerPageTlbis) {
  const TestRun t = run_shipped("seed000_unmap.json");
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  // 2M..32M remove 1+6+8+12+16 = 43 level-2 tables per domain and
  // repetition (10, as the seed averaged). The va domain flushes each with
  // 512 TLBI_NH_VA, the asid one with one TLBI_NH_ASID; both invalidate the
  // leaves of 4K, 64K and 1M (1+16+256 pages) per page.
  constexpr uint64_t kReps = 10;
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_ASID"), kReps * 43u);
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_VA"), kReps * (43u * 512 + 2 * 273u));
  for (size_t s = 0; s < kSizes.size(); ++s) {
    const std::string& z = kSizes[s];
    // The walk-flush policy leaves mapping alone.
    EXPECT_NEAR(value(t, "map_us_va_" + z), value(t, "map_us_asid_" + z), 0.01 * value(t, "map_us_va_" + z)) << z;
    if (s >= 3) {
      EXPECT_GT(value(t, "unmap_us_va_" + z), 10 * value(t, "unmap_us_asid_" + z)) << z;
    } else {
      EXPECT_NEAR(value(t, "unmap_us_va_" + z), value(t, "unmap_us_asid_" + z), 0.01 * value(t, "unmap_us_va_" + z))
          << z;
    }
  }
}

TEST(MapBench, Seed002BatchedMapSgSavesThePerElementChain) {
  const TestRun t = run_shipped("seed002_map_sg.json");
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  for (size_t s = 2; s < kSizes.size(); ++s) {
    EXPECT_GT(value(t, "map_us_per_element_" + kSizes[s]), 5 * value(t, "map_us_batched_" + kSizes[s])) << kSizes[s];
  }
  // Latency grows with the list in both.
  EXPECT_GT(value(t, "map_us_batched_32M"), 10 * value(t, "map_us_batched_1M"));
}

}  // namespace
}  // namespace smmu_vp::test

// What the timing must obey: DRAM bandwidth never above the configured one,
// latency never below the configured one, compute annotations exact.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "hal/hal.h"
#include "platform_fixture.h"

namespace smmu_vp::test {
namespace {

TEST(Timing, DmaCopyNeverExceedsDramBandwidth) {
  // Two channels with deep pipelines ask for more than DRAM can give.
  auto doc = scenario({{{"app", "dma_copy"}, {"cores", {0, 1}}, {"params", {{"transfers", 16}, {"bytes", 262144}}}}});
  doc["platform"]["devices"]["dma0"]["max_outstanding"] = 32;
  const TestRun t = run(doc, {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  const double configured = t.platform->config().dram.bandwidth_gbps;
  const double* copy_gbps = t.stats().find_value("dma0.bandwidth_gbps");
  ASSERT_NE(copy_gbps, nullptr);
  // Every copied byte is read once and written once.
  EXPECT_LE(2.0 * *copy_gbps, configured * 1.0001);
  // And the bus really is the bottleneck here, not something else.
  EXPECT_GE(2.0 * *copy_gbps, configured * 0.8);
  EXPECT_EQ(t.counter("dma0.bytes"), 2u * 16u * 262144u);
}

TEST(Timing, DramLatencyNeverBelowConfigured) {
  auto doc = scenario({{{"app", "dma_copy"}, {"cores", {0, 1}}, {"params", {{"transfers", 8}}}}});
  const TestRun t = run(doc, {}, {"platform.dram.read_latency_ns=123", "platform.dram.write_latency_ns=77"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  const Histogram* rd = t.histogram("dram.read_latency_ns");
  const Histogram* wr = t.histogram("dram.write_latency_ns");
  ASSERT_TRUE(rd && wr);
  ASSERT_GT(rd->count(), 0u);
  EXPECT_GE(rd->min(), 123.0);
  EXPECT_GE(wr->min(), 77.0);
}

uint64_t g_read_ps, g_cycles_ps, g_delay_ps;

int measure_main(void) {
  const struct hal_region dram = hal_dram();
  uint64_t t0 = hal_now_ps();
  (void)hal_read64(dram.base + 4096);
  g_read_ps = hal_now_ps() - t0;
  t0 = hal_now_ps();
  hal_cycles(1000);
  g_cycles_ps = hal_now_ps() - t0;
  t0 = hal_now_ps();
  hal_delay_ns(777);
  g_delay_ps = hal_now_ps() - t0;
  return 0;
}
const hal_app measure_app = {"measure", "times single HAL operations", measure_main, nullptr};

TEST(Timing, HalAccessAndComputeAnnotations) {
  const TestRun t = run(scenario({{{"app", "measure"}, {"cores", {0}}}}), {&measure_app},
                        {"platform.cpu.frequency_mhz=2000", "platform.dram.read_latency_ns=80",
                         "platform.interconnect.latency_ns=2", "platform.dram.bandwidth_gbps=8"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  // One router hop, the read latency, and 8 bytes at 8 GB/s.
  EXPECT_EQ(g_read_ps, 2000u + 80000u + 1000u);
  EXPECT_EQ(g_cycles_ps, 1000u * 500u);  // 2 GHz: 500 ps per cycle
  EXPECT_EQ(g_delay_ps, 777000u);
}

// hal_cost_walk: of a walk's objects, the share of its working set beyond the
// private caches costs the shared cache's latency up to its size, memory's
// beyond.
uint64_t g_walk_ps[4];

int walk_main(void) {
  static const uint64_t walks[4][2] = {{521, 521 * 64}, {128, 128 * 64}, {10, 640}, {1024, 65536}};
  for (int i = 0; i < 4; i++) {
    const uint64_t t0 = hal_now_ps();
    hal_cost_walk(walks[i][0], walks[i][1]);
    g_walk_ps[i] = hal_now_ps() - t0;
  }
  return 0;
}
const hal_app walk_app = {"walk", "times hal_cost_walk", walk_main, nullptr};

TEST(Timing, ColdWalkChargesWhatTheCachesCannotHold) {
  const TestRun t = run(scenario({{{"app", "walk"}, {"cores", {0}}}}), {&walk_app},
                        {"platform.cpu.private_cache_kib=8", "platform.cpu.shared_cache_kib=16",
                         "platform.cpu.shared_cache_ns=20", "platform.cpu.memory_load_ns=100"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  // 521 nodes: 128 fit the private 8 KiB, 128 more the shared 16 KiB, 265 do not.
  EXPECT_EQ(g_walk_ps[0], (128u * 20u + 265u * 100u) * 1000u);
  // Exactly the private caches' size, and far less: all hits.
  EXPECT_EQ(g_walk_ps[1], 0u);
  EXPECT_EQ(g_walk_ps[2], 0u);
  // 1024 objects over 64 KiB: an eighth in the shared cache, three quarters in memory.
  EXPECT_EQ(g_walk_ps[3], (128u * 20u + 768u * 100u) * 1000u);
}

TEST(Timing, ColdWalkIsFreeWithoutACacheModel) {
  const TestRun t = run(scenario({{{"app", "walk"}, {"cores", {0}}}}), {&walk_app},
                        {"platform.cpu.shared_cache_kib=16", "platform.cpu.memory_load_ns=100"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  for (uint64_t ps : g_walk_ps) EXPECT_EQ(ps, 0u);
}

// platform.cpu.cost_spread: a class with a spread keeps its mean, its fixed
// share is a floor, and the rest varies as an exponential draw; a class
// without one still costs exactly its cycles.
constexpr int kCharges = 20000;
uint64_t g_spread_ps[kCharges];
uint64_t g_pair_ps[kCharges];  // hal_cost_id of count 2: one draw for both
uint64_t g_fixed_ps[2];

int spread_main(void) {
  for (int i = 0; i < kCharges; i++) {
    const uint64_t t0 = hal_now_ps();
    hal_cost("probe", 1);
    g_spread_ps[i] = hal_now_ps() - t0;
  }
  const int probe = hal_cost_lookup("probe");
  for (int i = 0; i < kCharges; i++) {
    const uint64_t t0 = hal_now_ps();
    hal_cost_id(probe, 2);
    g_pair_ps[i] = hal_now_ps() - t0;
  }
  for (uint64_t& ps : g_fixed_ps) {
    const uint64_t t0 = hal_now_ps();
    hal_cost("list_op", 3);
    ps = hal_now_ps() - t0;
  }
  return 0;
}
const hal_app spread_app = {"spread", "charges one cost class again and again", spread_main, nullptr};

TEST(Timing, CostSpreadKeepsTheMeanAndVariesEachCharge) {
  const TestRun t = run(scenario({{{"app", "spread"}, {"cores", {0}}}}), {&spread_app},
                        {"platform.cpu.frequency_mhz=2000", "platform.cpu.costs.probe=1000",
                         "platform.cpu.costs.list_op=7", "platform.cpu.cost_spread.probe=0.4"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  const double mean_ps = 1000 * 500.0;  // 1000 cycles at 2 GHz
  struct Moments {
    double mean, spread;
    uint64_t lowest;
  };
  auto moments = [](const uint64_t* ps, int n) {
    double sum = 0, sum_sq = 0;
    uint64_t lowest = UINT64_MAX;
    for (int i = 0; i < n; i++) {
      sum += static_cast<double>(ps[i]);
      sum_sq += static_cast<double>(ps[i]) * static_cast<double>(ps[i]);
      lowest = std::min(lowest, ps[i]);
    }
    const double mean = sum / n;
    return Moments{mean, std::sqrt(sum_sq / n - mean * mean) / mean, lowest};
  };
  const Moments one = moments(g_spread_ps, kCharges), pair = moments(g_pair_ps, kCharges);
  // 20,000 draws: the mean within 1 % (its standard error is 0.28 %), the
  // spread (standard deviation over mean) within 0.02 of the share.
  EXPECT_NEAR(one.mean / mean_ps, 1.0, 0.01);
  EXPECT_NEAR(one.spread, 0.4, 0.02);
  // The fixed 60 % is a floor that the smallest of 20,000 draws comes close to.
  EXPECT_GE(one.lowest, static_cast<uint64_t>(0.6 * mean_ps));
  EXPECT_LT(one.lowest, static_cast<uint64_t>(0.61 * mean_ps));
  // A call of count 2 by handle: twice the mean, and the same spread, as one
  // draw scales the whole count (two draws would give 0.4 / sqrt 2).
  EXPECT_NEAR(pair.mean / (2 * mean_ps), 1.0, 0.01);
  EXPECT_NEAR(pair.spread, 0.4, 0.02);
  // A class without a spread: exactly count times its cycles, every time.
  EXPECT_EQ(g_fixed_ps[0], 3u * 7u * 500u);
  EXPECT_EQ(g_fixed_ps[1], 3u * 7u * 500u);
}

}  // namespace
}  // namespace smmu_vp::test

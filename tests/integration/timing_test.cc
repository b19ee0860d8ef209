// What the timing must obey: DRAM bandwidth never above the configured one,
// latency never below the configured one, compute annotations exact.
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

}  // namespace
}  // namespace smmu_vp::test

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

}  // namespace
}  // namespace smmu_vp::test

// How runs end: app failures, HAL misuse, bus errors, DMA errors, time limits.
#include <gtest/gtest.h>

#include "dma/dma_registers.h"
#include "drivers/dma/dma_engine.h"
#include "hal/hal.h"
#include "platform_fixture.h"

namespace smmu_vp::test {
namespace {

int fails_main(void) { return 7; }
const hal_app fails = {"fails", "returns 7", fails_main, nullptr};

TEST(Outcome, AppReturningNonZeroFailsTheRun) {
  const TestRun t = run(scenario({{{"app", "fails"}, {"cores", {0}}}}), {&fails});
  EXPECT_EQ(t.result.status, RunResult::Status::kAppFailed);
  EXPECT_EQ(t.result.exit_code(), 3);
  EXPECT_NE(t.result.message.find("returned 7"), std::string::npos) << t.result.message;
}

int undeclared_param_main(void) { return static_cast<int>(hal_param("no_such_param")); }
const hal_app undeclared = {"undeclared", "asks for a parameter it did not declare", undeclared_param_main, nullptr};

TEST(Outcome, UndeclaredParameterStopsTheCoreWithAMessage) {
  const TestRun t = run(scenario({{{"app", "undeclared"}, {"cores", {0}}}}), {&undeclared});
  EXPECT_EQ(t.result.status, RunResult::Status::kAppFailed);
  EXPECT_NE(t.result.message.find("no_such_param"), std::string::npos) << t.result.message;
}

// Stat names built in one reused buffer are still told apart.
int reused_name_main(void) {
  char count[8] = "count_a", latency[8] = "lat_a";
  hal_stat_add(count, 1);
  hal_stat_sample(latency, 10);
  count[6] = 'b';
  latency[4] = 'b';
  hal_stat_add(count, 2);
  hal_stat_sample(latency, 20);
  return 0;
}
const hal_app reused_name = {"reused_name", "stats named from one buffer", reused_name_main, nullptr};

TEST(Outcome, StatNamesFromAReusedBufferStayApart) {
  const TestRun t = run(scenario({{{"app", "reused_name"}, {"cores", {0}}}}), {&reused_name});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(t.counter("sw.reused_name.count_a"), 1u);
  EXPECT_EQ(t.counter("sw.reused_name.count_b"), 2u);
  ASSERT_NE(t.histogram("sw.reused_name.lat_a"), nullptr);
  ASSERT_NE(t.histogram("sw.reused_name.lat_b"), nullptr);
  EXPECT_EQ(t.histogram("sw.reused_name.lat_b")->count(), 1u);
}

int unknown_cost_main(void) {
  hal_cost("no_such_cost", 1);
  return 0;
}
const hal_app unknown_cost = {"unknown_cost", "charges a cost class that does not exist", unknown_cost_main, nullptr};

TEST(Outcome, UnknownCostClassNamesTheKnownOnes) {
  const TestRun t = run(scenario({{{"app", "unknown_cost"}, {"cores", {0}}}}), {&unknown_cost});
  EXPECT_EQ(t.result.status, RunResult::Status::kAppFailed);
  EXPECT_NE(t.result.message.find("indirect_call"), std::string::npos) << t.result.message;
}

uint32_t g_bad_read;
uint64_t g_bus_errors;
int bus_error_main(void) {
  g_bad_read = hal_read32(0x4000);  // nothing is mapped there
  g_bus_errors = hal_bus_errors();
  return 0;
}
const hal_app bus_error = {"bus_error", "reads an unmapped address", bus_error_main, nullptr};

TEST(Outcome, UnmappedAccessIsABusErrorNotACrash) {
  const TestRun t = run(scenario({{{"app", "bus_error"}, {"cores", {0}}}}), {&bus_error});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(g_bad_read, 0xFFFFFFFFu);
  EXPECT_EQ(g_bus_errors, 1u);
  EXPECT_EQ(t.counter("router.decode_errors"), 1u);
  EXPECT_EQ(t.counter("cpus.cpu0.bus_errors"), 1u);
}

uint32_t g_dma_error, g_dma_status;
int dma_error_main(void) {
  struct dma_engine dma;
  if (dma_engine_probe(&dma, "dma0") != 0) return 1;
  phys_addr_t dst;
  if (!hal_dma_alloc(4096, 4096, &dst)) return 1;
  dma_engine_start(&dma, 0, 0x4000 /* unmapped */, dst, 4096, DMA_COMPLETE_POLL);
  g_dma_status = dma_engine_wait_poll(&dma, 0);
  g_dma_error = dma_engine_ack(&dma, 0);
  return 0;
}
const hal_app dma_error = {"dma_error", "DMA from an unmapped address", dma_error_main, nullptr};

TEST(Outcome, DmaFromUnmappedAddressReportsReadError) {
  const TestRun t = run(scenario({{{"app", "dma_error"}, {"cores", {0}}}}), {&dma_error});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_TRUE(g_dma_status & DMA_STATUS_ERROR);
  EXPECT_EQ(g_dma_error, DMA_ERR_READ);
  EXPECT_EQ(t.counter("dma0.ch0.errors"), 1u);
}

int forever_main(void) {
  for (;;) hal_delay_ns(1000);
}
const hal_app forever = {"forever", "never returns", forever_main, nullptr};

TEST(Outcome, TimeLimitEndsARunThatNeverFinishes) {
  const TestRun t = run(scenario({{{"app", "forever"}, {"cores", {0}}}}, 50.0), {&forever});
  EXPECT_EQ(t.result.status, RunResult::Status::kTimeLimit);
  EXPECT_EQ(t.result.exit_code(), 4);
  EXPECT_GE(t.result.sim_ns, 50000.0);
  EXPECT_LT(t.result.sim_ns, 60000.0);
}

}  // namespace
}  // namespace smmu_vp::test

// Interrupt delivery: wired lines and MSIs reach the handler on the core that
// registered it; WFI sleeps until then; SEV wakes WFE.
#include <gtest/gtest.h>

#include "hal/hal.h"
#include "platform_fixture.h"

namespace smmu_vp::test {
namespace {

TEST(Interrupts, WiredCompletionReachesEachCore) {
  const TestRun t = run(scenario({{{"app", "dma_copy"}, {"cores", {0, 1}},
                                   {"params", {{"transfers", 10}, {"completion", 1}}}}}),
                        {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(t.counter("intc.wired_irqs"), 20u);
  EXPECT_EQ(t.counter("intc.msi_writes"), 0u);
  EXPECT_EQ(t.counter("cpus.cpu0.irqs_taken"), 10u);
  EXPECT_EQ(t.counter("cpus.cpu1.irqs_taken"), 10u);
  EXPECT_GT(t.counter("cpus.cpu0.wfi_sleep_ps"), 0u);
  EXPECT_EQ(t.counter("sw.dma_copy.transfers"), 20u);
}

TEST(Interrupts, MsiCompletionGoesThroughTheDoorbell) {
  const TestRun t = run(scenario({{{"app", "dma_copy"}, {"cores", {0, 1}},
                                   {"params", {{"transfers", 10}, {"completion", 2}}}}}),
                        {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(t.counter("intc.msi_writes"), 20u);
  EXPECT_EQ(t.counter("intc.wired_irqs"), 0u);
  EXPECT_EQ(t.counter("intc.msi_invalid"), 0u);
  EXPECT_EQ(t.counter("cpus.cpu0.irqs_taken") + t.counter("cpus.cpu1.irqs_taken"), 20u);
}

TEST(Interrupts, PollingNeedsNoInterrupt) {
  const TestRun t = run(scenario({{{"app", "dma_copy"}, {"cores", {0}},
                                   {"params", {{"transfers", 4}, {"completion", 0}}}}}),
                        {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(t.counter("intc.wired_irqs") + t.counter("intc.msi_writes"), 0u);
  EXPECT_GT(t.counter("cpus.cpu0.mmio_accesses"), 4u);
}

volatile uint32_t g_flag;
uint64_t g_sev_at_ns, g_woke_at_ns, g_wfe_calls;

int waiter_main(void) {
  while (!hal_load32(&g_flag)) {
    hal_wfe();
    ++g_wfe_calls;
  }
  g_woke_at_ns = hal_now_ns();
  return 0;
}
int signaller_main(void) {
  hal_delay_ns(5000);
  hal_store32(&g_flag, 1);
  g_sev_at_ns = hal_now_ns();
  hal_sev();
  return 0;
}
const hal_app waiter = {"waiter", "waits in WFE for a flag", waiter_main, nullptr};
const hal_app signaller = {"signaller", "sets a flag and sends SEV", signaller_main, nullptr};

TEST(Interrupts, SevWakesCoreInWfe) {
  // No event stream: only the SEV can wake the waiter.
  const TestRun t = run(scenario({{{"app", "waiter"}, {"cores", {0}}}, {{"app", "signaller"}, {"cores", {1}}}}),
                        {&waiter, &signaller}, {"platform.cpu.event_stream_ns=0"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GE(g_woke_at_ns, g_sev_at_ns);
  EXPECT_LT(g_woke_at_ns - g_sev_at_ns, 100u);
  // The waiter slept instead of spinning: a handful of WFEs, not thousands.
  EXPECT_LE(g_wfe_calls, 3u);
  EXPECT_GE(t.counter("cpus.cpu0.wfe_sleep_ps"), 4000000u);
}

int sleeper_main(void) {
  hal_wfi();
  return 0;
}
const hal_app sleeper = {"sleeper", "WFI with nothing to wake it", sleeper_main, nullptr};

TEST(Interrupts, WfiWithNoInterruptIsReportedAsDeadlock) {
  const TestRun t = run(scenario({{{"app", "sleeper"}, {"cores", {0}}}}), {&sleeper});
  EXPECT_EQ(t.result.status, RunResult::Status::kDeadlock);
  EXPECT_EQ(t.result.exit_code(), 5);
  EXPECT_FALSE(t.result.message.empty());
}

}  // namespace
}  // namespace smmu_vp::test

// Per-core busy / idle accounting: idle is time asleep in WFE/WFI, before a
// program starts and after it returns (the whole run without one); busy is
// the rest; busy + idle is the run's simulated time, exactly.
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/tlm_time.h"
#include "hal/hal.h"
#include "output/summary.h"
#include "platform_fixture.h"

namespace smmu_vp::test {
namespace {

constexpr Ps kUs = 1000000;

// Simulated end of the run just finished, ps.
Ps end_ps() { return now_ps(); }

double value(const TestRun& t, const std::string& path) {
  const double* v = t.stats().find_value(path);
  EXPECT_NE(v, nullptr) << path;
  return v ? *v : -1.0;
}

// Everything every core must satisfy, whatever it ran.
void expect_consistent(const TestRun& t) {
  const Ps end = end_ps();
  ASSERT_EQ(ns_to_ps(t.result.sim_ns), end);
  ASSERT_EQ(t.result.cores.size(), t.platform->cpus().size());
  for (unsigned i = 0; i < t.platform->cpus().size(); ++i) {
    const CpuCore& c = t.platform->cpus().core(i);
    const std::string p = "cpus.cpu" + std::to_string(i);
    SCOPED_TRACE(p);
    EXPECT_LE(c.idle_ps(end), end);
    EXPECT_EQ(c.busy_ps(end) + c.idle_ps(end), end);
    EXPECT_EQ(value(t, p + ".busy_ns"), ps_to_ns(c.busy_ps(end)));
    EXPECT_EQ(value(t, p + ".idle_ns"), ps_to_ns(c.idle_ps(end)));
    EXPECT_EQ(value(t, p + ".utilisation"), c.utilisation(end));
    EXPECT_GE(c.utilisation(end), 0.0);
    EXPECT_LE(c.utilisation(end), 1.0);
    const CoreOutcome& o = t.result.cores[i];
    EXPECT_EQ(o.busy_ns, ps_to_ns(c.busy_ps(end)));
    EXPECT_EQ(o.idle_ns, ps_to_ns(c.idle_ps(end)));
    EXPECT_EQ(o.utilisation, c.utilisation(end));
    EXPECT_DOUBLE_EQ(o.busy_ns + o.idle_ns, t.result.sim_ns);
  }
}

uint64_t g_compute_start_ps, g_compute_end_ps;

int compute_main(void) {
  g_compute_start_ps = hal_now_ps();
  hal_cycles(20000);  // 10 us at 2 GHz, over many quanta
  g_compute_end_ps = hal_now_ps();
  return 0;
}
int longer_main(void) {
  hal_delay_ns(50000);
  return 0;
}
const hal_app compute = {"compute", "computes 20000 cycles and returns", compute_main, nullptr};
const hal_app longer = {"longer", "runs 50 us", longer_main, nullptr};

TEST(CpuAccounting, ComputeThenReturnIsBusyThenIdle) {
  const TestRun t = run(scenario({{{"app", "compute"}, {"cores", {0}}}, {{"app", "longer"}, {"cores", {1}}}}),
                        {&compute, &longer}, {"platform.cpu.frequency_mhz=2000"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  expect_consistent(t);
  const Ps end = end_ps();
  EXPECT_EQ(end, 50 * kUs);  // the longer core sets the end
  const CpuCore& c0 = t.platform->cpus().core(0);
  EXPECT_EQ(g_compute_start_ps, 0u);
  EXPECT_EQ(g_compute_end_ps, 10 * kUs);
  EXPECT_EQ(c0.finish_time(), 10 * kUs);
  // Busy exactly while it computed; idle from its return to the end.
  EXPECT_EQ(c0.busy_ps(end), 10 * kUs);
  EXPECT_EQ(c0.idle_ps(end), 40 * kUs);
  EXPECT_DOUBLE_EQ(value(t, "cpus.cpu0.busy_ns"), 10000.0);
  EXPECT_DOUBLE_EQ(value(t, "cpus.cpu0.idle_ns"), 40000.0);
  EXPECT_DOUBLE_EQ(value(t, "cpus.cpu0.utilisation"), 0.2);
  // hal_delay_ns is time the core spends running, not sleeping.
  EXPECT_EQ(t.platform->cpus().core(1).busy_ps(end), 50 * kUs);
  EXPECT_DOUBLE_EQ(value(t, "cpus.cpu1.utilisation"), 1.0);
}

TEST(CpuAccounting, CoreWithoutProgramIsIdleTheWholeRun) {
  const TestRun t = run(scenario({{{"app", "longer"}, {"cores", {1}}}}), {&longer});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  expect_consistent(t);
  for (unsigned i : {0u, 2u, 3u}) {
    SCOPED_TRACE(i);
    const std::string p = "cpus.cpu" + std::to_string(i);
    EXPECT_EQ(value(t, p + ".busy_ns"), 0.0);
    EXPECT_EQ(value(t, p + ".idle_ns"), t.result.sim_ns);
    EXPECT_EQ(value(t, p + ".utilisation"), 0.0);
    EXPECT_TRUE(t.result.cores[i].app.empty());
    EXPECT_EQ(t.result.cores[i].utilisation, 0.0);
  }
  EXPECT_EQ(t.result.sim_ns, 50000.0);
}

// WFI: core 0 sleeps until core 1 raises its interrupt (an MSI) 20 us later.
constexpr unsigned kLine = 40;
volatile uint32_t g_ready, g_irq_seen;
uint64_t g_wfi_from_ps, g_wfi_to_ps;

void on_irq(unsigned, void*) { g_irq_seen = 1; }
int wfi_waiter_main(void) {
  if (hal_irq_register(kLine, on_irq, nullptr) != 0) return 1;
  hal_cycles(1000);  // 0.5 us of work first
  hal_store32(&g_ready, 1);
  g_wfi_from_ps = hal_now_ps();
  while (!g_irq_seen) hal_wfi();
  g_wfi_to_ps = hal_now_ps();
  hal_cycles(2000);  // 1 us of work after
  return 0;
}
int irq_sender_main(void) {
  while (!hal_load32(&g_ready)) hal_cpu_relax();
  hal_delay_ns(20000);
  hal_write32(hal_msi_doorbell(), kLine);
  hal_delay_ns(30000);  // outlive the waiter
  return 0;
}
const hal_app wfi_waiter = {"wfi_waiter", "sleeps in WFI for an interrupt", wfi_waiter_main, nullptr};
const hal_app irq_sender = {"irq_sender", "raises the waiter's interrupt", irq_sender_main, nullptr};

TEST(CpuAccounting, SleepInWfiIsIdle) {
  const TestRun t = run(scenario({{{"app", "wfi_waiter"}, {"cores", {0}}}, {{"app", "irq_sender"}, {"cores", {1}}}}),
                        {&wfi_waiter, &irq_sender});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  expect_consistent(t);
  const Ps end = end_ps();
  const CpuCore& c0 = t.platform->cpus().core(0);
  const uint64_t slept = t.counter("cpus.cpu0.wfi_sleep_ps");
  // The sleep lasted about the sender's 20 us (plus the MSI's way there).
  EXPECT_EQ(slept, g_wfi_to_ps - g_wfi_from_ps);
  EXPECT_GE(slept, 20 * kUs);
  EXPECT_LT(slept, 21 * kUs);
  // Idle: the sleep and the time after the program returned; busy: the rest.
  EXPECT_EQ(c0.idle_ps(end), slept + (end - c0.finish_time()));
  EXPECT_EQ(c0.busy_ps(end), c0.finish_time() - slept);
  EXPECT_GE(c0.busy_ps(end), 1500000u);  // 0.5 us + 1 us of cycles, plus the HAL's costs
  EXPECT_LT(c0.busy_ps(end), 2 * kUs);
  // The sender spun, then delayed: busy all along.
  EXPECT_EQ(t.platform->cpus().core(1).idle_ps(end), 0u);
}

// WFE: woken by SEV from another core, with the event stream ticking too.
volatile uint32_t g_flag;
int wfe_waiter_main(void) {
  while (!hal_load32(&g_flag)) hal_wfe();
  return 0;
}
int sev_sender_main(void) {
  hal_delay_ns(250000);  // across two event-stream ticks (100 us)
  hal_store32(&g_flag, 1);
  hal_sev();
  return 0;
}
const hal_app wfe_waiter = {"wfe_waiter", "waits in WFE for a flag", wfe_waiter_main, nullptr};
const hal_app sev_sender = {"sev_sender", "sets a flag and sends SEV", sev_sender_main, nullptr};

TEST(CpuAccounting, SleepInWfeIsIdle) {
  const TestRun t = run(scenario({{{"app", "wfe_waiter"}, {"cores", {0}}}, {{"app", "sev_sender"}, {"cores", {1}}}}),
                        {&wfe_waiter, &sev_sender}, {"platform.cpu.event_stream_ns=100000"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  expect_consistent(t);
  const Ps end = end_ps();
  const CpuCore& c0 = t.platform->cpus().core(0);
  const uint64_t slept = t.counter("cpus.cpu0.wfe_sleep_ps");
  EXPECT_GE(t.counter("cpus.cpu0.wfe"), 3u);  // two ticks and the SEV
  EXPECT_EQ(c0.idle_ps(end), slept + (end - c0.finish_time()));
  // Awake only to load the flag after each wake-up.
  EXPECT_GT(c0.busy_ps(end), 0u);
  EXPECT_LT(c0.busy_ps(end), kUs);
  EXPECT_GT(c0.idle_ps(end), 249 * kUs);
}

// A sleep or a program still under way when the run stops counts up to the end.
int spin_forever_main(void) {
  for (;;) hal_cycles(100);
}
int wfe_forever_main(void) {
  hal_cycles(2000);  // 1 us
  for (;;) hal_wfe();
}
const hal_app spin_forever = {"spin_forever", "computes forever", spin_forever_main, nullptr};
const hal_app wfe_forever = {"wfe_forever", "sleeps in WFE forever", wfe_forever_main, nullptr};

TEST(CpuAccounting, TimeLimitCountsRunningAsBusyAndSleepingAsIdle) {
  const TestRun t = run(scenario({{{"app", "spin_forever"}, {"cores", {0}}}, {{"app", "wfe_forever"}, {"cores", {1}}}},
                                 20.0),
                        {&spin_forever, &wfe_forever}, {"platform.cpu.event_stream_ns=0"});
  ASSERT_EQ(t.result.status, RunResult::Status::kTimeLimit) << t.result.message;
  expect_consistent(t);
  const Ps end = end_ps();
  EXPECT_EQ(end, 20 * kUs);
  EXPECT_EQ(t.platform->cpus().core(0).busy_ps(end), end);
  EXPECT_DOUBLE_EQ(value(t, "cpus.cpu0.utilisation"), 1.0);
  // Its only WFE never returned: the counter has nothing, the accounting has it.
  EXPECT_EQ(t.counter("cpus.cpu1.wfe_sleep_ps"), 0u);
  EXPECT_EQ(t.platform->cpus().core(1).busy_ps(end), kUs);
  EXPECT_EQ(t.platform->cpus().core(1).idle_ps(end), 19 * kUs);
}

int wfi_forever_main(void) {
  hal_cycles(2000);  // 1 us
  hal_wfi();
  return 0;
}
const hal_app wfi_forever = {"wfi_forever", "WFI with nothing to wake it", wfi_forever_main, nullptr};

TEST(CpuAccounting, DeadlockedSleeperIsIdleToTheEnd) {
  const TestRun t = run(scenario({{{"app", "wfi_forever"}, {"cores", {0}}}}), {&wfi_forever});
  ASSERT_EQ(t.result.status, RunResult::Status::kDeadlock) << t.result.message;
  expect_consistent(t);
  const Ps end = end_ps();
  EXPECT_GT(end, kUs);
  EXPECT_EQ(t.platform->cpus().core(0).busy_ps(end), kUs);
  EXPECT_EQ(t.platform->cpus().core(0).idle_ps(end), end - kUs);
}

TEST(CpuAccounting, SummaryListsEveryCoreWithBusyAndUtilisation) {
  TestRun t = run(scenario({{{"app", "compute"}, {"cores", {0}}}, {{"app", "longer"}, {"cores", {1}}}}),
                  {&compute, &longer}, {"platform.cpu.frequency_mhz=2000"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  std::ostringstream os;
  print_summary(os, *t.platform, t.result);
  const std::string text = os.str();
  std::istringstream in(text.substr(text.find("\ncores\n") + 7));
  std::vector<std::string> table;
  for (std::string line; std::getline(in, line) && !line.empty();) table.push_back(line);
  ASSERT_EQ(table.size(), 5u) << text;  // header and all four cores
  EXPECT_EQ(table[0], "  cpu   app                    exit    finished at           busy   util");
  EXPECT_EQ(table[1], "  0     compute                   0      10.000 us      10.000 us  20.0%");
  EXPECT_EQ(table[2], "  1     longer                    0      50.000 us      50.000 us 100.0%");
  EXPECT_EQ(table[3], "  2     -                         -              -         0.0 ns   0.0%");
  EXPECT_EQ(table[4], "  3     -                         -              -         0.0 ns   0.0%");
}

}  // namespace
}  // namespace smmu_vp::test

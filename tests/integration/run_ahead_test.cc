// A core synchronises with the kernel before every atomic, shared load and
// barrier, unless no other process can run before the core's time: then it
// runs on without a SystemC wait (CpuCore::sync_memory). Either way the
// simulated time is the same; only the kernel's work differs, which
// sc_delta_count() shows (each wait the core resumes from is one more
// delta cycle).
#include <systemc>

#include <gtest/gtest.h>

#include "hal/hal.h"
#include "platform_fixture.h"

namespace smmu_vp::test {
namespace {

constexpr int kAccesses = 2000;
alignas(64) volatile uint32_t g_counter;
alignas(64) volatile uint32_t g_stop;
uint64_t g_loop_ps;

int atomics_main(void) {
  hal_fetch_add32(&g_counter, 1);  // the line is now this core's
  const uint64_t t0 = hal_now_ps();
  for (int i = 0; i < kAccesses; ++i) {
    hal_fetch_add32(&g_counter, 1);
    hal_barrier(HAL_BARRIER_DMB);
  }
  g_loop_ps = hal_now_ps() - t0;
  hal_store32(&g_stop, 1);
  return 0;
}
const hal_app atomics_app = {"atomics", "atomics and barriers on a line the core owns", atomics_main, nullptr};

// Keeps the kernel busy: a shared load (a synchronisation) about every
// nanosecond until told to stop.
int ticker_main(void) {
  while (!hal_load32(&g_stop)) hal_delay_ns(1);
  return 0;
}
const hal_app ticker_app = {"ticker", "waits 1 ns at a time", ticker_main, nullptr};

uint64_t expected_loop_ps(const TestRun& t) {
  const CpuConfig& c = t.platform->config().cpu;
  const Ps cycle = ns_to_ps(1000.0 / c.frequency_mhz);
  return kAccesses * (c.atomic_cycles + c.dmb_cycles) * cycle;
}

TEST(RunAhead, AloneCoreMakesNoWaitPerAccess) {
  const TestRun t = run(scenario({{{"app", "atomics"}, {"cores", {0}}}}), {&atomics_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(g_loop_ps, expected_loop_ps(t));
  EXPECT_EQ(t.counter("cpus.cpu0.atomics"), static_cast<uint64_t>(kAccesses + 2));
  // 4000 synchronisations; a wait at each would be 4000 delta cycles. Left:
  // the quantum boundaries (about 45 us of loop / 500 ns) and the start.
  EXPECT_LT(sc_core::sc_delta_count(), static_cast<uint64_t>(kAccesses / 4));
}

// Core 1 synchronises at each of its loads, about every nanosecond, so core 0
// mostly cannot run ahead; its loop takes the same simulated time.
TEST(RunAhead, CoreBesideABusyOneTakesTheSameTime) {
  const TestRun t = run(scenario({{{"app", "atomics"}, {"cores", {0}}}, {{"app", "ticker"}, {"cores", {1}}}}),
                        {&atomics_app, &ticker_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(g_loop_ps, expected_loop_ps(t));
  EXPECT_GT(t.counter("cpus.cpu1.atomics"), static_cast<uint64_t>(kAccesses));
}

// A bus write to memory while another core sleeps in a poll of it: the
// poller wakes at the writer's time, not at the kernel's, which the writer's
// run ahead left behind (CpuCore::catch_up). The writer's atomics before
// the write are made alone (the poll sleeps until a change), so none waits.
constexpr int kWriterAtomics = 30;
volatile uint32_t* volatile g_word;
phys_addr_t g_word_pa;
uint64_t g_poll_end_ps, g_last_atomic_ps;

int writer_main(void) {
  g_word = static_cast<volatile uint32_t*>(hal_dma_alloc(64, 64, &g_word_pa));
  if (!g_word) return 1;
  *g_word = 0;
  hal_fetch_add32(&g_counter, 1);
  hal_delay_ns(2000);  // the poller is asleep by then
  const uint64_t t0 = hal_now_ps();
  for (int i = 0; i < kWriterAtomics; ++i) hal_fetch_add32(&g_counter, 1);
  const CpuConfig cpu;
  g_last_atomic_ps = t0 + (kWriterAtomics - 1) * cpu.atomic_cycles * ns_to_ps(1000.0 / cpu.frequency_mhz);
  hal_write32(g_word_pa, 1);
  return 0;
}
const hal_app writer_app = {"writer", "atomics alone, then a bus write to a polled word", writer_main, nullptr};

int poller_main(void) {
  hal_delay_ns(1000);
  unsigned polls = 0;
  hal_poll32(g_word, ~0u, 1, HAL_POLL_EQ, 0, &polls);
  g_poll_end_ps = hal_now_ps();
  return 0;
}
const hal_app poller_app = {"poller", "polls a word until a bus write sets it", poller_main, nullptr};

TEST(RunAhead, BusWriteWakesAPollerAtTheWritersTime) {
  const TestRun t = run(scenario({{{"app", "writer"}, {"cores", {0}}}, {{"app", "poller"}, {"cores", {1}}}}),
                        {&writer_app, &poller_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  ASSERT_GT(t.counter("cpus.cpu1.poll_skipped_loads"), 0u);  // it slept
  EXPECT_GE(g_poll_end_ps, g_last_atomic_ps);
  EXPECT_LT(g_poll_end_ps, g_last_atomic_ps + 200000);
}

// An interrupt taken in the synchronisation of SEV: the handler's atomics
// are made alone (the other core sleeps in WFE), so none of them waits; the
// SEV after the handler must still wake the sleeper at the handler's last
// synchronisation, not at the kernel's time before the handler
// (take_interrupts catches up).
constexpr int kHandlerAtomics = 30;
constexpr unsigned kIrqLine = 210;
alignas(64) volatile uint32_t g_go;
uint64_t g_handler_last_sync_ps, g_woke_ps;

void on_irq(unsigned, void*) {
  const uint64_t t0 = hal_now_ps();
  for (int i = 0; i < kHandlerAtomics; ++i) hal_fetch_add32(&g_counter, 1);
  const CpuConfig cpu;
  g_handler_last_sync_ps = t0 + kHandlerAtomics * cpu.atomic_cycles * ns_to_ps(1000.0 / cpu.frequency_mhz);
  hal_store32(&g_go, 1);  // its synchronisation is the handler's last
}

int sev_main(void) {
  if (hal_irq_register(kIrqLine, on_irq, nullptr) != 0) return 1;
  hal_fetch_add32(&g_counter, 1);
  hal_delay_ns(2000);                            // the sleeper is in WFE by then
  hal_write32(hal_msi_doorbell(), kIrqLine);     // to this core
  hal_delay_ns(1000);                            // pending by then, not yet taken
  hal_sev();                                     // taken in its synchronisation
  return 0;
}
const hal_app sev_app = {"sev_after_irq", "takes an interrupt in SEV's synchronisation", sev_main, nullptr};

int sleeper_main(void) {
  while (!hal_load32(&g_go)) hal_wfe();
  g_woke_ps = hal_now_ps();
  return 0;
}
const hal_app sleeper_app = {"sleeper", "sleeps in WFE until the go flag", sleeper_main, nullptr};

TEST(RunAhead, SevAfterAHandlerWakesAtTheHandlersTime) {
  // A quantum longer than the run: no synchronisation but SEV's takes the interrupt.
  const TestRun t = run(scenario({{{"app", "sev_after_irq"}, {"cores", {0}}}, {{"app", "sleeper"}, {"cores", {1}}}}),
                        {&sev_app, &sleeper_app}, {"platform.cpu.quantum_ns=100000"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  ASSERT_EQ(t.counter("cpus.cpu0.irqs_taken"), 1u);
  EXPECT_GE(g_woke_ps, g_handler_last_sync_ps);
  EXPECT_LT(g_woke_ps, g_handler_last_sync_ps + 100000);
}

// Atomics alone keep the kernel within a quantum of the core: its time
// moves on (watchdog, progress) although no synchronisation needs a wait.
uint64_t g_kernel_end_ps, g_core_end_ps;

int long_atomics_main(void) {
  for (int i = 0; i < 20 * kAccesses; ++i) hal_fetch_add32(&g_counter, 1);
  g_kernel_end_ps = sc_core::sc_time_stamp().value() / kRanksPerPs;
  g_core_end_ps = hal_now_ps();
  return 0;
}
const hal_app long_atomics_app = {"long_atomics", "a long loop of atomics alone", long_atomics_main, nullptr};

TEST(RunAhead, KernelStaysWithinAQuantumOfTheCore) {
  const TestRun t = run(scenario({{{"app", "long_atomics"}, {"cores", {0}}}}), {&long_atomics_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  ASSERT_GE(g_core_end_ps, 400'000'000u);  // 40000 atomics of 10 ns
  EXPECT_LE(g_core_end_ps - g_kernel_end_ps, ns_to_ps(t.platform->config().cpu.quantum_ns));
}

}  // namespace
}  // namespace smmu_vp::test

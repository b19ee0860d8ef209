// hal_poll32/64 against the loop it stands for. Two cores poll side by side
// from the same time with the same history: core 0 through hal_poll*, core 1
// through the plain loop of hal_load* and hal_cpu_relax. Whatever changes the
// word (another core's stores and atomics, a device's DMA, an interrupt
// handler), both must see it at the same simulated time, return the same
// value after the same number of polls, and finish at the same time; only
// core 0 may skip loads (cpus.cpu0.poll_skipped_loads). The writers' times
// in the first tests are off the pollers' grid of loads (7 ns apart here);
// PollOnTheGrid moves them over a whole grid period, so that one write (or
// interrupt) ties with a load at the same picosecond: the same-time order
// (common/tlm_time.h) decides it, the same way for both.
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "drivers/dma/dma_engine.h"
#include "hal/hal.h"
#include "platform_fixture.h"

namespace smmu_vp::test {
namespace {

enum class Mode { kCoreWrites, kDma, kInterrupt, kMaxPolls, kSatisfied, kNeverWritten };
Mode g_mode;
int64_t g_shift_ns = 0;  // added to the writers' times (PollOnTheGrid)

struct Result {
  uint64_t start_ps = 0, end_ps = 0, value = 0, irq_ps = 0;
  unsigned polls = 0;
};
Result g_res[2];

constexpr uint64_t kStartNs = 2000;  // when the pollers start
alignas(64) volatile uint32_t g_line[16];         // [0] polled, [5] a neighbour in the same line
alignas(64) volatile uint32_t g_flag[2][16];      // one line per poller, set by its handler
alignas(64) volatile uint64_t g_wide[8];
volatile uint32_t* volatile g_dram_word;          // in DRAM, for the DMA

uint32_t poll32(bool primitive, const volatile uint32_t* p, uint32_t value, hal_poll_until until, unsigned max,
                unsigned* polls) {
  if (primitive) return hal_poll32(p, ~0u, value, until, max, polls);
  uint32_t v = 0;
  unsigned n = 0;
  while (max == 0 || n < max) {
    v = hal_load32(p);
    ++n;
    if ((v == value) == (until == HAL_POLL_EQ)) break;
    hal_cpu_relax();
  }
  *polls = n;
  return v;
}

uint64_t poll64(bool primitive, const volatile uint64_t* p, uint64_t mask, uint64_t value, hal_poll_until until,
                unsigned max, unsigned* polls) {
  if (primitive) return hal_poll64(p, mask, value, until, max, polls);
  uint64_t v = 0;
  unsigned n = 0;
  while (max == 0 || n < max) {
    v = hal_load64(p);
    ++n;
    if (((v & mask) == value) == (until == HAL_POLL_EQ)) break;
    hal_cpu_relax();
  }
  *polls = n;
  return v;
}

// Waits until simulated time `ns` (absolute), whatever this core did before.
void at_ns(uint64_t ns) {
  const uint64_t now = hal_now_ns();
  if (ns > now) hal_delay_ns(ns - now);
}

void on_irq(unsigned, void* ctx) {
  const unsigned who = static_cast<unsigned>(reinterpret_cast<uintptr_t>(ctx));
  g_res[who].irq_ps = hal_now_ps();
  g_flag[who][0] = 1;  // a plain store by a handler on the polling core
}

int poller(unsigned who) {
  const bool primitive = who == 0;
  Result& r = g_res[who];
  if (g_mode == Mode::kInterrupt && hal_irq_register(200 + who, on_irq, reinterpret_cast<void*>(uintptr_t{who})) != 0)
    return 1;
  hal_delay_ns(kStartNs);
  r.start_ps = hal_now_ps();
  switch (g_mode) {
    case Mode::kCoreWrites:
    case Mode::kNeverWritten: r.value = poll32(primitive, &g_line[0], 7, HAL_POLL_EQ, 0, &r.polls); break;
    case Mode::kDma: r.value = poll32(primitive, g_dram_word, 9, HAL_POLL_EQ, 0, &r.polls); break;
    case Mode::kInterrupt: r.value = poll32(primitive, &g_flag[who][0], 1, HAL_POLL_EQ, 0, &r.polls); break;
    case Mode::kMaxPolls: {
      unsigned n64 = 0;
      r.value = poll32(primitive, &g_line[0], 1, HAL_POLL_EQ, 1000, &r.polls);
      r.value += poll64(primitive, &g_wide[0], 0xff00, 0x1200, HAL_POLL_NE, 333, &n64);
      r.polls += n64;
      break;
    }
    case Mode::kSatisfied: {
      unsigned n64 = 0;
      r.value = poll32(primitive, &g_line[0], 3, HAL_POLL_EQ, 0, &r.polls);
      r.value += poll64(primitive, &g_wide[0], 0xff00, 0x1200, HAL_POLL_EQ, 5, &n64);
      r.polls += n64;
      break;
    }
  }
  r.end_ps = hal_now_ps();
  return 0;
}
int poller0_main(void) { return poller(0); }
int poller1_main(void) { return poller(1); }

// Core 2: everything before the pollers start, and the core-side writes.
int writer_main(void) {
  hal_store32(&g_line[0], g_mode == Mode::kSatisfied ? 3 : 0);  // the pollers' first loads move the line
  hal_store64(&g_wide[0], 0x1234);
  phys_addr_t word_pa = 0, src_pa = 0;
  auto* word = static_cast<volatile uint32_t*>(hal_dma_alloc(64, 64, &word_pa));
  auto* src = static_cast<uint32_t*>(hal_dma_alloc(64, 64, &src_pa));
  if (!word || !src) return 1;
  hal_store32(word, 1);
  *src = 9;
  g_dram_word = word;
  switch (g_mode) {
    case Mode::kCoreWrites:
      at_ns(kStartNs + 500);
      hal_fetch_add32(&g_line[5], 1);  // same line, other word: the next load pays the transfer
      at_ns(kStartNs + 801);
      hal_store32(&g_line[0], 5);  // a change that does not end the wait
      at_ns(kStartNs + 1202);
      (void)hal_cmpxchg32(&g_line[0], 4, 6);  // fails, but writes the line
      at_ns(kStartNs + 1405 + g_shift_ns);
      (void)hal_xchg32(&g_line[0], 7);
      break;
    case Mode::kDma: {
      struct dma_engine dma;
      if (dma_engine_probe(&dma, "dma0") != 0) return 1;
      at_ns(kStartNs + 1002 + g_shift_ns);  // + 1001 writes at 3069 ns, on the pollers' grid: a tie
      dma_engine_start(&dma, 0, src_pa, word_pa, 4, DMA_COMPLETE_POLL);
      dma_engine_wait_poll(&dma, 0);
      break;
    }
    case Mode::kInterrupt:
      at_ns(kStartNs + 1003 + g_shift_ns);
      hal_write32(hal_msi_doorbell(), 200);
      break;
    default: break;
  }
  return 0;
}

// Core 3: the second doorbell, at the same time as core 2's.
int writer2_main(void) {
  if (g_mode != Mode::kInterrupt) return 0;
  at_ns(kStartNs + 1003 + g_shift_ns);
  hal_write32(hal_msi_doorbell(), 201);
  return 0;
}

const hal_app poller0 = {"poller0", "hal_poll32", poller0_main, nullptr};
const hal_app poller1 = {"poller1", "the plain loop", poller1_main, nullptr};
const hal_app writer = {"writer", "writes the polled word", writer_main, nullptr};
const hal_app writer2 = {"writer2", "a second doorbell", writer2_main, nullptr};

// Polls sleep (platform.cpu.poll_sleep, the default; said here all the same) unless a test says otherwise.
TestRun run_mode(Mode m, std::vector<std::string> overrides = {"platform.cpu.poll_sleep=true"}) {
  g_mode = m;
  return run(scenario({{{"app", "poller0"}, {"cores", {0}}},
                       {{"app", "poller1"}, {"cores", {1}}},
                       {{"app", "writer"}, {"cores", {2}}},
                       {{"app", "writer2"}, {"cores", {3}}}}),
             {&poller0, &poller1, &writer, &writer2}, std::move(overrides));
}

void expect_same(const TestRun& t) {
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(g_res[0].start_ps, g_res[1].start_ps);
  EXPECT_EQ(g_res[0].end_ps, g_res[1].end_ps);
  EXPECT_EQ(g_res[0].value, g_res[1].value);
  EXPECT_EQ(g_res[0].polls, g_res[1].polls);
  EXPECT_EQ(g_res[0].irq_ps, g_res[1].irq_ps);
  // Each poll is one shared access in the statistics either way.
  EXPECT_EQ(t.counter("cpus.cpu0.atomics"), t.counter("cpus.cpu1.atomics"));
  EXPECT_EQ(t.counter("cpus.cpu0.cacheline_transfers"), t.counter("cpus.cpu1.cacheline_transfers"));
  EXPECT_EQ(t.counter("cpus.cpu1.poll_skipped_loads"), 0u);
}

TEST(Poll, CoreStoresAndAtomicsWakeItAtTheLoopsTime) {
  const TestRun t = run_mode(Mode::kCoreWrites);
  expect_same(t);
  EXPECT_EQ(g_res[0].value, 7u);
  EXPECT_GT(g_res[0].polls, 100u);
  // Most loads were skipped: only the first, the one after each write and
  // the one that found 7 were made.
  EXPECT_GT(t.counter("cpus.cpu0.poll_skipped_loads"), g_res[0].polls - 20);
}

TEST(Poll, DmaWriteWakesIt) {
  const TestRun t = run_mode(Mode::kDma);
  expect_same(t);
  EXPECT_EQ(g_res[0].value, 9u);
  EXPECT_GT(g_res[0].polls, 100u);
  EXPECT_GT(t.counter("cpus.cpu0.poll_skipped_loads"), g_res[0].polls - 10);
}

TEST(Poll, InterruptRunsAtTheLoopsGridPoint) {
  const TestRun t = run_mode(Mode::kInterrupt);
  expect_same(t);
  EXPECT_EQ(g_res[0].value, 1u);
  EXPECT_GT(g_res[0].irq_ps, g_res[0].start_ps);
  EXPECT_EQ(t.counter("cpus.cpu0.irqs_taken"), 1u);
  EXPECT_EQ(t.counter("cpus.cpu1.irqs_taken"), 1u);
  EXPECT_GT(t.counter("cpus.cpu0.poll_skipped_loads"), g_res[0].polls - 10);
}

TEST(Poll, MaxPollsReturnsTheLastValue) {
  const TestRun t = run_mode(Mode::kMaxPolls);
  expect_same(t);
  EXPECT_EQ(g_res[0].polls, 1000u + 333u);
  EXPECT_EQ(g_res[0].value, 0u + 0x1234u);
  EXPECT_EQ(t.counter("cpus.cpu0.poll_skipped_loads"), 1000u + 333u - 4u);  // all but the first and last of each
}

TEST(Poll, ValueSatisfiedOnEntryIsOneLoad) {
  const TestRun t = run_mode(Mode::kSatisfied);
  expect_same(t);
  EXPECT_EQ(g_res[0].polls, 2u);
  EXPECT_EQ(g_res[0].value, 3u + 0x1234u);
  EXPECT_EQ(t.counter("cpus.cpu0.poll_skipped_loads"), 0u);
}

TEST(Poll, PollSleepOffRunsThePlainLoop) {
  const TestRun t = run_mode(Mode::kCoreWrites, {"platform.cpu.poll_sleep=false"});
  expect_same(t);
  EXPECT_EQ(g_res[0].value, 7u);
  // Not even registered: a run's stats are those it had before hal_poll.
  EXPECT_EQ(t.stats().find_counter("cpus.cpu0.poll_skipped_loads"), nullptr);
}

// The change moved over one grid period (7 ns) in 1 ns steps: one of them
// lands on a load's picosecond (the DMA write at +1001 ns does). The writer
// (core 2), the DMA engine and the interrupt controller rank differently
// against the pollers (cores 0 and 1): later, later and earlier.
class PollOnTheGrid : public ::testing::TestWithParam<std::tuple<Mode, int>> {};

TEST_P(PollOnTheGrid, ATieWithALoadResolvesAsInTheLoop) {
  g_shift_ns = std::get<1>(GetParam());
  const TestRun t = run_mode(std::get<0>(GetParam()));
  expect_same(t);
}

std::string shifted_name(const ::testing::TestParamInfo<std::tuple<Mode, int>>& info) {
  static const char* const kModes[] = {"CoreWrites", "Dma", "Interrupt"};
  const int shift = std::get<1>(info.param);
  return std::string(kModes[static_cast<int>(std::get<0>(info.param))]) + "_" +
         (shift < 0 ? "minus1" : std::to_string(shift)) + "ns";
}

INSTANTIATE_TEST_SUITE_P(Shifted, PollOnTheGrid,
                         ::testing::Combine(::testing::Values(Mode::kCoreWrites, Mode::kDma, Mode::kInterrupt),
                                            ::testing::Range(-1, 7)),
                         shifted_name);

// Polls that nothing ends: the loop spins until the time limit, and so must
// the sleeping poll (not a deadlock), with every load the loop made counted.
TEST(Poll, UnboundedPollOfAWordNeverWrittenRunsToTheLimit) {
  g_mode = Mode::kNeverWritten;
  const TestRun t = run(scenario({{{"app", "poller0"}, {"cores", {0}}},
                                  {{"app", "poller1"}, {"cores", {1}}},
                                  {{"app", "writer"}, {"cores", {2}}}},
                                 20.0),
                        {&poller0, &poller1, &writer});
  EXPECT_EQ(t.result.status, RunResult::Status::kTimeLimit) << t.result.message;
  EXPECT_GT(t.counter("cpus.cpu1.atomics"), 2000u);
  EXPECT_EQ(t.counter("cpus.cpu0.atomics"), t.counter("cpus.cpu1.atomics"));
}

TEST(Poll, UnboundedSleepingPollAloneIsNoDeadlock) {
  g_mode = Mode::kNeverWritten;
  const TestRun t = run(scenario({{{"app", "poller0"}, {"cores", {0}}}, {{"app", "writer"}, {"cores", {2}}}}, 20.0),
                        {&poller0, &writer});
  EXPECT_EQ(t.result.status, RunResult::Status::kTimeLimit) << t.result.message;
  // (20 us - 2 us) / 7 ns loads, all but the first skipped.
  EXPECT_GT(t.counter("cpus.cpu0.poll_skipped_loads"), 2500u);
}

}  // namespace
}  // namespace smmu_vp::test

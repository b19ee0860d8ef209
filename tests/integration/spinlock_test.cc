// sw/lib's ticket spinlock on the simulated cores: mutual exclusion, FIFO
// serialisation, and contention that costs simulated time.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "hal/hal.h"
#include "lib/spinlock.h"
#include "platform_fixture.h"

namespace smmu_vp::test {
namespace {

constexpr unsigned kCores = 4;
constexpr unsigned kIterations = 200;
constexpr uint64_t kHoldCycles = 400;

sw_spinlock g_lock = SW_SPINLOCK_INIT;
volatile uint32_t g_inside;
uint32_t g_max_inside;
uint64_t g_shared_counter;
std::vector<std::pair<uint64_t, uint64_t>> g_holds;  // [acquired, released) in ps

// Takes `lock` kIterations times, recording each hold; a second core inside
// at the same time would show in g_max_inside and in the counter.
void contend(sw_spinlock* lock) {
  for (unsigned i = 0; i < kIterations; ++i) {
    sw_spin_lock(lock);
    const uint64_t t0 = hal_now_ps();
    const uint32_t inside = hal_fetch_add32(&g_inside, 1) + 1;
    g_max_inside = std::max(g_max_inside, inside);
    const uint64_t before = g_shared_counter;
    hal_cycles(kHoldCycles);  // a window in which another core could interleave
    g_shared_counter = before + 1;
    hal_fetch_add32(&g_inside, static_cast<uint32_t>(-1));
    g_holds.emplace_back(t0, hal_now_ps());
    sw_spin_unlock(lock);
  }
}

// What contend() on every core must leave: one holder at a time, no
// increment lost, no two holds overlapping.
void expect_serialised() {
  EXPECT_EQ(g_max_inside, 1u);
  EXPECT_EQ(g_shared_counter, uint64_t{kCores} * kIterations);
  ASSERT_EQ(g_holds.size(), size_t{kCores} * kIterations);
  std::sort(g_holds.begin(), g_holds.end());
  for (size_t i = 1; i < g_holds.size(); ++i)
    ASSERT_LE(g_holds[i - 1].second, g_holds[i].first) << "critical sections overlap at " << i;
}

int contender_main(void) {
  contend(&g_lock);
  return 0;
}
const hal_app contender = {"contender", "hammers one spinlock", contender_main, nullptr};

TEST(Spinlock, ContendedLockSerialisesAndCostsTime) {
  const TestRun t = run(scenario({{{"app", "contender"}, {"cores", {0, 1, 2, 3}}}}), {&contender});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  expect_serialised();
  // Serialised: the run lasts at least the sum of all hold times.
  const double cycle_ns = 1000.0 / t.platform->config().cpu.frequency_mhz;
  EXPECT_GE(t.result.sim_ns, kCores * kIterations * kHoldCycles * cycle_ns);
  // The lock word moved between cores.
  uint64_t transfers = 0;
  for (unsigned c = 0; c < kCores; ++c) transfers += t.counter("cpus.cpu" + std::to_string(c) + ".cacheline_transfers");
  EXPECT_GT(transfers, uint64_t{kIterations});
}

TEST(Spinlock, WaitGrowsWithContenders) {
  // The lock_contend app on 1 core and on 4 cores: waiting appears only with company.
  const TestRun t = run(scenario({{{"app", "lock_contend"}, {"cores", {0, 1, 2, 3}}, {"params", {{"iterations", 300}}}}}), {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  const Histogram* wait = t.histogram("sw.lock_contend.lock_wait_ns");
  const Histogram* hold = t.histogram("sw.lock_contend.lock_hold_ns");
  ASSERT_TRUE(wait && hold);
  EXPECT_EQ(wait->count(), 1200u);
  // With four cores and hold < think * 3, a core usually finds the lock taken.
  EXPECT_GT(wait->percentile(90), hold->percentile(50) * 0.5);
}


// cpu.line_queueing: a line serves one transfer at a time, so the atomics of
// one contended line serialise at the rate of its transfers; without it they
// overlap and the same work takes about one transfer per increment per core.
int g_hammer_iterations = 100;
volatile uint32_t g_hammered;
int hammer_main(void) {
  for (int i = 0; i < g_hammer_iterations; ++i) hal_fetch_add32(&g_hammered, 1);
  return 0;
}
const hal_app hammer = {"hammer", "atomic increments of one word", hammer_main, nullptr};

// One platform per test process (SystemC elaborates once): each run alone.
double run_hammer(bool queueing, double handoff_share = 1.0) {
  g_hammered = 0;
  nlohmann::json s = scenario({{{"app", "hammer"}, {"cores", {0, 1, 2, 3}}}});
  s["platform"]["cpu"]["line_queueing"] = queueing;
  s["platform"]["cpu"]["queued_handoff_share"] = handoff_share;
  s["platform"]["cpu"]["cacheline_transfer_ns"] = 50;
  const TestRun t = run(s, {&hammer});
  EXPECT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(g_hammered, 4u * 100u);
  return t.result.sim_ns;
}

TEST(LineQueueing, AtomicsOfOneLineSerialiseAtTheTransferRate) {
  // 400 increments, nearly every one a transfer of 50 ns, one after another.
  EXPECT_GE(run_hammer(true), 300 * 50.0);
}

// cpu.queued_handoff_share: a core already waiting for the line pays only
// that share of the transfer when the line comes on to it (its request is
// already at the home node), so the increments still serialise, each
// hand-off at a fifth of the transfer plus the atomic's 10 ns.
TEST(LineQueueing, AQueuedCoreTakesTheLineAtItsHandOffShare) {
  const double ns = run_hammer(true, 0.2);
  EXPECT_GE(ns, 300 * (0.2 * 50.0 + 10.0));
  EXPECT_LT(ns, 300 * 50.0 * 0.6);
}

TEST(LineQueueing, WithoutItTransfersOfOneLineOverlap) {
  // Each core's 100 increments take about 100 transfers, the cores side by side.
  EXPECT_LT(run_hammer(false), 150 * 50.0);
}

// cpu.line_retry_ns: a busy line goes to the cores waiting for it in no
// fixed order, each access happening when its core gets the line. The
// increments still take the line one core at a time, and the core that has
// it queues for its next increment behind the cores already waiting (their
// requests are at the home node first), so most increments pay a transfer
// (315 of 400 here, the test's "transfers" property).
TEST(LineRetry, AtomicsOfOneLineStillSerialise) {
  g_hammered = 0;
  nlohmann::json s = scenario({{{"app", "hammer"}, {"cores", {0, 1, 2, 3}}}});
  s["platform"]["cpu"]["line_queueing"] = true;
  s["platform"]["cpu"]["line_retry_ns"] = 10;
  s["platform"]["cpu"]["cacheline_transfer_ns"] = 50;
  const TestRun t = run(s, {&hammer});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(g_hammered, 400u);
  uint64_t transfers = 0;
  for (int c = 0; c < 4; ++c) transfers += t.counter("cpus.cpu" + std::to_string(c) + ".cacheline_transfers");
  ::testing::Test::RecordProperty("transfers", std::to_string(transfers));
  EXPECT_GT(transfers, 250u);
  EXPECT_GE(t.result.sim_ns, transfers * 50.0);
  EXPECT_GT(t.counter("cpus.cpu1.line_retries"), 0u);
}

// Eight cores increment one word with a cmpxchg loop (each failed attempt
// retried with the value it returned). Behind a first-come-first-served
// line every success is followed by a failed attempt of each other waiting
// core; granted in no fixed order, a core that has seen the latest value
// comes up sooner, so fewer attempts fail.
constexpr unsigned kCasCores = 8, kCasIncrements = 100;
volatile uint64_t g_cas_word;
uint64_t g_cas_attempts;
int cas_main(void) {
  for (unsigned i = 0; i < kCasIncrements; ++i) {
    uint64_t v = hal_load64(&g_cas_word);
    for (;;) {
      ++g_cas_attempts;
      const uint64_t old = hal_cmpxchg64(&g_cas_word, v, v + 1);
      if (old == v) break;
      v = old;
    }
  }
  return 0;
}
const hal_app cas_loop = {"cas_loop", "cmpxchg increments of one word", cas_main, nullptr};

struct CasRun {
  double attempts_per_success;
  double sim_ns;
  uint64_t retried_grants;
};

CasRun run_cas_loop(unsigned cores, double retry_ns, double grant_ns = 0) {
  g_cas_word = 0;
  g_cas_attempts = 0;
  nlohmann::json list = nlohmann::json::array();
  for (unsigned c = 0; c < cores; ++c) list.push_back(c);
  nlohmann::json s = scenario({{{"app", "cas_loop"}, {"cores", list}}});
  s["platform"]["cpu"]["count"] = cores;
  s["platform"]["cpu"]["line_queueing"] = true;
  s["platform"]["cpu"]["line_retry_ns"] = retry_ns;
  s["platform"]["cpu"]["line_retry_grant_ns"] = grant_ns;
  const TestRun t = run(s, {&cas_loop});
  EXPECT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(g_cas_word, uint64_t{cores} * kCasIncrements) << "an increment was lost";
  const double rate = static_cast<double>(g_cas_attempts) / (cores * kCasIncrements);
  uint64_t retried = 0;
  if (retry_ns > 0)
    for (unsigned c = 0; c < cores; ++c) retried += t.counter("cpus.cpu" + std::to_string(c) + ".line_retried_grants");
  ::testing::Test::RecordProperty("attempts_per_success", std::to_string(rate));
  ::testing::Test::RecordProperty("sim_ns", std::to_string(t.result.sim_ns));
  ::testing::Test::RecordProperty("retried_grants", std::to_string(retried));
  return {rate, static_cast<double>(t.result.sim_ns), retried};
}

double cas_attempts_per_success(double retry_ns) { return run_cas_loop(kCasCores, retry_ns).attempts_per_success; }

TEST(LineRetry, BehindAFirstComeFirstServedLineEveryWaiterFailsOncePerSuccess) {
  const double rate = cas_attempts_per_success(0);
  EXPECT_GT(rate, kCasCores - 2.0) << rate;
}

TEST(LineRetry, GrantedInNoFixedOrderACmpxchgLoopFailsLess) {
  const double rate = cas_attempts_per_success(10);
  EXPECT_GT(rate, 1.5) << rate;
  EXPECT_LT(rate, kCasCores - 3.0) << rate;
}

// cpu.line_retry_grant_ns: the home node keeps a request for a busy line
// only while no other waits and retries the rest, and only a retried
// request pays for its grant. Two cores passing a line back and forth never
// have a request retried, so a grant cost changes nothing (the sourced
// ping-pong latencies stay as they are); eight cores contending for it pay
// it on most hand-offs. (One run per test: one elaboration per process.)
constexpr double kCasGrantNs = 200;
// Two cores, 100 increments each, on the base profile's 40 ns transfers and
// 20-cycle atomics at 2 GHz: about 50 ns a success, with no grant cost in it.
TEST(LineRetry, TwoCoresPassingALineNeverHaveARequestRetried) {
  const CasRun r = run_cas_loop(2, 10, kCasGrantNs);
  EXPECT_EQ(r.retried_grants, 0u);
  EXPECT_LT(r.sim_ns, 2 * kCasIncrements * 60.0) << r.sim_ns;
}

// Eight cores: most grants go to retried requests, and each pays the grant
// cost; the line's time then is mostly those grants.
TEST(LineRetry, ManyCoresContendingForALinePayForTheirRetriedRequests) {
  const CasRun r = run_cas_loop(kCasCores, 10, kCasGrantNs);
  const double attempts = r.attempts_per_success * kCasCores * kCasIncrements;
  EXPECT_GT(static_cast<double>(r.retried_grants), 0.5 * attempts) << r.retried_grants;
  EXPECT_GT(r.sim_ns, static_cast<double>(r.retried_grants) * kCasGrantNs) << r.sim_ns;
  EXPECT_GT(r.attempts_per_success, 1.5);
}

// cpu.far_atomics: an atomic is done at the line's home node, so one core
// incrementing a word nobody else touches pays a transfer from the home on
// every increment (the line never stays in its cache), where an atomic that
// takes the line into the cache pays for none. Its stores to another word
// stay near either way: the first takes the line, the rest hit. Base
// profile: one cluster, 40 ns transfers, 20-cycle atomics at 2 GHz.
volatile uint32_t g_stored __attribute__((aligned(64)));
int increments_then_stores_main(void) {
  for (int i = 0; i < 100; ++i) hal_fetch_add32(&g_hammered, 1);
  for (uint32_t i = 0; i < 100; ++i) hal_store32(&g_stored, i);
  return 0;
}
const hal_app increments_then_stores = {"increments_then_stores", "100 atomics, then 100 stores",
                                        increments_then_stores_main, nullptr};

double lone_core_ns(bool far, double retry_ns) {
  g_hammered = 0;
  nlohmann::json s = scenario({{{"app", "increments_then_stores"}, {"cores", {0}}}});
  s["platform"]["cpu"]["far_atomics"] = far;
  s["platform"]["cpu"]["line_queueing"] = retry_ns > 0;
  s["platform"]["cpu"]["line_retry_ns"] = retry_ns;
  const TestRun t = run(s, {&increments_then_stores});
  EXPECT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(g_hammered, 100u);
  EXPECT_EQ(t.counter("cpus.cpu0.cacheline_transfers"), far ? 100u : 0u);
  return t.result.sim_ns;
}

TEST(FarAtomics, EveryAtomicGoesToTheHomeNode) { EXPECT_GE(lone_core_ns(true, 0), 100 * (40 + 10.0)); }

// The same through the retry rule's path (line_queueing, line_retry_ns).
TEST(FarAtomics, EveryAtomicGoesToTheHomeNodeWhenLinesAreRetried) { EXPECT_GE(lone_core_ns(true, 10), 100 * (40 + 10.0)); }

TEST(FarAtomics, OffAnAtomicKeepsTheLineInTheCore) { EXPECT_LT(lone_core_ns(false, 0), 100 * 40.0); }

// sw_spin_trylock: refused while another core holds the lock, granted once
// it is free, and a granted trylock excludes as a lock does.
sw_spinlock g_try = SW_SPINLOCK_INIT;
volatile uint32_t g_held, g_tried, g_released;
bool g_try_while_held = true, g_try_when_free = false, g_holder_blocked = false;

int try_main(void) {
  if (hal_cpu_id() == 0) {
    sw_spin_lock(&g_try);
    hal_store32(&g_held, 1);
    while (!hal_load32(&g_tried)) hal_cpu_relax();
    sw_spin_unlock(&g_try);
    hal_store32(&g_released, 1);
    while (hal_load32(&g_tried) < 2) hal_cpu_relax();
    g_holder_blocked = !sw_spin_trylock(&g_try);  // core 1 holds it now
    hal_store32(&g_tried, 3);
    return 0;
  }
  while (!hal_load32(&g_held)) hal_cpu_relax();
  g_try_while_held = sw_spin_trylock(&g_try);
  hal_store32(&g_tried, 1);
  while (!hal_load32(&g_released)) hal_cpu_relax();
  g_try_when_free = sw_spin_trylock(&g_try);
  hal_store32(&g_tried, 2);
  while (hal_load32(&g_tried) < 3) hal_cpu_relax();
  if (g_try_when_free) sw_spin_unlock(&g_try);
  return 0;
}
const hal_app trier = {"trier", "trylock against a held and a free lock", try_main, nullptr};

TEST(Spinlock, TrylockFailsWhileHeldAndSucceedsWhenFree) {
  const TestRun t = run(scenario({{{"app", "trier"}, {"cores", {0, 1}}}}), {&trier});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_FALSE(g_try_while_held);
  EXPECT_TRUE(g_try_when_free);
  EXPECT_TRUE(g_holder_blocked);
}

// Core 0 makes `lock` queued (when asked) while the other cores wait on
// `ready`, so none touches the lock before its kind is set. Returns whether
// the lock is queued.
bool set_kind_before_contention(sw_spinlock* lock, bool queued, volatile uint32_t* ready) {
  if (hal_cpu_id() == 0) {
    if (queued) (void)sw_spin_lock_init_queued(lock);
    hal_store32(ready, 1);
  } else {
    hal_poll32(ready, ~0u, 0, HAL_POLL_NE, 0, nullptr);
  }
  return sw_spin_is_queued(lock);
}

// The queued lock (Linux's qspinlock, lib/qspinlock.c).
sw_spinlock g_qlock = SW_SPINLOCK_INIT;
volatile uint32_t g_qready;
bool g_made_queued;
int queued_contender_main(void) {
  g_made_queued = set_kind_before_contention(&g_qlock, true, &g_qready);
  contend(&g_qlock);
  return 0;
}
const hal_app queued_contender = {"queued_contender", "hammers one queued spinlock", queued_contender_main, nullptr};

TEST(QueuedSpinlock, ContendedLockSerialises) {
  const TestRun t = run(scenario({{{"app", "queued_contender"}, {"cores", {0, 1, 2, 3}}}}), {&queued_contender});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_TRUE(g_made_queued);
  expect_serialised();
  // Released and the queue empty: only the queued mark is left in the word.
  EXPECT_EQ(g_qlock.next, 0x80000000u);
  EXPECT_EQ(g_qlock.owner, SW_SPIN_QUEUED);
}

// Eight cores taking one lock back to back on a platform whose lines serve
// one transfer at a time: a ticket lock's release is re-read by every
// waiter before the next owner gets the line, a queued lock's by one.
bool g_handoff_queued;
volatile uint32_t g_handoff_ready;
sw_spinlock g_handoff_lock = SW_SPINLOCK_INIT;
int handoff_main(void) {
  if (set_kind_before_contention(&g_handoff_lock, g_handoff_queued, &g_handoff_ready) != g_handoff_queued) return 1;
  for (int i = 0; i < 100; ++i) {
    sw_spin_lock(&g_handoff_lock);
    hal_cycles(100);
    sw_spin_unlock(&g_handoff_lock);
  }
  return 0;
}
const hal_app handoff = {"handoff", "one lock taken back to back on eight cores", handoff_main, nullptr};

double run_handoff(bool queued) {
  g_handoff_queued = queued;
  nlohmann::json s = scenario({{{"app", "handoff"}, {"cores", {0, 1, 2, 3, 4, 5, 6, 7}}}});
  s["platform"]["cpu"]["count"] = 8;
  s["platform"]["cpu"]["line_queueing"] = true;
  s["platform"]["cpu"]["cacheline_transfer_ns"] = 50;
  const TestRun t = run(s, {&handoff});
  EXPECT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  return t.result.sim_ns;
}

// 800 hand-offs of 50 ns transfers: each costs a ticket lock more than nine
// (the release, then the waiters' re-reads queued before the next owner's),
// a queued lock fewer than eight (release, the head's read and claim, and
// making the next waiter head). One run per test: SystemC elaborates once.
TEST(QueuedSpinlock, TicketHandOffQueuesBehindEveryWaiter) { EXPECT_GT(run_handoff(false), 800 * 9 * 50.0); }
TEST(QueuedSpinlock, QueuedHandOffMovesTheLineToOneCore) { EXPECT_LT(run_handoff(true), 800 * 8 * 50.0); }

}  // namespace
}  // namespace smmu_vp::test

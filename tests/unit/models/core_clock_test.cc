// CoreClock (cpu/core_clock.h): a core's quantum keeping in integer
// picoseconds must take tlm_utils::tlm_quantumkeeper's decisions exactly.
#include <random>

#include <gtest/gtest.h>
#include <systemc>
#include <sysc/kernel/sc_spawn.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include "common/tlm_time.h"
#include "cpu/core_clock.h"

namespace smmu_vp {
namespace {

TEST(CoreClock, BoundaryIsTheFirstQuantumMultipleAfterTheSync) {
  CoreClock c(500'000);
  c.start_quantum(0);
  EXPECT_EQ(c.next_boundary(), 500'000u);
  c.start_quantum(499'999);
  EXPECT_EQ(c.next_boundary(), 500'000u);
  c.start_quantum(500'000);  // at a boundary: the next one
  EXPECT_EQ(c.next_boundary(), 1'000'000u);
  c.advance(499'999);
  EXPECT_FALSE(c.need_sync(500'000));
  c.advance(1);
  EXPECT_TRUE(c.need_sync(500'000));
  EXPECT_EQ(c.now(500'000), 1'000'000u);
}

TEST(CoreClock, NoQuantumSynchronisesAtEveryStep) {
  CoreClock c(0);
  c.start_quantum(7'000);
  EXPECT_TRUE(c.need_sync(7'000));
}

// boundary_between(from, to): what need_sync() says at `to` after a
// synchronisation at `from`, without the clock's state (the polls ask it of
// times the loop they stand for would have passed).
TEST(CoreClock, BoundaryBetweenIsNeedSyncAfterASyncThere) {
  for (const Ps quantum : {Ps{0}, Ps{500'000}, Ps{30'000}}) {
    CoreClock c(quantum);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 20000; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      const Ps from = x % 10'000'000, to = from + (x >> 32) % 1'200'000;
      c.start_quantum(from);
      c.set_ahead(to - from);
      ASSERT_EQ(c.boundary_between(from, to), c.need_sync(from)) << quantum << " " << from << " " << to;
    }
  }
}

// A thread that runs ahead by random steps, synchronises at random ranks
// within a picosecond, and sometimes waits without resetting (as a core
// woken from WFI does): both keepers must agree at every step.
TEST(CoreClock, DecidesAsTheQuantumKeeper) {
  const Ps quantum = 70'000;
  tlm_utils::tlm_quantumkeeper::set_global_quantum(ps_to_sc(quantum));
  bool done = false;
  sc_core::sc_spawn([&] {
    std::mt19937_64 rng(3);
    tlm_utils::tlm_quantumkeeper qk;
    CoreClock clock(quantum);
    qk.reset();
    clock.start_quantum(0);
    for (int i = 0; i < 20000; ++i) {
      const Ps step = 1000 * (rng() % 9);  // whole ns: some land on a boundary
      qk.inc(ps_to_sc(step));
      clock.advance(step);
      ASSERT_EQ(clock.now(now_ps()), sc_to_ps(qk.get_current_time())) << i;
      ASSERT_EQ(clock.need_sync(now_ps()), qk.need_sync()) << i;
      const unsigned what = static_cast<unsigned>(rng() % 8);
      if (qk.need_sync() || what == 0) {
        // A synchronisation at a rank: wait out the local time, then reset.
        const Ps t = clock.now(now_ps());
        const uint64_t rank = 1 + rng() % 999;
        const uint64_t target = t * kRanksPerPs + rank;
        const uint64_t fs = sc_core::sc_time_stamp().value();
        if (target > fs) sc_core::wait(sc_core::sc_time::from_value(target - fs));
        qk.reset();
        clock.set_ahead(0);
        clock.start_quantum(t);
      } else if (what == 1 && qk.get_local_time() == sc_core::SC_ZERO_TIME) {
        // A sleep that ends at an event: time moves, the boundary stays.
        sc_core::wait(sc_core::sc_time::from_value(1 + rng() % 200'000'000));
      }
    }
    done = true;
  });
  sc_core::sc_start();
  EXPECT_TRUE(done);
}

}  // namespace
}  // namespace smmu_vp

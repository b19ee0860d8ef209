// The same-time order (common/tlm_time.h): ranks decide the order of wake-ups
// due at the same picosecond, and alone_until says when no other process can
// run first. Each test elaborates its own processes (one per process).
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <systemc>
#include <sysc/kernel/sc_spawn.h>

#include "common/tlm_time.h"

namespace smmu_vp {
namespace {

TEST(TimeRank, WakeUpsDueAtOnePicosecondRunInRankOrder) {
  // Ranks in construction order; the waits are made in the opposite order,
  // which SystemC's heap alone would not undo.
  std::vector<TimeRank> ranks(4);
  std::vector<int> order;
  for (int i = 3; i >= 0; --i) {
    sc_core::sc_spawn(
        [&, i] {
          sc_core::wait(ranks[static_cast<size_t>(i)].until(5000));
          EXPECT_EQ(now_ps(), 5000u);  // model time stays whole picoseconds
          order.push_back(i);
        },
        ("w" + std::to_string(i)).c_str());
  }
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_NS));
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(TimeRank, ZeroDelayIsADeltaCycleAndPassedInKnowsTheRankGone) {
  TimeRank early, late;
  bool checked = false;
  sc_core::sc_spawn([&] {
    sc_core::wait(late.until(1000));  // resumes at 1000 ps, late's femtosecond
    const uint64_t fs = sc_core::sc_time_stamp().value();
    EXPECT_EQ(late.until(1000), sc_core::SC_ZERO_TIME);
    EXPECT_TRUE(early.passed_in(1000));   // early's turn in this picosecond is over
    EXPECT_FALSE(late.passed_in(1000));   // this is late's own
    EXPECT_FALSE(early.passed_in(999));
    sc_core::wait(late.until(1000));      // a delta cycle: the same femtosecond
    EXPECT_EQ(sc_core::sc_time_stamp().value(), fs);
    checked = true;
  });
  sc_core::sc_start(sc_core::sc_time(2, sc_core::SC_NS));
  EXPECT_TRUE(checked);
}

TEST(TimeRank, AloneUntilSeesOtherProcessesAndTheRunsHorizon) {
  TimeRank mine, other;
  bool checked = false;
  sc_core::sc_spawn([&] { sc_core::wait(other.until(3000)); });
  sc_core::sc_spawn([&] {
    sc_core::wait(mine.until(1000));
    EXPECT_FALSE(mine.alone_until(2000)) << "no horizon set: never alone";
    TimeRank::run_horizon_fs() = 10'000'000;
    EXPECT_TRUE(mine.alone_until(2000));   // the other process wakes at 3000 ps
    EXPECT_TRUE(mine.alone_until(1000));   // a delta cycle nobody else needs
    EXPECT_EQ(mine.alone_until(3000), mine.value() < other.value()) << "3000 ps: the lower rank first";
    EXPECT_FALSE(mine.alone_until(4000));
    TimeRank::run_horizon_fs() = 1500 * kRanksPerPs;
    EXPECT_FALSE(mine.alone_until(2000)) << "past the horizon";
    TimeRank::run_horizon_fs() = 0;
    checked = true;
  });
  sc_core::sc_start(sc_core::sc_time(5, sc_core::SC_NS));
  EXPECT_TRUE(checked);
}

}  // namespace
}  // namespace smmu_vp

// The trace player's per-phase windows (phase_windows.h): which phases open
// when, the accesses counted by phase, and the SMMUs' main-TLB counts split
// at the windows' edges.
#include <gtest/gtest.h>

#include "trace_player/phase_windows.h"

namespace smmu_vp {
namespace {

std::vector<TracePhase> three() {
  return {TracePhase{"(before first phase)", 0, 0, 0}, TracePhase{"a", 10, 0, 0}, TracePhase{"b", 20, 0, 0}};
}

TEST(PhaseWindows, NothingForATraceWithoutPhases) {
  StatsRegistry s;
  PhaseWindows w({}, s, "player0");
  EXPECT_FALSE(w.active());
  w.enter(0, 5);
  w.access_done(0);
  w.finalize(100);
  EXPECT_TRUE(s.paths().empty());
}

TEST(PhaseWindows, TlbCountsAreSplitAtTheWindowsEdges) {
  StatsRegistry s;
  Counter& lookups = s.counter("smmu.tlb.lookups");
  Counter& misses = s.counter("smmu.tlb.misses");
  Counter& other_lookups = s.counter("smmu1.tlb.lookups");     // a second SMMU: summed
  Counter& tbu = s.counter("smmu.tbu.tbu0.tlb.lookups");      // a TBU's TLB: not the main one
  PhaseWindows w(three(), s, "player0");
  EXPECT_TRUE(w.active());
  lookups.add(100);  // before START: in no window
  w.enter(0, 1000);
  lookups.add(7);
  misses.add(2);
  other_lookups.add(3);
  tbu.add(50);
  w.access_done(0);
  w.access_done(0);
  // Phase 2 begun: phase 1 (no call, no access) gets an empty window.
  w.enter(2, 5000);
  w.enter(1, 6000);  // late: changes nothing
  lookups.add(4);
  misses.add(4);
  w.access_done(2);
  w.finalize(9000);
  EXPECT_EQ(s.find_counter("player0.phase.0.tlb_lookups")->value(), 10u);
  EXPECT_EQ(s.find_counter("player0.phase.0.tlb_misses")->value(), 2u);
  EXPECT_EQ(s.find_counter("player0.phase.0.accesses")->value(), 2u);
  EXPECT_DOUBLE_EQ(*s.find_value("player0.phase.0.start_ns"), 1.0);
  EXPECT_DOUBLE_EQ(*s.find_value("player0.phase.0.window_ns"), 4.0);
  EXPECT_EQ(s.find_counter("player0.phase.1.tlb_lookups")->value(), 0u);
  EXPECT_DOUBLE_EQ(*s.find_value("player0.phase.1.window_ns"), 0.0);
  EXPECT_EQ(s.find_counter("player0.phase.2.tlb_lookups")->value(), 4u);
  EXPECT_EQ(s.find_counter("player0.phase.2.tlb_misses")->value(), 4u);
  EXPECT_EQ(s.find_counter("player0.phase.2.accesses")->value(), 1u);
  EXPECT_DOUBLE_EQ(*s.find_value("player0.phase.2.window_ns"), 4.0);
}

TEST(PhaseWindows, AWindowNeverOpensBeforeThePreviousOne) {
  StatsRegistry s;
  PhaseWindows w(three(), s, "p");
  w.enter(0, 1000);
  w.enter(1, 3000);  // a register write landing a little later ...
  w.enter(2, 2500);  // ... than an access of the next phase issued now
  w.finalize(4000);
  EXPECT_DOUBLE_EQ(*s.find_value("p.phase.1.window_ns"), 0.0);
  EXPECT_DOUBLE_EQ(*s.find_value("p.phase.2.start_ns"), 3.0);
  EXPECT_DOUBLE_EQ(*s.find_value("p.phase.2.window_ns"), 1.0);
}

TEST(PhaseWindows, APhaseTheRunNeverReachedHasNoWindow) {
  StatsRegistry s;
  PhaseWindows w(three(), s, "p");
  w.enter(0, 0);
  w.finalize(1000);
  EXPECT_NE(s.find_value("p.phase.0.window_ns"), nullptr);
  EXPECT_EQ(s.find_value("p.phase.1.start_ns"), nullptr);
  EXPECT_EQ(s.find_counter("p.phase.2.accesses")->value(), 0u);
}

}  // namespace
}  // namespace smmu_vp

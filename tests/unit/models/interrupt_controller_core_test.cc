// InterruptControllerCore: edge-triggered lines latched from the simulated
// time they are raised until a core takes them.
#include "cpu/interrupt_controller_core.h"

#include <stdexcept>

#include <gtest/gtest.h>

namespace smmu_vp {
namespace {

constexpr Ps kNone = InterruptControllerCore::kNotPending;

TEST(InterruptControllerCore, NeedsLinesAndCpus) {
  EXPECT_THROW(InterruptControllerCore(0, 1), std::invalid_argument);
  EXPECT_THROW(InterruptControllerCore(8, 0), std::invalid_argument);
  InterruptControllerCore ic(32, 4);
  EXPECT_EQ(ic.lines(), 32u);
  EXPECT_EQ(ic.cpus(), 4u);
}

TEST(InterruptControllerCore, NothingPendingInitially) {
  InterruptControllerCore ic(8, 2);
  EXPECT_EQ(ic.take_pending(0, UINT64_MAX - 1), -1);
  EXPECT_EQ(ic.next_pending(0), kNone);
  EXPECT_EQ(ic.next_pending(1), kNone);
  for (unsigned l = 0; l < 8; ++l) EXPECT_EQ(ic.target(l), 0u);  // default route: cpu 0
}

TEST(InterruptControllerCore, RaiseThenTake) {
  InterruptControllerCore ic(8, 1);
  EXPECT_TRUE(ic.raise(3, 0));
  EXPECT_EQ(ic.raised(), 1u);
  EXPECT_EQ(ic.next_pending(0), 0u);
  EXPECT_EQ(ic.take_pending(0, 0), 3);
  EXPECT_EQ(ic.take_pending(0, 0), -1);  // taking clears it
  EXPECT_EQ(ic.next_pending(0), kNone);
}

// A raise at a future time (a device running ahead) is invisible until then.
TEST(InterruptControllerCore, FuturePendingTime) {
  InterruptControllerCore ic(8, 1);
  ic.raise(5, 1000);
  EXPECT_EQ(ic.next_pending(0), 1000u);
  EXPECT_EQ(ic.take_pending(0, 999), -1);
  EXPECT_EQ(ic.next_pending(0), 1000u);  // not consumed by the early look
  EXPECT_EQ(ic.take_pending(0, 1000), 5);
  EXPECT_EQ(ic.next_pending(0), kNone);
}

TEST(InterruptControllerCore, LowestPendingLineFirst) {
  InterruptControllerCore ic(16, 1);
  ic.raise(9, 10);
  ic.raise(2, 20);
  ic.raise(12, 5);
  EXPECT_EQ(ic.next_pending(0), 5u);
  EXPECT_EQ(ic.take_pending(0, 7), 12);   // only 12 is pending at 7
  EXPECT_EQ(ic.take_pending(0, 100), 2);  // then the lowest number wins
  EXPECT_EQ(ic.take_pending(0, 100), 9);
  EXPECT_EQ(ic.take_pending(0, 100), -1);
}

TEST(InterruptControllerCore, EdgesCoalesceWhilePending) {
  InterruptControllerCore ic(8, 1);
  ic.raise(4, 100);
  ic.raise(4, 300);
  ic.raise(4, 50);  // an earlier edge moves the pending time back
  EXPECT_EQ(ic.raised(), 3u);
  EXPECT_EQ(ic.next_pending(0), 50u);
  EXPECT_EQ(ic.take_pending(0, 400), 4);
  EXPECT_EQ(ic.coalesced(), 2u);  // three edges due at 400, one interrupt
  EXPECT_EQ(ic.take_pending(0, 400), -1);  // one interrupt for the three edges
  // Once taken, a new edge is a new interrupt, not coalesced.
  ic.raise(4, 500);
  EXPECT_EQ(ic.coalesced(), 2u);
  EXPECT_EQ(ic.take_pending(0, 500), 4);
}

// Under temporal decoupling a device may raise a line at a time later than
// the moment the core takes the earlier edge. That later edge happens after
// the take and must interrupt again; coalescing it into the earlier pending
// time loses it.
TEST(InterruptControllerCore, LaterEdgeNotLostWhenEarlierOneIsTaken) {
  InterruptControllerCore ic(8, 1);
  ic.raise(1, 100);
  ic.raise(1, 200);
  EXPECT_EQ(ic.take_pending(0, 150), 1);
  EXPECT_EQ(ic.take_pending(0, 250), 1) << "the edge raised at 200 was lost";
}

TEST(InterruptControllerCore, RoutingToCpus) {
  InterruptControllerCore ic(8, 3);
  EXPECT_TRUE(ic.set_target(4, 2));
  EXPECT_TRUE(ic.set_target(6, 1));
  EXPECT_EQ(ic.target(4), 2u);
  ic.raise(4, 10);
  ic.raise(6, 20);
  ic.raise(1, 30);  // default route, cpu 0
  EXPECT_EQ(ic.next_pending(0), 30u);
  EXPECT_EQ(ic.next_pending(1), 20u);
  EXPECT_EQ(ic.next_pending(2), 10u);
  // Each core sees only its own lines.
  EXPECT_EQ(ic.take_pending(0, 100), 1);
  EXPECT_EQ(ic.take_pending(0, 100), -1);
  EXPECT_EQ(ic.take_pending(1, 100), 6);
  EXPECT_EQ(ic.take_pending(1, 100), -1);
  EXPECT_EQ(ic.take_pending(2, 100), 4);
  EXPECT_EQ(ic.take_pending(2, 100), -1);
}

TEST(InterruptControllerCore, RetargetingPendingLineMovesIt) {
  InterruptControllerCore ic(8, 2);
  ic.raise(3, 0);
  ASSERT_TRUE(ic.set_target(3, 1));
  EXPECT_EQ(ic.take_pending(0, 10), -1);
  EXPECT_EQ(ic.take_pending(1, 10), 3);
}

TEST(InterruptControllerCore, OutOfRangeRejected) {
  InterruptControllerCore ic(8, 2);
  EXPECT_FALSE(ic.raise(8, 0));
  EXPECT_FALSE(ic.raise(1000, 0));
  EXPECT_EQ(ic.raised(), 0u);  // rejected raises are not counted
  EXPECT_EQ(ic.next_pending(0), kNone);
  EXPECT_FALSE(ic.set_target(8, 0));  // no such line
  EXPECT_FALSE(ic.set_target(0, 2));  // no such cpu
  EXPECT_EQ(ic.target(0), 0u);        // unchanged
  EXPECT_TRUE(ic.raise(7, 0));        // the last line exists
  EXPECT_EQ(ic.take_pending(0, 0), 7);
}

}  // namespace
}  // namespace smmu_vp

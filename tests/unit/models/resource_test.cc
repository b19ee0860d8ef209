// Resource: the contention model of the whole platform. A request gets the
// earliest gap at or after its arrival, on whichever slot offers it first.
#include "common/resource.h"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace smmu_vp {
namespace {

TEST(Resource, NeedsAtLeastOneSlot) {
  EXPECT_THROW(Resource("r", 0), std::invalid_argument);
  Resource r("bus", 3);
  EXPECT_EQ(r.slots(), 3u);
  EXPECT_EQ(r.name(), "bus");
}

// A measurement window: only the busy time inside it counts toward the
// window's share; the run's total is unchanged.
TEST(Resource, WindowSumsOnlyTheBusyTimeInsideIt) {
  Resource r("r", 2);
  EXPECT_FALSE(r.has_window());
  EXPECT_EQ(r.window_utilisation(), 0.0);
  r.set_window(100, 200);
  r.reserve(50, 100);   // [50, 150): 50 inside
  r.reserve(180, 100);  // other slot, [180, 280): 20 inside
  r.reserve(300, 10);   // after it: none
  EXPECT_EQ(r.busy_time(), 210u);
  EXPECT_EQ(r.window_busy_time(), 70u);
  EXPECT_DOUBLE_EQ(r.window_utilisation(), 70.0 / (100.0 * 2));
}

TEST(Resource, IdleResourceGrantsAtArrival) {
  Resource r("bus", 1);
  const auto g = r.reserve(100, 10);
  EXPECT_EQ(g.start, 100u);
  EXPECT_EQ(g.end, 110u);
  EXPECT_EQ(g.waited, 0u);
}

TEST(Resource, SingleSlotQueuesInArrivalOrder) {
  Resource r("bus", 1);
  const auto a = r.reserve(0, 10);
  const auto b = r.reserve(0, 10);  // arrives with a: waits for it
  const auto c = r.reserve(5, 10);  // arrives during a: waits for a and b
  EXPECT_EQ(a.start, 0u);
  EXPECT_EQ(b.start, 10u);
  EXPECT_EQ(b.waited, 10u);
  EXPECT_EQ(c.start, 20u);
  EXPECT_EQ(c.end, 30u);
  EXPECT_EQ(c.waited, 15u);

  EXPECT_EQ(r.requests(), 3u);
  EXPECT_EQ(r.busy_time(), 30u);
  EXPECT_EQ(r.wait_time(), 25u);
  EXPECT_EQ(r.last_end(), 30u);
}

TEST(Resource, EarliestStartDoesNotReserve) {
  Resource r("bus", 1);
  r.reserve(0, 50);
  EXPECT_EQ(r.earliest_start(10, 5), 50u);
  EXPECT_EQ(r.earliest_start(10, 5), 50u);  // asking twice changes nothing
  EXPECT_EQ(r.requests(), 1u);
  EXPECT_EQ(r.reserve(10, 5).start, 50u);
}

TEST(Resource, MultiSlotPicksEarliestSlot) {
  Resource r("walkers", 2);
  EXPECT_EQ(r.reserve(0, 100).start, 0u);  // slot A busy until 100
  EXPECT_EQ(r.reserve(0, 10).start, 0u);   // slot B free: no wait
  EXPECT_EQ(r.reserve(0, 10).start, 10u);  // B frees at 10, A at 100
  EXPECT_EQ(r.reserve(0, 50).start, 20u);  // B again, still before A
  EXPECT_EQ(r.reserve(0, 5).start, 70u);   // B ends at 70 < A's 100
  EXPECT_EQ(r.earliest_start(0, 1), 75u);
  EXPECT_EQ(r.busy_time(), 175u);  // summed over both slots
}

TEST(Resource, MultiSlotRunsInParallelUpToSlotCount) {
  Resource r("links", 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r.reserve(0, 10).waited, 0u);
  EXPECT_EQ(r.reserve(0, 10).start, 10u);  // the fifth waits
}

TEST(Resource, OutOfOrderArrivalUsesGapInFront) {
  Resource r("bus", 1);
  r.reserve(100, 10);  // an initiator running ahead reserved the future
  // A request at the present fits in front of it: no queueing behind.
  const auto early = r.reserve(0, 50);
  EXPECT_EQ(early.start, 0u);
  EXPECT_EQ(early.waited, 0u);
  // The gap [50, 100) is 50 wide: a 50-long request fits exactly ...
  EXPECT_EQ(r.earliest_start(50, 50), 50u);
  // ... but one arriving at 60 does not, and goes after the future reservation.
  EXPECT_EQ(r.reserve(60, 50).start, 110u);
  EXPECT_EQ(r.reserve(50, 50).start, 50u);
  EXPECT_EQ(r.last_end(), 160u);
}

TEST(Resource, SkipsGapsTooSmall) {
  Resource r("bus", 1);
  r.reserve(0, 10);
  r.reserve(15, 10);  // gap [10, 15)
  r.reserve(30, 10);  // gap [25, 30)
  EXPECT_EQ(r.reserve(0, 6).start, 40u);
  EXPECT_EQ(r.reserve(0, 5).start, 10u);
  EXPECT_EQ(r.reserve(0, 5).start, 25u);
}

TEST(Resource, AdjacentIntervalsMerge) {
  Resource r("bus", 1);
  r.reserve(0, 10);
  r.reserve(10, 10);
  EXPECT_EQ(r.tracked_intervals(), 1u);  // [0, 20)
  r.reserve(30, 10);
  EXPECT_EQ(r.tracked_intervals(), 2u);  // [0, 20) [30, 40)
  r.reserve(20, 10);                     // fills the gap exactly
  EXPECT_EQ(r.tracked_intervals(), 1u);  // [0, 40)
  EXPECT_EQ(r.earliest_start(0, 1), 40u);
}

TEST(Resource, MergeWithLaterNeighbourOnly) {
  Resource r("bus", 1);
  r.reserve(50, 10);
  r.reserve(40, 10);  // ends where the later one starts
  EXPECT_EQ(r.tracked_intervals(), 1u);
  EXPECT_EQ(r.earliest_start(40, 1), 60u);
}

TEST(Resource, ZeroDurationTracksNothing) {
  Resource r("bus", 1);
  const auto g = r.reserve(7, 0);
  EXPECT_EQ(g.start, 7u);
  EXPECT_EQ(g.end, 7u);
  EXPECT_EQ(r.tracked_intervals(), 0u);
  EXPECT_EQ(r.requests(), 1u);
}

TEST(Resource, RetireDropsEndedIntervals) {
  Resource r("bus", 2);
  r.reserve(0, 10);   // ends 10
  r.reserve(20, 10);  // ends 30 (merges nowhere: gap at 10..20)
  r.reserve(40, 10);  // ends 50
  r.reserve(0, 45);   // second slot, ends 45
  ASSERT_EQ(r.tracked_intervals(), 4u);

  r.retire(30);  // intervals ending at or before 30 go
  EXPECT_EQ(r.tracked_intervals(), 2u);
  r.retire(45);
  EXPECT_EQ(r.tracked_intervals(), 1u);
  // Retiring forgets history, not accounting, and later requests still see
  // the interval that is alive.
  EXPECT_EQ(r.requests(), 4u);
  EXPECT_EQ(r.busy_time(), 75u);
  EXPECT_EQ(r.last_end(), 50u);
  EXPECT_EQ(r.reserve(45, 10).start, 45u);  // the other slot is free now
  EXPECT_EQ(r.reserve(45, 10).start, 50u);
  r.retire(1000);
  EXPECT_EQ(r.tracked_intervals(), 0u);
}

// Reference first fit on one slot: the earliest t >= arrival such that
// [t, t + d) overlaps none of `grants`. Candidates are the arrival and every
// grant end after it.
Ps reference_first_fit(const std::vector<Resource::Grant>& grants, Ps arrival, Ps d) {
  std::vector<Resource::Grant> live;  // only grants ending after arrival can be in the way
  for (const auto& g : grants)
    if (g.end > arrival) live.push_back(g);
  std::vector<Ps> candidates{arrival};
  for (const auto& g : live) candidates.push_back(g.end);
  std::sort(candidates.begin(), candidates.end());
  for (Ps t : candidates) {
    bool clear = true;
    for (const auto& g : live) clear = clear && (t + d <= g.start || g.end <= t);
    if (clear) return t;
  }
  return UINT64_MAX;
}

// Reference over several slots: the earliest first fit, on the lowest slot
// among equals.
std::pair<Ps, unsigned> reference_grant(const std::vector<std::vector<Resource::Grant>>& by_slot, Ps arrival,
                                        Ps d) {
  Ps want = UINT64_MAX;
  unsigned want_slot = 0;
  for (unsigned s = 0; s < by_slot.size(); ++s) {
    const Ps t = reference_first_fit(by_slot[s], arrival, d);
    if (t < want) {
      want = t;
      want_slot = s;
    }
  }
  return {want, want_slot};
}

// Random arrivals in no particular order (temporal decoupling) and periodic
// retirement: grants never overlap, never start before arrival, and each is
// the earliest possible one.
TEST(ResourceProperty, SingleSlotGrantsNeverOverlap) {
  std::mt19937_64 rng(12345);
  Resource r("bus", 1);
  std::vector<Resource::Grant> grants;
  Ps now = 0;
  Ps total_busy = 0, total_wait = 0;
  for (int i = 0; i < 2000; ++i) {
    if (i % 100 == 99) {
      now += 10000;  // about 50% load: queues form but stay bounded
      r.retire(now);  // no arrival is ever earlier than `now` from here on
    }
    const Ps arrival = now + rng() % 20000;
    const Ps d = 1 + rng() % 100;
    const Ps expect = reference_first_fit(grants, arrival, d);
    const auto g = r.reserve(arrival, d);
    ASSERT_GE(g.start, arrival);
    ASSERT_EQ(g.end, g.start + d);
    ASSERT_EQ(g.waited, g.start - arrival);
    ASSERT_EQ(g.start, expect) << "request " << i << " arrival " << arrival << " duration " << d;
    grants.push_back(g);
    total_busy += d;
    total_wait += g.waited;
  }
  std::sort(grants.begin(), grants.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  for (size_t i = 1; i < grants.size(); ++i) ASSERT_LE(grants[i - 1].end, grants[i].start);
  EXPECT_EQ(r.busy_time(), total_busy);
  EXPECT_EQ(r.wait_time(), total_wait);
}

// With k slots, at no instant are more than k grants active.
TEST(ResourceProperty, MultiSlotNeverExceedsSlotCount) {
  std::mt19937_64 rng(99);
  constexpr unsigned kSlots = 3;
  Resource r("walkers", kSlots);
  std::vector<std::pair<Ps, int>> edges;  // (time, +1 start / -1 end)
  for (int i = 0; i < 3000; ++i) {
    const Ps arrival = rng() % 50000;
    const auto g = r.reserve(arrival, 1 + rng() % 200);
    ASSERT_GE(g.start, arrival);
    edges.emplace_back(g.start, +1);
    edges.emplace_back(g.end, -1);
  }
  // Ends sort before starts at the same instant: back-to-back is not overlap.
  std::sort(edges.begin(), edges.end());
  int active = 0;
  for (const auto& [t, delta] : edges) {
    active += delta;
    ASSERT_LE(active, static_cast<int>(kSlots)) << "at t=" << t;
  }
  EXPECT_EQ(active, 0);
}

// Nearly in-order arrivals on many slots (the translator's case) with
// periodic retirement: every grant is the earliest any slot offers, on the
// lowest such slot, and earliest_start agrees with it. This is what the
// resource's summary of last intervals answers without a scan.
TEST(ResourceProperty, MultiSlotGrantIsTheEarliestOnTheLowestSlot) {
  std::mt19937_64 rng(7);
  constexpr unsigned kSlots = 16;
  Resource r("translation_slots", kSlots);
  std::vector<std::vector<Resource::Grant>> by_slot(kSlots);
  Ps base = 0;
  for (int i = 0; i < 4000; ++i) {
    base += rng() % 8;
    const Ps arrival = base + rng() % 40;  // out of order within a window
    // Positive durations: merged back-to-back intervals leave no room for a
    // zero-length request at their seam, which the per-grant reference sees.
    const Ps d = 1 + rng() % 120;
    const auto [want, want_slot] = reference_grant(by_slot, arrival, d);
    ASSERT_EQ(r.earliest_start(arrival, d), want) << "request " << i;
    const auto g = r.reserve(arrival, d);
    ASSERT_EQ(g.start, want) << "request " << i;
    ASSERT_EQ(g.slot, want_slot) << "request " << i;
    by_slot[g.slot].push_back(g);
    if (i % 50 == 49) r.retire(base);  // later arrivals are all at or after base
  }
}

// The translator's pattern: ask when a slot frees for a unit request, then
// reserve the whole translation from that time. The reservation reuses
// earliest_start's slot when it can (Resource::Hint); it must still be the
// earliest grant on the lowest slot, as a fresh search would give.
TEST(ResourceProperty, ReserveAtTheEarliestStartIsTheEarliestOnTheLowestSlot) {
  std::mt19937_64 rng(11);
  constexpr unsigned kSlots = 16;
  Resource r("translation_slots", kSlots);
  std::vector<std::vector<Resource::Grant>> by_slot(kSlots);
  Ps base = 0;
  unsigned later_than_asked = 0;
  for (int i = 0; i < 4000; ++i) {
    base += rng() % 8;
    const Ps arrival = base + rng() % 40;
    const Ps start = r.earliest_start(arrival, 1);
    const Ps d = 1 + rng() % 160;
    const auto [want, want_slot] = reference_grant(by_slot, start, d);
    const auto g = r.reserve(start, d);
    ASSERT_EQ(g.start, want) << "request " << i;
    ASSERT_EQ(g.slot, want_slot) << "request " << i;
    if (g.start > start) ++later_than_asked;  // a unit gap, too short for d
    by_slot[g.slot].push_back(g);
    if (i % 50 == 49) r.retire(base);
  }
  EXPECT_GT(later_than_asked, 0u);  // the case the hint must not take
}

}  // namespace
}  // namespace smmu_vp

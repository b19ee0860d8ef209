// A shared hardware resource (DRAM data bus, walker slot, command-queue
// consumer, link) reserved in simulated time. A request takes the earliest
// gap, at or after its arrival, long enough for its duration, on whichever
// slot offers it first; later requests queue behind it without any process
// switch. This is the contention model of the whole platform
// (docs/architecture.md, "Timing").
//
// Requests may arrive out of time order: with temporal decoupling an
// initiator running ahead may reserve the future before another reserves the
// present. Keeping busy intervals (not just a next-free time) lets the later
// caller use the gap in front of the earlier reservation instead of queueing
// behind it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/sim_time.h"

namespace smmu_vp {

class Resource {
 public:
  struct Grant {
    Ps start;   // when the request got a slot
    Ps end;     // when it releases it
    Ps waited;  // start - arrival
    unsigned slot;  // which slot: slots' grants never overlap
  };

  Resource(std::string name, unsigned slots);

  // Reserve a slot at or after `arrival` for `duration`.
  Grant reserve(Ps arrival, Ps duration);
  // When a request arriving at `arrival` for `duration` would start, without reserving.
  Ps earliest_start(Ps arrival, Ps duration) const {
    if (arrival < max_start_) return earliest_start_searching(arrival, duration);
    Ps start;
    const size_t slot = in_order_slot(arrival, &start);
    return remember(start, slot);
  }
  // Forget intervals that end at or before `now`: no request can arrive
  // earlier than the current simulation time. Keeps lookups short.
  void retire(Ps now);

  const std::string& name() const { return name_; }
  unsigned slots() const { return static_cast<unsigned>(busy_.size()); }
  uint64_t requests() const { return requests_; }
  Ps busy_time() const { return busy_time_; }  // summed over slots
  // A measurement window (an app's, announced by the platform): from then on
  // the busy time falling inside [start, end) is summed too, so that a share
  // of capacity can be taken over the window rather than the whole run.
  void set_window(Ps start, Ps end) {
    window_start_ = start;
    window_end_ = end;
  }
  bool has_window() const { return window_end_ > window_start_; }
  Ps window_busy_time() const { return window_busy_; }  // summed over slots
  // Busy share of the slots over the window (0 without one).
  double window_utilisation() const {
    return has_window() ? static_cast<double>(window_busy_) / (static_cast<double>(window_end_ - window_start_) * slots())
                        : 0.0;
  }
  Ps wait_time() const { return waited_; }     // summed over requests
  Ps last_end() const { return last_end_; }
  size_t tracked_intervals() const;

 private:
  struct Interval {
    Ps start, end;
  };
  // Disjoint, sorted by start, adjacent ones merged. A flat vector: a slot
  // holds a few intervals between retire() calls, so a search over
  // contiguous memory beats a tree, and steady state allocates nothing.
  using Intervals = std::vector<Interval>;
  static Ps first_fit(const Intervals& busy, Ps arrival, Ps duration);
  static void insert(Intervals& busy, Ps start, Ps end);
  // first_fit on slot s, answered from last_[s] in the usual cases.
  Ps fit(size_t s, Ps arrival, Ps duration) const {
    const Interval& last = last_[s];
    if (last.end <= arrival) return arrival;        // idle from arrival on
    if (last.start <= arrival) return last.end;     // inside the last interval: every other ends before it
    return first_fit(busy_[s], arrival, duration);  // arrival before it: look for a gap
  }

  std::string name_;
  std::vector<Intervals> busy_;
  // Each slot's last busy interval ({0, 0} when idle), side by side so that
  // a request scans every slot's usual case without touching its vector.
  std::vector<Interval> last_;
  // Over last_: the latest start, and a tournament tree of the last ends
  // (ends_[1] the smallest; the leaves ends_[leaves_ + s], padding ones
  // never free), so that a request arriving after every last start (the
  // usual in-order case) finds its slot in log2(slots) steps instead of
  // scanning them.
  void summarise();
  void update_summary(size_t slot);  // after a reservation on `slot`
  void set_end(size_t slot, Ps end);
  // In-order request (arrival >= max_start_): the lowest slot idle at
  // arrival, else the one that frees first (lowest on a tie); its start.
  size_t in_order_slot(Ps arrival, Ps* start) const {
    // At or after every slot's last interval began, each slot is free from
    // max(arrival, its last end). With the threshold max(arrival, smallest
    // end), the leftmost leaf at or under it is the lowest slot idle at
    // arrival if there is one, else the lowest slot with the smallest end.
    const Ps threshold = arrival > ends_[1] ? arrival : ends_[1];
    size_t i = 1;
    while (i < leaves_) i = 2 * i + (ends_[2 * i] > threshold ? 1 : 0);
    *start = threshold;
    return i - leaves_;
  }
  // earliest_start for a request arriving before some slot's last start.
  Ps earliest_start_searching(Ps arrival, Ps duration) const;
  std::vector<Ps> ends_;
  size_t leaves_ = 1;
  Ps max_start_ = 0;
  // earliest_start's answer and the lowest slot giving it, for the reserve
  // at that time which usually follows it (the translator asks when a slot
  // frees, then reserves it). Exact when the slot is idle from then on: a
  // lower slot had no room at or before that time. Any change clears it.
  struct Hint {
    bool valid = false;
    Ps start = 0;
    size_t slot = 0;
  };
  mutable Hint hint_;
  Ps remember(Ps start, size_t slot) const {
    hint_ = {true, start, slot};
    return start;
  }
  uint64_t requests_ = 0;
  Ps busy_time_ = 0;
  Ps window_start_ = 0, window_end_ = 0, window_busy_ = 0;
  Ps waited_ = 0;
  Ps last_end_ = 0;
};

}  // namespace smmu_vp

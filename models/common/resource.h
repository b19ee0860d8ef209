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
  Ps earliest_start(Ps arrival, Ps duration) const;
  // Forget intervals that end at or before `now`: no request can arrive
  // earlier than the current simulation time. Keeps lookups short.
  void retire(Ps now);

  const std::string& name() const { return name_; }
  unsigned slots() const { return static_cast<unsigned>(busy_.size()); }
  uint64_t requests() const { return requests_; }
  Ps busy_time() const { return busy_time_; }  // summed over slots
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
  // Over last_: the latest start, and the smallest end (with the lowest slot
  // that has it), so that a request arriving after every last start (the
  // usual in-order case) is answered without scanning the slots. The
  // smallest end is recomputed only when a request needs it
  // (min_end_valid_): a reservation on its slot invalidates it, and the
  // next in-order request often finds a slot idle at its arrival first.
  void summarise();
  void update_summary(size_t slot);  // after a reservation on `slot`
  // In-order request (arrival >= max_start_): the slot it gets and its start,
  // by a scan of last_ (scan_in_order) unless the smallest end answers it.
  size_t scan_in_order(Ps arrival, Ps* start) const;
  size_t in_order_slot(Ps arrival, Ps* start);
  Ps min_end_ = 0;
  size_t min_end_slot_ = 0;
  bool min_end_valid_ = true;
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
  Ps waited_ = 0;
  Ps last_end_ = 0;
};

}  // namespace smmu_vp

// Interrupt controller behaviour without SystemC: a set of edge-triggered
// lines, each routed to one core, latched as pending from the simulated time
// they were raised until a core takes them. Edges are kept with their times:
// under temporal decoupling a device may raise a line at a time later than the
// moment a core takes an earlier edge, and that later edge must interrupt
// again. Edges already due when a core takes the line are one interrupt. MSIs arrive as a write of the line
// number to the doorbell (in the spirit of GICv2m's SETSPI), so a device and
// the SMMU signal through the same memory write path as on real systems.
#pragma once

#include <cstdint>
#include <vector>

#include "common/sim_time.h"

namespace smmu_vp {

class InterruptControllerCore {
 public:
  static constexpr Ps kNotPending = UINT64_MAX;

  InterruptControllerCore(unsigned lines, unsigned cpus);

  unsigned lines() const { return static_cast<unsigned>(edges_.size()); }
  unsigned cpus() const { return cpus_; }

  // False when `line` is out of range.
  bool raise(unsigned line, Ps at);
  bool set_target(unsigned line, unsigned cpu);
  unsigned target(unsigned line) const { return target_[line]; }

  // Lowest line routed to `cpu` that is pending at time `now`, or -1. Every
  // edge of that line due by `now` is consumed: they coalesce into one
  // interrupt, as on a real controller.
  int take_pending(unsigned cpu, Ps now);
  // Earliest time at which a line routed to `cpu` becomes pending, or kNotPending.
  Ps next_pending(unsigned cpu) const;

  uint64_t raised() const { return raised_; }
  // Edges that were taken together with an earlier one.
  uint64_t coalesced() const { return coalesced_; }

 private:
  unsigned cpus_;
  std::vector<std::vector<Ps>> edges_;  // per line, pending edge times, sorted
  std::vector<unsigned> target_;
  std::vector<uint64_t> pending_;  // per cpu, edges pending on the lines it is the target of
  uint64_t raised_ = 0;
  uint64_t coalesced_ = 0;
};

}  // namespace smmu_vp

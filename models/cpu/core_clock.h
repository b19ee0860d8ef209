// A core's clock under temporal decoupling (loosely-timed TLM): how far the
// core has run ahead of the kernel's time, and the quantum boundary where it
// must next synchronise.
//
// It takes the same decisions as tlm_utils::tlm_quantumkeeper with the
// global quantum, in integer picoseconds and without the kernel:
// tlm_global_quantum puts the next boundary at the first multiple of the
// quantum after the time of the last reset, and need_sync() compares the
// core's time with it. The quantum is a whole number of picoseconds
// (platform.cpu.quantum_ns is in ns), so a femtosecond rank within a
// picosecond (common/tlm_time.h) never moves a boundary or a comparison:
// picoseconds are exact here.
#pragma once

#include "common/sim_time.h"

namespace smmu_vp {

class CoreClock {
 public:
  explicit CoreClock(Ps quantum) : quantum_(quantum) {}

  // The core's time, with the kernel at `kernel`.
  Ps now(Ps kernel) const { return kernel + ahead_; }
  Ps ahead() const { return ahead_; }
  void advance(Ps d) { ahead_ += d; }
  void set_ahead(Ps d) { ahead_ = d; }

  // Whether the core has reached the quantum boundary.
  bool need_sync(Ps kernel) const { return kernel + ahead_ >= next_boundary_; }

  // After a synchronisation that left the core at time t: the next boundary
  // is the first multiple of the quantum after t. With no quantum every
  // step synchronises (the boundary is t itself).
  void start_quantum(Ps t) { next_boundary_ = quantum_ ? (t / quantum_ + 1) * quantum_ : t; }
  Ps next_boundary() const { return next_boundary_; }
  // Whether a core that synchronised at `from` and ran on to `to` has
  // reached the boundary start_quantum(from) set: a quantum boundary lies in
  // (from, to], or there is no quantum.
  bool boundary_between(Ps from, Ps to) const { return quantum_ == 0 || to / quantum_ > from / quantum_; }
  Ps quantum() const { return quantum_; }

 private:
  Ps quantum_;
  Ps ahead_ = 0;
  Ps next_boundary_ = 0;
};

}  // namespace smmu_vp

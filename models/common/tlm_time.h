// Conversions between model-core picoseconds and SystemC time, and the order
// of events due at the same picosecond.
//
// Integers end to end: SystemC's time is a count of resolution ticks, so a
// conversion is one multiplication or division by a constant read once,
// instead of sc_time(double, unit)'s floating-point scaling and table lookups
// on every access.
//
// Same-time order (docs/architecture.md, "Same-time order"). SystemC resumes
// two processes due at the same instant in an order its timed-event heap's
// history decides, so a change that only adds or removes a wait somewhere
// (a speed change) could swap them and move results. The platform therefore
// runs SystemC at a 1 fs resolution (use_ranked_time(), first thing in every
// sc_main) and puts every timed wait and timed notification of a model at
// t ps + its rank in fs: a number fixed per waiting process or notified
// event, handed out in construction order. Model time stays whole
// picoseconds (sc_to_ps drops the rank); within one picosecond, ranked
// wake-ups run in rank order, each with its delta cycles before the next.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <systemc>

#include "common/sim_time.h"

namespace smmu_vp {

// Resolution ticks per picosecond.
inline uint64_t sc_ticks_per_ps() {
  static const uint64_t ticks = sc_core::sc_time(1, sc_core::SC_PS).value();
  return ticks;
}
// SystemC counts femtoseconds in 64 bits (5.1 hours). Times and delays are
// clamped to this (a "never", a delay of hours), beyond any run
// (scenario.stop.max_time_us is at most 5e9 us), so that a run's time plus
// a delay stays countable.
constexpr Ps kMaxRankedPs = Ps{8000} * 1000 * 1000 * 1000 * 1000;  // 8000 s

inline sc_core::sc_time ps_to_sc(Ps ps) {
  return sc_core::sc_time::from_value(std::min(ps, kMaxRankedPs) * sc_ticks_per_ps());
}
inline Ps sc_to_ps(const sc_core::sc_time& t) { return static_cast<Ps>(t.value() / sc_ticks_per_ps()); }
inline Ps now_ps() { return sc_to_ps(sc_core::sc_time_stamp()); }

constexpr uint64_t kRanksPerPs = 1000;  // 1 fs resolution

// Sets SystemC's resolution to 1 fs. Call before any sc_time is made (SystemC
// fixes the resolution at the first), i.e. first in sc_main.
inline void use_ranked_time() { sc_core::sc_set_time_resolution(1, sc_core::SC_FS); }

class TimeRank {
 public:
  // The next rank (1, 2, ...: 0 is left to the run's own slice ends).
  TimeRank() : fs_(next()) {}

  // The delay from now to picosecond t at this rank; zero (a delta cycle, as
  // a zero wait always was) when t is not after the current picosecond.
  sc_core::sc_time until(Ps t) const {
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (t <= now / kRanksPerPs) return sc_core::SC_ZERO_TIME;
    return sc_core::sc_time::from_value(std::min(t, kMaxRankedPs) * kRanksPerPs + fs_ - now);
  }
  // The same for a delay annotated on a transaction (it lands then).
  sc_core::sc_time after(const sc_core::sc_time& delay) const { return until(now_ps() + sc_to_ps(delay)); }

  // Whether now is within picosecond t, past this rank: what this rank does
  // at t has been done.
  bool passed_in(Ps t) const {
    const uint64_t now = sc_core::sc_time_stamp().value();
    return now / kRanksPerPs == t && now % kRanksPerPs > fs_;
  }

  // The delay to this rank's turn in the current picosecond; zero when now
  // is at or past it.
  sc_core::sc_time rest_of_turn() const {
    const uint64_t in_ps = sc_core::sc_time_stamp().value() % kRanksPerPs;
    return in_ps < fs_ ? sc_core::sc_time::from_value(fs_ - in_ps) : sc_core::SC_ZERO_TIME;
  }

  // Whether no other process can run before this rank's picosecond t (nor
  // before now, when t is now), within the current sc_start: then a wait
  // until t would only resume this process there, and a process that keeps
  // its own clock may skip it. False when no run has set a horizon.
  bool alone_until(Ps t) const {
    const uint64_t horizon = run_horizon_fs();
    if (horizon == 0) return false;
    const uint64_t now = sc_core::sc_time_stamp().value();
    const uint64_t target = std::max(now, std::min(t, kMaxRankedPs) * kRanksPerPs + fs_);
    if (target > horizon) return false;
    return now + sc_core::sc_time_to_pending_activity().value() > target;
  }

  // The last femtosecond the current sc_start runs to (Platform::simulate
  // sets it before each slice; 0: unknown, nothing runs ahead).
  static uint64_t& run_horizon_fs() {
    static uint64_t h = 0;
    return h;
  }

  uint64_t value() const { return fs_; }

 private:
  static uint64_t next() {
    static uint64_t last = 0;
    if (sc_ticks_per_ps() != kRanksPerPs)
      throw std::logic_error("SystemC's time resolution is not 1 fs: call use_ranked_time() first in sc_main");
    if (last + 1 >= kRanksPerPs)
      throw std::length_error(
          "the platform has more than 999 processes and events that wait or are notified ahead of time (cores, "
          "DMA and trace-player channels, ECMDQs, devices), the most the same-time order can rank "
          "(docs/architecture.md, \"Same-time order\"): use fewer");
    return ++last;
  }
  uint64_t fs_;
};

}  // namespace smmu_vp

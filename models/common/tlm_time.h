// Conversions between model-core picoseconds and SystemC time.
//
// Integers end to end: SystemC's time is a count of resolution ticks, and the
// platform keeps the default resolution (1 ps), so a conversion is one
// multiplication or division by a constant read once, instead of
// sc_time(double, unit)'s floating-point scaling and table lookups on every
// access. The results are the same as that constructor's for any time below
// hours of simulated time.
#pragma once

#include <systemc>

#include "common/sim_time.h"

namespace smmu_vp {

// Resolution ticks per picosecond (1 unless a model set a finer resolution
// before elaboration; SystemC freezes the resolution at the first use).
inline uint64_t sc_ticks_per_ps() {
  static const uint64_t ticks = sc_core::sc_time(1, sc_core::SC_PS).value();
  return ticks;
}
inline sc_core::sc_time ps_to_sc(Ps ps) { return sc_core::sc_time::from_value(ps * sc_ticks_per_ps()); }
inline Ps sc_to_ps(const sc_core::sc_time& t) { return static_cast<Ps>(t.value() / sc_ticks_per_ps()); }
inline Ps now_ps() { return sc_to_ps(sc_core::sc_time_stamp()); }

}  // namespace smmu_vp

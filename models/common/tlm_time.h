// Conversions between model-core picoseconds and SystemC time.
#pragma once

#include <systemc>

#include "common/sim_time.h"

namespace smmu_vp {

inline sc_core::sc_time ps_to_sc(Ps ps) { return sc_core::sc_time(static_cast<double>(ps), sc_core::SC_PS); }
inline Ps sc_to_ps(const sc_core::sc_time& t) { return static_cast<Ps>(t.value() / sc_core::sc_time(1, sc_core::SC_PS).value()); }
inline Ps now_ps() { return sc_to_ps(sc_core::sc_time_stamp()); }

}  // namespace smmu_vp

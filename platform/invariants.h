// What a run's results must satisfy to be physically possible: nothing
// carried faster than the wire, the drive or the memory allows, no core or
// app busy more than all of the time, no frame handled that was not offered.
// A violation is a bug in a model or an app, never a finding: the summary
// lists it under "problems" and `smmu-vp run --strict` fails.
#pragma once

#include <string>
#include <vector>

#include "common/stats.h"
#include "config/run_config.h"

namespace smmu_vp {

// Every invariant the results break, one line each naming the stat, its
// value and the bound (empty when they hold). Plain C++: tested without a
// simulation.
std::vector<std::string> invariant_violations(const StatsRegistry& stats, const config::RunConfig& cfg);

// How far apart the two halves of an app's measurement window may be (of
// the larger) before the run is called not steady.
constexpr double kSteadyStateTolerance = 0.10;

// Apps whose window was not a steady state: the bytes the two halves of the
// window carried (sw.<app>.window_bytes_first_half / _second_half) differ by
// more than kSteadyStateTolerance. A warning, not a violation: the result is
// possible, but a transient (a warm-up too short, a backlog growing).
std::vector<std::string> steady_state_warnings(const StatsRegistry& stats);

}  // namespace smmu_vp

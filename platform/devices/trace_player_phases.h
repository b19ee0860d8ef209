// The replay's results per phase of a trace with phase markers (docs/traces.md,
// "Phases"), gathered from the stats registry: the replay app's
// sw.<app>.phase.N.* (calls, per-call latency, by each record's phase) and the
// player's <player>.phase.N.* (accesses, SMMU TLB lookups and misses in the
// phase's window, models/trace_player/phase_windows.h), under the phases'
// names: a table for the run summary, a list for stats.json.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/stats.h"
#include "config/device_type.h"
#include "trace_player/trace_player_core.h"

namespace smmu_vp {

// "" for a trace without phases.
std::string trace_player_phase_summary(const std::string& player, const TraceImage& img, const StatsRegistry& s);
// A JSON array, one object per phase in order; null for a trace without phases.
nlohmann::json trace_player_phase_results(const std::string& player, const TraceImage& img, const StatsRegistry& s);

}  // namespace smmu_vp

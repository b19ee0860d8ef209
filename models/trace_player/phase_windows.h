// The trace player's per-phase counters (docs/traces.md, "Phases"): a trace
// with phase markers splits the replay into windows of simulated time, one
// per phase, each opened when the replay begins the phase (the app writes
// PHASE as its first call of the phase starts; the player's first access of
// it does as much). A window lasts until the next one opens; the last until
// the run's end. Per phase: the device accesses completed (by the phase of
// their record, exact) and the SMMUs' main-TLB lookups and misses in its
// window (by time: what a phase's late work does after the next one opened
// counts there).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/sim_time.h"
#include "common/stats.h"
#include "trace_player/trace_player_core.h"

namespace smmu_vp {

class PhaseWindows {
 public:
  // Registers nothing for a trace without phases.
  PhaseWindows(const std::vector<TracePhase>& phases, StatsRegistry& stats, const std::string& prefix);

  bool active() const { return !windows_.empty(); }
  // The replay began `phase` at `at`: it and every phase before it not yet
  // opened open now (a phase without calls or accesses gets an empty window).
  void enter(uint32_t phase, Ps at);
  void access_done(uint32_t phase);
  // Closes the last window at `end` and writes the stats.
  void finalize(Ps end);

 private:
  struct Window {
    bool open = false;
    Ps start = 0;
    uint64_t lookups = 0, misses = 0;  // the SMMUs' counts when it opened
    Counter* accesses = nullptr;
  };
  uint64_t sum(const std::vector<const Counter*>& cs) const;

  StatsRegistry& stats_;
  std::string prefix_;  // "<player>.phase."
  std::vector<Window> windows_;
  uint32_t opened_ = 0;  // windows opened so far
  bool found_counters_ = false;
  std::vector<const Counter*> lookups_, misses_;  // every SMMU's main TLB
};

}  // namespace smmu_vp

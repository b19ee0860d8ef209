// Timeline events emitted by models (DMA transfers, core activity, interrupts).
// The platform writes them in the Chrome/Perfetto JSON trace format; a model
// holding a null TraceSink* emits nothing.
//
// A model reports an activity whose end it knows as a span(); one whose end it
// does not know yet (a program, a sleep, a transfer in flight) as begin() and
// later end(), so that a run stopping in the middle of it (time limit,
// deadlock, failure) still shows it: finish() closes what is still open at
// the run's end, marked unfinished.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/sim_time.h"

namespace smmu_vp {

using TraceArgs = std::vector<std::pair<std::string, uint64_t>>;

class TraceSink {
 public:
  using SliceId = uint64_t;  // 0 is never a slice

  virtual ~TraceSink() = default;
  // A span on `track` (e.g. "cpu1", "dma0.ch0") from start for duration.
  virtual void span(const std::string& track, const std::string& name, Ps start, Ps duration,
                    const TraceArgs& args = {}) = 0;
  // A point event on `track`.
  virtual void instant(const std::string& track, const std::string& name, Ps at,
                       const TraceArgs& args = {}) = 0;
  // Opens a slice on `track` at `start`; it is written when closed.
  virtual SliceId begin(const std::string& track, const std::string& name, Ps start,
                        const TraceArgs& args = {}) = 0;
  // Closes slice `id` at `at` (not before its start), adding `args`; a
  // non-empty `name` replaces the one given to begin().
  virtual void end(SliceId id, Ps at, const TraceArgs& args = {}, const std::string& name = {}) = 0;
  // Drops slice `id` unwritten (e.g. a sleep that lasted no time).
  virtual void discard(SliceId id) = 0;
  // The run has ended at `end`: closes every slice still open there, with
  // the arg "unfinished": 1.
  virtual void finish(Ps end) = 0;
};

}  // namespace smmu_vp

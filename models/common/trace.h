// Timeline events emitted by models (DMA transfers, core activity, interrupts).
// The platform writes them in the Chrome/Perfetto JSON trace format; a model
// holding a null TraceSink* emits nothing.
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
  virtual ~TraceSink() = default;
  // A span on `track` (e.g. "cpu1", "dma0.ch0") from start for duration.
  virtual void span(const std::string& track, const std::string& name, Ps start, Ps duration,
                    const TraceArgs& args = {}) = 0;
  // A point event on `track`.
  virtual void instant(const std::string& track, const std::string& name, Ps at,
                       const TraceArgs& args = {}) = 0;
};

}  // namespace smmu_vp

// Sees what the SMMU does, for a recorded trace (platform/output/
// dma_trace_recorder.h). Internal: not part of the installed headers.
#pragma once

#include <cstdint>

#include "common/sim_time.h"
#include "smmu/commands.h"

namespace smmu_vp::smmu {

// Called on the SMMU's SystemC threads; must not wait.
class SmmuObserver {
 public:
  virtual ~SmmuObserver() = default;
  // A client transaction with a StreamID, as it arrives (before translation).
  virtual void on_access(uint32_t sid, uint64_t addr, uint64_t len, bool write, Ps at) = 0;
  // A translation fault that was recorded as an event.
  virtual void on_fault(uint32_t sid, uint64_t addr, bool write, Ps at) = 0;
  // A command consumed from a command queue (CMD_SYNC included).
  virtual void on_command(const Command& cmd, Ps at) = 0;
};

}  // namespace smmu_vp::smmu

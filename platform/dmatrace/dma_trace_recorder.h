// `smmu-vp run --record-trace FILE`: writes the run's DMA/IOMMU activity in
// our trace format (traces/README.md): every DMA-API call sw/ makes (through
// hal_dma_trace), every client transaction the SMMU receives, its faults and
// the commands it executes. Replaying the file on the same configuration
// (app trace_replay, docs/traces.md) gives the same commands and translations.
//
// Records are written as they happen; their times are each source's own
// (a core's local time, the SMMU's), so the file is not strictly sorted by
// time: the reader of a trace sorts (the trace player does).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/sim_time.h"
#include "dmatrace/dma_trace.h"
#include "hal/hal.h"
#include "smmu/smmu.h"
#include "smmu/smmu_observer.h"

namespace smmu_vp {

namespace config { struct RunConfig; }

class DmaTraceRecorder : public smmu::SmmuObserver {
 public:
  // Throws dmatrace::TraceError when the file cannot be written.
  DmaTraceRecorder(const std::string& path, const config::RunConfig& cfg);

  // A DMA-API call made on `cpu` at `at` (when it began).
  void dma_call(unsigned cpu, Ps at, const hal_dma_call& call);

  void on_access(uint32_t sid, uint64_t addr, uint64_t len, bool write, Ps at) override;
  void on_fault(uint32_t sid, uint64_t addr, bool write, Ps at) override;
  void on_command(const smmu::Command& cmd, Ps at) override;

  void close();
  uint64_t records() const { return writer_.records(); }
  // Why recording stopped early ("" while all is well).
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }

 private:
  void write(dmatrace::Record& r, uint32_t sid, Ps at);

  std::string path_;
  dmatrace::TraceWriter writer_;
  std::map<uint32_t, std::string> device_of_sid_;
  dmatrace::Record rec_;  // reused: its strings keep their capacity
  std::string error_;
};

}  // namespace smmu_vp

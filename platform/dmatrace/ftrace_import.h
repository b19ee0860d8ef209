// Linux ftrace text -> our trace records. Reads what /sys/kernel/tracing/trace
// and `trace-cmd report` print for the iommu:* and dma:* events (layouts of
// include/trace/events/iommu.h and dma.h; both the older and the newer
// variants, docs/traces.md), keeping each line's task, pid, CPU and time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "dmatrace/dma_trace.h"

namespace smmu_vp::dmatrace {

struct ImportOptions {
  // StreamID of records whose event names no device (iommu:map/unmap) and of
  // devices not in `device_sids`.
  uint32_t default_sid = 0;
  // Device name (as the dma:/iommu: event prints it, e.g. "0000:01:00.0") -> StreamID.
  std::map<std::string, uint32_t> device_sids;
  // Devices not in device_sids get default_sid + 1, + 2, ... in order of
  // first appearance when true; default_sid when false.
  bool number_devices = true;
  bool skip_malformed = false;  // count and skip a malformed line of a known event
};

struct ImportStats {
  uint64_t lines = 0;
  uint64_t records = 0;            // written
  uint64_t unknown_events = 0;     // events we do not import (counted, skipped)
  uint64_t malformed_skipped = 0;  // with skip_malformed
  uint64_t other_lines = 0;        // headers, comments, blank lines, "CPU n buffer started"
  std::map<std::string, uint64_t> by_event;  // imported lines per event name
  std::map<std::string, uint32_t> device_sids;  // every device seen and the StreamID it got
};

// Parses one line. Returns true and fills `out` for a line of an imported
// event; false for any other line (with stats updated). Throws TraceError
// naming `line_no` and the field for a malformed line of a known event
// (unless skip_malformed).
class FtraceImporter {
 public:
  explicit FtraceImporter(ImportOptions opt = {});
  bool parse_line(const char* line, size_t len, uint64_t line_no, Record& out);
  const ImportStats& stats() const { return stats_; }

 private:
  ImportOptions opt_;
  ImportStats stats_;
};

// Reads `in` (plain or gzip), writes `out` in our format. Throws TraceError.
ImportStats import_ftrace(const std::string& in, const std::string& out, const ImportOptions& opt,
                          const std::function<void(uint64_t lines)>& progress = nullptr);

}  // namespace smmu_vp::dmatrace

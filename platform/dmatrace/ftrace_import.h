// Linux ftrace text -> our trace records. Reads what /sys/kernel/tracing/trace
// and `trace-cmd report` print for the iommu:* and dma:* events (layouts of
// include/trace/events/iommu.h and dma.h; both the older and the newer
// variants, traces/README.md "Importing Linux ftrace"), keeping each line's
// task, pid, CPU and time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dmatrace/dma_trace.h"
#include "dmatrace/domain_recovery.h"

namespace smmu_vp::dmatrace {

struct ImportOptions {
  // StreamID of records whose event names no device (iommu:map/unmap) and of
  // devices not in `device_sids`.
  uint32_t default_sid = 0;
  // Device name (as the dma:/iommu: event prints it, e.g. "0000:01:00.0") -> StreamID.
  std::map<std::string, uint32_t> device_sids;
  // Devices not in device_sids get default_sid + 1, + 2, ... in order of
  // first appearance when true (skipping StreamIDs device_sids gives out);
  // default_sid when false.
  bool number_devices = true;
  bool skip_malformed = false;  // count and skip a malformed line of a known event
  // iommu:map / iommu:unmap events that name no device go to the DMA domain
  // recovered from the trace (domain_recovery.h); false: all to default_sid.
  bool recover_domains = true;
  // import_ftrace's read buffer, which bounds a line (at least 4096): no
  // ftrace line comes near 1 MiB, so a longer one is not ftrace text. Small
  // in the fuzz harness, so that its inputs reach the long-line path.
  size_t read_buffer_bytes = 1u << 20;
};

struct ImportStats {
  uint64_t lines = 0;
  uint64_t records = 0;            // written
  uint64_t unknown_events = 0;     // events we do not import (counted, skipped)
  uint64_t malformed_skipped = 0;  // with skip_malformed
  uint64_t other_lines = 0;        // headers, comments, blank lines, "CPU n buffer started"
  std::map<std::string, uint64_t> by_event;  // imported lines per event name
  std::map<std::string, uint32_t> device_sids;  // every device seen and the StreamID it got
  DomainRecoveryStats recovery;  // iommu:map/unmap events without a device (recover_domains)
};

// Parses one line. Returns true and fills `out` for a line of an imported
// event; false for any other line (with stats updated). Throws TraceError
// naming `source`, `line_no` and the field for a malformed line of a known
// event (unless skip_malformed). `out` is reused: pass the same Record for
// every line so its strings and segments keep their storage.
class FtraceImporter {
 public:
  explicit FtraceImporter(ImportOptions opt = {}, std::string source = "<ftrace>");
  bool parse_line(const char* line, size_t len, uint64_t line_no, Record& out);
  const ImportStats& stats() const { return stats_; }
  ImportStats& stats() { return stats_; }

 private:
  // A dma_map_sg mapping not yet unmapped: dma_unmap_sg prints only the
  // physical addresses, so its IOVA and size come from here.
  struct LiveSg {
    uint64_t iova;
    uint64_t size;
    std::vector<Segment> segs;
  };
  struct SgKeyHash {
    size_t operator()(const std::pair<uint32_t, uint64_t>& k) const {
      return std::hash<uint64_t>()(k.second * 31 + k.first);
    }
  };

  void parse_fields(int ev, const char* p, const char* e, Record& out);  // ev: index in the event table
  uint32_t device(std::string_view name, Record& out);  // sets out.dev and out.sid; returns its index
  void recover_domain(Record& out);  // an iommu:map/unmap without a device

  ImportOptions opt_;
  std::string source_;
  ImportStats stats_;
  std::vector<uint64_t*> event_count_;  // per event of the table: its by_event counter (null until seen)
  std::vector<std::pair<std::string, uint32_t>> devices_;  // in order of first appearance
  size_t last_device_ = 0;
  uint32_t next_sid_;
  std::set<uint32_t> explicit_sids_;
  std::unordered_map<std::pair<uint32_t, uint64_t>, LiveSg, SgKeyHash> live_sg_;
  std::vector<uint64_t> dma_addrs_, lengths_, phys_addrs_;  // scratch, reused
  DomainRecovery domains_;
};

// Reads `in` (plain or gzip), writes `out` in our format (gzip when it ends in
// ".gz"). `out` appears only when the whole input converted: the records go
// to a temporary file beside it, renamed at the end and removed on error.
// `progress` is called every 64 Ki lines. Throws TraceError.
ImportStats import_ftrace(const std::string& in, const std::string& out, const ImportOptions& opt,
                          const std::function<void(uint64_t lines)>& progress = nullptr);

}  // namespace smmu_vp::dmatrace

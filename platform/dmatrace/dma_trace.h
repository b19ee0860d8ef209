// DMA/IOMMU activity traces: the records of our own text format
// (traces/README.md, "smmu-vp-trace" version 1), a streaming reader (plain or
// gzip, detected from the content) and a writer (gzip when the file name ends
// in ".gz"). Plain C++, no SystemC: the recorder, the ftrace importer, the
// trace player's loader and the tests share it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace smmu_vp::dmatrace {

inline constexpr unsigned kFormatVersion = 1;
inline constexpr uint32_t kNoSid = 0xffffffffu;
inline constexpr uint64_t kNoAddr = ~0ull;

// What a record describes. The DMA-API ops are what sw/ (or a kernel) called;
// kIommuMap/kIommuUnmap are IOMMU-API calls at a fixed IOVA (Linux's
// iommu:map/unmap); kAccess is a device's read or write through the SMMU;
// kCommand is an SMMU command the SMMU executed (informational: a replay
// ignores it, the round-trip test compares it); kMark is a marker a program
// wrote into the trace (Linux's trace_marker), `text` holding it: a marker
// "phase NAME" opens a phase (dmatrace/phases.h).
enum class Op : uint8_t {
  kMap,          // dma_map_page/single/phys: iova, pa, size, dir
  kUnmap,        // dma_unmap_page/single/phys: iova, size, dir
  kMapSg,        // dma_map_sg: iova (first element), size (sum), dir, segs
  kUnmapSg,      // dma_unmap_sg: iova, size, dir, segs (may be empty)
  kSyncForCpu,   // dma_sync_*_for_cpu: iova, size, dir
  kSyncForDevice,// dma_sync_*_for_device: iova, size, dir
  kAlloc,        // dma_alloc (coherent): iova, pa, size
  kFree,         // dma_free: iova, size
  kIommuMap,     // iommu_map: iova, pa, size
  kIommuUnmap,   // iommu_unmap: iova, size
  kAccess,       // device access: sid, iova, size, write
  kAttach,       // attach the device (sid) to a domain (asid when known)
  kDetach,       // detach it
  kFault,        // page fault reported for sid at iova (write when known)
  kCommand,      // SMMU command: opcode name in `text`, iova/asid/size when it has them
  kMark,         // a marker: its text in `text`
};
inline constexpr unsigned kOpCount = 16;

enum class Dir : uint8_t { kBidirectional = 0, kToDevice = 1, kFromDevice = 2, kNone = 3 };

struct Segment {
  uint64_t pa = 0;
  uint64_t len = 0;
  bool operator==(const Segment& o) const { return pa == o.pa && len == o.len; }
};

struct Record {
  uint64_t time_ns = 0;        // in the file: in the header's time unit; here always ns
  Op op = Op::kMap;
  int32_t cpu = -1;            // -1: not known (device accesses)
  uint32_t sid = kNoSid;       // StreamID; kNoSid: not known
  Dir dir = Dir::kNone;        // DMA-API direction
  bool write = false;          // kAccess / kFault: a write
  uint64_t iova = kNoAddr;
  uint64_t pa = kNoAddr;
  uint64_t size = 0;
  uint32_t asid = 0xffffffffu; // kAttach / kCommand: ASID when known
  int64_t pid = -1;            // from ftrace: the task's pid
  std::string dev;             // device name ("" unknown), e.g. "nic0" or "0000:01:00.0"
  std::string task;            // from ftrace: the task's comm
  std::string text;            // kCommand: opcode name, e.g. "TLBI_NH_VA"; kMark: the marker's text
  std::vector<Segment> segs;   // kMapSg / kUnmapSg
};

// The end (exclusive) of the range a record names: a zero size still names
// its address; a range past the top of the address space ends there.
inline uint64_t range_end(uint64_t iova, uint64_t size) {
  const uint64_t n = size ? size : 1;
  return iova + n < iova ? ~0ull : iova + n;
}

// Every member equal (the round-trip tests compare records).
bool operator==(const Record& a, const Record& b);
inline bool operator!=(const Record& a, const Record& b) { return !(a == b); }

const char* op_name(Op op);          // "map", "unmap", "map_sg", ... as in the file
std::optional<Op> op_from_name(const std::string& name);
const char* dir_name(Dir d);         // "bidirectional", "to_device", "from_device", "none"
std::optional<Dir> dir_from_name(const std::string& name);

// A malformed file: `line` is 1-based (0: the file as a whole).
class TraceError : public std::runtime_error {
 public:
  TraceError(const std::string& file, uint64_t line, const std::string& what);
  uint64_t line() const { return line_; }

 private:
  uint64_t line_;
};

// Streams the records of a trace file, in file order. Blank lines and lines
// starting with '#' after the header are skipped; CRLF is accepted.
struct ReaderOptions {
  bool skip_malformed = false;  // count and skip a bad record line instead of throwing
  // Bytes per read and for zlib's input buffer (at least 4096): large for
  // throughput on big traces; small where many tiny inputs are opened (fuzzing).
  size_t block_bytes = 1u << 20;
  // Where the tool that wrote the file left notes (lines "# smmu-vp ..."
  // after the header, e.g. the importer's domain recovery): when set, they
  // are kept here without the "# ", the first 64 of at most 1 KiB each.
  std::vector<std::string>* notes = nullptr;
};
class TraceReader {
 public:
  // Throws TraceError when the file cannot be opened or its header is not
  // "smmu-vp-trace <version> <unit>" with a version this build reads.
  explicit TraceReader(const std::string& path, ReaderOptions opt = {});
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  // The next record, or false at the end. Throws TraceError naming the line
  // and the field for a malformed line (unless skip_malformed).
  bool next(Record& out);
  uint64_t line() const;             // last line read
  uint64_t malformed_skipped() const;

 private:
  void keep_note(std::string_view comment);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Writes records; the header on construction. Throws TraceError when the
// file cannot be written. close() (or the destructor) flushes.
class TraceWriter {
 public:
  explicit TraceWriter(const std::string& path);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  void write(const Record& r);
  // A '#' comment line (e.g. where the trace came from).
  void comment(const std::string& text);
  void close();
  uint64_t records() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One record as its file line (no newline, time in ns), and back: the writer
// and the reader use these. parse_record takes the time in units of
// `ns_per_unit` (the header's unit: ps 0.001, ns 1, us 1000) and throws
// std::invalid_argument naming the field that is wrong.
std::string format_record(const Record& r);
Record parse_record(const std::string& line, double ns_per_unit = 1.0);

// The same without allocating per line (the reader and writer's hot path):
// format_record appends to `out`; parse_record overwrites every member of
// `out`, reusing its strings' and vector's storage.
void format_record(const Record& r, std::string& out);
void parse_record(std::string_view line, double ns_per_unit, Record& out);

}  // namespace smmu_vp::dmatrace

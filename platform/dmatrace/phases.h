// Phases of a trace: a `mark` record whose text is "phase NAME" (what a
// program wrote to Linux's trace_marker, kept by the ftrace importer) opens
// the phase NAME, which lasts until the next such marker; the records before
// the first one form a leading phase without a name. Other markers are kept
// as records but open nothing. `smmu-vp trace stats` and the trace player
// (per-phase replay results) share these rules (docs/traces.md, "Phases").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dmatrace/dma_trace.h"

namespace smmu_vp::dmatrace {

// The leading phase's name in reports: no marker named it.
inline constexpr const char* kLeadingPhaseName = "(before first phase)";

// NAME of a "phase NAME" marker (spaces around NAME dropped); nullopt for any
// other record, and for a marker "phase" without a name.
std::optional<std::string_view> phase_name(const Record& r);

// What `trace stats` reports of one phase.
struct PhaseSummary {
  std::string name;            // kLeadingPhaseName for the leading phase
  uint64_t mark_line = 0;      // the marker's line in the file (0: leading phase)
  uint64_t mark_time_ns = 0;   // the marker's time (leading phase: its first record's)
  uint64_t records = 0;        // records in the phase, its own marker not counted
  std::map<Op, uint64_t> by_op;
  uint64_t bytes_mapped = 0;   // map, map_sg, alloc, iommu_map
  uint64_t bytes_unmapped = 0; // unmap, unmap_sg, free, iommu_unmap
  uint64_t t_min = UINT64_MAX, t_max = 0;  // its records' times, the marker's included
};

// Splits a stream of records (file order) into phases. The leading phase is
// kept only when it holds records.
class PhaseSplitter {
 public:
  // `line`: the record's line in the file (for the report).
  void add(const Record& r, uint64_t line);
  // Every phase, in file order; empty when the trace has no phase marker.
  std::vector<PhaseSummary> phases() const;

 private:
  PhaseSummary leading_ = leading();
  static PhaseSummary leading() {
    PhaseSummary p;
    p.name = kLeadingPhaseName;
    return p;
  }
  std::vector<PhaseSummary> named_;
};

// The bytes a record maps (map, map_sg, alloc, iommu_map) or unmaps.
bool maps_bytes(Op op);
bool unmaps_bytes(Op op);

}  // namespace smmu_vp::dmatrace

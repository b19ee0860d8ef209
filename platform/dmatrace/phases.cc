#include "dmatrace/phases.h"

#include <algorithm>

namespace smmu_vp::dmatrace {

namespace {
constexpr std::string_view kPhaseWord = "phase";

bool blank(char c) { return c == ' ' || c == '\t'; }
}  // namespace

std::optional<std::string_view> phase_name(const Record& r) {
  if (r.op != Op::kMark) return std::nullopt;
  std::string_view t = r.text;
  if (t.size() <= kPhaseWord.size() || t.compare(0, kPhaseWord.size(), kPhaseWord) != 0 ||
      !blank(t[kPhaseWord.size()]))
    return std::nullopt;
  t.remove_prefix(kPhaseWord.size());
  // Spaces around the name, and the newline `echo` leaves in a marker.
  while (!t.empty() && (blank(t.front()) || t.front() == '\n' || t.front() == '\r')) t.remove_prefix(1);
  while (!t.empty() && (blank(t.back()) || t.back() == '\n' || t.back() == '\r')) t.remove_suffix(1);
  if (t.empty()) return std::nullopt;
  return t;
}

bool maps_bytes(Op op) { return op == Op::kMap || op == Op::kMapSg || op == Op::kAlloc || op == Op::kIommuMap; }
bool unmaps_bytes(Op op) {
  return op == Op::kUnmap || op == Op::kUnmapSg || op == Op::kFree || op == Op::kIommuUnmap;
}

void PhaseSplitter::add(const Record& r, uint64_t line) {
  if (const auto name = phase_name(r)) {
    PhaseSummary p;
    p.name = std::string(*name);
    p.mark_line = line;
    p.mark_time_ns = r.time_ns;
    p.t_min = p.t_max = r.time_ns;
    named_.push_back(std::move(p));
    return;
  }
  PhaseSummary& p = named_.empty() ? leading_ : named_.back();
  if (!p.records && named_.empty()) p.mark_time_ns = r.time_ns;
  ++p.records;
  ++p.by_op[r.op];
  p.t_min = std::min(p.t_min, r.time_ns);
  p.t_max = std::max(p.t_max, r.time_ns);
  if (maps_bytes(r.op)) p.bytes_mapped += r.size;
  if (unmaps_bytes(r.op)) p.bytes_unmapped += r.size;
}

std::vector<PhaseSummary> PhaseSplitter::phases() const {
  std::vector<PhaseSummary> out;
  if (named_.empty()) return out;
  if (leading_.records) out.push_back(leading_);
  out.insert(out.end(), named_.begin(), named_.end());
  return out;
}

}  // namespace smmu_vp::dmatrace

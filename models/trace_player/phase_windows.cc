#include "trace_player/phase_windows.h"

#include <algorithm>

namespace smmu_vp {

namespace {

// "<smmu>.tlb.<what>": an SMMU's main TLB (a TBU's is "<smmu>.tbu.<name>.tlb.<what>").
bool main_tlb_counter(const std::string& path, const std::string& what) {
  const std::string tail = ".tlb." + what;
  return path.size() > tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0 &&
         path.find('.') == path.size() - tail.size();
}

}  // namespace

PhaseWindows::PhaseWindows(const std::vector<TracePhase>& phases, StatsRegistry& stats, const std::string& prefix)
    : stats_(stats), prefix_(prefix + ".phase.") {
  windows_.resize(phases.size());
  for (size_t i = 0; i < phases.size(); ++i) windows_[i].accesses = &stats.counter(prefix_ + std::to_string(i) + ".accesses");
}

uint64_t PhaseWindows::sum(const std::vector<const Counter*>& cs) const {
  uint64_t n = 0;
  for (const Counter* c : cs) n += c->value();
  return n;
}

void PhaseWindows::enter(uint32_t phase, Ps at) {
  if (phase >= windows_.size() || phase < opened_) return;
  // The SMMUs exist once the replay runs (they may be built after the player).
  if (!found_counters_) {
    found_counters_ = true;
    for (const std::string& p : stats_.paths()) {
      const Counter* c = stats_.find_counter(p);
      if (!c) continue;
      if (main_tlb_counter(p, "lookups")) lookups_.push_back(c);
      if (main_tlb_counter(p, "misses")) misses_.push_back(c);
    }
  }
  const uint64_t l = sum(lookups_), m = sum(misses_);
  // A register write lands a little after the moment it is made: windows never go back in time.
  if (opened_) at = std::max(at, windows_[opened_ - 1].start);
  for (; opened_ <= phase; ++opened_) {
    Window& w = windows_[opened_];
    w.open = true;
    w.start = at;
    w.lookups = l;
    w.misses = m;
  }
}

void PhaseWindows::access_done(uint32_t phase) {
  if (phase < windows_.size()) windows_[phase].accesses->add();
}

void PhaseWindows::finalize(Ps end) {
  if (windows_.empty()) return;
  const uint64_t l = sum(lookups_), m = sum(misses_);
  for (size_t i = 0; i < windows_.size(); ++i) {
    const Window& w = windows_[i];
    const std::string p = prefix_ + std::to_string(i) + ".";
    if (!w.open) continue;  // the run ended before the replay got there
    const bool last = i + 1 >= opened_;
    const Window* next = last ? nullptr : &windows_[i + 1];
    const Ps close = next ? next->start : std::max(end, w.start);
    stats_.value(p + "start_ns") = ps_to_ns(w.start);
    stats_.value(p + "window_ns") = ps_to_ns(close - w.start);
    stats_.counter(p + "tlb_lookups").add((next ? next->lookups : l) - w.lookups);
    stats_.counter(p + "tlb_misses").add((next ? next->misses : m) - w.misses);
  }
}

}  // namespace smmu_vp

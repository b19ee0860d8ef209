#include "devices/trace_player_phases.h"

#include <fmt/format.h>

#include "util/human.h"

namespace smmu_vp {

namespace {

// The replay app's stats ("sw.<instance>."): the instance that recorded
// per-phase stats ("" when none did, e.g. no call was replayed).
std::string app_prefix(const StatsRegistry& s) {
  for (const std::string& p : s.paths()) {
    if (p.compare(0, 3, "sw.") != 0) continue;
    const size_t dot = p.find('.', 3);
    if (dot != std::string::npos && p.compare(dot, 7, ".phase.") == 0) return p.substr(0, dot + 1);
  }
  return "";
}

// The per-call latencies the app records (trace_replay.c), in report order.
constexpr const char* kCallStats[] = {"map_ns",  "unmap_ns", "map_sg_ns",      "unmap_sg_ns", "sync_ns",
                                      "alloc_ns", "free_ns", "iommu_map_ns", "iommu_unmap_ns"};

}  // namespace

std::string trace_player_phase_summary(const std::string& player, const TraceImage& img, const StatsRegistry& s) {
  if (img.phases.empty()) return "";
  const std::string app = app_prefix(s);
  // The leading phase only when it holds something.
  const auto shown = [&](size_t i) { return i > 0 || img.phases[0].records || img.phases[0].accesses; };
  std::string out = fmt::format("  {}: per phase (stats.json {}.phases; TLB: the SMMUs' main TLBs in the phase's "
                                "window of simulated time)\n",
                                player, player);
  constexpr const char* kRow = "    {:<24}{:>8}{:>10}{:>13}{:>10}{:>9}{:>13}{:>13}\n";
  out += fmt::format(kRow, "phase", "calls", "accesses", "TLB lookups", "misses", "hits", "starts at", "window");
  for (size_t i = 0; i < img.phases.size(); ++i) {
    if (!shown(i)) continue;
    const std::string a = app + "phase." + std::to_string(i) + ".";
    const std::string p = player + ".phase." + std::to_string(i) + ".";
    const uint64_t lookups = s.counter_value(p + "tlb_lookups"), misses = s.counter_value(p + "tlb_misses");
    const bool reached = s.find_value(p + "start_ns") != nullptr;
    out += fmt::format(
        kRow, img.phases[i].name, app.empty() ? 0 : s.counter_value(a + "calls"), s.counter_value(p + "accesses"),
        lookups, misses,
        lookups ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(lookups - misses) / static_cast<double>(lookups))
                : std::string("-"),
        reached ? human_ns(s.value_or_zero(p + "start_ns")) : std::string("not reached"),
        reached ? human_ns(s.value_or_zero(p + "window_ns")) : std::string("-"));
  }
  // Per-call latency, one row per phase and kind of call it made.
  constexpr const char* kCallRow = "    {:<24}{:<16}{:>8}{:>12}{:>12}{:>12}{:>12}\n";
  bool header = false;
  for (size_t i = 0; i < img.phases.size() && !app.empty(); ++i) {
    if (!shown(i)) continue;
    for (const char* stat : kCallStats) {
      const Histogram* h = s.find_histogram(app + "phase." + std::to_string(i) + "." + stat);
      if (!h || !h->count()) continue;
      if (!header) out += fmt::format(kCallRow, "phase", "call", "count", "mean", "p50", "p99", "max");
      header = true;
      const std::string call(stat, std::char_traits<char>::length(stat) - 3);  // "map_ns" -> "map"
      out += fmt::format(kCallRow, img.phases[i].name, call, h->count(), human_ns(h->mean()),
                         human_ns(h->percentile(50)), human_ns(h->percentile(99)), human_ns(h->max()));
    }
  }
  return out;
}

nlohmann::json trace_player_phase_results(const std::string& player, const TraceImage& img, const StatsRegistry& s) {
  if (img.phases.empty()) return nullptr;
  const std::string app = app_prefix(s);
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < img.phases.size(); ++i) {
    const TracePhase& ph = img.phases[i];
    const std::string a = app + "phase." + std::to_string(i) + ".";
    const std::string p = player + ".phase." + std::to_string(i) + ".";
    nlohmann::json o = {{"index", i},
                        {"name", ph.name},
                        {"trace_start_ns", ph.time_ns},
                        {"records", ph.records},
                        {"calls", app.empty() ? 0 : s.counter_value(a + "calls")},
                        {"accesses", s.counter_value(p + "accesses")},
                        {"tlb_lookups", s.counter_value(p + "tlb_lookups")},
                        {"tlb_misses", s.counter_value(p + "tlb_misses")}};
    // Where the replay got to it: absent when the run ended before.
    if (s.find_value(p + "start_ns")) {
      o["replay_start_ns"] = s.value_or_zero(p + "start_ns");
      o["replay_window_ns"] = s.value_or_zero(p + "window_ns");
    }
    for (const char* stat : kCallStats)
      if (const Histogram* h = app.empty() ? nullptr : s.find_histogram(a + stat); h && h->count())
        o[stat] = StatsRegistry::histogram_json(*h);
    list.push_back(std::move(o));
  }
  return list;
}

}  // namespace smmu_vp

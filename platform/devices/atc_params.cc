#include "devices/atc_params.h"

#include <fmt/format.h>

namespace smmu_vp {

const config::ParamTable<AtcConfig>& atc_params() {
  static const config::ParamTable<AtcConfig> t = [] {
    config::ParamTable<AtcConfig> p;
    using C = AtcConfig;
    p.add("entries", &C::entries, 0, 1 << 16, "entries", "Translations the ATC holds (fully associative, LRU); 0: the device does not use ATS and its DMA is untranslated.");
    p.choice("replacement", &C::replacement, {{"lru", AtcConfig::Replacement::kLru}, {"fifo", AtcConfig::Replacement::kFifo}},
             "Which entry a fill replaces in a full ATC: the least recently used or the oldest fill.");
    p.add("lookup_ns", &C::lookup_ns, 0, 1e6, "ns", "One ATC lookup, hit or miss (a guess: a few cycles of an on-chip cache).");
    p.add("invalidate_ns", &C::invalidate_ns, 0, 1e6, "ns", "The device's work for one Invalidation Request before it answers, besides waiting for accesses through a removed entry (a guess).");
    p.add("pri", &C::pri, "PRI: an access the SMMU gave no translation for asks software for the page with a Page Request and waits for the answer (needs platform.smmu.features.pri, and an app that serves the PRI queue, iopf_bench); off: it goes untranslated and faults.");
    p.add("request_rtt_ns", &C::request_rtt_ns, 0, 1e6, "ns", "A Translation Request's round trip over the link, on top of the SMMU's own time for it (a guess: twice platform.smmu.ats.pcie_latency_ns).");
    return p;
  }();
  return t;
}

std::string atc_summary(const std::string& name, const StatsRegistry& s) {
  const uint64_t lookups = s.counter_value(name + ".atc.lookups");
  if (!lookups) return "";
  return fmt::format("  {}: ATC {} lookups, {:.1f} % hits, {} fills ({} evictions), {} invalidations removed {} entries\n",
                     name, lookups, 100.0 * static_cast<double>(s.counter_value(name + ".atc.hits")) / lookups,
                     s.counter_value(name + ".atc.fills"), s.counter_value(name + ".atc.evictions"),
                     s.counter_value(name + ".atc.invalidations"), s.counter_value(name + ".atc.invalidated"));
}

}  // namespace smmu_vp

#include "devices/atc_params.h"

namespace smmu_vp {

const config::ParamTable<AtcConfig>& atc_params() {
  static const config::ParamTable<AtcConfig> t = [] {
    config::ParamTable<AtcConfig> p;
    using C = AtcConfig;
    p.add("entries", &C::entries, 0, 1 << 16, "entries", "Translations the ATC holds (fully associative, LRU); 0: the device does not use ATS and its DMA is untranslated.");
    p.add("lookup_ns", &C::lookup_ns, 0, 1e6, "ns", "One ATC lookup, hit or miss (a guess: a few cycles of an on-chip cache).");
    p.add("invalidate_ns", &C::invalidate_ns, 0, 1e6, "ns", "The device's work for one Invalidation Request before it answers, besides waiting for accesses through a removed entry (a guess).");
    p.add("request_rtt_ns", &C::request_rtt_ns, 0, 1e6, "ns", "A Translation Request's round trip over the link, on top of the SMMU's own time for it (a guess: twice platform.smmu.ats.pcie_latency_ns).");
    return p;
  }();
  return t;
}

}  // namespace smmu_vp

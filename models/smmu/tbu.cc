#include "smmu/tbu.h"

namespace smmu_vp::smmu {

namespace {
TlbConfig micro_config(const TbuParams& p, uint64_t seed) {
  TlbConfig c = p.tlb;  // same invalidation behaviour as the main TLB
  c.entries = c.ways = p.micro_tlb_entries;  // fully associative
  c.replacement = ReplacementPolicy::kLru;
  c.seed = seed;
  return c;
}
}  // namespace

Tbu::Tbu(const std::string& name, const TbuParams& params, uint64_t seed, StatsRegistry& stats,
         const std::string& prefix)
    : translations(stats.counter(prefix + ".translations")),
      hits(stats.counter(prefix + ".hits")),
      misses(stats.counter(prefix + ".misses")),
      slot_waits(stats.counter(prefix + ".slot_waits")),
      slot_wait_ns(stats.histogram(prefix + ".slot_wait_ns", "ns", 1000.0)),
      latency_ns(stats.histogram(prefix + ".translation_latency_ns", "ns", 1000.0)),
      invalidations(stats.counter(prefix + ".invalidations")),
      syncs(stats.counter(prefix + ".syncs")),
      name_(name),
      params_(params),
      tlb_([&] {
        TlbConfig c = params.tlb;
        c.seed = seed;
        return c;
      }(), &stats, prefix + ".tlb"),
      micro_(params.micro_tlb_entries
                 ? std::make_unique<Tlb>(micro_config(params, seed), &stats, prefix + ".micro_tlb")
                 : nullptr),
      slots_(prefix + ".translation_slots", params.translation_slots),
      tlb_lookup_ps_(ns_to_ps(params.tlb_lookup_ns)),
      micro_tlb_lookup_ps_(ns_to_ps(params.micro_tlb_lookup_ns)),
      stats_(stats),
      prefix_(prefix) {}

void Tbu::finish(Ps end) {
  if (end == 0) return;
  stats_.value(prefix_ + ".slot_utilisation") =
      static_cast<double>(slots_.busy_time()) / (static_cast<double>(end) * slots_.slots());
  if (slots_.has_window()) stats_.value(prefix_ + ".slot_utilisation_in_window") = slots_.window_utilisation();
}

}  // namespace smmu_vp::smmu

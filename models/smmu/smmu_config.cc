#include "smmu/smmu_config.h"

namespace smmu_vp::smmu {

namespace {

using check::at_least_one;
using check::require;

// entries / ways sets of ways entries each.
void check_geometry(unsigned entries, unsigned ways, const std::string& at) {
  at_least_one(entries, at + ".entries");
  at_least_one(ways, at + ".ways");
  require(entries % ways == 0, at + ".ways",
          "entries (" + std::to_string(entries) + ") must be a multiple of ways (" + std::to_string(ways) + ")");
}

void check_distributed(const TranslatorConfig& t, bool stale_check) {
  const DistributedConfig& d = t.distributed;
  if (!d.enabled()) return;
  const std::string at = "translation.distributed";
  require(t.micro_tlb_entries == 0, "translation.micro_tlb_entries",
          "with TBUs the micro-TLBs are the TBUs' (distributed.tbu.micro_tlb_entries); must be 0");
  require(!stale_check, "stale_check", "is not available with TBUs (a TBU's hits are not checked)");
  check_geometry(d.tbu.tlb.entries, d.tbu.tlb.ways, at + ".tbu.tlb");
  at_least_one(d.tbu.translation_slots, at + ".tbu.translation_slots");
  check::time(d.tbu.tlb_lookup_ns, at + ".tbu.tlb_lookup_ns");
  check::time(d.tbu.micro_tlb_lookup_ns, at + ".tbu.micro_tlb_lookup_ns");
  check::time(d.dti.latency_ns, at + ".dti.latency_ns");
  check::time(d.dti.message_ns, at + ".dti.message_ns");
  for (size_t p = 0; p < d.port_tbu.size(); ++p)
    require(d.port_tbu[p] < d.tbus.size(), at + ".port_tbu." + std::to_string(p),
            "TBU " + std::to_string(d.port_tbu[p]) + " does not exist (" + std::to_string(d.tbus.size()) + " TBUs)");
}

}  // namespace

void SmmuConfig::validate() const {
  const std::vector<std::string> problems = features.validate();
  require(problems.empty(), "features", problems.empty() ? "" : "not a valid SMMU: " + problems.front());
  const TranslatorConfig& t = translation;
  check_geometry(t.tlb.entries, t.tlb.ways, "translation.tlb");
  check_geometry(t.walk_cache.entries, t.walk_cache.ways, "translation.walk_cache");
  check::time(t.walk.step_ns, "translation.walk.step_ns");
  at_least_one(t.translation_slots, "translation.translation_slots");
  at_least_one(t.walker_slots, "translation.walker_slots");
  check::time(t.tlb_lookup_ns, "translation.tlb_lookup_ns");
  check::time(t.micro_tlb_lookup_ns, "translation.micro_tlb_lookup_ns");
  check::time(t.config_lookup_ns, "translation.config_lookup_ns");
  check_distributed(t, stale_check);
  check::time(reg_latency_ns, "reg_latency_ns");
  check::time(bypass_latency_ns, "bypass_latency_ns");
  at_least_one(cmdq.fetch_batch, "cmdq.fetch_batch");
  at_least_one(cmdq.lanes, "cmdq.lanes");
  const std::pair<double, const char*> times[] = {
      {cmdq.decode_ns, "decode_ns"},     {cmdq.cfgi_ns, "cfgi_ns"},
      {cmdq.tlbi_ns, "tlbi_ns"},         {cmdq.tlbi_context_ns, "tlbi_context_ns"},
      {cmdq.tlbi_per_entry_ns, "tlbi_per_entry_ns"}, {cmdq.tlbi_range_ns, "tlbi_range_ns"},
      {cmdq.sync_ns, "sync_ns"},         {cmdq.prefetch_ns, "prefetch_ns"},
      {cmdq.other_ns, "other_ns"}};
  for (const auto& [ns, name] : times) check::time(ns, std::string("cmdq.") + name);
  check::time(ats.pcie_latency_ns, "ats.pcie_latency_ns");
  check::time(ats.message_ns, "ats.message_ns");
  check::time(ats.atc_inv_timeout_us, "ats.atc_inv_timeout_us");
}

}  // namespace smmu_vp::smmu

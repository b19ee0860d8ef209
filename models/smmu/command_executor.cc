#include "smmu/command_executor.h"

#include "common/stats.h"
#include "smmu/translator.h"

namespace smmu_vp::smmu {

const char* to_string(CommandClass c) {
  switch (c) {
    case CommandClass::kCfgi: return "cfgi";
    case CommandClass::kTlbi: return "tlbi";
    case CommandClass::kTlbiRange: return "tlbi_range";
    case CommandClass::kSync: return "sync";
    case CommandClass::kPrefetch: return "prefetch";
    case CommandClass::kAtc: return "atc";
    case CommandClass::kOther: return "other";
  }
  return "other";
}

bool is_whole_context_tlbi(Opcode op) {
  switch (op) {
    case Opcode::kTlbiNhAll:
    case Opcode::kTlbiNhAsid:
    case Opcode::kTlbiEl2All:
    case Opcode::kTlbiEl2Asid:
    case Opcode::kTlbiS12Vmall:
    case Opcode::kTlbiNsnhAll: return true;
    default: return false;
  }
}

CommandClass command_class(const Command& c) {
  switch (c.opcode) {
    case Opcode::kCfgiSte:
    case Opcode::kCfgiSteRange:
    case Opcode::kCfgiCd:
    case Opcode::kCfgiCdAll: return CommandClass::kCfgi;
    case Opcode::kTlbiNhAll:
    case Opcode::kTlbiNhAsid:
    case Opcode::kTlbiEl2All:
    case Opcode::kTlbiEl2Asid:
    case Opcode::kTlbiS12Vmall:
    case Opcode::kTlbiNsnhAll: return CommandClass::kTlbi;
    case Opcode::kTlbiNhVa:
    case Opcode::kTlbiNhVaa:
    case Opcode::kTlbiEl2Va:
    case Opcode::kTlbiEl2Vaa:
    case Opcode::kTlbiS2Ipa: return c.is_range() ? CommandClass::kTlbiRange : CommandClass::kTlbi;
    case Opcode::kCmdSync: return CommandClass::kSync;
    case Opcode::kPrefetchConfig:
    case Opcode::kPrefetchAddr: return CommandClass::kPrefetch;
    case Opcode::kAtcInv: return CommandClass::kAtc;
    case Opcode::kPriResp:
    case Opcode::kResume:
    case Opcode::kStallTerm: return CommandClass::kOther;
  }
  return CommandClass::kOther;
}

CommandExecutor::CommandExecutor(Translator& translator, const SmmuFeatures& features, StatsRegistry* stats,
                                 const std::string& prefix)
    : translator_(translator), features_(features), stats_(stats), prefix_(prefix) {
  if (stats_) {
    inv_tlb_ = &stats_->counter(prefix_ + ".invalidated.tlb");
    inv_micro_tlb_ = &stats_->counter(prefix_ + ".invalidated.micro_tlb");
    inv_walk_cache_ = &stats_->counter(prefix_ + ".invalidated.walk_cache");
    inv_config_ = &stats_->counter(prefix_ + ".invalidated.config_cache");
    per_command_ = &stats_->histogram(prefix_ + ".invalidated_per_command", "entries", 1.0);
    if (!translator_.tbus().empty()) inv_tbu_tlb_ = &stats_->counter(prefix_ + ".invalidated.tbu_tlb");
  }
}

template <typename Fn>
void CommandExecutor::on_every_tlb(ExecResult& r, Fn fn) {
  Tlb* main = &translator_.tlb();
  translator_.for_each_tlb([&](Tlb& t) {
    const size_t n = fn(t);
    r.tlb_entries += n;
    if (&t == main) return;
    if (translator_.in_tbu(t)) r.tbu_tlb_entries += n;
    else r.micro_tlb_entries += n;
  });
}

template <typename Fn>
void CommandExecutor::on_walk_cache(ExecResult& r, Fn fn) {
  WalkCache& wc = translator_.walk_cache();
  const unsigned before = wc.valid_entries();
  fn(wc);
  r.walk_cache_entries += before - wc.valid_entries();
}

// TLBI_NH_VA/VAA, EL2_VA/VAA and S2_IPA, single address (TG == 0) or range.
void CommandExecutor::tlbi_by_address(const Command& c, ExecResult& r) {
  // 4.4.2: the VMID of CMD_TLBI_NH_* is only matched when stage 2 is supported.
  const uint16_t vmid = features_.stage2 ? c.vmid : 0;
  const bool e2h_now = e2h();
  // Without a range the walk cache scope is the one address: one byte.
  uint64_t wc_size = 1;

  if (c.is_range()) {
    // 4.4.1.1: Range = (NUM + 1) * 2^SCALE * granule from Addr, for entries
    // inserted with granule TG and, with TTL != 0, from walk level TTL.
    TlbiRange range;
    switch (c.opcode) {
      case Opcode::kTlbiNhVa: range.scope = TlbiScope::kNhVa; break;
      case Opcode::kTlbiNhVaa: range.scope = TlbiScope::kNhVaa; break;
      case Opcode::kTlbiEl2Va: range.scope = TlbiScope::kEl2Va; break;
      case Opcode::kTlbiEl2Vaa: range.scope = TlbiScope::kEl2Vaa; break;
      default: range.scope = TlbiScope::kS2Ipa; break;
    }
    range.vmid = vmid;
    range.asid = c.asid;
    range.e2h = e2h_now;
    range.base = c.addr;
    range.size = c.range_bytes();
    range.tg = *tg_granule(c.tg);
    range.ttl = c.ttl;
    range.leaf_only = c.leaf;
    on_every_tlb(r, [&](Tlb& t) { return t.invalidate_range(range); });
    wc_size = range.size;
  } else {
    switch (c.opcode) {
      case Opcode::kTlbiNhVa:
        on_every_tlb(r, [&](Tlb& t) { return t.invalidate_va(vmid, c.asid, c.addr, c.leaf); });
        break;
      case Opcode::kTlbiNhVaa:
        on_every_tlb(r, [&](Tlb& t) { return t.invalidate_vaa(vmid, c.addr, c.leaf); });
        break;
      case Opcode::kTlbiEl2Va:
        on_every_tlb(r, [&](Tlb& t) { return t.invalidate_el2_va(c.asid, c.addr, e2h_now, c.leaf); });
        break;
      case Opcode::kTlbiEl2Vaa:
        on_every_tlb(r, [&](Tlb& t) { return t.invalidate_el2_vaa(c.addr, e2h_now, c.leaf); });
        break;
      default:
        on_every_tlb(r, [&](Tlb& t) { return t.invalidate_s2_ipa(vmid, c.addr, c.leaf); });
        break;
    }
  }

  // Leaf == 1: "only cached entries for the last level of translation table
  // walk are required to be invalidated" (4.4.2.3, 4.4.2.4, 4.4.2.8, 4.4.2.9,
  // 4.4.3.1), so the walk cache keeps its tables. Leaf == 0: the tables on
  // the walk of the address(es) go too (16.2: walk caches are invalidated
  // like a PE's).
  if (c.leaf) return;
  on_walk_cache(r, [&](WalkCache& wc) {
    switch (c.opcode) {
      case Opcode::kTlbiNhVa: wc.invalidate_va(c.addr, c.asid, vmid, wc_size); break;
      case Opcode::kTlbiNhVaa: wc.invalidate_va_all_asids(c.addr, vmid, wc_size); break;
      // EL2: over-invalidation of VMID 0 stage 1 tables (see the header).
      case Opcode::kTlbiEl2Va:
        if (e2h_now)
          wc.invalidate_va(c.addr, c.asid, 0, wc_size);
        else
          wc.invalidate_va_all_asids(c.addr, 0, wc_size);
        break;
      case Opcode::kTlbiEl2Vaa: wc.invalidate_va_all_asids(c.addr, 0, wc_size); break;
      default: wc.invalidate_ipa(c.addr, vmid, wc_size); break;
    }
  });
}

ExecResult CommandExecutor::execute(const Command& c) {
  ExecResult r;
  r.cls = command_class(c);
  r.whole_context = is_whole_context_tlbi(c.opcode);
  ConfigCache& cc = translator_.config_cache();
  const uint16_t nh_vmid = features_.stage2 ? c.vmid : 0;  // 4.4.2

  switch (c.opcode) {
    // ---- Configuration invalidation (4.3).
    case Opcode::kCfgiSte:
      r.config_entries = cc.invalidate_ste(c.sid);
      break;
    case Opcode::kCfgiSteRange:
      r.config_entries = c.is_cfgi_all() ? cc.invalidate_all() : cc.invalidate_ste_range(c.sid, c.range);
      break;
    case Opcode::kCfgiCd:
      r.config_entries = cc.invalidate_cd(c.sid, c.ssid);
      break;
    case Opcode::kCfgiCdAll:
      r.config_entries = cc.invalidate_cd_all(c.sid);
      break;

    // ---- TLB invalidation (4.4).
    case Opcode::kTlbiNhAll:
      on_every_tlb(r, [&](Tlb& t) { return t.invalidate_stage1_all_for_vmid(nh_vmid); });
      on_walk_cache(r, [&](WalkCache& wc) { wc.invalidate_stage1(nh_vmid); });
      break;
    case Opcode::kTlbiNhAsid:
      on_every_tlb(r, [&](Tlb& t) { return t.invalidate_asid(nh_vmid, c.asid); });
      on_walk_cache(r, [&](WalkCache& wc) { wc.invalidate_asid(c.asid, nh_vmid); });
      break;
    case Opcode::kTlbiNhVa:
    case Opcode::kTlbiNhVaa:
    case Opcode::kTlbiEl2Va:
    case Opcode::kTlbiEl2Vaa:
    case Opcode::kTlbiS2Ipa:
      tlbi_by_address(c, r);
      break;
    case Opcode::kTlbiEl2All:
      on_every_tlb(r, [&](Tlb& t) { return t.invalidate_el2_all(); });
      on_walk_cache(r, [&](WalkCache& wc) { wc.invalidate_stage1(0); });
      break;
    case Opcode::kTlbiEl2Asid:
      on_every_tlb(r, [&](Tlb& t) { return t.invalidate_el2_asid(c.asid); });
      on_walk_cache(r, [&](WalkCache& wc) { wc.invalidate_asid(c.asid, 0); });
      break;
    case Opcode::kTlbiS12Vmall:
      on_every_tlb(r, [&](Tlb& t) { return t.invalidate_vmid(c.vmid); });
      on_walk_cache(r, [&](WalkCache& wc) { wc.invalidate_vmid(c.vmid); });
      break;
    case Opcode::kTlbiNsnhAll:
      on_every_tlb(r, [&](Tlb& t) { return t.invalidate_nsnh_all(); });
      on_walk_cache(r, [&](WalkCache& wc) { wc.invalidate_all(); });
      break;

    // ---- No effect on this model (see the header).
    case Opcode::kPrefetchConfig:
    case Opcode::kPrefetchAddr:
    case Opcode::kAtcInv:
    case Opcode::kPriResp:
    case Opcode::kResume:
    case Opcode::kStallTerm:
      break;
    case Opcode::kCmdSync:
      r.sync = true;
      break;
  }
  // A distributed SMMU's TCU sends every invalidation on to every TBU.
  if (r.cls == CommandClass::kCfgi || r.cls == CommandClass::kTlbi || r.cls == CommandClass::kTlbiRange)
    translator_.broadcast_invalidation(r.cls == CommandClass::kCfgi);
  count(c, r);
  return r;
}

void CommandExecutor::sync_tbus() { translator_.broadcast_sync(); }

void CommandExecutor::count(const Command& c, const ExecResult& r) {
  if (!stats_) return;
  Counter*& executed = executed_[static_cast<uint8_t>(c.opcode)];
  if (!executed) executed = &stats_->counter(prefix_ + ".executed." + opcode_name(c.opcode));
  executed->add();
  inv_tlb_->add(r.tlb_entries);
  inv_micro_tlb_->add(r.micro_tlb_entries);
  if (inv_tbu_tlb_) inv_tbu_tlb_->add(r.tbu_tlb_entries);
  inv_walk_cache_->add(r.walk_cache_entries);
  inv_config_->add(r.config_entries);
  if (r.cls == CommandClass::kCfgi || r.cls == CommandClass::kTlbi || r.cls == CommandClass::kTlbiRange)
    per_command_->record(r.invalidated());
}

}  // namespace smmu_vp::smmu

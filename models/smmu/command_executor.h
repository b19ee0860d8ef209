// What each SMMU command does to the SMMU's caches (IHI 0070 4.2-4.7), on a
// Translator's TLB, micro-TLBs, walk cache and configuration cache (plain C++
// core, no SystemC). The command-queue consumer decodes a command
// (decode_command), hands a legal one to execute(), and uses the result for
// its timing; ordering and completion (CMD_SYNC) are the consumer's business.
//
// Effects, per command (each one the minimum scope the specification
// requires, except where noted):
//   CFGI_STE(sid, Leaf)          4.3.1: the STE of sid and every CD cached
//                                through it. No L1STD caching is modelled, so
//                                Leaf changes nothing.
//   CFGI_STE_RANGE(sid, Range)   4.3.2: STEs and CDs of the aligned block of
//                                2^(Range+1) StreamIDs; Range 31 is CFGI_ALL
//                                (4.3.6): the whole configuration cache.
//   CFGI_CD(sid, ssid, Leaf)     4.3.3: the CD fetched from index ssid of sid's
//                                CD table. No L1CD caching: Leaf changes nothing.
//   CFGI_CD_ALL(sid)             4.3.4: every CD cached through sid.
//   CFGI_* never touch TLBs (4.3.1 note).
//   TLBI_NH_ALL(VMID)            4.4.2.1: EL1 stage 1 and nested entries of VMID
//                                (global ones too) in every TLB; stage 1 walk
//                                cache entries of VMID.
//   TLBI_NH_ASID(VMID, ASID)     4.4.2.2: non-global EL1 stage 1/nested entries
//                                of (VMID, ASID); stage 1 walk cache entries of
//                                (VMID, ASID).
//   TLBI_NH_VA(VMID, ASID, Addr, Leaf)   4.4.2.4: EL1 stage 1/nested entries
//                                of VMID containing Addr that are global or of
//                                ASID; with Leaf == 0 also the stage 1 walk
//                                cache entries of (VMID, ASID) on the walk of
//                                Addr. Leaf == 1 leaves the walk cache alone
//                                ("only cached entries for the last level of
//                                translation table walk are required to be
//                                invalidated").
//   TLBI_NH_VAA(VMID, Addr, Leaf) 4.4.2.3: the same for every ASID.
//   With a CMD_TLBI_NH_* VMID on an SMMU without stage 2, VMID 0 is matched
//   (4.4.2: VMID is only matched when stage 2 is supported).
//   TLBI_EL2_ALL                 4.4.2.7: every EL2 and EL2-E2H entry.
//   TLBI_EL2_ASID(ASID)          4.4.2.10: non-global EL2-E2H entries of ASID.
//   TLBI_EL2_VA(ASID, Addr, Leaf)  4.4.2.8: by SMMU_CR2.E2H (set_e2h_source):
//                                E2H == 1: EL2-E2H entries containing Addr of
//                                ASID or global; E2H == 0: EL2 entries
//                                containing Addr, the ASID ignored.
//   TLBI_EL2_VAA(Addr, Leaf)     4.4.2.9: the same for every ASID.
//     The walk cache has no translation-regime tag (the translator walks only
//     for NS-EL1), so the EL2 commands over-invalidate, as 4.4 permits: the
//     stage 1 walk cache entries that an EL2 walk would have (VMID 0) with the
//     command's ASID/address scope (Leaf == 0 only for the by-VA forms).
//   TLBI_S12_VMALL(VMID)         4.4.3.2: every EL1 entry of VMID at both
//                                stages; walk cache entries of VMID, both stages.
//   TLBI_S2_IPA(VMID, Addr, Leaf) 4.4.3.1: EL1 stage 2-only entries of VMID
//                                containing the IPA (nested entries only if
//                                TlbConfig::s2_ipa_invalidates_nested); with
//                                Leaf == 0 also the stage 2 walk cache entries
//                                on the walk of the IPA.
//   TLBI_NSNH_ALL                4.4.4.1: every EL1 entry, both stages, all
//                                VMIDs; the whole walk cache.
//   Range forms (TG != 0, 4.4.1.1): Tlb::invalidate_range over [Addr, Addr +
//   (NUM+1) * 2^SCALE * granule), limited to entries of that granule and, with
//   TTL != 0, of that level; with Leaf == 0 the walk cache entries on the walk
//   of any address of the range (over-invalidating: the walk cache does not
//   filter by TG/TTL, which 4.4 permits).
//   PREFETCH_CONFIG, PREFETCH_ADDR  4.2: no effect ("An implementation is not
//                                required to prefetch any, or all, of the
//                                configuration requested").
//   ATC_INV                      4.5.1: no effect. It only passes decoding on an
//                                SMMU with ATS, and no ATCs are modelled (a
//                                system without ATS beyond the SMMU: IGNORED, 4.5).
//   PRI_RESP                     4.5.2: no effect (IGNORED without PRI in the
//                                rest of the system); never legal here.
//   RESUME, STALL_TERM           no effect; never legal here (no stall model).
//   CMD_SYNC                     no effect here: ExecResult::sync is set and
//                                the consumer completes it (4.7.3).
// Every TLB is reached: the main TLB, each micro-TLB and each TBU's TLBs
// (Translator::for_each_tlb); with TBUs, every CFGI_* and TLBI_* is also
// broadcast to them (Translator::broadcast_invalidation: CFGI_* make them
// forget their streams' contexts).
//
// execute() expects a command that decode_command accepted for the same
// SmmuFeatures; it does not check legality again.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "smmu/commands.h"
#include "smmu/features.h"

namespace smmu_vp {
class Counter;
class Histogram;
class StatsRegistry;
}  // namespace smmu_vp

namespace smmu_vp::smmu {

class Translator;

// What a command costs the consumer, by kind (its timing classes).
enum class CommandClass : uint8_t {
  kCfgi,       // CFGI_*
  kTlbi,       // TLBI_* by ALL, VMID, ASID or one address (TG == 0)
  kTlbiRange,  // TLBI_* with TG != 0
  kSync,       // CMD_SYNC
  kPrefetch,   // PREFETCH_*
  kAtc,        // ATC_INV
  kOther,      // PRI_RESP, RESUME, STALL_TERM
};
const char* to_string(CommandClass c);
// The class of a command, without executing it.
CommandClass command_class(const Command& c);
// A TLBI of a whole context (by ASID, VMID or ALL) rather than of one address.
bool is_whole_context_tlbi(Opcode op);

struct ExecResult {
  CommandClass cls = CommandClass::kOther;
  bool whole_context = false;     // a TLBI of a whole context (by ASID, VMID or ALL), not of one address
  bool sync = false;              // a CMD_SYNC: the consumer completes it
  size_t tlb_entries = 0;         // TLB entries removed, main TLB and micro-TLBs together
  size_t micro_tlb_entries = 0;   // ... of which from micro-TLBs
  size_t tbu_tlb_entries = 0;     // ... of which from TBUs' TLBs (tbu.h)
  size_t walk_cache_entries = 0;  // walk cache entries removed
  size_t config_entries = 0;      // STEs and CDs removed from the configuration cache
  size_t invalidated() const { return tlb_entries + walk_cache_entries + config_entries; }
};

class CommandExecutor {
 public:
  // With `stats`: <prefix>.executed.<CMD_NAME> counters (one per opcode seen),
  // <prefix>.invalidated.{tlb,micro_tlb,walk_cache,config_cache} counters and
  // the <prefix>.invalidated_per_command histogram (entries removed by each
  // CFGI_*/TLBI_*).
  CommandExecutor(Translator& translator, const SmmuFeatures& features, StatsRegistry* stats = nullptr,
                  const std::string& prefix = "smmu.cmdq");

  // SMMU_CR2.E2H, which TLBI_EL2_VA/VAA depend on (4.4.2.8, 4.4.2.9), read
  // when such a command executes (4.1.2: it must not change while the command
  // is in flight). Without a source E2H is 0.
  void set_e2h_source(std::function<bool()> read_cr2_e2h) { e2h_ = std::move(read_cr2_e2h); }

  // Applies the command's architected effect on the caches (see the file
  // comment) and says what it removed.
  ExecResult execute(const Command& cmd);
  // A CMD_SYNC reaching every TBU of a distributed SMMU (counted there).
  void sync_tbus();

 private:
  // Runs `fn` on every TLB (main first); counts into r.
  template <typename Fn>
  void on_every_tlb(ExecResult& r, Fn fn);
  // Runs `fn` on the walk cache; counts what it removed into r.
  template <typename Fn>
  void on_walk_cache(ExecResult& r, Fn fn);
  void tlbi_by_address(const Command& c, ExecResult& r);
  bool e2h() const { return e2h_ ? e2h_() : false; }
  void count(const Command& c, const ExecResult& r);

  Translator& translator_;
  SmmuFeatures features_;
  std::function<bool()> e2h_;
  StatsRegistry* stats_;
  std::string prefix_;
  std::array<Counter*, 256> executed_{};
  Counter* inv_tlb_ = nullptr;
  Counter* inv_micro_tlb_ = nullptr;
  Counter* inv_tbu_tlb_ = nullptr;  // only with TBUs
  Counter* inv_walk_cache_ = nullptr;
  Counter* inv_config_ = nullptr;
  Histogram* per_command_ = nullptr;
};

}  // namespace smmu_vp::smmu

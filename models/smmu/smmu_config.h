// The SMMU model's configuration as plain structs, every field with its
// default and unit: what a platform that embeds the model fills in instead of
// our JSON (docs/embedding.md). The JSON path (platform/config/) fills in the
// same structs; docs/config.md lists them under `platform.smmu`.
//
// SmmuConfig::validate() checks what the model cannot be built with and
// throws smmu_vp::InvalidConfig naming the field; the Smmu constructor calls it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/invalid_config.h"
#include "smmu/features.h"

namespace smmu_vp::smmu {

// Replacement policy of the SMMU's set-associative caches (replacement.h).
enum class ReplacementPolicy : uint8_t { kLru, kFifo, kRandom };

inline const char* to_string(ReplacementPolicy p) {
  switch (p) {
    case ReplacementPolicy::kLru: return "lru";
    case ReplacementPolicy::kFifo: return "fifo";
    case ReplacementPolicy::kRandom: return "random";
  }
  return "?";
}

// ---- TLB (tlb.h)
struct TlbConfig {
  using Replacement = ReplacementPolicy;
  static constexpr Replacement kLru = ReplacementPolicy::kLru;
  static constexpr Replacement kFifo = ReplacementPolicy::kFifo;
  static constexpr Replacement kRandom = ReplacementPolicy::kRandom;

  unsigned entries = 256;  // > 0, a multiple of ways
  unsigned ways = 4;       // ways == entries: fully associative (micro-TLB)
  Replacement replacement = kLru;
  uint64_t seed = 0;  // random replacement only
  // TLBI_S2_IPA is not required to remove combined S1+S2 entries (IHI 0070
  // 4.4.3.1); software pairs it with NH_ALL/NH_VAA. Set this to model an
  // implementation that over-invalidates nested entries whose IPA overlaps.
  bool s2_ipa_invalidates_nested = false;
  // Offset the set index by a hash of the entry's context (tlb.h's file
  // comment); off: index by page number only.
  bool index_by_context = true;
};

// ---- Configuration cache (config_cache.h)
struct ConfigCacheConfig {
  unsigned ste_entries = 64;  // 0: STEs are not cached
  unsigned cd_entries = 64;   // 0: CDs are not cached
};

// ---- Walk cache (walk_cache.h)
struct WalkCacheConfig {
  unsigned entries = 64;  // total capacity
  unsigned ways = 4;      // associativity; entries must be a multiple of it
};

// ---- Table walker (page_table_walker.h)
struct WalkTiming {
  // Walker work per lookup, after the descriptor arrives: decode, check, form
  // the next descriptor address. 2 ns is a couple of cycles of an SMMU clock
  // of about 1 GHz; the memory read dominates.
  double step_ns = 2.0;
};

// ---- Distributed SMMU: TBUs and the DTI link (tbu.h)

// What every TBU of the SMMU has (the parameters an architect sizes).
// Defaults: gem5's SMMUv3 device interface (its TBU), as a starting point.
struct TbuParams {
  TlbConfig tlb{2048, 4};            // main TLB of the TBU
  unsigned micro_tlb_entries = 32;   // fully associative, before the main TLB (0: none)
  unsigned translation_slots = 16;   // transactions held at once, each until it leaves
  bool hit_under_miss = true;        // hits leave before outstanding misses
  double tlb_lookup_ns = 3.0;        // main TLB lookup, hit or miss
  double micro_tlb_lookup_ns = 1.0;  // micro-TLB lookup, hit or miss
};

// The DTI link between the TBUs and the TCU.
struct DtiTiming {
  double latency_ns = 8.0;  // one message, TBU to TCU or back
  double message_ns = 1.0;  // the TCU sending one message: a broadcast sends one per TBU
};

// One TBU as the platform names it: the master ports (device instances)
// whose transactions it translates.
struct TbuSpec {
  std::string name;
  std::vector<std::string> masters;
};

// The distributed SMMU's layout. No TBUs: the SMMU is monolithic (one TLB in
// front of one pool of walkers, the model of every scenario before TBUs).
struct DistributedConfig {
  std::vector<TbuSpec> tbus;
  TbuParams tbu;
  DtiTiming dti;
  // Master port -> TBU index, resolved from TbuSpec::masters by the platform
  // configuration (port i is device i of the platform).
  std::vector<unsigned> port_tbu;
  bool enabled() const { return !tbus.empty(); }
};

// ---- The translation path (translator.h)
struct TranslatorConfig {
  TlbConfig tlb;
  ConfigCacheConfig config_cache;
  WalkCacheConfig walk_cache;
  WalkTiming walk;
  unsigned translation_slots = 16;  // translations in progress at once (with TBUs: at the TCU)
  unsigned walker_slots = 4;        // table walks in progress at once
  double tlb_lookup_ns = 2.0;       // TLB lookup, hit or miss
  // Optional micro-TLB per master port, looked up before the main TLB and
  // filled from it (0 entries: none).
  unsigned micro_tlb_entries = 0;
  double micro_tlb_lookup_ns = 0.5;
  double config_lookup_ns = 2.0;    // config cache lookup, hit or miss
  // TBUs in front of this translator, which is then the TCU (tbu.h); none:
  // one monolithic SMMU.
  DistributedConfig distributed;
};

// ---- Command queues (command_queue.h)
struct CommandQueueTiming {
  unsigned fetch_batch = 8;        // commands per fetch read
  double decode_ns = 1.0;          // per command, before it goes to a lane
  double cfgi_ns = 20.0;           // CFGI_*
  double tlbi_ns = 40.0;           // TLBI_* by ASID/VA/VMID/ALL
  double tlbi_context_ns = 0.0;    // TLBI_* by ASID/VMID/ALL when not 0 (else tlbi_ns)
  double tlbi_per_entry_ns = 0.0;  // extra per TLB entry removed (0: fixed cost)
  double tlbi_range_ns = 60.0;     // a range TLBI (TG != 0), whatever its size
  double sync_ns = 10.0;           // CMD_SYNC, after what it waits for
  double prefetch_ns = 5.0;        // PREFETCH_*
  double other_ns = 10.0;          // ATC_INV and the rest
  unsigned lanes = 1;              // commands executing at once
  // A CMD_SYNC's MSI write to normal memory is a coherent write (off by
  // default): it takes the line from the cores holding a copy (the cores
  // polling the word), and the queue consumes its next command only once the
  // farthest copy is given up (CommandQueueConsumer::Hooks::coherent_write in
  // command_queue.h says how long).
  bool msi_coherent = false;
  // Not parameters of their own: the SMMU sets them from its TBUs (tbu.h).
  // With TBUs, the TCU sends every CFGI_* and TLBI_* to each TBU as a DTI
  // message (dti_message_ns each) and holds it until the last
  // acknowledgement is back (2 x dti_latency_ns): a TBU grants the TCU one
  // invalidation at a time (Arm CoreLink MMU-700 TRM, 101542). A CMD_SYNC
  // after such commands does the same with a DTI sync; one with no
  // invalidation since the last completes without.
  unsigned tbus = 0;
  double dti_message_ns = 0.0;
  double dti_latency_ns = 0.0;
  // The round of DTI messages to every TBU and back.
  double tbu_round_ns() const { return tbus ? tbus * dti_message_ns + 2 * dti_latency_ns : 0.0; }
};

// ---- ATS (ats.h): the PCIe messages between the SMMU and its endpoints
// that the SMMU times. An endpoint's own requests (Translation Requests,
// translated accesses) cross the link in the endpoint's model, as its DMA
// does; the SMMU charges only its translation.
struct AtsTiming {
  // One way between the SMMU and an endpoint: an Invalidation Request out,
  // its completion back. A named guess: about half of a measured PCIe DMA
  // read round trip (docs/smmu.md, "ATS").
  double pcie_latency_ns = 400.0;
  // The SMMU sending one Invalidation Request: back-to-back requests leave
  // one per message_ns. A named guess (a few link clocks).
  double message_ns = 4.0;
  // How long the SMMU waits for an Invalidation Completion before the
  // CMD_SYNC behind it fails with CERROR_ATC_INV_SYNC (IHI 0070 3.9.1.4:
  // IMPLEMENTATION DEFINED; a guess).
  double atc_inv_timeout_us = 1000.0;
};

// ---- The SMMU module (smmu.h)
struct SmmuConfig {
  uint64_t base = 0;                // where the platform maps register page 0 (no default: each platform says)
  SmmuFeatures features = SmmuFeatures::v3_3_profile();
  TranslatorConfig translation;
  double reg_latency_ns = 10.0;     // register access
  double bypass_latency_ns = 2.0;   // SMMUEN = 0 with GBPA bypass
  unsigned eventq_irq = 0;          // wired line for the event queue (no MSI configured)
  unsigned gerror_irq = 0;          // wired line for global errors
  unsigned sync_irq = 0;            // wired line for CMD_SYNC SIG_IRQ when the SMMU has no MSIs
  unsigned priq_irq = 0;            // wired line for the PRI queue (features.pri, no MSI configured)
  CommandQueueTiming cmdq;
  AtsTiming ats;                    // used only with features.ats
  bool stale_check = false;         // debug: check TLB hits against memory (Translator)
  bool cmdq_check = false;          // debug: check software's use of the command queues (cmdq_checker.h)

  // Throws InvalidConfig naming the first field the model cannot be built
  // with (its path as in docs/config.md below platform.smmu, e.g.
  // "translation.tlb.ways"), and why.
  void validate() const;
};

}  // namespace smmu_vp::smmu

// A translation buffer unit (TBU) of a distributed SMMU, and the DTI link
// between TBUs and the translation control unit (TCU). IHI 0070 describes one
// SMMU; how an implementation splits it is its own business. Arm's CoreLink
// MMU-600 and MMU-700 put a TBU beside each master or root port, holding a
// micro-TLB, a main TLB and a pool of translation slots for the misses it has
// outstanding, and one TCU holding the configuration and walk caches and the
// table walkers; the two talk by DTI messages (Arm's DTI protocol): a
// translation request and its response, and the TCU's invalidation and sync
// requests, which every TBU acknowledges.
//
// In this model (docs/smmu.md, "Distributed SMMU"):
// - Every transaction holds one of its TBU's translation slots until it
//   leaves the TBU (MMU-600 TRM, 100310: "Each transaction occupies a
//   translation slot until it is propagated downstream"); with every slot
//   taken, arrivals wait.
// - A TBU answers a hit in its micro-TLB or main TLB by itself. Its entries
//   carry the stream's context (stage, VMID, ASID, or bypass), learned from
//   the TCU's answer, so a hit needs no configuration lookup. With
//   hit-under-miss a hit leaves as soon as it is looked up, passing the
//   TBU's outstanding misses (transactions of different AXI IDs may); without
//   it a hit leaves after every miss before it (one ordering group), still
//   holding its slot.
// - A miss holds its slot until the TCU's answer is back: a DTI request, the
//   TCU's own work (a translation slot of the TCU, the configuration cache,
//   the TCU's TLB of final translations, a walk), and the DTI response.
// - Every TLBI and CFGI the TCU executes is broadcast to every TBU, one DTI
//   message each; a CMD_SYNC sends a DTI sync to every TBU and completes when
//   the last has acknowledged (command_queue.h).
// - CFGI_* make every TBU forget its streams' contexts (over-invalidation:
//   a TBU does not index its contexts by CD).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/resource.h"
#include "common/sim_time.h"
#include "common/stats.h"
#include "smmu/smmu_config.h"
#include "smmu/tlb.h"

namespace smmu_vp::smmu {





class Tbu {
 public:
  // What a TBU knows of a stream, from the TCU's last answer for it.
  struct Context {
    bool bypass = false;  // STE bypass (or stage 1 bypassed without stage 2)
    StageKind kind = StageKind::kStage1;
    uint16_t vmid = 0, asid = 0;
  };

  Tbu(const std::string& name, const TbuParams& params, uint64_t seed, StatsRegistry& stats,
      const std::string& prefix);

  const std::string& name() const { return name_; }
  const TbuParams& params() const { return params_; }
  // nullptr when the stream has not been answered since the last CFGI.
  const Context* context(uint32_t sid, bool ssv, uint32_t ssid) const {
    const auto it = contexts_.find(key(sid, ssv, ssid));
    return it == contexts_.end() ? nullptr : &it->second;
  }
  void learn(uint32_t sid, bool ssv, uint32_t ssid, const Context& c) { contexts_[key(sid, ssv, ssid)] = c; }
  void forget_contexts() { contexts_.clear(); }
  // The latest answer of a miss so far: without hit-under-miss, hits leave
  // after it.
  Ps misses_done() const { return misses_done_; }
  void miss_done(Ps at) { misses_done_ = std::max(misses_done_, at); }

  Tlb& tlb() { return tlb_; }
  Tlb* micro_tlb() { return micro_.get(); }
  Resource& slots() { return slots_; }
  Ps tlb_lookup_ps() const { return tlb_lookup_ps_; }
  Ps micro_tlb_lookup_ps() const { return micro_tlb_lookup_ps_; }

  // Statistics (smmu.tbu.<name>.*).
  Counter& translations;      // every transaction's translation through this TBU
  Counter& hits;              // answered by the TBU itself (micro-TLB or main TLB)
  Counter& misses;            // sent to the TCU
  Counter& slot_waits;        // translations that waited for a translation slot
  Histogram& slot_wait_ns;    // ... and how long
  Histogram& latency_ns;      // arrival to answer, as the master sees it
  Counter& invalidations;     // TLBI and CFGI broadcasts received
  Counter& syncs;             // DTI syncs received
  // Publishes the slots' utilisation (busy time over slots x `end`).
  void finish(Ps end);

 private:
  static uint64_t key(uint32_t sid, bool ssv, uint32_t ssid) {
    return (uint64_t{sid} << 21) | (uint64_t{ssv} << 20) | (ssid & 0xFFFFF);
  }
  std::string name_;
  TbuParams params_;
  Tlb tlb_;
  std::unique_ptr<Tlb> micro_;
  Resource slots_;
  Ps tlb_lookup_ps_, micro_tlb_lookup_ps_;
  std::unordered_map<uint64_t, Context> contexts_;
  Ps misses_done_ = 0;
  StatsRegistry& stats_;
  std::string prefix_;
};

}  // namespace smmu_vp::smmu

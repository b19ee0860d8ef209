// The SMMU's translation path without SystemC (IHI 0070 3.2-3.4): for one
// incoming transaction, find the stream's STE and CD (config cache, else the
// tables in memory), look up the TLB, walk the tables on a miss, check
// permissions, and either return the output address or the event record the
// SMMU must write. Contention for translation slots and walker slots is
// reserved in simulated time (Resource), so concurrent masters queue.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "common/resource.h"
#include "common/sim_time.h"
#include "common/stats.h"
#include "smmu/config_cache.h"
#include "smmu/config_fetch.h"
#include "smmu/event_queue.h"
#include "smmu/features.h"
#include "smmu/memory_port.h"
#include "smmu/page_table_walker.h"
#include "smmu/smmu_config.h"
#include "smmu/tbu.h"
#include "smmu/tlb.h"
#include "smmu/walk_cache.h"

namespace smmu_vp::smmu {


struct TranslationRequest {
  unsigned port = 0;  // the master port it came in on (selects the micro-TLB)
  uint32_t sid = 0;
  bool ssv = false;
  uint32_t ssid = 0;
  uint64_t addr = 0;
  AccessType access;
  Ps at = 0;
  bool ats = false;  // a PCIe Translation Request (translate_ats)
};

struct TranslationResult {
  enum class Kind {
    kTranslated,  // pa is the output address
    kBypass,      // STE.Config = bypass: pa = input address
    kAbort,       // STE.Config = abort: terminated without an event
    kFault,       // terminated; `event` must be recorded
  };
  Kind kind = Kind::kFault;
  uint64_t pa = 0;
  // Bytes from the input address to the end of the translation that was used,
  // so a caller can split an access that crosses into the next page.
  uint64_t span = 0;
  EventRecord event;
  Ps done = 0;
  bool tlb_hit = false;
  // kTranslated by serve(): the translation's permissions and size (for
  // ATS completions).
  TlbPermissions perms;
  uint8_t size_log2 = 0;
  // kFault: false when CD.R or STE.S2R suppresses the record of this
  // translation-related fault (IHI 0070 5.5); the transaction still aborts.
  bool record = true;
  // kFault: the stage is configured to stall it (IHI 0070 3.12.2); the
  // SMMU module decides whether it can.
  bool stall = false;
  bool ok() const { return kind == Kind::kTranslated || kind == Kind::kBypass; }
};

// Derived from the feature profile: what STE/CD decoding must check.
SmmuCaps caps_of(const SmmuFeatures& f);

class Translator {
 public:
  Translator(MemoryPort& mem, const SmmuFeatures& features, const TranslatorConfig& cfg, StatsRegistry& stats,
             const std::string& prefix);

  TranslationResult translate(const StreamTableConfig& st, const TranslationRequest& req);
  // A PCIe Translation Request (IHI 0070 3.9.1.2), walked for read: kFault
  // with F_BAD_ATS_TREQ when the STE does not enable ATS; other outcomes as
  // translate(). ats_completion (ats_completion.h) turns it into the answer.
  TranslationResult translate_ats(const StreamTableConfig& st, TranslationRequest req);
  // A translated transaction with CR0.ATSCHK = 1 (IHI 0070 3.9.1.3): kBypass
  // (pass it on), kAbort (STE.Config abort: no event), or kFault
  // (F_TRANSL_FORBIDDEN, or a configuration error with record = false).
  TranslationResult check_translated(const StreamTableConfig& st, const TranslationRequest& req);
  // Forget slot reservations that ended before `now` (the current simulation
  // time; no request arrives earlier). Call now and then on long runs.
  void retire(Ps now);
  // When every translation that arrived by `t` has completed (for CMD_SYNC,
  // which must not complete while one could still use an invalidated entry).
  Ps drained_by(Ps t) const;
  // Back to the state of a new Translator at time 0, without rebuilding it:
  // every TLB, the walk cache and the configuration cache emptied, slot
  // reservations and in-flight bookkeeping forgotten. Statistics keep
  // counting (the registry outlives runs). The fuzz harnesses reuse one
  // Translator per process this way; a new one costs far more than a run.
  void reset();

  // Stale-entry check (a debugging aid, off by default): every translation
  // served from the TLB is checked against the tables in memory at that
  // moment with an untimed walk through `untimed`. A hit whose mapping is gone
  // or changed counts as stale, with the time since the entry was last seen
  // valid (an upper bound of how long ago the mapping was removed). This
  // measures the security window of lazy invalidation.
  void enable_stale_check(MemoryPort& untimed);

  Tlb& tlb() { return tlb_; }
  // The micro-TLB of a master port, or nullptr when they are disabled.
  Tlb* micro_tlb(unsigned port) {
    if (cfg_.micro_tlb_entries == 0) return nullptr;
    return port < micro_tlbs_.size() ? micro_tlbs_[port].get() : create_micro_tlbs(port);
  }
  // Every TLB holding translations (the main one, the micro-TLBs, and each
  // TBU's), for invalidations, which must reach them all.
  template <typename Fn>
  void for_each_tlb(Fn fn) {
    fn(tlb_);
    for (auto& m : micro_tlbs_) fn(*m);
    for (auto& b : tbus_) {
      fn(b->tlb());
      if (Tlb* m = b->micro_tlb()) fn(*m);
    }
  }
  // Whether `t` is one of a TBU's TLBs (for the executor's accounting).
  bool in_tbu(const Tlb& t) const {
    for (const auto& b : tbus_)
      if (&t == &b->tlb() || &t == b->micro_tlb()) return true;
    return false;
  }
  // The TBUs (none: a monolithic SMMU), and the one of a master port.
  const std::vector<std::unique_ptr<Tbu>>& tbus() const { return tbus_; }
  Tbu& tbu_of(unsigned port) {
    const auto& map = cfg_.distributed.port_tbu;
    return *tbus_[port < map.size() ? map[port] : 0];
  }
  // A TLBI or CFGI (cfgi: the streams' contexts too) reaching every TBU; a
  // DTI sync reaching every TBU. No effect without TBUs.
  void broadcast_invalidation(bool cfgi);
  void broadcast_sync();
  // Publishes what is known only at the end: each slot pool's utilisation
  // (over the run, and over the measurement window when there is one).
  void finish(Ps end);
  // An app's measurement window, for every slot pool (Resource::set_window).
  void set_window(Ps start, Ps end);
  ConfigCache& config_cache() { return config_cache_; }

 private:
  Tlb* create_micro_tlbs(unsigned port);  // up to the port's, on its first use

 public:
  WalkCache& walk_cache() { return walk_cache_; }

 private:
  // The stream's descriptors, decoded: the decode memos' results (a config
  // cache hit) or fetched_ste_/fetched_cd_ (a fetch), valid for one
  // translate() call, which never waits. cd stays kNoCd without stage 1.
  struct StreamConfig {
    const DecodedSte* ste = nullptr;
    const DecodedCd* cd = &kNoCd;
    bool stage1_bypass = false;  // S1DSS bypass, or no stage 1 in the STE
  };
  static const DecodedCd kNoCd;
  DecodedSte fetched_ste_;
  DecodedCd fetched_cd_;
  // STE then CD, from the config cache or memory. Returns false with *fault set.
  // stream_ste: the STE alone.
  bool stream_ste(const StreamTableConfig& st, const TranslationRequest& req, Ps* t, StreamConfig* sc,
                  TranslationResult* fault);
  bool stream_config(const StreamTableConfig& st, const TranslationRequest& req, Ps* t, StreamConfig* sc,
                     TranslationResult* fault);
  TranslationResult fault_result(const TranslationRequest& req, EventId id, Ps t) const;
  // IHI 0070 3.4: an input address wider than the IAS (the OAS: the model has
  // no AArch32 tables, so IAS == OAS).
  bool beyond_ias(uint64_t addr) const { return caps_.oas_bits < 64 && (addr >> caps_.oas_bits) != 0; }
  // What the translator learned of a stream and an address, for a TBU to keep.
  struct Learned {
    bool valid = false;  // a context (bypass or translated)
    Tbu::Context context;
    bool has_entry = false;
    TlbEntry entry;
  };
  // One translation through the configuration, the TLB and a walk, holding
  // a translation slot throughout. by_port: the request came straight from
  // its master port (a monolithic SMMU): the port's micro-TLB is looked up
  // first and the lookup counts for its StreamID; else a TBU did both.
  TranslationResult serve(const StreamTableConfig& st, const TranslationRequest& req, bool by_port,
                          Learned* learned);
  // The TBU's lookup, then on a miss the TCU (serve) over DTI.
  TranslationResult translate_via_tbu(const StreamTableConfig& st, const TranslationRequest& req);
  // Latency, completion for CMD_SYNC, and the outcome's counters.
  void account(Ps arrival, const TranslationResult& r);
  // Decode a descriptor served by the config cache. Decoding is a pure
  // function of the words (and caps_, fixed at construction), so the last
  // result is kept with the words it came from and reused while a stream
  // keeps hitting the same entry: recognised by its address and the cache's
  // version (nothing stored or removed since) without comparing the words.
  const DecodedSte& decode_cached_ste(const SteWords& raw) {
    return ste_memo_.get(raw, config_cache_.ste_version(), caps_, decode_ste);
  }
  const DecodedCd& decode_cached_cd(const CdWords& raw) {
    // decode_cd's S1STALLD argument keeps its default, as for a fetched CD.
    return cd_memo_.get(raw, config_cache_.cd_version(), caps_, decode_cd_default);
  }
  static DecodeResult decode_cd_default(const CdWords& w, const SmmuCaps& c, DecodedCd* d) {
    return decode_cd(w, c, d);
  }
  template <typename Words, typename Decoded>
  struct DecodeMemo {
    bool valid = false;
    const Words* at = nullptr;  // the cache entry decoded last
    uint64_t version = 0;       // the cache's version then
    Words raw{};
    Decoded decoded{};
    const Decoded& get(const Words& words, uint64_t cache_version, const SmmuCaps& caps,
                       DecodeResult (*decode)(const Words&, const SmmuCaps&, Decoded*)) {
      if (at == &words && version == cache_version) return decoded;  // at is set only once decoded
      return refresh(words, cache_version, caps, decode);
    }
    const Decoded& refresh(const Words& words, uint64_t cache_version, const SmmuCaps& caps,
                           DecodeResult (*decode)(const Words&, const SmmuCaps&, Decoded*));
  };
  DecodeMemo<SteWords, DecodedSte> ste_memo_;
  DecodeMemo<CdWords, DecodedCd> cd_memo_;
  // For a translation-related fault: whether the stage stalls it (r->stall),
  // and r->record cleared when the stage's R flag suppresses its record.
  static void apply_fault_flags(TranslationResult* r, const DecodedSte& ste, const DecodedCd* cd, bool stage2);
  using EntryKey = std::tuple<uint8_t, uint16_t, uint16_t, uint64_t>;  // stage, vmid, asid, input page
  static EntryKey key_of(const TlbEntry& e) {
    return {static_cast<uint8_t>(e.stage), e.vmid, e.global ? uint16_t{0xFFFF} : e.asid, e.input_addr};
  }
  // Walks again, untimed, and compares with what the TLB gave.
  void check_stale(const TlbHit& hit, const StreamConfig& sc, const TranslationRequest& req, Ps t);

  SmmuFeatures features_;
  SmmuCaps caps_;
  TranslatorConfig cfg_;
  ConfigFetcher fetcher_;
  Tlb tlb_;
  std::vector<std::unique_ptr<Tlb>> micro_tlbs_;  // by port, created on first use
  std::vector<std::unique_ptr<Tbu>> tbus_;         // none: monolithic
  Ps dti_latency_ps_ = 0;
  ConfigCache config_cache_;
  WalkCache walk_cache_;
  PageTableWalker walker_;
  Resource translation_slots_;
  Resource walker_slots_;
  Ps tlb_lookup_ps_;
  Ps micro_tlb_lookup_ps_;
  Ps config_lookup_ps_;
  Counter& translations_;
  Counter& bypassed_;
  Counter& aborted_;
  Counter& faults_;
  Histogram& latency_;
  std::unique_ptr<PageTableWalker> stale_walker_;  // set by enable_stale_check
  std::map<EntryKey, Ps> last_seen_valid_;
  // Latest completion of the translations arriving at each time, sorted by
  // arrival: a flat vector (arrivals come nearly in order, and retire()
  // keeps it short), so that a translation allocates nothing.
  struct ArrivalDone {
    Ps arrival, done;
  };
  std::vector<ArrivalDone> done_by_arrival_;
  void note_done(Ps arrival, Ps done);
  // TLB lookups and hits by StreamID (smmu.tlb.by_sid.<sid>.*), so that a
  // study sees which device suffers the misses.
  struct SidTlbCounters {
    Counter* lookups;
    Counter* hits;
  };
  SidTlbCounters& sid_tlb(uint32_t sid) {
    return last_sid_tlb_ && last_sid_ == sid ? *last_sid_tlb_ : sid_tlb_slow(sid);
  }
  SidTlbCounters& sid_tlb_slow(uint32_t sid);  // finds or creates, then remembers
  std::map<uint32_t, SidTlbCounters> sid_tlb_;
  // Most accesses come from the stream before: no map search for them.
  uint32_t last_sid_ = 0;
  SidTlbCounters* last_sid_tlb_ = nullptr;
  Counter* stale_checks_ = nullptr;
  Counter* stale_hits_ = nullptr;
  Histogram* stale_window_ = nullptr;
  StatsRegistry& stats_;
  std::string prefix_;
};

}  // namespace smmu_vp::smmu

// Set-associative TLB for the SMMU's translations (plain C++ core, no SystemC).
//
// What an entry holds
//   Tags: stage kind (stage 1 only, stage 2 only, or nested = combined S1+S2),
//   translation regime (NS-EL1, NS-EL2, NS-EL2-E2H: the StreamWorld of IHI 0070
//   3.17), VMID, ASID, global (nG == 0), granule, walk level, size (log2 bytes
//   of the cached mapping) and the input address (VA, or IPA for stage 2 only)
//   aligned to the size. Output: the PA, permissions and attributes, and for
//   nested entries the IPA too.
//   Only leaf translations are cached here; intermediate (table) descriptors
//   belong to a walk cache, which is a separate structure.
//
// Normalisation on insert (so that lookups and invalidations need no special
// cases): addresses are aligned down to the entry size; stage-2-only entries
// carry no ASID (asid = 0, global = false, and lookups ignore the ASID); EL2
// and EL2-E2H entries carry no VMID (vmid = 0); EL2 (non-E2H) entries carry no
// ASID either and are stored as global (IHI 0070 4.4.2.8: EL2_VA ignores the
// ASID when E2H == 0).
//
// Set index: an entry goes to set ((input_addr >> size_log2) + ctx) % sets,
// i.e. it is indexed by its own page/block number, offset by a hash `ctx` of
// its context (stage kind, regime, VMID and, for ASID-tagged entries, the
// ASID; TlbConfig::index_by_context, default on). Global, stage-2 and EL2
// entries are not ASID-tagged and hash without the ASID, so a lookup probes,
// per size class (distinct size_log2) present in the TLB, from the smallest to
// the largest: the set of its own ASID, then, if that size class holds any
// untagged entries, the untagged set; within a set it scans the ways in order
// and the first match wins. This is deterministic, needs no knowledge of the
// translation's size before the lookup, handles any mix of 4K/16K/64K pages
// and blocks (and contiguous-hint sizes), and keeps devices that use the same
// IOVA layout in different ASIDs/VMIDs (Linux allocates IOVAs per domain from
// the same range) from all piling into the same sets. With index_by_context
// off, the index is the page number alone. With entries == ways (one set) the
// TLB is fully associative: that is the micro-TLB configuration.
//
// Replacement within a set: LRU (hits and fills refresh), FIFO (fill order) or
// random (SplitMix64 from TlbConfig::seed, so the same seed evicts the same
// sequence of ways).
//
// Invalidation: one method per SMMU TLBI command (IHI 0070 4.4), each removing
// exactly the minimum scope the specification requires and returning the number
// of entries removed. See the comment on each method and on TlbiRange.
// Address-based commands probe only the sets that can hold a matching entry
// (per size class, per page of the range, per candidate context), falling back
// to every set when the range spans at least as many pages as there are sets
// or, with context indexing, for any-ASID commands (NH_VAA, EL2_VAA with E2H);
// the others (ALL, VMALL, ASID) scan every entry. The result never depends on
// which path is taken.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/stats.h"
#include "smmu/replacement.h"
#include "smmu/smmu_config.h"
#include "smmu/translation_types.h"

namespace smmu_vp {
class Counter;
class StatsRegistry;
}  // namespace smmu_vp

namespace smmu_vp::smmu {

// Which stages produced a cached translation. kNested entries are combined
// stage 1 + stage 2 (VA -> PA directly) and are tagged like stage-1 entries.
enum class StageKind : uint8_t { kStage1, kStage2, kNested };

// The translation regime (StreamWorld) an entry was inserted for. Only the
// Non-secure worlds are modelled. Stage 2 exists only for kEl1.
enum class TlbRegime : uint8_t { kEl1, kEl2, kEl2E2H };

const char* to_string(StageKind k);
const char* to_string(TlbRegime r);

struct TlbPermissions {
  bool read = false;
  bool write = false;
  bool exec_priv = false;
  bool exec_unpriv = false;
  bool user = false;  // accessible to unprivileged (AP[1])
  bool operator==(const TlbPermissions& o) const {
    return read == o.read && write == o.write && exec_priv == o.exec_priv &&
           exec_unpriv == o.exec_unpriv && user == o.user;
  }
};

// Memory attributes of the final mapping, opaque to the TLB: the MAIR-format
// attribute byte and the shareability (SH field encoding).
struct TlbAttributes {
  uint8_t mem_attr = 0;
  uint8_t sh = 0;
  bool operator==(const TlbAttributes& o) const { return mem_attr == o.mem_attr && sh == o.sh; }
};

struct TlbEntry {
  // Tags.
  StageKind stage = StageKind::kStage1;
  TlbRegime regime = TlbRegime::kEl1;
  uint16_t vmid = 0;  // 0 when no stage 2 / EL2 regimes
  uint16_t asid = 0;
  bool global = false;  // nG == 0: matches every ASID
  // Granule of the walk the leaf came from (stage 1 granule for nested) and
  // the level of that leaf (0..3; for nested, the stage-1 level). Both are
  // only used to honour the TG/TTL hints of range invalidation. `level` is
  // separate from size_log2 because a contiguous-hint or nested entry may be
  // smaller or larger than the block of its level.
  Granule granule = Granule::k4K;
  uint8_t level = 3;
  uint8_t size_log2 = 12;  // log2 of the bytes mapped: 12, 21, 30 for 4K ...
  uint64_t input_addr = 0;  // VA (stage 1, nested) or IPA (stage 2), aligned
  // Output.
  uint64_t output_addr = 0;  // PA, aligned
  uint64_t ipa = 0;          // nested: IPA of input_addr; stage 2: = input_addr
  TlbPermissions perms;
  TlbAttributes attrs;

  uint64_t size() const { return 1ull << size_log2; }
  uint64_t last_addr() const { return input_addr + (size() - 1); }
  bool contains(uint64_t addr) const { return addr >= input_addr && addr <= last_addr(); }
  // Does [input_addr, last] overlap [lo, hi] (inclusive bounds)?
  bool overlaps(uint64_t lo, uint64_t hi) const { return input_addr <= hi && lo <= last_addr(); }
};

struct TlbHit {
  TlbEntry entry;
  uint64_t pa = 0;   // output for the looked-up address (offset applied)
  uint64_t ipa = 0;  // nested: IPA of the address; stage 2: the address; stage 1: 0
};

// The leaf level that maps 2^size_log2 bytes with granule g (12 -> 3, 21 -> 2,
// 30 -> 1 for 4K), or nullopt if no level maps exactly that size (e.g. a
// contiguous-hint size).
std::optional<uint8_t> leaf_level(Granule g, unsigned size_log2);


// Address-based TLBI commands that have a range form (IHI 0070 4.4.1.1).
enum class TlbiScope : uint8_t {
  kNhVa,    // CMD_TLBI_NH_VA: EL1 stage 1 + nested, VMID, ASID or global
  kNhVaa,   // CMD_TLBI_NH_VAA: EL1 stage 1 + nested, VMID, any ASID
  kEl2Va,   // CMD_TLBI_EL2_VA
  kEl2Vaa,  // CMD_TLBI_EL2_VAA
  kS2Ipa,   // CMD_TLBI_S2_IPA: EL1 stage 2 only (+ nested if configured)
};

// A range invalidation: TG != 0 in the command (IHI 0070 4.4.1.1). Every entry
// of the scope that (a) overlaps [base, base + size) (overlap, not
// containment: a range may cover part of a block, and the whole block goes),
// (b) was inserted with granule == tg, and (c) when ttl != 0, was inserted from
// walk level ttl, is removed. The range does not wrap at the top of the
// address space. TTL == 1 with a 16K granule is treated as 0 (no FEAT_LPA2 /
// IDR5.DS modelled). leaf_only has no effect on this TLB (every entry is a
// leaf); it is kept so that a walk cache can share the description.
// The reserved NUM == SCALE == TTL == 0 encoding is the command decoder's
// CERROR_ILL, not checked here.
struct TlbiRange {
  TlbiScope scope = TlbiScope::kNhVa;
  uint16_t vmid = 0;
  uint16_t asid = 0;  // kNhVa, kEl2Va (with e2h)
  bool e2h = false;   // EL2 scopes: SMMU_CR2.E2H
  uint64_t base = 0;
  uint64_t size = 0;  // bytes; 0 removes nothing
  Granule tg = Granule::k4K;
  uint8_t ttl = 0;  // 0: any level
  bool leaf_only = false;

  // Range = (NUM + 1) * 2^SCALE * granule bytes (IHI 0070 4.4.1.1).
  static uint64_t bytes(unsigned num, unsigned scale, Granule tg);
};

struct TlbStats {
  uint64_t lookups = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t inserts = 0;
  uint64_t evictions = 0;
  uint64_t invalidated = 0;  // entries removed by invalidation
};

class Tlb {
 public:
  // Throws std::invalid_argument if entries == 0, ways == 0 or entries % ways.
  // With `stats`, counters <prefix>.{lookups,hits,misses,inserts,evictions,
  // invalidated} are kept in the registry as well as in stats().
  explicit Tlb(const TlbConfig& cfg, StatsRegistry* stats = nullptr,
               const std::string& prefix = "tlb");

  // Finds the entry translating `addr` (VA for stage 1 / nested, IPA for
  // stage 2) for the given context. Non-global entries must match the ASID;
  // global entries match any ASID; stage-2 lookups ignore the ASID; EL2
  // lookups ignore the VMID (and kEl2 the ASID). A hit refreshes LRU state.
  std::optional<TlbHit> lookup(StageKind stage, uint16_t vmid, uint16_t asid, uint64_t addr,
                               TlbRegime regime = TlbRegime::kEl1);
  // The same match without side effects (no stats, no LRU update).
  std::optional<TlbHit> peek(StageKind stage, uint16_t vmid, uint16_t asid, uint64_t addr,
                             TlbRegime regime = TlbRegime::kEl1) const;

  // Inserts (after normalisation, see the file comment). An entry with the same
  // identity (stage, regime, vmid, asid, global, size, input address) is
  // replaced in place; otherwise a free way is used, or a victim is evicted per
  // the policy. Returns the evicted entry, if any. Throws std::invalid_argument
  // for size_log2 < granule or > 63, level > 3, or stage 2/nested outside kEl1.
  std::optional<TlbEntry> insert(const TlbEntry& entry);

  // --- Invalidation (IHI 0070 4.4). Each returns the number removed. ---
  // Everything (reset; CMD_TLBI_NSNH_ALL + CMD_TLBI_EL2_ALL).
  size_t invalidate_all();
  // CMD_TLBI_NSNH_ALL (4.4.4.1): every EL1 entry at every stage, all VMIDs.
  // EL2 / EL2-E2H entries survive.
  size_t invalidate_nsnh_all();
  // CMD_TLBI_S12_VMALL (4.4.3.2): every EL1 entry of `vmid`, all stages.
  size_t invalidate_vmid(uint16_t vmid);
  // CMD_TLBI_NH_ALL (4.4.2.1): every EL1 stage-1 and nested entry of `vmid`,
  // global ones included; stage-2-only entries survive.
  size_t invalidate_stage1_all_for_vmid(uint16_t vmid);
  // CMD_TLBI_NH_ASID (4.4.2.2): non-global EL1 stage-1/nested entries of
  // (vmid, asid). Global entries survive.
  size_t invalidate_asid(uint16_t vmid, uint16_t asid);
  // CMD_TLBI_NH_VA, TG == 0 (4.4.2.4): EL1 stage-1/nested entries of `vmid`
  // containing `va` that are either non-global with `asid` or global.
  size_t invalidate_va(uint16_t vmid, uint16_t asid, uint64_t va, bool leaf_only = false);
  // CMD_TLBI_NH_VAA, TG == 0 (4.4.2.3): as NH_VA for every ASID.
  size_t invalidate_vaa(uint16_t vmid, uint64_t va, bool leaf_only = false);
  // CMD_TLBI_EL2_ALL (4.4.2.7): every EL2 and EL2-E2H entry.
  size_t invalidate_el2_all();
  // CMD_TLBI_EL2_ASID (4.4.2.10): non-global EL2-E2H entries of `asid`.
  size_t invalidate_el2_asid(uint16_t asid);
  // CMD_TLBI_EL2_VA (4.4.2.8): e2h: EL2-E2H entries containing `va` with
  // `asid` or global; !e2h: EL2 entries containing `va` (ASID ignored).
  size_t invalidate_el2_va(uint16_t asid, uint64_t va, bool e2h, bool leaf_only = false);
  // CMD_TLBI_EL2_VAA (4.4.2.9): as EL2_VA for every ASID.
  size_t invalidate_el2_vaa(uint64_t va, bool e2h, bool leaf_only = false);
  // CMD_TLBI_S2_IPA, TG == 0 (4.4.3.1): EL1 stage-2-only entries of `vmid`
  // containing `ipa`. Nested entries are not required to be removed and are
  // kept unless TlbConfig::s2_ipa_invalidates_nested (then: nested entries of
  // the VMID whose IPA range contains `ipa`).
  size_t invalidate_s2_ipa(uint16_t vmid, uint64_t ipa, bool leaf_only = false);
  // Any of the above address-based commands with TG != 0 (see TlbiRange).
  size_t invalidate_range(const TlbiRange& range);

  size_t size() const { return valid_; }
  size_t capacity() const { return slots_.size(); }
  unsigned sets() const { return sets_; }
  unsigned ways() const { return cfg_.ways; }
  const TlbConfig& config() const { return cfg_; }
  const TlbStats& stats() const { return stats_; }
  // The set an entry goes to (after normalisation). Throws like insert().
  unsigned set_of(const TlbEntry& entry) const;
  // Visits every valid entry, set by set, way by way.
  void for_each(const std::function<void(const TlbEntry&)>& fn) const;
  // The same with the set and way of each entry.
  void for_each_slot(
      const std::function<void(unsigned set, unsigned way, const TlbEntry&)>& fn) const;

 private:
  struct Slot {
    bool valid = false;
    TlbEntry entry;
  };
  // What an invalidation matches, besides the address: a predicate on the
  // entry's tags (and for ranges, its granule/level).
  using TagMatch = std::function<bool(const TlbEntry&)>;

  static bool tags_match(const TlbEntry& e, StageKind stage, uint16_t vmid, uint16_t asid,
                         TlbRegime regime);
  static bool same_identity(const TlbEntry& a, const TlbEntry& b);
  static bool asid_tagged(const TlbEntry& e);
  static TlbEntry normalise(const TlbEntry& in);

  // Index offset of a context; `asid` is only used when `tagged`.
  uint64_t ctx_hash(StageKind stage, TlbRegime regime, uint16_t vmid, bool tagged,
                    uint16_t asid) const;
  uint64_t ctx_hash(const TlbEntry& e) const;
  unsigned set_index(uint64_t addr, unsigned size_log2, uint64_t ctx) const;
  // The context hashes an address-based command must probe (at most four:
  // tagged and global, for two stage kinds), distinct and sorted; kept
  // inline so that a TLBI allocates nothing.
  struct ProbeContexts {
    std::array<uint64_t, 4> hash{};
    unsigned count = 0;
    void add(uint64_t h);
    const uint64_t* begin() const { return hash.data(); }
    const uint64_t* end() const { return hash.data() + count; }
  };
  // nullopt when the command must scan every set (any-ASID commands with
  // context indexing).
  std::optional<ProbeContexts> probe_contexts(TlbiScope scope, uint16_t vmid, uint16_t asid, bool e2h) const;

  std::optional<std::pair<size_t, TlbHit>> find(StageKind stage, uint16_t vmid, uint16_t asid,
                                                uint64_t addr, TlbRegime regime) const;
  // The hit find() reports for slot i and address addr.
  TlbHit hit_at(size_t i, uint64_t addr) const;
  void remove(size_t slot);
  void place(size_t slot, const TlbEntry& e);
  // Removes every entry matching `match` (full scan).
  size_t invalidate_where(const TagMatch& match);
  // Removes every entry matching `match` whose input range overlaps [lo, hi]
  // (inclusive), probing only the sets of `contexts` that can hold such
  // entries (every set when `contexts` is nullopt).
  size_t invalidate_overlapping(uint64_t lo, uint64_t hi, const TagMatch& match,
                                const std::optional<ProbeContexts>& contexts);
  // Address-based command of `scope` over [lo, hi] with an extra predicate.
  size_t invalidate_scope(TlbiScope scope, uint16_t vmid, uint16_t asid, bool e2h, uint64_t lo,
                          uint64_t hi, const TagMatch& extra);
  // S2_IPA over-invalidation of nested entries by their IPA range (full scan:
  // nested entries are indexed by VA).
  size_t invalidate_nested_by_ipa(uint16_t vmid, uint64_t lo, uint64_t hi);
  size_t count_removed(size_t n);
  static void bump(Counter* c, uint64_t& local, uint64_t n = 1) {
    local += n;
    if (c) c->add(n);
  }

  TlbConfig cfg_;
  unsigned sets_;
  bool sets_pow2_ = false;  // then x % sets_ is x & (sets_ - 1), without a division
  uint64_t mod_sets(uint64_t x) const { return sets_pow2_ ? x & (sets_ - 1) : x % sets_; }
  std::vector<Slot> slots_;          // set-major: set s is [s*ways, (s+1)*ways)
  std::vector<WayStamps> stamps_;    // parallel to slots_
  std::array<uint32_t, 64> size_class_count_{};  // valid entries per size_log2
  std::array<uint32_t, 64> untagged_count_{};    // ... of which not ASID-tagged
  uint64_t size_classes_ = 0;        // bit n set: some entry has size_log2 n
  size_t valid_ = 0;
  uint64_t clock_ = 0;
  SplitMix64 rng_;
  // The last lookup that hit, by its arguments and 4 KiB page: every entry is
  // at least 4 KiB and aligned to its size, so it holds all of a page or none,
  // and until an entry is placed or removed find() would give the same slot
  // for any address of that page. A DMA streaming through a buffer asks for
  // the same page many times in a row.
  struct LastHit {
    bool valid = false;
    StageKind stage{};
    TlbRegime regime{};
    uint16_t vmid = 0;
    uint16_t asid = 0;
    uint64_t page = 0;
    size_t slot = 0;
  };
  LastHit last_hit_;

  TlbStats stats_;
  Counter* c_lookups_ = nullptr;
  Counter* c_hits_ = nullptr;
  Counter* c_misses_ = nullptr;
  Counter* c_inserts_ = nullptr;
  Counter* c_evictions_ = nullptr;
  Counter* c_invalidated_ = nullptr;
};

}  // namespace smmu_vp::smmu

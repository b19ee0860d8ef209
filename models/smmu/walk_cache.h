// Walk cache of the SMMU's page table walker: remembers the addresses of
// intermediate translation tables, so that a walk for an address near one
// walked before starts at the deepest table already known instead of at the
// translation table base. IHI 0070 16.2: a stage 1 or stage 2 TLB "might
// contain or be paired with a walk cache", invalidated under the same
// conditions as a PE's walk caches (so TLBI by VA with Leaf = 0, by ASID, by
// VMID and all remove these entries; Leaf = 1 need not).
//
// An entry says "for input addresses whose bits above level_shift(L - 1)
// equal `tag`, the table at level L is at `table`", keyed by the translation
// stage, VMID, ASID (stage 1 only), granule and L. Stage 1 entries of a nested
// translation hold IPAs, which the walker still translates through stage 2.
// The entry also keeps the hierarchical attributes (APTable, XNTable, ...)
// gathered above that table, which the rest of the walk needs.
//
// Set-associative, `entries` / `ways` sets, least-recently-used replacement
// with a use counter; a set is chosen by a fixed hash of the whole key, so
// behaviour is deterministic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/stats.h"
#include "smmu/smmu_config.h"
#include "smmu/translation_types.h"

namespace smmu_vp::smmu {


class WalkCache {
 public:
  // What a translation regime's entries are tagged with. The ASID is ignored
  // for stage 2 (stored as 0).
  struct Tag {
    uint8_t stage = 1;  // 1 or 2
    uint16_t vmid = 0;
    uint16_t asid = 0;
    Granule granule = Granule::k4K;
  };

  struct Hit {
    unsigned level = 0;       // level of the cached table (start_level + 1 .. 3)
    uint64_t table = 0;       // its address (PA, or IPA for nested stage 1)
    uint8_t table_attrs = 0;  // tt::kTable* bits gathered above it
  };

  // Throws std::invalid_argument on a zero size or entries % ways != 0.
  // With `stats`, registers <prefix>.{lookups,hits,misses,inserts,evictions,invalidated}.
  explicit WalkCache(const WalkCacheConfig& cfg = {}, StatsRegistry* stats = nullptr,
                     const std::string& prefix = "walk_cache");

  // The deepest cached table on the walk of input address `ia` for a walk
  // that starts at `start_level` (tables at levels start_level + 1 .. 3 are
  // looked for, deepest first). Counts one hit or one miss.
  bool lookup(const Tag& tag, uint64_t ia, unsigned start_level, Hit* hit);

  // Records that the table at `level` (1..3) on the walk of `ia` is at
  // `table`. Replaces an entry with the same key; otherwise fills an invalid
  // way or evicts the least recently used one.
  void insert(const Tag& tag, unsigned level, uint64_t ia, uint64_t table, uint8_t table_attrs);

  // Invalidation, for the command queue's TLBI and CFGI handling.
  void invalidate_all();                                  // TLBI_NSNH_ALL
  void invalidate_vmid(uint16_t vmid);                    // both stages of a VMID (TLBI_S12_VMALL)
  void invalidate_stage1(uint16_t vmid);                  // every ASID of a VMID (TLBI_NH_ALL)
  void invalidate_asid(uint16_t asid, uint16_t vmid);     // TLBI_NH_ASID
  // Stage 1 entries of (asid, vmid) that lie on the walk of any address in
  // [va, va + size): TLBI_NH_VA with Leaf = 0 (size = 1) or its range form.
  void invalidate_va(uint64_t va, uint16_t asid, uint16_t vmid, uint64_t size = 1);
  void invalidate_va_all_asids(uint64_t va, uint16_t vmid, uint64_t size = 1);  // TLBI_NH_VAA
  void invalidate_stage2(uint16_t vmid);                  // stage 2 entries of a VMID
  void invalidate_ipa(uint64_t ipa, uint16_t vmid, uint64_t size = 1);  // TLBI_S2_IPA, Leaf = 0

  unsigned capacity() const { return static_cast<unsigned>(entries_.size()); }
  unsigned ways() const { return ways_; }
  unsigned sets() const { return sets_; }
  unsigned valid_entries() const;

  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  uint64_t evictions() const { return evictions_; }
  uint64_t inserts() const { return inserts_; }

 private:
  struct Entry {
    bool valid = false;
    uint8_t stage = 0;
    uint8_t level = 0;
    Granule granule = Granule::k4K;
    uint16_t vmid = 0;
    uint16_t asid = 0;
    uint8_t table_attrs = 0;
    uint64_t ia_tag = 0;  // ia >> level_shift(granule, level - 1)
    uint64_t table = 0;
    uint64_t last_use = 0;
  };

  static uint64_t ia_tag(Granule g, unsigned level, uint64_t ia);
  unsigned set_of(const Tag& tag, unsigned level, uint64_t ia_tag) const;
  Entry* find(const Tag& tag, unsigned level, uint64_t ia_tag);
  // Input-address range [lo, hi] an entry lies on the walk of.
  static void covered_range(const Entry& e, uint64_t* lo, uint64_t* hi);
  template <typename Pred>
  void invalidate_if(Pred pred);

  unsigned ways_;
  unsigned sets_;
  std::vector<Entry> entries_;  // set s holds entries_[s * ways_ .. + ways_)
  uint64_t use_clock_ = 0;
  uint64_t hits_ = 0, misses_ = 0, evictions_ = 0, inserts_ = 0;

  Counter* lookups_c_ = nullptr;
  Counter* hits_c_ = nullptr;
  Counter* misses_c_ = nullptr;
  Counter* inserts_c_ = nullptr;
  Counter* evictions_c_ = nullptr;
  Counter* invalidated_c_ = nullptr;
};

}  // namespace smmu_vp::smmu

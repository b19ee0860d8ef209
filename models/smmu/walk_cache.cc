#include "smmu/walk_cache.h"

#include <stdexcept>

#include "smmu/translation_table.h"

namespace smmu_vp::smmu {

namespace {
// 64-bit finalizer (a multiply-xorshift mix) so that neighbouring tags and
// different VMIDs/ASIDs spread over the sets.
uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}
}  // namespace

WalkCache::WalkCache(const WalkCacheConfig& cfg, StatsRegistry* stats, const std::string& prefix)
    : ways_(cfg.ways), sets_(cfg.ways ? cfg.entries / cfg.ways : 0) {
  if (cfg.entries == 0 || cfg.ways == 0 || cfg.entries % cfg.ways != 0)
    throw std::invalid_argument(prefix + ": entries must be a non-zero multiple of ways");
  entries_.resize(cfg.entries);
  if (stats) {
    lookups_c_ = &stats->counter(prefix + ".lookups");
    hits_c_ = &stats->counter(prefix + ".hits");
    misses_c_ = &stats->counter(prefix + ".misses");
    inserts_c_ = &stats->counter(prefix + ".inserts");
    evictions_c_ = &stats->counter(prefix + ".evictions");
    invalidated_c_ = &stats->counter(prefix + ".invalidated");
  }
}

uint64_t WalkCache::ia_tag(Granule g, unsigned level, uint64_t ia) {
  // The table at `level` is selected by the address bits the levels above it
  // resolve, i.e. bits [47 : level_shift(level - 1)].
  return ia >> tt::level_shift(g, level - 1);
}

unsigned WalkCache::set_of(const Tag& tag, unsigned level, uint64_t tag_bits) const {
  uint64_t k = tag_bits;
  k = mix(k ^ (static_cast<uint64_t>(tag.vmid) << 48) ^ (static_cast<uint64_t>(tag.asid) << 32) ^
          (static_cast<uint64_t>(tag.stage) << 8) ^ (static_cast<uint64_t>(level) << 4) ^
          static_cast<uint64_t>(tag.granule));
  return static_cast<unsigned>(k % sets_);
}

WalkCache::Entry* WalkCache::find(const Tag& tag, unsigned level, uint64_t tag_bits) {
  Entry* set = &entries_[static_cast<size_t>(set_of(tag, level, tag_bits)) * ways_];
  for (unsigned w = 0; w < ways_; ++w) {
    Entry& e = set[w];
    if (e.valid && e.stage == tag.stage && e.level == level && e.granule == tag.granule &&
        e.vmid == tag.vmid && e.asid == tag.asid && e.ia_tag == tag_bits)
      return &e;
  }
  return nullptr;
}

bool WalkCache::lookup(const Tag& tag_in, uint64_t ia, unsigned start_level, Hit* hit) {
  Tag tag = tag_in;
  if (tag.stage == 2) tag.asid = 0;
  if (lookups_c_) lookups_c_->add();
  for (unsigned level = 3; level > start_level; --level) {
    Entry* e = find(tag, level, ia_tag(tag.granule, level, ia));
    if (e) {
      e->last_use = ++use_clock_;
      hit->level = level;
      hit->table = e->table;
      hit->table_attrs = e->table_attrs;
      ++hits_;
      if (hits_c_) hits_c_->add();
      return true;
    }
  }
  ++misses_;
  if (misses_c_) misses_c_->add();
  return false;
}

void WalkCache::insert(const Tag& tag_in, unsigned level, uint64_t ia, uint64_t table, uint8_t table_attrs) {
  if (level < 1 || level > 3) return;
  Tag tag = tag_in;
  if (tag.stage == 2) tag.asid = 0;
  const uint64_t bits = ia_tag(tag.granule, level, ia);
  ++inserts_;
  if (inserts_c_) inserts_c_->add();
  Entry* e = find(tag, level, bits);
  if (!e) {
    Entry* set = &entries_[static_cast<size_t>(set_of(tag, level, bits)) * ways_];
    Entry* victim = nullptr;
    for (unsigned w = 0; w < ways_ && !victim; ++w)
      if (!set[w].valid) victim = &set[w];
    if (!victim) {
      victim = &set[0];
      for (unsigned w = 1; w < ways_; ++w)
        if (set[w].last_use < victim->last_use) victim = &set[w];
      ++evictions_;
      if (evictions_c_) evictions_c_->add();
    }
    e = victim;
    e->valid = true;
    e->stage = tag.stage;
    e->level = static_cast<uint8_t>(level);
    e->granule = tag.granule;
    e->vmid = tag.vmid;
    e->asid = tag.asid;
    e->ia_tag = bits;
  }
  e->table = table;
  e->table_attrs = table_attrs;
  e->last_use = ++use_clock_;
}

void WalkCache::covered_range(const Entry& e, uint64_t* lo, uint64_t* hi) {
  const unsigned shift = tt::level_shift(e.granule, e.level - 1);
  *lo = shift >= 64 ? 0 : e.ia_tag << shift;
  *hi = shift >= 64 ? UINT64_MAX : *lo + ((1ull << shift) - 1);
}

template <typename Pred>
void WalkCache::invalidate_if(Pred pred) {
  for (Entry& e : entries_) {
    if (e.valid && pred(e)) {
      e.valid = false;
      if (invalidated_c_) invalidated_c_->add();
    }
  }
}

void WalkCache::invalidate_all() {
  invalidate_if([](const Entry&) { return true; });
}

void WalkCache::invalidate_vmid(uint16_t vmid) {
  invalidate_if([vmid](const Entry& e) { return e.vmid == vmid; });
}

void WalkCache::invalidate_stage1(uint16_t vmid) {
  invalidate_if([vmid](const Entry& e) { return e.stage == 1 && e.vmid == vmid; });
}

void WalkCache::invalidate_asid(uint16_t asid, uint16_t vmid) {
  invalidate_if([asid, vmid](const Entry& e) { return e.stage == 1 && e.vmid == vmid && e.asid == asid; });
}

namespace {
bool overlaps(uint64_t lo, uint64_t hi, uint64_t a, uint64_t size) {
  const uint64_t last = size == 0 ? a : (a + (size - 1) < a ? UINT64_MAX : a + (size - 1));
  return a <= hi && last >= lo;
}
}  // namespace

void WalkCache::invalidate_va(uint64_t va, uint16_t asid, uint16_t vmid, uint64_t size) {
  invalidate_if([=](const Entry& e) {
    if (e.stage != 1 || e.vmid != vmid || e.asid != asid) return false;
    uint64_t lo, hi;
    covered_range(e, &lo, &hi);
    return overlaps(lo, hi, va, size);
  });
}

void WalkCache::invalidate_va_all_asids(uint64_t va, uint16_t vmid, uint64_t size) {
  invalidate_if([=](const Entry& e) {
    if (e.stage != 1 || e.vmid != vmid) return false;
    uint64_t lo, hi;
    covered_range(e, &lo, &hi);
    return overlaps(lo, hi, va, size);
  });
}

void WalkCache::invalidate_stage2(uint16_t vmid) {
  invalidate_if([vmid](const Entry& e) { return e.stage == 2 && e.vmid == vmid; });
}

void WalkCache::invalidate_ipa(uint64_t ipa, uint16_t vmid, uint64_t size) {
  invalidate_if([=](const Entry& e) {
    if (e.stage != 2 || e.vmid != vmid) return false;
    uint64_t lo, hi;
    covered_range(e, &lo, &hi);
    return overlaps(lo, hi, ipa, size);
  });
}

unsigned WalkCache::valid_entries() const {
  unsigned n = 0;
  for (const Entry& e : entries_) n += e.valid ? 1 : 0;
  return n;
}

}  // namespace smmu_vp::smmu

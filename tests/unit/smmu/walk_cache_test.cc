// WalkCache on its own: deepest-level lookup, what an entry covers, tagging,
// LRU replacement, invalidation scopes and statistics.
#include "smmu/walk_cache.h"

#include <stdexcept>

#include <gtest/gtest.h>

namespace smmu_vp::smmu {
namespace {

constexpr uint64_t kKiB = 1ull << 10;
constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;

WalkCache::Tag s1(uint16_t asid, uint16_t vmid, Granule g = Granule::k4K) {
  WalkCache::Tag t;
  t.stage = 1;
  t.asid = asid;
  t.vmid = vmid;
  t.granule = g;
  return t;
}

WalkCache::Tag s2(uint16_t vmid, Granule g = Granule::k4K) {
  WalkCache::Tag t;
  t.stage = 2;
  t.vmid = vmid;
  t.granule = g;
  return t;
}

// Level of the deepest table found for `ia` (0 when nothing is cached).
unsigned deepest(WalkCache& c, const WalkCache::Tag& t, uint64_t ia, unsigned start = 0) {
  WalkCache::Hit h;
  return c.lookup(t, ia, start, &h) ? h.level : 0;
}

void expect_tagged(WalkCache& c);

TEST(WalkCache, RejectsBadGeometry) {
  WalkCacheConfig c;
  c.entries = 0;
  EXPECT_THROW(WalkCache{c}, std::invalid_argument);
  c.entries = 10;
  c.ways = 4;
  EXPECT_THROW(WalkCache{c}, std::invalid_argument);
  c.ways = 0;
  EXPECT_THROW(WalkCache{c}, std::invalid_argument);
  c.entries = 12;
  c.ways = 4;
  WalkCache ok(c);
  EXPECT_EQ(ok.capacity(), 12u);
  EXPECT_EQ(ok.sets(), 3u);
  EXPECT_EQ(ok.ways(), 4u);
}

TEST(WalkCache, ReturnsTheDeepestCachedTable) {
  WalkCache c;
  const uint64_t va = 0x0000123456789000;
  c.insert(s1(1, 0), 1, va, 0x1000, 0);
  EXPECT_EQ(deepest(c, s1(1, 0), va), 1u);
  c.insert(s1(1, 0), 3, va, 0x3000, 0x5);
  c.insert(s1(1, 0), 2, va, 0x2000, 0x1);
  WalkCache::Hit h;
  ASSERT_TRUE(c.lookup(s1(1, 0), va, 0, &h));
  EXPECT_EQ(h.level, 3u);
  EXPECT_EQ(h.table, 0x3000u);
  EXPECT_EQ(h.table_attrs, 0x5u);
  // Only tables below the walk's initial level count: a walk starting at
  // level 3 has nothing to gain.
  EXPECT_FALSE(c.lookup(s1(1, 0), va, 3, &h));
  // Re-inserting the same key replaces the entry.
  c.insert(s1(1, 0), 3, va, 0x4000, 0);
  ASSERT_TRUE(c.lookup(s1(1, 0), va, 0, &h));
  EXPECT_EQ(h.table, 0x4000u);
  EXPECT_EQ(c.valid_entries(), 3u);
  EXPECT_EQ(c.evictions(), 0u);
}

TEST(WalkCache, EntryCoversTheRegionOfItsParentDescriptor) {
  WalkCache c;
  const uint64_t va = 0x0000004000000000 + 6 * kMiB;
  // 4K: a level 3 table serves 2 MiB, a level 2 table 1 GiB, level 1 512 GiB.
  c.insert(s1(1, 0), 3, va, 0x3000, 0);
  EXPECT_EQ(deepest(c, s1(1, 0), va + 2 * kMiB - 1), 3u);
  EXPECT_EQ(deepest(c, s1(1, 0), va - 1), 0u);
  EXPECT_EQ(deepest(c, s1(1, 0), va + 2 * kMiB), 0u);
  c.insert(s1(1, 0), 2, va, 0x2000, 0);
  EXPECT_EQ(deepest(c, s1(1, 0), va + 2 * kMiB), 2u);
  EXPECT_EQ(deepest(c, s1(1, 0), va - 6 * kMiB), 2u);
  EXPECT_EQ(deepest(c, s1(1, 0), va + kGiB), 0u);
  // 64K: a level 3 table serves 512 MiB.
  c.insert(s1(1, 0, Granule::k64K), 3, 512 * kMiB, 0x10000, 0);
  EXPECT_EQ(deepest(c, s1(1, 0, Granule::k64K), 1024 * kMiB - 64 * kKiB), 3u);
  EXPECT_EQ(deepest(c, s1(1, 0, Granule::k64K), 1024 * kMiB), 0u);
  // 16K: a level 2 table serves 64 GiB.
  c.insert(s1(1, 0, Granule::k16K), 2, 0, 0x4000, 0);
  EXPECT_EQ(deepest(c, s1(1, 0, Granule::k16K), 64 * kGiB - 1), 2u);
  EXPECT_EQ(deepest(c, s1(1, 0, Granule::k16K), 64 * kGiB), 0u);
}

TEST(WalkCache, EntriesAreTagged) {
  // Set-associative, and fully associative so that every entry is compared.
  WalkCacheConfig full;
  full.entries = 8;
  full.ways = 8;
  for (const WalkCacheConfig& cfg : {WalkCacheConfig{}, full}) {
    WalkCache c(cfg);
    expect_tagged(c);
  }
}

void expect_tagged(WalkCache& c) {
  const uint64_t va = 0x40000000;
  c.insert(s1(1, 0), 3, va, 0x3000, 0);
  EXPECT_EQ(deepest(c, s1(1, 0), va), 3u);
  EXPECT_EQ(deepest(c, s1(2, 0), va), 0u);                    // ASID
  EXPECT_EQ(deepest(c, s1(1, 1), va), 0u);                    // VMID
  EXPECT_EQ(deepest(c, s1(1, 0, Granule::k16K), va), 0u);     // granule
  EXPECT_EQ(deepest(c, s2(0), va), 0u);                       // stage
  // Stage 2 ignores the ASID.
  WalkCache::Tag t = s2(5);
  t.asid = 77;
  c.insert(t, 2, va, 0x2000, 0);
  EXPECT_EQ(deepest(c, s2(5), va), 2u);
}

TEST(WalkCache, LeastRecentlyUsedIsEvicted) {
  WalkCacheConfig cfg;
  cfg.entries = 4;
  cfg.ways = 4;  // one set: every entry competes
  StatsRegistry stats;
  WalkCache c(cfg, &stats, "smmu0.walk_cache");
  for (uint64_t i = 0; i < 4; ++i) c.insert(s1(1, 0), 3, i * 2 * kMiB, 0x1000 * (i + 1), 0);
  EXPECT_EQ(c.valid_entries(), 4u);
  // Touch entry 0, then add a fifth: entry 1 is the least recently used.
  EXPECT_EQ(deepest(c, s1(1, 0), 0), 3u);
  c.insert(s1(1, 0), 3, 4 * 2 * kMiB, 0x5000, 0);
  EXPECT_EQ(c.evictions(), 1u);
  EXPECT_EQ(deepest(c, s1(1, 0), 0), 3u);
  EXPECT_EQ(deepest(c, s1(1, 0), 1 * 2 * kMiB), 0u);
  EXPECT_EQ(deepest(c, s1(1, 0), 2 * 2 * kMiB), 3u);
  EXPECT_EQ(deepest(c, s1(1, 0), 4 * 2 * kMiB), 3u);
  EXPECT_EQ(stats.find_counter("smmu0.walk_cache.evictions")->value(), 1u);
  EXPECT_EQ(stats.find_counter("smmu0.walk_cache.inserts")->value(), 5u);
  EXPECT_EQ(stats.find_counter("smmu0.walk_cache.hits")->value(), 4u);
  EXPECT_EQ(stats.find_counter("smmu0.walk_cache.misses")->value(), 1u);
  EXPECT_EQ(stats.find_counter("smmu0.walk_cache.lookups")->value(), 5u);
  EXPECT_EQ(c.hits(), 4u);
  EXPECT_EQ(c.misses(), 1u);
}

TEST(WalkCache, CapacityIsRespectedAndBehaviourIsDeterministic) {
  WalkCacheConfig cfg;
  cfg.entries = 32;
  cfg.ways = 4;
  WalkCache a(cfg), b(cfg);
  for (uint64_t i = 0; i < 200; ++i) {
    const uint64_t va = (i * 0x9E3779B97F4A7C15ull) & ((1ull << 48) - 1);
    a.insert(s1(static_cast<uint16_t>(i % 3), 0), 3, va, i, 0);
    b.insert(s1(static_cast<uint16_t>(i % 3), 0), 3, va, i, 0);
    EXPECT_LE(a.valid_entries(), 32u);
  }
  EXPECT_EQ(a.valid_entries(), 32u);
  EXPECT_EQ(a.evictions(), 200u - 32u);
  for (uint64_t i = 0; i < 200; ++i) {
    const uint64_t va = (i * 0x9E3779B97F4A7C15ull) & ((1ull << 48) - 1);
    WalkCache::Hit ha, hb;
    const bool fa = a.lookup(s1(static_cast<uint16_t>(i % 3), 0), va, 0, &ha);
    const bool fb = b.lookup(s1(static_cast<uint16_t>(i % 3), 0), va, 0, &hb);
    ASSERT_EQ(fa, fb);
    if (fa) {
      EXPECT_EQ(ha.table, hb.table);
    }
  }
}

TEST(WalkCache, InvalidationScopes) {
  WalkCacheConfig cfg;
  cfg.entries = 256;  // room for everything: no eviction interferes
  cfg.ways = 8;
  WalkCache c(cfg);
  const uint64_t va = 0x0000008000000000 + 3 * kGiB + 4 * kMiB;
  auto fill = [&] {
    c.invalidate_all();
    for (uint16_t asid : {1, 2})
      for (uint16_t vmid : {0, 1})
        for (unsigned level = 1; level <= 3; ++level) c.insert(s1(asid, vmid), level, va, 0x1000 * level, 0);
    for (uint16_t vmid : {0, 1})
      for (unsigned level = 2; level <= 3; ++level) c.insert(s2(vmid), level, va, 0x9000 + level, 0);
    // A neighbour's level 3 table: another 2 MiB region of the same 1 GiB.
    c.insert(s1(1, 0), 3, va + 2 * kMiB, 0x7000, 0);
    EXPECT_EQ(c.valid_entries(), 12u + 4u + 1u);
  };

  fill();
  c.invalidate_all();
  EXPECT_EQ(c.valid_entries(), 0u);

  fill();
  c.invalidate_vmid(1);  // both stages
  EXPECT_EQ(deepest(c, s1(1, 1), va), 0u);
  EXPECT_EQ(deepest(c, s1(2, 1), va), 0u);
  EXPECT_EQ(deepest(c, s2(1), va), 0u);
  EXPECT_EQ(deepest(c, s1(1, 0), va), 3u);
  EXPECT_EQ(deepest(c, s2(0), va), 3u);

  fill();
  c.invalidate_stage1(0);  // every ASID of VMID 0, stage 2 untouched
  EXPECT_EQ(deepest(c, s1(1, 0), va), 0u);
  EXPECT_EQ(deepest(c, s1(2, 0), va), 0u);
  EXPECT_EQ(deepest(c, s2(0), va), 3u);
  EXPECT_EQ(deepest(c, s1(1, 1), va), 3u);

  fill();
  c.invalidate_asid(2, 1);
  EXPECT_EQ(deepest(c, s1(2, 1), va), 0u);
  EXPECT_EQ(deepest(c, s1(2, 0), va), 3u);
  EXPECT_EQ(deepest(c, s1(1, 1), va), 3u);

  fill();
  // By VA: every level on va's path goes; the neighbour's level 3 table stays
  // (it does not cover va), though its level 2 and 1 parents are gone.
  c.invalidate_va(va + 100, 1, 0);
  EXPECT_EQ(deepest(c, s1(1, 0), va), 0u);
  EXPECT_EQ(deepest(c, s1(1, 0), va + 2 * kMiB), 3u);
  EXPECT_EQ(deepest(c, s1(1, 0), va + 4 * kMiB), 0u);
  EXPECT_EQ(deepest(c, s1(2, 0), va), 3u);
  EXPECT_EQ(deepest(c, s1(1, 1), va), 3u);
  EXPECT_EQ(deepest(c, s2(0), va), 3u);

  fill();
  // A range covering both 2 MiB regions.
  c.invalidate_va(va, 1, 0, 4 * kMiB);
  EXPECT_EQ(deepest(c, s1(1, 0), va + 2 * kMiB), 0u);

  fill();
  // A VA in another 1 GiB region leaves the level 3 and level 2 tables but
  // removes the shared level 1 table (512 GiB).
  c.invalidate_va(va + kGiB, 1, 0);
  EXPECT_EQ(deepest(c, s1(1, 0), va), 3u);
  WalkCache::Hit h;
  c.invalidate_va(va + kGiB, 1, 0);
  c.invalidate_va(va, 1, 0, 1);
  EXPECT_FALSE(c.lookup(s1(1, 0), va, 0, &h));

  fill();
  c.invalidate_va_all_asids(va, 0);
  EXPECT_EQ(deepest(c, s1(1, 0), va), 0u);
  EXPECT_EQ(deepest(c, s1(2, 0), va), 0u);
  EXPECT_EQ(deepest(c, s1(1, 1), va), 3u);

  fill();
  c.invalidate_stage2(0);
  EXPECT_EQ(deepest(c, s2(0), va), 0u);
  EXPECT_EQ(deepest(c, s2(1), va), 3u);
  EXPECT_EQ(deepest(c, s1(1, 0), va), 3u);

  fill();
  c.invalidate_ipa(va, 1);
  EXPECT_EQ(deepest(c, s2(1), va), 0u);
  EXPECT_EQ(deepest(c, s2(0), va), 3u);
  EXPECT_EQ(deepest(c, s1(1, 1), va), 3u);
  c.invalidate_ipa(va + 2 * kMiB, 0);  // another 2 MiB: only the level 2 table goes
  EXPECT_EQ(deepest(c, s2(0), va), 3u);
  c.invalidate_ipa(va + kGiB, 0);
  EXPECT_EQ(deepest(c, s2(0), va), 3u);
}

TEST(WalkCache, InvalidationIsCounted) {
  StatsRegistry stats;
  WalkCache c({}, &stats, "wc");
  c.insert(s1(1, 0), 3, 0, 0x1000, 0);
  c.insert(s1(1, 0), 2, 0, 0x2000, 0);
  c.invalidate_asid(1, 0);
  EXPECT_EQ(stats.find_counter("wc.invalidated")->value(), 2u);
  EXPECT_EQ(c.valid_entries(), 0u);
}

}  // namespace
}  // namespace smmu_vp::smmu

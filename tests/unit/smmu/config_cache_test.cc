// ConfigCache: STE and CD keys, capacity and LRU replacement, and the exact
// scope of every CFGI command (IHI 0070 4.3).
#include "smmu/config_cache.h"

#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include <gtest/gtest.h>

#include "common/stats.h"

namespace smmu_vp::smmu {
namespace {

// A lookup's result as a value (the cache returns a pointer into itself).
std::optional<CachedDescriptor> hit(const CachedDescriptor* d) {
  if (!d) return std::nullopt;
  return *d;
}

CachedDescriptor desc(uint64_t tag) {
  CachedDescriptor d{};
  for (size_t i = 0; i < d.size(); ++i) d[i] = tag * 16 + i;
  return d;
}

ConfigCacheConfig cfg(unsigned stes, unsigned cds) {
  ConfigCacheConfig c;
  c.ste_entries = stes;
  c.cd_entries = cds;
  return c;
}

using SidSet = std::set<uint32_t>;
using CdSet = std::set<std::pair<uint32_t, uint32_t>>;

SidSet stes(const ConfigCache& c) {
  SidSet out;
  c.for_each_ste([&](uint32_t sid, const CachedDescriptor&) { out.insert(sid); });
  return out;
}
CdSet cds(const ConfigCache& c) {
  CdSet out;
  c.for_each_cd(
      [&](uint32_t sid, uint32_t ssid, const CachedDescriptor&) { out.insert({sid, ssid}); });
  return out;
}

TEST(ConfigCache, SteKeyedByStreamIdCdBySidAndSsid) {
  ConfigCache c(cfg(8, 8));
  c.insert_ste(1, desc(1));
  c.insert_ste(2, desc(2));
  c.insert_cd(1, 0, desc(10));
  c.insert_cd(1, 5, desc(15));
  c.insert_cd(2, 5, desc(25));  // same SSID, other stream: a separate entry
  EXPECT_EQ(hit(c.lookup_ste(1)), desc(1));
  EXPECT_EQ(hit(c.lookup_ste(2)), desc(2));
  EXPECT_FALSE(hit(c.lookup_ste(3)).has_value());
  EXPECT_EQ(hit(c.lookup_cd(1, 0)), desc(10));
  EXPECT_EQ(hit(c.lookup_cd(1, 5)), desc(15));
  EXPECT_EQ(hit(c.lookup_cd(2, 5)), desc(25));
  EXPECT_FALSE(hit(c.lookup_cd(2, 0)).has_value());
  EXPECT_FALSE(hit(c.lookup_cd(3, 5)).has_value());
  // Replacing an entry updates its payload without evicting.
  EXPECT_FALSE(c.insert_cd(1, 5, desc(99)));
  EXPECT_EQ(hit(c.lookup_cd(1, 5)), desc(99));
  EXPECT_EQ(c.cd_size(), 3u);
  EXPECT_EQ(c.stats().ste.lookups, 3u);
  EXPECT_EQ(c.stats().ste.hits, 2u);
  EXPECT_EQ(c.stats().ste.misses, 1u);
  EXPECT_EQ(c.stats().cd.hits, 4u);
  EXPECT_EQ(c.stats().cd.misses, 2u);
  // SubstreamIDs are 20 bits.
  EXPECT_EQ(hit(c.lookup_cd(1, 0x100005)), desc(99));
}

// A version that moves whenever an entry is stored or removed, and only then,
// is what lets a caller keep something derived from a returned pointer.
TEST(ConfigCache, VersionMovesOnEveryStoreOrRemovalAndOnlyThen) {
  ConfigCache c(cfg(2, 4));
  uint64_t ste = c.ste_version(), cd = c.cd_version();
  auto moved = [&](bool want_ste, bool want_cd) {
    const bool s = c.ste_version() != ste, d = c.cd_version() != cd;
    ste = c.ste_version();
    cd = c.cd_version();
    return s == want_ste && d == want_cd;
  };
  c.insert_ste(1, desc(1));
  EXPECT_TRUE(moved(true, false));
  c.insert_cd(1, 0, desc(10));
  EXPECT_TRUE(moved(false, true));
  c.lookup_ste(1);
  c.lookup_ste(1);  // the most recently used again
  c.lookup_cd(1, 0);
  c.lookup_ste(9);  // a miss
  EXPECT_TRUE(moved(false, false));
  c.insert_ste(1, desc(2));  // replaced in place
  EXPECT_TRUE(moved(true, false));
  c.insert_ste(2, desc(3));
  c.insert_ste(3, desc(4));  // evicts
  EXPECT_TRUE(moved(true, false));
  c.invalidate_cd(1, 0);
  EXPECT_TRUE(moved(false, true));
  c.invalidate_ste(3);
  EXPECT_TRUE(moved(true, true));
  c.invalidate_all();
  EXPECT_TRUE(moved(true, true));
}

// A lookup of the most recently used entry leaves the LRU order as it was.
TEST(ConfigCache, RepeatedLookupOfTheNewestEntryKeepsTheOrder) {
  ConfigCache c(cfg(2, 0));
  c.insert_ste(1, desc(1));
  c.insert_ste(2, desc(2));
  EXPECT_EQ(hit(c.lookup_ste(2)), desc(2));
  EXPECT_EQ(hit(c.lookup_ste(2)), desc(2));
  EXPECT_EQ(hit(c.lookup_ste(1)), desc(1));  // 1 newest, 2 oldest
  EXPECT_TRUE(c.insert_ste(3, desc(3)));     // evicts 2
  EXPECT_EQ(stes(c), (SidSet{1, 3}));
  EXPECT_EQ(c.stats().ste.hits, 3u);
}

TEST(ConfigCache, StaleDescriptorServedUntilInvalidated) {
  ConfigCache c(cfg(4, 4));
  c.insert_ste(7, desc(1));
  // Software rewrites the STE in memory: the cache still returns the old copy.
  EXPECT_EQ(hit(c.lookup_ste(7)), desc(1));
  EXPECT_EQ(c.invalidate_ste(7), 1u);
  EXPECT_FALSE(hit(c.lookup_ste(7)).has_value());
}

TEST(ConfigCache, CapacityAndLruOrderForStes) {
  ConfigCache c(cfg(3, 2));
  EXPECT_EQ(c.ste_capacity(), 3u);
  EXPECT_EQ(c.cd_capacity(), 2u);
  EXPECT_FALSE(c.insert_ste(1, desc(1)));
  EXPECT_FALSE(c.insert_ste(2, desc(2)));
  EXPECT_FALSE(c.insert_ste(3, desc(3)));
  ASSERT_TRUE(hit(c.lookup_ste(1)).has_value());  // order (LRU first): 2, 3, 1
  EXPECT_TRUE(c.insert_ste(4, desc(4)));     // evicts 2
  EXPECT_EQ(stes(c), (SidSet{1, 3, 4}));
  EXPECT_FALSE(c.insert_ste(3, desc(33)));   // refresh 3: order 1, 4, 3
  EXPECT_TRUE(c.insert_ste(5, desc(5)));     // evicts 1
  EXPECT_EQ(stes(c), (SidSet{3, 4, 5}));
  EXPECT_EQ(c.stats().ste.evictions, 2u);
  EXPECT_EQ(c.stats().ste.inserts, 6u);
  // contains_* does not refresh LRU order.
  EXPECT_TRUE(c.contains_ste(4));
  EXPECT_TRUE(c.insert_ste(6, desc(6)));  // evicts 4
  EXPECT_EQ(stes(c), (SidSet{3, 5, 6}));
}

TEST(ConfigCache, CapacityAndLruOrderForCds) {
  ConfigCache c(cfg(2, 2));
  c.insert_cd(1, 1, desc(1));
  c.insert_cd(1, 2, desc(2));
  ASSERT_TRUE(hit(c.lookup_cd(1, 1)).has_value());
  EXPECT_TRUE(c.insert_cd(2, 1, desc(3)));  // evicts (1, 2)
  EXPECT_EQ(cds(c), (CdSet{{1, 1}, {2, 1}}));
  EXPECT_EQ(c.stats().cd.evictions, 1u);
  // STE and CD capacities are independent.
  c.insert_ste(1, desc(1));
  c.insert_ste(2, desc(2));
  EXPECT_EQ(c.cd_size(), 2u);
  EXPECT_EQ(c.ste_size(), 2u);
}

TEST(ConfigCache, ZeroCapacityCachesNothing) {
  ConfigCache c(cfg(0, 0));
  EXPECT_FALSE(c.insert_ste(1, desc(1)));
  EXPECT_FALSE(c.insert_cd(1, 0, desc(1)));
  EXPECT_FALSE(hit(c.lookup_ste(1)).has_value());
  EXPECT_FALSE(hit(c.lookup_cd(1, 0)).has_value());
  EXPECT_EQ(c.ste_size() + c.cd_size(), 0u);
}

// Streams 0, 3..9, 0x7FFFFFFF, 0xFFFFFFFF, each with an STE and CDs at SSIDs
// 0 and 1 (stream 6 also at the largest SSID).
class ConfigCacheInvalidation : public testing::Test {
 protected:
  ConfigCacheInvalidation() : cache_(cfg(64, 64)) {
    for (uint32_t sid : kSids) {
      cache_.insert_ste(sid, desc(sid));
      cache_.insert_cd(sid, 0, desc(sid + 1));
      cache_.insert_cd(sid, 1, desc(sid + 2));
    }
    cache_.insert_cd(6, ConfigCache::kSsidMask, desc(3));
  }

  static SidSet all_sids() { return SidSet(std::begin(kSids), std::end(kSids)); }
  static SidSet sids_except(const SidSet& gone) {
    SidSet out;
    for (uint32_t s : kSids)
      if (!gone.count(s)) out.insert(s);
    return out;
  }
  static CdSet cds_except(const SidSet& gone_streams, const CdSet& gone_cds = {}) {
    CdSet out;
    for (uint32_t s : kSids) {
      if (gone_streams.count(s)) continue;
      out.insert({s, 0});
      out.insert({s, 1});
      if (s == 6) out.insert({s, ConfigCache::kSsidMask});
    }
    for (const auto& k : gone_cds) out.erase(k);
    return out;
  }
  // CDs cached for the streams in `streams`.
  static size_t cd_count(const SidSet& streams) {
    size_t n = 0;
    for (uint32_t s : streams) n += s == 6 ? 3 : 2;
    return n;
  }

  static constexpr uint32_t kSids[] = {0, 3, 4, 5, 6, 7, 8, 9, 0x7FFFFFFF, 0xFFFFFFFF};
  ConfigCache cache_;
};

TEST_F(ConfigCacheInvalidation, CfgiSteDropsTheSteAndEveryCdOfTheStream) {
  // IHI 0070 4.3.1: CDs cached through the StreamID go too (any Leaf).
  EXPECT_EQ(cache_.invalidate_ste(6), 1u + 3u);
  EXPECT_EQ(stes(cache_), sids_except({6}));
  EXPECT_EQ(cds(cache_), cds_except({6}));
  EXPECT_EQ(cache_.invalidate_ste(0xFFFFFFFF), 3u);
  EXPECT_EQ(cds(cache_), cds_except({6, 0xFFFFFFFF}));
  EXPECT_EQ(cache_.invalidate_ste(1), 0u);  // nothing cached
  EXPECT_EQ(cache_.stats().ste.invalidated, 2u);
  EXPECT_EQ(cache_.stats().cd.invalidated, 5u);
}

TEST_F(ConfigCacheInvalidation, SteRangeBounds) {
  using B = std::pair<uint32_t, uint32_t>;
  EXPECT_EQ(ConfigCache::ste_range_bounds(5, 0), (B{4, 5}));
  EXPECT_EQ(ConfigCache::ste_range_bounds(5, 1), (B{4, 7}));
  EXPECT_EQ(ConfigCache::ste_range_bounds(9, 2), (B{8, 15}));
  EXPECT_EQ(ConfigCache::ste_range_bounds(0x80000001u, 30), (B{0x80000000u, 0xFFFFFFFFu}));
  EXPECT_EQ(ConfigCache::ste_range_bounds(0x1234, 31), (B{0, 0xFFFFFFFFu}));
  EXPECT_THROW(ConfigCache::ste_range_bounds(0, 32), std::invalid_argument);
}

TEST_F(ConfigCacheInvalidation, CfgiSteRangeDropsAnAlignedBlock) {
  // sid 6, Range 1: 2^2 StreamIDs aligned, 4..7; the low two bits are ignored.
  EXPECT_EQ(cache_.invalidate_ste_range(6, 1), 4u + cd_count({4, 5, 6, 7}));
  EXPECT_EQ(stes(cache_), sids_except({4, 5, 6, 7}));
  EXPECT_EQ(cds(cache_), cds_except({4, 5, 6, 7}));
}

TEST_F(ConfigCacheInvalidation, CfgiSteRangeZeroIsTwoStreams) {
  EXPECT_EQ(cache_.invalidate_ste_range(9, 0), 2u + cd_count({8, 9}));
  EXPECT_EQ(stes(cache_), sids_except({8, 9}));
  EXPECT_EQ(cds(cache_), cds_except({8, 9}));
}

TEST_F(ConfigCacheInvalidation, CfgiSteRangeTopHalf) {
  EXPECT_EQ(cache_.invalidate_ste_range(0xFFFFFFFF, 30), 1u + 2u);
  EXPECT_EQ(stes(cache_), sids_except({0xFFFFFFFF}));
  EXPECT_EQ(cds(cache_), cds_except({0xFFFFFFFF}));
}

TEST_F(ConfigCacheInvalidation, CfgiAllIsRange31) {
  const size_t total = cache_.ste_size() + cache_.cd_size();
  EXPECT_EQ(cache_.invalidate_ste_range(0x12345678, 31), total);
  EXPECT_EQ(cache_.ste_size() + cache_.cd_size(), 0u);
  EXPECT_THROW(cache_.invalidate_ste_range(0, 32), std::invalid_argument);
}

TEST_F(ConfigCacheInvalidation, CfgiCdDropsOneCdAndKeepsTheSte) {
  EXPECT_EQ(cache_.invalidate_cd(6, 1), 1u);
  EXPECT_EQ(stes(cache_), all_sids());
  EXPECT_EQ(cds(cache_), cds_except({}, {{6, 1}}));
  EXPECT_EQ(cache_.invalidate_cd(6, 1), 0u);
  EXPECT_EQ(cache_.invalidate_cd(6, 2), 0u);
  EXPECT_EQ(cache_.invalidate_cd(0xFFFFFFFF, 0), 1u);
  EXPECT_EQ(cds(cache_), cds_except({}, {{6, 1}, {0xFFFFFFFF, 0}}));
  EXPECT_EQ(cache_.stats().cd.invalidated, 2u);
  EXPECT_EQ(cache_.stats().ste.invalidated, 0u);
}

TEST_F(ConfigCacheInvalidation, CfgiCdAllDropsEveryCdOfTheStreamOnly) {
  EXPECT_EQ(cache_.invalidate_cd_all(6), 3u);
  EXPECT_EQ(stes(cache_), all_sids());
  EXPECT_EQ(cds(cache_), cds_except({6}));
  EXPECT_EQ(cache_.invalidate_cd_all(0xFFFFFFFF), 2u);
  EXPECT_EQ(cache_.invalidate_cd_all(0), 2u);
  EXPECT_EQ(cds(cache_), cds_except({6, 0, 0xFFFFFFFF}));
  EXPECT_EQ(stes(cache_), all_sids());
}

TEST_F(ConfigCacheInvalidation, InvalidateAll) {
  const size_t total = cache_.ste_size() + cache_.cd_size();
  EXPECT_EQ(total, 10u + cd_count(all_sids()));
  EXPECT_EQ(cache_.invalidate_all(), total);
  EXPECT_TRUE(stes(cache_).empty());
  EXPECT_TRUE(cds(cache_).empty());
}

TEST(ConfigCache, StatsGoToRegistry) {
  StatsRegistry reg;
  ConfigCache c(cfg(1, 1), &reg, "smmu0.cfg");
  c.insert_ste(1, desc(1));
  c.insert_ste(2, desc(2));
  hit(c.lookup_ste(1));
  hit(c.lookup_ste(2));
  c.insert_cd(2, 0, desc(3));
  c.invalidate_ste(2);
  EXPECT_EQ(reg.find_counter("smmu0.cfg.ste.inserts")->value(), 2u);
  EXPECT_EQ(reg.find_counter("smmu0.cfg.ste.evictions")->value(), 1u);
  EXPECT_EQ(reg.find_counter("smmu0.cfg.ste.lookups")->value(), 2u);
  EXPECT_EQ(reg.find_counter("smmu0.cfg.ste.hits")->value(), 1u);
  EXPECT_EQ(reg.find_counter("smmu0.cfg.ste.misses")->value(), 1u);
  EXPECT_EQ(reg.find_counter("smmu0.cfg.ste.invalidated")->value(), 1u);
  EXPECT_EQ(reg.find_counter("smmu0.cfg.cd.invalidated")->value(), 1u);
  EXPECT_EQ(reg.find_counter("smmu0.cfg.cd.inserts")->value(), 1u);
}

}  // namespace
}  // namespace smmu_vp::smmu

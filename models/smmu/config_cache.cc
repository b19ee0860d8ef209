// SMMU configuration cache (STEs and CDs): see config_cache.h for the
// invalidation scopes (IHI 0070 4.3).
#include "smmu/config_cache.h"

#include <stdexcept>

#include "common/stats.h"

namespace smmu_vp::smmu {

ConfigCache::ConfigCache(const ConfigCacheConfig& cfg, StatsRegistry* stats,
                         const std::string& prefix)
    : stes_(cfg.ste_entries), cds_(cfg.cd_entries) {
  if (stats) {
    auto wire = [&](SideCounters& c, const std::string& side) {
      const std::string p = prefix + "." + side + ".";
      c.lookups = &stats->counter(p + "lookups");
      c.hits = &stats->counter(p + "hits");
      c.misses = &stats->counter(p + "misses");
      c.inserts = &stats->counter(p + "inserts");
      c.evictions = &stats->counter(p + "evictions");
      c.invalidated = &stats->counter(p + "invalidated");
    };
    wire(c_ste_, "ste");
    wire(c_cd_, "cd");
  }
}

void ConfigCache::bump(Counter* c, uint64_t& local, uint64_t n) {
  local += n;
  if (c) c->add(n);
}

const CachedDescriptor* ConfigCache::lookup_ste(uint32_t sid) {
  bump(c_ste_.lookups, stats_.ste.lookups);
  const CachedDescriptor* d = stes_.get(sid);
  if (!d) {
    bump(c_ste_.misses, stats_.ste.misses);
    return nullptr;
  }
  bump(c_ste_.hits, stats_.ste.hits);
  return d;
}

const CachedDescriptor* ConfigCache::lookup_cd(uint32_t sid, uint32_t ssid) {
  bump(c_cd_.lookups, stats_.cd.lookups);
  const CachedDescriptor* d = cds_.get(cd_key(sid, ssid));
  if (!d) {
    bump(c_cd_.misses, stats_.cd.misses);
    return nullptr;
  }
  bump(c_cd_.hits, stats_.cd.hits);
  return d;
}

bool ConfigCache::contains_ste(uint32_t sid) const { return stes_.contains(sid); }

bool ConfigCache::contains_cd(uint32_t sid, uint32_t ssid) const {
  return cds_.contains(cd_key(sid, ssid));
}

bool ConfigCache::insert_ste(uint32_t sid, const CachedDescriptor& ste) {
  if (stes_.capacity() == 0) return false;
  bump(c_ste_.inserts, stats_.ste.inserts);
  if (!stes_.put(sid, ste)) return false;
  bump(c_ste_.evictions, stats_.ste.evictions);
  return true;
}

bool ConfigCache::insert_cd(uint32_t sid, uint32_t ssid, const CachedDescriptor& cd) {
  if (cds_.capacity() == 0) return false;
  bump(c_cd_.inserts, stats_.cd.inserts);
  if (!cds_.put(cd_key(sid, ssid), cd)) return false;
  bump(c_cd_.evictions, stats_.cd.evictions);
  return true;
}

size_t ConfigCache::drop_streams(uint32_t lo, uint32_t hi) {
  const size_t stes = stes_.erase_range(lo, hi);
  const size_t cds = cds_.erase_range(cd_key(lo, 0), cd_key(hi, 0) | 0xFFFFFFFFull);
  if (stes) bump(c_ste_.invalidated, stats_.ste.invalidated, stes);
  if (cds) bump(c_cd_.invalidated, stats_.cd.invalidated, cds);
  return stes + cds;
}

std::pair<uint32_t, uint32_t> ConfigCache::ste_range_bounds(uint32_t sid, unsigned range) {
  if (range > kMaxSteRange)
    throw std::invalid_argument("ConfigCache: CFGI_STE_RANGE.Range is 0..31");
  // 2^(range+1) StreamIDs, aligned: the low range+1 bits of sid are ignored.
  const uint64_t span_mask = (uint64_t{1} << (range + 1)) - 1;
  const uint64_t lo = sid & ~span_mask;
  return {static_cast<uint32_t>(lo), static_cast<uint32_t>(lo | span_mask)};
}

size_t ConfigCache::invalidate_ste(uint32_t sid) { return drop_streams(sid, sid); }

size_t ConfigCache::invalidate_ste_range(uint32_t sid, unsigned range) {
  const auto [lo, hi] = ste_range_bounds(sid, range);
  return drop_streams(lo, hi);
}

size_t ConfigCache::invalidate_cd(uint32_t sid, uint32_t ssid) {
  if (!cds_.erase(cd_key(sid, ssid))) return 0;
  bump(c_cd_.invalidated, stats_.cd.invalidated);
  return 1;
}

size_t ConfigCache::invalidate_cd_all(uint32_t sid) {
  const size_t n = cds_.erase_range(cd_key(sid, 0), cd_key(sid, 0) | 0xFFFFFFFFull);
  if (n) bump(c_cd_.invalidated, stats_.cd.invalidated, n);
  return n;
}

size_t ConfigCache::invalidate_all() { return drop_streams(0, 0xFFFFFFFFu); }

void ConfigCache::for_each_ste(
    const std::function<void(uint32_t sid, const CachedDescriptor&)>& fn) const {
  stes_.for_each([&](uint32_t sid, const CachedDescriptor& d) { fn(sid, d); });
}

void ConfigCache::for_each_cd(
    const std::function<void(uint32_t sid, uint32_t ssid, const CachedDescriptor&)>& fn) const {
  cds_.for_each([&](uint64_t key, const CachedDescriptor& d) {
    fn(static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key & kSsidMask), d);
  });
}

}  // namespace smmu_vp::smmu

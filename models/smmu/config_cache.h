// Configuration cache of the SMMU: Stream Table Entries keyed by StreamID and
// Context Descriptors keyed by (StreamID, SubstreamID), each a fully
// associative LRU cache of its own capacity (plain C++ core, no SystemC).
//
// Payload: the raw 64 bytes of the descriptor as fetched from memory
// (`CachedDescriptor`, eight little-endian doublewords), not a decoded form. The
// cache then does not depend on the STE/CD decoders, holds exactly what the
// hardware would, and a test can check that a stale descriptor is served until
// the right CFGI command is issued. Decoding a cached descriptor is the
// caller's job (and cheap).
//
// CDs are cached per StreamID (IHI 0070 4.3.3: a cached CD is local to the
// StreamID through which it was located), so a CD shared by two streams is
// two entries. Intermediate descriptors (L1STD, L1CD) are not cached here, so
// the Leaf parameter of CFGI_STE / CFGI_CD changes nothing in this cache.
//
// Invalidation (IHI 0070 4.3), each returning the number of entries removed
// (STEs + CDs):
//   CFGI_STE(sid)             4.3.1: the STE and every CD cached through sid,
//                             for either value of Leaf.
//   CFGI_STE_RANGE(sid, r)    4.3.2: the STEs and CDs of the aligned block of
//                             2^(r+1) StreamIDs containing sid (the low r+1
//                             bits of sid are ignored). r = 31 is CFGI_ALL
//                             (4.3.6): every StreamID.
//   CFGI_CD(sid, ssid)        4.3.3: the CD fetched from index ssid of sid's
//                             CD table (a single-CD STE is index 0). The STE
//                             stays.
//   CFGI_CD_ALL(sid)          4.3.4: every CD of sid. The STE stays.
//   invalidate_all()          everything (CFGI_ALL, reset).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "smmu/replacement.h"
#include "smmu/smmu_config.h"

namespace smmu_vp {
class Counter;
class StatsRegistry;
}  // namespace smmu_vp

namespace smmu_vp::smmu {

// One 64-byte STE or CD as eight doublewords: the same type as SteWords and
// CdWords of descriptors.h, so a fetched descriptor goes in and a cached one
// goes to the decoder without conversion.
using CachedDescriptor = std::array<uint64_t, 8>;


struct ConfigCacheStats {
  struct Side {
    uint64_t lookups = 0;
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t inserts = 0;
    uint64_t evictions = 0;
    uint64_t invalidated = 0;
  };
  Side ste;
  Side cd;
};

class ConfigCache {
 public:
  static constexpr unsigned kMaxSteRange = 31;  // CFGI_STE_RANGE.Range is 5 bits
  // SubstreamIDs are 20 bits; higher bits of an ssid argument are ignored
  // (one of the behaviours IHI 0070 4.1.7 permits for out-of-range values).
  static constexpr uint32_t kSsidMask = 0xFFFFF;

  // With `stats`, counters <prefix>.ste.{lookups,hits,misses,inserts,
  // evictions,invalidated} and the same under <prefix>.cd.
  explicit ConfigCache(const ConfigCacheConfig& cfg, StatsRegistry* stats = nullptr,
                       const std::string& prefix = "config_cache");

  // A hit makes the entry most recently used and returns it (nullptr on a
  // miss), valid until the next insert or invalidation.
  const CachedDescriptor* lookup_ste(uint32_t sid);
  const CachedDescriptor* lookup_cd(uint32_t sid, uint32_t ssid);
  // Changes whenever an STE (CD) is inserted, replaced or removed: a
  // descriptor pointer lookup_ste (lookup_cd) returned still holds the same
  // words while the version is the same.
  uint64_t ste_version() const { return stes_.version(); }
  uint64_t cd_version() const { return cds_.version(); }
  // No side effects (no stats, no LRU update).
  bool contains_ste(uint32_t sid) const;
  bool contains_cd(uint32_t sid, uint32_t ssid) const;

  // Insert or replace; returns true if another entry was evicted for room.
  bool insert_ste(uint32_t sid, const CachedDescriptor& ste);
  bool insert_cd(uint32_t sid, uint32_t ssid, const CachedDescriptor& cd);

  size_t invalidate_ste(uint32_t sid);                      // CMD_CFGI_STE
  size_t invalidate_ste_range(uint32_t sid, unsigned range);  // CMD_CFGI_STE_RANGE
  size_t invalidate_cd(uint32_t sid, uint32_t ssid);        // CMD_CFGI_CD
  size_t invalidate_cd_all(uint32_t sid);                   // CMD_CFGI_CD_ALL
  size_t invalidate_all();                                  // CMD_CFGI_ALL

  // The inclusive StreamID block CFGI_STE_RANGE(sid, range) covers. Throws
  // std::invalid_argument for range > 31.
  static std::pair<uint32_t, uint32_t> ste_range_bounds(uint32_t sid, unsigned range);

  size_t ste_size() const { return stes_.size(); }
  size_t cd_size() const { return cds_.size(); }
  size_t ste_capacity() const { return stes_.capacity(); }
  size_t cd_capacity() const { return cds_.capacity(); }
  const ConfigCacheStats& stats() const { return stats_; }
  // Most to least recently used.
  void for_each_ste(const std::function<void(uint32_t sid, const CachedDescriptor&)>& fn) const;
  void for_each_cd(
      const std::function<void(uint32_t sid, uint32_t ssid, const CachedDescriptor&)>& fn) const;

 private:
  struct SideCounters {
    Counter* lookups = nullptr;
    Counter* hits = nullptr;
    Counter* misses = nullptr;
    Counter* inserts = nullptr;
    Counter* evictions = nullptr;
    Counter* invalidated = nullptr;
  };
  static uint64_t cd_key(uint32_t sid, uint32_t ssid) {
    return (static_cast<uint64_t>(sid) << 32) | (ssid & kSsidMask);
  }
  static void bump(Counter* c, uint64_t& local, uint64_t n = 1);
  // Drops the STEs and CDs of StreamIDs [lo, hi].
  size_t drop_streams(uint32_t lo, uint32_t hi);

  LruMap<uint32_t, CachedDescriptor> stes_;
  LruMap<uint64_t, CachedDescriptor> cds_;  // key: sid << 32 | ssid
  ConfigCacheStats stats_;
  SideCounters c_ste_;
  SideCounters c_cd_;
};

}  // namespace smmu_vp::smmu

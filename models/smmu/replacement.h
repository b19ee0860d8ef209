// Replacement-policy helpers shared by the SMMU's caches (TLBs, configuration
// cache, and later walk caches): the policy vocabulary, a small deterministic
// random-number generator, victim selection within one set, and an LRU map for
// fully associative caches keyed by an ordered key.
//
// Everything here is deterministic: the random policy draws from a SplitMix64
// sequence seeded from the configuration, never from the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <list>
#include <map>
#include <optional>
#include <utility>

#include "smmu/smmu_config.h"

namespace smmu_vp::smmu {

// SplitMix64: tiny, fast, and good enough to pick victims. The same seed always
// gives the same sequence on every host.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed = 0) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform enough in [0, n) for victim selection (modulo bias is negligible
  // for set sizes); n must be non-zero.
  uint64_t below(uint64_t n) { return next() % n; }

 private:
  uint64_t state_;
};

// Per-way bookkeeping for set-associative caches: `last_use` is refreshed on
// every hit and fill (LRU order), `filled` only on a fill (FIFO order). Both
// come from one monotonically increasing per-cache clock, so they are unique.
struct WayStamps {
  uint64_t last_use = 0;
  uint64_t filled = 0;
};

// Picks the way to evict from a full set of `ways` ways whose stamps are
// `stamps[0..ways)`. LRU: smallest last_use; FIFO: smallest filled; random: a
// draw from `rng`. Ties cannot happen with unique stamps; the lowest way would
// win if they did.
inline unsigned pick_victim(ReplacementPolicy policy, const WayStamps* stamps, unsigned ways,
                            SplitMix64& rng) {
  if (policy == ReplacementPolicy::kRandom) return static_cast<unsigned>(rng.below(ways));
  unsigned victim = 0;
  for (unsigned w = 1; w < ways; ++w) {
    const uint64_t a = policy == ReplacementPolicy::kLru ? stamps[w].last_use : stamps[w].filled;
    const uint64_t b =
        policy == ReplacementPolicy::kLru ? stamps[victim].last_use : stamps[victim].filled;
    if (a < b) victim = w;
  }
  return victim;
}

// A fully associative cache with LRU replacement, keyed by an ordered key so
// that a contiguous key range can be dropped in one call. A capacity of zero
// disables caching (every get misses, put stores nothing).
template <typename Key, typename Value>
class LruMap {
 public:
  explicit LruMap(size_t capacity) : capacity_(capacity) {}

  size_t size() const { return index_.size(); }
  size_t capacity() const { return capacity_; }
  bool contains(const Key& k) const { return index_.count(k) != 0; }

  // Hit: returns the value and makes the entry most recently used.
  const Value* get(const Key& k) {
    // Already the most recently used (a stream hitting its own entry again):
    // nothing to move, no index search.
    if (!order_.empty() && order_.front().first == k) return &order_.front().second;
    auto it = index_.find(k);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }
  // No LRU update.
  const Value* peek(const Key& k) const {
    auto it = index_.find(k);
    return it == index_.end() ? nullptr : &it->second->second;
  }

  // Inserts or replaces; the entry becomes most recently used. Returns the key
  // evicted to make room, if any.
  std::optional<Key> put(const Key& k, const Value& v) {
    if (capacity_ == 0) return std::nullopt;
    ++version_;
    auto it = index_.find(k);
    if (it != index_.end()) {
      it->second->second = v;
      order_.splice(order_.begin(), order_, it->second);
      return std::nullopt;
    }
    std::optional<Key> evicted;
    if (index_.size() >= capacity_) {
      evicted = order_.back().first;
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    order_.emplace_front(k, v);
    index_.emplace(k, order_.begin());
    return evicted;
  }

  bool erase(const Key& k) {
    auto it = index_.find(k);
    if (it == index_.end()) return false;
    ++version_;
    order_.erase(it->second);
    index_.erase(it);
    return true;
  }
  // Drops every key in [lo, hi] (inclusive); returns how many.
  size_t erase_range(const Key& lo, const Key& hi) {
    ++version_;
    size_t n = 0;
    auto it = index_.lower_bound(lo);
    while (it != index_.end() && !(hi < it->first)) {
      order_.erase(it->second);
      it = index_.erase(it);
      ++n;
    }
    return n;
  }
  size_t clear() {
    ++version_;
    const size_t n = index_.size();
    index_.clear();
    order_.clear();
    return n;
  }

  // Changes whenever a value is stored or an entry removed: a pointer get()
  // returned still points to the same value while the version is the same.
  uint64_t version() const { return version_; }

  // Visits entries from most to least recently used.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const auto& kv : order_) fn(kv.first, kv.second);
  }

 private:
  using Order = std::list<std::pair<Key, Value>>;
  size_t capacity_;
  Order order_;  // front = most recently used
  std::map<Key, typename Order::iterator> index_;
  uint64_t version_ = 0;
};

}  // namespace smmu_vp::smmu

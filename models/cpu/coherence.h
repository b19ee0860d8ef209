// Cache-line ownership between cores, for the cost of shared-memory atomics.
// A MESI-like sketch: a line has one writer and a set of sharers. A load by a
// core that shares the line, or a write by its sole owner, is local; anything
// else moves the line between cores and pays the transfer cost. This is what
// makes a contended lock or a shared queue word expensive and a private one cheap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/sim_time.h"

namespace smmu_vp {

// A set of cores, a bit each: which hold a line.
class CoreSet {
 public:
  static constexpr unsigned kMaxCores = 256;
  static CoreSet of(unsigned core) {
    CoreSet s;
    s.w_[(core % kMaxCores) / 64] = uint64_t{1} << (core % 64);
    return s;
  }
  bool empty() const { return (w_[0] | w_[1] | w_[2] | w_[3]) == 0; }
  bool has(unsigned core) const { return (w_[(core % kMaxCores) / 64] >> (core % 64)) & 1; }
  CoreSet operator|(const CoreSet& o) const {
    CoreSet s;
    for (unsigned i = 0; i < kWords; ++i) s.w_[i] = w_[i] | o.w_[i];
    return s;
  }
  CoreSet without(const CoreSet& o) const {
    CoreSet s;
    for (unsigned i = 0; i < kWords; ++i) s.w_[i] = w_[i] & ~o.w_[i];
    return s;
  }
  bool intersects(const CoreSet& o) const {
    return ((w_[0] & o.w_[0]) | (w_[1] & o.w_[1]) | (w_[2] & o.w_[2]) | (w_[3] & o.w_[3])) != 0;
  }
  bool operator==(const CoreSet& o) const {
    return w_[0] == o.w_[0] && w_[1] == o.w_[1] && w_[2] == o.w_[2] && w_[3] == o.w_[3];
  }
  bool operator!=(const CoreSet& o) const { return !(*this == o); }
  // Each core of the set, lowest first.
  template <class Fn>
  void for_each(Fn fn) const {
    for (unsigned i = 0; i < kWords; ++i)
      for (uint64_t w = w_[i]; w; w &= w - 1) fn(i * 64 + static_cast<unsigned>(__builtin_ctzll(w)));
  }

 private:
  static constexpr unsigned kWords = kMaxCores / 64;
  uint64_t w_[kWords] = {};
};

class CoherenceTracker {
 public:
  static constexpr unsigned kLineShift = 6;  // 64-byte lines
  static constexpr unsigned kMaxCores = CoreSet::kMaxCores;

  // True when the access needed the line from another core.
  bool access(uintptr_t addr, unsigned cpu, bool write) { return !holders(addr, cpu, write).empty(); }
  // The same access, returning the other cores it involved: for a write
  // every other core holding a copy (each must give it up), for a load of a
  // line this core lacks every core that has it (one of them sends it);
  // empty when the access was local.
  CoreSet holders(uintptr_t addr, unsigned cpu, bool write);
  // Until when the line is busy with a transfer (CpuConfig::line_queueing):
  // a core that needs it sooner waits. Only a line some core touched.
  Ps& busy_until(uintptr_t addr) { return find(addr >> kLineShift).busy_until; }

  uint64_t transfers() const { return transfers_; }
  uint64_t local() const { return local_; }
  // Lines some core has touched so far.
  uint64_t lines() const { return used_; }

 private:
  // Every core access goes through here: an open-addressing table (linear
  // probing, power-of-two size, never shrinks) instead of a node per line,
  // so a lookup is a multiply and usually one cache line. A line never
  // touched holds no copy: sharers 0.
  struct Slot {
    uintptr_t line = kEmpty;
    CoreSet sharers;  // the cores holding a copy
    Ps busy_until = 0;
  };
  static constexpr uintptr_t kEmpty = ~uintptr_t{0};  // no line: addresses shift right by kLineShift
  Slot& find(uintptr_t line);
  void grow();

  std::vector<Slot> slots_ = std::vector<Slot>(1024);
  uint64_t used_ = 0;
  uint64_t transfers_ = 0;
  uint64_t local_ = 0;
};

}  // namespace smmu_vp

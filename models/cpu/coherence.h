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

class CoherenceTracker {
 public:
  static constexpr unsigned kLineShift = 6;  // 64-byte lines
  static constexpr unsigned kMaxCores = 64;

  // True when the access needed the line from another core.
  bool access(uintptr_t addr, unsigned cpu, bool write);

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
    uint64_t sharers = 0;  // bit per core holding a copy
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

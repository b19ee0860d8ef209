// Cache-line ownership between cores, for the cost of shared-memory atomics.
// A MESI-like sketch: a line has one writer and a set of sharers. A load by a
// core that shares the line, or a write by its sole owner, is local; anything
// else moves the line between cores and pays the transfer cost. This is what
// makes a contended lock or a shared queue word expensive and a private one cheap.
#pragma once

#include <cstdint>
#include <unordered_map>

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

 private:
  struct Line {
    uint64_t sharers = 0;  // bit per core holding a copy
  };
  std::unordered_map<uintptr_t, Line> lines_;
  uint64_t transfers_ = 0;
  uint64_t local_ = 0;
};

}  // namespace smmu_vp

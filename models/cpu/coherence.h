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
  bool access(uintptr_t addr, unsigned cpu, bool write) { return holders(addr, cpu, write) != 0; }
  // The same access, returning the other cores it involved (a bit per
  // core): for a write every other core holding a copy (each must give it
  // up), for a load of a line this core lacks every core that has it (one
  // of them sends it); 0 when the access was local.
  uint64_t holders(uintptr_t addr, unsigned cpu, bool write);
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
    uint64_t sharers = 0;  // bit per core holding a copy
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

#include "cpu/coherence.h"

namespace smmu_vp {

bool CoherenceTracker::access(uintptr_t addr, unsigned cpu, bool write) {
  Line& line = lines_[addr >> kLineShift];
  const uint64_t me = 1ull << (cpu % kMaxCores);
  bool moved;
  if (write) {
    moved = (line.sharers & ~me) != 0;  // another core holds a copy to invalidate
    line.sharers = me;
  } else {
    moved = (line.sharers & me) == 0 && line.sharers != 0;
    line.sharers |= me;
  }
  if (moved) ++transfers_;
  else ++local_;
  return moved;
}

}  // namespace smmu_vp

#include "cpu/coherence.h"

namespace smmu_vp {

namespace {
// Fibonacci hashing: neighbouring lines land far apart.
std::size_t slot_of(uintptr_t line, std::size_t mask) {
  return static_cast<std::size_t>((static_cast<uint64_t>(line) * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}
}  // namespace

CoherenceTracker::Slot& CoherenceTracker::find(uintptr_t line) {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = slot_of(line, mask);; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.line == line) return s;
    if (s.line != kEmpty) continue;
    // At most half full, so a probe always ends at an empty slot.
    if (2 * (used_ + 1) > slots_.size()) {
      grow();
      return find(line);
    }
    ++used_;
    s.line = line;
    return s;
  }
}

void CoherenceTracker::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  const std::size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.line == kEmpty) continue;
    std::size_t i = slot_of(s.line, mask);
    while (slots_[i].line != kEmpty) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

CoreSet CoherenceTracker::holders(uintptr_t addr, unsigned cpu, bool write) {
  Slot& line = find(addr >> kLineShift);
  const CoreSet me = CoreSet::of(cpu);
  CoreSet others;
  if (write) {
    others = line.sharers.without(me);  // other cores hold copies to invalidate
    line.sharers = me;
  } else {
    if (!line.sharers.intersects(me)) others = line.sharers;
    line.sharers = line.sharers | me;
  }
  if (!others.empty()) ++transfers_;
  else ++local_;
  return others;
}

}  // namespace smmu_vp

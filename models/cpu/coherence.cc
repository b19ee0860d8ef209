#include "cpu/coherence.h"

#include <algorithm>

namespace smmu_vp {

namespace {
// Fibonacci hashing: neighbouring lines land far apart.
std::size_t slot_of(uintptr_t line, std::size_t mask) {
  return static_cast<std::size_t>((static_cast<uint64_t>(line) * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}
// `given` is `name` or `name` numbered ("<name>_2").
bool is_name_or_numbered(const std::string& given, const std::string& name) {
  if (given == name) return true;
  if (given.size() <= name.size() + 1 || given.compare(0, name.size(), name) != 0 || given[name.size()] != '_') return false;
  return std::all_of(given.begin() + static_cast<std::ptrdiff_t>(name.size()) + 1, given.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
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

// The other cores an access by `cpu` involves, given who holds the line: for
// a write every other copy (each must be given up), for a load of a line the
// core lacks every core that has it.
CoreSet CoherenceTracker::others_of(const CoreSet& sharers, unsigned cpu, bool write) {
  const CoreSet me = CoreSet::of(cpu);
  if (write) return sharers.without(me);
  return sharers.intersects(me) ? CoreSet{} : sharers;
}

// An access that involved `others`: a transfer of the line, or a local one.
void CoherenceTracker::count(Slot& line, const CoreSet& others) {
  if (others.empty()) {
    ++local_;
  } else {
    ++transfers_;
    ++line.transfers;
  }
}

CoreSet CoherenceTracker::holders(uintptr_t addr, unsigned cpu, bool write) {
  Slot& line = find(addr >> kLineShift);
  const CoreSet others = others_of(line.sharers, cpu, write);
  line.sharers = write ? CoreSet::of(cpu) : line.sharers | CoreSet::of(cpu);
  count(line, others);
  return others;
}

CoreSet CoherenceTracker::to_home(uintptr_t addr, unsigned cpu, unsigned home) {
  Slot& line = find(addr >> kLineShift);
  // Never empty: the home takes part in every far atomic.
  const CoreSet others = line.sharers.without(CoreSet::of(cpu)) | CoreSet::of(home);
  line.sharers = CoreSet::of(home);
  count(line, others);
  return others;
}

bool CoherenceTracker::others_hold(uintptr_t addr, unsigned cpu, bool write) const {
  const Slot* line = lookup(addr >> kLineShift);
  return line && !others_of(line->sharers, cpu, write).empty();
}

const CoherenceTracker::Slot* CoherenceTracker::lookup(uintptr_t line) const {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = slot_of(line, mask);; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.line == line) return &s;
    if (s.line == kEmpty) return nullptr;
  }
}

void CoherenceTracker::occupy(Occupancy& o, Ps from, Ps to) const {
  o.busy_until = to;
  o.busy += to - from;
  if (!has_window()) return;
  const Ps a = std::max(from, window_start_), b = std::min(to, window_end_);
  if (b > a) o.busy_in_window += b - a;
}

void CoherenceTracker::name_lines(uintptr_t addr, uint64_t len, std::string name) {
  if (len == 0) return;
  const uintptr_t first = addr >> kLineShift, last = (addr + len - 1) >> kLineShift;
  // Named again (a driver that sets its policy twice): nothing new. Another
  // range under a name already given (a second SMMU's queue): "<name>_2".
  unsigned same_name = 0;
  for (const Named& n : names_) {
    if (!is_name_or_numbered(n.name, name)) continue;
    if (n.first == first && n.last == last) return;
    ++same_name;
  }
  if (same_name) name += "_" + std::to_string(same_name + 1);
  names_.push_back({first, last, std::move(name)});
}

// Busier inside the window, or as busy there and busier over the run.
bool CoherenceTracker::busier(const Occupancy& o, const NamedUse& than) const {
  if (has_window() && o.busy_in_window != than.busy_in_window) return o.busy_in_window > than.busy_in_window;
  return o.busy > than.busy;
}

std::vector<CoherenceTracker::NamedUse> CoherenceTracker::named_use() const {
  std::vector<NamedUse> out;
  for (const Named& n : names_) {
    NamedUse u{n.name};
    for (uintptr_t line = n.first; line <= n.last; ++line) {
      const Slot* s = lookup(line);
      if (!s) continue;
      u.transfers += s->transfers;
      if (busier(s->occupancy, u)) {
        u.busy = s->occupancy.busy;
        u.busy_in_window = s->occupancy.busy_in_window;
      }
    }
    out.push_back(std::move(u));
  }
  return out;
}

CoherenceTracker::NamedUse CoherenceTracker::busiest_unnamed() const {
  NamedUse u{"busiest_unnamed"};
  for (const Slot& s : slots_) {
    if (s.line == kEmpty) continue;
    const bool named =
        std::any_of(names_.begin(), names_.end(), [&](const Named& n) { return s.line >= n.first && s.line <= n.last; });
    if (named) continue;
    // Ties go to the line with more transfers, so that the table's order
    // (host addresses) never picks the answer.
    const bool tie = s.occupancy.busy_in_window == u.busy_in_window && s.occupancy.busy == u.busy;
    if (busier(s.occupancy, u) || (tie && s.transfers > u.transfers))
      u = {u.name, s.transfers, s.occupancy.busy, s.occupancy.busy_in_window};
  }
  return u;
}

}  // namespace smmu_vp

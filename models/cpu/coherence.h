// Cache-line ownership between cores, for the cost of shared-memory atomics.
// A MESI-like sketch: a line has one writer and a set of sharers. A load by a
// core that shares the line, or a write by its sole owner, is local; anything
// else moves the line between cores and pays the transfer cost. This is what
// makes a contended lock or a shared queue word expensive and a private one cheap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
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
  // Whether that access would involve another core, without making it.
  bool others_hold(uintptr_t addr, unsigned cpu, bool write) const;
  // An atomic done at the line's home node (cpu.far_atomics): every copy
  // goes back to `home`, an id no core has, which becomes the only holder.
  // Returns the holders the access involved: the other cores and the home.
  CoreSet to_home(uintptr_t addr, unsigned cpu, unsigned home);
  // A line as one server of transfers (CpuConfig::line_queueing): until
  // when it is busy with one (a core that needs it sooner waits), and how
  // long it has been busy in all and inside the measurement window.
  struct Occupancy {
    Ps busy_until = 0;
    Ps busy = 0;
    Ps busy_in_window = 0;
    unsigned waiters = 0;  // cores retrying for it (CpuConfig::line_retry_ns)
    unsigned kept = 0;     // of those, the ones whose request the home node kept
  };
  Occupancy& occupancy(uintptr_t addr) { return find(addr >> kLineShift).occupancy; }
  // The line serves a transfer over [from, to): busy until `to`.
  void occupy(Occupancy& o, Ps from, Ps to) const;
  // An app's measurement window, for busy_in_window.
  void set_window(Ps start, Ps end) {
    window_start_ = start;
    window_end_ = end;
  }
  bool has_window() const { return window_end_ > window_start_; }
  Ps window_length() const { return window_end_ - window_start_; }

  // Names the lines of [addr, addr + len) (hal_name_shared), so that a
  // contended one can be reported by what it holds. A line under two names
  // (false sharing) is reported under both.
  void name_lines(uintptr_t addr, uint64_t len, std::string name);
  // For each name, in naming order: the transfers of all its lines, and the
  // busiest of them (a line is a server of its own: their use does not add).
  struct NamedUse {
    std::string name;
    uint64_t transfers = 0;
    Ps busy = 0;            // of the busiest line
    Ps busy_in_window = 0;  // likewise, inside the window
  };
  std::vector<NamedUse> named_use() const;
  // The busiest line no name covers (by its time inside the window when
  // there is one), and its transfers: what to look at when none of the named
  // lines explains a contended run.
  NamedUse busiest_unnamed() const;

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
    uint64_t transfers = 0;
    Occupancy occupancy;
  };
  static constexpr uintptr_t kEmpty = ~uintptr_t{0};  // no line: addresses shift right by kLineShift
  Slot& find(uintptr_t line);
  const Slot* lookup(uintptr_t line) const;  // null when no core touched it
  static CoreSet others_of(const CoreSet& sharers, unsigned cpu, bool write);
  void count(Slot& line, const CoreSet& others);
  bool busier(const Occupancy& o, const NamedUse& than) const;
  void grow();

  struct Named {
    uintptr_t first, last;  // lines
    std::string name;
  };
  std::vector<Named> names_;
  Ps window_start_ = 0, window_end_ = 0;

  std::vector<Slot> slots_ = std::vector<Slot>(1024);
  uint64_t used_ = 0;
  uint64_t transfers_ = 0;
  uint64_t local_ = 0;
};

}  // namespace smmu_vp

#include "cpu/interrupt_controller_core.h"

#include <algorithm>
#include <stdexcept>

namespace smmu_vp {

InterruptControllerCore::InterruptControllerCore(unsigned lines, unsigned cpus)
    : cpus_(cpus), pending_at_(lines, kNotPending), target_(lines, 0) {
  if (lines == 0 || cpus == 0) throw std::invalid_argument("interrupt controller needs lines and cpus");
}

bool InterruptControllerCore::raise(unsigned line, Ps at) {
  if (line >= pending_at_.size()) return false;
  ++raised_;
  if (pending_at_[line] != kNotPending) {
    ++coalesced_;
    pending_at_[line] = std::min(pending_at_[line], at);
  } else {
    pending_at_[line] = at;
  }
  return true;
}

bool InterruptControllerCore::set_target(unsigned line, unsigned cpu) {
  if (line >= target_.size() || cpu >= cpus_) return false;
  target_[line] = cpu;
  return true;
}

int InterruptControllerCore::take_pending(unsigned cpu, Ps now) {
  for (unsigned line = 0; line < pending_at_.size(); ++line) {
    if (target_[line] == cpu && pending_at_[line] <= now) {
      pending_at_[line] = kNotPending;
      return static_cast<int>(line);
    }
  }
  return -1;
}

Ps InterruptControllerCore::next_pending(unsigned cpu) const {
  Ps best = kNotPending;
  for (unsigned line = 0; line < pending_at_.size(); ++line)
    if (target_[line] == cpu) best = std::min(best, pending_at_[line]);
  return best;
}

}  // namespace smmu_vp

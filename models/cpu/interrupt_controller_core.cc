#include "cpu/interrupt_controller_core.h"

#include <algorithm>
#include <stdexcept>

namespace smmu_vp {

InterruptControllerCore::InterruptControllerCore(unsigned lines, unsigned cpus)
    : cpus_(cpus), edges_(lines), target_(lines, 0), pending_(cpus, 0) {
  if (lines == 0 || cpus == 0) throw std::invalid_argument("interrupt controller needs lines and cpus");
}

bool InterruptControllerCore::raise(unsigned line, Ps at) {
  if (line >= edges_.size()) return false;
  ++raised_;
  auto& e = edges_[line];
  e.insert(std::upper_bound(e.begin(), e.end(), at), at);
  ++pending_[target_[line]];
  return true;
}

bool InterruptControllerCore::set_target(unsigned line, unsigned cpu) {
  if (line >= target_.size() || cpu >= cpus_) return false;
  pending_[target_[line]] -= edges_[line].size();
  pending_[cpu] += edges_[line].size();
  target_[line] = cpu;
  return true;
}

int InterruptControllerCore::take_pending(unsigned cpu, Ps now) {
  if (!pending_[cpu]) return -1;  // the common case, asked at every synchronisation of a core
  for (unsigned line = 0; line < edges_.size(); ++line) {
    auto& e = edges_[line];
    if (target_[line] != cpu || e.empty() || e.front() > now) continue;
    const auto due_end = std::upper_bound(e.begin(), e.end(), now);
    const auto taken = static_cast<uint64_t>(due_end - e.begin());
    coalesced_ += taken - 1;
    pending_[cpu] -= taken;
    e.erase(e.begin(), due_end);
    return static_cast<int>(line);
  }
  return -1;
}

Ps InterruptControllerCore::next_pending(unsigned cpu) const {
  Ps best = kNotPending;
  if (!pending_[cpu]) return best;
  for (unsigned line = 0; line < edges_.size(); ++line)
    if (target_[line] == cpu && !edges_[line].empty()) best = std::min(best, edges_[line].front());
  return best;
}

}  // namespace smmu_vp

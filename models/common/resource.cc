#include "common/resource.h"

#include <algorithm>
#include <stdexcept>

namespace smmu_vp {

Resource::Resource(std::string name, unsigned slots) : name_(std::move(name)) {
  if (slots == 0) throw std::invalid_argument("resource '" + name_ + "' needs at least one slot");
  busy_.resize(slots);
}

Ps Resource::first_fit(const Intervals& busy, Ps arrival, Ps duration) {
  Ps t = arrival;
  // Start from the interval that might cover `arrival`.
  auto it = busy.upper_bound(t);
  if (it != busy.begin()) {
    auto prev = std::prev(it);
    if (prev->second > t) t = prev->second;
  }
  for (; it != busy.end(); ++it) {
    if (it->first >= t + duration) break;  // the gap before this interval fits
    t = std::max(t, it->second);
  }
  return t;
}

void Resource::insert(Intervals& busy, Ps start, Ps end) {
  if (start == end) return;
  auto next = busy.lower_bound(start);
  if (next != busy.end() && next->first == end) {
    end = next->second;
    next = busy.erase(next);
  }
  if (next != busy.begin()) {
    auto prev = std::prev(next);
    if (prev->second == start) {
      prev->second = end;
      return;
    }
  }
  busy.emplace_hint(next, start, end);
}

Ps Resource::earliest_start(Ps arrival, Ps duration) const {
  Ps best = UINT64_MAX;
  for (const auto& b : busy_) best = std::min(best, first_fit(b, arrival, duration));
  return best;
}

Resource::Grant Resource::reserve(Ps arrival, Ps duration) {
  size_t slot = 0;
  Ps start = UINT64_MAX;
  for (size_t s = 0; s < busy_.size(); ++s) {
    const Ps t = first_fit(busy_[s], arrival, duration);
    if (t < start) {
      start = t;
      slot = s;
    }
  }
  const Ps end = start + duration;
  insert(busy_[slot], start, end);
  ++requests_;
  busy_time_ += duration;
  waited_ += start - arrival;
  last_end_ = std::max(last_end_, end);
  return {start, end, start - arrival, static_cast<unsigned>(slot)};
}

void Resource::retire(Ps now) {
  for (auto& b : busy_) {
    auto it = b.begin();
    while (it != b.end() && it->second <= now) it = b.erase(it);
  }
}

size_t Resource::tracked_intervals() const {
  size_t n = 0;
  for (const auto& b : busy_) n += b.size();
  return n;
}

}  // namespace smmu_vp

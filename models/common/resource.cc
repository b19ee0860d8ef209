#include "common/resource.h"

#include <algorithm>
#include <stdexcept>

namespace smmu_vp {

Resource::Resource(std::string name, unsigned slots) : name_(std::move(name)) {
  if (slots == 0) throw std::invalid_argument("resource '" + name_ + "' needs at least one slot");
  busy_.resize(slots);
  last_.resize(slots, Interval{0, 0});
  while (leaves_ < slots) leaves_ *= 2;
  ends_.assign(2 * leaves_, UINT64_MAX);
  for (size_t s = 0; s < slots; ++s) set_end(s, 0);
  summarise();
}

namespace {

// The first interval starting after t.
template <class It>
It first_after(It begin, It end, Ps t) {
  return std::upper_bound(begin, end, t, [](Ps v, const auto& iv) { return v < iv.start; });
}

}  // namespace

Ps Resource::first_fit(const Intervals& busy, Ps arrival, Ps duration) {
  // Common case: free from arrival on (everything ends by then).
  if (busy.empty() || busy.back().end <= arrival) return arrival;
  Ps t = arrival;
  // Start from the interval that might cover `arrival`.
  auto it = first_after(busy.begin(), busy.end(), t);
  if (it != busy.begin() && std::prev(it)->end > t) t = std::prev(it)->end;
  for (; it != busy.end(); ++it) {
    if (it->start >= t + duration) break;  // the gap before this interval fits
    t = std::max(t, it->end);
  }
  return t;
}

void Resource::insert(Intervals& busy, Ps start, Ps end) {
  if (start == end) return;
  // Common case: at or after the last interval (in-order arrivals).
  if (busy.empty() || busy.back().end <= start) {
    if (!busy.empty() && busy.back().end == start) busy.back().end = end;
    else busy.push_back({start, end});
    return;
  }
  auto next = std::lower_bound(busy.begin(), busy.end(), start,
                               [](const Interval& iv, Ps v) { return iv.start < v; });
  if (next != busy.end() && next->start == end) {
    end = next->end;
    next = busy.erase(next);
  }
  if (next != busy.begin()) {
    auto prev = std::prev(next);
    if (prev->end == start) {
      prev->end = end;
      return;
    }
  }
  busy.insert(next, {start, end});
}

void Resource::summarise() {
  max_start_ = 0;
  for (const Interval& l : last_) max_start_ = std::max(max_start_, l.start);
}

void Resource::set_end(size_t slot, Ps end) {
  size_t i = leaves_ + slot;
  ends_[i] = end;
  for (i /= 2; i >= 1; i /= 2) ends_[i] = std::min(ends_[2 * i], ends_[2 * i + 1]);
}

void Resource::update_summary(size_t slot) {
  // Its last start may move earlier (a gap filled up to the last interval
  // merges with it); max_start_ then stays above the true latest start until
  // the next retire(), which only sends more requests to the full search:
  // the in-order path stays exact.
  max_start_ = std::max(max_start_, last_[slot].start);
  set_end(slot, last_[slot].end);
}

Ps Resource::earliest_start_searching(Ps arrival, Ps duration) const {
  Ps best = UINT64_MAX;
  size_t best_slot = 0;
  for (size_t s = 0; s < last_.size(); ++s) {
    const Ps t = fit(s, arrival, duration);
    if (t < best) {
      best = t;
      best_slot = s;
      if (t == arrival) break;  // no slot can do better
    }
  }
  return remember(best, best_slot);
}

Resource::Grant Resource::reserve(Ps arrival, Ps duration) {
  size_t slot = 0;
  Ps start = UINT64_MAX;
  if (hint_.valid && hint_.start == arrival && last_[hint_.slot].end <= arrival) {
    slot = hint_.slot;  // where earliest_start found room: see Hint
    start = arrival;
  } else if (arrival >= max_start_) {
    if (last_.size() == 1) start = std::max(arrival, last_[0].end);  // a bus: nothing to choose
    else slot = in_order_slot(arrival, &start);
  } else {
    for (size_t s = 0; s < last_.size(); ++s) {
      const Ps t = fit(s, arrival, duration);
      if (t < start) {
        start = t;
        slot = s;
        if (t == arrival) break;  // the earliest possible: a later slot would only tie
      }
    }
  }
  hint_.valid = false;
  const Ps end = start + duration;
  insert(busy_[slot], start, end);
  if (!busy_[slot].empty()) last_[slot] = busy_[slot].back();
  update_summary(slot);
  ++requests_;
  busy_time_ += duration;
  if (window_end_ > window_start_) {
    const Ps a = std::max(start, window_start_), b = std::min(end, window_end_);
    if (b > a) window_busy_ += b - a;
  }
  waited_ += start - arrival;
  last_end_ = std::max(last_end_, end);
  return {start, end, start - arrival, static_cast<unsigned>(slot)};
}

void Resource::retire(Ps now) {
  for (size_t s = 0; s < busy_.size(); ++s) {
    Intervals& b = busy_[s];
    auto keep = std::find_if(b.begin(), b.end(), [now](const Interval& iv) { return iv.end > now; });
    b.erase(b.begin(), keep);
    last_[s] = b.empty() ? Interval{0, 0} : b.back();
    set_end(s, last_[s].end);
  }
  hint_.valid = false;
  summarise();
}

size_t Resource::tracked_intervals() const {
  size_t n = 0;
  for (const auto& b : busy_) n += b.size();
  return n;
}

}  // namespace smmu_vp

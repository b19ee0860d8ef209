#include "common/device_atc.h"

#include <algorithm>

#include "common/invalid_config.h"

namespace smmu_vp {

void AtcConfig::validate(const std::string& at) const {
  check::time(lookup_ns, at + ".lookup_ns");
  check::time(invalidate_ns, at + ".invalidate_ns");
  check::time(request_rtt_ns, at + ".request_rtt_ns");
}

DeviceAtc::DeviceAtc(const AtcConfig& cfg, StatsRegistry& stats, const std::string& p)
    : cfg_(cfg), entries_(cfg.entries) {
  if (!cfg.enabled()) return;
  lookups_ = &stats.counter(p + ".lookups");
  hits_ = &stats.counter(p + ".hits");
  fills_ = &stats.counter(p + ".fills");
  evictions_ = &stats.counter(p + ".evictions");
  invalidations_ = &stats.counter(p + ".invalidations");
  invalidated_ = &stats.counter(p + ".invalidated");
}

DeviceAtc::Entry* DeviceAtc::find(uint64_t addr) {
  for (Entry& e : entries_)
    if (e.covers(addr)) return &e;
  return nullptr;
}

size_t DeviceAtc::size() const {
  return static_cast<size_t>(std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return e.valid; }));
}

std::optional<DeviceAtc::Hit> DeviceAtc::lookup(uint64_t addr, bool write) {
  if (!cfg_.enabled()) return std::nullopt;
  lookups_->add();
  Entry* e = find(addr);
  std::optional<Hit> h = hit_of(e, addr, write);
  if (!h) return h;
  hits_->add();
  e->last_touch = ++clock_;
  return h;
}

std::optional<DeviceAtc::Hit> DeviceAtc::peek(uint64_t addr, bool write) { return hit_of(find(addr), addr, write); }

std::optional<DeviceAtc::Hit> DeviceAtc::hit_of(const Entry* e, uint64_t addr, bool write) {
  if (!e || !(write ? e->write : e->read)) return std::nullopt;
  Hit h;
  h.pa = e->pa + (addr - e->base);
  h.bytes_left = e->end() - addr + 1;
  if (h.bytes_left == 0) h.bytes_left = ~uint64_t{0};  // the whole 64-bit space
  return h;
}

void DeviceAtc::used(uint64_t addr, Ps until) {
  if (Entry* e = find(addr)) e->last_use_end = std::max(e->last_use_end, until);
}

void DeviceAtc::drop(Entry& e) {
  // Evicted or replaced: accesses through it may still be in flight (a
  // device issues ahead of time), and any later invalidation answers no
  // earlier than their end.
  dropped_use_end_ = std::max(dropped_use_end_, e.last_use_end);
  e.valid = false;
}

void DeviceAtc::fill(const smmu::AtsExtension& c) {
  if (!cfg_.enabled() || c.status != smmu::AtsExtension::Status::kSuccess || !(c.read || c.write)) return;
  // A new answer replaces every entry it overlaps.
  const uint64_t last = c.size_log2 >= 64 ? ~uint64_t{0} : c.untranslated_addr + (uint64_t{1} << c.size_log2) - 1;
  Entry* slot = nullptr;
  for (Entry& e : entries_) {
    if (!e.valid || e.end() < c.untranslated_addr || e.base > last) continue;
    drop(e);
    if (!slot) slot = &e;
  }
  if (!slot) {
    const bool fifo = cfg_.replacement == AtcConfig::Replacement::kFifo;
    slot = &*std::min_element(entries_.begin(), entries_.end(), [fifo](const Entry& a, const Entry& b) {
      const uint64_t ka = a.valid ? (fifo ? a.filled : a.last_touch) + 1 : 0;
      const uint64_t kb = b.valid ? (fifo ? b.filled : b.last_touch) + 1 : 0;
      return ka < kb;
    });
    if (slot->valid) {
      evictions_->add();
      drop(*slot);
    }
  }
  slot->valid = true;
  slot->base = c.untranslated_addr;
  slot->size_log2 = c.size_log2;
  slot->pa = c.translated_addr;
  slot->read = c.read;
  slot->write = c.write;
  slot->last_touch = ++clock_;
  slot->filled = clock_;
  slot->last_use_end = 0;
  fills_->add();
}

std::optional<Ps> DeviceAtc::atc_invalidate(const Invalidation& inv, Ps arrives) {
  Ps done = arrives + ns_to_ps(cfg_.invalidate_ns);
  if (!cfg_.enabled()) return done;
  invalidations_->add();
  // An entry that was evicted or replaced may have covered the range too.
  done = std::max(done, dropped_use_end_);
  const uint64_t first = inv.addr, last = inv.all() ? ~uint64_t{0} : inv.addr + inv.bytes() - 1;
  for (Entry& e : entries_) {
    if (!e.valid || e.end() < first || e.base > last) continue;
    done = std::max(done, e.last_use_end);  // accesses through it complete first
    e.valid = false;
    invalidated_->add();
  }
  return done;
}

}  // namespace smmu_vp

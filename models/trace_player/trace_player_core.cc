#include "trace_player/trace_player_core.h"

#include <cstddef>
#include <cstring>
#include <limits>
#include <utility>

namespace smmu_vp {

TracePlayerCore::TracePlayerCore(std::shared_ptr<const TraceImage> image, Backdoor dram)
    : image_(std::move(image)), dram_(std::move(dram)), completed_(image_->accesses.size(), false) {}

bool TracePlayerCore::reg64(uint64_t base) const {
  switch (base) {
    case TP_REG_IMAGE_BYTES:
    case TP_REG_IMAGE_BASE:
    case TP_REG_REMAP_BASE:
    case TP_REG_ACCESSES_DONE:
    case TP_REG_ACCESS_ERRORS: return true;
    default: return false;
  }
}

TracePlayerCore::Access TracePlayerCore::read(uint64_t offset, unsigned len, uint64_t* value) {
  // A 64-bit register is read whole, or by its halves.
  const uint64_t base = (offset & 4) && reg64(offset & ~7ull) ? offset & ~7ull : offset;
  const bool wide = reg64(base);
  if (offset % 4 || !(len == 4 || (wide && len == 8 && offset == base))) {
    ++bad_register_accesses_;
    return offset >= TP_REG_SIZE ? Access::kBadAddress : Access::kBadSize;
  }
  uint64_t v = 0;
  switch (base) {
    case TP_REG_ID: v = TP_ID_VALUE; break;
    case TP_REG_VERSION: v = TP_VERSION_VALUE; break;
    case TP_REG_RECORDS: v = image_->records; break;
    case TP_REG_ACCESS_COUNT: v = image_->accesses.size(); break;
    case TP_REG_IMAGE_BYTES: v = image_->bytes.size(); break;
    case TP_REG_IMAGE_BASE: v = image_base_; break;
    case TP_REG_REMAP_BASE: v = remap_base_; break;
    case TP_REG_STATUS: v = status_; break;
    case TP_REG_MODE: v = mode_; break;
    case TP_REG_TIME_SCALE: v = time_scale_; break;
    case TP_REG_ACCESSES_DONE: v = low_water_; break;
    case TP_REG_ACCESS_ERRORS: v = access_errors_; break;
    case TP_REG_CTRL:
    case TP_REG_MAP_DOORBELL:
    case TP_REG_PHASE: v = 0; break;  // write-only: reads as zero
    default: ++bad_register_accesses_; return Access::kBadAddress;
  }
  if (wide && len == 4) v = offset != base ? v >> 32 : v & 0xffffffffu;
  *value = v;
  return Access::kOk;
}

TracePlayerCore::Access TracePlayerCore::write(uint64_t offset, unsigned len, uint64_t value, Effects* fx) {
  const uint64_t base = (offset & 4) && reg64(offset & ~7ull) ? offset & ~7ull : offset;
  const bool wide = reg64(base);
  if (offset % 4 || !(len == 4 || (wide && len == 8 && offset == base))) {
    ++bad_register_accesses_;
    return offset >= TP_REG_SIZE ? Access::kBadAddress : Access::kBadSize;
  }
  // The new value of a 64-bit register written whole or by one half.
  auto merge = [&](uint64_t old) -> uint64_t {
    if (len == 8) return value;
    if (offset != base) return (old & 0xffffffffull) | (value << 32);
    return (old & ~0xffffffffull) | (value & 0xffffffffull);
  };
  const bool running = (status_ & TP_STATUS_RUNNING) != 0;
  const uint32_t v32 = static_cast<uint32_t>(value);
  switch (base) {
    case TP_REG_IMAGE_BASE:
      if (running) ++prog_errors_;
      else image_base_ = merge(image_base_);
      break;
    case TP_REG_REMAP_BASE:
      // The slot table is read while accesses run: it does not move then.
      if (running) ++prog_errors_;
      else remap_base_ = merge(remap_base_);
      break;
    case TP_REG_MODE:
      if (running || (v32 != TP_MODE_TIMED && v32 != TP_MODE_ASAP)) ++prog_errors_;
      else mode_ = v32;
      break;
    case TP_REG_TIME_SCALE:
      if (running) ++prog_errors_;
      else time_scale_ = v32;
      break;
    case TP_REG_MAP_DOORBELL: fx->doorbell = true; break;
    case TP_REG_PHASE:
      // Only after START (the accesses may all be done before the calls
      // are), and only of a phase the trace has.
      if (!(status_ & (TP_STATUS_RUNNING | TP_STATUS_DONE)) || v32 >= image_->phases.size()) {
        ++prog_errors_;
      } else {
        fx->phase = true;
        fx->phase_index = v32;
      }
      break;
    case TP_REG_CTRL:
      if (v32 & TP_CTRL_LOAD) {
        if (running) {
          ++prog_errors_;
        } else {
          // An untimed loader step: the image lands in DRAM at once.
          const std::vector<uint8_t>& img = image_->bytes;
          uint8_t* p = dram_ ? dram_(image_base_, img.size()) : nullptr;
          if (!p) {
            status_ = (status_ & ~TP_STATUS_LOADED) | TP_STATUS_LOAD_ERROR;
          } else {
            if (!img.empty()) std::memcpy(p, img.data(), img.size());
            status_ = (status_ & ~TP_STATUS_LOAD_ERROR) | TP_STATUS_LOADED;
          }
        }
      }
      if (v32 & TP_CTRL_START) {
        if (status_ & (TP_STATUS_RUNNING | TP_STATUS_DONE)) ++prog_errors_;  // one run per trace
        else fx->started = true;
      }
      if (v32 & ~(TP_CTRL_LOAD | TP_CTRL_START)) ++prog_errors_;
      break;
    default:
      // Read-only or not a register.
      ++bad_register_accesses_;
      return Access::kBadAddress;
  }
  return Access::kOk;
}

void TracePlayerCore::start(Ps now) {
  start_ = now;
  status_ |= TP_STATUS_RUNNING;
  if (image_->accesses.empty()) status_ = (status_ & ~TP_STATUS_RUNNING) | TP_STATUS_DONE;
}

TracePlayerCore::Decision TracePlayerCore::next(Ps now) {
  Decision d;
  if (!(status_ & (TP_STATUS_RUNNING | TP_STATUS_DONE))) return d;
  const std::vector<PlayerAccess>& acc = image_->accesses;
  while (next_ < acc.size()) {
    const PlayerAccess& a = acc[next_];
    d.index = next_;
    if (mode_ == TP_MODE_TIMED) {
      // start + time x scale / 100, in ps; saturates far beyond any run.
      const uint64_t per_ns = static_cast<uint64_t>(time_scale_) * 10;
      const uint64_t limit = std::numeric_limits<uint64_t>::max() - start_;
      const Ps at = per_ns && a.time_ns > limit / per_ns ? std::numeric_limits<Ps>::max()
                                                          : start_ + a.time_ns * per_ns;
      if (at > now) {
        d.kind = Decision::kWaitTime;
        d.at = at;
        return d;
      }
    }
    if (a.slot == TP_NO_SLOT) {
      ++skipped_unmapped_;
      take(next_);
      continue;
    }
    const uint64_t entry = remap_base_ + static_cast<uint64_t>(a.slot) * sizeof(tp_slot);
    uint8_t* e = dram_ && entry >= remap_base_ ? dram_(entry, sizeof(tp_slot)) : nullptr;
    if (!e) {
      ++skipped_no_table_;
      take(next_);
      continue;
    }
    tp_slot s;
    std::memcpy(&s, e, sizeof s);
    if (s.state == TP_SLOT_PENDING || s.state == TP_SLOT_WAITING) {
      // Tells the app to ring MAP_DOORBELL when it fills the slot.
      s.state = TP_SLOT_WAITING;
      std::memcpy(e + offsetof(tp_slot, state), &s.state, sizeof s.state);
      if (counted_wait_ != next_) {
        counted_wait_ = next_;
        ++waits_for_map_;
      }
      d.kind = Decision::kWaitMap;
      return d;
    }
    if (s.state != TP_SLOT_MAPPED && s.state != TP_SLOT_UNMAPPED) {
      // FAILED, or a state the app should not have written: nothing to go to.
      ++skipped_failed_;
      take(next_);
      continue;
    }
    d.kind = Decision::kIssue;
    d.addr = s.iova + a.offset;
    ++next_;
    return d;
  }
  d.kind = Decision::kAllTaken;
  return d;
}

void TracePlayerCore::take(uint32_t index) {
  ++next_;
  finish(index);
}

void TracePlayerCore::complete(uint32_t index, bool ok) {
  if (!ok) ++access_errors_;
  finish(index);
}

void TracePlayerCore::finish(uint32_t index) {
  completed_[index] = true;
  while (low_water_ < completed_.size() && completed_[low_water_]) ++low_water_;
  if (low_water_ == completed_.size()) status_ = (status_ & ~TP_STATUS_RUNNING) | TP_STATUS_DONE;
}

}  // namespace smmu_vp

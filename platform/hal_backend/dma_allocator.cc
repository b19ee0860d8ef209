#include "hal_backend/dma_allocator.h"

#include <algorithm>

namespace smmu_vp {

DmaAllocator::DmaAllocator(uint64_t base, uint64_t size) {
  if (size) free_.emplace(base, size);
}

std::optional<uint64_t> DmaAllocator::alloc(uint64_t size, uint64_t align) {
  if (size == 0 || align == 0 || (align & (align - 1))) return std::nullopt;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const uint64_t start = it->first, len = it->second;
    const uint64_t aligned = (start + align - 1) & ~(align - 1);
    if (aligned < start || aligned - start > len || len - (aligned - start) < size) continue;
    free_.erase(it);
    if (aligned > start) free_.emplace(start, aligned - start);
    const uint64_t tail = start + len - (aligned + size);
    if (tail) free_.emplace(aligned + size, tail);
    live_.emplace(aligned, size);
    in_use_ += size;
    peak_ = std::max(peak_, in_use_);
    return aligned;
  }
  return std::nullopt;
}

bool DmaAllocator::free(uint64_t addr) {
  auto it = live_.find(addr);
  if (it == live_.end()) return false;
  uint64_t start = addr, size = it->second;
  in_use_ -= size;
  live_.erase(it);
  auto next = free_.lower_bound(start);
  if (next != free_.end() && start + size == next->first) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      free_.erase(prev);
    }
  }
  free_.emplace(start, size);
  return true;
}

uint64_t DmaAllocator::size_of(uint64_t addr) const {
  auto it = live_.find(addr);
  return it == live_.end() ? 0 : it->second;
}

}  // namespace smmu_vp

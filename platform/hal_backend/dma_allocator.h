// First-fit allocator of physically contiguous DMA memory over the region of
// DRAM the platform reserves for hal_dma_alloc(). Free blocks merge with their
// neighbours so that long runs do not fragment the region.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace smmu_vp {

class DmaAllocator {
 public:
  DmaAllocator(uint64_t base, uint64_t size);

  // Physical address aligned to `align` (a power of two), or nullopt.
  std::optional<uint64_t> alloc(uint64_t size, uint64_t align);
  // False when `addr` is not the start of a live allocation.
  bool free(uint64_t addr);
  uint64_t size_of(uint64_t addr) const;

  uint64_t bytes_in_use() const { return in_use_; }
  uint64_t peak_bytes() const { return peak_; }
  size_t free_blocks() const { return free_.size(); }

 private:
  std::map<uint64_t, uint64_t> free_;  // start -> size
  std::map<uint64_t, uint64_t> live_;  // start -> size
  uint64_t in_use_ = 0;
  uint64_t peak_ = 0;
};

}  // namespace smmu_vp

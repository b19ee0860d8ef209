// The platform address map: named, non-overlapping ranges, each routed to a
// target port. Plain C++ so that decoding and overlap rules are unit-tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace smmu_vp {

struct AddressRange {
  std::string name;
  uint64_t base = 0;
  uint64_t size = 0;
  unsigned port = 0;  // router initiator port serving this range

  uint64_t last() const { return base + size - 1; }
  bool contains(uint64_t addr, uint64_t len) const {
    return addr >= base && len <= size && addr - base <= size - len;
  }
};

class AddressMap {
 public:
  // Throws std::invalid_argument naming both ranges on overlap, or on an empty
  // or wrapping range.
  void add(const AddressRange& range);
  // The range wholly containing [addr, addr + len), if any. An access that
  // straddles two ranges decodes to none.
  const AddressRange* decode(uint64_t addr, uint64_t len = 1) const;
  const std::vector<AddressRange>& ranges() const { return ranges_; }
  const AddressRange* find(const std::string& name) const;

 private:
  std::vector<AddressRange> ranges_;  // sorted by base
  // The range the last decode found: most accesses go where the one before
  // went (DRAM), so it is tried first.
  mutable size_t last_ = 0;
};

}  // namespace smmu_vp

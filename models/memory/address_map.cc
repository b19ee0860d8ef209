#include "memory/address_map.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace smmu_vp {

namespace {
std::string describe(const AddressRange& r) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "[0x%llx, 0x%llx]", static_cast<unsigned long long>(r.base),
                static_cast<unsigned long long>(r.last()));
  return "'" + r.name + "' " + buf;
}
}  // namespace

void AddressMap::add(const AddressRange& range) {
  if (range.size == 0) throw std::invalid_argument("address range '" + range.name + "' has size 0");
  if (range.base + (range.size - 1) < range.base)
    throw std::invalid_argument("address range '" + range.name + "' wraps past the top of the address space");
  for (const auto& r : ranges_) {
    if (range.base <= r.last() && r.base <= range.last())
      throw std::invalid_argument("address range " + describe(range) + " overlaps " + describe(r));
  }
  auto pos = std::lower_bound(ranges_.begin(), ranges_.end(), range,
                              [](const AddressRange& a, const AddressRange& b) { return a.base < b.base; });
  ranges_.insert(pos, range);
}

const AddressRange* AddressMap::decode(uint64_t addr, uint64_t len) const {
  if (len == 0) len = 1;
  if (last_ < ranges_.size() && ranges_[last_].contains(addr, len)) return &ranges_[last_];
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), addr,
                             [](uint64_t a, const AddressRange& r) { return a < r.base; });
  if (it == ranges_.begin()) return nullptr;
  --it;
  if (!it->contains(addr, len)) return nullptr;
  last_ = static_cast<size_t>(it - ranges_.begin());
  return &*it;
}

const AddressRange* AddressMap::find(const std::string& name) const {
  for (const auto& r : ranges_)
    if (r.name == name) return &r;
  return nullptr;
}

}  // namespace smmu_vp

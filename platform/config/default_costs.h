// The cost table every run starts from (platform.cpu.costs adds to it):
// cycles per hal_cost() charge of each named class. Starting values, with
// the profile that fits them per seed in docs/results.md. One list, read by
// the platform's configuration and by the host HAL of the unit tests.
#pragma once

#include <cstdint>

namespace smmu_vp::config {

struct DefaultCost {
  const char* name;
  uint64_t cycles;
};

inline constexpr DefaultCost kDefaultCosts[] = {
    {"function_call", 5},    {"indirect_call", 10}, {"rbtree_visit", 30}, {"list_op", 5},
    {"cache_miss", 200},     {"kmem_alloc", 60},    {"pte_write", 4},     {"cache_clean_line", 10},
    {"memcpy_64b", 12},      {"slot_scan", 3},      {"iommu_driver_op", 60},
};

}  // namespace smmu_vp::config

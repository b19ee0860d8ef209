// Heap allocations made by this process so far: the benchmark program
// replaces the global operator new (alloc_counter.cc) to count them, so that
// a benchmark can report allocations per operation (issue: none per
// translated access in steady state).
#pragma once

#include <cstdint>

namespace smmu_vp::bench {
uint64_t heap_allocations();
}  // namespace smmu_vp::bench

// A single-process implementation of sw/hal/hal.h for host unit tests of sw/
// code that needs no device: memory comes from an arena with DRAM-like
// physical addresses, atomics are real, and time is the cycles and cost
// classes the code charges, so a test can assert on what the code would cost
// on the platform. The simulated platform's implementation is platform/hal_backend/.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace smmu_vp::host_hal {

// Arena placed at this physical address (as the base platform's DRAM).
constexpr uint64_t kDramBase = 0x80000000ull;
constexpr uint64_t kDramSize = 256ull << 20;

// Forgets allocations, charged time, costs, params and stats; frees the arena.
void reset();
// What hal_cpu_id()/hal_cpu_count() return from now on (default 0 of 1).
void set_cpu(unsigned id, unsigned count);
// Values hal_param() returns; an unknown name aborts the test with a message.
void set_param(const std::string& name, uint64_t value);
// Cycles charged by hal_cycles() and hal_cost(); the clock is 1 GHz, so
// hal_now_ns() is this count (plus hal_delay_ns()).
uint64_t cycles();
// Times a cost class was charged, and its cycles per charge (defaults as the
// platform's cost table; unknown classes cost 1 cycle and are still counted).
uint64_t cost_count(const std::string& cost_class);
void set_cost(const std::string& cost_class, uint64_t cycles_each);
// One hal_cost_walk() call. The host has no cache model: walks are
// recorded, not charged.
struct Walk {
  uint64_t objects, footprint_bytes;
};
const std::vector<Walk>& walks();
// hal_stat_add counters by name.
uint64_t stat(const std::string& name);
// Bytes currently allocated with hal_dma_alloc.
uint64_t dma_bytes_in_use();

}  // namespace smmu_vp::host_hal

#include "host_hal.h"

#include <sys/mman.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "config/default_costs.h"
#include "hal/hal.h"

namespace smmu_vp::host_hal {
namespace {

struct Block {
  uint64_t offset, size;
};

std::map<std::string, uint64_t> default_cycles() {
  std::map<std::string, uint64_t> t;
  for (const config::DefaultCost& c : config::kDefaultCosts) t[c.name] = c.cycles;
  return t;
}

struct State {
  uint8_t* arena = nullptr;
  uint64_t brk = 0;                      // bump pointer into the arena
  std::map<uint64_t, uint64_t> live;     // offset -> size
  std::multimap<uint64_t, uint64_t> free_blocks;  // size -> offset, reused first fit by size
  unsigned cpu = 0, cpu_count = 1;
  uint64_t cycles = 0;
  std::map<std::string, uint64_t> params;
  std::map<std::string, uint64_t> cost_cycles = default_cycles();
  std::map<std::string, uint64_t> cost_counts;
  std::vector<std::string> cost_ids;
  std::vector<Walk> walks;
  std::map<std::string, uint64_t> stats;
  uint64_t random_state = 0x9E3779B97F4A7C15ull;
};

State& st() {
  static State s;
  return s;
}

uint8_t* arena() {
  State& s = st();
  if (!s.arena) {
    void* p = mmap(nullptr, kDramSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      std::fprintf(stderr, "host_hal: cannot map a %llu-byte arena\n", static_cast<unsigned long long>(kDramSize));
      std::abort();
    }
    s.arena = static_cast<uint8_t*>(p);
  }
  return s.arena;
}

[[noreturn]] void fail(const char* what, const std::string& name) {
  std::fprintf(stderr, "host_hal: %s '%s'\n", what, name.c_str());
  std::abort();
}

}  // namespace

void reset() {
  State& s = st();
  if (s.arena) munmap(s.arena, kDramSize);
  s = State{};
}
void set_cpu(unsigned id, unsigned count) {
  st().cpu = id;
  st().cpu_count = count;
}
void set_param(const std::string& name, uint64_t value) { st().params[name] = value; }
uint64_t cycles() { return st().cycles; }
uint64_t cost_count(const std::string& cost_class) {
  auto it = st().cost_counts.find(cost_class);
  return it == st().cost_counts.end() ? 0 : it->second;
}
void set_cost(const std::string& cost_class, uint64_t cycles_each) { st().cost_cycles[cost_class] = cycles_each; }
const std::vector<Walk>& walks() { return st().walks; }
uint64_t stat(const std::string& name) {
  auto it = st().stats.find(name);
  return it == st().stats.end() ? 0 : it->second;
}
uint64_t dma_bytes_in_use() {
  uint64_t n = 0;
  for (const auto& [off, size] : st().live) n += size;
  return n;
}

}  // namespace smmu_vp::host_hal

using namespace smmu_vp::host_hal;

namespace {
// The loop hal_poll* stands for (hal.h), on host memory.
template <typename V>
V poll_loop(const volatile V* p, V mask, V value, hal_poll_until until, unsigned max_polls, unsigned* polls) {
  V v = 0;
  unsigned n = 0;
  while (max_polls == 0 || n < max_polls) {
    v = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    ++n;
    if (((v & mask) == value) == (until == HAL_POLL_EQ)) break;
    hal_cpu_relax();
  }
  if (polls) *polls = n;
  return v;
}
}  // namespace

extern "C" {

// Device accesses have no device behind them here: reads see all ones, as a
// bus error would, and are counted.
static uint64_t g_bus_errors = 0;
uint8_t hal_read8(phys_addr_t pa) { return static_cast<uint8_t>(hal_read64(pa)); }
uint16_t hal_read16(phys_addr_t pa) { return static_cast<uint16_t>(hal_read64(pa)); }
uint32_t hal_read32(phys_addr_t pa) { return static_cast<uint32_t>(hal_read64(pa)); }
uint64_t hal_read64(phys_addr_t pa) {
  if (pa >= kDramBase && pa + 8 <= kDramBase + kDramSize) {
    uint64_t v;
    __builtin_memcpy(&v, arena() + (pa - kDramBase), 8);
    return v;
  }
  ++g_bus_errors;
  return ~0ull;
}
void hal_write8(phys_addr_t pa, uint8_t v) { hal_write64(pa, v); }
void hal_write16(phys_addr_t pa, uint16_t v) { hal_write64(pa, v); }
void hal_write32(phys_addr_t pa, uint32_t v) { hal_write64(pa, v); }
void hal_write64(phys_addr_t pa, uint64_t v) {
  if (pa >= kDramBase && pa + 8 <= kDramBase + kDramSize) {
    __builtin_memcpy(arena() + (pa - kDramBase), &v, 8);
    return;
  }
  ++g_bus_errors;
}
uint64_t hal_bus_errors(void) { return g_bus_errors; }

void* hal_phys_to_virt(phys_addr_t pa) {
  if (pa < kDramBase || pa >= kDramBase + kDramSize) return nullptr;
  return arena() + (pa - kDramBase);
}
phys_addr_t hal_virt_to_phys(const void* va) {
  const auto* p = static_cast<const uint8_t*>(va);
  if (p < arena() || p >= arena() + kDramSize) return 0;
  return kDramBase + static_cast<uint64_t>(p - arena());
}

void* hal_dma_alloc(size_t size, size_t align, phys_addr_t* pa) {
  State& s = st();
  if (align < 8) align = 8;
  size = (size + 7) & ~size_t{7};
  uint8_t* base = arena();
  // Reuse a freed block of the same size and alignment first (keeps long
  // random tests inside the arena), else bump.
  for (auto it = s.free_blocks.lower_bound(size); it != s.free_blocks.end() && it->first == size; ++it) {
    if (it->second % align == 0) {
      const uint64_t off = it->second;
      s.free_blocks.erase(it);
      s.live[off] = size;
      __builtin_memset(base + off, 0, size);
      if (pa) *pa = kDramBase + off;
      return base + off;
    }
  }
  const uint64_t off = (s.brk + align - 1) & ~(uint64_t{align} - 1);
  if (off + size > kDramSize) return nullptr;
  s.brk = off + size;
  s.live[off] = size;
  __builtin_memset(base + off, 0, size);
  if (pa) *pa = kDramBase + off;
  return base + off;
}
void hal_dma_free(void* va) {
  if (!va) return;
  State& s = st();
  const uint64_t off = static_cast<uint64_t>(static_cast<uint8_t*>(va) - arena());
  auto it = s.live.find(off);
  if (it == s.live.end()) {
    std::fprintf(stderr, "host_hal: hal_dma_free of a pointer hal_dma_alloc did not return\n");
    std::abort();
  }
  s.free_blocks.emplace(it->second, off);
  s.live.erase(it);
}

unsigned hal_cpu_id(void) { return st().cpu; }
unsigned hal_cpu_count(void) { return st().cpu_count; }
// Unit tests run one app instance: every core of the host HAL is the app's.
unsigned hal_app_cores(void) { return st().cpu_count; }
unsigned hal_app_rank(void) { return st().cpu; }
unsigned hal_app_instance(void) { return 0; }
uint64_t hal_now_ns(void) { return st().cycles; }
uint64_t hal_now_ps(void) { return st().cycles * 1000; }
uint64_t hal_clock_ps(void) { return st().cycles * 1000; }
void hal_measure_window(uint64_t, uint64_t) {}
void hal_name_shared(const volatile void*, size_t, const char*) {}
int hal_scenario_window(uint64_t*, uint64_t*) { return 0; }
void hal_delay_ns(uint64_t ns) { st().cycles += ns; }
void hal_cycles(uint64_t n) { st().cycles += n; }

void hal_cost(const char* cost_class, uint64_t count) {
  State& s = st();
  auto it = s.cost_cycles.find(cost_class);
  s.cycles += (it == s.cost_cycles.end() ? 1 : it->second) * count;
  s.cost_counts[cost_class] += count;
}
int hal_cost_lookup(const char* cost_class) {
  State& s = st();
  s.cost_ids.emplace_back(cost_class);
  return static_cast<int>(s.cost_ids.size() - 1);
}
void hal_cost_id(int handle, uint64_t count) {
  State& s = st();
  if (handle < 0 || static_cast<size_t>(handle) >= s.cost_ids.size()) fail("unknown cost handle", std::to_string(handle));
  hal_cost(s.cost_ids[static_cast<size_t>(handle)].c_str(), count);
}

void hal_cost_walk(uint64_t objects, uint64_t footprint_bytes) { st().walks.push_back({objects, footprint_bytes}); }

uint32_t hal_load32(const volatile uint32_t* p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
uint64_t hal_load64(const volatile uint64_t* p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
void hal_store32(volatile uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
void hal_store64(volatile uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
uint32_t hal_cmpxchg32(volatile uint32_t* p, uint32_t expected, uint32_t desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;
}
uint64_t hal_cmpxchg64(volatile uint64_t* p, uint64_t expected, uint64_t desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;
}
uint32_t hal_fetch_add32(volatile uint32_t* p, uint32_t v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
uint64_t hal_fetch_add64(volatile uint64_t* p, uint64_t v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
uint32_t hal_fetch_andnot32(volatile uint32_t* p, uint32_t m) { return __atomic_fetch_and(p, ~m, __ATOMIC_SEQ_CST); }
uint64_t hal_fetch_andnot64(volatile uint64_t* p, uint64_t m) { return __atomic_fetch_and(p, ~m, __ATOMIC_SEQ_CST); }
uint32_t hal_fetch_or32(volatile uint32_t* p, uint32_t m) { return __atomic_fetch_or(p, m, __ATOMIC_SEQ_CST); }
uint64_t hal_fetch_or64(volatile uint64_t* p, uint64_t m) { return __atomic_fetch_or(p, m, __ATOMIC_SEQ_CST); }
uint16_t hal_xchg16(volatile uint16_t* p, uint16_t v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
uint32_t hal_xchg32(volatile uint32_t* p, uint32_t v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
uint64_t hal_xchg64(volatile uint64_t* p, uint64_t v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }

void hal_barrier(enum hal_barrier) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void hal_cpu_relax(void) { hal_cost("cpu_relax", 1); }

uint32_t hal_poll32(const volatile uint32_t* p, uint32_t mask, uint32_t value, hal_poll_until until,
                    unsigned max_polls, unsigned* polls) {
  return poll_loop(p, mask, value, until, max_polls, polls);
}
uint64_t hal_poll64(const volatile uint64_t* p, uint64_t mask, uint64_t value, hal_poll_until until,
                    unsigned max_polls, unsigned* polls) {
  return poll_loop(p, mask, value, until, max_polls, polls);
}
uint32_t hal_read_poll32(phys_addr_t pa, hal_poll_done_fn done, const void* arg, unsigned max_polls,
                         unsigned* polls) {
  uint32_t v = 0;
  unsigned n = 0;
  while (max_polls == 0 || n < max_polls) {
    v = hal_read32(pa);
    ++n;
    if (done(v, arg)) break;
    hal_cpu_relax();
  }
  if (polls) *polls = n;
  return v;
}
void hal_wfe(void) {}
void hal_sev(void) {}
void hal_wfi(void) {}

int hal_irq_register(unsigned, hal_irq_handler_t, void*) { return -1; }
int hal_irq_unregister(unsigned) { return -1; }
unsigned hal_irq_save(void) { return 0; }
void hal_irq_restore(unsigned) {}

struct hal_region hal_dram(void) { return {kDramBase, kDramSize}; }
struct hal_region hal_smmu(void) { return {0, 0}; }
unsigned hal_smmu_count(void) { return 0; }
struct hal_region hal_smmu_get(unsigned) { return {0, 0}; }
phys_addr_t hal_msi_doorbell(void) { return 0; }
unsigned hal_device_count(void) { return 0; }
int hal_device_get(unsigned, struct hal_device_info*) { return -1; }
int hal_device_find(const char*, struct hal_device_info*) { return -1; }

uint64_t hal_param(const char* name) {
  auto it = st().params.find(name);
  if (it == st().params.end()) fail("hal_param of a name the test did not set:", name);
  return it->second;
}
uint64_t hal_random(void) {
  // xorshift64*: deterministic per reset.
  uint64_t& x = st().random_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  return x * 0x2545F4914F6CDD1Dull;
}

void hal_stat_add(const char* name, uint64_t delta) { st().stats[name] += delta; }
void hal_stat_sample(const char* name, uint64_t) { st().stats[name] += 1; }
void hal_stat_set(const char*, double) {}
uint64_t hal_dma_trace_begin(void) { return 0; }
void hal_dma_trace(const struct hal_dma_call*) {}

void hal_vlog(enum hal_log_level level, const char* fmt, va_list ap) {
  if (level < HAL_LOG_WARN) return;
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
}
void hal_log(enum hal_log_level level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  hal_vlog(level, fmt, ap);
  va_end(ap);
}

}  // extern "C"

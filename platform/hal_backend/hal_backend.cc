// The C HAL of sw/hal/hal.h, implemented on the platform's models. Every
// function runs on the calling core's SystemC thread (CpuCore::current()).
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include <spdlog/spdlog.h>

#include "config/run_config.h"
#include "cpu/cpu_cluster.h"
#include "cpu/interrupt_controller.h"
#include "dmatrace/dma_trace_recorder.h"
#include "hal/hal.h"
#include "hal_backend/hal_context.h"
#include "smmu/smmu.h"

using smmu_vp::CpuCore;
using smmu_vp::Counter;
using smmu_vp::HalContext;

namespace {

CpuCore& core() { return HalContext::core(); }
HalContext& ctx() { return HalContext::current(); }

template <typename V>
V timed_read(phys_addr_t pa) {
  V v;
  core().access(false, pa, &v, sizeof v);
  return v;
}

template <typename V>
void timed_write(phys_addr_t pa, V v) {
  core().access(true, pa, &v, sizeof v);
}

template <typename V>
V shared_load(const volatile V* p) {
  core().before_shared_access(p, CpuCore::SharedAccess::kLoad);
  return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

// Runs `op` as one atomic read-modify-write and returns the old value.
template <typename V, typename Op>
V rmw(volatile V* p, Op op, CpuCore::SharedAccess kind = CpuCore::SharedAccess::kAtomic) {
  core().before_shared_access(p, kind);
  const V old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  __atomic_store_n(p, op(old), __ATOMIC_SEQ_CST);
  return old;
}

std::string format(const char* fmt, va_list ap) {
  char buf[512];
  va_list copy;
  va_copy(copy, ap);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, copy);
  va_end(copy);
  if (n < 0) return fmt;
  if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, static_cast<size_t>(n));
  std::string big(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(big.data(), big.size(), fmt, ap);
  big.resize(static_cast<size_t>(n));
  return big;
}

HalContext::CoreApp& running_app() {
  CpuCore& c = core();
  HalContext::CoreApp& a = ctx().app(c.id());
  if (!a.assignment) c.fatal("HAL: core " + std::to_string(c.id()) + " runs no app");
  return a;
}

}  // namespace

extern "C" {

uint8_t hal_read8(phys_addr_t pa) { return timed_read<uint8_t>(pa); }
uint16_t hal_read16(phys_addr_t pa) { return timed_read<uint16_t>(pa); }
uint32_t hal_read32(phys_addr_t pa) { return timed_read<uint32_t>(pa); }
uint64_t hal_read64(phys_addr_t pa) { return timed_read<uint64_t>(pa); }
void hal_write8(phys_addr_t pa, uint8_t v) { timed_write(pa, v); }
void hal_write16(phys_addr_t pa, uint16_t v) { timed_write(pa, v); }
void hal_write32(phys_addr_t pa, uint32_t v) { timed_write(pa, v); }
void hal_write64(phys_addr_t pa, uint64_t v) { timed_write(pa, v); }
uint64_t hal_bus_errors(void) { return core().bus_errors(); }

void* hal_phys_to_virt(phys_addr_t pa) {
  HalContext& h = ctx();
  if (pa < h.dram_base() || pa - h.dram_base() >= h.dram_size()) return nullptr;
  return h.dram_host() + (pa - h.dram_base());
}

phys_addr_t hal_virt_to_phys(const void* va) {
  HalContext& h = ctx();
  const auto* p = static_cast<const uint8_t*>(va);
  if (p < h.dram_host() || static_cast<uint64_t>(p - h.dram_host()) >= h.dram_size()) return 0;
  return h.dram_base() + static_cast<uint64_t>(p - h.dram_host());
}

void* hal_dma_alloc(size_t size, size_t align, phys_addr_t* pa) {
  HalContext& h = ctx();
  auto addr = h.dma_allocator().alloc(size, align < 8 ? 8 : align);
  if (!addr) return nullptr;
  void* va = hal_phys_to_virt(*addr);
  std::memset(va, 0, size);
  if (pa) *pa = *addr;
  return va;
}

void hal_dma_free(void* va) {
  if (!va) return;
  const phys_addr_t pa = hal_virt_to_phys(va);
  if (!pa || !ctx().dma_allocator().free(pa)) core().fatal("hal_dma_free: pointer was not returned by hal_dma_alloc");
}

unsigned hal_cpu_id(void) { return core().id(); }
unsigned hal_cpu_count(void) { return ctx().cpus().size(); }

uint64_t hal_now_ps(void) {
  CpuCore& c = core();
  c.sync();
  return c.now();
}
uint64_t hal_now_ns(void) { return hal_now_ps() / smmu_vp::kPsPerNs; }
uint64_t hal_clock_ps(void) { return core().now(); }
int hal_scenario_window(uint64_t* start_ns, uint64_t* end_ns) {
  const smmu_vp::config::RunConfig& c = ctx().config();
  if (c.window_end_ps <= c.window_start_ps) return 0;
  *start_ns = c.window_start_ps / smmu_vp::kPsPerNs;
  *end_ns = c.window_end_ps / smmu_vp::kPsPerNs;
  return 1;
}

void hal_measure_window(uint64_t start_ns, uint64_t end_ns) {
  ctx().measure_window(start_ns * smmu_vp::kPsPerNs, end_ns * smmu_vp::kPsPerNs);
}
void hal_name_shared(const volatile void* p, size_t len, const char* name) {
  std::string n = name ? name : "";
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') ch = '_';
  ctx().cpus().coherence().name_lines(reinterpret_cast<uintptr_t>(p), len, std::move(n));
}
void hal_delay_ns(uint64_t ns) { core().advance(ns * smmu_vp::kPsPerNs); }
void hal_cycles(uint64_t n) { core().cycles(n); }

int hal_cost_lookup(const char* cost_class) { return ctx().cost_lookup(cost_class); }

void hal_cost_id(int handle, uint64_t count) {
  HalContext& h = ctx();
  if (handle < 0 || static_cast<size_t>(handle) >= h.config().costs.size())
    core().fatal("hal_cost_id: invalid handle " + std::to_string(handle));
  core().advance(h.charge_ps(handle, count, core().id()));
}

void hal_cost(const char* cost_class, uint64_t count) {
  HalContext& h = ctx();
  const int id = h.cost_lookup(cost_class);
  if (id < 0)
    core().fatal(std::string("hal_cost: no cost class \"") + cost_class + "\" in platform.cpu.costs (known: " +
                 h.cost_names() + ")");
  core().advance(h.charge_ps(id, count, core().id()));
}

void hal_cost_walk(uint64_t objects, uint64_t footprint_bytes) {
  const double ns = smmu_vp::walk_miss_ns(ctx().config().cpu, objects, footprint_bytes);
  if (ns > 0) core().advance(static_cast<smmu_vp::Ps>(std::llround(ns * static_cast<double>(smmu_vp::kPsPerNs))));
}

uint32_t hal_load32(const volatile uint32_t* p) { return shared_load(p); }
uint64_t hal_load64(const volatile uint64_t* p) { return shared_load(p); }
void hal_store32(volatile uint32_t* p, uint32_t v) { rmw(p, [v](uint32_t) { return v; }, CpuCore::SharedAccess::kStore); }
void hal_store64(volatile uint64_t* p, uint64_t v) { rmw(p, [v](uint64_t) { return v; }, CpuCore::SharedAccess::kStore); }
uint32_t hal_cmpxchg32(volatile uint32_t* p, uint32_t e, uint32_t d) { return rmw(p, [e, d](uint32_t o) { return o == e ? d : o; }); }
uint64_t hal_cmpxchg64(volatile uint64_t* p, uint64_t e, uint64_t d) { return rmw(p, [e, d](uint64_t o) { return o == e ? d : o; }); }
uint32_t hal_fetch_add32(volatile uint32_t* p, uint32_t v) { return rmw(p, [v](uint32_t o) { return o + v; }); }
uint64_t hal_fetch_add64(volatile uint64_t* p, uint64_t v) { return rmw(p, [v](uint64_t o) { return o + v; }); }
uint32_t hal_fetch_andnot32(volatile uint32_t* p, uint32_t m) { return rmw(p, [m](uint32_t o) { return o & ~m; }); }
uint64_t hal_fetch_andnot64(volatile uint64_t* p, uint64_t m) { return rmw(p, [m](uint64_t o) { return o & ~m; }); }
uint32_t hal_fetch_or32(volatile uint32_t* p, uint32_t m) { return rmw(p, [m](uint32_t o) { return o | m; }); }
uint64_t hal_fetch_or64(volatile uint64_t* p, uint64_t m) { return rmw(p, [m](uint64_t o) { return o | m; }); }
uint16_t hal_xchg16(volatile uint16_t* p, uint16_t v) { return rmw(p, [v](uint16_t) { return v; }); }
uint32_t hal_xchg32(volatile uint32_t* p, uint32_t v) { return rmw(p, [v](uint32_t) { return v; }); }
uint64_t hal_xchg64(volatile uint64_t* p, uint64_t v) { return rmw(p, [v](uint64_t) { return v; }); }

uint32_t hal_poll32(const volatile uint32_t* p, uint32_t mask, uint32_t value, enum hal_poll_until until,
                    unsigned max_polls, unsigned* polls) {
  const CpuCore::PollResult r = core().poll(p, sizeof *p, mask, value, until == HAL_POLL_NE, max_polls);
  if (polls) *polls = r.polls;
  return static_cast<uint32_t>(r.value);
}

uint64_t hal_poll64(const volatile uint64_t* p, uint64_t mask, uint64_t value, enum hal_poll_until until,
                    unsigned max_polls, unsigned* polls) {
  const CpuCore::PollResult r = core().poll(p, sizeof *p, mask, value, until == HAL_POLL_NE, max_polls);
  if (polls) *polls = r.polls;
  return r.value;
}

uint32_t hal_read_poll32(phys_addr_t pa, hal_poll_done_fn done, const void* arg, unsigned max_polls,
                         unsigned* polls) {
  const CpuCore::PollResult r =
      core().read_poll(pa, [done, arg](uint64_t v) { return done(static_cast<uint32_t>(v), arg); }, max_polls);
  if (polls) *polls = r.polls;
  return static_cast<uint32_t>(r.value);
}

void hal_barrier(enum hal_barrier kind) {
  switch (kind) {
    case HAL_BARRIER_DMB: core().barrier(CpuCore::Barrier::kDmb); return;
    case HAL_BARRIER_DSB: core().barrier(CpuCore::Barrier::kDsb); return;
    case HAL_BARRIER_ISB: core().barrier(CpuCore::Barrier::kIsb); return;
  }
  core().fatal("hal_barrier: unknown barrier kind " + std::to_string(static_cast<int>(kind)));
}

void hal_cpu_relax(void) { core().cpu_relax(); }
void hal_wfe(void) { core().wfe(); }
void hal_sev(void) { core().sev(); }
void hal_wfi(void) { core().wfi(); }

int hal_irq_register(unsigned irq, hal_irq_handler_t handler, void* handler_ctx) {
  CpuCore& c = core();
  smmu_vp::CpuCluster& cpus = ctx().cpus();
  if (!handler || irq >= cpus.intc().core().lines()) return -1;
  if (!cpus.set_irq_handler(irq, [handler, handler_ctx](unsigned line) { handler(line, handler_ctx); })) return -1;
  cpus.intc().core().set_target(irq, c.id());
  return 0;
}

int hal_irq_unregister(unsigned irq) { return ctx().cpus().clear_irq_handler(irq) ? 0 : -1; }
unsigned hal_irq_save(void) { return core().irq_save(); }
void hal_irq_restore(unsigned flags) { core().irq_restore(flags); }

struct hal_region hal_dram(void) {
  HalContext& h = ctx();
  return {h.dram_base(), h.dram_size()};
}

unsigned hal_smmu_count(void) { return ctx().config().smmu_count(); }

struct hal_region hal_smmu_get(unsigned index) {
  const smmu_vp::config::RunConfig& c = ctx().config();
  if (index >= c.smmu_count()) return {0, 0};
  const smmu_vp::smmu::SmmuConfig& s = c.smmu_config(index);
  return {s.base, s.features.register_space_size()};
}

struct hal_region hal_smmu(void) { return hal_smmu_get(0); }

phys_addr_t hal_msi_doorbell(void) {
  return ctx().config().intc.base + smmu_vp::InterruptController::kRegSetSpi;
}

unsigned hal_device_count(void) { return static_cast<unsigned>(ctx().devices().size()); }

int hal_device_get(unsigned index, struct hal_device_info* out) {
  const auto& d = ctx().devices();
  if (index >= d.size() || !out) return -1;
  *out = d[index];
  return 0;
}

int hal_device_find(const char* name, struct hal_device_info* out) {
  for (const auto& d : ctx().devices())
    if (name && std::strcmp(d.name, name) == 0) {
      if (out) *out = d;
      return 0;
    }
  return -1;
}

uint64_t hal_param(const char* name) {
  HalContext::CoreApp& a = running_app();
  auto it = a.assignment->params.find(name);
  if (it == a.assignment->params.end())
    core().fatal(std::string("hal_param: app \"") + a.assignment->app->name + "\" did not declare parameter \"" + name + "\"");
  return it->second;
}

unsigned hal_app_cores(void) { return static_cast<unsigned>(running_app().assignment->cores.size()); }

unsigned hal_app_instance(void) { return running_app().assignment->instance; }

unsigned hal_app_rank(void) {
  const auto& cores = running_app().assignment->cores;
  unsigned rank = 0;
  for (unsigned c : cores) rank += c < core().id();
  return rank;
}

// The core's own time without a sync: recording must not change the run's timing.
uint64_t hal_dma_trace_begin(void) {
  return ctx().dma_trace_recorder() ? core().now() + 1 : 0;
}

void hal_dma_trace(const struct hal_dma_call* call) {
  if (smmu_vp::DmaTraceRecorder* r = ctx().dma_trace_recorder())
    r->dma_call(core().id(), call->start - 1, *call);
}

uint64_t hal_random(void) {
  // xorshift64*: cheap, and each core's stream depends only on the seed.
  uint64_t& x = ctx().app(core().id()).rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  return x * 0x2545F4914F6CDD1Dull;
}

void hal_stat_add(const char* name, uint64_t delta) {
  HalContext::CoreApp& a = running_app();
  auto& c = a.counters[name];
  if (!c.stat || c.name != name) {
    c.name = name;
    c.stat = &ctx().stats().counter(a.stat_prefix + name);
  }
  c.stat->add(delta);
}

void hal_stat_sample(const char* name, uint64_t value_ns) {
  HalContext::CoreApp& a = running_app();
  auto& h = a.histograms[name];
  if (!h.stat || h.name != name) {
    h.name = name;
    h.stat = &ctx().stats().histogram(a.stat_prefix + name, "ns", 1.0);
  }
  h.stat->record(value_ns);
}

void hal_stat_set(const char* name, double value) {
  HalContext::CoreApp& a = running_app();
  ctx().stats().value(a.stat_prefix + name) = value;
}

void hal_vlog(enum hal_log_level level, const char* fmt, va_list ap) {
  CpuCore& c = core();
  static const spdlog::level::level_enum levels[] = {spdlog::level::trace, spdlog::level::debug, spdlog::level::info,
                                                     spdlog::level::warn, spdlog::level::err};
  const auto lvl = levels[static_cast<unsigned>(level) <= HAL_LOG_ERROR ? level : HAL_LOG_ERROR];
  spdlog::logger& log = ctx().log();
  if (!log.should_log(lvl)) return;
  log.log(lvl, "[{:.3f} us] cpu{}: {}", smmu_vp::ps_to_ns(c.now()) / 1000.0, c.id(), format(fmt, ap));
}

void hal_log(enum hal_log_level level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  hal_vlog(level, fmt, ap);
  va_end(ap);
}

}  // extern "C"

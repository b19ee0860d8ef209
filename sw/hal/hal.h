/*
 * smmu-vp hardware abstraction layer: the only way code in sw/ touches hardware.
 *
 * sw/ is freestanding C11. Each simulated CPU core runs sw/ code as a SystemC
 * thread; every function here is implemented by the platform (platform/hal_backend/)
 * and costs simulated time as documented in docs/architecture.md.
 *
 * Time model, in short:
 *  - Each core runs ahead of the global simulation time by a local offset
 *    (temporal decoupling). hal_cycles(), hal_cost() and memory accesses add to
 *    that offset; the core synchronises (yields to other cores) when the offset
 *    exceeds the quantum.
 *  - MMIO accesses, atomics, barriers, WFE/WFI and hal_now_ns() synchronise
 *    first, so polling and spinning advance simulated time and let other cores
 *    make progress.
 *  - hal_poll32/64 and hal_read_poll32 cost what their loop of hal_load* or
 *    hal_read32 and hal_cpu_relax() costs, but need no host-side
 *    synchronisation per poll.
 *  - Plain loads and stores through hal_phys_to_virt() pointers are untimed:
 *    annotate the work they stand for with hal_cycles() or hal_cost().
 *  - Interrupt handlers run on their target core at the core's next
 *    synchronisation point (or while it waits in WFI/WFE), with interrupts
 *    masked, unless the core has masked them with hal_irq_save().
 */
#ifndef SMMU_VP_HAL_H
#define SMMU_VP_HAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t phys_addr_t;

#if defined(__GNUC__)
#define HAL_PRINTF(fmt_idx, arg_idx) __attribute__((format(printf, fmt_idx, arg_idx)))
#else
#define HAL_PRINTF(fmt_idx, arg_idx)
#endif

/* ---- Timed physical accesses (MMIO or DRAM), through the core's TLM socket.
 * A bus error (unmapped address, device error) is logged, counted in the
 * core's stats and reads return all ones, as an external abort would leave a
 * driver looking at. */
uint8_t hal_read8(phys_addr_t pa);
uint16_t hal_read16(phys_addr_t pa);
uint32_t hal_read32(phys_addr_t pa);
uint64_t hal_read64(phys_addr_t pa);
void hal_write8(phys_addr_t pa, uint8_t value);
void hal_write16(phys_addr_t pa, uint16_t value);
void hal_write32(phys_addr_t pa, uint32_t value);
void hal_write64(phys_addr_t pa, uint64_t value);
/* Number of bus errors this core has seen so far. */
uint64_t hal_bus_errors(void);

/* ---- DRAM as memory: direct pointers and DMA-able allocations.
 * hal_phys_to_virt returns NULL for an address outside DRAM;
 * hal_virt_to_phys returns 0 for a pointer outside DRAM. */
void *hal_phys_to_virt(phys_addr_t pa);
phys_addr_t hal_virt_to_phys(const void *va);
/* Physically contiguous memory from the platform's DMA region, aligned to
 * `align` (a power of two, at least 8) and zeroed. Returns NULL when the
 * region is exhausted; *pa receives the physical address. */
void *hal_dma_alloc(size_t size, size_t align, phys_addr_t *pa);
void hal_dma_free(void *va);

/* ---- Cores and time. */
unsigned hal_cpu_id(void);
unsigned hal_cpu_count(void);
/* Current simulated time of this core (global time plus its local offset), ns. */
uint64_t hal_now_ns(void);
/* Picosecond variant, for short intervals. */
uint64_t hal_now_ps(void);
/* This core's local time, ps, without synchronising: for accounting where
 * the time goes (reading it costs no simulated time and changes nothing).
 * Between two readings on one core it measures the core's own time. */
uint64_t hal_clock_ps(void);
/* An app's measurement window, [start_ns, end_ns), announced before it
 * opens: the platform then measures its resources' use over it too (what
 * bounded the run: platform/bounds.h). Untimed; a port may ignore it. */
void hal_measure_window(uint64_t start_ns, uint64_t end_ns);
/* Names the cache lines of [p, p + len), shared data that cores contend for
 * (a queue's index word, a lock), so that the platform can report each by
 * name: its transfers between cores and, where a line serves one transfer
 * at a time, how busy it was and whether it bounded the run. Letters,
 * digits and '_' ("smmu_cmdq_llq"); other characters become '_'. Untimed;
 * a port may ignore it. */
void hal_name_shared(const volatile void *p, size_t len, const char *name);
/* The scenario's one measurement window for every app (scenario.window):
 * returns 1 and its [start_ns, end_ns) from the start of the run, or 0 when
 * the scenario has none and each app keeps its own. */
int hal_scenario_window(uint64_t *start_ns, uint64_t *end_ns);
void hal_delay_ns(uint64_t ns);
/* Compute annotation: n cycles at the configured CPU frequency. */
void hal_cycles(uint64_t n);
/* Named cost class from the platform's cost table (e.g. "indirect_call",
 * "rbtree_visit"), charged `count` times. A class with a spread
 * (platform.cpu.cost_spread) draws once per call, for the whole count. An
 * unknown name is a fatal error reported once with the list of known
 * classes. */
void hal_cost(const char *cost_class, uint64_t count);
/* Cost classes resolved once, for hot paths. Returns a handle >= 0, or -1. */
int hal_cost_lookup(const char *cost_class);
void hal_cost_id(int handle, uint64_t count);
/* The cache misses of one walk over `objects` distinct objects whose working
 * set is `footprint_bytes`, on a structure the code walks again and again
 * (a search tree, a list): beyond what the core's caches hold
 * (platform.cpu.private_cache_kib, shared_cache_kib), each object costs the
 * latency of where it lives (shared_cache_ns, memory_load_ns). Charges
 * nothing on a platform without a cache model; the walk's own per-step work
 * is charged apart (hal_cost). */
void hal_cost_walk(uint64_t objects, uint64_t footprint_bytes);

/* ---- Atomics and barriers on any memory the core can address (DRAM through
 * hal_phys_to_virt, or sw/ statics). Each synchronises local time, then costs
 * the configured atomic latency, plus the cache-line transfer cost when the
 * line was last written by another core (or, for the read-modify-writes with
 * platform.cpu.far_atomics, always: they are done at the line's home node).
 * All are sequentially consistent. */
uint32_t hal_load32(const volatile uint32_t *p);
uint64_t hal_load64(const volatile uint64_t *p);
void hal_store32(volatile uint32_t *p, uint32_t v);
void hal_store64(volatile uint64_t *p, uint64_t v);
/* Return the value found at *p; store `desired` only if it equalled `expected`. */
uint32_t hal_cmpxchg32(volatile uint32_t *p, uint32_t expected, uint32_t desired);
uint64_t hal_cmpxchg64(volatile uint64_t *p, uint64_t expected, uint64_t desired);
/* Return the old value. */
uint32_t hal_fetch_add32(volatile uint32_t *p, uint32_t v);
uint64_t hal_fetch_add64(volatile uint64_t *p, uint64_t v);
uint32_t hal_fetch_andnot32(volatile uint32_t *p, uint32_t mask);
uint64_t hal_fetch_andnot64(volatile uint64_t *p, uint64_t mask);
uint32_t hal_fetch_or32(volatile uint32_t *p, uint32_t mask);
uint64_t hal_fetch_or64(volatile uint64_t *p, uint64_t mask);
/* A halfword swap (arm64 SWPH): what Linux's qspinlock exchanges its tail with. */
uint16_t hal_xchg16(volatile uint16_t *p, uint16_t v);
uint32_t hal_xchg32(volatile uint32_t *p, uint32_t v);
uint64_t hal_xchg64(volatile uint64_t *p, uint64_t v);

enum hal_barrier {
  HAL_BARRIER_DMB = 0, /* ordering between memory accesses */
  HAL_BARRIER_DSB = 1, /* completion, e.g. before an MMIO doorbell */
  HAL_BARRIER_ISB = 2,
};
void hal_barrier(enum hal_barrier kind);
/* Busy-wait hint inside a spin loop (costs "cpu_relax"). */
void hal_cpu_relax(void);

/* ---- Polling a shared word, after Linux's smp_cond_load_relaxed() and
 * readx_poll_timeout(): hal_poll32(p, mask, value, until, max_polls, &polls)
 * is exactly the loop
 *
 *   for (n = 0; max_polls == 0 || n < max_polls; n++) {
 *     v = hal_load32(p);
 *     if (until == HAL_POLL_EQ ? (v & mask) == value : (v & mask) != value) break;
 *     hal_cpu_relax();
 *   }
 *
 * (max_polls 0: no limit). It returns the last value loaded (0 when none)
 * and stores the number of loads in *polls unless polls is NULL: a caller
 * with periodic side work polls up to the next one, does it, and polls again.
 * Same simulated time, same values, same statistics as the loop; on the
 * simulator the core sleeps between the polls that cannot see a change
 * instead of synchronising at each (docs/architecture.md, "Polling"). It
 * wakes for a HAL store or atomic by another core to the word's cache line,
 * a write into DRAM over the word (device DMA, the SMMU's MSI, hal_write*),
 * or an interrupt due for this core, and resumes at the first poll of the
 * loop that would see it. A plain C store to *p by another core is not
 * seen: only poll words that other cores write through the HAL (this core's
 * interrupt handlers may use plain stores). */
enum hal_poll_until {
  HAL_POLL_EQ = 0, /* until (v & mask) == value */
  HAL_POLL_NE = 1, /* until (v & mask) != value */
};
uint32_t hal_poll32(const volatile uint32_t *p, uint32_t mask, uint32_t value, enum hal_poll_until until,
                    unsigned max_polls, unsigned *polls);
uint64_t hal_poll64(const volatile uint64_t *p, uint64_t mask, uint64_t value, enum hal_poll_until until,
                    unsigned max_polls, unsigned *polls);

/* ---- Polling a device register, after Linux's readl_poll_timeout():
 * hal_read_poll32(pa, done, arg, max_polls, &polls) is exactly the loop
 *
 *   for (n = 0; max_polls == 0 || n < max_polls; n++) {
 *     v = hal_read32(pa);
 *     if (done(v, arg)) break;
 *     hal_cpu_relax();
 *   }
 *
 * (max_polls 0: no limit), returning the last value read (0 when none) and
 * the number of reads in *polls unless polls is NULL. Same simulated time,
 * values and statistics as the loop. `done` must depend on v and *arg
 * alone, and *arg must not change during the poll: on the simulator the
 * device behind pa calls it too, on each new value of the register, and the
 * core sleeps until a read would end the loop (or an interrupt is due for
 * it, or the last read comes), then resumes at that read of the loop
 * (docs/architecture.md, "Polling a register"). `done` then runs outside
 * this core's program: a fault in it stops the simulator, not the core.
 * Registers that a device cannot watch
 * so (any but the SMMU's CMDQ_CONS and ECMDQ CONS today) are simply read
 * in the loop. */
typedef bool (*hal_poll_done_fn)(uint32_t v, const void *arg);
uint32_t hal_read_poll32(phys_addr_t pa, hal_poll_done_fn done, const void *arg, unsigned max_polls,
                         unsigned *polls);

/* ---- Events and interrupts. */
/* Wait for an event: returns at once if this core's event register is set
 * (clearing it); otherwise sleeps until SEV from any core or device, an
 * interrupt, or the event stream tick (cpu.event_stream_ns). */
void hal_wfe(void);
/* Set the event register of every core and wake those in WFE. */
void hal_sev(void);
/* Sleep until an interrupt is pending for this core, then run handlers. */
void hal_wfi(void);

typedef void (*hal_irq_handler_t)(unsigned irq, void *ctx);
/* Registers a handler and routes `irq` to the calling core. Returns 0, or -1
 * for an out-of-range irq or a line that already has a handler. */
int hal_irq_register(unsigned irq, hal_irq_handler_t handler, void *ctx);
int hal_irq_unregister(unsigned irq);
/* Mask interrupts on this core; returns the previous state for restore. */
unsigned hal_irq_save(void);
void hal_irq_restore(unsigned flags);

/* ---- Platform description, from the configuration. */
struct hal_region {
  phys_addr_t base;
  uint64_t size;
};
struct hal_device_info {
  const char *name;  /* instance name, e.g. "dma0" */
  const char *type;  /* model type, e.g. "dma" */
  phys_addr_t base;  /* register block */
  uint64_t size;
  uint32_t stream_id;
  uint32_t irq;      /* wired interrupt line */
  uint32_t smmu;     /* the SMMU instance its master port sits behind (hal_smmu_get); 0 without one */
  uint32_t ats;      /* 1: a PCIe endpoint with an ATC that uses ATS once its STE allows it (atc.entries > 0) */
};
struct hal_region hal_dram(void);
/* The SMMU's register block; size 0 when the platform has no SMMU. With
 * several instances (platform.smmus), the first: hal_smmu_get(0). */
struct hal_region hal_smmu(void);
/* How many SMMU instances the platform has (0: none). */
unsigned hal_smmu_count(void);
/* Instance `index`'s register block; size 0 when there is no such instance. */
struct hal_region hal_smmu_get(unsigned index);
/* Address whose 32-bit write of an interrupt number raises that interrupt. */
phys_addr_t hal_msi_doorbell(void);
unsigned hal_device_count(void);
/* Returns 0 and fills *out, or -1 when there is no such device. */
int hal_device_get(unsigned index, struct hal_device_info *out);
int hal_device_find(const char *name, struct hal_device_info *out);

/* Which instance of its app the running core runs: 0 for the scenario's
 * first apps entry naming this app, 1 for the next, ... An app that keeps
 * state in globals keeps one set per instance (or refuses a second); its
 * results go under the instance's name (scenario.apps.N.name). */
unsigned hal_app_instance(void);

/* ---- Parameters of the running app, from the scenario (declared by the app
 * in its struct hal_app; asking for an undeclared name is a fatal error). */
uint64_t hal_param(const char *name);
/* The cores the scenario assigns to the running app: how many, and this
 * core's index among them (0 for the lowest-numbered core). */
unsigned hal_app_cores(void);
unsigned hal_app_rank(void);
/* Deterministic per-core pseudo-random numbers, seeded from --seed. */
uint64_t hal_random(void);

/* ---- Results: counters and latency histograms in the run's stats.json under
 * sw.<app>.<name>; shared by all cores running the same app. */
void hal_stat_add(const char *name, uint64_t delta);
void hal_stat_sample(const char *name, uint64_t value_ns);
/* A value computed by the app (e.g. a throughput); the last write wins. */
void hal_stat_set(const char *name, double value);

/* ---- Trace recording (`smmu-vp run --record-trace`, traces/README.md): the
 * DMA-API layer reports each call it served so that a trace of the run can be
 * replayed elsewhere. Untimed; does nothing unless the run records. */
enum hal_dma_trace_op {
  /* Values of the trace player's enum tp_op (trace_player_regs.h). */
  HAL_DMA_TRACE_MAP = 0,
  HAL_DMA_TRACE_UNMAP = 1,
  HAL_DMA_TRACE_MAP_SG = 2,
  HAL_DMA_TRACE_UNMAP_SG = 3,
  HAL_DMA_TRACE_SYNC_FOR_CPU = 4,
  HAL_DMA_TRACE_SYNC_FOR_DEVICE = 5,
  HAL_DMA_TRACE_IOMMU_MAP = 8,
  HAL_DMA_TRACE_IOMMU_UNMAP = 9,
  HAL_DMA_TRACE_ATTACH = 11,
  HAL_DMA_TRACE_DETACH = 12,
};
struct hal_dma_call {
  uint64_t start; /* hal_dma_trace_begin()'s value when the call began */
  uint32_t op;   /* enum hal_dma_trace_op */
  uint32_t sid;  /* the device's StreamID */
  uint32_t dir;  /* Linux's enum dma_data_direction */
  uint32_t asid; /* attach: the domain's ASID */
  uint64_t iova, pa, size;
  /* map_sg/unmap_sg: nsegs elements, element i's address and length at
   * byte offset i * seg_stride from seg_pa and seg_len (an array of structs). */
  unsigned nsegs;
  size_t seg_stride;
  const phys_addr_t *seg_pa;
  const size_t *seg_len;
};
/* At the start of a DMA-API call: 0 when the run does not record (then
 * there is nothing to report), else a timestamp for hal_dma_call.start, so
 * that the record carries the time the call was made. */
uint64_t hal_dma_trace_begin(void);
void hal_dma_trace(const struct hal_dma_call *call);

/* ---- Logging through the platform's logger. Formatting happens host-side;
 * the usual printf conversions are available. */
enum hal_log_level {
  HAL_LOG_TRACE = 0,
  HAL_LOG_DEBUG = 1,
  HAL_LOG_INFO = 2,
  HAL_LOG_WARN = 3,
  HAL_LOG_ERROR = 4,
};
void hal_log(enum hal_log_level level, const char *fmt, ...) HAL_PRINTF(2, 3);
void hal_vlog(enum hal_log_level level, const char *fmt, va_list ap);

/* ---- Apps and firmware.
 * An app is a main function that runs on each core the scenario assigns to it
 * (all on the same image; hal_cpu_id() tells them apart) and returns 0 on
 * success. Built-in apps are listed in sw/apps/apps.c. A firmware .so passed
 * with --firmware exports one `const struct hal_app smmu_vp_firmware`
 * (see HAL_FIRMWARE below and docs/firmware.md). */
struct hal_param_decl {
  const char *name;
  uint64_t default_value;
  const char *help;
  uint64_t max; /* largest value allowed (the configuration refuses more); 0: any */
  /* Comma-separated names of the values 0, 1, ..., accepted by the
   * configuration in place of the number (e.g. "poll,sev,msi"); NULL: none. */
  const char *names;
};
struct hal_app {
  const char *name;
  const char *summary;
  int (*main)(void);
  const struct hal_param_decl *params; /* terminated by an entry with name NULL */
};

#define HAL_FIRMWARE_SYMBOL "smmu_vp_firmware"
#define HAL_FIRMWARE(app_name, summary_text, main_fn, params_table)                        \
  extern const struct hal_app smmu_vp_firmware;                                             \
  const struct hal_app smmu_vp_firmware = {app_name, summary_text, main_fn, params_table}

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_HAL_H */

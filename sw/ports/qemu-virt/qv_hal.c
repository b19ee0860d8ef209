/*
 * hal/hal.h on real (emulated) AArch64 hardware: QEMU's virt machine.
 * Memory accesses, atomics, barriers, time, events, interrupt masking, DMA
 * memory and the exception handler. What is simulated time on smmu-vp is
 * real time here: hal_cycles and the hal_cost family charge nothing, the
 * hardware takes the time it takes.
 */
#include "qv_port.h"

#include "lib/string.h"

/* ---- Timed physical accesses. The map is the identity (start.S), so a
 * physical address is the pointer. Device memory is Device-nGnRE, so the
 * accesses reach the device in program order among themselves; the DMBs
 * order them against Normal memory, as Linux's readl/writel do: a write
 * comes after the buffers written before it (the doorbell pattern), and
 * the data a read reports complete is read after it. */

#define MMIO_WRITE(insn, reg, pa, v) __asm__ volatile("dmb osh\n\t" insn " %" reg "0, [%1]" ::"rZ"(v), "r"(pa) : "memory")
#define MMIO_READ(insn, reg, pa, v) __asm__ volatile(insn " %" reg "0, [%1]\n\tdmb osh" : "=r"(v) : "r"(pa) : "memory")

uint8_t hal_read8(phys_addr_t pa) {
  uint32_t v;
  MMIO_READ("ldrb", "w", pa, v);
  return (uint8_t)v;
}
uint16_t hal_read16(phys_addr_t pa) {
  uint32_t v;
  MMIO_READ("ldrh", "w", pa, v);
  return (uint16_t)v;
}
uint32_t hal_read32(phys_addr_t pa) {
  uint32_t v;
  MMIO_READ("ldr", "w", pa, v);
  return v;
}
uint64_t hal_read64(phys_addr_t pa) {
  uint64_t v;
  MMIO_READ("ldr", "x", pa, v);
  return v;
}
void hal_write8(phys_addr_t pa, uint8_t value) { MMIO_WRITE("strb", "w", pa, (uint32_t)value); }
void hal_write16(phys_addr_t pa, uint16_t value) { MMIO_WRITE("strh", "w", pa, (uint32_t)value); }
void hal_write32(phys_addr_t pa, uint32_t value) { MMIO_WRITE("str", "w", pa, value); }
void hal_write64(phys_addr_t pa, uint64_t value) { MMIO_WRITE("str", "x", pa, value); }

static volatile uint64_t bus_errors[QV_MAX_CPUS];

uint64_t hal_bus_errors(void) { return bus_errors[hal_cpu_id()]; }

/* ---- DRAM. */

extern char __dma_start[], __ram_end[];

static phys_addr_t dma_next, dma_end;
static volatile uint32_t dma_lock;
/* The last allocation, which hal_dma_free can give back (a bump allocator
 * reclaims nothing else). */
static void *dma_last;
static phys_addr_t dma_last_prev;

void qv_dma_region_init(void) {
  dma_next = (phys_addr_t)(uintptr_t)__dma_start;
  dma_end = (phys_addr_t)(uintptr_t)__ram_end;
}

uint64_t qv_dma_bytes_used(void) { return dma_next - (phys_addr_t)(uintptr_t)__dma_start; }

struct hal_region hal_dram(void) {
  const struct hal_region r = {QV_RAM_BASE, (uint64_t)(uintptr_t)__ram_end - QV_RAM_BASE};
  return r;
}

void *hal_phys_to_virt(phys_addr_t pa) {
  const struct hal_region r = hal_dram();
  if (pa < r.base || pa - r.base >= r.size) return NULL;
  return (void *)(uintptr_t)pa;
}

phys_addr_t hal_virt_to_phys(const void *va) {
  const phys_addr_t pa = (phys_addr_t)(uintptr_t)va;
  const struct hal_region r = hal_dram();
  return (pa < r.base || pa - r.base >= r.size) ? 0 : pa;
}

void *hal_dma_alloc(size_t size, size_t align, phys_addr_t *pa) {
  if (align < 8 || (align & (align - 1)) != 0) return NULL;
  while (__atomic_exchange_n(&dma_lock, 1u, __ATOMIC_ACQUIRE)) __asm__ volatile("yield");
  const phys_addr_t start = (dma_next + align - 1) & ~(phys_addr_t)(align - 1);
  void *va = NULL;
  if (start >= dma_next && start <= dma_end && size <= dma_end - start) {
    dma_last_prev = dma_next;
    dma_next = start + size;
    va = (void *)(uintptr_t)start;
    dma_last = va;
  }
  __atomic_store_n(&dma_lock, 0u, __ATOMIC_RELEASE);
  if (!va) return NULL;
  sw_memset(va, 0, size);
  if (pa) *pa = (phys_addr_t)(uintptr_t)va;
  return va;
}

void hal_dma_free(void *va) {
  while (__atomic_exchange_n(&dma_lock, 1u, __ATOMIC_ACQUIRE)) __asm__ volatile("yield");
  if (va && va == dma_last) {
    dma_next = dma_last_prev;
    dma_last = NULL;
  }
  __atomic_store_n(&dma_lock, 0u, __ATOMIC_RELEASE);
}

/* ---- Cores and time. */

unsigned hal_cpu_id(void) {
  uint64_t id;
  __asm__ volatile("mrs %0, tpidr_el1" : "=r"(id));
  return (unsigned)id;
}

unsigned hal_cpu_count(void) { return qv_cpus_online(); }

static uint64_t counter(void) {
  uint64_t v;
  __asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v)::"memory");
  return v;
}

static uint64_t counter_freq(void) {
  uint64_t f;
  __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
  return f ? f : 1;
}

/* Ticks to a unit of 10^-k s without 128-bit division (none in a
 * freestanding image): whole seconds, then the remainder. */
uint64_t hal_now_ns(void) {
  const uint64_t t = counter(), f = counter_freq();
  return t / f * 1000000000ull + t % f * 1000000000ull / f;
}

/* The counter is the time: nothing to synchronise. */
uint64_t hal_clock_ps(void) { return hal_now_ps(); }
/* The image's scenario has no window of its own. */
int hal_scenario_window(uint64_t *start_ns, uint64_t *end_ns) {
  (void)start_ns;
  (void)end_ns;
  return 0;
}
/* No platform model to tell. */
void hal_measure_window(uint64_t start_ns, uint64_t end_ns) {
  (void)start_ns;
  (void)end_ns;
}

void hal_name_shared(const volatile void *p, size_t len, const char *name) {
  (void)p;
  (void)len;
  (void)name;
}

uint64_t hal_now_ps(void) {
  const uint64_t t = counter(), f = counter_freq();
  const uint64_t rem_us = t % f * 1000000ull; /* remainder in us * f */
  return t / f * 1000000000000ull + rem_us / f * 1000000ull + rem_us % f * 1000000ull / f;
}

void hal_delay_ns(uint64_t ns) {
  const uint64_t end = hal_now_ns() + ns;
  while (hal_now_ns() < end) __asm__ volatile("yield");
}

/* No cost model on hardware: time passes by itself. Every class name is
 * accepted (there is no table to check it against). */
void hal_cycles(uint64_t n) { (void)n; }
void hal_cost(const char *cost_class, uint64_t count) {
  (void)cost_class;
  (void)count;
}
int hal_cost_lookup(const char *cost_class) {
  (void)cost_class;
  return 0;
}
void hal_cost_id(int handle, uint64_t count) {
  (void)handle;
  (void)count;
}
void hal_cost_walk(uint64_t objects, uint64_t footprint_bytes) {
  (void)objects;
  (void)footprint_bytes;
}

/* ---- Atomics: the compiler's, sequentially consistent (LDAXR/STLXR on
 * ARMv8.0, built with -mno-outline-atomics so that nothing calls libgcc). */

uint32_t hal_load32(const volatile uint32_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
uint64_t hal_load64(const volatile uint64_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
void hal_store32(volatile uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
void hal_store64(volatile uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
uint32_t hal_cmpxchg32(volatile uint32_t *p, uint32_t expected, uint32_t desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;
}
uint64_t hal_cmpxchg64(volatile uint64_t *p, uint64_t expected, uint64_t desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;
}
uint32_t hal_fetch_add32(volatile uint32_t *p, uint32_t v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
uint64_t hal_fetch_add64(volatile uint64_t *p, uint64_t v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
uint32_t hal_fetch_andnot32(volatile uint32_t *p, uint32_t mask) {
  return __atomic_fetch_and(p, ~mask, __ATOMIC_SEQ_CST);
}
uint64_t hal_fetch_andnot64(volatile uint64_t *p, uint64_t mask) {
  return __atomic_fetch_and(p, ~mask, __ATOMIC_SEQ_CST);
}
uint32_t hal_fetch_or32(volatile uint32_t *p, uint32_t mask) { return __atomic_fetch_or(p, mask, __ATOMIC_SEQ_CST); }
uint64_t hal_fetch_or64(volatile uint64_t *p, uint64_t mask) { return __atomic_fetch_or(p, mask, __ATOMIC_SEQ_CST); }
uint16_t hal_xchg16(volatile uint16_t *p, uint16_t v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
uint32_t hal_xchg32(volatile uint32_t *p, uint32_t v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
uint64_t hal_xchg64(volatile uint64_t *p, uint64_t v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }

/* Full-system barriers: the SMMU and the PCI device observe memory too, so
 * inner-shareable ones would not be enough (Arm ARM B2.3.10). */
void hal_barrier(enum hal_barrier kind) {
  switch (kind) {
    case HAL_BARRIER_DMB: __asm__ volatile("dmb sy" ::: "memory"); break;
    case HAL_BARRIER_DSB: __asm__ volatile("dsb sy" ::: "memory"); break;
    case HAL_BARRIER_ISB: __asm__ volatile("isb" ::: "memory"); break;
  }
}

void hal_cpu_relax(void) { __asm__ volatile("yield" ::: "memory"); }

/* Here hal_poll* is simply the loop it stands for. */
#define QV_POLL(p, mask, value, until, max_polls, polls, v)                  \
  do {                                                                       \
    unsigned n_ = 0;                                                         \
    (v) = 0;                                                                 \
    while ((max_polls) == 0 || n_ < (max_polls)) {                           \
      (v) = __atomic_load_n((p), __ATOMIC_SEQ_CST);                          \
      n_++;                                                                  \
      if ((((v) & (mask)) == (value)) == ((until) == HAL_POLL_EQ)) break;    \
      hal_cpu_relax();                                                       \
    }                                                                        \
    if (polls) *(polls) = n_;                                                \
  } while (0)

uint32_t hal_poll32(const volatile uint32_t *p, uint32_t mask, uint32_t value, enum hal_poll_until until,
                    unsigned max_polls, unsigned *polls) {
  uint32_t v;
  QV_POLL(p, mask, value, until, max_polls, polls, v);
  return v;
}

uint64_t hal_poll64(const volatile uint64_t *p, uint64_t mask, uint64_t value, enum hal_poll_until until,
                    unsigned max_polls, unsigned *polls) {
  uint64_t v;
  QV_POLL(p, mask, value, until, max_polls, polls, v);
  return v;
}

uint32_t hal_read_poll32(phys_addr_t pa, hal_poll_done_fn done, const void *arg, unsigned max_polls,
                         unsigned *polls) {
  uint32_t v = 0;
  unsigned n = 0;
  while (max_polls == 0 || n < max_polls) {
    v = hal_read32(pa);
    n++;
    if (done(v, arg)) break;
    hal_cpu_relax();
  }
  if (polls) *polls = n;
  return v;
}

/* ---- Events and interrupts. */

void hal_wfe(void) { __asm__ volatile("wfe" ::: "memory"); }
void hal_sev(void) { __asm__ volatile("dsb ish\n\tsev" ::: "memory"); }
void hal_wfi(void) { __asm__ volatile("dsb sy\n\twfi" ::: "memory"); }

/* This port programs no interrupt controller: the drivers it runs poll
 * (completion of edu's DMA, CMD_SYNC, the event queue). Registering a
 * handler is refused, as hal.h allows for an irq that cannot be routed. */
int hal_irq_register(unsigned irq, hal_irq_handler_t handler, void *ctx) {
  (void)irq;
  (void)handler;
  (void)ctx;
  return -1;
}
int hal_irq_unregister(unsigned irq) {
  (void)irq;
  return -1;
}

/* PSTATE.I through DAIF (bit 7). */
unsigned hal_irq_save(void) {
  uint64_t daif;
  __asm__ volatile("mrs %0, daif\n\tmsr daifset, #2" : "=r"(daif)::"memory");
  return (daif & (1u << 7)) ? 1u : 0u;
}
void hal_irq_restore(unsigned flags) {
  if (!flags) __asm__ volatile("msr daifclr, #2" ::: "memory");
}

/* GICv2m's MSI_SETSPI_NS (GICv2m architecture, offset 0x40): a 32-bit write
 * of an SPI number makes that SPI pending. */
phys_addr_t hal_msi_doorbell(void) { return QV_GICV2M_BASE + 0x40; }

struct hal_region hal_smmu(void) {
  const struct hal_region r = {QV_SMMU_BASE, QV_SMMU_SIZE};
  return r;
}

/* QEMU's virt machine has one SMMUv3 (iommu=smmuv3), in front of its PCIe
 * root complex: every device sits behind instance 0. */
unsigned hal_smmu_count(void) { return 1; }

struct hal_region hal_smmu_get(unsigned index) {
  const struct hal_region none = {0, 0};
  return index == 0 ? hal_smmu() : none;
}

/* ---- Deterministic per-core random numbers (xorshift64*), seeded from
 * QV_SEED and the core. */
#ifndef QV_SEED
#define QV_SEED 1
#endif
static uint64_t rng_state[QV_MAX_CPUS];

void qv_hal_init_cpu(unsigned cpu) { rng_state[cpu] = (QV_SEED + 1ull) * 0x9E3779B97F4A7C15ull ^ (cpu + 1ull); }

uint64_t hal_random(void) {
  uint64_t x = rng_state[hal_cpu_id()];
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng_state[hal_cpu_id()] = x;
  return x * 0x2545F4914F6CDD1Dull;
}

/* ---- Trace recording: nothing records on this port. */
uint64_t hal_dma_trace_begin(void) { return 0; }
void hal_dma_trace(const struct hal_dma_call *call) { (void)call; }

/* ---- Exceptions. */

extern char qv_semihost_insn[];

#define ESR_EC(esr) (((esr) >> 26) & 0x3Fu)
#define EC_UNKNOWN 0x00u
#define EC_DABT_SAME_EL 0x25u
#define ESR_FSC(esr) ((esr)&0x3Fu)
#define FSC_SYNC_EXTERNAL 0x10u

void qv_exception(struct qv_frame *f, uint64_t kind) {
  uint64_t esr, far;
  __asm__ volatile("mrs %0, esr_el1\n\tmrs %1, far_el1" : "=r"(esr), "=r"(far));
  const unsigned ec = ESR_EC(esr);
  if (kind == 0 && ec == EC_UNKNOWN && f->elr == (uint64_t)(uintptr_t)qv_semihost_insn) {
    /* HLT #0xF000 without -semihosting: report "no semihosting". */
    qv_semihosting_absent = 1;
    f->x[0] = ~0ull;
    f->elr += 4;
    return;
  }
  if (kind == 0 && ec == EC_DABT_SAME_EL && ESR_FSC(esr) == FSC_SYNC_EXTERNAL) {
    /* A bus error (external abort). ESR.ISV need not be set for it (QEMU
     * leaves it clear), so the access is decoded from the instruction: a
     * load/store of one general-purpose register (Arm ARM C4.1.4: op0
     * bits[29:27] = 0b111, V bit 26 = 0; size bits[31:30], opc bits[23:22],
     * Rt bits[4:0]), which is what our MMIO accessors are. Count it, a read
     * returns all ones (hal.h), and execution goes on after the access. */
    const uint32_t insn = *(const volatile uint32_t *)(uintptr_t)f->elr;
    if (((insn >> 27) & 7u) == 7u && !((insn >> 26) & 1u)) {
      const unsigned size = insn >> 30, opc = (insn >> 22) & 3u, rt = insn & 0x1Fu;
      const bool write = opc == 0;
      bus_errors[hal_cpu_id()]++;
      if (!write && rt != 31) {
        /* Loads zero-extend to the register (opc 01) or sign-extend all
         * ones, which is all ones again (opc 1x); a W register result
         * clears the top half. */
        const bool to_w = (opc == 1 && size < 3) || opc == 3;
        f->x[rt] = to_w ? 0xFFFFFFFFull : ~0ull;
        if (opc == 1 && size < 2) f->x[rt] = (1ull << (8u << size)) - 1;
      }
      hal_log(HAL_LOG_WARN, "bus error: %s at 0x%llx", write ? "write" : "read", (unsigned long long)far);
      f->elr += 4;
      return;
    }
  }
  static const char *const kinds[] = {"synchronous", "IRQ", "FIQ", "SError", "lower-EL"};
  qv_fatal("cpu%u: unexpected %s exception: ESR 0x%llx (EC 0x%x) ELR 0x%llx FAR 0x%llx", hal_cpu_id(),
           kinds[kind <= 4 ? kind : 4], (unsigned long long)esr, ec, (unsigned long long)f->elr,
           (unsigned long long)far);
}

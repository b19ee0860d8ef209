/*
 * Small compiler helpers shared by sw/lib and the drivers. Freestanding C11
 * (GCC/Clang builtins); also usable from C++ for host-side tests.
 */
#ifndef SMMU_VP_SW_LIB_COMPILER_H
#define SMMU_VP_SW_LIB_COMPILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* `restrict` is not a C++ keyword; the headers are also read by host tests. */
#ifdef __cplusplus
#define SW_RESTRICT __restrict
#else
#define SW_RESTRICT restrict
#endif

#define sw_container_of(ptr, type, member) \
  ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#define SW_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* `a` must be a power of two. The mask is built in x's (unqualified,
 * promoted) type so that a 32-bit alignment does not truncate a 64-bit value. */
#define SW_ALIGN_MASK_OF(x, a) ((__typeof__((x) + 0))(a) - 1)
#define SW_ALIGN_DOWN(x, a) ((x) & ~SW_ALIGN_MASK_OF(x, a))
#define SW_ALIGN_UP(x, a) (((x) + SW_ALIGN_MASK_OF(x, a)) & ~SW_ALIGN_MASK_OF(x, a))
#define SW_IS_ALIGNED(x, a) (((x) & SW_ALIGN_MASK_OF(x, a)) == 0)

/* A driver statistic that cores update without holding a lock (the lock-free
 * command queue, per-core ECMDQs): a relaxed atomic add, so that no update is
 * lost on a real SMP machine. Untimed on the simulator: bookkeeping, not
 * modelled work. */
#define SW_STAT_ADD(counter, n) ((void)__atomic_fetch_add(&(counter), (n), __ATOMIC_RELAXED))

/* Data that cores share through the HAL (locks, queue indices, a benchmark's
 * counters and flags) starts a cache line of its own, as Linux's
 * ____cacheline_aligned_in_smp puts its hot shared data. The platform keeps
 * coherence per 64-byte line of the host address: a shared static or local
 * that did not start a line would share one with whatever the compiler placed
 * beside it, so a run's per-core schedule would depend on the build (a
 * sanitizer build pads globals apart; tests/golden_points.json keeps a
 * contended point that CI compares under both). Two objects that each start
 * a line never share one. Objects in DMA memory (hal_dma_alloc) sit at fixed
 * offsets of a page-aligned mapping already. */
#define SW_CACHELINE_BYTES 64
#ifdef __cplusplus
#define SW_CACHELINE_ALIGNED alignas(SW_CACHELINE_BYTES)
#else
#define SW_CACHELINE_ALIGNED _Alignas(SW_CACHELINE_BYTES)
#endif

#define SW_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SW_MAX(a, b) ((a) > (b) ? (a) : (b))

static inline bool sw_is_power_of_2(uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

/* 1-based index of the most significant set bit; 0 when x is 0 (as Linux fls64). */
static inline unsigned sw_fls64(uint64_t x) {
  return x ? 64u - (unsigned)__builtin_clzll(x) : 0u;
}

/* 1-based index of the least significant set bit; 0 when x is 0 (as ffs). */
static inline unsigned sw_ffs64(uint64_t x) {
  return x ? (unsigned)__builtin_ctzll(x) + 1u : 0u;
}

/* floor(log2(x)). x must be non-zero; 0 yields 0 rather than undefined. */
static inline unsigned sw_ilog2_u64(uint64_t x) { return x ? sw_fls64(x) - 1u : 0u; }

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_SW_LIB_COMPILER_H */

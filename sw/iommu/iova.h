/*
 * IOVA allocator of the DMA-mapping layer, after Linux's drivers/iommu/iova.c
 * (__alloc_and_insert_iova_range and the per-CPU rcache; the 64-bit cached
 * node is commit e60aa7b53845 "iommu/iova: Extend rbtree node caching";
 * seed 001).
 *
 * A domain keeps its allocated ranges as struct iova nodes {pfn_lo, pfn_hi}
 * in a red-black tree ordered by pfn, with an anchor node at pfn ~0 above
 * every real range. Allocation searches top-down for the first gap that fits
 * below the limit, starting from a cached node rather than from the top:
 *
 *  - IOVA_CACHED32_ONLY (Linux before 2017): only 32-bit-limited searches have
 *    a cached node; every search with a higher limit starts from the last node
 *    of the tree (rb_last: the anchor, then the highest live range below it),
 *    so with many live 64-bit IOVAs it walks all of them (seed 001).
 *  - IOVA_CACHED32_AND_64 (Linux since 2017): one cached node per space, set
 *    to the node just inserted and moved up past a freed node at or above it.
 *
 * Both policies share the search loop, the anchor, the retry from the limit
 * when the search below the cached node fails, and max32_alloc_size, so that
 * comparing them isolates the cached node.
 *
 * In front of the tree, an optional per-CPU range cache (rcache) for sizes of
 * up to 32 pages (orders 0..5): each CPU holds a loaded and a previous
 * magazine of IOVA_MAG_SIZE pfns per order, and full magazines move to and
 * from a depot shared by all CPUs. The depot holds at most IOVA_DEPOT_MAX_MAGS
 * magazines per order, as Linux's fixed depot did up to 6.4 (later kernels
 * keep an unbounded list trimmed by a delayed worker, which bare metal lacks);
 * a magazine pushed to a full depot returns its pfns to the tree.
 *
 * Time: every tree node the code steps on in a search, insert, lookup or
 * cached-node update is charged one "rbtree_visit" (and counted in
 * stats.nodes_visited) while the tree lock is held, so the search length
 * shows in simulated time and in lock hold times. "rbtree_visit" is a step
 * whose node is in the core's caches; each walk (one critical section, or one
 * lookup of a batch) also reports its working set to hal_cost_walk: as many
 * distinct nodes as it stepped on, at most the tree's size, of
 * IOVA_NODE_BYTES each, so that on a platform with a cache model a walk too
 * large for the caches pays for the nodes they cannot hold
 * (docs/dma-mapping.md, "Cold tree walks"). Node and magazine
 * allocations and frees cost one "kmem_alloc" each. Locks are HAL ticket
 * spinlocks (interrupts masked, as Linux takes them with irqsave).
 *
 * All pfns are in units of the domain's granule. pfn 0 is never handed out
 * (start_pfn is at least 1), so the pfn-returning calls use 0 for failure.
 */
#ifndef SMMU_VP_SW_IOMMU_IOVA_H
#define SMMU_VP_SW_IOMMU_IOVA_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/rbtree.h"
#include "lib/spinlock.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IOVA_ANCHOR_PFN (~(uint64_t)0)
/* Orders 0..IOVA_RCACHE_ORDERS-1 are cached: sizes up to 32 pages. */
#define IOVA_RCACHE_ORDERS 6u
#define IOVA_RCACHE_MAX_PAGES (1u << (IOVA_RCACHE_ORDERS - 1u))
/* 127 so that a magazine (count + pfns) fills exactly 1 KiB, as Linux since
 * 5.15 (128 before). */
#define IOVA_MAG_SIZE 127u
#define IOVA_DEPOT_MAX_MAGS 32u
/* Per-CPU state exists for every core of the platform, in at least this many
 * blocks (so that the layout of a platform of up to 64 cores, and with it its
 * results, is what it was before more were possible). */
#define IOVA_MIN_CPU_BLOCKS 64u
/* CPU ids below this have per-CPU state; a higher id (none on the
 * platform) would bypass the rcache. */
unsigned iova_max_cpus(void);
/* Bytes a tree node occupies in Linux, for the working set of a walk: struct
 * iova (an rb_node and two pfns, 40 bytes on 64-bit) comes from a slab cache
 * created with SLAB_HWCACHE_ALIGN (iova_cache_get, drivers/iommu/iova.c of
 * the seed's era), and SLUB aligns an object above half a line to a whole
 * 64-byte line. This allocator's own slab packs its nodes tighter; the cost
 * follows Linux's layout. */
#define IOVA_NODE_BYTES 64u

struct iova {
  struct sw_rb_node node;
  uint64_t pfn_lo; /* first pfn of the range */
  uint64_t pfn_hi; /* last pfn, inclusive */
};

enum iova_cache_policy {
  IOVA_CACHED32_ONLY = 0,
  IOVA_CACHED32_AND_64 = 1,
};

struct iova_policy {
  enum iova_cache_policy cache;
  bool rcache; /* per-CPU range caches in front of the tree */
  /* The allocator's spinlocks (tree, depot, per-CPU caches, slab) queued,
   * Linux's qspinlock (arm64 since 4.18); false: ticket locks. */
  bool queued_locks;
};

/* Plain counters, shared by all CPUs: exact on the platform, whose cores
 * interleave only at HAL calls. Read them as a snapshot. */
struct iova_stats {
  uint64_t allocs;        /* ranges inserted in the tree */
  uint64_t frees;         /* ranges removed from the tree */
  uint64_t failures;      /* tree allocations that found no room (fast fails included) */
  uint64_t fast_fails;    /* 32-bit requests refused by max32_alloc_size */
  uint64_t retries;       /* searches restarted from the limit */
  uint64_t nodes_visited; /* tree nodes stepped on, each charged "rbtree_visit" */
  uint64_t rcache_hits;
  uint64_t rcache_misses;
  uint64_t rcache_inserts;  /* frees absorbed by an rcache */
  uint64_t depot_puts;      /* full magazines moved to the depot */
  uint64_t depot_gets;      /* full magazines taken from the depot */
  uint64_t depot_overflows; /* magazines emptied into the tree: depot full */
  uint64_t rcache_flushes;  /* alloc_iova_fast flushed every rcache and retried */
  uint64_t slab_pages;      /* pages of struct iova nodes taken from hal_dma_alloc */
};

struct iova_magazine {
  uint64_t size;
  uint64_t pfns[IOVA_MAG_SIZE];
};

struct iova_cpu_rcache {
  struct sw_spinlock lock;
  struct iova_magazine *loaded; /* NULL until the CPU first frees into it */
  struct iova_magazine *prev;
};

struct iova_rcache {
  struct sw_spinlock lock; /* the depot */
  uint32_t depot_size;
  struct iova_magazine *depot[IOVA_DEPOT_MAX_MAGS];
};

/* Per-CPU block, one cache line apart from the next CPU's so that its locks
 * never share a line with another CPU's. */
struct iova_cpu {
  struct iova_cpu_rcache rc[IOVA_RCACHE_ORDERS];
  void *slab_free;  /* this CPU's free struct iova nodes */
  void *slab_pages; /* pages this CPU took for the slab */
};

struct iova_domain {
  struct sw_spinlock lock; /* the tree, cached nodes and max32_alloc_size */
  struct sw_rb_root root;
  struct sw_rb_node *cached_node;   /* 64-bit searches (IOVA_CACHED32_AND_64) */
  struct sw_rb_node *cached32_node; /* searches limited to 4 GiB */
  struct iova anchor;
  uint64_t granule;
  unsigned shift;
  uint64_t start_pfn;
  uint64_t dma_32bit_pfn;    /* pfn of 4 GiB */
  uint64_t max32_alloc_size; /* a 32-bit request this large is known not to fit */
  struct iova_policy policy;
  struct iova_stats stats;

  /* rcache (policy.rcache): one depot per order, per-CPU magazines. */
  struct iova_rcache *rcaches[IOVA_RCACHE_ORDERS];
  struct iova_cpu *cpus; /* iova_max_cpus() blocks of cpu_stride bytes */
  uint64_t cpu_stride;

  /* Node slab: pages from hal_dma_alloc, free nodes on per-CPU lists (no
   * lock, like a SLUB per-CPU freelist); CPU ids at or above iova_max_cpus()
   * share one list under slab_lock. */
  struct sw_spinlock slab_lock;
  void *slab_shared_free;
  void *slab_shared_pages;

  int cost_visit; /* hal_cost_lookup handles */
  int cost_kmem;
  uint64_t nodes; /* in the tree, the anchor included: bounds a walk's working set */
};

/* granule: a power of two from 512 bytes to 64 KiB (4 KiB gives shift 12).
 * start_pfn is raised to 1 if 0. The domain must not move afterwards (the
 * tree points at its anchor). Returns 0, or -1 when the granule is invalid or
 * memory for the per-CPU state runs out. */
int init_iova_domain(struct iova_domain *d, uint64_t granule, uint64_t start_pfn,
                     const struct iova_policy *policy);
/* Frees every node, magazine and slab page. No call may race with it. */
void put_iova_domain(struct iova_domain *d);

/* size_pages pages at or below limit_pfn (inclusive), highest first; with
 * size_aligned the start is aligned to size rounded up to a power of two.
 * Returns the node, or NULL when there is no room. */
struct iova *alloc_iova(struct iova_domain *d, uint64_t size_pages, uint64_t limit_pfn,
                        bool size_aligned);
/* The live node containing pfn, or NULL. */
struct iova *find_iova(struct iova_domain *d, uint64_t pfn);
/* Removes the node from the tree and frees it (Linux __free_iova). */
void free_iova_node(struct iova_domain *d, struct iova *iova);
/* Frees the range containing pfn; false if there is none. */
bool free_iova(struct iova_domain *d, uint64_t pfn);
/* Marks [pfn_lo, pfn_hi] as used (e.g. an MSI window) so no allocation returns
 * it. NULL when the range overlaps a live one or memory runs out. */
struct iova *reserve_iova(struct iova_domain *d, uint64_t pfn_lo, uint64_t pfn_hi);

/* Through the rcache when enabled. Sizes below IOVA_RCACHE_MAX_PAGES are
 * rounded up to a power of two (with or without rcache, so the layout is the
 * same) and always size-aligned. On a tree failure with flush_rcache, every
 * CPU's cached pfns and the depots go back to the tree and the allocation is
 * tried once more. Returns the first pfn, or 0. */
uint64_t alloc_iova_fast(struct iova_domain *d, uint64_t size_pages, uint64_t limit_pfn,
                         bool flush_rcache);
/* size_pages as passed to alloc_iova_fast. */
void free_iova_fast(struct iova_domain *d, uint64_t pfn, uint64_t size_pages);
/* Returns every pfn held by the rcaches to the tree. */
void iova_flush_rcaches(struct iova_domain *d);
/* pfns now held by the rcaches (magazines and depots); a racy snapshot. */
uint64_t iova_rcache_pfns(const struct iova_domain *d);

/* The DMA layer's rule (Linux iommu_dma_alloc_iova with the PCI 32-bit
 * workaround): when the device can address more than 4 GiB, try below 4 GiB
 * first without flushing the rcaches, then the full limit with a flush.
 * Returns the first pfn, or 0. */
uint64_t iova_alloc_dma(struct iova_domain *d, uint64_t size_pages, uint64_t dma_limit_pfn);

static inline uint64_t iova_size(const struct iova *iova) { return iova->pfn_hi - iova->pfn_lo + 1; }
static inline unsigned iova_shift(const struct iova_domain *d) { return d->shift; }
static inline uint64_t iova_mask(const struct iova_domain *d) { return d->granule - 1; }
static inline uint64_t iova_offset(const struct iova_domain *d, uint64_t addr) {
  return addr & iova_mask(d);
}
static inline uint64_t iova_align(const struct iova_domain *d, uint64_t size) {
  return (size + iova_mask(d)) & ~iova_mask(d);
}
static inline uint64_t iova_pfn(const struct iova_domain *d, uint64_t addr) { return addr >> d->shift; }
static inline uint64_t iova_dma_addr(const struct iova_domain *d, const struct iova *iova) {
  return iova->pfn_lo << d->shift;
}

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_SW_IOMMU_IOVA_H */

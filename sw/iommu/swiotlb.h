/*
 * Bounce buffers (software IO TLB) for the DMA-mapping layer, after Linux's
 * kernel/dma/swiotlb.c, swiotlb_find_slots (areas: commit 20347fca71a3
 * "swiotlb: split up the global swiotlb lock"; dynamic pools: commit
 * 1aaa736815eb "swiotlb: allocate a new memory pool when existing pools are
 * full"; seed 004).
 *
 * A pool is one physically contiguous buffer cut into 2 KiB slots, grouped in
 * segments of 128 slots (no mapping crosses a segment, so the largest is
 * 256 KiB) and split into areas, each with its own lock, search index and used
 * count. A CPU starts searching in area (cpu & (nareas - 1)). Several pools can
 * exist: the default one, extra pools made at init, and, with `dynamic`, pools
 * grown when every pool was full. Two orders of search over pools and areas:
 * pool-first (Linux before seed 004) and area-first (seed 004, Linux since).
 *
 * Dynamic pools on bare metal: Linux serves a request that finds every pool
 * full from a transient pool sized to it, and schedules a worker that adds a
 * default-sized pool. There are no workers here, so the failed search only
 * marks the growth as pending; the next map call (on any core) allocates and
 * adds the pool before it searches, and swiotlb_grow() does it at once. That
 * next call is charged the work that a kernel worker would do elsewhere.
 *
 * Metadata (pools, areas, slots) lives in DRAM from hal_dma_alloc, so the area
 * locks are real HAL atomics and contend between simulated cores.
 */
#ifndef SMMU_VP_SW_IOMMU_SWIOTLB_H
#define SMMU_VP_SW_IOMMU_SWIOTLB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hal/hal.h"
#include "lib/spinlock.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SWIOTLB_SLOT_SHIFT 11u /* Linux IO_TLB_SHIFT */
#define SWIOTLB_SLOT_SIZE (1u << SWIOTLB_SLOT_SHIFT)
#define SWIOTLB_SEGSIZE 128u /* slots per segment, Linux IO_TLB_SEGSIZE */
#define SWIOTLB_MAX_ALLOC (SWIOTLB_SEGSIZE * SWIOTLB_SLOT_SIZE) /* 256 KiB */
#define SWIOTLB_PAGE_SIZE 4096u
#define SWIOTLB_DEFAULT_POOL_SIZE (64ull << 20)
/* Smallest pool a grow falls back to when the default size cannot be had
 * (Linux IO_TLB_MIN_SLABS, 1 MiB). */
#define SWIOTLB_MIN_GROW_SLOTS 512u

/* Returned by swiotlb_tbl_map_single on failure (as DMA_MAPPING_ERROR). */
#define SWIOTLB_MAP_ERROR (~(phys_addr_t)0)
#define SWIOTLB_INVALID_ADDR (~(uint64_t)0)

/* Same values as Linux's enum dma_data_direction. */
enum swiotlb_dir {
  SWIOTLB_DMA_BIDIRECTIONAL = 0,
  SWIOTLB_DMA_TO_DEVICE = 1,
  SWIOTLB_DMA_FROM_DEVICE = 2,
  SWIOTLB_DMA_NONE = 3,
};

enum swiotlb_search {
  SWIOTLB_POOL_FIRST = 0, /* every area of pool 0, then of pool 1, ... */
  SWIOTLB_AREA_FIRST = 1, /* the CPU's area in every pool, then the next area */
};

/* Why the last failed call failed (mem->last_error). */
enum swiotlb_error {
  SWIOTLB_OK = 0,
  SWIOTLB_ERR_INVALID = 1,  /* zero size, alloc_size < mapping_size, bad mask, address outside DRAM */
  SWIOTLB_ERR_TOO_BIG = 2,  /* with its alignment padding the request needs more than one segment */
  SWIOTLB_ERR_FULL = 3,     /* no pool had room (and no transient pool could be made) */
  SWIOTLB_ERR_NOT_MAPPED = 4, /* unmap or sync of an address that is not a live bounce buffer */
  SWIOTLB_ERR_NOMEM = 5,    /* hal_dma_alloc failed at init or grow */
};

struct swiotlb_config {
  uint64_t pool_size;       /* bytes of the default pool; 0: 64 MiB. Rounded up to whole segments */
  unsigned extra_pools;     /* pools made at init besides the default one */
  uint64_t extra_pool_size; /* bytes of each extra pool; 0: pool_size */
  unsigned nareas;          /* wanted areas per pool; 0: hal_cpu_count(). Rounded up to a power of two */
  bool dynamic;             /* transient pools and growth when every pool is full */
  enum swiotlb_search search;
  /* The device's DMA min_align_mask, used by swiotlb_tbl_map_single (Linux
   * takes it from the device; swiotlb_tbl_map_single_mask takes it per call). */
  uint32_t min_align_mask;
  /* Also copy the original into the bounce buffer when mapping FROM_DEVICE, as
   * Linux does since it stopped leaking stale bounce data on partial device
   * writes. Off: copies follow the direction only. */
  bool bounce_from_device_on_map;
  /* Linux's swiotlb=force (seed 004's swiotlb=512,4,force): the DMA layer
   * bounces every element of a scatter-gather list, aligned or not, instead
   * of only those that do not fill whole granules. Single mappings
   * (dma_map_single/page) keep the untrusted-device rule: the drivers map
   * their queues and descriptor pages with them, standing in for coherent
   * allocations, which Linux never bounces. Read by sw/iommu/dma_iommu.c. */
  bool force;
  /* Every lock of the bounce buffers (the pool list's, each area's) a
   * qspinlock (x86 since Linux 4.2, arm64 since 4.18); false: ticket locks. */
  bool queued_locks;
};

/* Per slot, as Linux's io_tlb_slot. */
struct swiotlb_slot {
  /* Original address that the start of this slot stands for; SWIOTLB_INVALID_ADDR
   * when free or a padding slot. (Linux records the address at the mapping
   * offset inside the slot; this records the slot start so that later calls
   * need no min_align_mask.) */
  uint64_t orig_addr;
  uint32_t alloc_size; /* bytes from this slot's start to the end of the allocation */
  uint16_t list;       /* free contiguous slots from here to the end of the segment; 0: in use */
  uint8_t pad_slots;   /* in the first mapped slot: padding slots before it */
  uint8_t head;        /* 1 in the first mapped slot, the one whose address the map returned */
};

struct swiotlb_area {
  struct sw_spinlock lock;
  uint32_t index; /* where the next search in this area starts, relative to the area */
  uint32_t used;  /* slots in use */
};

struct swiotlb_pool {
  phys_addr_t start, end; /* [start, end) */
  uint8_t *vaddr;
  uint32_t nslabs, nareas, area_nslabs;
  bool transient;
  unsigned id; /* position in mem->pools (0 = default pool); transient pools count separately */
  struct swiotlb_area *areas;
  /* Per area, 1 + the CPU that took its lock last (0: none yet), and the
   * pool's count of area-lock acquisitions (searches and releases) by another
   * CPU than the lock's last holder: each moves the lock's cache line. Plain
   * bookkeeping, charged no time, kept apart from the areas so that the locks'
   * layout is Linux's (and out of struct swiotlb_stats, whose size apps'
   * statics depend on). */
  uint16_t *area_last_cpu;
  uint64_t area_lock_handoffs;
  struct swiotlb_slot *slots;
  struct swiotlb_pool *next;
};

/* Instrumentation for apps and tests: plain counters, not charged time. */
struct swiotlb_stats {
  uint64_t maps, unmaps, syncs;
  uint64_t slots_scanned; /* slots examined by searches (each charged "slot_scan") */
  uint64_t areas_tried;   /* (pool, area) searches, including those ended early by the used count */
  uint64_t pools_tried;   /* pools a search entered, once per pool per map */
  uint64_t failures;      /* map calls that returned SWIOTLB_MAP_ERROR */
  uint64_t failures_full, failures_too_big, failures_invalid, bad_unmaps;
  uint64_t transient_pools; /* made */
  uint64_t transient_live;
  uint64_t pools_grown;
  uint64_t grow_failures;
  uint64_t bounce_bytes; /* copied either way */
  uint64_t used_slots, used_hiwater;
};

/* Lives in DRAM or in a static: its lock and grow_pending take HAL atomics. */
struct swiotlb_mem {
  struct swiotlb_config cfg;
  /* May be changed between calls; every pool is searched with the same policy. */
  enum swiotlb_search search;
  uint32_t min_align_mask;
  struct swiotlb_pool *pools; /* searched, in order of creation; never removed while live */
  struct swiotlb_pool *pools_tail;
  unsigned npools;
  struct swiotlb_pool *transient; /* one pool per transient mapping, found only by address */
  unsigned default_nareas;        /* areas of the default pool, the most any pool has */
  uint32_t default_nslabs;
  struct sw_spinlock lock;        /* pool lists and growth */
  volatile uint32_t grow_pending;
  int cost_slot_scan, cost_memcpy, cost_list_op, cost_kmem_alloc;
  enum swiotlb_error last_error;
  struct swiotlb_stats stats;
};

/* Defaults: one 64 MiB pool, areas for every CPU, not dynamic, area-first. */
void swiotlb_default_config(struct swiotlb_config *cfg);
/* Makes the default pool and the extra pools. cfg NULL: defaults. Returns 0,
 * or -1 (mem->last_error) when memory runs out; then nothing stays allocated. */
int swiotlb_init(struct swiotlb_mem *mem, const struct swiotlb_config *cfg);
/* Frees every pool, live mappings included. */
void swiotlb_destroy(struct swiotlb_mem *mem);

/*
 * Bounces [orig_pa, orig_pa + mapping_size). alloc_size (>= mapping_size; 0
 * means mapping_size) is the size to reserve, as in Linux before 6.9, where
 * callers such as dma-iommu round it up to their granule. Placement follows
 * Linux: the returned address keeps the bits of orig_pa under min_align_mask,
 * using whole padding slots for those at or above the slot size when
 * alloc_align_mask asks for that much alignment, and otherwise an offset
 * inside the first slot; the allocation starts on alloc_align_mask + 1 (a
 * power of two, or 0 for none), on a page when nothing else is asked and it
 * is at least a page, and on a slot always. Copies the original in for
 * TO_DEVICE and BIDIRECTIONAL. Returns the bounce buffer's physical address,
 * or SWIOTLB_MAP_ERROR (mem->last_error says why).
 */
phys_addr_t swiotlb_tbl_map_single(struct swiotlb_mem *mem, phys_addr_t orig_pa, size_t mapping_size,
                                   size_t alloc_size, uint32_t alloc_align_mask, enum swiotlb_dir dir);
phys_addr_t swiotlb_tbl_map_single_mask(struct swiotlb_mem *mem, phys_addr_t orig_pa, size_t mapping_size,
                                        size_t alloc_size, uint32_t alloc_align_mask, uint32_t min_align_mask,
                                        enum swiotlb_dir dir);
/* tlb_pa as returned by the map. Copies back for FROM_DEVICE and
 * BIDIRECTIONAL, then frees the slots (or the transient pool). 0, or -1 when
 * tlb_pa is not a live mapping (nothing is touched). */
int swiotlb_tbl_unmap_single(struct swiotlb_mem *mem, phys_addr_t tlb_pa, size_t mapping_size,
                             enum swiotlb_dir dir);
/* tlb_pa may point anywhere inside a mapping. for_device copies original ->
 * bounce for TO_DEVICE/BIDIRECTIONAL; for_cpu copies bounce -> original for
 * FROM_DEVICE/BIDIRECTIONAL. 0, or -1 when tlb_pa is not in a live mapping. */
int swiotlb_sync_for_device(struct swiotlb_mem *mem, phys_addr_t tlb_pa, size_t size, enum swiotlb_dir dir);
int swiotlb_sync_for_cpu(struct swiotlb_mem *mem, phys_addr_t tlb_pa, size_t size, enum swiotlb_dir dir);

/* The pool (searched or transient) holding pa, or NULL. */
struct swiotlb_pool *swiotlb_find_pool(struct swiotlb_mem *mem, phys_addr_t pa);
static inline bool swiotlb_is_bounce(struct swiotlb_mem *mem, phys_addr_t pa) {
  return swiotlb_find_pool(mem, pa) != NULL;
}
/* Adds a default-sized pool now (halving down to SWIOTLB_MIN_GROW_SLOTS if
 * memory is short) and clears a pending growth. 0, or -1. */
int swiotlb_grow(struct swiotlb_mem *mem);
/* Largest mapping_size that always fits one segment with this min_align_mask
 * (Linux swiotlb_max_mapping_size). */
size_t swiotlb_max_mapping_size(uint32_t min_align_mask);
/* Slots in use in one pool, summed over its areas. */
uint32_t swiotlb_pool_used(const struct swiotlb_pool *pool);
/* Area-lock acquisitions by another CPU than the lock's last holder, summed
 * over the searched pools (transient pools have one area and are not
 * counted). */
uint64_t swiotlb_area_lock_handoffs(const struct swiotlb_mem *mem);
/* Sets those counts to 0 (a measurement's start). */
void swiotlb_area_lock_handoffs_clear(struct swiotlb_mem *mem);

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_SW_IOMMU_SWIOTLB_H */

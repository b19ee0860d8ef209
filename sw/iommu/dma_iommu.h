/*
 * DMA API on an IOMMU domain, after Linux's drivers/iommu/dma-iommu.c: map a
 * buffer or a scatter-gather list for a device (allocate an IOVA range, map
 * it, bounce through swiotlb when the device may not see the rest of the
 * page), and unmap it again, strictly or through a flush queue (Linux v6.1
 * dma-iommu.c queue_iova and fq_flush_timeout; docs/dma-mapping.md).
 *
 * Two objects, as Linux has them:
 *  - struct iommu_dma_cookie: what belongs to a domain used for DMA: its IOVA
 *    allocator, the unmap policy and, in lazy mode, the flush queue.
 *  - struct dma_dev: one device (stream) attached to such a domain: its
 *    StreamID, DMA mask, coherency and optional bounce buffers.
 *
 * Unmap policies (chosen at iommu_dma_cookie_init):
 *  - DMA_UNMAP_STRICT (baseline): unmap, invalidate the gathered range (TLBI +
 *    SYNC), then free the IOVA.
 *  - DMA_UNMAP_LAZY: unmap without any TLBI or SYNC and queue the IOVA on this
 *    CPU's ring; a flush (one TLBI_NH_ASID + SYNC for the whole domain) runs
 *    when a ring is full or the 10 ms timer expires, and only then are the
 *    IOVAs queued before it freed. The security window: until that flush the
 *    device can still reach the unmapped memory through stale TLB entries.
 *    gather_when_queued on (baseline, before seed 003) still records every
 *    removed leaf in the gather, with its syncs on a change of page size;
 *    off, the gather is marked queued and io-pgtable skips that work.
 *
 * The timer: bare metal has no timer interrupt thread here, so the deadline
 * is checked (hal_now_ns) at every map and unmap of the domain while a flush
 * is pending, and dma_flush_queue_timer_poll lets an idle caller run it. A
 * flush is therefore never early, but may be late when no DMA API call comes.
 *
 * Concurrency: any core may map and unmap; each uses its own ring (by
 * hal_cpu_id) under that ring's lock; the flush counters are HAL atomics.
 */
#ifndef SMMU_VP_SW_IOMMU_DMA_IOMMU_H
#define SMMU_VP_SW_IOMMU_DMA_IOMMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hal/hal.h"
#include "iommu/iommu.h"
#include "iommu/iova.h"
#include "iommu/swiotlb.h"
#include "lib/spinlock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Same values as Linux's enum dma_data_direction (and swiotlb_dir). */
enum dma_data_direction {
  DMA_BIDIRECTIONAL = 0,
  DMA_TO_DEVICE = 1,
  DMA_FROM_DEVICE = 2,
  DMA_NONE = 3,
};

#define DMA_MAPPING_ERROR (~(uint64_t)0)
/* n in 1..64. */
#define DMA_BIT_MASK(n) (~0ull >> (64 - (n)))

/* Flush queue geometry (Linux's IOVA_FQ_SIZE and IOVA_FQ_TIMEOUT). */
#define DMA_FQ_SIZE 256u
#define DMA_FQ_TIMEOUT_NS 10000000ull

enum dma_unmap_policy {
  DMA_UNMAP_STRICT = 0,
  DMA_UNMAP_LAZY = 1,
};

struct dma_policy {
  enum dma_unmap_policy unmap;
  /* Lazy mode only: true is the baseline (leaves are gathered though the
   * queue flushes domain-wide); false is seed 003's change. */
  bool gather_when_queued;
  uint64_t fq_timeout_ns; /* 0: DMA_FQ_TIMEOUT_NS */
  /* false (baseline): a device that can address more than 4 GiB tries
   * below 4 GiB first (Linux's rule for PCI devices); true: allocate from
   * its whole DMA space at once, as for a platform device (seed 001's NIC). */
  bool skip_32bit_first;
  struct iova_policy iova; /* the domain's IOVA allocator */
};

struct dma_fq_entry {
  uint64_t iova_pfn;
  uint64_t pages;   /* as passed to alloc_iova_fast */
  uint64_t counter; /* flush_start when queued: freed once flush_finish passes it */
  uint64_t queued_ns; /* when its PTEs were cleared (start of its security window) */
};

/* Completion times of the last flushes, by flush number modulo this. */
#define DMA_FQ_FINISH_TIMES 64u

/* One CPU's ring; head == tail is empty, one slot stays free. */
struct dma_fq {
  struct sw_spinlock lock;
  uint32_t head, tail;
  struct dma_fq_entry entries[DMA_FQ_SIZE];
};

struct dma_cookie_stats {
  uint64_t iovas_allocated;
  uint64_t iova_failures;
  uint64_t iovas_freed;         /* at unmap (strict) or after their flush (lazy) */
  uint64_t iovas_deferred;      /* queued on a flush-queue ring */
  uint64_t iotlb_syncs;         /* strict unmaps that synced their gather */
  uint64_t fq_flushes;          /* domain-wide flushes of the flush queue */
  uint64_t fq_full_flushes;     /* ... because a ring was full */
  uint64_t fq_timer_flushes;    /* ... because the timer expired */
  /* Lazy mode's security window: from an unmap (PTEs cleared, the TLB may
   * still hold them) to the completion of the flush that covers it; the
   * device can reach the freed buffer meanwhile. Each window is also
   * sampled into the app's stats as "iommu.lazy_window_ns". */
  uint64_t lazy_windows, lazy_window_sum_ns, lazy_window_max_ns;
};

struct iommu_dma_cookie {
  struct iommu_domain *domain;
  struct iova_domain iovad;
  struct dma_policy policy;
  /* Flush queue (lazy only): one ring per CPU, in DMA memory. */
  struct dma_fq *fq;
  unsigned fq_rings;
  volatile uint64_t fq_flush_start;  /* flushes begun */
  volatile uint64_t fq_flush_finish; /* flushes completed */
  /* When the armed timer expires (hal_now_ns time); 0: not armed. */
  volatile uint64_t fq_deadline_ns;
  uint64_t fq_finish_ns[DMA_FQ_FINISH_TIMES]; /* when flush number n completed, at [n % size] */
  struct dma_cookie_stats stats;
  int cost_list_op; /* hal_cost_lookup handle */
};

struct dma_dev_stats {
  uint64_t maps, unmaps;         /* single buffers */
  uint64_t map_sgs, unmap_sgs;
  uint64_t map_failures;
  uint64_t bounced;              /* maps served through swiotlb */
  uint64_t bytes_mapped;
};

struct dma_dev {
  uint32_t sid;
  uint64_t dma_mask;             /* highest IOVA the device can emit */
  struct iommu_dma_cookie *cookie;
  struct iommu_domain *domain;   /* cookie->domain */
  /* Bounce buffers for a device that must not see the rest of a page it is
   * given (Linux's untrusted devices): buffers not aligned to the granule
   * are bounced, and its unmaps are always strict. NULL: never bounce. */
  struct swiotlb_mem *swiotlb;
  /* The device does not snoop CPU caches: map and unmap clean or invalidate
   * the buffer's lines ("cache_clean_line" each), and its mappings are not
   * IOMMU_CACHE. false after dma_dev_init; set it before the first map. */
  bool non_coherent;
  struct dma_dev_stats stats;
  int cost_indirect, cost_call, cost_line;
};

/* Sets up the DMA side of `domain`: the IOVA allocator (granule of the
 * domain, pfn 0 reserved) and, for DMA_UNMAP_LAZY, one flush-queue ring per
 * CPU. policy NULL: every baseline (strict; the IOVA allocator's zeroed
 * policy). The cookie must not move afterwards. 0, or -1 when memory runs
 * out or the arguments are invalid. */
int iommu_dma_cookie_init(struct iommu_dma_cookie *cookie, struct iommu_domain *domain,
                          const struct dma_policy *policy);
/* Flushes and drains the queue, then frees the rings and the allocator. */
void iommu_dma_cookie_destroy(struct iommu_dma_cookie *cookie);

/* A device on the cookie's domain: attaches stream `sid` to the domain.
 * swiotlb may be NULL. 0 or -1. */
int dma_dev_init(struct dma_dev *dev, struct iommu_dma_cookie *cookie, uint32_t sid, uint64_t dma_mask,
                 struct swiotlb_mem *swiotlb);
/* The same for a device behind `smmu`, which may be another SMMU than the
 * domain's first (platform.smmus): the domain's invalidations then reach it
 * too (iommu_attach_device_on). */
int dma_dev_init_on(struct dma_dev *dev, struct iommu_dma_cookie *cookie, struct smmu_device *smmu, uint32_t sid,
                    uint64_t dma_mask, struct swiotlb_mem *swiotlb);

/* Maps [pa, pa + size) for the device: returns the device address (with
 * pa's offset inside the granule), or DMA_MAPPING_ERROR. dma_map_single is
 * the same call (sw/ has no separate kernel virtual addresses). */
uint64_t dma_map_page(struct dma_dev *dev, phys_addr_t pa, size_t size, enum dma_data_direction dir);
uint64_t dma_map_single(struct dma_dev *dev, phys_addr_t pa, size_t size, enum dma_data_direction dir);
/* dma_addr and size as mapped. */
void dma_unmap_page(struct dma_dev *dev, uint64_t dma_addr, size_t size, enum dma_data_direction dir);
void dma_unmap_single(struct dma_dev *dev, uint64_t dma_addr, size_t size, enum dma_data_direction dir);

/* Maps a list into one IOVA range (elements laid out one after another,
 * each over whole granules, keeping its offset) with one iommu_map_sg call;
 * dma_addrs[i] receives element i's device address. A bouncing device maps
 * element by element instead. Returns nents, or 0 with nothing mapped. */
int dma_map_sg(struct dma_dev *dev, const struct iommu_sg *sg, unsigned nents, enum dma_data_direction dir,
               uint64_t *dma_addrs);
/* The same list and the addresses dma_map_sg returned. */
void dma_unmap_sg(struct dma_dev *dev, const struct iommu_sg *sg, unsigned nents, enum dma_data_direction dir,
                  const uint64_t *dma_addrs);

/* Hands a mapped buffer to the CPU or back to the device without unmapping
 * it: cache maintenance for a non-coherent device, the bounce copy for a
 * bounced one (Linux's dma_sync_single_for_cpu/device). dma_addr inside a
 * mapping; nothing happens for an address that is not mapped. */
void dma_sync_single_for_cpu(struct dma_dev *dev, uint64_t dma_addr, size_t size, enum dma_data_direction dir);
void dma_sync_single_for_device(struct dma_dev *dev, uint64_t dma_addr, size_t size, enum dma_data_direction dir);

/* Lazy mode: runs the timer's flush if its deadline has passed. Returns true
 * when it flushed. */
bool dma_flush_queue_timer_poll(struct dma_dev *dev);
/* Lazy mode: flushes now (as if the timer fired) and frees every IOVA
 * queued so far. */
void dma_flush_queue_flush(struct dma_dev *dev);
/* IOVA ranges waiting on the rings for a flush (a snapshot). */
uint64_t dma_flush_queue_pending(const struct iommu_dma_cookie *cookie);

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_SW_IOMMU_DMA_IOMMU_H */

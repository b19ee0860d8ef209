/*
 * DMA API on an IOMMU domain, after the behaviour of Linux's dma-iommu. See
 * dma_iommu.h and docs/dma-mapping.md.
 *
 * Cost annotations charged here: one "indirect_call" per DMA API entry (the
 * dma_map_ops hop of Linux's dma_map_* wrappers), one "function_call" per
 * helper Linux enters on the way (counted at each call site), one "list_op"
 * per flush-queue ring entry added or retired, one "cache_clean_line" per
 * 64-byte line of a non-coherent device's buffer at map and unmap. The IOMMU
 * core, the IOVA allocator, swiotlb and the driver charge their own work.
 */
#include "iommu/dma_iommu.h"

#include "lib/compiler.h"
#include "lib/string.h"

#define DMA_CACHE_LINE 64u
/* The domain's input address space (iommu.c's 48-bit IOVAs). */
#define DMA_APERTURE_END DMA_BIT_MASK(48)

/* ---- Cost annotations. */

static void charge_indirect(struct dma_dev *dev, uint64_t n) { hal_cost_id(dev->cost_indirect, n); }
static void charge_calls(struct dma_dev *dev, uint64_t n) { hal_cost_id(dev->cost_call, n); }

static uint64_t lines_of(phys_addr_t pa, size_t size) {
  const uint64_t first = pa & ~(uint64_t)(DMA_CACHE_LINE - 1);
  return (SW_ALIGN_UP(pa + size, (uint64_t)DMA_CACHE_LINE) - first) / DMA_CACHE_LINE;
}

/* A non-coherent device must find the buffer in memory: its lines are
 * cleaned before the device may read or write it (as arm64 Linux does for
 * every direction). */
static void sync_for_device(struct dma_dev *dev, phys_addr_t pa, size_t size) {
  if (!dev->non_coherent || !size) return;
  hal_cost_id(dev->cost_line, lines_of(pa, size));
  hal_barrier(HAL_BARRIER_DSB);
}

/* ... and the CPU must not read stale lines of what the device wrote. */
static void sync_for_cpu(struct dma_dev *dev, phys_addr_t pa, size_t size, enum dma_data_direction dir) {
  if (!dev->non_coherent || !size || dir == DMA_TO_DEVICE) return;
  hal_cost_id(dev->cost_line, lines_of(pa, size));
  hal_barrier(HAL_BARRIER_DSB);
}

/* IOMMU permissions for a transfer direction: the device reads what goes to
 * it and writes what comes from it; coherent devices get cacheable
 * mappings (Linux's dma_info_to_prot). */
static unsigned dma_prot(const struct dma_dev *dev, enum dma_data_direction dir) {
  unsigned prot = dev->non_coherent ? 0u : IOMMU_CACHE;
  switch (dir) {
    case DMA_BIDIRECTIONAL: return prot | IOMMU_READ | IOMMU_WRITE;
    case DMA_TO_DEVICE: return prot | IOMMU_READ;
    case DMA_FROM_DEVICE: return prot | IOMMU_WRITE;
    default: return 0;
  }
}

/* ---- Flush queue (lazy unmap, Linux v6.1 dma-iommu.c queue_iova and fq_flush_timeout). */

static bool cookie_is_lazy(const struct iommu_dma_cookie *c) { return c->policy.unmap == DMA_UNMAP_LAZY; }

static bool fq_empty(const struct dma_fq *fq) { return fq->head == fq->tail; }
static bool fq_full(const struct dma_fq *fq) { return (fq->tail + 1) % DMA_FQ_SIZE == fq->head; }

/* One domain-wide invalidation. The counters bracket it: an entry queued
 * with flush_start = n is covered by any flush that finishes as number n + 1
 * or later, because that flush began after the entry's PTEs were cleared. */
static void fq_flush_iotlb(struct iommu_dma_cookie *c) {
  hal_fetch_add64(&c->fq_flush_start, 1);
  iommu_flush_iotlb_all(c->domain);
  const uint64_t done_ns = hal_now_ns();
  const uint64_t n = hal_fetch_add64(&c->fq_flush_finish, 1) + 1;
  c->fq_finish_ns[n % DMA_FQ_FINISH_TIMES] = done_ns;
  c->stats.fq_flushes++;
}

/* An entry queued when flush_start was k is covered by finish number k + 1.
 * Its time is kept for the last DMA_FQ_FINISH_TIMES flushes; an entry that
 * outlived those (or a slot written by a concurrent flush) counts until now,
 * an upper bound. */
static void fq_record_window(struct iommu_dma_cookie *c, const struct dma_fq_entry *e) {
  uint64_t end = c->fq_finish_ns[(e->counter + 1) % DMA_FQ_FINISH_TIMES];
  if (end < e->queued_ns) end = hal_now_ns();
  const uint64_t window = end - e->queued_ns;
  c->stats.lazy_windows++;
  c->stats.lazy_window_sum_ns += window;
  if (window > c->stats.lazy_window_max_ns) c->stats.lazy_window_max_ns = window;
  hal_stat_sample("iommu.lazy_window_ns", window);
}

/* Frees the ring's oldest entries that a completed flush covers. Ring lock held. */
static void fq_ring_free(struct iommu_dma_cookie *c, struct dma_fq *fq) {
  const uint64_t finished = hal_load64(&c->fq_flush_finish);
  while (!fq_empty(fq)) {
    const struct dma_fq_entry *e = &fq->entries[fq->head];
    if (e->counter >= finished) break;
    fq_record_window(c, e);
    hal_cost_id(c->cost_list_op, 1);
    free_iova_fast(&c->iovad, e->iova_pfn, e->pages);
    c->stats.iovas_freed++;
    fq->head = (fq->head + 1) % DMA_FQ_SIZE;
  }
}

/* Flushes, then retires what the flush covers on every CPU's ring (what
 * Linux's timer callback does). */
static void fq_flush_and_drain(struct iommu_dma_cookie *c) {
  fq_flush_iotlb(c);
  for (unsigned i = 0; i < c->fq_rings; i++) {
    struct dma_fq *fq = &c->fq[i];
    const unsigned flags = sw_spin_lock_irqsave(&fq->lock);
    fq_ring_free(c, fq);
    sw_spin_unlock_irqrestore(&fq->lock, flags);
  }
}

/* Arms the timer unless it already runs: the first entry after a flush
 * starts the 10 ms countdown, later ones do not extend it. */
static void fq_arm_timer(struct iommu_dma_cookie *c) {
  if (c->fq_deadline_ns) return;
  const uint64_t deadline = hal_now_ns() + c->policy.fq_timeout_ns;
  hal_cmpxchg64(&c->fq_deadline_ns, 0, deadline ? deadline : 1);
}

/* The timer's expiry, checked where the DMA API runs. The plain read of the
 * deadline stands for the timer hardware and costs nothing; hal_now_ns is
 * only asked while a flush is pending. One caller wins the disarm. */
static bool fq_check_timer(struct iommu_dma_cookie *c) {
  if (!cookie_is_lazy(c)) return false;
  const uint64_t deadline = c->fq_deadline_ns;
  if (!deadline || hal_now_ns() < deadline) return false;
  if (hal_cmpxchg64(&c->fq_deadline_ns, deadline, 0) != deadline) return false;
  c->stats.fq_timer_flushes++;
  fq_flush_and_drain(c);
  return true;
}

/* Defers freeing an IOVA range until a flush that starts after its PTEs
 * were cleared has completed (Linux's queue_iova). */
static void fq_queue_iova(struct iommu_dma_cookie *c, uint64_t pfn, uint64_t pages) {
  /* The cleared PTEs are ordered before the flush counter is read: a flush
   * counted as later than this entry finds them gone. */
  hal_barrier(HAL_BARRIER_DMB);
  const unsigned cpu = hal_cpu_id();
  struct dma_fq *fq = &c->fq[cpu < c->fq_rings ? cpu : cpu % c->fq_rings];
  const unsigned flags = sw_spin_lock_irqsave(&fq->lock);
  fq_ring_free(c, fq);
  if (fq_full(fq)) {
    c->stats.fq_full_flushes++;
    fq_flush_iotlb(c);
    fq_ring_free(c, fq);
  }
  struct dma_fq_entry *e = &fq->entries[fq->tail];
  e->iova_pfn = pfn;
  e->pages = pages;
  e->counter = hal_load64(&c->fq_flush_start);
  e->queued_ns = hal_now_ns();
  fq->tail = (fq->tail + 1) % DMA_FQ_SIZE;
  hal_cost_id(c->cost_list_op, 1);
  c->stats.iovas_deferred++;
  sw_spin_unlock_irqrestore(&fq->lock, flags);
  fq_arm_timer(c);
}

bool dma_flush_queue_timer_poll(struct dma_dev *dev) { return fq_check_timer(dev->cookie); }

void dma_flush_queue_flush(struct dma_dev *dev) {
  struct iommu_dma_cookie *c = dev->cookie;
  if (!cookie_is_lazy(c)) return;
  hal_xchg64(&c->fq_deadline_ns, 0);
  fq_flush_and_drain(c);
}

uint64_t dma_flush_queue_pending(const struct iommu_dma_cookie *c) {
  uint64_t n = 0;
  for (unsigned i = 0; i < c->fq_rings; i++) n += (c->fq[i].tail + DMA_FQ_SIZE - c->fq[i].head) % DMA_FQ_SIZE;
  return n;
}

/* ---- IOVA ranges. */

/* Linux's iommu_dma_alloc_iova: below the device's mask and the aperture,
 * trying the 32-bit space first for devices that can address more. */
static uint64_t alloc_iova_range(struct dma_dev *dev, size_t len) {
  struct iommu_dma_cookie *c = dev->cookie;
  charge_calls(dev, 1);
  const uint64_t limit = SW_MIN(dev->dma_mask, (uint64_t)DMA_APERTURE_END);
  const uint64_t pages = len >> iova_shift(&c->iovad), limit_pfn = limit >> iova_shift(&c->iovad);
  const uint64_t pfn = c->policy.skip_32bit_first ? alloc_iova_fast(&c->iovad, pages, limit_pfn, true)
                                                  : iova_alloc_dma(&c->iovad, pages, limit_pfn);
  if (!pfn) {
    c->stats.iova_failures++;
    return 0;
  }
  c->stats.iovas_allocated++;
  return pfn << iova_shift(&c->iovad);
}

static void free_iova_range_now(struct iommu_dma_cookie *c, uint64_t iova, size_t len) {
  free_iova_fast(&c->iovad, iova_pfn(&c->iovad, iova), len >> iova_shift(&c->iovad));
  c->stats.iovas_freed++;
}

/* ---- Map and unmap of one IOVA range. */

/* Linux's __iommu_dma_map: whole granules around [phys, phys + size). */
static uint64_t map_range(struct dma_dev *dev, phys_addr_t phys, size_t size, unsigned prot) {
  struct iommu_dma_cookie *c = dev->cookie;
  charge_calls(dev, 1);
  const uint64_t off = iova_offset(&c->iovad, phys);
  const size_t len = (size_t)iova_align(&c->iovad, size + off);
  const uint64_t iova = alloc_iova_range(dev, len);
  if (!iova) return DMA_MAPPING_ERROR;
  if (iommu_map(dev->domain, iova, phys - off, len, prot) != 0) {
    free_iova_range_now(c, iova, len);
    return DMA_MAPPING_ERROR;
  }
  return iova + off;
}

/* Linux's __iommu_dma_unmap. Strict: sync the gather, free the IOVA. Lazy:
 * no TLBI and no SYNC here; the IOVA waits on the flush queue. A bouncing
 * (untrusted) device is always strict, as Linux never lets it run with
 * stale translations. */
static void unmap_range(struct dma_dev *dev, uint64_t dma_addr, size_t size) {
  struct iommu_dma_cookie *c = dev->cookie;
  charge_calls(dev, 1);
  const uint64_t off = iova_offset(&c->iovad, dma_addr);
  const uint64_t iova = dma_addr - off;
  const size_t len = (size_t)iova_align(&c->iovad, size + off);
  const bool lazy = cookie_is_lazy(c) && !dev->swiotlb;

  struct iommu_iotlb_gather gather;
  iommu_iotlb_gather_init(&gather);
  /* Seed 003: a queued gather tells io-pgtable not to report leaves at all. */
  gather.queued = lazy && !c->policy.gather_when_queued;
  iommu_unmap_fast(dev->domain, iova, len, &gather);
  if (!lazy) {
    iommu_iotlb_sync(dev->domain, &gather);
    c->stats.iotlb_syncs++;
    free_iova_range_now(c, iova, len);
    return;
  }
  fq_queue_iova(c, iova_pfn(&c->iovad, iova), len >> iova_shift(&c->iovad));
}

/* ---- Trace recording (hal_dma_trace): what the caller asked for and got. */

static void trace_call(uint64_t traced, uint32_t op, const struct dma_dev *dev, enum dma_data_direction dir,
                       uint64_t iova, phys_addr_t pa, size_t size, const struct iommu_sg *sg, unsigned nents) {
  if (!traced) return;
  struct hal_dma_call t = {traced, op, dev->sid, (uint32_t)dir, 0, iova, pa, size, nents, sizeof(*sg),
                           sg ? &sg->pa : 0, sg ? &sg->len : 0};
  hal_dma_trace(&t);
}

/* ---- Single buffers. */

static uint64_t map_page(struct dma_dev *dev, phys_addr_t pa, size_t size, enum dma_data_direction dir,
                         bool force_bounce);

uint64_t dma_map_page(struct dma_dev *dev, phys_addr_t pa, size_t size, enum dma_data_direction dir) {
  return map_page(dev, pa, size, dir, false);
}

/* force_bounce: bounce even a buffer of whole granules (swiotlb=force). */
static uint64_t map_page(struct dma_dev *dev, phys_addr_t pa, size_t size, enum dma_data_direction dir,
                         bool force_bounce) {
  const uint64_t traced = hal_dma_trace_begin();
  struct iommu_dma_cookie *c = dev->cookie;
  charge_indirect(dev, 1); /* dma_map_page_attrs -> ops->map_page */
  charge_calls(dev, 1);
  fq_check_timer(c);
  const unsigned prot = dma_prot(dev, dir);
  if (!size || !prot) {
    dev->stats.map_failures++;
    return DMA_MAPPING_ERROR;
  }
  phys_addr_t phys = pa;
  bool bounced = false;
  /* A device that must not see the rest of the page gets a bounce buffer
   * for a buffer that does not fill whole granules. */
  if (dev->swiotlb && (force_bounce || iova_offset(&c->iovad, pa | size))) {
    phys = swiotlb_tbl_map_single(dev->swiotlb, pa, size, (size_t)iova_align(&c->iovad, size),
                                  (uint32_t)iova_mask(&c->iovad), (enum swiotlb_dir)dir);
    if (phys == SWIOTLB_MAP_ERROR) {
      dev->stats.map_failures++;
      return DMA_MAPPING_ERROR;
    }
    bounced = true;
  }
  sync_for_device(dev, phys, size);
  const uint64_t dma_addr = map_range(dev, phys, size, prot);
  if (dma_addr == DMA_MAPPING_ERROR) {
    if (bounced) swiotlb_tbl_unmap_single(dev->swiotlb, phys, size, SWIOTLB_DMA_NONE);
    dev->stats.map_failures++;
    return DMA_MAPPING_ERROR;
  }
  dev->stats.maps++;
  dev->stats.bounced += bounced;
  dev->stats.bytes_mapped += size;
  trace_call(traced, HAL_DMA_TRACE_MAP, dev, dir, dma_addr, pa, size, 0, 0);
  return dma_addr;
}

uint64_t dma_map_single(struct dma_dev *dev, phys_addr_t pa, size_t size, enum dma_data_direction dir) {
  return dma_map_page(dev, pa, size, dir);
}

void dma_unmap_page(struct dma_dev *dev, uint64_t dma_addr, size_t size, enum dma_data_direction dir) {
  const uint64_t traced = hal_dma_trace_begin();
  charge_indirect(dev, 1); /* dma_unmap_page_attrs -> ops->unmap_page */
  charge_calls(dev, 1);
  fq_check_timer(dev->cookie);
  /* What the device was given: the buffer, or its bounce buffer. */
  const phys_addr_t phys = iommu_iova_to_phys(dev->domain, dma_addr);
  if (!phys) return;
  trace_call(traced, HAL_DMA_TRACE_UNMAP, dev, dir, dma_addr, DMA_MAPPING_ERROR, size, 0, 0);
  sync_for_cpu(dev, phys, size, dir);
  unmap_range(dev, dma_addr, size);
  if (dev->swiotlb && swiotlb_is_bounce(dev->swiotlb, phys))
    swiotlb_tbl_unmap_single(dev->swiotlb, phys, size, (enum swiotlb_dir)dir);
  dev->stats.unmaps++;
}

void dma_unmap_single(struct dma_dev *dev, uint64_t dma_addr, size_t size, enum dma_data_direction dir) {
  dma_unmap_page(dev, dma_addr, size, dir);
}

/* ---- Scatter-gather lists. */

/* Element by element, each bounced as needed (Linux's swiotlb path of
 * map_sg for untrusted devices), or every one with swiotlb's `force`. */
static int map_sg_bounced(struct dma_dev *dev, const struct iommu_sg *sg, unsigned nents,
                          enum dma_data_direction dir, uint64_t *dma_addrs) {
  const bool force = dev->swiotlb->cfg.force;
  for (unsigned i = 0; i < nents; i++) {
    dma_addrs[i] = map_page(dev, sg[i].pa, sg[i].len, dir, force);
    if (dma_addrs[i] != DMA_MAPPING_ERROR) continue;
    while (i--) dma_unmap_page(dev, dma_addrs[i], sg[i].len, dir);
    return 0;
  }
  return (int)nents;
}

int dma_map_sg(struct dma_dev *dev, const struct iommu_sg *sg, unsigned nents, enum dma_data_direction dir,
               uint64_t *dma_addrs) {
  const uint64_t traced = hal_dma_trace_begin();
  struct iommu_dma_cookie *c = dev->cookie;
  charge_indirect(dev, 1); /* dma_map_sg_attrs -> ops->map_sg */
  charge_calls(dev, 1);
  const unsigned prot = dma_prot(dev, dir);
  if (!sg || !nents || !dma_addrs || !prot) {
    dev->stats.map_failures++;
    return 0;
  }
  if (dev->swiotlb) {
    const int n = map_sg_bounced(dev, sg, nents, dir, dma_addrs);
    dev->stats.map_sgs += n > 0;
    dev->stats.map_failures += n == 0;
    return n;
  }
  fq_check_timer(c);
  size_t total = 0;
  for (unsigned i = 0; i < nents; i++) {
    total += iommu_sg_span(dev->domain, &sg[i]);
    sync_for_device(dev, sg[i].pa, sg[i].len);
  }
  const uint64_t iova = total ? alloc_iova_range(dev, total) : 0;
  if (!iova) {
    dev->stats.map_failures++;
    return 0;
  }
  if (iommu_map_sg(dev->domain, iova, sg, nents, prot) != total) {
    free_iova_range_now(c, iova, total);
    dev->stats.map_failures++;
    return 0;
  }
  uint64_t at = iova;
  for (unsigned i = 0; i < nents; i++) {
    dma_addrs[i] = at + iova_offset(&c->iovad, sg[i].pa);
    at += iommu_sg_span(dev->domain, &sg[i]);
  }
  dev->stats.map_sgs++;
  dev->stats.bytes_mapped += total;
  trace_call(traced, HAL_DMA_TRACE_MAP_SG, dev, dir, dma_addrs[0], sg[0].pa, total, sg, nents);
  return (int)nents;
}

void dma_unmap_sg(struct dma_dev *dev, const struct iommu_sg *sg, unsigned nents, enum dma_data_direction dir,
                  const uint64_t *dma_addrs) {
  const uint64_t traced = hal_dma_trace_begin();
  charge_indirect(dev, 1); /* dma_unmap_sg_attrs -> ops->unmap_sg */
  charge_calls(dev, 1);
  if (!sg || !nents || !dma_addrs) return;
  if (dev->swiotlb) {
    for (unsigned i = 0; i < nents; i++) dma_unmap_page(dev, dma_addrs[i], sg[i].len, dir);
    dev->stats.unmap_sgs++;
    return;
  }
  fq_check_timer(dev->cookie);
  size_t total = 0;
  for (unsigned i = 0; i < nents; i++) {
    total += iommu_sg_span(dev->domain, &sg[i]);
    sync_for_cpu(dev, sg[i].pa, sg[i].len, dir);
  }
  trace_call(traced, HAL_DMA_TRACE_UNMAP_SG, dev, dir, dma_addrs[0], DMA_MAPPING_ERROR, total, sg, nents);
  unmap_range(dev, dma_addrs[0] & ~iova_mask(&dev->cookie->iovad), total);
  dev->stats.unmap_sgs++;
}

/* ---- Ownership hand-over of a mapped buffer without unmapping it. */

void dma_sync_single_for_cpu(struct dma_dev *dev, uint64_t dma_addr, size_t size, enum dma_data_direction dir) {
  const uint64_t traced = hal_dma_trace_begin();
  charge_indirect(dev, 1); /* dma_sync_single_for_cpu -> ops->sync_single_for_cpu */
  charge_calls(dev, 1);
  const phys_addr_t phys = iommu_iova_to_phys(dev->domain, dma_addr);
  if (!phys) return;
  trace_call(traced, HAL_DMA_TRACE_SYNC_FOR_CPU, dev, dir, dma_addr, DMA_MAPPING_ERROR, size, 0, 0);
  sync_for_cpu(dev, phys, size, dir);
  if (dev->swiotlb && swiotlb_is_bounce(dev->swiotlb, phys))
    swiotlb_sync_for_cpu(dev->swiotlb, phys, size, (enum swiotlb_dir)dir);
}

void dma_sync_single_for_device(struct dma_dev *dev, uint64_t dma_addr, size_t size,
                                enum dma_data_direction dir) {
  const uint64_t traced = hal_dma_trace_begin();
  charge_indirect(dev, 1);
  charge_calls(dev, 1);
  const phys_addr_t phys = iommu_iova_to_phys(dev->domain, dma_addr);
  if (!phys) return;
  trace_call(traced, HAL_DMA_TRACE_SYNC_FOR_DEVICE, dev, dir, dma_addr, DMA_MAPPING_ERROR, size, 0, 0);
  if (dev->swiotlb && swiotlb_is_bounce(dev->swiotlb, phys))
    swiotlb_sync_for_device(dev->swiotlb, phys, size, (enum swiotlb_dir)dir);
  sync_for_device(dev, phys, size);
}

/* ---- Set-up. */

int iommu_dma_cookie_init(struct iommu_dma_cookie *c, struct iommu_domain *domain, const struct dma_policy *policy) {
  if (!c || !domain) return -1;
  sw_memset(c, 0, sizeof(*c));
  c->domain = domain;
  if (policy) c->policy = *policy;
  if (!c->policy.fq_timeout_ns) c->policy.fq_timeout_ns = DMA_FQ_TIMEOUT_NS;
  c->cost_list_op = hal_cost_lookup("list_op");
  /* pfn 0 is never handed out, so 0 can mean failure. */
  if (init_iova_domain(&c->iovad, domain->min_pgsize, 1, &c->policy.iova) != 0) return -1;
  if (!cookie_is_lazy(c)) return 0;
  c->fq_rings = hal_cpu_count();
  phys_addr_t pa;
  c->fq = (struct dma_fq *)hal_dma_alloc(sizeof(struct dma_fq) * c->fq_rings, 64, &pa);
  if (!c->fq) {
    put_iova_domain(&c->iovad);
    return -1;
  }
  hal_cost("kmem_alloc", 1);
  /* The flush queue's locks are of the kind the kernel's others are. */
  for (unsigned i = 0; i < c->fq_rings; i++)
    if (!sw_spin_lock_init_kind(&c->fq[i].lock, c->policy.iova.queued_locks)) {
      hal_dma_free(c->fq);
      c->fq = NULL;
      put_iova_domain(&c->iovad);
      return -1;
    }
  return 0;
}

void iommu_dma_cookie_destroy(struct iommu_dma_cookie *c) {
  if (!c) return;
  if (c->fq) {
    hal_xchg64(&c->fq_deadline_ns, 0);
    fq_flush_and_drain(c);
    hal_dma_free(c->fq);
    hal_cost("kmem_alloc", 1);
    c->fq = 0;
    c->fq_rings = 0;
  }
  put_iova_domain(&c->iovad);
}

int dma_dev_init(struct dma_dev *dev, struct iommu_dma_cookie *cookie, uint32_t sid, uint64_t dma_mask,
                 struct swiotlb_mem *swiotlb) {
  if (!cookie || !cookie->domain) return -1;
  return dma_dev_init_on(dev, cookie, cookie->domain->smmu, sid, dma_mask, swiotlb);
}

int dma_dev_init_on(struct dma_dev *dev, struct iommu_dma_cookie *cookie, struct smmu_device *smmu, uint32_t sid,
                    uint64_t dma_mask, struct swiotlb_mem *swiotlb) {
  if (!dev || !cookie || !cookie->domain || !smmu || !dma_mask) return -1;
  sw_memset(dev, 0, sizeof(*dev));
  dev->sid = sid;
  dev->dma_mask = dma_mask;
  dev->cookie = cookie;
  dev->domain = cookie->domain;
  dev->swiotlb = swiotlb;
  dev->cost_indirect = hal_cost_lookup("indirect_call");
  dev->cost_call = hal_cost_lookup("function_call");
  dev->cost_line = hal_cost_lookup("cache_clean_line");
  return iommu_attach_device_on(dev->domain, smmu, sid) == 0 ? 0 : -1;
}

/*
 * The IOVA allocator's per-CPU range caches (Linux's iova rcache): for sizes
 * up to 32 pages each CPU keeps a loaded and a previous magazine of freed
 * pfns, and full magazines go to a depot shared by all CPUs, so most
 * allocations and frees never take the tree lock. The tree itself is in
 * iova.c.
 */
#include "hal/hal.h"
#include "iommu/iova.h"
#include "iommu/iova_internal.h"
#include "lib/compiler.h"
#include "lib/string.h"

#define CACHE_LINE 64u

/* ---- Range caches. */

static struct iova_magazine *mag_alloc(struct iova_domain *d) {
  phys_addr_t pa;

  iova_charge_kmem(d);
  return hal_dma_alloc(sizeof(struct iova_magazine), CACHE_LINE, &pa);
}

void iova_mag_free(struct iova_domain *d, struct iova_magazine *mag) {
  if (mag == NULL)
    return;
  iova_charge_kmem(d);
  hal_dma_free(mag);
}

static bool mag_full(const struct iova_magazine *mag) { return mag->size == IOVA_MAG_SIZE; }
static bool mag_empty(const struct iova_magazine *mag) { return mag == NULL || mag->size == 0; }

/* The topmost pfn not above max_pfn, swapped out with the last entry; 0 when
 * none fits (the caller then goes to the tree). */
static uint64_t mag_pop(struct iova_magazine *mag, uint64_t max_pfn) {
  for (uint64_t i = mag->size; i-- > 0;) {
    const uint64_t pfn = mag->pfns[i];
    if (pfn <= max_pfn) {
      mag->pfns[i] = mag->pfns[--mag->size];
      return pfn;
    }
  }
  return 0;
}

/* Returns a magazine's pfns to the tree; the caller may hold rcache locks. */
static void mag_free_pfns(struct iova_domain *d, struct iova_magazine *mag) {
  if (mag_empty(mag))
    return;
  iova_tree_free_pfns(d, mag->pfns, mag->size);
  mag->size = 0;
}

static void swap_mags(struct iova_cpu_rcache *cr) {
  struct iova_magazine *tmp = cr->loaded;
  cr->loaded = cr->prev;
  cr->prev = tmp;
}

static bool rcache_insert(struct iova_domain *d, uint64_t pfn, uint64_t size) {
  const uint64_t order = iova_order_base_2(size);
  const unsigned cpu = hal_cpu_id();
  struct iova_magazine *to_free = NULL;
  bool can_insert = false;

  if (order >= IOVA_RCACHE_ORDERS || cpu >= iova_max_cpus())
    return false;
  struct iova_rcache *rc = d->rcaches[order];
  struct iova_cpu_rcache *cr = &iova_cpu_block(d, cpu)->rc[order];
  const unsigned flags = sw_spin_lock_irqsave(&cr->lock);
  /* Magazines come on a CPU's first free of this order, not for all 64 CPUs
   * at init. */
  if (cr->loaded == NULL)
    cr->loaded = mag_alloc(d);
  if (cr->prev == NULL)
    cr->prev = mag_alloc(d);
  if (cr->loaded == NULL || cr->prev == NULL) {
    can_insert = false; /* out of memory: this pfn goes to the tree */
  } else if (!mag_full(cr->loaded)) {
    can_insert = true;
  } else if (!mag_full(cr->prev)) {
    swap_mags(cr);
    can_insert = true;
  } else {
    struct iova_magazine *fresh = mag_alloc(d);
    if (fresh != NULL) {
      sw_spin_lock(&rc->lock);
      if (rc->depot_size < IOVA_DEPOT_MAX_MAGS) {
        rc->depot[rc->depot_size++] = cr->loaded;
        d->stats.depot_puts++;
      } else {
        to_free = cr->loaded;
        d->stats.depot_overflows++;
      }
      sw_spin_unlock(&rc->lock);
      cr->loaded = fresh;
      can_insert = true;
    }
  }
  if (can_insert) {
    cr->loaded->pfns[cr->loaded->size++] = pfn;
    d->stats.rcache_inserts++;
  }
  sw_spin_unlock_irqrestore(&cr->lock, flags);
  /* Outside the CPU lock, as Linux: the tree work can be long. */
  if (to_free != NULL) {
    mag_free_pfns(d, to_free);
    iova_mag_free(d, to_free);
  }
  return can_insert;
}

static uint64_t rcache_get(struct iova_domain *d, uint64_t size, uint64_t limit) {
  const uint64_t order = iova_order_base_2(size);
  const unsigned cpu = hal_cpu_id();
  bool has_pfn = false;
  uint64_t pfn = 0;

  if (order >= IOVA_RCACHE_ORDERS || cpu >= iova_max_cpus() || limit < size)
    return 0;
  struct iova_rcache *rc = d->rcaches[order];
  struct iova_cpu_rcache *cr = &iova_cpu_block(d, cpu)->rc[order];
  const unsigned flags = sw_spin_lock_irqsave(&cr->lock);
  if (!mag_empty(cr->loaded)) {
    has_pfn = true;
  } else if (!mag_empty(cr->prev)) {
    swap_mags(cr);
    has_pfn = true;
  } else {
    sw_spin_lock(&rc->lock);
    if (rc->depot_size > 0) {
      iova_mag_free(d, cr->loaded);
      cr->loaded = rc->depot[--rc->depot_size];
      d->stats.depot_gets++;
      has_pfn = true;
    }
    sw_spin_unlock(&rc->lock);
  }
  if (has_pfn)
    pfn = mag_pop(cr->loaded, limit - size);
  if (pfn != 0)
    d->stats.rcache_hits++;
  else
    d->stats.rcache_misses++;
  sw_spin_unlock_irqrestore(&cr->lock, flags);
  return pfn;
}

void iova_flush_rcaches(struct iova_domain *d) {
  if (!d->policy.rcache)
    return;
  for (unsigned cpu = 0; cpu < iova_max_cpus(); cpu++) {
    for (unsigned order = 0; order < IOVA_RCACHE_ORDERS; order++) {
      struct iova_cpu_rcache *cr = &iova_cpu_block(d, cpu)->rc[order];
      /* Magazines, once there, stay until put_iova_domain: a CPU that never
       * had any has nothing to flush and its lock need not be taken. */
      if (cr->loaded == NULL && cr->prev == NULL)
        continue;
      const unsigned flags = sw_spin_lock_irqsave(&cr->lock);
      mag_free_pfns(d, cr->loaded);
      mag_free_pfns(d, cr->prev);
      sw_spin_unlock_irqrestore(&cr->lock, flags);
    }
  }
  for (unsigned order = 0; order < IOVA_RCACHE_ORDERS; order++) {
    struct iova_rcache *rc = d->rcaches[order];
    const unsigned flags = sw_spin_lock_irqsave(&rc->lock);
    while (rc->depot_size > 0) {
      struct iova_magazine *mag = rc->depot[--rc->depot_size];
      mag_free_pfns(d, mag);
      iova_mag_free(d, mag);
    }
    sw_spin_unlock_irqrestore(&rc->lock, flags);
  }
}

uint64_t iova_rcache_pfns(const struct iova_domain *d) {
  uint64_t n = 0;

  if (!d->policy.rcache)
    return 0;
  for (unsigned cpu = 0; cpu < iova_max_cpus(); cpu++) {
    for (unsigned order = 0; order < IOVA_RCACHE_ORDERS; order++) {
      const struct iova_cpu_rcache *cr = &iova_cpu_block(d, cpu)->rc[order];
      n += (cr->loaded != NULL ? cr->loaded->size : 0) + (cr->prev != NULL ? cr->prev->size : 0);
    }
  }
  for (unsigned order = 0; order < IOVA_RCACHE_ORDERS; order++) {
    const struct iova_rcache *rc = d->rcaches[order];
    for (uint32_t i = 0; i < rc->depot_size; i++)
      n += rc->depot[i]->size;
  }
  return n;
}

uint64_t alloc_iova_fast(struct iova_domain *d, uint64_t size_pages, uint64_t limit_pfn, bool flush_rcache) {
  if (size_pages == 0)
    return 0;
  /* A cached range must fit any request of its order, so sizes that can be
   * cached are rounded up to a power of two (as Linux). */
  if (size_pages < IOVA_RCACHE_MAX_PAGES)
    size_pages = (uint64_t)1 << iova_order_base_2(size_pages);
  if (d->policy.rcache) {
    const uint64_t pfn = rcache_get(d, size_pages, iova_limit_exclusive(limit_pfn));
    if (pfn != 0)
      return pfn;
  }
  for (;;) {
    const struct iova *iova = alloc_iova(d, size_pages, limit_pfn, true);
    if (iova != NULL)
      return iova->pfn_lo;
    if (!flush_rcache || !d->policy.rcache)
      return 0;
    /* The room may be sitting in other CPUs' magazines: return it all. */
    flush_rcache = false;
    d->stats.rcache_flushes++;
    iova_flush_rcaches(d);
  }
}

void free_iova_fast(struct iova_domain *d, uint64_t pfn, uint64_t size_pages) {
  if (d->policy.rcache && rcache_insert(d, pfn, size_pages))
    return;
  (void)free_iova(d, pfn);
}

uint64_t iova_alloc_dma(struct iova_domain *d, uint64_t size_pages, uint64_t dma_limit_pfn) {
  uint64_t pfn = 0;

  if (dma_limit_pfn >= d->dma_32bit_pfn)
    pfn = alloc_iova_fast(d, size_pages, d->dma_32bit_pfn - 1, false);
  if (pfn == 0)
    pfn = alloc_iova_fast(d, size_pages, dma_limit_pfn, true);
  return pfn;
}


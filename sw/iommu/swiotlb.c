#include "iommu/swiotlb.h"

#include "lib/compiler.h"
#include "lib/string.h"

#define SLOT_MASK ((uint64_t)SWIOTLB_SLOT_SIZE - 1)

static inline uint32_t nr_slots(uint64_t bytes) {
  return (uint32_t)((bytes + SLOT_MASK) >> SWIOTLB_SLOT_SHIFT);
}

static inline bool is_mask(uint64_t m) { return (m & (m + 1)) == 0; }

static unsigned roundup_pow2(unsigned n) {
  unsigned p = 1;
  while (p < n) p <<= 1;
  return p;
}

static void charge(int handle, const char *name, uint64_t count) {
  if (count == 0) return;
  if (handle >= 0)
    hal_cost_id(handle, count);
  else
    hal_cost(name, count); /* reports the unknown class */
}

static void charge_copy(struct swiotlb_mem *mem, uint64_t bytes) {
  charge(mem->cost_memcpy, "memcpy_64b", (bytes + 63) / 64);
}

/* Areas must hold whole segments (a segment spanning two areas would be
 * guarded by two locks), so the count is a power of two that divides the
 * number of segments. Linux caps the count by the pool size the same way. */
static uint32_t pool_nareas(unsigned want, uint32_t nslabs) {
  const uint32_t nsegs = nslabs / SWIOTLB_SEGSIZE;
  uint32_t n = roundup_pow2(want ? want : 1);
  while (n > 1 && (n > nsegs || nsegs % n != 0)) n >>= 1;
  return n;
}

static uint32_t slabs_for(uint64_t bytes) {
  uint64_t n = (bytes + SLOT_MASK) >> SWIOTLB_SLOT_SHIFT;
  n = SW_ALIGN_UP(n, (uint64_t)SWIOTLB_SEGSIZE);
  if (n < SWIOTLB_SEGSIZE) n = SWIOTLB_SEGSIZE;
  if (n > 0x40000000ull) n = 0x40000000ull;
  return (uint32_t)n;
}

/* The pool header, its areas and its slots share one allocation, freed through
 * the pool pointer; the bounce buffer is separate and physically contiguous.
 * `skip` slots at the front of the buffer stay outside the pool (transient
 * pools use them to put slot 0 where the request's alignment wants it). */
struct pool_alloc {
  struct swiotlb_pool pool;
  uint8_t *buf; /* what hal_dma_alloc returned for the buffer */
};

static struct swiotlb_pool *pool_create(struct swiotlb_mem *mem, uint32_t nslabs, uint32_t nareas,
                                        uint64_t align, uint32_t skip, bool transient) {
  const size_t head = SW_ALIGN_UP(sizeof(struct pool_alloc), (size_t)16);
  const size_t areas_bytes = SW_ALIGN_UP((size_t)nareas * sizeof(struct swiotlb_area), (size_t)16);
  const size_t slots_bytes = (size_t)nslabs * sizeof(struct swiotlb_slot);
  const size_t last_bytes = (size_t)nareas * sizeof(uint16_t);
  const size_t meta_bytes = head + areas_bytes + slots_bytes + last_bytes;
  const uint64_t buf_bytes = ((uint64_t)nslabs + skip) << SWIOTLB_SLOT_SHIFT;
  phys_addr_t meta_pa, buf_pa;

  uint8_t *meta = (uint8_t *)hal_dma_alloc(meta_bytes, 64, &meta_pa);
  if (!meta) return NULL;
  uint8_t *buf = (uint8_t *)hal_dma_alloc((size_t)buf_bytes, (size_t)align, &buf_pa);
  if (!buf) {
    hal_dma_free(meta);
    return NULL;
  }
  charge(mem->cost_kmem_alloc, "kmem_alloc", 2);

  struct pool_alloc *pa = (struct pool_alloc *)(void *)meta;
  struct swiotlb_pool *pool = &pa->pool;
  pa->buf = buf;
  pool->start = buf_pa + ((uint64_t)skip << SWIOTLB_SLOT_SHIFT);
  pool->end = pool->start + ((uint64_t)nslabs << SWIOTLB_SLOT_SHIFT);
  pool->vaddr = buf + ((size_t)skip << SWIOTLB_SLOT_SHIFT);
  pool->nslabs = nslabs;
  pool->nareas = nareas;
  pool->area_nslabs = nslabs / nareas;
  pool->transient = transient;
  pool->id = 0;
  pool->areas = (struct swiotlb_area *)(void *)(meta + head);
  pool->slots = (struct swiotlb_slot *)(void *)(meta + head + areas_bytes);
  pool->area_last_cpu = (uint16_t *)(void *)(meta + head + areas_bytes + slots_bytes);
  pool->area_lock_handoffs = 0;
  pool->next = NULL;

  for (uint32_t a = 0; a < nareas; a++) {
    pool->area_last_cpu[a] = 0;
    if (!sw_spin_lock_init_kind(&pool->areas[a].lock, mem->cfg.queued_locks)) {
      hal_dma_free(buf);
      hal_dma_free(meta);
      return NULL;
    }
    pool->areas[a].index = 0;
    pool->areas[a].used = 0;
  }
  for (uint32_t i = 0; i < nslabs; i++) {
    struct swiotlb_slot *s = &pool->slots[i];
    const uint32_t to_seg_end = SWIOTLB_SEGSIZE - (i % SWIOTLB_SEGSIZE);
    s->list = (uint16_t)SW_MIN(to_seg_end, nslabs - i);
    s->orig_addr = SWIOTLB_INVALID_ADDR;
    s->alloc_size = 0;
    s->pad_slots = 0;
    s->head = 0;
  }
  /* Linux clears the buffer and fills the slot array when it makes a pool;
   * hal_dma_alloc zeroes, so only the time is charged. */
  charge_copy(mem, buf_bytes + meta_bytes - last_bytes); /* the bookkeeping array is not Linux's */
  return pool;
}

static void pool_destroy(struct swiotlb_pool *pool) {
  struct pool_alloc *pa = sw_container_of(pool, struct pool_alloc, pool);
  hal_dma_free(pa->buf);
  hal_dma_free(pa);
}

/* Appends to the searched list. Searches walk it without the lock, so the
 * pool is complete before the link that publishes it. */
static void pool_publish(struct swiotlb_mem *mem, struct swiotlb_pool *pool) {
  unsigned flags = sw_spin_lock_irqsave(&mem->lock);
  pool->id = mem->npools;
  hal_barrier(HAL_BARRIER_DMB);
  if (mem->pools_tail)
    mem->pools_tail->next = pool;
  else
    mem->pools = pool;
  mem->pools_tail = pool;
  mem->npools++;
  sw_spin_unlock_irqrestore(&mem->lock, flags);
}

void swiotlb_default_config(struct swiotlb_config *cfg) {
  sw_memset(cfg, 0, sizeof(*cfg));
  cfg->pool_size = SWIOTLB_DEFAULT_POOL_SIZE;
  cfg->search = SWIOTLB_AREA_FIRST;
}

static void lookup_costs(struct swiotlb_mem *mem) {
  mem->cost_slot_scan = hal_cost_lookup("slot_scan");
  mem->cost_memcpy = hal_cost_lookup("memcpy_64b");
  mem->cost_list_op = hal_cost_lookup("list_op");
  mem->cost_kmem_alloc = hal_cost_lookup("kmem_alloc");
}

int swiotlb_init(struct swiotlb_mem *mem, const struct swiotlb_config *cfg) {
  struct swiotlb_config c;
  if (cfg)
    c = *cfg;
  else
    swiotlb_default_config(&c);
  if (c.pool_size == 0) c.pool_size = SWIOTLB_DEFAULT_POOL_SIZE;
  if (c.extra_pool_size == 0) c.extra_pool_size = c.pool_size;
  if (c.nareas == 0) c.nareas = hal_cpu_count();

  sw_memset(mem, 0, sizeof(*mem));
  mem->cfg = c;
  mem->search = c.search;
  mem->min_align_mask = c.min_align_mask;
  if (!sw_spin_lock_init_kind(&mem->lock, c.queued_locks)) {
    mem->last_error = SWIOTLB_ERR_NOMEM; /* no room for the queued locks' per-core nodes */
    return -1;
  }
  lookup_costs(mem);
  mem->default_nareas = roundup_pow2(c.nareas);
  mem->default_nslabs = slabs_for(c.pool_size);

  for (unsigned p = 0; p <= c.extra_pools; p++) {
    const uint32_t nslabs = p == 0 ? mem->default_nslabs : slabs_for(c.extra_pool_size);
    /* No pool may have more areas than the default count (the area-first
     * search relies on it to try every area once). */
    const uint32_t nareas = pool_nareas(mem->default_nareas, nslabs);
    struct swiotlb_pool *pool = pool_create(mem, nslabs, nareas, SWIOTLB_PAGE_SIZE, 0, false);
    if (!pool) {
      hal_log(HAL_LOG_ERROR, "swiotlb: no memory for pool %u (%u slots)", p, nslabs);
      swiotlb_destroy(mem);
      mem->last_error = SWIOTLB_ERR_NOMEM;
      return -1;
    }
    pool_publish(mem, pool);
  }
  return 0;
}

void swiotlb_destroy(struct swiotlb_mem *mem) {
  struct swiotlb_pool *pool = mem->pools;
  while (pool) {
    struct swiotlb_pool *next = pool->next;
    pool_destroy(pool);
    pool = next;
  }
  pool = mem->transient;
  while (pool) {
    struct swiotlb_pool *next = pool->next;
    pool_destroy(pool);
    pool = next;
  }
  mem->pools = mem->pools_tail = mem->transient = NULL;
  mem->npools = 0;
  mem->stats.transient_live = 0;
  mem->stats.used_slots = 0;
}

int swiotlb_grow(struct swiotlb_mem *mem) {
  hal_store32(&mem->grow_pending, 0);
  uint32_t nslabs = mem->default_nslabs;
  const uint32_t floor = SW_MIN((uint32_t)SWIOTLB_MIN_GROW_SLOTS, mem->default_nslabs);
  for (;;) {
    struct swiotlb_pool *pool =
        pool_create(mem, nslabs, pool_nareas(mem->default_nareas, nslabs), SWIOTLB_PAGE_SIZE, 0, false);
    if (pool) {
      pool_publish(mem, pool);
      mem->stats.pools_grown++;
      return 0;
    }
    if (nslabs <= floor) break;
    nslabs = (uint32_t)SW_ALIGN_UP(nslabs / 2, SWIOTLB_SEGSIZE);
    if (nslabs < floor) nslabs = floor;
  }
  hal_log(HAL_LOG_WARN, "swiotlb: cannot grow, no memory for a pool of %u slots", floor);
  mem->stats.grow_failures++;
  mem->last_error = SWIOTLB_ERR_NOMEM;
  return -1;
}

size_t swiotlb_max_mapping_size(uint32_t min_align_mask) {
  const uint64_t pad = min_align_mask ? SW_ALIGN_UP((uint64_t)min_align_mask, (uint64_t)SWIOTLB_SLOT_SIZE) : 0;
  return (size_t)(SWIOTLB_MAX_ALLOC - pad);
}

uint64_t swiotlb_area_lock_handoffs(const struct swiotlb_mem *mem) {
  uint64_t n = 0;
  for (const struct swiotlb_pool *pool = mem->pools; pool; pool = pool->next) n += pool->area_lock_handoffs;
  return n;
}

void swiotlb_area_lock_handoffs_clear(struct swiotlb_mem *mem) {
  for (struct swiotlb_pool *pool = mem->pools; pool; pool = pool->next) pool->area_lock_handoffs = 0;
}

uint32_t swiotlb_pool_used(const struct swiotlb_pool *pool) {
  uint32_t used = 0;
  for (uint32_t a = 0; a < pool->nareas; a++) used += pool->areas[a].used;
  return used;
}

/* ---- Search ---- */

struct search_req {
  phys_addr_t orig;
  uint32_t nslots;
  uint64_t align_mask; /* the first slot's address must have these bits clear */
  uint64_t iotlb_mask; /* and these bits equal to orig's (when orig is not 0) */
  uint64_t stride;     /* slots to skip from an aligned slot that did not fit */
};

/* Counts a lock acquisition by another CPU than the area's last holder. */
static void note_area_lock(struct swiotlb_pool *pool, uint32_t area_index) {
  const uint16_t me = (uint16_t)(hal_cpu_id() + 1);
  if (pool->area_last_cpu[area_index] != me) {
    if (pool->area_last_cpu[area_index] != 0) pool->area_lock_handoffs++;
    pool->area_last_cpu[area_index] = me;
  }
}

static inline uint32_t wrap_index(const struct swiotlb_pool *pool, uint64_t index) {
  /* Past the end restarts at 0, not modulo: as Linux, the single steps after
   * a wrap find the first aligned slot again. */
  return index >= pool->area_nslabs ? 0 : (uint32_t)index;
}

/* One area of one pool: the first fitting run at or after area->index,
 * wrapping once. Returns the pool slot index, or -1. */
static int64_t search_pool_area(struct swiotlb_mem *mem, struct swiotlb_pool *pool, uint32_t area_index,
                                const struct search_req *req) {
  struct swiotlb_area *area = &pool->areas[area_index];
  const uint32_t base = area_index * pool->area_nslabs;
  uint64_t scanned = 0;
  int64_t found = -1;

  mem->stats.areas_tried++;
  unsigned flags = sw_spin_lock_irqsave(&area->lock);
  note_area_lock(pool, area_index);
  if (req->nslots <= pool->area_nslabs - area->used) {
    uint32_t index = area->index;
    for (uint64_t checked = 0; checked < pool->area_nslabs;) {
      const uint32_t slot = base + index;
      const phys_addr_t addr = pool->start + ((uint64_t)slot << SWIOTLB_SLOT_SHIFT);
      scanned++;
      if ((addr & req->align_mask) ||
          (req->orig && (addr & req->iotlb_mask) != (req->orig & req->iotlb_mask))) {
        index = wrap_index(pool, (uint64_t)index + 1);
        checked++;
        continue;
      }
      if (pool->slots[slot].list >= req->nslots) {
        found = slot;
        break;
      }
      index = wrap_index(pool, (uint64_t)index + req->stride);
      checked += req->stride;
    }
  }
  if (found >= 0) {
    const uint32_t first = (uint32_t)found;
    for (uint32_t i = first; i < first + req->nslots; i++) pool->slots[i].list = 0;
    /* Free slots before the run, up to the segment start, now end at it. */
    uint16_t count = 0;
    for (uint32_t i = first; i % SWIOTLB_SEGSIZE != 0 && pool->slots[i - 1].list; i--)
      pool->slots[i - 1].list = ++count;
    area->index = wrap_index(pool, (uint64_t)(first - base) + req->nslots);
    area->used += req->nslots;
  }
  /* Charged inside the lock: the scan is what makes other CPUs wait. */
  charge(mem->cost_slot_scan, "slot_scan", scanned);
  sw_spin_unlock_irqrestore(&area->lock, flags);
  mem->stats.slots_scanned += scanned;
  return found;
}

static int64_t find_slots_pool_first(struct swiotlb_mem *mem, unsigned cpu, const struct search_req *req,
                                     struct swiotlb_pool **out) {
  for (struct swiotlb_pool *pool = mem->pools; pool; pool = pool->next) {
    mem->stats.pools_tried++;
    const uint32_t start = cpu & (pool->nareas - 1);
    uint32_t a = start;
    do {
      const int64_t index = search_pool_area(mem, pool, a, req);
      if (index >= 0) {
        *out = pool;
        return index;
      }
      a = (a + 1) & (pool->nareas - 1);
    } while (a != start);
  }
  return -1;
}

/* Seed 004: the same area offset from the CPU's own area in every pool before
 * the next offset. Pools with fewer areas drop out once the offset reaches
 * their count, so each pool still starts in the CPU's area and no area is
 * tried twice. */
static int64_t find_slots_area_first(struct swiotlb_mem *mem, unsigned cpu, const struct search_req *req,
                                     struct swiotlb_pool **out) {
  for (unsigned i = 0; i < mem->default_nareas; i++) {
    for (struct swiotlb_pool *pool = mem->pools; pool; pool = pool->next) {
      if (i >= pool->nareas) continue;
      if (i == 0) mem->stats.pools_tried++;
      const int64_t index = search_pool_area(mem, pool, (cpu + i) & (pool->nareas - 1), req);
      if (index >= 0) {
        *out = pool;
        return index;
      }
    }
  }
  return -1;
}

/* Linux sizes a transient pool to the request. Its slot 0 must also satisfy
 * the alignment, so the buffer is aligned to the largest mask and the slots
 * that would carry orig's min_align bits stay in front of the pool. */
static int64_t map_transient(struct swiotlb_mem *mem, const struct search_req *req, struct swiotlb_pool **out) {
  const uint64_t mask = req->align_mask | req->iotlb_mask;
  const uint64_t align = SW_MAX((uint64_t)SWIOTLB_PAGE_SIZE, mask + 1);
  const uint32_t skip = req->orig ? (uint32_t)((req->orig & req->iotlb_mask) >> SWIOTLB_SLOT_SHIFT) : 0;
  struct swiotlb_pool *pool = pool_create(mem, req->nslots, 1, align, skip, true);
  if (!pool) return -1;
  const int64_t index = search_pool_area(mem, pool, 0, req);
  if (index < 0) {
    pool_destroy(pool);
    return -1;
  }
  unsigned flags = sw_spin_lock_irqsave(&mem->lock);
  pool->next = mem->transient;
  mem->transient = pool;
  sw_spin_unlock_irqrestore(&mem->lock, flags);
  mem->stats.transient_pools++;
  mem->stats.transient_live++;
  *out = pool;
  return index;
}

/* ---- Copies ---- */

/* Copies between [tlb_pa, tlb_pa + size) and the original it stands for,
 * clipped to the allocation as Linux does (it warns; a mapping cannot be
 * overrun here). */
static void bounce(struct swiotlb_mem *mem, struct swiotlb_pool *pool, phys_addr_t tlb_pa, size_t size,
                   bool to_device) {
  const uint32_t index = (uint32_t)((tlb_pa - pool->start) >> SWIOTLB_SLOT_SHIFT);
  const struct swiotlb_slot *s = &pool->slots[index];
  const uint64_t off = tlb_pa & SLOT_MASK;
  if (s->orig_addr == SWIOTLB_INVALID_ADDR || s->alloc_size <= off || size == 0) return;
  if (size > s->alloc_size - off) size = (size_t)(s->alloc_size - off);
  uint8_t *tlb = pool->vaddr + (tlb_pa - pool->start);
  uint8_t *orig = (uint8_t *)hal_phys_to_virt(s->orig_addr + off);
  if (!orig) return;
  if (to_device)
    sw_memcpy(tlb, orig, size);
  else
    sw_memcpy(orig, tlb, size);
  charge_copy(mem, size);
  mem->stats.bounce_bytes += size;
}

/* ---- Map and unmap ---- */

static phys_addr_t map_fail(struct swiotlb_mem *mem, enum swiotlb_error err) {
  mem->last_error = err;
  mem->stats.failures++;
  if (err == SWIOTLB_ERR_FULL)
    mem->stats.failures_full++;
  else if (err == SWIOTLB_ERR_TOO_BIG)
    mem->stats.failures_too_big++;
  else
    mem->stats.failures_invalid++;
  return SWIOTLB_MAP_ERROR;
}

phys_addr_t swiotlb_tbl_map_single(struct swiotlb_mem *mem, phys_addr_t orig_pa, size_t mapping_size,
                                   size_t alloc_size, uint32_t alloc_align_mask, enum swiotlb_dir dir) {
  return swiotlb_tbl_map_single_mask(mem, orig_pa, mapping_size, alloc_size, alloc_align_mask,
                                     mem->min_align_mask, dir);
}

phys_addr_t swiotlb_tbl_map_single_mask(struct swiotlb_mem *mem, phys_addr_t orig_pa, size_t mapping_size,
                                        size_t alloc_size, uint32_t alloc_align_mask, uint32_t min_align_mask,
                                        enum swiotlb_dir dir) {
  if (alloc_size == 0) alloc_size = mapping_size;
  if (mapping_size == 0 || alloc_size < mapping_size || !is_mask(alloc_align_mask) ||
      !is_mask(min_align_mask) || dir > SWIOTLB_DMA_FROM_DEVICE || !mem->pools)
    return map_fail(mem, SWIOTLB_ERR_INVALID);
  if (orig_pa + mapping_size < orig_pa || !hal_phys_to_virt(orig_pa) ||
      !hal_phys_to_virt(orig_pa + mapping_size - 1))
    return map_fail(mem, SWIOTLB_ERR_INVALID);

  /* The growth a kernel worker would have done by now. */
  if (mem->grow_pending && hal_xchg32(&mem->grow_pending, 0)) (void)swiotlb_grow(mem);

  /* orig's bits under min_align_mask that lie below the allocation alignment
   * (or inside a slot) become an offset into the allocation; whole slots of it
   * are padding (Linux 6.9). The bits above are matched by slot choice. */
  const uint64_t offset = orig_pa & min_align_mask & ((uint64_t)alloc_align_mask | SLOT_MASK);
  uint64_t size = (uint64_t)alloc_size + offset;
  if (alloc_align_mask) size = SW_ALIGN_UP(size, (uint64_t)alloc_align_mask + 1);
  if (size > SWIOTLB_MAX_ALLOC) return map_fail(mem, SWIOTLB_ERR_TOO_BIG);

  struct search_req req;
  req.orig = orig_pa;
  req.nslots = nr_slots(size);
  req.align_mask = alloc_align_mask;
  /* Streaming mappings of a page or more were page-aligned before explicit
   * alignment existed, and Linux keeps that when nothing else is asked. */
  if (!alloc_align_mask && !min_align_mask && size >= SWIOTLB_PAGE_SIZE) req.align_mask = SWIOTLB_PAGE_SIZE - 1;
  req.align_mask |= SLOT_MASK;
  req.iotlb_mask = (uint64_t)min_align_mask & ~req.align_mask;
  req.stride = (SW_MAX(req.align_mask, req.iotlb_mask) >> SWIOTLB_SLOT_SHIFT) + 1;

  struct swiotlb_pool *pool = NULL;
  const unsigned cpu = hal_cpu_id();
  int64_t index = mem->search == SWIOTLB_POOL_FIRST ? find_slots_pool_first(mem, cpu, &req, &pool)
                                                    : find_slots_area_first(mem, cpu, &req, &pool);
  if (index < 0) {
    if (!mem->cfg.dynamic) return map_fail(mem, SWIOTLB_ERR_FULL);
    hal_store32(&mem->grow_pending, 1);
    index = map_transient(mem, &req, &pool);
    if (index < 0) return map_fail(mem, SWIOTLB_ERR_FULL);
  }

  /* The slots are ours now (list 0): no lock needed for their other fields. */
  const uint32_t first = (uint32_t)index;
  const uint32_t pad = (uint32_t)(offset >> SWIOTLB_SLOT_SHIFT);
  const uint64_t orig_base = orig_pa - (offset & SLOT_MASK);
  for (uint32_t j = 0; j < req.nslots; j++) {
    struct swiotlb_slot *s = &pool->slots[first + j];
    s->alloc_size = (uint32_t)(size - ((uint64_t)j << SWIOTLB_SLOT_SHIFT));
    s->orig_addr = j < pad ? SWIOTLB_INVALID_ADDR : orig_base + ((uint64_t)(j - pad) << SWIOTLB_SLOT_SHIFT);
    s->pad_slots = 0;
    s->head = 0;
  }
  pool->slots[first + pad].pad_slots = (uint8_t)pad;
  pool->slots[first + pad].head = 1;
  const phys_addr_t tlb_pa = pool->start + ((uint64_t)(first + pad) << SWIOTLB_SLOT_SHIFT) + (offset & SLOT_MASK);

  mem->stats.maps++;
  if (!pool->transient) {
    mem->stats.used_slots += req.nslots;
    if (mem->stats.used_slots > mem->stats.used_hiwater) mem->stats.used_hiwater = mem->stats.used_slots;
  }
  if (dir == SWIOTLB_DMA_TO_DEVICE || dir == SWIOTLB_DMA_BIDIRECTIONAL ||
      (dir == SWIOTLB_DMA_FROM_DEVICE && mem->cfg.bounce_from_device_on_map))
    bounce(mem, pool, tlb_pa, mapping_size, true);
  mem->last_error = SWIOTLB_OK;
  return tlb_pa;
}

struct swiotlb_pool *swiotlb_find_pool(struct swiotlb_mem *mem, phys_addr_t pa) {
  uint64_t visited = 0;
  struct swiotlb_pool *found = NULL;
  for (struct swiotlb_pool *pool = mem->pools; pool; pool = pool->next) {
    visited++;
    if (pa >= pool->start && pa < pool->end) {
      found = pool;
      break;
    }
  }
  /* Transient pools go away on unmap, so walking them needs the lock that
   * unlinks them (Linux has RCU for this). */
  if (!found && mem->transient) {
    unsigned flags = sw_spin_lock_irqsave(&mem->lock);
    for (struct swiotlb_pool *pool = mem->transient; pool; pool = pool->next) {
      visited++;
      if (pa >= pool->start && pa < pool->end) {
        found = pool;
        break;
      }
    }
    sw_spin_unlock_irqrestore(&mem->lock, flags);
  }
  charge(mem->cost_list_op, "list_op", visited);
  return found;
}

static void release_slots(struct swiotlb_mem *mem, struct swiotlb_pool *pool, uint32_t first, uint32_t nslots) {
  const uint32_t area_index = first / pool->area_nslabs;
  struct swiotlb_area *area = &pool->areas[area_index];
  const uint32_t end = first + nslots;
  const uint32_t seg_end = (first / SWIOTLB_SEGSIZE + 1) * SWIOTLB_SEGSIZE;

  unsigned flags = sw_spin_lock_irqsave(&area->lock);
  note_area_lock(pool, area_index);
  /* Merge with the free run after, then extend the runs before, as Linux:
   * `list` is recomputed backwards from the first slot still in use. */
  uint16_t count = (end < seg_end && end < pool->nslabs) ? pool->slots[end].list : 0;
  for (uint32_t i = end; i-- > first;) {
    struct swiotlb_slot *s = &pool->slots[i];
    s->list = ++count;
    s->orig_addr = SWIOTLB_INVALID_ADDR;
    s->alloc_size = 0;
    s->pad_slots = 0;
    s->head = 0;
  }
  for (uint32_t i = first; i % SWIOTLB_SEGSIZE != 0 && pool->slots[i - 1].list; i--)
    pool->slots[i - 1].list = ++count;
  area->used -= nslots;
  sw_spin_unlock_irqrestore(&area->lock, flags);
  mem->stats.used_slots -= nslots;
}

static void transient_free(struct swiotlb_mem *mem, struct swiotlb_pool *pool) {
  unsigned flags = sw_spin_lock_irqsave(&mem->lock);
  struct swiotlb_pool **link = &mem->transient;
  while (*link && *link != pool) link = &(*link)->next;
  if (*link) *link = pool->next;
  sw_spin_unlock_irqrestore(&mem->lock, flags);
  pool_destroy(pool);
  mem->stats.transient_live--;
}

/* The mapping whose first mapped slot holds tlb_pa, or NULL. */
static struct swiotlb_pool *live_mapping(struct swiotlb_mem *mem, phys_addr_t tlb_pa, uint32_t *slot) {
  struct swiotlb_pool *pool = swiotlb_find_pool(mem, tlb_pa);
  if (!pool) return NULL;
  const uint32_t index = (uint32_t)((tlb_pa - pool->start) >> SWIOTLB_SLOT_SHIFT);
  const struct swiotlb_slot *s = &pool->slots[index];
  if (s->list != 0 || s->orig_addr == SWIOTLB_INVALID_ADDR) return NULL;
  *slot = index;
  return pool;
}

int swiotlb_tbl_unmap_single(struct swiotlb_mem *mem, phys_addr_t tlb_pa, size_t mapping_size,
                             enum swiotlb_dir dir) {
  uint32_t index;
  struct swiotlb_pool *pool = live_mapping(mem, tlb_pa, &index);
  if (!pool || !pool->slots[index].head) {
    mem->stats.bad_unmaps++;
    mem->last_error = SWIOTLB_ERR_NOT_MAPPED;
    hal_log(HAL_LOG_WARN, "swiotlb: unmap of 0x%llx, not a live bounce buffer", (unsigned long long)tlb_pa);
    return -1;
  }
  if (dir == SWIOTLB_DMA_FROM_DEVICE || dir == SWIOTLB_DMA_BIDIRECTIONAL)
    bounce(mem, pool, tlb_pa, mapping_size, false);
  mem->stats.unmaps++;
  mem->last_error = SWIOTLB_OK;

  if (pool->transient) {
    transient_free(mem, pool);
    return 0;
  }
  const struct swiotlb_slot *s = &pool->slots[index];
  const uint32_t pad = s->pad_slots;
  release_slots(mem, pool, index - pad, pad + nr_slots(s->alloc_size));
  return 0;
}

static int sync(struct swiotlb_mem *mem, phys_addr_t tlb_pa, size_t size, bool to_device) {
  uint32_t index;
  struct swiotlb_pool *pool = live_mapping(mem, tlb_pa, &index);
  if (!pool) {
    mem->last_error = SWIOTLB_ERR_NOT_MAPPED;
    return -1;
  }
  mem->stats.syncs++;
  bounce(mem, pool, tlb_pa, size, to_device);
  return 0;
}

int swiotlb_sync_for_device(struct swiotlb_mem *mem, phys_addr_t tlb_pa, size_t size, enum swiotlb_dir dir) {
  if (dir == SWIOTLB_DMA_TO_DEVICE || dir == SWIOTLB_DMA_BIDIRECTIONAL) return sync(mem, tlb_pa, size, true);
  return live_mapping(mem, tlb_pa, &(uint32_t){0}) ? 0 : -1;
}

int swiotlb_sync_for_cpu(struct swiotlb_mem *mem, phys_addr_t tlb_pa, size_t size, enum swiotlb_dir dir) {
  if (dir == SWIOTLB_DMA_FROM_DEVICE || dir == SWIOTLB_DMA_BIDIRECTIONAL) return sync(mem, tlb_pa, size, false);
  return live_mapping(mem, tlb_pa, &(uint32_t){0}) ? 0 : -1;
}

#include "iommu/iova.h"
#include "iommu/iova_internal.h"

#include "hal/hal.h"
#include "lib/compiler.h"
#include "lib/string.h"

#define SLAB_PAGE_BYTES 4096u
#define CACHE_LINE 64u

/* A free slab object, and the header at the start of each slab page. */
struct slab_link {
  struct slab_link *next;
};

#define SLAB_OBJ_BYTES SW_ALIGN_UP(sizeof(struct iova), sizeof(void *))
#define SLAB_FIRST_OBJ SW_ALIGN_UP(sizeof(struct slab_link), sizeof(void *))

static struct iova *to_iova(struct sw_rb_node *node) { return sw_rb_entry(node, struct iova, node); }

struct iova_cpu *iova_cpu_block(const struct iova_domain *d, unsigned cpu) {
  return (struct iova_cpu *)(void *)((char *)d->cpus + (uint64_t)cpu * d->cpu_stride);
}

void iova_charge(int handle, const char *name, uint64_t count) {
  if (count == 0)
    return;
  /* An unknown class goes through hal_cost, which reports it by name. */
  if (handle >= 0)
    hal_cost_id(handle, count);
  else
    hal_cost(name, count);
}

void iova_charge_kmem(const struct iova_domain *d) { iova_charge(d->cost_kmem, "kmem_alloc", 1); }

/* One walk's cache misses: it stepped on at most `visits` distinct nodes,
 * and on no more than the tree holds (an in-order walk steps on each node
 * about twice). */
static void charge_walk(const struct iova_domain *d, uint64_t visits) {
  const uint64_t objects = SW_MIN(visits, d->nodes);

  if (objects != 0)
    hal_cost_walk(objects, objects * IOVA_NODE_BYTES);
}

/* Called with the tree lock held, so the walk lengthens the hold time. */
static void charge_steps(struct iova_domain *d, uint64_t visits) {
  d->stats.nodes_visited += visits;
  iova_charge(d->cost_visit, "rbtree_visit", visits);
}

static void charge_visits(struct iova_domain *d, uint64_t visits) {
  charge_steps(d, visits);
  charge_walk(d, visits);
}

uint64_t iova_order_base_2(uint64_t n) { return n <= 1 ? 0 : sw_fls64(n - 1); }


/* ---- Node slab. */

/* Carves a fresh page into objects pushed on *free_list; the page joins
 * *pages. */
static bool slab_grow(struct iova_domain *d, void **free_list, void **pages) {
  phys_addr_t pa;
  char *page = hal_dma_alloc(SLAB_PAGE_BYTES, SLAB_PAGE_BYTES, &pa);

  if (page == NULL)
    return false;
  struct slab_link *hdr = (struct slab_link *)(void *)page;
  hdr->next = *pages;
  *pages = hdr;
  for (uint64_t off = SLAB_FIRST_OBJ; off + SLAB_OBJ_BYTES <= SLAB_PAGE_BYTES; off += SLAB_OBJ_BYTES) {
    struct slab_link *obj = (struct slab_link *)(void *)(page + off);
    obj->next = *free_list;
    *free_list = obj;
  }
  d->stats.slab_pages++;
  return true;
}

static struct iova *slab_pop(void **free_list) {
  struct slab_link *obj = *free_list;

  if (obj == NULL)
    return NULL;
  *free_list = obj->next;
  struct iova *iova = (struct iova *)(void *)obj;
  sw_memset(iova, 0, sizeof(*iova));
  return iova;
}

unsigned iova_max_cpus(void) {
  const unsigned n = hal_cpu_count();
  return n > IOVA_MIN_CPU_BLOCKS ? n : IOVA_MIN_CPU_BLOCKS;
}

static struct iova *iova_node_alloc(struct iova_domain *d) {
  const unsigned cpu = hal_cpu_id();
  struct iova *iova;

  iova_charge_kmem(d);
  if (cpu < iova_max_cpus()) {
    /* Only this CPU touches its list; masking interrupts keeps a handler on
     * the same core from interleaving. */
    struct iova_cpu *c = iova_cpu_block(d, cpu);
    const unsigned flags = hal_irq_save();
    if (c->slab_free == NULL)
      (void)slab_grow(d, &c->slab_free, &c->slab_pages);
    iova = slab_pop(&c->slab_free);
    hal_irq_restore(flags);
  } else {
    const unsigned flags = sw_spin_lock_irqsave(&d->slab_lock);
    if (d->slab_shared_free == NULL)
      (void)slab_grow(d, &d->slab_shared_free, &d->slab_shared_pages);
    iova = slab_pop(&d->slab_shared_free);
    sw_spin_unlock_irqrestore(&d->slab_lock, flags);
  }
  return iova;
}

/* The node goes on the freeing CPU's list, whichever page it came from. */
static void iova_node_free(struct iova_domain *d, struct iova *iova) {
  const unsigned cpu = hal_cpu_id();
  struct slab_link *obj = (struct slab_link *)(void *)iova;

  iova_charge_kmem(d);
  if (cpu < iova_max_cpus()) {
    struct iova_cpu *c = iova_cpu_block(d, cpu);
    const unsigned flags = hal_irq_save();
    obj->next = c->slab_free;
    c->slab_free = obj;
    hal_irq_restore(flags);
  } else {
    const unsigned flags = sw_spin_lock_irqsave(&d->slab_lock);
    obj->next = d->slab_shared_free;
    d->slab_shared_free = obj;
    sw_spin_unlock_irqrestore(&d->slab_lock, flags);
  }
}

static void slab_free_pages(void *pages) {
  struct slab_link *page = pages;

  while (page != NULL) {
    struct slab_link *next = page->next;
    hal_dma_free(page);
    page = next;
  }
}

/* ---- Tree walks. Each node stepped on adds one to *visits. */

static struct sw_rb_node *prev_node(struct sw_rb_node *node, uint64_t *visits) {
  struct sw_rb_node *parent;

  if (node->left != NULL) {
    node = node->left;
    (*visits)++;
    while (node->right != NULL) {
      node = node->right;
      (*visits)++;
    }
    return node;
  }
  while ((parent = sw_rb_parent(node)) != NULL) {
    (*visits)++;
    if (node == parent->right)
      return parent;
    node = parent;
  }
  return NULL;
}

static struct sw_rb_node *next_node(struct sw_rb_node *node, uint64_t *visits) {
  struct sw_rb_node *parent;

  if (node->right != NULL) {
    node = node->right;
    (*visits)++;
    while (node->left != NULL) {
      node = node->left;
      (*visits)++;
    }
    return node;
  }
  while ((parent = sw_rb_parent(node)) != NULL) {
    (*visits)++;
    if (node == parent->left)
      return parent;
    node = parent;
  }
  return NULL;
}

static struct iova *tree_find(struct iova_domain *d, uint64_t pfn, uint64_t *visits) {
  struct sw_rb_node *node = d->root.node;

  while (node != NULL) {
    struct iova *iova = to_iova(node);
    (*visits)++;
    if (pfn < iova->pfn_lo)
      node = node->left;
    else if (pfn > iova->pfn_hi)
      node = node->right;
    else
      return iova == &d->anchor ? NULL : iova;
  }
  return NULL;
}

/* True when a live node (or the anchor) intersects [lo, hi]. */
static bool tree_overlaps(struct iova_domain *d, uint64_t lo, uint64_t hi, uint64_t *visits) {
  struct sw_rb_node *node = d->root.node;

  while (node != NULL) {
    const struct iova *iova = to_iova(node);
    (*visits)++;
    if (iova->pfn_hi < lo)
      node = node->right;
    else if (iova->pfn_lo > hi)
      node = node->left;
    else
      return true;
  }
  return false;
}

/* Inserts below `start` when given: the allocator knows the new range sits
 * just below it, so the descent is short (as Linux since 2017), instead of
 * from the root. */
static bool tree_insert(struct iova_domain *d, struct iova *iova, struct sw_rb_node *start,
                        uint64_t *visits) {
  struct sw_rb_node *from = start;
  struct sw_rb_node **link = start != NULL ? &from : &d->root.node;
  struct sw_rb_node *parent = NULL;

  while (*link != NULL) {
    const struct iova *here = to_iova(*link);
    (*visits)++;
    parent = *link;
    if (iova->pfn_lo < here->pfn_lo)
      link = &parent->left;
    else if (iova->pfn_lo > here->pfn_lo)
      link = &parent->right;
    else
      return false;
  }
  sw_rb_link_node(&iova->node, parent, link);
  sw_rb_insert_color(&iova->node, &d->root);
  d->nodes++;
  return true;
}

/* ---- Cached nodes. */

static struct sw_rb_node *search_start(struct iova_domain *d, uint64_t limit, uint64_t *visits) {
  (*visits)++;
  if (limit <= d->dma_32bit_pfn)
    return d->cached32_node;
  if (d->policy.cache == IOVA_CACHED32_AND_64)
    return d->cached_node;
  /* Before 2017 a search above 4 GiB began at rb_last every time. */
  struct sw_rb_node *node = d->root.node;
  while (node->right != NULL) {
    node = node->right;
    (*visits)++;
  }
  return node;
}

/* The lowest node at or above the limit, to restart a 32-bit search below
 * it (as Linux since 2021); above 4 GiB the anchor is close enough. */
static struct sw_rb_node *find_limit(struct iova_domain *d, uint64_t limit, uint64_t *visits) {
  struct sw_rb_node *node;

  (*visits)++;
  if (limit > d->dma_32bit_pfn)
    return &d->anchor.node;
  node = d->root.node;
  /* The anchor is the rightmost node and above any limit: this stops. */
  while (to_iova(node)->pfn_hi < limit) {
    node = node->right;
    (*visits)++;
  }
  for (;;) {
    struct sw_rb_node *left = node->left;
    if (left == NULL)
      return node;
    (*visits)++;
    if (to_iova(left)->pfn_lo >= limit) {
      node = left;
      continue;
    }
    /* left is below the limit; a node on its right spine may not be. */
    struct sw_rb_node *next = left;
    bool moved = false;
    while (next->right != NULL) {
      next = next->right;
      (*visits)++;
      if (to_iova(next)->pfn_lo >= limit) {
        node = next;
        moved = true;
        break;
      }
    }
    if (!moved)
      return node;
  }
}

static void cached_insert_update(struct iova_domain *d, struct iova *iova) {
  if (iova->pfn_hi < d->dma_32bit_pfn)
    d->cached32_node = &iova->node;
  else if (d->policy.cache == IOVA_CACHED32_AND_64)
    d->cached_node = &iova->node;
}

/* A freed range at or above a cached node moves that node up to the freed
 * node's successor, so the next search from it sees the hole. */
static void cached_delete_update(struct iova_domain *d, struct iova *free, uint64_t *visits) {
  struct sw_rb_node *next = NULL;
  const struct iova *cached = to_iova(d->cached32_node);

  (*visits)++;
  if (free == cached || (free->pfn_hi < d->dma_32bit_pfn && free->pfn_lo >= cached->pfn_lo)) {
    next = next_node(&free->node, visits);
    d->cached32_node = next;
  }
  if (free->pfn_lo < d->dma_32bit_pfn)
    d->max32_alloc_size = d->dma_32bit_pfn;
  if (d->policy.cache != IOVA_CACHED32_AND_64)
    return;
  cached = to_iova(d->cached_node);
  (*visits)++;
  if (free->pfn_lo >= cached->pfn_lo) {
    if (next == NULL)
      next = next_node(&free->node, visits);
    d->cached_node = next;
  }
}

static void tree_remove(struct iova_domain *d, struct iova *iova, uint64_t *visits) {
  cached_delete_update(d, iova, visits);
  sw_rb_erase(&iova->node, &d->root);
  d->nodes--;
  d->stats.frees++;
}

/* ---- Allocation. */

/* Linux's __alloc_and_insert_iova_range: top-down from the cached node for
 * the first gap that fits; if that fails and the cached node sat below the
 * limit, once more between the limit and the cached node. */
static bool alloc_and_insert(struct iova_domain *d, uint64_t size, uint64_t limit, struct iova *new_iova,
                             bool size_aligned) {
  uint64_t align_mask = ~(uint64_t)0;
  uint64_t high = limit, low = d->start_pfn, new_pfn = 0, retry_pfn;
  uint64_t visits = 0;
  bool retried = false, ok = false;
  struct sw_rb_node *curr, *prev;
  struct iova *curr_iova;

  if (size_aligned) {
    const unsigned shift = sw_fls64(size - 1);
    align_mask = shift >= 64 ? 0 : align_mask << shift;
  }

  const unsigned flags = sw_spin_lock_irqsave(&d->lock);
  if (limit <= d->dma_32bit_pfn && size >= d->max32_alloc_size) {
    d->stats.fast_fails++;
    goto out;
  }
  curr = search_start(d, limit, &visits);
  curr_iova = to_iova(curr);
  retry_pfn = curr_iova->pfn_hi;
retry:
  for (;;) {
    high = SW_MIN(high, curr_iova->pfn_lo);
    new_pfn = (high - size) & align_mask;
    prev = curr;
    curr = prev_node(curr, &visits);
    if (curr == NULL)
      break;
    curr_iova = to_iova(curr);
    if (new_pfn > curr_iova->pfn_hi || new_pfn < low)
      break;
  }
  if (high < size || new_pfn < low) {
    if (!retried && retry_pfn < limit) {
      retried = true;
      high = limit;
      low = retry_pfn + 1;
      curr = find_limit(d, limit, &visits);
      curr_iova = to_iova(curr);
      d->stats.retries++;
      goto retry;
    }
    /* Any failure proves the 32-bit space (a subset) lacks room too. */
    d->max32_alloc_size = size;
    goto out;
  }
  new_iova->pfn_lo = new_pfn;
  new_iova->pfn_hi = new_pfn + size - 1;
  if (!tree_insert(d, new_iova, prev, &visits))
    goto out;
  cached_insert_update(d, new_iova);
  d->stats.allocs++;
  ok = true;
out:
  if (!ok)
    d->stats.failures++;
  charge_visits(d, visits);
  sw_spin_unlock_irqrestore(&d->lock, flags);
  return ok;
}

struct iova *alloc_iova(struct iova_domain *d, uint64_t size_pages, uint64_t limit_pfn, bool size_aligned) {
  const uint64_t limit = iova_limit_exclusive(limit_pfn);
  struct iova *iova;

  if (size_pages == 0 || size_pages > limit)
    return NULL;
  iova = iova_node_alloc(d);
  if (iova == NULL)
    return NULL;
  if (!alloc_and_insert(d, size_pages, limit, iova, size_aligned)) {
    iova_node_free(d, iova);
    return NULL;
  }
  return iova;
}

struct iova *find_iova(struct iova_domain *d, uint64_t pfn) {
  uint64_t visits = 0;
  const unsigned flags = sw_spin_lock_irqsave(&d->lock);
  struct iova *iova = tree_find(d, pfn, &visits);
  charge_visits(d, visits);
  sw_spin_unlock_irqrestore(&d->lock, flags);
  return iova;
}

void free_iova_node(struct iova_domain *d, struct iova *iova) {
  uint64_t visits = 0;

  if (iova == NULL || iova == &d->anchor)
    return;
  const unsigned flags = sw_spin_lock_irqsave(&d->lock);
  tree_remove(d, iova, &visits);
  charge_visits(d, visits);
  sw_spin_unlock_irqrestore(&d->lock, flags);
  iova_node_free(d, iova);
}

bool free_iova(struct iova_domain *d, uint64_t pfn) {
  uint64_t visits = 0;
  const unsigned flags = sw_spin_lock_irqsave(&d->lock);
  struct iova *iova = tree_find(d, pfn, &visits);

  if (iova != NULL)
    tree_remove(d, iova, &visits);
  charge_visits(d, visits);
  sw_spin_unlock_irqrestore(&d->lock, flags);
  if (iova == NULL)
    return false;
  iova_node_free(d, iova);
  return true;
}

struct iova *reserve_iova(struct iova_domain *d, uint64_t pfn_lo, uint64_t pfn_hi) {
  uint64_t visits = 0;
  struct iova *iova;
  bool ok = false;

  if (pfn_lo > pfn_hi || pfn_hi >= IOVA_ANCHOR_PFN)
    return NULL;
  iova = iova_node_alloc(d);
  if (iova == NULL)
    return NULL;
  iova->pfn_lo = pfn_lo;
  iova->pfn_hi = pfn_hi;
  const unsigned flags = sw_spin_lock_irqsave(&d->lock);
  /* Cached nodes stay put: searches step over reserved nodes like any other. */
  if (!tree_overlaps(d, pfn_lo, pfn_hi, &visits))
    ok = tree_insert(d, iova, NULL, &visits);
  charge_visits(d, visits);
  sw_spin_unlock_irqrestore(&d->lock, flags);
  if (!ok) {
    iova_node_free(d, iova);
    return NULL;
  }
  return iova;
}

void iova_tree_free_pfns(struct iova_domain *d, const uint64_t *pfns, uint64_t n) {
  uint64_t visits = 0;
  const unsigned flags = sw_spin_lock_irqsave(&d->lock);
  for (uint64_t i = 0; i < n; i++) {
    /* Each lookup descends from the root: a walk of its own. */
    uint64_t walk = 0;
    struct iova *iova = tree_find(d, pfns[i], &walk);
    if (iova != NULL)
      tree_remove(d, iova, &walk);
    charge_walk(d, walk);
    visits += walk;
    if (iova != NULL)
      iova_node_free(d, iova);
  }
  charge_steps(d, visits);
  sw_spin_unlock_irqrestore(&d->lock, flags);
}

/* ---- Domain. */

/* With policy.queued_locks, every spinlock of the allocator made a queued
 * one (zeroed memory is an unlocked ticket lock); false when queued locks
 * could not be had. */
static bool init_queued_locks(struct iova_domain *d) {
  if (!d->policy.queued_locks) return true;
  bool ok = sw_spin_lock_init_queued(&d->lock) && sw_spin_lock_init_queued(&d->slab_lock);
  for (unsigned order = 0; ok && order < IOVA_RCACHE_ORDERS; order++) {
    if (d->rcaches[order]) ok = sw_spin_lock_init_queued(&d->rcaches[order]->lock);
    for (unsigned cpu = 0; ok && cpu < iova_max_cpus(); cpu++)
      ok = sw_spin_lock_init_queued(&iova_cpu_block(d, cpu)->rc[order].lock);
  }
  return ok;
}

int init_iova_domain(struct iova_domain *d, uint64_t granule, uint64_t start_pfn,
                     const struct iova_policy *policy) {
  phys_addr_t pa;

  if (d == NULL || !sw_is_power_of_2(granule) || granule < 512 || granule > 65536)
    return -1;
  sw_memset(d, 0, sizeof(*d));
  sw_spin_lock_init(&d->lock);
  sw_spin_lock_init(&d->slab_lock);
  d->granule = granule;
  d->shift = sw_ilog2_u64(granule);
  d->start_pfn = start_pfn != 0 ? start_pfn : 1;
  d->dma_32bit_pfn = (uint64_t)1 << (32 - d->shift);
  d->max32_alloc_size = d->dma_32bit_pfn;
  if (policy != NULL) {
    d->policy = *policy;
  } else {
    d->policy.cache = IOVA_CACHED32_AND_64;
    d->policy.rcache = true;
  }
  d->cost_visit = hal_cost_lookup("rbtree_visit");
  d->cost_kmem = hal_cost_lookup("kmem_alloc");

  d->anchor.pfn_lo = d->anchor.pfn_hi = IOVA_ANCHOR_PFN;
  sw_rb_link_node(&d->anchor.node, NULL, &d->root.node);
  sw_rb_insert_color(&d->anchor.node, &d->root);
  d->nodes = 1;
  d->cached_node = &d->anchor.node;
  d->cached32_node = &d->anchor.node;

  /* Zeroed memory: every lock starts unlocked, every magazine absent. */
  d->cpu_stride = SW_ALIGN_UP((uint64_t)sizeof(struct iova_cpu), (uint64_t)CACHE_LINE);
  d->cpus = hal_dma_alloc(d->cpu_stride * iova_max_cpus(), CACHE_LINE, &pa);
  if (d->cpus == NULL)
    return -1;
  if (d->policy.rcache) {
    for (unsigned order = 0; order < IOVA_RCACHE_ORDERS; order++) {
      d->rcaches[order] = hal_dma_alloc(sizeof(struct iova_rcache), CACHE_LINE, &pa);
      if (d->rcaches[order] == NULL) {
        put_iova_domain(d);
        return -1;
      }
    }
  }
  if (!init_queued_locks(d)) {
    hal_log(HAL_LOG_ERROR, "iova: the DMA region cannot hold the queued spinlocks' per-core nodes");
    put_iova_domain(d);
    return -1;
  }
  return 0;
}

void put_iova_domain(struct iova_domain *d) {
  if (d->cpus != NULL) {
    for (unsigned cpu = 0; cpu < iova_max_cpus(); cpu++) {
      struct iova_cpu *c = iova_cpu_block(d, cpu);
      for (unsigned order = 0; order < IOVA_RCACHE_ORDERS; order++) {
        iova_mag_free(d, c->rc[order].loaded);
        iova_mag_free(d, c->rc[order].prev);
      }
      slab_free_pages(c->slab_pages);
    }
    hal_dma_free(d->cpus);
    d->cpus = NULL;
  }
  for (unsigned order = 0; order < IOVA_RCACHE_ORDERS; order++) {
    struct iova_rcache *rc = d->rcaches[order];
    if (rc == NULL)
      continue;
    for (uint32_t i = 0; i < rc->depot_size; i++)
      iova_mag_free(d, rc->depot[i]);
    hal_dma_free(rc);
    d->rcaches[order] = NULL;
  }
  /* Every node lived in a slab page: the tree is gone with them. */
  slab_free_pages(d->slab_shared_pages);
  d->slab_shared_pages = NULL;
  d->slab_shared_free = NULL;
  d->root.node = NULL;
  d->nodes = 0;
  d->cached_node = NULL;
  d->cached32_node = NULL;
}

/*
 * AArch64 stage-1 translation tables (Arm ARM D8, VMSAv8-64), after the
 * behaviour of Linux's io-pgtable-arm. See io_pgtable_arm.h.
 *
 * Geometry: level n resolves IOVA bits [pg_shift + (3 - n) * bpl + bpl - 1 :
 * pg_shift + (3 - n) * bpl], bpl = pg_shift - 3; the walk starts at the level
 * where ias runs out, and the initial table resolves whatever bits are left
 * (pgd_bits). Every table, the initial one included, is one granule of DMA
 * memory, so TTB0 is always aligned to its table size (IHI 0070 5.4).
 */
#include "iommu/io_pgtable_arm.h"

#include "lib/compiler.h"
#include "lib/string.h"

#define PGT_MAX_LEVEL 3u
#define PGT_ADDR_BITS 48u
#define PGT_CACHE_LINE 64u

/* ---- Geometry helpers. */
static inline unsigned lvl_shift(const struct io_pgtable *p, unsigned lvl) {
  return p->pg_shift + (PGT_MAX_LEVEL - lvl) * p->bits_per_level;
}

static inline uint64_t lvl_size(const struct io_pgtable *p, unsigned lvl) { return 1ull << lvl_shift(p, lvl); }

static inline size_t lvl_entries(const struct io_pgtable *p, unsigned lvl) {
  return (size_t)1 << (lvl == p->start_level ? p->pgd_bits : p->bits_per_level);
}

static inline size_t lvl_index(const struct io_pgtable *p, uint64_t iova, unsigned lvl) {
  return (size_t)(iova >> lvl_shift(p, lvl)) & (lvl_entries(p, lvl) - 1);
}

/* Address bits [47:lo] of a descriptor. */
static inline uint64_t addr_bits(uint64_t pte, unsigned lo) {
  return pte & (((1ull << PGT_ADDR_BITS) - 1) & ~((1ull << lo) - 1));
}

/* ---- Descriptor kinds. Only three kinds are ever written here: zero,
 * a leaf, a table; any non-zero entry is valid. */
static inline bool pte_is_leaf(uint64_t pte, unsigned lvl) {
  const uint64_t type = pte & IO_PGTABLE_PTE_TYPE_MASK;
  return lvl == PGT_MAX_LEVEL ? type == IO_PGTABLE_PTE_TYPE_PAGE : type == IO_PGTABLE_PTE_TYPE_BLOCK;
}

static inline bool pte_is_table(uint64_t pte, unsigned lvl) {
  return lvl < PGT_MAX_LEVEL && (pte & IO_PGTABLE_PTE_TYPE_MASK) == IO_PGTABLE_PTE_TYPE_TABLE;
}

static inline uint64_t *pte_table(const struct io_pgtable *p, uint64_t pte) {
  return (uint64_t *)hal_phys_to_virt(addr_bits(pte, p->pg_shift));
}

/* Entries may be installed concurrently by another core: read and write them
 * once, as Linux's READ_ONCE/WRITE_ONCE. */
static inline uint64_t pte_read(const uint64_t *ptep) { return *(const volatile uint64_t *)ptep; }
static inline void pte_store(uint64_t *ptep, uint64_t v) { *(volatile uint64_t *)ptep = v; }

static void count_pte_writes(struct io_pgtable *p, uint64_t n) {
  if (!n) return;
  hal_cost_id(p->cost_pte_write, n);
  p->stats.ptes_written += n;
}

/* With a non-coherent walker, descriptor stores must be cleaned to the point
 * of coherency and completed before the SMMU may walk them (Linux's
 * dma_sync_single_for_device: DC CVAC per line, then DSB). */
static void sync_ptes(struct io_pgtable *p, const uint64_t *ptep, size_t n) {
  if (p->cfg.coherent_walk || n == 0) return;
  const uintptr_t first = (uintptr_t)ptep & ~(uintptr_t)(PGT_CACHE_LINE - 1);
  const uintptr_t end = SW_ALIGN_UP((uintptr_t)(ptep + n), (uintptr_t)PGT_CACHE_LINE);
  const uint64_t lines = (uint64_t)(end - first) / PGT_CACHE_LINE;
  hal_cost_id(p->cost_cache_clean_line, lines);
  hal_barrier(HAL_BARRIER_DSB);
  p->stats.cache_syncs++;
  p->stats.cache_lines_cleaned += lines;
}

/* ---- Table pages. */
static uint64_t *alloc_table(struct io_pgtable *p, phys_addr_t *pa) {
  uint64_t *t = (uint64_t *)hal_dma_alloc(p->cfg.granule, p->cfg.granule, pa);
  if (!t) return NULL;
  hal_cost_id(p->cost_kmem_alloc, 1);
  p->stats.tables_allocated++;
  /* The zeroed page is mapped for the device (cleaned) before it is linked. */
  sync_ptes(p, t, p->cfg.granule / sizeof(uint64_t));
  return t;
}

static void free_table(struct io_pgtable *p, uint64_t *t) {
  hal_dma_free(t);
  hal_cost_id(p->cost_kmem_alloc, 1);
  p->stats.tables_freed++;
}

/* Frees `table` (at level `lvl`) and every table below it. */
static void free_subtree(struct io_pgtable *p, unsigned lvl, uint64_t *table) {
  if (lvl < PGT_MAX_LEVEL) {
    const size_t n = lvl_entries(p, lvl);
    for (size_t i = 0; i < n; i++) {
      const uint64_t pte = pte_read(&table[i]);
      if (pte_is_table(pte, lvl)) free_subtree(p, lvl + 1, pte_table(p, pte));
    }
  }
  free_table(p, table);
}

static bool subtree_has_leaf(const struct io_pgtable *p, unsigned lvl, const uint64_t *table) {
  const size_t n = lvl_entries(p, lvl);
  for (size_t i = 0; i < n; i++) {
    const uint64_t pte = pte_read(&table[i]);
    if (!pte) continue;
    if (pte_is_leaf(pte, lvl)) return true;
    if (pte_is_table(pte, lvl) && subtree_has_leaf(p, lvl + 1, pte_table(p, pte))) return true;
  }
  return false;
}

static void flush_walk(struct io_pgtable *p, uint64_t iova, size_t size) {
  p->stats.walk_flushes++;
  if (p->cfg.tlb && p->cfg.tlb->tlb_flush_walk) p->cfg.tlb->tlb_flush_walk(iova, size, p->cfg.granule, p->cfg.cookie);
}

static void add_page(struct io_pgtable *p, struct iommu_iotlb_gather *gather, uint64_t iova, size_t size) {
  p->stats.pages_added++;
  if (p->cfg.tlb && p->cfg.tlb->tlb_add_page) p->cfg.tlb->tlb_add_page(gather, iova, size, p->cfg.cookie);
}

/* Publishes a new table in *ptep if it still holds `curr`, and returns what
 * was there (curr when this core won). As Linux's arm_lpae_install_table. */
static uint64_t install_table(struct io_pgtable *p, uint64_t *ptep, uint64_t curr, phys_addr_t table_pa) {
  uint64_t pte = addr_bits(table_pa, p->pg_shift) | IO_PGTABLE_PTE_TYPE_TABLE;
  if (p->cfg.coherent_walk) pte |= IO_PGTABLE_PTE_SW_SYNC;
  /* The zeroed table must be visible before the entry pointing at it. */
  hal_barrier(HAL_BARRIER_DMB);
  const uint64_t old = hal_cmpxchg64((volatile uint64_t *)ptep, curr, pte);
  if (old == curr) count_pte_writes(p, 1);
  if (p->cfg.coherent_walk || (old & IO_PGTABLE_PTE_SW_SYNC)) return old;
  /* Clean the entry even when another core won: waiting for it to do so
   * would gain nothing. The winner then marks it cleaned. */
  sync_ptes(p, ptep, 1);
  if (old == curr) {
    pte_store(ptep, pte | IO_PGTABLE_PTE_SW_SYNC);
    count_pte_writes(p, 1);
  }
  return old;
}

static uint64_t prot_to_pte(unsigned prot) {
  /* Non-global: stage-1 contexts are tagged by ASID. AF preset since the SMMU
   * is not asked to manage it (CD.HA = 0 would fault on AF == 0). */
  uint64_t pte = IO_PGTABLE_PTE_NG | IO_PGTABLE_PTE_AF;
  if ((prot & IOMMU_READ) && !(prot & IOMMU_WRITE)) pte |= IO_PGTABLE_PTE_AP_RDONLY;
  /* AP[1]: devices issue unprivileged transactions unless they say otherwise. */
  if (!(prot & IOMMU_PRIV)) pte |= IO_PGTABLE_PTE_AP_UNPRIV;
  unsigned attr = IO_PGTABLE_MAIR_IDX_NC;
  if (prot & IOMMU_MMIO)
    attr = IO_PGTABLE_MAIR_IDX_DEV;
  else if (prot & IOMMU_CACHE)
    attr = IO_PGTABLE_MAIR_IDX_CACHE;
  pte |= (uint64_t)attr << IO_PGTABLE_PTE_ATTRINDX_SHIFT;
  /* As Linux: inner shareable for cacheable memory; Device and non-cacheable
   * memory is outer shareable whatever SH says (Arm ARM D8), so OS there. */
  pte |= (prot & IOMMU_CACHE) ? IO_PGTABLE_PTE_SH_IS : IO_PGTABLE_PTE_SH_OS;
  if (prot & IOMMU_NOEXEC) pte |= IO_PGTABLE_PTE_XN;
  return pte;
}

/* Writes n leaves at ptep (level lvl), after checking that none of them is
 * in use. An entry that is a table with no leaf left below it (its pages were
 * unmapped one by one) is removed first, as Linux does before writing a
 * block over a table; one that still maps something is -EEXIST. */
static int write_leaves(struct io_pgtable *p, uint64_t iova, phys_addr_t pa, size_t size, size_t n,
                        uint64_t prot_pte, unsigned lvl, uint64_t *ptep) {
  if (((pa + (uint64_t)n * size - 1) >> p->cfg.oas) != 0) return -IO_PGTABLE_EINVAL;
  for (size_t i = 0; i < n; i++) {
    const uint64_t pte = pte_read(&ptep[i]);
    if (!pte) continue;
    if (!pte_is_table(pte, lvl) || subtree_has_leaf(p, lvl + 1, pte_table(p, pte))) return -IO_PGTABLE_EEXIST;
  }
  for (size_t i = 0; i < n; i++) {
    const uint64_t pte = pte_read(&ptep[i]);
    if (!pte) continue;
    pte_store(&ptep[i], 0);
    count_pte_writes(p, 1);
    sync_ptes(p, &ptep[i], 1);
    flush_walk(p, iova + (uint64_t)i * size, size);
    free_subtree(p, lvl + 1, pte_table(p, pte));
  }
  const uint64_t type = lvl == PGT_MAX_LEVEL ? IO_PGTABLE_PTE_TYPE_PAGE : IO_PGTABLE_PTE_TYPE_BLOCK;
  for (size_t i = 0; i < n; i++)
    pte_store(&ptep[i], prot_pte | type | addr_bits(pa + (uint64_t)i * size, p->pg_shift));
  count_pte_writes(p, n);
  sync_ptes(p, ptep, n);
  return 0;
}

static int map_level(struct io_pgtable *p, uint64_t iova, phys_addr_t pa, size_t size, size_t pgcount,
                     uint64_t prot_pte, unsigned lvl, uint64_t *table, size_t *mapped) {
  const size_t idx = lvl_index(p, iova, lvl);
  uint64_t *ptep = &table[idx];

  if (size == lvl_size(p, lvl)) {
    const size_t n = SW_MIN(pgcount, lvl_entries(p, lvl) - idx);
    const int ret = write_leaves(p, iova, pa, size, n, prot_pte, lvl, ptep);
    if (ret == 0) *mapped += n * size;
    return ret;
  }
  if (lvl >= PGT_MAX_LEVEL || size > lvl_size(p, lvl)) return -IO_PGTABLE_EINVAL;

  uint64_t pte = pte_read(ptep);
  if (!pte) {
    phys_addr_t tpa = 0;
    uint64_t *t = alloc_table(p, &tpa);
    if (!t) return -IO_PGTABLE_ENOMEM;
    pte = install_table(p, ptep, 0, tpa);
    if (pte) {
      /* Another core installed a table first; ours was never visible. */
      p->stats.install_races_lost++;
      free_table(p, t);
    } else {
      pte = pte_read(ptep);
    }
  } else if (!p->cfg.coherent_walk && !(pte & IO_PGTABLE_PTE_SW_SYNC) && pte_is_table(pte, lvl)) {
    /* Installed by another core that has not cleaned it yet. */
    sync_ptes(p, ptep, 1);
  }
  if (!pte_is_table(pte, lvl)) return -IO_PGTABLE_EEXIST; /* a block covers it */
  return map_level(p, iova, pa, size, pgcount, prot_pte, lvl + 1, pte_table(p, pte), mapped);
}

static bool valid_pgsize(const struct io_pgtable *p, size_t pgsize) {
  return sw_is_power_of_2(pgsize) && (pgsize & p->cfg.pgsize_bitmap) != 0;
}

int io_pgtable_map_pages(struct io_pgtable *pgt, uint64_t iova, phys_addr_t pa, size_t pgsize, size_t pgcount,
                         unsigned prot, size_t *mapped) {
  size_t scratch = 0;
  if (!mapped) mapped = &scratch;
  if (!pgt || pgcount == 0 || !valid_pgsize(pgt, pgsize)) return -IO_PGTABLE_EINVAL;
  /* Linux quietly does nothing for a mapping without access; a caller
   * looping on *mapped would spin, so it is refused here. */
  if (!(prot & (IOMMU_READ | IOMMU_WRITE))) return -IO_PGTABLE_EINVAL;
  if (!SW_IS_ALIGNED(iova, (uint64_t)pgsize) || !SW_IS_ALIGNED(pa, (uint64_t)pgsize)) return -IO_PGTABLE_EINVAL;
  if ((iova >> pgt->cfg.ias) != 0 || (pa >> pgt->cfg.oas) != 0) return -IO_PGTABLE_EINVAL;
  return map_level(pgt, iova, pa, pgsize, pgcount, prot_to_pte(prot), pgt->start_level, pgt->pgd, mapped);
}

static size_t unmap_level(struct io_pgtable *p, struct iommu_iotlb_gather *gather, uint64_t iova, size_t size,
                          size_t pgcount, unsigned lvl, uint64_t *table) {
  const size_t idx = lvl_index(p, iova, lvl);
  uint64_t *ptep = &table[idx];
  uint64_t pte = pte_read(ptep);
  if (!pte) return 0;

  if (size == lvl_size(p, lvl)) {
    const size_t n = SW_MIN(pgcount, lvl_entries(p, lvl) - idx);
    size_t i;
    for (i = 0; i < n; i++) {
      pte = pte_read(&ptep[i]);
      if (!pte) break;
      if (pte_is_table(pte, lvl)) {
        /* A whole subtree: the SMMU may hold partial walks through it, so
         * they are invalidated (synchronously) before its pages can be
         * reused. Its leaves need no gather entry: the walk flush covers
         * the range. */
        pte_store(&ptep[i], 0);
        count_pte_writes(p, 1);
        sync_ptes(p, &ptep[i], 1);
        flush_walk(p, iova + (uint64_t)i * size, size);
        free_subtree(p, lvl + 1, pte_table(p, pte));
      } else if (gather && !gather->queued) {
        add_page(p, gather, iova + (uint64_t)i * size, size);
      }
    }
    uint64_t cleared = 0;
    for (size_t j = 0; j < i; j++) {
      if (pte_read(&ptep[j])) {
        pte_store(&ptep[j], 0);
        cleared++;
      }
    }
    count_pte_writes(p, cleared);
    if (cleared) sync_ptes(p, ptep, i);
    return i * size;
  }
  /* Linux once split a block to unmap part of it; that path is gone there
   * and absent here: nothing is unmapped. */
  if (pte_is_leaf(pte, lvl) || !pte_is_table(pte, lvl)) return 0;
  return unmap_level(p, gather, iova, size, pgcount, lvl + 1, pte_table(p, pte));
}

size_t io_pgtable_unmap_pages(struct io_pgtable *pgt, uint64_t iova, size_t pgsize, size_t pgcount,
                              struct iommu_iotlb_gather *gather) {
  if (!pgt || pgcount == 0 || !valid_pgsize(pgt, pgsize)) return 0;
  if (!SW_IS_ALIGNED(iova, (uint64_t)pgsize) || (iova >> pgt->cfg.ias) != 0) return 0;
  return unmap_level(pgt, gather, iova, pgsize, pgcount, pgt->start_level, pgt->pgd);
}

phys_addr_t io_pgtable_iova_to_phys(const struct io_pgtable *pgt, uint64_t iova) {
  if (!pgt || (iova >> pgt->cfg.ias) != 0) return 0;
  const uint64_t *table = pgt->pgd;
  for (unsigned lvl = pgt->start_level; lvl <= PGT_MAX_LEVEL; lvl++) {
    const uint64_t pte = pte_read(&table[lvl_index(pgt, iova, lvl)]);
    if (!pte) return 0;
    if (pte_is_leaf(pte, lvl)) {
      const unsigned shift = lvl_shift(pgt, lvl);
      return addr_bits(pte, shift) | (iova & ((1ull << shift) - 1));
    }
    if (!pte_is_table(pte, lvl)) return 0;
    table = pte_table(pgt, pte);
  }
  return 0;
}

/* CD.IPS: the smallest encoding that holds oas bits (IHI 0070 5.4). */
static unsigned ips_of(unsigned oas) {
  static const unsigned bits[] = {32, 36, 40, 42, 44, 48};
  for (unsigned i = 0; i < SW_ARRAY_SIZE(bits); i++)
    if (oas <= bits[i]) return i;
  return 5;
}

int io_pgtable_init(struct io_pgtable *pgt, struct io_pgtable_cfg *cfg) {
  if (!pgt || !cfg) return -IO_PGTABLE_EINVAL;
  unsigned pg_shift, tg0;
  uint64_t sizes;
  switch (cfg->granule) {
    case IO_PGTABLE_SZ_4K:
      pg_shift = 12;
      tg0 = IO_PGTABLE_TG0_4K;
      sizes = (1ull << 12) | (1ull << 21) | (1ull << 30);
      break;
    case IO_PGTABLE_SZ_16K:
      pg_shift = 14;
      tg0 = IO_PGTABLE_TG0_16K;
      sizes = (1ull << 14) | (1ull << 25);
      break;
    case IO_PGTABLE_SZ_64K:
      pg_shift = 16;
      tg0 = IO_PGTABLE_TG0_64K;
      sizes = (1ull << 16) | (1ull << 29);
      break;
    default:
      return -IO_PGTABLE_EINVAL;
  }
  if (cfg->ias < 32 || cfg->ias > PGT_ADDR_BITS || cfg->oas < 32 || cfg->oas > PGT_ADDR_BITS)
    return -IO_PGTABLE_EINVAL;

  sw_memset(pgt, 0, sizeof(*pgt));
  pgt->pg_shift = pg_shift;
  pgt->bits_per_level = pg_shift - 3;
  const unsigned levels = (cfg->ias - pg_shift + pgt->bits_per_level - 1) / pgt->bits_per_level;
  pgt->start_level = PGT_MAX_LEVEL + 1 - levels;
  pgt->pgd_bits = cfg->ias - lvl_shift(pgt, pgt->start_level);

  /* Only leaf sizes of levels the walk actually visits. */
  uint64_t bitmap = 0;
  for (unsigned lvl = pgt->start_level; lvl <= PGT_MAX_LEVEL; lvl++) bitmap |= sizes & lvl_size(pgt, lvl);
  cfg->pgsize_bitmap = bitmap;
  pgt->cfg = *cfg;

  pgt->cost_pte_write = hal_cost_lookup("pte_write");
  pgt->cost_kmem_alloc = hal_cost_lookup("kmem_alloc");
  pgt->cost_cache_clean_line = hal_cost_lookup("cache_clean_line");

  phys_addr_t pgd_pa = 0;
  pgt->pgd = alloc_table(pgt, &pgd_pa);
  if (!pgt->pgd) return -IO_PGTABLE_ENOMEM;

  struct io_pgtable_s1_regs *s1 = &cfg->s1;
  s1->ttbr = pgd_pa;
  s1->t0sz = 64 - cfg->ias;
  s1->tg0 = tg0;
  s1->ips = ips_of(cfg->oas);
  s1->irgn0 = cfg->coherent_walk ? 1u : 0u; /* write-back RA WA, or non-cacheable */
  s1->orgn0 = s1->irgn0;
  s1->sh0 = cfg->coherent_walk ? 3u : 2u;   /* inner, or outer shareable */
  s1->mair = IO_PGTABLE_MAIR;
  pgt->cfg.s1 = *s1;
  return 0;
}

void io_pgtable_destroy(struct io_pgtable *pgt) {
  if (!pgt || !pgt->pgd) return;
  free_subtree(pgt, pgt->start_level, pgt->pgd);
  pgt->pgd = NULL;
}

struct io_pgtable *io_pgtable_alloc(struct io_pgtable_cfg *cfg) {
  phys_addr_t pa = 0;
  struct io_pgtable *pgt = (struct io_pgtable *)hal_dma_alloc(sizeof(*pgt), 64, &pa);
  if (!pgt) return NULL;
  hal_cost("kmem_alloc", 1);
  if (io_pgtable_init(pgt, cfg) != 0) {
    hal_dma_free(pgt);
    hal_cost("kmem_alloc", 1);
    return NULL;
  }
  return pgt;
}

void io_pgtable_free(struct io_pgtable *pgt) {
  if (!pgt) return;
  io_pgtable_destroy(pgt);
  hal_dma_free(pgt);
  hal_cost("kmem_alloc", 1);
}

/*
 * AArch64 stage-1 translation tables for the SMMU (VMSAv8-64 long-descriptor
 * format, Arm ARM D8; used by a CD with AA64 = 1, IHI 0070 5.4), in the manner
 * of Linux's io-pgtable-arm: map and unmap runs of equal-sized pages or
 * blocks, report what needs invalidating through iommu_flush_ops, and give the
 * context descriptor its TTB0, T0SZ, TG0, IPS and MAIR.
 *
 * Concurrency: callers may map and unmap disjoint IOVA ranges from several
 * cores at once; a new table is published with a compare-and-swap on its
 * parent entry. Overlapping concurrent calls are a caller error, as in Linux.
 * TLB invalidation is the caller's: this layer only reports.
 */
#ifndef SMMU_VP_SW_IOMMU_IO_PGTABLE_ARM_H
#define SMMU_VP_SW_IOMMU_IO_PGTABLE_ARM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hal/hal.h"
#include "iommu/iotlb_gather.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Mapping permissions and attributes (same values as Linux's iommu.h). */
#ifndef IOMMU_READ
#define IOMMU_READ (1u << 0)
#define IOMMU_WRITE (1u << 1)
#define IOMMU_CACHE (1u << 2)  /* normal write-back memory, inner shareable */
#define IOMMU_NOEXEC (1u << 3) /* UXN and PXN */
#define IOMMU_MMIO (1u << 4)   /* Device-nGnRE */
#define IOMMU_PRIV (1u << 5)   /* privileged only: AP[1] clear */
#endif

/* ---- Errors, returned negated. */
#define IO_PGTABLE_ENOMEM 12
#define IO_PGTABLE_EEXIST 17
#define IO_PGTABLE_EINVAL 22

/* ---- Memory attributes: the MAIR a CD using these tables must hold
 * (CD dword 3), and the AttrIndx each kind of mapping uses. Same layout as
 * Linux's io-pgtable-arm:
 *   index 0: Normal, inner/outer non-cacheable (0x44)    no IOMMU_CACHE
 *   index 1: Normal, inner/outer write-back RW-allocate (0xff)   IOMMU_CACHE
 *   index 2: Device-nGnRE (0x04)                          IOMMU_MMIO
 *   index 3: Normal, inner non-cacheable, outer write-back (0xf4), unused */
#define IO_PGTABLE_MAIR_ATTR_NC 0x44u
#define IO_PGTABLE_MAIR_ATTR_WBRWA 0xffu
#define IO_PGTABLE_MAIR_ATTR_DEVICE 0x04u
#define IO_PGTABLE_MAIR_ATTR_INC_OWBRWA 0xf4u
#define IO_PGTABLE_MAIR_IDX_NC 0u
#define IO_PGTABLE_MAIR_IDX_CACHE 1u
#define IO_PGTABLE_MAIR_IDX_DEV 2u
#define IO_PGTABLE_MAIR_IDX_INC_OCACHE 3u
#define IO_PGTABLE_MAIR                                                                       \
  (((uint64_t)IO_PGTABLE_MAIR_ATTR_NC << (8 * IO_PGTABLE_MAIR_IDX_NC)) |                        \
   ((uint64_t)IO_PGTABLE_MAIR_ATTR_WBRWA << (8 * IO_PGTABLE_MAIR_IDX_CACHE)) |                  \
   ((uint64_t)IO_PGTABLE_MAIR_ATTR_DEVICE << (8 * IO_PGTABLE_MAIR_IDX_DEV)) |                   \
   ((uint64_t)IO_PGTABLE_MAIR_ATTR_INC_OWBRWA << (8 * IO_PGTABLE_MAIR_IDX_INC_OCACHE)))

/* ---- Descriptor fields written by this layer (Arm ARM D8, stage 1). */
#define IO_PGTABLE_PTE_VALID (1ull << 0)
#define IO_PGTABLE_PTE_TYPE_MASK 3ull
#define IO_PGTABLE_PTE_TYPE_BLOCK 1ull /* levels 1-2 */
#define IO_PGTABLE_PTE_TYPE_TABLE 3ull /* levels 0-2 */
#define IO_PGTABLE_PTE_TYPE_PAGE 3ull  /* level 3 */
#define IO_PGTABLE_PTE_ATTRINDX_SHIFT 2
#define IO_PGTABLE_PTE_ATTRINDX_MASK (7ull << 2)
#define IO_PGTABLE_PTE_AP_UNPRIV (1ull << 6) /* AP[1] */
#define IO_PGTABLE_PTE_AP_RDONLY (1ull << 7) /* AP[2] */
#define IO_PGTABLE_PTE_SH_SHIFT 8
#define IO_PGTABLE_PTE_SH_MASK (3ull << 8)
#define IO_PGTABLE_PTE_SH_OS (2ull << 8)
#define IO_PGTABLE_PTE_SH_IS (3ull << 8)
#define IO_PGTABLE_PTE_AF (1ull << 10)
#define IO_PGTABLE_PTE_NG (1ull << 11)
#define IO_PGTABLE_PTE_PXN (1ull << 53)
#define IO_PGTABLE_PTE_UXN (1ull << 54)
#define IO_PGTABLE_PTE_XN (IO_PGTABLE_PTE_PXN | IO_PGTABLE_PTE_UXN)
/* Software-defined bit 55 of a table descriptor (ignored by the walker):
 * the entry has been cleaned to memory, so a later mapper sharing the table
 * need not clean it again (Linux's ARM_LPAE_PTE_SW_SYNC). */
#define IO_PGTABLE_PTE_SW_SYNC (1ull << 55)

/* ---- CD.TG0 encodings (IHI 0070 5.4; note 64K is 1 and 16K is 2). */
#define IO_PGTABLE_TG0_4K 0u
#define IO_PGTABLE_TG0_64K 1u
#define IO_PGTABLE_TG0_16K 2u

#define IO_PGTABLE_SZ_4K ((size_t)1 << 12)
#define IO_PGTABLE_SZ_16K ((size_t)1 << 14)
#define IO_PGTABLE_SZ_64K ((size_t)1 << 16)

/* ---- TLB maintenance callbacks, implemented by the SMMU driver. */
struct iommu_flush_ops {
  /* Invalidate every entry of the context (ASID). */
  void (*tlb_flush_all)(void *cookie);
  /* A table entry covering [iova, iova + size) was removed: invalidate walk
   * cache entries (and leaves) for that range before the table pages are
   * reused. Called synchronously; `granule` is the leaf size of the freed
   * tables (seed 000: per-granule TLBIs, or one by ASID, are the driver's
   * choice). */
  void (*tlb_flush_walk)(uint64_t iova, size_t size, size_t granule, void *cookie);
  /* A leaf of `granule` bytes at `iova` was removed; record it in `gather`
   * for the IOMMU core's next sync. */
  void (*tlb_add_page)(struct iommu_iotlb_gather *gather, uint64_t iova, size_t granule, void *cookie);
};

/* What a context descriptor needs, filled in by io_pgtable_alloc. */
struct io_pgtable_s1_regs {
  phys_addr_t ttbr; /* CD.TTB0: the initial table, granule-aligned */
  unsigned t0sz;    /* CD.T0SZ = 64 - ias */
  unsigned tg0;     /* CD.TG0, IO_PGTABLE_TG0_* */
  unsigned ips;     /* CD.IPS for oas: 0 32, 1 36, 2 40, 3 42, 4 44, 5 48 bits */
  /* Table walk attributes, as Linux: write-back inner shareable when the
   * walk is coherent, else non-cacheable outer shareable. */
  unsigned irgn0, orgn0, sh0;
  uint64_t mair;    /* CD.MAIR: IO_PGTABLE_MAIR */
};

struct io_pgtable_cfg {
  /* Inputs. */
  size_t granule;        /* IO_PGTABLE_SZ_4K, _16K or _64K */
  unsigned ias;          /* input (IOVA) bits, 32..48 */
  unsigned oas;          /* output (PA) bits, 32..48 */
  bool coherent_walk;    /* SMMU walks snoop CPU caches (SMMU_IDR0.COHACC) */
  const struct iommu_flush_ops *tlb;
  void *cookie;          /* passed back to every flush op */
  /* Outputs of io_pgtable_alloc. */
  uint64_t pgsize_bitmap; /* 4K: 4K|2M|1G, 16K: 16K|32M, 64K: 64K|512M */
  struct io_pgtable_s1_regs s1;
};

/* Counters kept by the page-table code (plain counters: the simulated cores
 * run cooperatively, so an increment is not torn). */
struct io_pgtable_stats {
  uint64_t ptes_written;      /* descriptor stores, clears included */
  uint64_t tables_allocated;  /* table pages, the initial table included */
  uint64_t tables_freed;
  uint64_t walk_flushes;      /* tlb_flush_walk calls */
  uint64_t pages_added;       /* tlb_add_page calls */
  uint64_t cache_syncs;       /* clean + DSB sequences (non-coherent walk only) */
  uint64_t cache_lines_cleaned;
  uint64_t install_races_lost; /* a new table freed because another core won */
};

struct io_pgtable {
  struct io_pgtable_cfg cfg;
  unsigned pg_shift;       /* log2(granule) */
  unsigned bits_per_level; /* pg_shift - 3 */
  unsigned start_level;    /* initial lookup level, 0..3 */
  unsigned pgd_bits;       /* IOVA bits resolved by the initial table */
  uint64_t *pgd;
  struct io_pgtable_stats stats;
  int cost_pte_write, cost_kmem_alloc, cost_cache_clean_line;
};

/* Sets up `pgt` in caller-provided storage from `cfg` (whose outputs are
 * filled in, and copied into pgt->cfg). Returns 0, -IO_PGTABLE_EINVAL for an
 * unsupported configuration, or -IO_PGTABLE_ENOMEM. */
int io_pgtable_init(struct io_pgtable *pgt, struct io_pgtable_cfg *cfg);
/* Frees every table page. No TLB maintenance: the context must no longer be
 * in use (or the caller invalidates it). */
void io_pgtable_destroy(struct io_pgtable *pgt);

/* Same, with the descriptor itself allocated from DMA memory (sw/ has no
 * other allocator). Returns NULL on failure. */
struct io_pgtable *io_pgtable_alloc(struct io_pgtable_cfg *cfg);
void io_pgtable_free(struct io_pgtable *pgt);

/* Maps pgcount entries of pgsize bytes (a size of cfg.pgsize_bitmap) from
 * iova to pa, both pgsize-aligned, with IOMMU_* `prot` (which must grant READ
 * or WRITE). Stops at the end of the leaf table holding iova, so it may map
 * fewer than pgcount: the bytes mapped are added to *mapped (as Linux, so
 * initialise it) and the caller loops. Returns 0, -IO_PGTABLE_EEXIST when an
 * entry in the way is already mapped (nothing of this leaf table run is
 * written), -IO_PGTABLE_EINVAL for a bad size, alignment, prot or an address
 * outside ias/oas, or -IO_PGTABLE_ENOMEM. */
int io_pgtable_map_pages(struct io_pgtable *pgt, uint64_t iova, phys_addr_t pa, size_t pgsize, size_t pgcount,
                         unsigned prot, size_t *mapped);

/* Unmaps up to pgcount entries of pgsize bytes from iova, stopping at the end
 * of the table holding them or at the first unmapped entry. Returns the bytes
 * unmapped; the caller loops. An entry that is a table (a whole subtree) calls
 * tlb_flush_walk synchronously and frees the subtree; a leaf calls
 * tlb_add_page unless gather is NULL or queued. Unmapping part of a larger
 * block returns 0 and leaves it mapped (Linux once split blocks here). */
size_t io_pgtable_unmap_pages(struct io_pgtable *pgt, uint64_t iova, size_t pgsize, size_t pgcount,
                              struct iommu_iotlb_gather *gather);

/* Output address of iova, or 0 when it is not mapped. */
phys_addr_t io_pgtable_iova_to_phys(const struct io_pgtable *pgt, uint64_t iova);

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_SW_IOMMU_IO_PGTABLE_ARM_H */

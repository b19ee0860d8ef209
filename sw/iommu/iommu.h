/*
 * IOMMU core: a translation domain (one set of stage-1 page tables and the
 * ASID that tags them) on the arm-smmu-v3 driver, with map, unmap, IOTLB
 * gather and sync, and map_sg, after the behaviour of Linux's
 * drivers/iommu/iommu.c with arm-smmu-v3 as the driver and io-pgtable-arm as
 * the page-table format (Linux v6.1: iommu_iotlb_gather_add_page in
 * include/linux/iommu.h, __arm_lpae_map and __arm_lpae_unmap in
 * io-pgtable-arm.c; docs/dma-mapping.md).
 *
 * Layers and how they call each other (Linux reaches each arrow marked * through
 * a function pointer; here each costs one "indirect_call", docs/dma-mapping.md):
 *   iommu_map/unmap/map_sg  --*-->  driver op (arm_smmu_map_pages ...)
 *   driver op               --*-->  io-pgtable op (map_pages, unmap_pages)
 *   io-pgtable              --*-->  flush ops (tlb_flush_walk, tlb_add_page)
 *   iommu_iotlb_sync        --*-->  driver iotlb_sync (range TLBI + SYNC)
 *
 * Policies, chosen at iommu_domain_init (each next to its baseline):
 *   walk_flush: how the driver invalidates a removed table (seed 000);
 *   map_sg:     one call chain per list element, or one pass (seed 002);
 *   fanout:     a domain behind several SMMUs syncs each in turn, or all at once.
 *
 * Concurrency: several cores may map and unmap disjoint IOVA ranges of one
 * domain at once (io-pgtable publishes new tables with cmpxchg); a gather
 * belongs to its caller. Stats are plain counters (cores interleave only at
 * HAL calls, so increments are not torn).
 */
#ifndef SMMU_VP_SW_IOMMU_IOMMU_H
#define SMMU_VP_SW_IOMMU_IOMMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hal/hal.h"
#include "iommu/io_pgtable_arm.h"
#include "iommu/iotlb_gather.h"
#include "drivers/smmu/arm_smmu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SMMU instances one domain's streams may sit behind. */
#define IOMMU_DOMAIN_MAX_SMMUS 16

/* Errors, returned negated (io-pgtable's values where they overlap). */
#define IOMMU_EINVAL IO_PGTABLE_EINVAL
#define IOMMU_ENOMEM IO_PGTABLE_ENOMEM
#define IOMMU_EEXIST IO_PGTABLE_EEXIST
#define IOMMU_EIO 5

/* What tlb_flush_walk does when io-pgtable removes a whole table. */
enum iommu_walk_flush_policy {
  /* Baseline (SMMUv2-era arm-smmu, seed 000): one TLBI_NH_VA (Leaf = 0) per
   * granule of the removed subtree, then SYNC, whatever the SMMU's RIL. */
  IOMMU_WALK_FLUSH_VA = 0,
  /* Seed 000's change: one TLBI_NH_ASID for the whole context, then SYNC. */
  IOMMU_WALK_FLUSH_ASID = 1,
};

/* How iommu_map_sg walks a scatter-gather list. */
enum iommu_map_sg_policy {
  /* Baseline (Linux before seed 002): each element runs the whole chain,
   * core -> driver op -> io-pgtable op, as a separate map call. */
  IOMMU_MAP_SG_PER_ELEMENT = 0,
  /* Seed 002 / upstream: one call down to the page-table code for the whole
   * list, which merges elements contiguous in both IOVA and PA and maps each
   * run with the largest page sizes alignment allows, pgcount at a time. */
  IOMMU_MAP_SG_BATCHED = 1,
};

/* How an invalidation reaches the SMMUs of a domain whose streams sit behind
 * several (platform.smmus): nothing changes with one. */
enum iommu_fanout_policy {
  /* Linux since the arm_smmu_invs rework (commit 587bb3e56a2c): the domain's
   * invalidation list is sorted by SMMU, and arm_smmu_domain_inv_range
   * submits one SMMU's batch with its CMD_SYNC, and waits, before it builds
   * the next SMMU's. */
  IOMMU_FANOUT_SERIAL = 0,
  /* Not in Linux, a what-if: every SMMU gets its TLBIs first, then each its
   * CMD_SYNC, so that the SMMUs invalidate at once and the waits overlap. */
  IOMMU_FANOUT_OVERLAP = 1,
};

struct iommu_domain_policy {
  enum iommu_walk_flush_policy walk_flush;
  enum iommu_map_sg_policy map_sg;
  /* The SMMU's table walks do not snoop CPU caches: io-pgtable cleans every
   * descriptor it writes (charged "cache_clean_line"). Off: coherent walks. */
  bool non_coherent_walk;
  /* Linux 4.13 and before: an unmap is one driver call per page-size chunk,
   * each ending with its own TLB sync (a TLBI + CMD_SYNC per 4 KiB page).
   * Off (the default since Zhen Lei's 2017 series, "Thunder patches 2-5"
   * of seed 001): the chunks are gathered and synced once per unmap. */
  bool sync_each_page;
  /* Arm's SMMUv2 driver (arm-smmu.c, on seed 000's MMU-500): iotlb_sync
   * writes TLBSYNC and polls TLBSTATUS whether or not anything was gathered.
   * On this SMMUv3 model: a lone CMD_SYNC when the gather is empty. Off:
   * arm-smmu-v3's iotlb_sync, which has nothing to do then. */
  bool sync_always;
  enum iommu_fanout_policy fanout;
};

/* One element of a scatter-gather list: physically contiguous bytes. */
struct iommu_sg {
  phys_addr_t pa;
  size_t len;
};

struct iommu_stats {
  uint64_t maps;              /* iommu_map calls */
  uint64_t map_sgs;           /* iommu_map_sg calls */
  uint64_t bytes_mapped;
  uint64_t map_pages_calls;   /* io-pgtable map_pages calls */
  uint64_t sg_runs;           /* contiguous runs mapped by the batched map_sg */
  uint64_t unmaps;            /* iommu_unmap and iommu_unmap_fast calls */
  uint64_t bytes_unmapped;
  uint64_t unmap_pages_calls; /* io-pgtable unmap_pages calls */
  uint64_t pages_gathered;    /* leaves recorded by tlb_add_page */
  uint64_t gather_syncs;      /* syncs forced by a leaf of another size or a disjoint range */
  uint64_t iotlb_syncs;       /* iommu_iotlb_sync calls that invalidated a gathered range */
  uint64_t walk_flushes;      /* tlb_flush_walk calls */
  uint64_t flush_alls;        /* whole-context flushes (tlb_flush_all, iommu_flush_iotlb_all) */
  uint64_t tlbi_commands;     /* TLBI commands the driver issued for this domain (SYNCs not counted) */
  uint64_t tlbi_errors;       /* driver invalidations that met a command-queue error */
  uint64_t indirect_calls;    /* "indirect_call" charged */
  uint64_t function_calls;    /* "function_call" charged */
  uint64_t driver_ops;        /* "iommu_driver_op" charged: driver map/unmap op entries */
};

struct iommu_domain {
  struct io_pgtable pgt;      /* the flush ops' cookie is the domain itself */
  struct smmu_device *smmu;
  uint16_t asid;
  struct iommu_domain_policy policy;
  struct smmu_s1_cfg s1;      /* what a CD pointing at pgt needs */
  uint64_t pgsize_bitmap;
  uint64_t min_pgsize;
  struct iommu_stats stats;
  int cost_indirect, cost_call, cost_driver_op; /* hal_cost_lookup handles */
  /* Every SMMU a stream of the domain has been attached behind, `smmu` first:
   * each gets the domain's invalidations (an SMMU stays on the list after
   * its streams detach, so no stale entry can survive there). */
  struct smmu_device *smmus[IOMMU_DOMAIN_MAX_SMMUS];
  unsigned n_smmus;
};

/* Page tables of `granule` (IO_PGTABLE_SZ_4K, _16K or _64K) for 48-bit IOVAs
 * and the SMMU's output size, tagged with `asid`. policy NULL: both
 * baselines, coherent walks. The domain must not move afterwards (the flush
 * ops find it through a pointer). Returns 0 or -IOMMU_E*. */
int iommu_domain_init(struct iommu_domain *dom, struct smmu_device *smmu, uint16_t asid, size_t granule,
                      const struct iommu_domain_policy *policy);
/* Frees the page tables. Detach every stream first. */
void iommu_domain_destroy(struct iommu_domain *dom);

/* Points stream `sid` at the domain's tables (a CD with its TTB0, T0SZ, TG0,
 * IPS, walk attributes and MAIR, then the STE). 0 or -IOMMU_EIO. */
int iommu_attach_device(struct iommu_domain *dom, uint32_t sid);
/* The same for a stream behind another SMMU than the domain's first, which
 * then gets the domain's invalidations too. 0, -IOMMU_EIO, or -IOMMU_ENOMEM
 * beyond IOMMU_DOMAIN_MAX_SMMUS instances. */
int iommu_attach_device_on(struct iommu_domain *dom, struct smmu_device *smmu, uint32_t sid);
/* Lets the endpoint of attached stream `sid` behind `smmu` use ATS (Linux's
 * arm_smmu_enable_ats): its STE is written again with EATS = 0b01, and from
 * then on every invalidation of the domain is followed by a CMD_ATC_INV to
 * it and a CMD_SYNC (IHI 0070 3.9.1.4: after the TLBIs' SYNC). 0,
 * -IOMMU_EINVAL without IDR0.ATS, -IOMMU_ENOMEM beyond IOMMU_MAX_ATS_STREAMS
 * streams in all, or -IOMMU_EIO. */
#define IOMMU_MAX_ATS_STREAMS 64
int iommu_enable_ats(struct iommu_domain *dom, struct smmu_device *smmu, uint32_t sid);
/* The stream aborts from now on. */
int iommu_detach_device(struct iommu_domain *dom, uint32_t sid);
int iommu_detach_device_on(struct iommu_domain *dom, struct smmu_device *smmu, uint32_t sid);

/* Maps [iova, iova + size) to [pa, pa + size) with IOMMU_* prot, each chunk
 * with the largest page size that the alignment of iova and pa and the
 * remaining size allow (Linux's iommu_pgsize), several pages per map_pages
 * call. iova, pa and size must be aligned to the smallest page size. On
 * failure whatever was mapped is unmapped again. 0 or -IOMMU_E*. */
int iommu_map(struct iommu_domain *dom, uint64_t iova, phys_addr_t pa, size_t size, unsigned prot);

/* Unmaps [iova, iova + size) (aligned to the smallest page size), then
 * invalidates what it removed (iotlb sync). Returns the bytes unmapped:
 * less than size when it met a hole or part of a larger block. */
size_t iommu_unmap(struct iommu_domain *dom, uint64_t iova, size_t size);
/* The same without the final sync: removed leaves are left in `gather`
 * (unless gather->queued, when io-pgtable skips them) for the caller's
 * iommu_iotlb_sync or flush queue. Removed tables are still flushed at once. */
size_t iommu_unmap_fast(struct iommu_domain *dom, uint64_t iova, size_t size, struct iommu_iotlb_gather *gather);
/* Invalidates the gathered range through the driver (its TLBI policy:
 * per granule, range, or ASID-wide above its threshold), with a SYNC, and
 * empties the gather (its queued flag stays). Nothing when it is empty. */
void iommu_iotlb_sync(struct iommu_domain *dom, struct iommu_iotlb_gather *gather);
/* Invalidates every translation of the domain's ASID (TLBI_NH_ASID + SYNC). */
void iommu_flush_iotlb_all(struct iommu_domain *dom);

/* Maps the list's elements one after another from iova, by the map_sg
 * policy. Each element covers whole smallest pages: its span is extended
 * down and up to that page size (the DMA layer keeps the offsets, as Linux's
 * dma-iommu prepares a list before mapping it), so element i starts at iova
 * plus the extended lengths of the elements before it. Returns the bytes
 * mapped (the sum of extended lengths), or 0 on failure with nothing left
 * mapped. */
size_t iommu_map_sg(struct iommu_domain *dom, uint64_t iova, const struct iommu_sg *sg, unsigned nents,
                    unsigned prot);
/* The IOVA span iommu_map_sg gives one element (its extended length). */
size_t iommu_sg_span(const struct iommu_domain *dom, const struct iommu_sg *sg);

/* Output address of iova through the domain's tables, 0 when unmapped
 * (core -> driver -> io-pgtable, two indirect calls as in Linux). */
phys_addr_t iommu_iova_to_phys(struct iommu_domain *dom, uint64_t iova);

/* Largest page size of the domain's bitmap that iova, pa and size allow
 * (size at least the smallest page), and in *count how many of them to map
 * in one call: all of size, or as far as a larger page size becomes usable
 * (Linux's iommu_pgsize). Exposed for tests. */
size_t iommu_pgsize(const struct iommu_domain *dom, uint64_t iova, phys_addr_t pa, size_t size, size_t *count);

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_SW_IOMMU_IOMMU_H */

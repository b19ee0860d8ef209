/*
 * What iova.c (the tree) and iova_rcache.c (the per-CPU range caches)
 * share; not for users of the allocator.
 */
#ifndef SMMU_VP_SW_IOMMU_IOVA_INTERNAL_H
#define SMMU_VP_SW_IOMMU_IOVA_INTERNAL_H

#include "iommu/iova.h"

/* The per-CPU block of `cpu` (each on its own cache lines). */
struct iova_cpu *iova_cpu_block(const struct iova_domain *d, unsigned cpu);
/* Charges `count` of a cost class by handle, or by name when the handle is
 * unknown (so an unknown class is reported by name). */
void iova_charge(int handle, const char *name, uint64_t count);
void iova_charge_kmem(const struct iova_domain *d);
/* ceil(log2(n)), 0 for n <= 1. */
uint64_t iova_order_base_2(uint64_t n);
void iova_mag_free(struct iova_domain *d, struct iova_magazine *mag);
/* Frees the ranges starting at each pfn back to the tree (under its lock). */
void iova_tree_free_pfns(struct iova_domain *d, const uint64_t *pfns, uint64_t n);

/* The exclusive limit a search works with; the anchor bounds it. */
static inline uint64_t iova_limit_exclusive(uint64_t limit_pfn) {
  return limit_pfn >= IOVA_ANCHOR_PFN - 1 ? IOVA_ANCHOR_PFN : limit_pfn + 1;
}

#endif

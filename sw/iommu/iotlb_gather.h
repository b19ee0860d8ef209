/*
 * IOTLB gather: the range of IOVAs whose leaf entries were removed by an unmap
 * and still need invalidating. io-pgtable reports each cleared leaf through
 * iommu_flush_ops.tlb_add_page; the driver records it here, and the IOMMU core
 * decides when to sync (one range invalidation plus CMD_SYNC), as Linux's
 * struct iommu_iotlb_gather. Only plain data helpers live here: the sync
 * policy belongs to the core.
 */
#ifndef SMMU_VP_SW_IOMMU_IOTLB_GATHER_H
#define SMMU_VP_SW_IOMMU_IOTLB_GATHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct iommu_iotlb_gather {
  uint64_t start;  /* lowest IOVA gathered; ~0 when empty */
  uint64_t end;    /* last byte gathered (inclusive); 0 when empty */
  size_t pgsize;   /* leaf size of the gathered entries; 0 when empty */
  /* The invalidation is deferred to a flush queue (non-strict mode), which
   * invalidates the whole context later, so per-page tracking is skipped. */
  bool queued;
};

static inline void iommu_iotlb_gather_init(struct iommu_iotlb_gather *gather) {
  gather->start = ~(uint64_t)0;
  gather->end = 0;
  gather->pgsize = 0;
  gather->queued = false;
}

static inline bool iommu_iotlb_gather_empty(const struct iommu_iotlb_gather *gather) {
  return gather->start > gather->end;
}

/* True when [iova, iova + size) neither overlaps nor touches the gathered
 * range: merging it would make the range cover IOVAs never unmapped. */
static inline bool iommu_iotlb_gather_is_disjoint(const struct iommu_iotlb_gather *gather, uint64_t iova,
                                                  size_t size) {
  const uint64_t last = iova + size - 1;
  return !iommu_iotlb_gather_empty(gather) && (last + 1 < gather->start || iova > gather->end + 1);
}

static inline void iommu_iotlb_gather_add_range(struct iommu_iotlb_gather *gather, uint64_t iova, size_t size) {
  const uint64_t last = iova + size - 1;
  if (iova < gather->start) gather->start = iova;
  if (last > gather->end) gather->end = last;
}

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_SW_IOMMU_IOTLB_GATHER_H */

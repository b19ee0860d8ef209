/* What the NVMe driver's files share. */
#ifndef SMMU_VP_SW_DRIVERS_NVME_INTERNAL_H
#define SMMU_VP_SW_DRIVERS_NVME_INTERNAL_H

#include "drivers/nvme/nvme.h"

/* dma_map_single through the IOMMU, or the physical address (dma-direct). */
static inline uint64_t nvme_map(struct nvme_ctrl *c, phys_addr_t pa, size_t len, enum dma_data_direction dir) {
  if (c->dma) return dma_map_single(c->dma, pa, len, dir);
  hal_cost_id(c->cost_call, 1);
  return pa;
}

static inline void nvme_unmap(struct nvme_ctrl *c, uint64_t dma, size_t len, enum dma_data_direction dir) {
  if (c->dma) dma_unmap_single(c->dma, dma, len, dir);
  else hal_cost_id(c->cost_call, 1);
}

#endif

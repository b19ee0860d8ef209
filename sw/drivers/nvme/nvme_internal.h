/* What the NVMe driver's files share. */
#ifndef SMMU_VP_SW_DRIVERS_NVME_INTERNAL_H
#define SMMU_VP_SW_DRIVERS_NVME_INTERNAL_H

#include "drivers/dma_map.h"
#include "drivers/nvme/nvme.h"

static inline uint64_t nvme_map(struct nvme_ctrl *c, phys_addr_t pa, size_t len, enum dma_data_direction dir) {
  return drv_dma_map(c->dma, c->cost_call, pa, len, dir);
}

static inline void nvme_unmap(struct nvme_ctrl *c, uint64_t dma, size_t len, enum dma_data_direction dir) {
  drv_dma_unmap(c->dma, c->cost_call, dma, len, dir);
}

#endif

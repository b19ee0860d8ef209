/* What a driver calls to map a buffer: the DMA API through the IOMMU when
 * the device has a DMA domain, else the physical address (Linux's
 * dma-direct: one call, nothing to set up). */
#ifndef SMMU_VP_SW_DRIVERS_DMA_MAP_H
#define SMMU_VP_SW_DRIVERS_DMA_MAP_H

#include "hal/hal.h"
#include "iommu/dma_iommu.h"

static inline uint64_t drv_dma_map(struct dma_dev *dma, int cost_call, phys_addr_t pa, size_t len,
                                   enum dma_data_direction dir) {
  if (dma) return dma_map_single(dma, pa, len, dir);
  hal_cost_id(cost_call, 1);
  return pa;
}

static inline void drv_dma_unmap(struct dma_dev *dma, int cost_call, uint64_t addr, size_t len,
                                 enum dma_data_direction dir) {
  if (dma) dma_unmap_single(dma, addr, len, dir);
  else hal_cost_id(cost_call, 1);
}

#endif

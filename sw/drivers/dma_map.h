/* What a driver calls to map a buffer: the DMA API through the IOMMU when
 * the device has a DMA domain, else the physical address (Linux's
 * dma-direct: one call, nothing to set up). */
#ifndef SMMU_VP_SW_DRIVERS_DMA_MAP_H
#define SMMU_VP_SW_DRIVERS_DMA_MAP_H

#include <stdbool.h>

#include "hal/hal.h"
#include "iommu/dma_iommu.h"

static inline uint64_t drv_dma_map(struct dma_dev *dma, int cost_call, phys_addr_t pa, size_t len,
                                   enum dma_data_direction dir) {
  if (dma) return dma_map_single(dma, pa, len, dir);
  hal_cost_id(cost_call, 1);
  return pa;
}

/* Set by an app that reports each unmap's latency (the `unmap_ns`
 * histogram of its stats, sampled around dma_unmap_single); off by default,
 * as reading the clock synchronises the core's time. */
extern bool drv_dma_time_unmaps;

static inline void drv_dma_unmap(struct dma_dev *dma, int cost_call, uint64_t addr, size_t len,
                                 enum dma_data_direction dir) {
  if (!dma) {
    hal_cost_id(cost_call, 1);
    return;
  }
  if (!drv_dma_time_unmaps) {
    dma_unmap_single(dma, addr, len, dir);
    return;
  }
  const uint64_t t0 = hal_now_ns();
  dma_unmap_single(dma, addr, len, dir);
  hal_stat_sample("unmap_ns", hal_now_ns() - t0);
}

#endif

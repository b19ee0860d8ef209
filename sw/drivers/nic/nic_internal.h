/* What the NIC driver's files share. */
#ifndef SMMU_VP_SW_DRIVERS_NIC_INTERNAL_H
#define SMMU_VP_SW_DRIVERS_NIC_INTERNAL_H

#include "drivers/nic/nic.h"

/* dma_map_single through the IOMMU, or the physical address (dma-direct:
 * one call, no translation to set up). */
static inline uint64_t nic_dma_map(struct nic_dev *nic, phys_addr_t pa, size_t len, enum dma_data_direction dir) {
  if (nic->dma) return dma_map_single(nic->dma, pa, len, dir);
  hal_cost_id(nic->cost_call, 1);
  return pa;
}

static inline void nic_dma_unmap(struct nic_dev *nic, uint64_t dma, size_t len, enum dma_data_direction dir) {
  if (nic->dma) dma_unmap_single(nic->dma, dma, len, dir);
  else hal_cost_id(nic->cost_call, 1);
}

/* Unmaps every buffer of a ring that is still mapped. */
void nic_ring_release(struct nic_queue *q, struct nic_ring *r, enum dma_data_direction dir);

#endif

/* What the NIC driver's files share. */
#ifndef SMMU_VP_SW_DRIVERS_NIC_INTERNAL_H
#define SMMU_VP_SW_DRIVERS_NIC_INTERNAL_H

#include "drivers/dma_map.h"
#include "drivers/nic/nic.h"

static inline uint64_t nic_dma_map(struct nic_dev *nic, phys_addr_t pa, size_t len, enum dma_data_direction dir) {
  return drv_dma_map(nic->dma, nic->cost_call, pa, len, dir);
}

static inline void nic_dma_unmap(struct nic_dev *nic, uint64_t dma, size_t len, enum dma_data_direction dir) {
  drv_dma_unmap(nic->dma, nic->cost_call, dma, len, dir);
}

/* Unmaps every buffer of a ring that is still mapped. */
void nic_ring_release(struct nic_queue *q, struct nic_ring *r, enum dma_data_direction dir);

#endif

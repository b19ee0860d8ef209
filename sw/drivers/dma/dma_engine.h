/*
 * Driver for the generic DMA engine (register map: models/dma/dma_registers.h,
 * docs/devices.md). One channel, one transfer at a time; completion by wired
 * interrupt, MSI, or polling STATUS.
 */
#ifndef SMMU_VP_SW_DRIVERS_DMA_ENGINE_H
#define SMMU_VP_SW_DRIVERS_DMA_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "hal/hal.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dma_engine {
  phys_addr_t base;
  unsigned channels;
  unsigned irq; /* channel n raises irq + n */
  uint32_t stream_id;
  uint32_t burst_bytes;
};

enum dma_completion {
  DMA_COMPLETE_POLL = 0, /* software polls STATUS */
  DMA_COMPLETE_IRQ = 1,  /* wired interrupt */
  DMA_COMPLETE_MSI = 2,  /* MSI write of the channel's line to the interrupt doorbell */
};

/* Finds the device by name and checks its ID register. 0 on success. */
int dma_engine_probe(struct dma_engine *dma, const char *name);
unsigned dma_engine_channel_irq(const struct dma_engine *dma, unsigned ch);
/* Programs and starts a copy; the channel must be idle. */
void dma_engine_start(const struct dma_engine *dma, unsigned ch, phys_addr_t src, phys_addr_t dst,
                      uint32_t len, enum dma_completion how);
uint32_t dma_engine_status(const struct dma_engine *dma, unsigned ch);
/* Clears DONE and ERROR; returns the error code the transfer ended with. */
uint32_t dma_engine_ack(const struct dma_engine *dma, unsigned ch);
/* Polls STATUS until the channel is no longer busy; returns STATUS. */
uint32_t dma_engine_wait_poll(const struct dma_engine *dma, unsigned ch);

#ifdef __cplusplus
}
#endif

#endif

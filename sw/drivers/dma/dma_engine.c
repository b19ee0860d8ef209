#include "drivers/dma/dma_engine.h"

#include "dma/dma_registers.h"

static phys_addr_t ch_reg(const struct dma_engine *dma, unsigned ch, uint32_t reg) {
  return dma->base + DMA_CH_REG(ch, reg);
}

int dma_engine_probe(struct dma_engine *dma, const char *name) {
  struct hal_device_info info;
  if (hal_device_find(name, &info) != 0) return -1;
  if (hal_read32(info.base + DMA_REG_ID) != DMA_ID_VALUE) return -1;
  dma->base = info.base;
  dma->irq = info.irq;
  dma->stream_id = info.stream_id;
  dma->channels = hal_read32(info.base + DMA_REG_CHANNELS);
  dma->burst_bytes = hal_read32(info.base + DMA_REG_BURST);
  return dma->channels ? 0 : -1;
}

unsigned dma_engine_channel_irq(const struct dma_engine *dma, unsigned ch) { return dma->irq + ch; }

void dma_engine_start(const struct dma_engine *dma, unsigned ch, phys_addr_t src, phys_addr_t dst,
                      uint32_t len, enum dma_completion how) {
  uint32_t ctrl = DMA_CTRL_GO;
  hal_write64(ch_reg(dma, ch, DMA_CH_SRC_LO), src);
  hal_write64(ch_reg(dma, ch, DMA_CH_DST_LO), dst);
  hal_write32(ch_reg(dma, ch, DMA_CH_LEN), len);
  if (how == DMA_COMPLETE_IRQ) ctrl |= DMA_CTRL_IRQ_EN;
  if (how == DMA_COMPLETE_MSI) {
    hal_write64(ch_reg(dma, ch, DMA_CH_MSI_ADDR_LO), hal_msi_doorbell());
    hal_write32(ch_reg(dma, ch, DMA_CH_MSI_DATA), dma_engine_channel_irq(dma, ch));
    ctrl |= DMA_CTRL_MSI_EN;
  }
  /* The buffers written through plain pointers must be visible before GO. */
  hal_barrier(HAL_BARRIER_DSB);
  hal_write32(ch_reg(dma, ch, DMA_CH_CTRL), ctrl);
}

uint32_t dma_engine_status(const struct dma_engine *dma, unsigned ch) {
  return hal_read32(ch_reg(dma, ch, DMA_CH_STATUS));
}

uint32_t dma_engine_ack(const struct dma_engine *dma, unsigned ch) {
  const uint32_t st = dma_engine_status(dma, ch);
  hal_write32(ch_reg(dma, ch, DMA_CH_STATUS), st & (DMA_STATUS_DONE | DMA_STATUS_ERROR));
  return (st & DMA_STATUS_ERROR) ? (st & DMA_STATUS_ERR_MASK) >> DMA_STATUS_ERR_SHIFT : DMA_ERR_NONE;
}

uint32_t dma_engine_wait_poll(const struct dma_engine *dma, unsigned ch) {
  uint32_t st;
  while ((st = dma_engine_status(dma, ch)) & DMA_STATUS_BUSY) hal_cpu_relax();
  return st;
}

/* Camera driver: probe, streaming, the buffer queue. */
#include "drivers/camera/camera.h"

#include "lib/string.h"

static uint32_t rd32(const struct cam_dev *c, uint32_t off) { return hal_read32(c->info.base + off); }
static void wr32(const struct cam_dev *c, uint32_t off, uint32_t v) { hal_write32(c->info.base + off, v); }

uint64_t cam_read_stat(const struct cam_dev *cam, uint32_t reg) { return hal_read64(cam->info.base + reg); }

int cam_probe(struct cam_dev *c, const char *name, struct dma_dev *dma) {
  sw_memset(c, 0, sizeof *c);
  if (hal_device_find(name, &c->info) != 0) {
    hal_log(HAL_LOG_ERROR, "camera: no device named %s", name);
    return -1;
  }
  if (rd32(c, CAM_REG_ID) != CAM_ID_VALUE) {
    hal_log(HAL_LOG_ERROR, "camera: %s is not a camera (ID register)", name);
    return -1;
  }
  c->dma = dma;
  c->width = rd32(c, CAM_REG_WIDTH);
  c->height = rd32(c, CAM_REG_HEIGHT);
  c->bpp = rd32(c, CAM_REG_BPP);
  c->line_bytes = rd32(c, CAM_REG_LINE_BYTES);
  c->frame_bytes = rd32(c, CAM_REG_FRAME_BYTES);
  c->fps_milli = rd32(c, CAM_REG_FPS_MILLI);
  c->queue_depth = rd32(c, CAM_REG_QUEUE_DEPTH);
  /* The interrupt doorbell's page, mapped once for the frame-done MSI. */
  const phys_addr_t doorbell = hal_msi_doorbell();
  c->msi_dma = doorbell & ~(phys_addr_t)4095;
  if (dma) {
    c->msi_dma = dma_map_single(dma, c->msi_dma, 4096, DMA_BIDIRECTIONAL);
    if (c->msi_dma == DMA_MAPPING_ERROR) {
      hal_log(HAL_LOG_ERROR, "camera: cannot map the MSI doorbell");
      return -1;
    }
  }
  c->msi_dma += doorbell & 4095;
  return 0;
}

static void cam_irq_handler(unsigned irq, void *ctx) {
  (void)irq;
  struct cam_dev *c = (struct cam_dev *)ctx;
  c->stats.irqs++;
  c->irq_pending = 1;
}

int cam_start(struct cam_dev *c) {
  if (hal_irq_register(c->info.irq, cam_irq_handler, c) != 0) {
    hal_log(HAL_LOG_ERROR, "camera: interrupt line %u is taken or does not exist", c->info.irq);
    return -1;
  }
  wr32(c, CAM_REG_MSI_ADDR_LO, (uint32_t)c->msi_dma);
  wr32(c, CAM_REG_MSI_ADDR_HI, (uint32_t)(c->msi_dma >> 32));
  wr32(c, CAM_REG_MSI_DATA, c->info.irq);
  hal_barrier(HAL_BARRIER_DSB);
  wr32(c, CAM_REG_CTRL, CAM_CTRL_EN | CAM_CTRL_MSI_EN);
  return 0;
}

void cam_stop(struct cam_dev *c) {
  wr32(c, CAM_REG_CTRL, 0);
  hal_irq_unregister(c->info.irq);
}

int cam_buffer_map(struct cam_dev *c, struct cam_buffer *b) {
  if (b->mapped) return 0;
  if (c->dma) {
    if (dma_map_sg(c->dma, b->sg, b->nents, DMA_FROM_DEVICE, b->dma_addrs) != (int)b->nents) {
      c->stats.map_failures++;
      return -1;
    }
  } else {
    /* dma-direct: the camera needs the pages to follow each other. */
    for (unsigned i = 0; i < b->nents; i++) {
      if (i && b->sg[i].pa != b->sg[i - 1].pa + b->sg[i - 1].len) {
        c->stats.map_failures++;
        return -1;
      }
      b->dma_addrs[i] = b->sg[i].pa;
    }
  }
  b->dma = b->dma_addrs[0];
  b->mapped = true;
  return 0;
}

void cam_buffer_unmap(struct cam_dev *c, struct cam_buffer *b) {
  if (!b->mapped) return;
  if (c->dma) dma_unmap_sg(c->dma, b->sg, b->nents, DMA_FROM_DEVICE, b->dma_addrs);
  b->mapped = false;
}

int cam_queue(struct cam_dev *c, struct cam_buffer *b) {
  if (!b->mapped || b->queued) return -1;
  wr32(c, CAM_REG_BUF_ADDR_LO, (uint32_t)b->dma);
  wr32(c, CAM_REG_BUF_ADDR_HI, (uint32_t)(b->dma >> 32));
  wr32(c, CAM_REG_BUF_LEN, (uint32_t)b->bytes);
  hal_barrier(HAL_BARRIER_DSB);
  wr32(c, CAM_REG_BUF_ID, b->id);
  const uint32_t err = rd32(c, CAM_REG_ERR_STATUS) &
                       (CAM_ERR_QUEUE_FULL | CAM_ERR_BUF_TOO_SMALL | CAM_ERR_BUF_ALIGN);
  if (err) {
    wr32(c, CAM_REG_ERR_STATUS, err);
    hal_log(HAL_LOG_ERROR, "camera: buffer %u refused (ERR_STATUS 0x%x)", b->id, err);
    return -1;
  }
  b->queued = true;
  c->stats.queued++;
  return 0;
}

int cam_dequeue(struct cam_dev *c, struct cam_frame *f) {
  const uint32_t v = rd32(c, CAM_REG_DONE_POP);
  if (v == CAM_DONE_EMPTY) return 0;
  f->id = (uint16_t)CAM_DONE_ID(v);
  f->status = v & (CAM_DONE_CORRUPTED | CAM_DONE_DMA_FAULT);
  f->seq = rd32(c, CAM_REG_DONE_SEQ);
  f->start_ns = (uint64_t)rd32(c, CAM_REG_DONE_TIME_LO) | ((uint64_t)rd32(c, CAM_REG_DONE_TIME_HI) << 32);
  c->stats.dequeued++;
  if (f->status) c->stats.corrupted++;
  return 1;
}

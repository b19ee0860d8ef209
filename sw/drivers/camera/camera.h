/*
 * Driver for the camera's capture DMA (registers: models/camera/camera_regs.h;
 * docs/devices.md#camera, docs/camera.md), shaped like a V4L2 buffer queue:
 * frame buffers of physically scattered pages are mapped with dma_map_sg
 * (one IOVA range, so the camera sees a contiguous buffer), queued to the
 * camera, dequeued when captured, handed to a consumer and unmapped when the
 * consumer is done (or kept mapped and queued again: the buffer policy is the
 * caller's). Completion by the frame-done interrupt (MSI through the SMMU).
 */
#ifndef SMMU_VP_SW_DRIVERS_CAMERA_H
#define SMMU_VP_SW_DRIVERS_CAMERA_H

#include <stdbool.h>
#include <stdint.h>

#include "camera/camera_regs.h"
#include "hal/hal.h"
#include "iommu/dma_iommu.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cam_buffer {
  uint16_t id;
  struct iommu_sg *sg;  /* its pages */
  unsigned nents;
  uint64_t *dma_addrs;  /* per element, from dma_map_sg */
  uint64_t dma;         /* the buffer's device address (its first element's) */
  uint64_t bytes;
  bool mapped, queued;
};

struct cam_frame {
  uint16_t id;
  uint32_t status;      /* CAM_DONE_CORRUPTED, CAM_DONE_DMA_FAULT */
  uint32_t seq;
  uint64_t start_ns;    /* the frame's first line, as the camera stamped it */
};

struct cam_stats {
  uint64_t queued, dequeued, corrupted, map_failures, irqs;
};

struct cam_dev {
  struct hal_device_info info;
  struct dma_dev *dma;  /* NULL: physical device addresses (buffers must then be contiguous) */
  uint32_t width, height, bpp, line_bytes, frame_bytes, fps_milli, queue_depth;
  uint64_t msi_dma;
  volatile uint32_t irq_pending;
  struct cam_stats stats;
};

/* Finds device `name`, checks its ID, reads its geometry, maps the MSI
 * doorbell. 0, or -1 logged. */
int cam_probe(struct cam_dev *cam, const char *name, struct dma_dev *dma);
/* Routes the frame-done interrupt to the calling core and starts streaming. */
int cam_start(struct cam_dev *cam);
void cam_stop(struct cam_dev *cam);
/* Maps the buffer's pages (dma_map_sg). 0; -1 when the mapping failed or,
 * without an IOMMU, the pages are not contiguous. */
int cam_buffer_map(struct cam_dev *cam, struct cam_buffer *b);
void cam_buffer_unmap(struct cam_dev *cam, struct cam_buffer *b);
/* Hands a mapped buffer to the camera. 0, or -1 when the camera refused it
 * (ERR_STATUS says why, logged). */
int cam_queue(struct cam_dev *cam, struct cam_buffer *b);
/* Pops one captured buffer. 1 with *f filled, 0 when none is waiting. */
int cam_dequeue(struct cam_dev *cam, struct cam_frame *f);
/* A 64-bit statistics register (CAM_STAT_*). */
uint64_t cam_read_stat(const struct cam_dev *cam, uint32_t reg);

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_SW_DRIVERS_CAMERA_H */

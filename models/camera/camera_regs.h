/*
 * Camera (capture DMA of an image sensor): register block, buffer queue and
 * the pattern the sensor produces (docs/devices.md#camera). Declared once;
 * used by the model (models/camera), the driver (sw/drivers/camera) and the
 * tests. Registers are 32 bits wide; statistics are 64-bit (a 64-bit read, or
 * two 32-bit reads low then high).
 *
 * The sensor streams frames of HEIGHT lines of LINE_BYTES (WIDTH x BPP) at
 * the configured frame rate; each line is followed by the next after one line
 * time (frame time / (HEIGHT + vertical blanking lines)). A line enters the
 * on-chip line FIFO when the sensor has produced it; the capture DMA drains
 * the FIFO, writing line y of a frame to buffer address + y * LINE_BYTES in
 * bursts through the master port (through the SMMU, with the camera's
 * StreamID).
 *
 * Buffers: the driver queues empty buffers by writing BUF_ADDR_LO/HI and
 * BUF_LEN, then BUF_ID (the write of BUF_ID pushes {address, length, id} onto
 * the buffer queue of QUEUE_DEPTH entries). At each frame start the camera
 * takes the oldest queued buffer; with none queued the whole frame is dropped
 * (FRAMES_DROPPED). A frame whose line found the FIFO full (DMA writes too
 * slow), or whose write was aborted by the SMMU, is still completed but
 * flagged CORRUPTED (and DMA_FAULT). When a frame's last line is written the
 * buffer goes to the done queue and the frame-done interrupt is raised (MSI
 * if CTRL.MSI_EN: a 32-bit write of MSI_DATA to MSI_ADDR; else wired line irq
 * if CTRL.IRQ_EN). The driver pops done buffers by reading DONE_POP.
 *
 * Bad programming never stops the model: a buffer queued when the queue is
 * full, or shorter than a frame, or not 64-byte aligned, sets its bit in
 * ERR_STATUS, is counted in PROG_ERRORS and is not used.
 */
#ifndef SMMU_VP_MODELS_CAMERA_CAMERA_REGS_H
#define SMMU_VP_MODELS_CAMERA_CAMERA_REGS_H

#ifdef __cplusplus
#include <cstdint>
#else
#include <stdint.h>
#endif

#define CAM_REG_ID 0x000u          /* RO: CAM_ID_VALUE */
#define CAM_REG_CTRL 0x004u        /* RW: CAM_CTRL_* */
#define CAM_REG_STATUS 0x008u      /* RO: CAM_STATUS_* */
#define CAM_REG_ERR_STATUS 0x00Cu  /* W1C: CAM_ERR_* */
#define CAM_REG_WIDTH 0x010u       /* RO: pixels per line */
#define CAM_REG_HEIGHT 0x014u      /* RO: lines per frame */
#define CAM_REG_BPP 0x018u         /* RO: bytes per pixel */
#define CAM_REG_FPS_MILLI 0x01Cu   /* RO: frames per 1000 seconds */
#define CAM_REG_LINE_BYTES 0x020u  /* RO: WIDTH x BPP */
#define CAM_REG_FRAME_BYTES 0x024u /* RO: LINE_BYTES x HEIGHT: the smallest buffer */
#define CAM_ID_VALUE 0x43414D31u   /* "CAM1" */

#define CAM_CTRL_EN (1u << 0)      /* stream: frames start while set */
#define CAM_CTRL_IRQ_EN (1u << 1)  /* frame done raises wired line irq */
#define CAM_CTRL_MSI_EN (1u << 2)  /* frame done writes MSI_DATA to MSI_ADDR (takes precedence) */

#define CAM_STATUS_STREAMING (1u << 0)

#define CAM_ERR_QUEUE_FULL (1u << 0)    /* a buffer was queued onto a full queue */
#define CAM_ERR_BUF_TOO_SMALL (1u << 1) /* BUF_LEN < FRAME_BYTES */
#define CAM_ERR_BUF_ALIGN (1u << 2)     /* BUF_ADDR not 64-byte aligned */
#define CAM_ERR_DMA (1u << 3)           /* a line write was aborted */
#define CAM_ERR_MSI (1u << 4)           /* an MSI write was aborted */

/* ---- Buffer queue. */
#define CAM_REG_BUF_ADDR_LO 0x040u
#define CAM_REG_BUF_ADDR_HI 0x044u
#define CAM_REG_BUF_LEN 0x048u
#define CAM_REG_BUF_ID 0x04Cu      /* WO: pushes {ADDR, LEN, id} */
#define CAM_REG_QUEUE_LEVEL 0x050u /* RO: buffers queued */
#define CAM_REG_QUEUE_DEPTH 0x054u /* RO */

/* ---- Done queue: DONE_POP reads the oldest captured buffer's id and
 * status and removes it; CAM_DONE_EMPTY when there is none. The frame's
 * sequence number and start time are then in DONE_SEQ and DONE_TIME_*. */
#define CAM_REG_DONE_POP 0x060u
#define CAM_REG_DONE_COUNT 0x064u  /* RO: entries waiting */
#define CAM_REG_DONE_SEQ 0x068u    /* RO: frame sequence number of the last pop */
#define CAM_REG_DONE_TIME_LO 0x070u /* RO: its first line's time, ns */
#define CAM_REG_DONE_TIME_HI 0x074u
#define CAM_DONE_EMPTY 0xFFFFFFFFu
#define CAM_DONE_ID(v) ((v) & 0xFFFFu)
#define CAM_DONE_CORRUPTED (1u << 16) /* a line was lost (FIFO full) or aborted */
#define CAM_DONE_DMA_FAULT (1u << 17) /* ... by the SMMU */

/* ---- Frame-done interrupt. */
#define CAM_REG_MSI_ADDR_LO 0x080u
#define CAM_REG_MSI_ADDR_HI 0x084u
#define CAM_REG_MSI_DATA 0x088u

/* ---- Statistics (64-bit, RO). */
#define CAM_STAT_FRAMES_CAPTURED 0x100u  /* completed, corrupted ones included */
#define CAM_STAT_FRAMES_DROPPED 0x108u   /* no buffer queued at frame start */
#define CAM_STAT_FRAMES_CORRUPTED 0x110u
#define CAM_STAT_LINES_LOST 0x118u       /* lines that found the FIFO full */
#define CAM_STAT_DMA_FAULTS 0x120u       /* aborted line writes */
#define CAM_STAT_PROG_ERRORS 0x128u
#define CAM_REG_BLOCK_SIZE 0x1000u

/* ---- What the sensor produces: byte x of line y of frame `seq`. */
static inline uint8_t cam_pattern_byte(uint32_t seq, uint32_t y, uint32_t x) {
  return (uint8_t)((seq * 29u) ^ (y * 7u) ^ (x * 3u) ^ (x >> 8) ^ (y >> 4));
}

#endif /* SMMU_VP_MODELS_CAMERA_CAMERA_REGS_H */

#include "drivers/edu/edu.h"

#define EDU_REG_ID 0x00u
#define EDU_REG_LIVENESS 0x04u
#define EDU_REG_DMA_SRC 0x80u
#define EDU_REG_DMA_DST 0x88u
#define EDU_REG_DMA_COUNT 0x90u
#define EDU_REG_DMA_CMD 0x98u
#define EDU_DMA_CMD_START 0x1u
#define EDU_DMA_CMD_TO_MEMORY 0x2u

int edu_probe(struct edu_device *edu, const char *name) {
  struct hal_device_info info;
  if (hal_device_find(name, &info) != 0) return -1;
  if (hal_read32(info.base + EDU_REG_ID) != EDU_ID_VALUE) return -1;
  /* The liveness register inverts what it is given: a device that merely
   * reads as the right ID (or all ones) fails here. */
  const uint32_t probe = 0x5A5AF00Du;
  hal_write32(info.base + EDU_REG_LIVENESS, probe);
  if (hal_read32(info.base + EDU_REG_LIVENESS) != ~probe) return -1;
  edu->base = info.base;
  edu->stream_id = info.stream_id;
  edu->irq = info.irq;
  return 0;
}

bool edu_dma_busy(const struct edu_device *edu) {
  return (hal_read32(edu->base + EDU_REG_DMA_CMD) & EDU_DMA_CMD_START) != 0;
}

static int run(const struct edu_device *edu, uint64_t src, uint64_t dst, uint32_t len, uint32_t cmd,
               uint64_t timeout_ns) {
  /* The device ignores new addresses while a transfer runs. */
  if (edu_dma_busy(edu)) return -1;
  hal_write64(edu->base + EDU_REG_DMA_SRC, src);
  hal_write64(edu->base + EDU_REG_DMA_DST, dst);
  hal_write64(edu->base + EDU_REG_DMA_COUNT, len);
  /* Buffers the CPU wrote must be visible to the device before it starts. */
  hal_barrier(HAL_BARRIER_DSB);
  hal_write32(edu->base + EDU_REG_DMA_CMD, cmd | EDU_DMA_CMD_START);
  const uint64_t give_up = hal_now_ns() + timeout_ns;
  while (edu_dma_busy(edu)) {
    if (hal_now_ns() > give_up) return -1;
    hal_delay_ns(100000);
  }
  /* What the device wrote is read after the completion was seen. */
  hal_barrier(HAL_BARRIER_DSB);
  return 0;
}

static bool in_buffer(uint32_t off, uint32_t len) { return len && off <= EDU_BUF_SIZE && len <= EDU_BUF_SIZE - off; }

/* The whole memory side must lie below the device's 28-bit limit: it would
 * silently clamp a larger address to another one. */
static bool in_dma_range(uint64_t addr, uint32_t len) { return addr <= EDU_DMA_MASK && len - 1 <= EDU_DMA_MASK - addr; }

int edu_dma_to_device(const struct edu_device *edu, uint64_t dma_src, uint32_t buf_off, uint32_t len,
                      uint64_t timeout_ns) {
  if (!in_buffer(buf_off, len) || !in_dma_range(dma_src, len)) return -1;
  return run(edu, dma_src, EDU_BUF_ADDR + buf_off, len, 0, timeout_ns);
}

int edu_dma_from_device(const struct edu_device *edu, uint32_t buf_off, uint64_t dma_dst, uint32_t len,
                        uint64_t timeout_ns) {
  if (!in_buffer(buf_off, len) || !in_dma_range(dma_dst, len)) return -1;
  return run(edu, EDU_BUF_ADDR + buf_off, dma_dst, len, EDU_DMA_CMD_TO_MEMORY, timeout_ns);
}

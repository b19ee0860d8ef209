/*
 * hello_firmware: a minimal firmware image for `smmu-vp run --firmware`.
 *
 * It runs on every core the scenario leaves free. Core 0 copies a buffer with
 * the DMA engine by programming its registers directly and polls for
 * completion; every core adds to a shared counter with an atomic and waits
 * for the others at a barrier. It returns 0 only if the data arrived intact
 * and every core checked in. See docs/firmware.md.
 */
#include <stdint.h>

#include "dma/dma_registers.h"
#include "hal/hal.h"
#include "lib/compiler.h"

/* Shared by every core through HAL atomics: on a cache line of its own, so
 * that no other data the compiler places beside it shares the line. */
static SW_CACHELINE_ALIGNED volatile uint32_t arrived;

static int copy_with_dma(uint32_t bytes) {
  struct hal_device_info dma;
  if (hal_device_find("dma0", &dma) != 0 || hal_read32(dma.base + DMA_REG_ID) != DMA_ID_VALUE) {
    hal_log(HAL_LOG_ERROR, "hello_firmware: no DMA engine dma0");
    return -1;
  }
  phys_addr_t src_pa, dst_pa;
  uint8_t *src = hal_dma_alloc(bytes, 64, &src_pa);
  uint8_t *dst = hal_dma_alloc(bytes, 64, &dst_pa);
  if (!src || !dst) return -1;
  for (uint32_t i = 0; i < bytes; i++) src[i] = (uint8_t)(i * 7 + 3);

  hal_write64(dma.base + DMA_CH_REG(0, DMA_CH_SRC_LO), src_pa);
  hal_write64(dma.base + DMA_CH_REG(0, DMA_CH_DST_LO), dst_pa);
  hal_write32(dma.base + DMA_CH_REG(0, DMA_CH_LEN), bytes);
  hal_barrier(HAL_BARRIER_DSB);
  const uint64_t t0 = hal_now_ns();
  hal_write32(dma.base + DMA_CH_REG(0, DMA_CH_CTRL), DMA_CTRL_GO);
  uint32_t status;
  while ((status = hal_read32(dma.base + DMA_CH_REG(0, DMA_CH_STATUS))) & DMA_STATUS_BUSY) hal_cpu_relax();
  hal_stat_sample("dma_ns", hal_now_ns() - t0);
  if (status & DMA_STATUS_ERROR) return -1;
  for (uint32_t i = 0; i < bytes; i++)
    if (dst[i] != src[i]) return -1;
  hal_dma_free(src);
  hal_dma_free(dst);
  return 0;
}

static int hello_main(void) {
  const unsigned cpu = hal_cpu_id();
  hal_log(HAL_LOG_INFO, "hello from cpu %u of %u", cpu, hal_cpu_count());
  if (cpu == 0 && copy_with_dma((uint32_t)hal_param("bytes")) != 0) return 1;

  /* Everyone checks in, then waits for the others (sleeping in WFE). */
  hal_fetch_add32(&arrived, 1);
  hal_sev();
  const uint32_t expected = (uint32_t)hal_param("cores_expected");
  while (expected && hal_load32(&arrived) < expected) hal_wfe();
  hal_stat_add("checked_in", 1);
  return 0;
}

static const struct hal_param_decl hello_params[] = {
    {"bytes", 4096, "Bytes core 0 copies with the DMA engine.", 0, 0},
    {"cores_expected", 0, "Cores that must check in before any returns (0: don't wait).", 0, 0},
    {0, 0, 0, 0, 0},
};

HAL_FIRMWARE("hello_firmware", "Example firmware: a DMA copy on core 0 and a barrier on all cores.", hello_main,
             hello_params);

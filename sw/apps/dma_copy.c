/*
 * dma_copy: each core drives its own channel of a DMA engine (channel =
 * cpu id modulo the channel count), copying one buffer to another `transfers`
 * times and waiting for each completion in WFI. After every completion it
 * updates shared bookkeeping under the shared lock, then checks the data.
 */
#include "apps/app_instance.h"
#include "apps/shared_lock.h"
#include "dma/dma_registers.h"
#include "drivers/dma/dma_engine.h"
#include "hal/hal.h"
#include "lib/compiler.h"
#include "lib/string.h"

#define MAX_CORES 64

static struct dma_engine dma;
static SW_CACHELINE_ALIGNED volatile uint32_t done[MAX_CORES];

static void on_completion(unsigned irq, void *ctx) {
  (void)irq;
  volatile uint32_t *flag = ctx;
  hal_store32(flag, 1);
}

static void fill(uint8_t *buf, uint32_t len, uint64_t salt) {
  uint64_t x = salt * 0x9E3779B97F4A7C15ull + 1;
  for (uint32_t i = 0; i < len; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    buf[i] = (uint8_t)x;
  }
}

static int dma_copy_main(void) {
  if (!app_single_instance("dma_copy")) return 1;
  const unsigned cpu = hal_cpu_id();
  const uint64_t transfers = hal_param("transfers");
  const uint64_t bytes = hal_param("bytes");
  const enum dma_completion how = (enum dma_completion)hal_param("completion");
  const uint64_t hold_cycles = hal_param("bookkeeping_cycles");

  if (cpu >= MAX_CORES || bytes == 0 || bytes > 0xFFFFFFFFu || how > DMA_COMPLETE_MSI) {
    hal_log(HAL_LOG_ERROR, "dma_copy: bad parameters (bytes %llu, completion %u)", (unsigned long long)bytes, (unsigned)how);
    return 1;
  }
  /* Every core probes: the register reads are cheap and keep cores independent. */
  if (dma_engine_probe(&dma, "dma0") != 0) {
    hal_log(HAL_LOG_ERROR, "dma_copy: no DMA engine named dma0");
    return 1;
  }
  const unsigned ch = cpu % dma.channels;
  phys_addr_t src_pa, dst_pa;
  uint8_t *src = hal_dma_alloc(bytes, 4096, &src_pa);
  uint8_t *dst = hal_dma_alloc(bytes, 4096, &dst_pa);
  if (!src || !dst) {
    hal_log(HAL_LOG_ERROR, "dma_copy: cannot allocate 2 x %llu bytes of DMA memory", (unsigned long long)bytes);
    return 1;
  }
  if (how != DMA_COMPLETE_POLL && hal_irq_register(dma_engine_channel_irq(&dma, ch), on_completion, (void *)&done[cpu]) != 0) {
    hal_log(HAL_LOG_ERROR, "dma_copy: irq %u already taken (two cores on one channel?)", dma_engine_channel_irq(&dma, ch));
    return 1;
  }

  for (uint64_t t = 0; t < transfers; t++) {
    fill(src, (uint32_t)bytes, (cpu << 20) ^ t);
    hal_store32(&done[cpu], 0);
    const uint64_t t0 = hal_now_ns();
    dma_engine_start(&dma, ch, src_pa, dst_pa, (uint32_t)bytes, how);
    if (how == DMA_COMPLETE_POLL) dma_engine_wait_poll(&dma, ch);
    else
      while (!hal_load32(&done[cpu])) hal_wfi();
    hal_stat_sample("completion_latency_ns", hal_now_ns() - t0);
    const uint32_t err = dma_engine_ack(&dma, ch);
    if (err != DMA_ERR_NONE) {
      hal_log(HAL_LOG_ERROR, "dma_copy: transfer %llu on channel %u failed with error %u", (unsigned long long)t, ch, err);
      return 1;
    }

    const uint64_t held = shared_lock_acquire();
    hal_stat_add("transfers", 1);
    hal_stat_add("bytes", bytes);
    hal_cycles(hold_cycles);
    shared_lock_release(held);

    if (sw_memcmp(src, dst, bytes) != 0) {
      hal_log(HAL_LOG_ERROR, "dma_copy: transfer %llu: destination differs from source", (unsigned long long)t);
      hal_stat_add("data_errors", 1);
      return 1;
    }
  }
  if (how != DMA_COMPLETE_POLL) hal_irq_unregister(dma_engine_channel_irq(&dma, ch));
  hal_dma_free(src);
  hal_dma_free(dst);
  return 0;
}

static const struct hal_param_decl dma_copy_params[] = {
    {"transfers", 32, "Copies per core.", 0, 0},
    {"bytes", 65536, "Size of each copy, bytes.", 0, 0},
    {"completion", 1, "How completion is signalled: 0 poll STATUS, 1 wired interrupt, 2 MSI.", 0, 0},
    {"bookkeeping_cycles", 200, "Work done under the shared lock after each completion, cycles.", 0, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_dma_copy = {
    "dma_copy", "Copy buffers with the DMA engine, one channel per core, and wait for each completion.",
    dma_copy_main, dma_copy_params};

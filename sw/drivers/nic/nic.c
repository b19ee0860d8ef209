/* NIC driver: probe, queue bring-up, interrupts and the NAPI poll. */
#include "drivers/nic/nic.h"

#include "drivers/nic/nic_internal.h"
#include "lib/string.h"

void nic_config_default(struct nic_config *cfg) {
  cfg->rx_ring_size = 1024;
  cfg->tx_ring_size = 1024;
  cfg->rx_buf_bytes = 2048;
  cfg->buffers = NIC_BUFFERS_MAP_PER_PACKET;
  cfg->irq_mode = NIC_IRQ_MSI;
  cfg->coal_frames = 64;
  cfg->coal_usecs = 8;
  cfg->rx_page_bytes = 4096;
}

struct nic_page_reuse *nic_page_reuse_of(const struct nic_ring *rx) {
  return (struct nic_page_reuse *)(rx->bufs + rx->size);
}

void nic_set_stack_hold(struct nic_dev *nic, uint64_t ns, bool exponential) {
  if (nic->cfg.buffers != NIC_BUFFERS_PAGE_REUSE) return;
  for (unsigned q = 0; q < nic->nqueues; q++) {
    struct nic_page_reuse *pr = nic_page_reuse_of(&nic->q[q].rx);
    pr->stack_hold_ns = ns;
    pr->hold_drawn = exponential;
  }
}

uint64_t *nic_page_held_until(const struct nic_ring *rx, uint32_t slot) {
  return (uint64_t *)(nic_page_reuse_of(rx) + 1) + (size_t)slot * NIC_PAGE_MAX_BUFS;
}

uint64_t nic_read_stat(const struct nic_dev *nic, uint32_t reg) { return hal_read64(nic->info.base + reg); }

static bool is_pow2(uint32_t v) { return v && !(v & (v - 1)); }

/* Coherent memory for a ring: allocated and mapped once (dma_alloc_coherent). */
static int ring_alloc(struct nic_dev *nic, struct nic_ring *r, uint32_t size, bool rx) {
  const size_t bytes = (size_t)size * NIC_DESC_BYTES;
  r->desc = (struct nic_desc *)hal_dma_alloc(bytes, 4096, &r->desc_pa);
  phys_addr_t bufs_pa;
  const size_t reuse = rx && nic->cfg.buffers == NIC_BUFFERS_PAGE_REUSE
                           ? sizeof(struct nic_page_reuse) + sizeof(uint64_t) * NIC_PAGE_MAX_BUFS * size
                           : 0;
  r->bufs = (struct nic_buf *)hal_dma_alloc(sizeof(struct nic_buf) * size + reuse, 64, &bufs_pa);
  if (!r->desc || !r->bufs) return -1;
  if (reuse) {
    sw_memset(r->bufs + size, 0, reuse);
    r->size = size; /* nic_page_reuse_of finds the state behind the slots */
    nic_page_reuse_of(r)->stack_hold_ns = NIC_STACK_HOLD_NS;
  }
  r->desc_dma = nic_dma_map(nic, r->desc_pa, bytes, DMA_BIDIRECTIONAL);
  if (r->desc_dma == DMA_MAPPING_ERROR) return -1;
  r->size = size;
  r->next_to_use = r->next_to_clean = 0;
  return 0;
}

int nic_probe(struct nic_dev *nic, const char *name, struct dma_dev *dma, const struct nic_config *cfg,
              unsigned nqueues) {
  sw_memset(nic, 0, sizeof(*nic));
  if (hal_device_find(name, &nic->info) != 0) {
    hal_log(HAL_LOG_ERROR, "nic: no device named %s", name);
    return -1;
  }
  if (hal_read32(nic->info.base + NIC_REG_ID) != NIC_ID_VALUE) {
    hal_log(HAL_LOG_ERROR, "nic: %s is not a NIC (ID register)", name);
    return -1;
  }
  nic->dma = dma;
  nic->cfg = *cfg;
  nic->hw_queues = hal_read32(nic->info.base + NIC_REG_QUEUES);
  nic->max_frame = hal_read32(nic->info.base + NIC_REG_MAX_FRAME);
  nic->link_mbps = hal_read32(nic->info.base + NIC_REG_LINK_MBPS);
  nic->cost_call = hal_cost_lookup("function_call");
  nic->cost_indirect = hal_cost_lookup("indirect_call");
  nic->cost_desc_miss = hal_cost_lookup("cache_miss");
  if (nqueues == 0 || nqueues > nic->hw_queues || nqueues > NIC_MAX_QUEUES) {
    hal_log(HAL_LOG_ERROR, "nic: %u queues asked, %s has %u", nqueues, name, nic->hw_queues);
    return -1;
  }
  if (!is_pow2(cfg->rx_ring_size) || !is_pow2(cfg->tx_ring_size) || cfg->rx_ring_size < 2 ||
      cfg->tx_ring_size < 2 || cfg->rx_ring_size > NIC_RING_MAX || cfg->tx_ring_size > NIC_RING_MAX) {
    hal_log(HAL_LOG_ERROR, "nic: ring sizes must be powers of two in 2..%u", NIC_RING_MAX);
    return -1;
  }
  if (cfg->rx_buf_bytes < nic->max_frame || cfg->rx_buf_bytes > 4096) {
    hal_log(HAL_LOG_ERROR, "nic: RX buffers of %u bytes cannot hold %u-byte frames (or exceed a page)",
            cfg->rx_buf_bytes, nic->max_frame);
    return -1;
  }
  if (cfg->buffers == NIC_BUFFERS_PAGE_REUSE &&
      (!is_pow2(cfg->rx_page_bytes) || cfg->rx_page_bytes < 2 * cfg->rx_buf_bytes ||
       cfg->rx_page_bytes % cfg->rx_buf_bytes || cfg->rx_page_bytes / cfg->rx_buf_bytes > NIC_PAGE_MAX_BUFS)) {
    hal_log(HAL_LOG_ERROR, "nic: page reuse needs a power-of-two page of 2 to %u buffers of %u bytes, not %u bytes",
            NIC_PAGE_MAX_BUFS, cfg->rx_buf_bytes, cfg->rx_page_bytes);
    return -1;
  }
  nic->nqueues = nqueues;
  /* The doorbell page, mapped once like Linux's MSI cookie page. */
  const phys_addr_t doorbell = hal_msi_doorbell();
  nic->msi_dma = nic_dma_map(nic, doorbell & ~(phys_addr_t)4095, 4096, DMA_BIDIRECTIONAL);
  if (nic->msi_dma == DMA_MAPPING_ERROR) {
    hal_log(HAL_LOG_ERROR, "nic: cannot map the MSI doorbell");
    return -1;
  }
  nic->msi_dma += doorbell & 4095;
  for (unsigned i = 0; i < nqueues; i++) {
    struct nic_queue *q = &nic->q[i];
    q->nic = nic;
    q->index = i;
    q->irq = nic->info.irq + i;
    if (ring_alloc(nic, &q->rx, cfg->rx_ring_size, true) != 0 || ring_alloc(nic, &q->tx, cfg->tx_ring_size, false) != 0) {
      hal_log(HAL_LOG_ERROR, "nic: out of DMA memory for the rings of queue %u", i);
      return -1;
    }
  }
  return 0;
}

/* The top half: NAPI is scheduled, the NIC has already masked the queue. */
static void nic_irq_handler(unsigned irq, void *ctx) {
  (void)irq;
  struct nic_queue *q = (struct nic_queue *)ctx;
  q->stats.irqs++;
  q->napi_scheduled = 1;
}

static void program_ring(const struct nic_queue *q, uint32_t base_lo, const struct nic_ring *r) {
  const phys_addr_t regs = q->nic->info.base;
  hal_write32(regs + NIC_Q_REG(q->index, base_lo), (uint32_t)r->desc_dma);
  hal_write32(regs + NIC_Q_REG(q->index, base_lo + 4), (uint32_t)(r->desc_dma >> 32));
  hal_write32(regs + NIC_Q_REG(q->index, base_lo + 8), r->size);
}

int nic_queue_setup(struct nic_dev *nic, unsigned qi) {
  if (qi >= nic->nqueues) return -1;
  struct nic_queue *q = &nic->q[qi];
  const phys_addr_t regs = nic->info.base;
  program_ring(q, NIC_Q_RX_BASE_LO, &q->rx);
  program_ring(q, NIC_Q_TX_BASE_LO, &q->tx);
  uint32_t ctrl = NIC_Q_CTRL_RX_EN | NIC_Q_CTRL_TX_EN;
  if (nic->cfg.irq_mode == NIC_IRQ_MSI) {
    hal_write32(regs + NIC_Q_REG(qi, NIC_Q_MSI_ADDR_LO), (uint32_t)nic->msi_dma);
    hal_write32(regs + NIC_Q_REG(qi, NIC_Q_MSI_ADDR_HI), (uint32_t)(nic->msi_dma >> 32));
    hal_write32(regs + NIC_Q_REG(qi, NIC_Q_MSI_DATA), q->irq);
    ctrl |= NIC_Q_CTRL_MSI_EN;
  } else {
    ctrl |= NIC_Q_CTRL_IRQ_EN;
  }
  hal_write32(regs + NIC_Q_REG(qi, NIC_Q_COAL_FRAMES), nic->cfg.coal_frames);
  hal_write32(regs + NIC_Q_REG(qi, NIC_Q_COAL_USECS), nic->cfg.coal_usecs);
  /* Enabling latches base and size and zeroes head and tail; the queue's
   * interrupt stays masked (IRQ_MASK resets to 1) until nic_queue_start. */
  hal_write32(regs + NIC_Q_REG(qi, NIC_Q_CTRL), ctrl);
  if (nic_rx_refill(q) == 0) {
    hal_log(HAL_LOG_ERROR, "nic: could not post any RX buffer on queue %u", qi);
    return -1;
  }
  const uint32_t err = hal_read32(regs + NIC_Q_REG(qi, NIC_Q_ERR));
  if (err) {
    hal_log(HAL_LOG_ERROR, "nic: queue %u refused its programming (Q_ERR 0x%x)", qi, err);
    return -1;
  }
  return 0;
}

int nic_queue_start(struct nic_dev *nic, unsigned qi) {
  if (qi >= nic->nqueues) return -1;
  struct nic_queue *q = &nic->q[qi];
  q->cpu = hal_cpu_id();
  if (hal_irq_register(q->irq, nic_irq_handler, q) != 0) {
    hal_log(HAL_LOG_ERROR, "nic: interrupt line %u of queue %u is taken or does not exist", q->irq, qi);
    return -1;
  }
  nic_irq_rearm(q);
  return 0;
}

int nic_queue_open(struct nic_dev *nic, unsigned qi) {
  return nic_queue_setup(nic, qi) != 0 ? -1 : nic_queue_start(nic, qi);
}

void nic_set_enabled(struct nic_dev *nic, bool rx, bool tx) {
  hal_write32(nic->info.base + NIC_REG_CTRL, (rx ? NIC_CTRL_RX_EN : 0u) | (tx ? NIC_CTRL_TX_EN : 0u));
}

void nic_queue_close(struct nic_dev *nic, unsigned qi) {
  struct nic_queue *q = &nic->q[qi];
  hal_write32(nic->info.base + NIC_Q_REG(qi, NIC_Q_CTRL), 0);
  nic_tx_clean(q, q->tx.size);
  nic_ring_release(q, &q->rx, DMA_FROM_DEVICE);
  nic_ring_release(q, &q->tx, DMA_TO_DEVICE);
  hal_irq_unregister(q->irq);
}

void nic_irq_rearm(struct nic_queue *q) {
  hal_write32(q->nic->info.base + NIC_Q_REG(q->index, NIC_Q_IRQ_MASK), 0);
}

unsigned nic_napi_poll(struct nic_queue *q, unsigned budget, nic_rx_deliver_t deliver, void *ctx,
                       uint64_t until_ns) {
  if (!hal_load32(&q->napi_scheduled)) return 0;
  hal_store32(&q->napi_scheduled, 0);
  unsigned received = 0;
  for (;;) {
    q->stats.polls++;
    const unsigned tx = nic_tx_clean(q, budget);
    const unsigned rx = nic_rx_poll(q, budget, deliver, ctx);
    received += rx;
    if (rx < budget && tx < budget) break;
    q->stats.budget_exhausted++;
    /* Linux gives the CPU back after a used-up budget and polls again. */
    if (hal_now_ns() >= until_ns) break;
  }
  /* napi_complete_done: completions that came meanwhile raise at once. */
  nic_irq_rearm(q);
  return received;
}

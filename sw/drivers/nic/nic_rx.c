/* NIC driver: the RX ring (refill, completion, buffer policies). */
#include "drivers/nic/nic_internal.h"
#include "lib/string.h"

/* The CPU's first read of a descriptor line the NIC wrote back misses:
 * charged once per 64-byte line (two descriptors). */
static void charge_desc_line(const struct nic_dev *nic, uint32_t slot) {
  if ((slot * NIC_DESC_BYTES) % 64 == 0) hal_cost_id(nic->cost_desc_miss, 1);
}

/* RX buffers live with their ring: one per slot, allocated on first use
 * (under page reuse, the slot's page, mapped whole). */
static bool rx_buffer_ready(struct nic_queue *q, struct nic_buf *b) {
  struct nic_dev *nic = q->nic;
  const uint32_t bytes = nic->cfg.buffers == NIC_BUFFERS_PAGE_REUSE ? nic->cfg.rx_page_bytes : nic->cfg.rx_buf_bytes;
  if (!b->pa && !hal_dma_alloc(bytes, bytes, &b->pa)) return false;
  if (b->mapped) return true;
  b->dma = nic_dma_map(nic, b->pa, bytes, DMA_FROM_DEVICE);
  if (b->dma == DMA_MAPPING_ERROR) return false;
  b->len = bytes;
  b->mapped = true;
  return true;
}

/* Page reuse: whether the stack holds a buffer of slot `slot`'s page other
 * than `except` at `now` (page_count above the driver's own reference). */
static bool page_held(const struct nic_ring *r, uint32_t slot, uint32_t bufs, uint32_t except, uint64_t now) {
  const uint64_t *held = nic_page_held_until(r, slot);
  for (uint32_t i = 0; i < bufs; i++)
    if (i != except && held[i] > now) return true;
  return false;
}

/* -ln(u) for u = r / 2^53 uniform in (0, 1], r from hal_random(): with r
 * of `bits` bits, u = m * 2^-k for m = r / 2^(bits - 1) in [1, 2) and
 * k = 54 - bits, so -ln(u) = k ln 2 - ln m, and ln m = 2 atanh((m - 1) /
 * (m + 1)) by its series (s < 1/3: the terms to s^9 leave under 1e-6).
 * No libm in sw/; every step exact up to the series. */
static double neg_ln_uniform(void) {
  const uint64_t r = (hal_random() >> 11) + 1; /* 1 .. 2^53 */
  const unsigned bits = 64u - (unsigned)__builtin_clzll(r);
  const unsigned k = 54u - bits;
  const double m = (double)r / (double)(UINT64_C(1) << (bits - 1));
  const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
  const double ln_m = 2.0 * s * (1.0 + s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 / 9))));
  return (double)k * 0.6931471805599453 - ln_m;
}

/* How long the stack keeps the buffer it is given now: the set time, or one
 * drawn from an exponential distribution of that mean (a socket queue's
 * delay varies from buffer to buffer). */
static uint64_t stack_hold_ns(const struct nic_page_reuse *pr) {
  if (!pr->hold_drawn) return pr->stack_hold_ns;
  return (uint64_t)(neg_ln_uniform() * (double)pr->stack_hold_ns);
}

/* Page reuse, as hns3_nic_reuse_page (Linux v5.4) decides it when a buffer
 * comes back full: the slot moves on to the page's next buffer; at the end
 * of the page it starts over if the stack has let go of every other buffer,
 * and a page the stack still holds at its first buffer is not reused at all.
 * Not reused, the page is unmapped and the slot maps a fresh one at refill
 * (the same memory here: the stack's copy was made at delivery). */
static void rx_page_reuse(struct nic_queue *q, struct nic_buf *b, uint32_t slot) {
  struct nic_dev *nic = q->nic;
  struct nic_ring *r = &q->rx;
  const uint32_t buf = nic->cfg.rx_buf_bytes, bufs = nic->cfg.rx_page_bytes / buf, i = b->offset / buf;
  const uint64_t now = hal_now_ns();
  nic_page_held_until(r, slot)[i] = now + stack_hold_ns(nic_page_reuse_of(r));
  hal_cost_id(nic->cost_call, 1); /* dma_sync_single_range_for_cpu on a coherent device */
  bool reuse = false;
  if (b->offset != 0 || !page_held(r, slot, bufs, i, now)) {
    if (b->offset + 2u * buf <= nic->cfg.rx_page_bytes) {
      b->offset = (uint16_t)(b->offset + buf);
      reuse = true;
    } else if (!page_held(r, slot, bufs, i, now)) {
      b->offset = 0;
      reuse = true;
    }
  }
  if (reuse) {
    nic_page_reuse_of(r)->reuses++;
    return;
  }
  nic_dma_unmap(nic, b->dma, b->len, DMA_FROM_DEVICE);
  b->mapped = false;
  b->offset = 0;
  sw_memset(nic_page_held_until(r, slot), 0, sizeof(uint64_t) * NIC_PAGE_MAX_BUFS);
  nic_page_reuse_of(r)->unmaps++;
}

unsigned nic_rx_refill(struct nic_queue *q) {
  struct nic_ring *r = &q->rx;
  const uint32_t mask = r->size - 1;
  unsigned posted = 0;
  /* One slot stays empty: head == tail means an empty ring to the NIC. */
  while (((r->next_to_use + 1) & mask) != r->next_to_clean) {
    const uint32_t slot = r->next_to_use;
    struct nic_buf *b = &r->bufs[slot];
    if (!rx_buffer_ready(q, b)) {
      q->stats.rx_refill_failures++;
      break;
    }
    struct nic_desc *d = &r->desc[slot];
    const bool pages = q->nic->cfg.buffers == NIC_BUFFERS_PAGE_REUSE;
    d->addr = b->dma + (pages ? b->offset : 0);
    d->len = pages ? q->nic->cfg.rx_buf_bytes : b->len;
    d->flags = NIC_DESC_F_NONE;
    d->wb_len = 0;
    d->wb_status = 0;
    r->next_to_use = (slot + 1) & mask;
    posted++;
  }
  if (posted) {
    /* Descriptors visible before the doorbell (wmb before writel). */
    hal_barrier(HAL_BARRIER_DSB);
    hal_write32(q->nic->info.base + NIC_Q_REG(q->index, NIC_Q_RX_TAIL), r->next_to_use);
  }
  return posted;
}

/* Gives a completed buffer back to the CPU under the buffer policy. */
static void rx_release(struct nic_dev *nic, struct nic_buf *b) {
  if (!b->mapped) return; /* a driver bug unmapped it already; nothing to release */
  if (nic->cfg.buffers == NIC_BUFFERS_MAP_PER_PACKET) {
    nic_dma_unmap(nic, b->dma, b->len, DMA_FROM_DEVICE);
    b->mapped = false;
  } else {
    hal_cost_id(nic->cost_call, 1); /* dma_sync_single_for_cpu on a coherent device */
  }
}

unsigned nic_rx_poll(struct nic_queue *q, unsigned budget, nic_rx_deliver_t deliver, void *ctx) {
  struct nic_dev *nic = q->nic;
  struct nic_ring *r = &q->rx;
  const uint32_t mask = r->size - 1;
  unsigned done = 0;
  while (done < budget && r->next_to_clean != r->next_to_use) {
    const uint32_t slot = r->next_to_clean;
    const struct nic_desc *d = &r->desc[slot];
    charge_desc_line(nic, slot);
    const uint32_t status = *(const volatile uint32_t *)&d->wb_status;
    if (!(status & NIC_DESC_DD)) break;
    hal_barrier(HAL_BARRIER_DMB); /* dma_rmb: the rest of the descriptor after DD */
    const uint32_t len = d->wb_len;
    const uint64_t wire_ns = d->wb_timestamp_ns;
    struct nic_buf *b = &r->bufs[slot];
    const phys_addr_t frame = b->pa + b->offset;
    if (nic->cfg.buffers == NIC_BUFFERS_PAGE_REUSE) {
      if (b->mapped) rx_page_reuse(q, b, slot);
    } else {
      rx_release(nic, b);
    }
    if ((status & (NIC_DESC_ERR_LEN | NIC_DESC_ERR_DMA)) || len == 0) {
      q->stats.rx_errors++;
    } else {
      q->stats.rx_packets++;
      q->stats.rx_bytes += len;
      hal_cost_id(nic->cost_indirect, 1); /* into the stack */
      deliver(ctx, (const uint8_t *)hal_phys_to_virt(frame), len, wire_ns);
    }
    r->next_to_clean = (slot + 1) & mask;
    done++;
  }
  if (done) nic_rx_refill(q);
  return done;
}

unsigned nic_rx_pending_in(const struct nic_queue *q, uint64_t from_ns, uint64_t to_ns, uint64_t *bytes) {
  const struct nic_ring *r = &q->rx;
  const uint32_t mask = r->size - 1;
  unsigned n = 0;
  /* Plain reads of the descriptors: bookkeeping, not the driver's work. */
  for (uint32_t slot = r->next_to_clean; slot != r->next_to_use; slot = (slot + 1) & mask) {
    const struct nic_desc *d = &r->desc[slot];
    if (!(d->wb_status & NIC_DESC_DD)) break;
    if ((d->wb_status & (NIC_DESC_ERR_LEN | NIC_DESC_ERR_DMA)) || d->wb_len == 0) continue;
    if (d->wb_timestamp_ns < from_ns || d->wb_timestamp_ns >= to_ns) continue;
    *bytes += d->wb_len;
    n++;
  }
  return n;
}

void nic_ring_release(struct nic_queue *q, struct nic_ring *r, enum dma_data_direction dir) {
  for (uint32_t i = 0; i < r->size; i++) {
    struct nic_buf *b = &r->bufs[i];
    if (!b->mapped) continue;
    nic_dma_unmap(q->nic, b->dma, b->len, dir);
    b->mapped = false;
  }
  r->next_to_use = r->next_to_clean = 0;
}

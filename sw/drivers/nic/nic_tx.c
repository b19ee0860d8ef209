/* NIC driver: the TX ring (post with a mapping per frame, reclaim with its unmap). */
#include "drivers/nic/nic_internal.h"

uint32_t nic_tx_free(const struct nic_queue *q) {
  return (q->tx.next_to_clean - q->tx.next_to_use - 1) & (q->tx.size - 1);
}

int nic_tx_post(struct nic_queue *q, phys_addr_t pa, uint32_t len) {
  struct nic_ring *r = &q->tx;
  if (!nic_tx_free(q)) return -1;
  const uint64_t dma = nic_dma_map(q->nic, pa, len, DMA_TO_DEVICE);
  if (dma == DMA_MAPPING_ERROR) {
    q->stats.tx_map_failures++;
    return -2;
  }
  const uint32_t slot = r->next_to_use;
  struct nic_buf *b = &r->bufs[slot];
  b->pa = pa;
  b->dma = dma;
  b->len = len;
  b->mapped = true;
  struct nic_desc *d = &r->desc[slot];
  d->addr = dma;
  d->len = len;
  d->flags = NIC_DESC_F_NONE;
  d->wb_len = 0;
  d->wb_status = 0;
  r->next_to_use = (slot + 1) & (r->size - 1);
  return 0;
}

void nic_tx_kick(struct nic_queue *q) {
  hal_barrier(HAL_BARRIER_DSB);
  hal_write32(q->nic->info.base + NIC_Q_REG(q->index, NIC_Q_TX_TAIL), q->tx.next_to_use);
}

unsigned nic_tx_clean(struct nic_queue *q, unsigned budget) {
  struct nic_ring *r = &q->tx;
  unsigned done = 0;
  while (done < budget && r->next_to_clean != r->next_to_use) {
    const uint32_t slot = r->next_to_clean;
    const struct nic_desc *d = &r->desc[slot];
    if ((slot * NIC_DESC_BYTES) % 64 == 0) hal_cost_id(q->nic->cost_desc_miss, 1);
    const uint32_t status = *(const volatile uint32_t *)&d->wb_status;
    if (!(status & NIC_DESC_DD)) break;
    hal_barrier(HAL_BARRIER_DMB);
    struct nic_buf *b = &r->bufs[slot];
    nic_dma_unmap(q->nic, b->dma, b->len, DMA_TO_DEVICE);
    b->mapped = false;
    if (status & (NIC_DESC_ERR_LEN | NIC_DESC_ERR_DMA)) {
      q->stats.tx_errors++;
    } else {
      q->stats.tx_packets++;
      q->stats.tx_bytes += b->len;
    }
    r->next_to_clean = (slot + 1) & (r->size - 1);
    done++;
  }
  return done;
}

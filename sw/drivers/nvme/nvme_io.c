/* NVMe driver: I/O submission with PRPs, and completion. */
#include "drivers/nvme/nvme_internal.h"

static enum dma_data_direction rq_dir(const struct nvme_request *rq) {
  return rq->opcode == NVME_CMD_READ ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
}

/* Device addresses of the request's elements: one dma_map_sg, or physical. */
static int map_request(struct nvme_ctrl *c, struct nvme_request *rq) {
  if (!rq->nents) return 0;
  if (c->dma) return dma_map_sg(c->dma, rq->sg, rq->nents, rq_dir(rq), rq->dma) == (int)rq->nents ? 0 : -1;
  hal_cost_id(c->cost_call, 1);
  for (unsigned i = 0; i < rq->nents; i++) rq->dma[i] = rq->sg[i].pa;
  return 0;
}

static void unmap_request(struct nvme_ctrl *c, struct nvme_request *rq) {
  if (!rq->nents) return;
  if (c->dma) dma_unmap_sg(c->dma, rq->sg, rq->nents, rq_dir(rq), rq->dma);
  else hal_cost_id(c->cost_call, 1);
}

/* PRP1, PRP2 and, past two pages, the PRP list of command identifier `cid`
 * (NVMe 2.0 4.1.1): the first entry keeps its offset, every further one is
 * the start of a page. Elements must begin and end on page boundaries except
 * the first's start and the last's end. Returns the number of pages, or 0
 * when the request does not fit a list page or breaks those rules. */
static unsigned build_prps(struct nvme_queue *q, uint16_t cid, const struct nvme_request *rq, struct nvme_sqe *cmd) {
  uint64_t *list = q->prp_lists + (size_t)cid * (NVME_PAGE / 8u);
  unsigned pages = 0;
  for (unsigned i = 0; i < rq->nents; i++) {
    const uint64_t start = rq->dma[i], end = start + rq->sg[i].len;
    if ((i > 0 && (start & (NVME_PAGE - 1))) || (i + 1 < rq->nents && (end & (NVME_PAGE - 1)))) return 0;
    for (uint64_t a = start; a < end; a = (a & ~(uint64_t)(NVME_PAGE - 1)) + NVME_PAGE) {
      if (pages == 0) cmd->prp1 = a;
      else if (pages - 1 < NVME_PAGE / 8u) list[pages - 1] = a;
      else return 0;
      pages++;
    }
  }
  if (pages == 2) cmd->prp2 = list[0];
  else if (pages > 2) cmd->prp2 = q->prp_lists_dma + (uint64_t)cid * NVME_PAGE;
  return pages;
}

int nvme_submit(struct nvme_queue *q, struct nvme_request *rq) {
  struct nvme_ctrl *c = q->ctrl;
  if (!q->nfree || q->inflight + 1 >= q->depth) {
    q->stats.full++;
    return -1;
  }
  if (map_request(c, rq) != 0) {
    q->stats.map_failures++;
    return -2;
  }
  const uint16_t cid = q->free_cids[--q->nfree];
  struct nvme_sqe cmd = {0};
  cmd.cdw0 = NVME_CDW0(rq->opcode, cid);
  cmd.nsid = 1;
  if (rq->opcode != NVME_CMD_FLUSH) {
    if (!build_prps(q, cid, rq, &cmd)) {
      unmap_request(c, rq);
      q->free_cids[q->nfree++] = cid;
      q->stats.map_failures++;
      return -2;
    }
    cmd.cdw10 = (uint32_t)rq->slba;
    cmd.cdw11 = (uint32_t)(rq->slba >> 32);
    cmd.cdw12 = rq->blocks - 1;
  }
  q->owner[cid] = rq;
  rq->status = 0;
  rq->submit_ns = hal_now_ns();
  q->sq[q->sq_tail] = cmd;
  q->sq_tail = (uint16_t)((q->sq_tail + 1) % q->depth);
  q->inflight++;
  q->stats.submitted++;
  /* The entry and its PRP list are visible before the doorbell. */
  hal_barrier(HAL_BARRIER_DSB);
  hal_write32(c->info.base + NVME_SQ_TAIL_DB(q->qid, c->dstrd), q->sq_tail);
  return 0;
}

unsigned nvme_process_cq(struct nvme_queue *q) {
  struct nvme_ctrl *c = q->ctrl;
  unsigned n = 0;
  for (;;) {
    const struct nvme_cqe *e = &q->cq[q->cq_head];
    if ((q->cq_head & 3u) == 0) hal_cost_id(c->cost_cqe_miss, 1); /* a line of four entries the drive wrote */
    const uint16_t st = *(const volatile uint16_t *)&e->status;
    if ((st & NVME_CQE_PHASE) != q->cq_phase) break;
    hal_barrier(HAL_BARRIER_DMB); /* the rest of the entry after its phase */
    const uint16_t cid = e->cid;
    struct nvme_request *rq = cid < q->depth ? q->owner[cid] : NULL;
    if (++q->cq_head == q->depth) {
      q->cq_head = 0;
      q->cq_phase ^= 1;
    }
    n++;
    if (!rq) continue; /* a completion for no command of ours: ignored, as Linux warns and drops it */
    q->owner[cid] = NULL;
    q->free_cids[q->nfree++] = cid;
    q->inflight--;
    q->stats.completed++;
    rq->status = (uint16_t)(st & ~NVME_CQE_PHASE);
    if (rq->status) q->stats.errors++;
    unmap_request(c, rq);
    rq->complete_ns = hal_now_ns();
    hal_cost_id(c->cost_indirect, 1); /* the request's completion callback */
    rq->done(rq);
  }
  if (n) hal_write32(c->info.base + NVME_CQ_HEAD_DB(q->qid, c->dstrd), q->cq_head);
  return n;
}

/* NVMe driver: controller bring-up and the admin commands it needs. */
#include "drivers/nvme/nvme.h"

#include "drivers/nvme/nvme_internal.h"
#include "lib/string.h"

static uint32_t rd32(const struct nvme_ctrl *c, uint32_t off) { return hal_read32(c->info.base + off); }
static void wr32(const struct nvme_ctrl *c, uint32_t off, uint32_t v) { hal_write32(c->info.base + off, v); }
static void wr64(const struct nvme_ctrl *c, uint32_t off, uint64_t v) {
  wr32(c, off, (uint32_t)v);
  wr32(c, off + 4, (uint32_t)(v >> 32));
}

/* Polls CSTS until RDY equals `ready` (CAP.TO in 500 ms units, NVMe 2.0
 * 3.1.4.1), or fatal status. 0, or -1. */
static int wait_ready(const struct nvme_ctrl *c, bool ready) {
  const uint64_t deadline = hal_now_ns() + (uint64_t)(NVME_CAP_TO(c->cap) + 1) * 500000000ull;
  for (;;) {
    const uint32_t csts = rd32(c, NVME_REG_CSTS);
    if (csts & NVME_CSTS_CFS) {
      hal_log(HAL_LOG_ERROR, "nvme %s: controller fatal status (CSTS 0x%x)", c->info.name, csts);
      return -1;
    }
    if (((csts & NVME_CSTS_RDY) != 0) == ready) return 0;
    if (hal_now_ns() > deadline) {
      hal_log(HAL_LOG_ERROR, "nvme %s: CSTS.RDY did not become %d within CAP.TO", c->info.name, ready);
      return -1;
    }
    hal_delay_ns(1000);
  }
}

static size_t queue_bytes(uint16_t depth, size_t entry) {
  return ((size_t)depth * entry + NVME_PAGE - 1) & ~(size_t)(NVME_PAGE - 1);
}

/* A queue's rings, identifiers and PRP list pages: coherent memory. */
static int queue_alloc(struct nvme_ctrl *c, struct nvme_queue *q, uint16_t qid, uint16_t depth) {
  phys_addr_t sq_pa, cq_pa, lists_pa, meta_pa;
  sw_memset(q, 0, sizeof *q);
  q->ctrl = c;
  q->qid = qid;
  q->depth = depth;
  q->cq_phase = 1;
  q->sq = (struct nvme_sqe *)hal_dma_alloc(queue_bytes(depth, NVME_SQE_BYTES), NVME_PAGE, &sq_pa);
  q->cq = (struct nvme_cqe *)hal_dma_alloc(queue_bytes(depth, NVME_CQE_BYTES), NVME_PAGE, &cq_pa);
  q->prp_lists = (uint64_t *)hal_dma_alloc((size_t)depth * NVME_PAGE, NVME_PAGE, &lists_pa);
  uint8_t *meta = (uint8_t *)hal_dma_alloc((size_t)depth * (sizeof(void *) + sizeof(uint16_t)), 64, &meta_pa);
  if (!q->sq || !q->cq || !q->prp_lists || !meta) return -1;
  q->owner = (struct nvme_request **)meta;
  q->free_cids = (uint16_t *)(meta + (size_t)depth * sizeof(void *));
  for (uint16_t i = 0; i < depth; i++) q->free_cids[i] = (uint16_t)(depth - 1 - i);
  q->nfree = depth;
  /* Whole pages, as dma_alloc_coherent gives: never bounced. */
  q->sq_dma = nvme_map(c, sq_pa, queue_bytes(depth, NVME_SQE_BYTES), DMA_BIDIRECTIONAL);
  q->cq_dma = nvme_map(c, cq_pa, queue_bytes(depth, NVME_CQE_BYTES), DMA_BIDIRECTIONAL);
  q->prp_lists_dma = nvme_map(c, lists_pa, (size_t)depth * NVME_PAGE, DMA_BIDIRECTIONAL);
  if (q->sq_dma == DMA_MAPPING_ERROR || q->cq_dma == DMA_MAPPING_ERROR || q->prp_lists_dma == DMA_MAPPING_ERROR)
    return -1;
  return 0;
}

/* One admin command, completion polled. Returns the status field (0: success)
 * and the completion's DW0, or 0xFFFF when no completion came. */
static uint16_t admin_sync(struct nvme_ctrl *c, struct nvme_sqe *cmd, uint32_t *dw0) {
  struct nvme_queue *q = &c->admin;
  cmd->cdw0 = NVME_CDW0(NVME_CDW0_OPC(cmd->cdw0), q->sq_tail);
  q->sq[q->sq_tail] = *cmd;
  q->sq_tail = (uint16_t)((q->sq_tail + 1) % q->depth);
  hal_barrier(HAL_BARRIER_DSB);
  wr32(c, NVME_SQ_TAIL_DB(0, c->dstrd), q->sq_tail);
  for (unsigned i = 0; i < 100000; i++) {
    const struct nvme_cqe *e = &q->cq[q->cq_head];
    const uint16_t st = *(const volatile uint16_t *)&e->status;
    if ((st & NVME_CQE_PHASE) == q->cq_phase) {
      hal_barrier(HAL_BARRIER_DMB);
      if (dw0) *dw0 = e->dw0;
      q->cq_head = (uint16_t)(q->cq_head + 1);
      if (q->cq_head == q->depth) {
        q->cq_head = 0;
        q->cq_phase ^= 1;
      }
      wr32(c, NVME_CQ_HEAD_DB(0, c->dstrd), q->cq_head);
      return (uint16_t)(st & ~NVME_CQE_PHASE);
    }
    hal_delay_ns(500);
  }
  hal_log(HAL_LOG_ERROR, "nvme %s: admin command 0x%02x got no completion", c->info.name, NVME_CDW0_OPC(cmd->cdw0));
  return 0xFFFF;
}

static int admin(struct nvme_ctrl *c, struct nvme_sqe *cmd, uint32_t *dw0, const char *what) {
  const uint16_t st = admin_sync(c, cmd, dw0);
  if (st == 0) return 0;
  if (st != 0xFFFF)
    hal_log(HAL_LOG_ERROR, "nvme %s: %s failed: status type %u code 0x%02x", c->info.name, what, NVME_STATUS_SCT(st),
            NVME_STATUS_SC(st));
  return -1;
}

static int identify(struct nvme_ctrl *c) {
  phys_addr_t pa;
  uint8_t *buf = (uint8_t *)hal_dma_alloc(NVME_IDENTIFY_BYTES, NVME_PAGE, &pa);
  if (!buf) return -1;
  const uint64_t dma = nvme_map(c, pa, NVME_IDENTIFY_BYTES, DMA_FROM_DEVICE);
  if (dma == DMA_MAPPING_ERROR) return -1;
  struct nvme_sqe cmd;
  sw_memset(&cmd, 0, sizeof cmd);
  cmd.cdw0 = NVME_ADMIN_IDENTIFY;
  cmd.prp1 = dma;
  cmd.cdw10 = NVME_IDENTIFY_CONTROLLER;
  if (admin(c, &cmd, NULL, "Identify controller") != 0) return -1;
  sw_memcpy(c->model, buf + NVME_IDCTRL_MN, 40);
  c->model[40] = 0;
  const uint8_t mdts = buf[NVME_IDCTRL_MDTS];
  c->mdts_bytes = mdts ? (NVME_PAGE << mdts) : 0;
  sw_memset(&cmd, 0, sizeof cmd);
  cmd.cdw0 = NVME_ADMIN_IDENTIFY;
  cmd.nsid = 1;
  cmd.prp1 = dma;
  cmd.cdw10 = NVME_IDENTIFY_NAMESPACE;
  if (admin(c, &cmd, NULL, "Identify namespace 1") != 0) return -1;
  sw_memcpy(&c->nsze, buf + NVME_IDNS_NSZE, 8);
  const uint8_t format = buf[NVME_IDNS_FLBAS] & 0xF;
  uint32_t lbaf;
  sw_memcpy(&lbaf, buf + NVME_IDNS_LBAF0 + 4 * format, 4);
  c->lba_bytes = 1u << ((lbaf >> 16) & 0xFF);
  nvme_unmap(c, dma, NVME_IDENTIFY_BYTES, DMA_FROM_DEVICE);
  hal_dma_free(buf);
  return c->nsze && c->lba_bytes >= 512 && c->lba_bytes <= NVME_PAGE ? 0 : -1;
}

/* The vector table entry of `vector`: the doorbell, the line as data. */
static void program_vector(const struct nvme_ctrl *c, unsigned vector, unsigned line) {
  wr32(c, NVME_MSIX_REG(vector, NVME_MSIX_ADDR_LO), (uint32_t)c->msi_dma);
  wr32(c, NVME_MSIX_REG(vector, NVME_MSIX_ADDR_HI), (uint32_t)(c->msi_dma >> 32));
  wr32(c, NVME_MSIX_REG(vector, NVME_MSIX_DATA), line);
  wr32(c, NVME_MSIX_REG(vector, NVME_MSIX_CTRL), 0);
}

static int create_io_queue(struct nvme_ctrl *c, unsigned i, uint16_t depth) {
  struct nvme_queue *q = &c->io[i];
  const uint16_t qid = (uint16_t)(i + 1);
  if (queue_alloc(c, q, qid, depth) != 0) return -1;
  q->vector = qid; /* vector 0 is the admin queue's */
  q->irq = c->info.irq + q->vector;
  struct nvme_sqe cmd;
  sw_memset(&cmd, 0, sizeof cmd);
  cmd.cdw0 = NVME_ADMIN_CREATE_CQ;
  cmd.prp1 = q->cq_dma;
  cmd.cdw10 = NVME_QUEUE_CDW10(qid, depth);
  cmd.cdw11 = NVME_CQ_CDW11(q->vector, !c->poll);
  if (admin(c, &cmd, NULL, "Create I/O CQ") != 0) return -1;
  sw_memset(&cmd, 0, sizeof cmd);
  cmd.cdw0 = NVME_ADMIN_CREATE_SQ;
  cmd.prp1 = q->sq_dma;
  cmd.cdw10 = NVME_QUEUE_CDW10(qid, depth);
  cmd.cdw11 = NVME_SQ_CDW11(qid);
  return admin(c, &cmd, NULL, "Create I/O SQ");
}

void nvme_disable(struct nvme_ctrl *ctrl) {
  wr32(ctrl, NVME_REG_CC, rd32(ctrl, NVME_REG_CC) & ~NVME_CC_EN);
  wait_ready(ctrl, false);
}

int nvme_probe(struct nvme_ctrl *c, const char *name, struct dma_dev *dma, unsigned nr_io, unsigned depth, bool poll) {
  sw_memset(c, 0, sizeof *c);
  if (hal_device_find(name, &c->info) != 0) {
    hal_log(HAL_LOG_ERROR, "nvme: no device named %s", name);
    return -1;
  }
  c->dma = dma;
  c->poll = poll;
  c->cost_call = hal_cost_lookup("function_call");
  c->cost_indirect = hal_cost_lookup("indirect_call");
  c->cost_cqe_miss = hal_cost_lookup("cache_miss");
  c->cap = hal_read64(c->info.base + NVME_REG_CAP);
  c->dstrd = NVME_CAP_DSTRD(c->cap);
  const uint32_t mqes = NVME_CAP_MQES(c->cap) + 1;
  if (nr_io == 0 || nr_io > NVME_MAX_IO_QUEUES || depth < 2 || depth > mqes || NVME_CAP_MPSMIN(c->cap) != 0) {
    hal_log(HAL_LOG_ERROR, "nvme %s: %u I/O queues of %u entries do not fit (at most %u queues, %u entries; 4 KiB pages)",
            name, nr_io, depth, NVME_MAX_IO_QUEUES, mqes);
    return -1;
  }
  /* NVMe 2.0 3.5.1: disable, admin queues, enable. */
  wr32(c, NVME_REG_CC, 0);
  if (wait_ready(c, false) != 0 || queue_alloc(c, &c->admin, 0, NVME_ADMIN_DEPTH) != 0) return -1;
  wr32(c, NVME_REG_AQA, NVME_AQA_ASQS(NVME_ADMIN_DEPTH) | NVME_AQA_ACQS(NVME_ADMIN_DEPTH));
  wr64(c, NVME_REG_ASQ, c->admin.sq_dma);
  wr64(c, NVME_REG_ACQ, c->admin.cq_dma);
  wr32(c, NVME_REG_CC, NVME_CC_EN | (6u << NVME_CC_IOSQES_SHIFT) | (4u << NVME_CC_IOCQES_SHIFT));
  if (wait_ready(c, true) != 0 || identify(c) != 0) return -1;
  /* Number of queues: what the controller grants bounds what we create. */
  struct nvme_sqe cmd;
  uint32_t granted = 0;
  sw_memset(&cmd, 0, sizeof cmd);
  cmd.cdw0 = NVME_ADMIN_SET_FEATURES;
  cmd.cdw10 = NVME_FEAT_NUM_QUEUES;
  cmd.cdw11 = NVME_NUM_QUEUES(nr_io, nr_io);
  if (admin(c, &cmd, &granted, "Set Features (number of queues)") != 0) return -1;
  const unsigned nsq = (granted & 0xFFFF) + 1, ncq = (granted >> 16) + 1;
  if (nsq < nr_io || ncq < nr_io) {
    hal_log(HAL_LOG_ERROR, "nvme %s: asked for %u I/O queues, granted %u", name, nr_io, nsq < ncq ? nsq : ncq);
    return -1;
  }
  /* The MSI doorbell page, mapped once (Linux maps the MSI page likewise). */
  const phys_addr_t doorbell = hal_msi_doorbell();
  c->msi_dma = nvme_map(c, doorbell & ~(phys_addr_t)(NVME_PAGE - 1), NVME_PAGE, DMA_BIDIRECTIONAL);
  if (c->msi_dma == DMA_MAPPING_ERROR) return -1;
  c->msi_dma += doorbell & (NVME_PAGE - 1);
  for (unsigned i = 0; i < nr_io; i++)
    if (create_io_queue(c, i, (uint16_t)depth) != 0) return -1;
  c->nr_io = nr_io;
  return 0;
}

static void nvme_irq_handler(unsigned irq, void *ctx) {
  (void)irq;
  struct nvme_queue *q = (struct nvme_queue *)ctx;
  q->stats.irqs++;
  q->irq_pending = 1;
}

int nvme_queue_start(struct nvme_ctrl *c, unsigned i) {
  if (i >= c->nr_io) return -1;
  struct nvme_queue *q = &c->io[i];
  q->cpu = hal_cpu_id();
  if (c->poll) return 0;
  if (hal_irq_register(q->irq, nvme_irq_handler, q) != 0) {
    hal_log(HAL_LOG_ERROR, "nvme %s: interrupt line %u of queue %u is taken or does not exist", c->info.name, q->irq,
            q->qid);
    return -1;
  }
  program_vector(c, q->vector, q->irq);
  return 0;
}

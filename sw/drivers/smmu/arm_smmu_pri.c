/* PRI (IHI 0070 chapter 8): the PRI queue, served by software that makes
 * each requested page present and answers the group with CMD_PRI_RESP, as
 * Linux's arm_smmu_priq_thread hands Page Requests to the I/O page-fault
 * handler and arm_smmu_page_response answers them. */
#include "drivers/smmu/arm_smmu_internal.h"

#define SMMU_MAX_PRIQS 8
#define SMMU_PRG_INDICES 512

/* Kept outside struct smmu_device, whose layout the simulated caches see. */
static struct smmu_priq {
  const struct smmu_device *dev;
  struct smmu_queue q;
  uint8_t group_failed[SMMU_PRG_INDICES]; /* a request of the open group failed */
} priqs[SMMU_MAX_PRIQS];
static unsigned n_priqs;

static struct smmu_priq *priq_of(const struct smmu_device *dev) {
  for (unsigned i = 0; i < n_priqs; i++)
    if (priqs[i].dev == dev) return &priqs[i];
  return 0;
}

static void set_and_wait(struct smmu_device *dev, uint32_t reg, uint32_t ack, uint32_t bits) {
  const uint32_t v = smmu_rd(dev, reg) | bits;
  smmu_wr(dev, reg, v);
  while (smmu_rd(dev, ack) != v) hal_cpu_relax();
}

int smmu_enable_pri(struct smmu_device *dev, unsigned log2size, unsigned msi_line) {
  if (!(smmu_rd(dev, SMMU_IDR0) & SMMU_IDR0_PRI)) return -1;
  const unsigned max = (smmu_rd(dev, SMMU_IDR1) >> SMMU_IDR1_PRIQS_SHIFT) & SMMU_IDR1_QS_MASK;
  if (log2size > max) log2size = max;
  struct smmu_priq *p = priq_of(dev);
  if (!p) {
    if (n_priqs == SMMU_MAX_PRIQS) return -1;
    p = &priqs[n_priqs++];
    p->dev = dev;
  }
  const size_t bytes = (size_t)SMMU_PRIQ_DWORDS * 8 << log2size; /* aligned to its size */
  p->q.slots = hal_dma_alloc(bytes, bytes > 4096 ? bytes : 4096, &p->q.base);
  if (!p->q.slots) return -1;
  p->q.log2size = log2size;
  p->q.prod = p->q.cons = 0;
  smmu_wr64(dev, SMMU_PRIQ_BASE, p->q.base | log2size);
  smmu_wr(dev, SMMU_PRIQ_PROD, 0);
  smmu_wr(dev, SMMU_PRIQ_CONS, 0);
  if (msi_line) {
    smmu_wr64(dev, SMMU_PRIQ_IRQ_CFG0, hal_msi_doorbell());
    smmu_wr(dev, SMMU_PRIQ_IRQ_CFG1, msi_line);
    set_and_wait(dev, SMMU_IRQ_CTRL, SMMU_IRQ_CTRLACK, SMMU_IRQ_CTRL_PRIQ_IRQEN);
  }
  set_and_wait(dev, SMMU_CR0, SMMU_CR0ACK, SMMU_CR0_PRIQEN);
  return 0;
}

unsigned smmu_handle_priq(struct smmu_device *dev, smmu_page_fault_fn fault, void *ctx) {
  struct smmu_priq *p = priq_of(dev);
  if (!p) return 0;
  struct smmu_queue *q = &p->q;
  const unsigned log2 = q->log2size;
  const uint32_t prod = smmu_rd(dev, SMMU_PRIQ_PROD);
  hal_barrier(HAL_BARRIER_DMB); /* the records are read after PROD said they are there */
  unsigned n = 0;
  while ((q->cons & q_wrap_mask(log2)) != (prod & q_wrap_mask(log2))) {
    const uint64_t *rec = q->slots + SMMU_PRIQ_DWORDS * q_index(log2, q->cons);
    const uint32_t sid = (uint32_t)(rec[0] & SMMU_PRIQ0_SID_MASK);
    const unsigned prg = (unsigned)(rec[1] & SMMU_PRIQ1_PRG_MASK);
    if (fault(ctx, sid, rec[1] & SMMU_PRIQ1_ADDR_MASK, (rec[0] & SMMU_PRIQ0_WRITE) != 0) != 0)
      p->group_failed[prg] = 1;
    if (rec[0] & SMMU_PRIQ0_LAST) {
      /* No CMD_SYNC: it guarantees nothing of a PRG Response (4.7.3). */
      const unsigned resp = p->group_failed[prg] ? SMMU_PRI_RESP_INVALID : SMMU_PRI_RESP_SUCCESS;
      const uint64_t cmd[1][2] = {{SMMU_CMD_PRI_RESP | ((uint64_t)sid << SMMU_CMD0_SID_SHIFT),
                                   prg | ((uint64_t)resp << SMMU_CMD1_PRI_RESP_SHIFT)}};
      smmu_cmdq_issue(dev, cmd, 1, false);
      p->group_failed[prg] = 0;
    }
    q->cons = q_add(log2, q->cons, 1);
    n++;
  }
  /* Acknowledge an overflow with the consumed records (8.1). */
  smmu_wr(dev, SMMU_PRIQ_CONS, q->cons | (prod & SMMU_Q_OVFLG));
  return n;
}

/*
 * SMMUv3.3 enhanced command queues (IHI 0070 3.5.6): one queue per core, so
 * insertion needs no lock, no owner and no valid map: write the commands,
 * barrier, write PROD. This follows the ECMDQ patches posted for Linux but
 * not merged (Zhen Lei's series "iommu/arm-smmu-v3: Add support for ECMDQ
 * register mode", 2021-2024). With fewer queues than cores, core c uses
 * queue c % n and the cores sharing a queue take its lock around insertion
 * (and around a CONS poll; an MSI wait is outside it). A batch and its SYNC
 * always go to the same queue, since a SYNC orders only its own queue.
 */
#include "drivers/smmu/arm_smmu_internal.h"

static uint32_t ecmdq_cons(const struct smmu_ecmdq *e) { return hal_read32(e->regs + SMMU_ECMDQ_CONS); }

/* What ends a poll of CONS for a SYNC at `at`: the SYNC consumed, or an
 * error to acknowledge (CONS.ERR differs from PROD.ERRACK). */
struct ecmdq_wait {
  unsigned log2;
  uint32_t at, errack;
};
static bool ecmdq_wait_over(uint32_t cons, const void *arg) {
  const struct ecmdq_wait *w = arg;
  return q_consumed(w->log2, cons & q_wrap_mask(w->log2), w->at) ||
         ((cons & SMMU_ECMDQ_CONS_ERR) != 0) != (w->errack != 0);
}

static void ecmdq_write_prod(const struct smmu_ecmdq *e) {
  hal_write32(e->regs + SMMU_ECMDQ_PROD, SMMU_ECMDQ_PROD_EN | e->errack | e->q.prod);
}

/* A refused command stops this queue only (CONS.ERR toggles, GERROR.CMDQP_ERR
 * is raised): replace it by a CMD_SYNC and acknowledge with PROD.ERRACK. The
 * caller holds the queue (its lock when shared). Returns 1 if it skipped one. */
static int ecmdq_skip_error(struct smmu_device *dev, struct smmu_ecmdq *e, uint32_t cons) {
  if (((cons & SMMU_ECMDQ_CONS_ERR) != 0) == (e->errack != 0)) return 0;
  /* As the main queue's: a CMD_SYNC that timed out on an ATC invalidation is run again as it is. */
  if (((cons >> SMMU_ECMDQ_CONS_ERR_REASON_SHIFT) & SMMU_ECMDQ_CONS_ERR_REASON_MASK) != SMMU_CERROR_ATC_INV_SYNC) {
    uint64_t *slot = q_slot(&e->q, cons);
    slot[1] = 0;
    slot[0] = cmd_sync_word0(SMMU_SYNC_CS_NONE, 0);
    hal_barrier(HAL_BARRIER_DSB);
  }
  e->errack ^= SMMU_ECMDQ_PROD_ERRACK;
  ecmdq_write_prod(e);
  sw_spin_lock(&dev->err_lock);
  if ((smmu_rd(dev, SMMU_GERROR) ^ dev->gerrorn) & SMMU_GERROR_CMDQP_ERR) {
    dev->gerrorn ^= SMMU_GERROR_CMDQP_ERR;
    smmu_wr(dev, SMMU_GERRORN, dev->gerrorn);
  }
  sw_spin_unlock(&dev->err_lock);
  dev->stats.cmdq_errors++;
  hal_log(HAL_LOG_WARN, "smmu: ECMDQ %u error at slot %u: skipped", (unsigned)(e - dev->ecmdq),
          q_index(e->q.log2size, cons));
  return 1;
}

/* The periodic check of an MSI wait, outside the queue's lock. */
static void ecmdq_check_error(struct smmu_device *dev, void *arg, int *err) {
  struct smmu_ecmdq *e = arg;
  const bool shared = e->sharers > 1;
  if (shared) sw_spin_lock(&e->lock);
  if (ecmdq_skip_error(dev, e, ecmdq_cons(e))) *err = -1;
  if (shared) sw_spin_unlock(&e->lock);
}

static void ecmdq_insert(struct smmu_device *dev, struct smmu_ecmdq *e, const uint64_t cmd[2], int *err) {
  struct smmu_queue *q = &e->q;
  if (q_space(q->log2size, q->prod, q->cons) == 0) dev->stats.cmdq_full_waits++;
  while (q_space(q->log2size, q->prod, q->cons) == 0) {
    const uint32_t cons = ecmdq_cons(e);
    if (ecmdq_skip_error(dev, e, cons)) *err = -1;
    q->cons = cons & q_wrap_mask(q->log2size);
    if (q_space(q->log2size, q->prod, q->cons) == 0) hal_cpu_relax();
  }
  uint64_t *slot = q_slot(q, q->prod);
  slot[0] = cmd[0];
  slot[1] = cmd[1];
  q->prod = q_add(q->log2size, q->prod, 1);
  SW_STAT_ADD(dev->stats.commands, 1);
}

int smmu_ecmdq_issue(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync) {
  struct smmu_ecmdq *e = &dev->ecmdq[hal_cpu_id() % dev->n_ecmdq_used];
  const bool shared = e->sharers > 1;
  const bool msi = dev->policy.sync == SMMU_SYNC_MSI;
  int err = 0;
  if (shared) sw_spin_lock(&e->lock);
  for (unsigned i = 0; i < n; i++) ecmdq_insert(dev, e, cmds[i], &err);
  uint32_t sync_at = 0, seq = 0;
  if (sync) {
    uint64_t cmd[2] = {cmd_sync_word0(SMMU_SYNC_CS_NONE, 0), 0};
    if (msi) {
      seq = ++e->sync_seq;
      cmd[0] = cmd_sync_word0(SMMU_SYNC_CS_IRQ, seq);
      cmd[1] = e->sync_word_pa & SMMU_CMD1_MSIADDR_MASK;
    } else if (dev->policy.sync == SMMU_SYNC_SEV) {
      cmd[0] = cmd_sync_word0(SMMU_SYNC_CS_SEV, 0);
    }
    sync_at = e->q.prod;
    ecmdq_insert(dev, e, cmd, &err);
    SW_STAT_ADD(dev->stats.syncs, 1);
  }
  hal_barrier(HAL_BARRIER_DSB);
  ecmdq_write_prod(e);
  if (!sync) {
    if (shared) sw_spin_unlock(&e->lock);
    return err;
  }

  if (msi) {
    if (shared) sw_spin_unlock(&e->lock);
    smmu_poll_msi_seq(dev, e->sync_word, seq, ecmdq_check_error, e, &err);
    return err;
  }
  const bool sev = dev->policy.sync == SMMU_SYNC_SEV;
  /* The reads that find neither would only relax and note CONS in e->q.cons:
   * hal_read_poll32 makes them, but notes only the last. That is the same
   * only while no handler on this core can issue to this queue meanwhile:
   * under the lock of a shared queue (it would wait for the lock forever,
   * as in the loop). A queue of its own polls read by read. */
  const bool poll = !sev && shared;
  for (;;) {
    const struct ecmdq_wait w = {e->q.log2size, sync_at, e->errack};
    const uint32_t cons =
        poll ? hal_read_poll32(e->regs + SMMU_ECMDQ_CONS, ecmdq_wait_over, &w, 0, NULL) : ecmdq_cons(e);
    if (ecmdq_skip_error(dev, e, cons)) err = -1;
    e->q.cons = cons & q_wrap_mask(e->q.log2size);
    if (q_consumed(e->q.log2size, e->q.cons, sync_at)) break;
    if (sev) hal_wfe();
    else hal_cpu_relax();
  }
  if (shared) sw_spin_unlock(&e->lock);
  return err;
}

/* Enables one queue per core (as many as there are), each with its own ring
 * and SYNC counter: base, CONS, then PROD.EN and wait for CONS.ENACK. */
int smmu_ecmdq_enable(struct smmu_device *dev, unsigned cores) {
  const uint32_t idr6 = smmu_rd(dev, SMMU_IDR6);
  const unsigned log2numq = (idr6 >> SMMU_IDR6_LOG2NUMQ_SHIFT) & SMMU_IDR6_LOG2NUM_MASK;
  unsigned used = dev->feat.n_ecmdq < cores ? dev->feat.n_ecmdq : cores;
  if (used > SMMU_MAX_ECMDQS) used = SMMU_MAX_ECMDQS;
  if (used == 0) return -1;
  const unsigned log2 = dev->feat.cmdq_log2 < 8 ? dev->feat.cmdq_log2 : 8;
  for (unsigned i = 0; i < used; i++) {
    struct smmu_ecmdq *e = &dev->ecmdq[i];
    const unsigned page = i >> log2numq, slot = i & ((1u << log2numq) - 1);
    const uint64_t page_off = hal_read64(dev->base + SMMU_CMDQ_CONTROL_PAGE_BASE(page)) & SMMU_CMDQ_CONTROL_PAGE_ADDR_MASK;
    e->regs = dev->base + page_off + (uint64_t)slot * (0x10000u >> log2numq);
    e->q.log2size = log2;
    e->q.slots = hal_dma_alloc((size_t)SMMU_CMD_DWORDS * 8 << log2, 4096, &e->q.base);
    e->sync_word = hal_dma_alloc(64, 64, &e->sync_word_pa);
    if (!e->q.slots || !e->sync_word) return -1;
    e->q.prod = e->q.cons = 0;
    e->errack = 0;
    e->sync_seq = 0;
    e->sharers = cores / used + (i < cores % used ? 1u : 0u);
    hal_write64(e->regs + SMMU_ECMDQ_BASE, e->q.base | log2);
    hal_write32(e->regs + SMMU_ECMDQ_CONS, 0);
    hal_write32(e->regs + SMMU_ECMDQ_PROD, SMMU_ECMDQ_PROD_EN);
    while (!(ecmdq_cons(e) & SMMU_ECMDQ_CONS_ENACK)) hal_cpu_relax();
  }
  dev->n_ecmdq_used = used;
  if (used < cores)
    hal_log(HAL_LOG_WARN, "smmu: %u ECMDQs for %u cores: cores share queue (cpu %% %u) under its lock", used, cores,
            used);
  return 0;
}

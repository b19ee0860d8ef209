/*
 * The main command queue: how commands get in under one spinlock (the
 * lock-free insertions are in arm_smmu_cmdq_lockfree.c), how a waiter learns
 * its CMD_SYNC completed (polling CONS, WFE, or an MSI write to memory), and
 * skipping a command the SMMU refused. IHI 0070 3.5, 4.7.3 and 7.1; Linux
 * arm-smmu-v3.c before v5.4: arm_smmu_cmdq_issue_cmd and
 * __arm_smmu_cmdq_issue_sync_msi; docs/driver.md.
 */
#include "lib/string.h"
#include "drivers/smmu/arm_smmu_internal.h"

static unsigned cmdq_log2(const struct smmu_device *dev) { return dev->cmdq.log2size; }

int smmu_cmdq_skip_error(struct smmu_device *dev) {
  if (!((smmu_rd(dev, SMMU_GERROR) ^ dev->gerrorn) & SMMU_GERROR_CMDQ_ERR)) return 0;
  int skipped = 0;
  sw_spin_lock(&dev->err_lock);
  if ((smmu_rd(dev, SMMU_GERROR) ^ dev->gerrorn) & SMMU_GERROR_CMDQ_ERR) {
    /* The queue stopped with CONS at the refused command: make it a
     * CMD_SYNC, which is always legal, then acknowledge (IHI 0070 7.1). A
     * CMD_SYNC that failed on an ATC invalidation's timeout stays as it is:
     * fetched again, it completes, and its waiter with it (Linux's
     * arm_smmu_cmdq_skip_err leaves it too). */
    const uint32_t cons = smmu_rd(dev, SMMU_CMDQ_CONS);
    if (((cons >> SMMU_CMDQ_CONS_ERR_SHIFT) & SMMU_CMDQ_CONS_ERR_MASK) != SMMU_CERROR_ATC_INV_SYNC) {
      uint64_t *slot = q_slot(&dev->cmdq, cons);
      slot[1] = 0;
      slot[0] = cmd_sync_word0(SMMU_SYNC_CS_NONE, 0);
      hal_barrier(HAL_BARRIER_DSB);
    }
    dev->gerrorn ^= SMMU_GERROR_CMDQ_ERR;
    smmu_wr(dev, SMMU_GERRORN, dev->gerrorn);
    dev->stats.cmdq_errors++;
    hal_log(HAL_LOG_WARN, "smmu: command queue error %u at slot %u: skipped",
            (cons >> SMMU_CMDQ_CONS_ERR_SHIFT) & SMMU_CMDQ_CONS_ERR_MASK, q_index(cmdq_log2(dev), cons));
    skipped = 1;
  }
  sw_spin_unlock(&dev->err_lock);
  return skipped;
}

/* One spin of a wait loop: WFE when the SYNC signals an event, else relax;
 * every few spins look for a refused command that would stall the queue. */
void smmu_cmdq_wait_step(struct smmu_device *dev, unsigned *spins, int *err, bool wfe) {
  if (++*spins % SMMU_ERR_POLL_INTERVAL == 0 && smmu_cmdq_skip_error(dev)) *err = -1;
  if (wfe) hal_wfe();
  else hal_cpu_relax();
}

static bool poll_done(uint32_t v, uint32_t value, enum hal_poll_until until) {
  return (v == value) == (until == HAL_POLL_EQ);
}

uint32_t smmu_poll_msi(struct smmu_device *dev, const volatile uint32_t *word, uint32_t value,
                       enum hal_poll_until until, unsigned *spins, smmu_err_check_fn check, void *arg, int *err) {
  for (;;) {
    /* The spins up to the next check, then the one that makes it. */
    const unsigned quiet = SMMU_ERR_POLL_INTERVAL - 1 - *spins % SMMU_ERR_POLL_INTERVAL;
    uint32_t v;
    if (quiet) {
      unsigned polls;
      v = hal_poll32(word, ~0u, value, until, quiet, &polls);
      if (poll_done(v, value, until)) {
        *spins += polls - 1;
        return v;
      }
      *spins += quiet;
    }
    v = hal_load32(word);
    if (poll_done(v, value, until)) return v;
    ++*spins;
    check(dev, arg, err);
    hal_cpu_relax();
  }
}

void smmu_poll_msi_seq(struct smmu_device *dev, const volatile uint32_t *word, uint32_t seq,
                       smmu_err_check_fn check, void *arg, int *err) {
  unsigned spins = 0;
  uint32_t v = hal_load32(word);
  while (!seq_reached(v, seq)) {
    if (++spins % SMMU_ERR_POLL_INTERVAL == 0) check(dev, arg, err);
    hal_cpu_relax();
    v = smmu_poll_msi(dev, word, v, HAL_POLL_NE, &spins, check, arg, err);
  }
}

void smmu_cmdq_check_error(struct smmu_device *dev, void *arg, int *err) {
  (void)arg;
  if (smmu_cmdq_skip_error(dev)) *err = -1;
}

uint32_t smmu_cmdq_read_cons(const struct smmu_device *dev) {
  return smmu_rd(dev, SMMU_CMDQ_CONS) & q_wrap_mask(cmdq_log2(dev));
}

/* What a wait on CONS waits for, given the ring's size and a slot: CONS
 * past the slot (a SYNC completed), or room in the ring before it (PROD).
 * They look at nothing but the value read and the struct, as
 * hal_read_poll32 requires. */
struct cons_wait {
  unsigned log2;
  uint32_t slot;
};
static bool cons_passed(uint32_t cons, const void *arg) {
  const struct cons_wait *w = arg;
  return q_consumed(w->log2, cons & q_wrap_mask(w->log2), w->slot);
}
static bool cons_left_room(uint32_t cons, const void *arg) {
  const struct cons_wait *w = arg;
  return q_space(w->log2, w->slot, cons & q_wrap_mask(w->log2)) != 0;
}

/* The loop
 *   while (!done(cons = smmu_cmdq_read_cons(dev), w)) smmu_cmdq_wait_step(dev, spins, err, false);
 * returning the cons that ended it. hal_read_poll32 makes the reads between
 * two error checks. */
static uint32_t poll_cons(struct smmu_device *dev, hal_poll_done_fn done, const struct cons_wait *w, unsigned *spins,
                          int *err) {
  for (;;) {
    /* The spins up to the next check, then the one that makes it. */
    const unsigned quiet = SMMU_ERR_POLL_INTERVAL - 1 - *spins % SMMU_ERR_POLL_INTERVAL;
    uint32_t cons;
    if (quiet) {
      unsigned polls;
      cons = hal_read_poll32(dev->base + SMMU_CMDQ_CONS, done, w, quiet, &polls);
      if (done(cons, w)) {
        *spins += polls - 1;
        return cons & q_wrap_mask(w->log2);
      }
      *spins += quiet;
    }
    cons = smmu_cmdq_read_cons(dev);
    if (done(cons, w)) return cons;
    smmu_cmdq_wait_step(dev, spins, err, false);
  }
}

uint32_t smmu_cmdq_poll_cons_past(struct smmu_device *dev, uint32_t slot, unsigned *spins, int *err) {
  const struct cons_wait past = {cmdq_log2(dev), slot};
  return poll_cons(dev, cons_passed, &past, spins, err);
}

/* Linux 4.13's wait between CONS reads without WFE (drivers/iommu/
 * arm-smmu-v3.c queue_poll_cons): cpu_relax(), then udelay(d) with d starting
 * at 1 us and doubling after every read, with no cap. The loop
 *   while (!done(cons = smmu_cmdq_read_cons(dev), w)) { check every 16th; relax; delay d; d *= 2; }
 * keeping wait_step's GERROR check cadence; returns the cons that ended it. */
#define SMMU_UDELAY_FIRST_NS 1000u
static uint32_t poll_cons_udelay_backoff(struct smmu_device *dev, hal_poll_done_fn done, const struct cons_wait *w,
                                         unsigned *spins, int *err) {
  uint64_t delay_ns = SMMU_UDELAY_FIRST_NS;
  uint32_t cons;
  while (!done(cons = smmu_cmdq_read_cons(dev), w)) {
    smmu_cmdq_wait_step(dev, spins, err, false);
    hal_delay_ns(delay_ns);
    delay_ns *= 2;
  }
  return cons;
}

void smmu_cmdq_write_cmd(uint64_t *slot, const uint64_t cmd[2]) {
  slot[0] = cmd[0];
  slot[1] = cmd[1];
}

/* ---- cmdq_policy spinlock: the pre-v5.4 driver. Each command takes the
 * lock, waits for space, is written and published with its own PROD write;
 * a SYNC polled through CONS (or WFE) is waited for under the lock, reading
 * CONS back to back (relax) or with Linux 4.13's doubling udelay between
 * reads (sync_wait udelay_backoff). */

static void insert_locked(struct smmu_device *dev, const uint64_t cmd[2], int *err) {
  struct smmu_queue *q = &dev->cmdq;
  unsigned spins = 0;
  if (q_space(q->log2size, q->prod, q->cons) == 0) {
    const struct cons_wait room = {q->log2size, q->prod};
    dev->stats.cmdq_full_waits++;
    q->cons = poll_cons(dev, cons_left_room, &room, &spins, err);
  }
  smmu_cmdq_write_cmd(q_slot(q, q->prod), cmd);
  q->prod = q_add(q->log2size, q->prod, 1);
  hal_barrier(HAL_BARRIER_DSB);
  smmu_wr(dev, SMMU_CMDQ_PROD, q->prod);
  dev->prev_opcode = (uint8_t)cmd[0];
  dev->stats.commands++;
}

int smmu_cmdq_issue_spinlock(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync) {
  struct smmu_queue *q = &dev->cmdq;
  int err = 0;
  for (unsigned i = 0; i < n; i++) {
    sw_spin_lock(&dev->cmdq_lock);
    insert_locked(dev, cmds[i], &err);
    sw_spin_unlock(&dev->cmdq_lock);
  }
  if (!sync) return err;

  if (dev->policy.sync == SMMU_SYNC_MSI) {
    /* The SYNC writes its sequence number to sync_word; SYNCs complete in
     * order, so the waiter polls memory outside the lock. */
    uint32_t seq;
    sw_spin_lock(&dev->cmdq_lock);
    if (dev->policy.elide_back_to_back_sync && dev->prev_opcode == SMMU_CMD_SYNC) {
      seq = dev->sync_seq; /* the SYNC just before covers our commands too */
      dev->stats.syncs_elided++;
    } else {
      seq = ++dev->sync_seq;
      const uint64_t cmd[2] = {cmd_sync_word0(SMMU_SYNC_CS_IRQ, seq), dev->sync_word_pa & SMMU_CMD1_MSIADDR_MASK};
      insert_locked(dev, cmd, &err);
      dev->stats.syncs++;
    }
    sw_spin_unlock(&dev->cmdq_lock);
    smmu_poll_msi_seq(dev, dev->sync_word, seq, smmu_cmdq_check_error, NULL, &err);
    return err;
  }

  const bool sev = dev->policy.sync == SMMU_SYNC_SEV;
  sw_spin_lock(&dev->cmdq_lock);
  const uint64_t cmd[2] = {cmd_sync_word0(sev ? SMMU_SYNC_CS_SEV : SMMU_SYNC_CS_NONE, 0), 0};
  const uint32_t at = q->prod;
  insert_locked(dev, cmd, &err);
  dev->stats.syncs++;
  unsigned spins = 0;
  if (sev) {
    while (!q_consumed(q->log2size, q->cons = smmu_cmdq_read_cons(dev), at)) smmu_cmdq_wait_step(dev, &spins, &err, true);
  } else {
    /* Under the lock nothing follows our SYNC, so CONS past it is also
     * Linux 4.13's drain condition, the queue empty (CONS == PROD). */
    const struct cons_wait past = {q->log2size, at};
    if (dev->policy.sync_wait == SMMU_SYNC_WAIT_UDELAY_BACKOFF)
      q->cons = poll_cons_udelay_backoff(dev, cons_passed, &past, &spins, &err);
    else
      q->cons = poll_cons(dev, cons_passed, &past, &spins, &err);
  }
  sw_spin_unlock(&dev->cmdq_lock);
  return err;
}

static int issue_by_policy(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync) {
  switch (dev->policy.cmdq) {
    case SMMU_CMDQ_LOCKFREE: return smmu_cmdq_issue_lockfree(dev, cmds, n, sync);
    case SMMU_CMDQ_LOCKFREE_ADD: return smmu_cmdq_issue_lockfree_add(dev, cmds, n, sync);
    case SMMU_CMDQ_ECMDQ: return smmu_ecmdq_issue(dev, cmds, n, sync);
    case SMMU_CMDQ_SPINLOCK: break;
  }
  return smmu_cmdq_issue_spinlock(dev, cmds, n, sync);
}

int smmu_cmdq_issue(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync) {
  /* The core's time in here (inserting, waiting for room and for the
   * CMD_SYNC), summed over cores as the app's smmu_cmdq_ps: what says a run
   * was bound by the command queue (platform/bounds.h). Untimed. */
  const uint64_t t0 = hal_clock_ps();
  const int rc = issue_by_policy(dev, cmds, n, sync);
  hal_stat_add("smmu_cmdq_ps", hal_clock_ps() - t0);
  return rc;
}

int smmu_cmdq_init(struct smmu_device *dev) {
  struct smmu_queue *q = &dev->cmdq;
  q->log2size = dev->feat.cmdq_log2 < 10 ? dev->feat.cmdq_log2 : 10;
  /* The SMMU aligns a queue's base down to the queue's size (IHI 0070
   * 6.3.26), so the ring must be aligned to its size. */
  const size_t bytes = (size_t)SMMU_CMD_DWORDS * 8 << q->log2size;
  q->slots = hal_dma_alloc(bytes, bytes > 4096 ? bytes : 4096, &q->base);
  q->prod = q->cons = 0;
  return q->slots ? 0 : -1;
}

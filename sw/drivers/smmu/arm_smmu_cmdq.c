/*
 * The main command queue: how commands get in (one spinlock, or Linux v5.4's
 * lock-free insertion), how a waiter learns its CMD_SYNC completed (polling
 * CONS, WFE, or an MSI write to memory), and skipping a command the SMMU
 * refused. IHI 0070 3.5, 4.7.3 and 7.1; Linux v5.4 arm-smmu-v3.c
 * arm_smmu_cmdq_issue_cmdlist (commit 587e6c10a7ce "iommu/arm-smmu-v3: Reduce
 * contention during command-queue insertion") and, before it,
 * arm_smmu_cmdq_issue_cmd and __arm_smmu_cmdq_issue_sync_msi; docs/driver.md.
 */
#include "lib/string.h"
#include "drivers/smmu/arm_smmu_internal.h"

#define LLQ_OWNED 0x80000000u /* bit 31 of the software prod */
#define LOCK_EXCLUSIVE 0x80000000u

static unsigned cmdq_log2(const struct smmu_device *dev) { return dev->cmdq.log2size; }

int smmu_cmdq_skip_error(struct smmu_device *dev) {
  if (!((smmu_rd(dev, SMMU_GERROR) ^ dev->gerrorn) & SMMU_GERROR_CMDQ_ERR)) return 0;
  int skipped = 0;
  sw_spin_lock(&dev->err_lock);
  if ((smmu_rd(dev, SMMU_GERROR) ^ dev->gerrorn) & SMMU_GERROR_CMDQ_ERR) {
    /* The queue stopped with CONS at the refused command: make it a
     * CMD_SYNC, which is always legal, then acknowledge (IHI 0070 7.1). */
    const uint32_t cons = smmu_rd(dev, SMMU_CMDQ_CONS);
    uint64_t *slot = q_slot(&dev->cmdq, cons);
    slot[1] = 0;
    slot[0] = cmd_sync_word0(SMMU_SYNC_CS_NONE, 0);
    hal_barrier(HAL_BARRIER_DSB);
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
static void wait_step(struct smmu_device *dev, unsigned *spins, int *err, bool wfe) {
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

static void cmdq_check_error(struct smmu_device *dev, void *arg, int *err) {
  (void)arg;
  if (smmu_cmdq_skip_error(dev)) *err = -1;
}

static uint32_t read_cons(const struct smmu_device *dev) {
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
 *   while (!done(cons = read_cons(dev), w)) wait_step(dev, spins, err, false);
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
    cons = read_cons(dev);
    if (done(cons, w)) return cons;
    wait_step(dev, spins, err, false);
  }
}

/* Linux 4.13's wait between CONS reads without WFE (drivers/iommu/
 * arm-smmu-v3.c queue_poll_cons): cpu_relax(), then udelay(d) with d starting
 * at 1 us and doubling after every read, with no cap. The loop
 *   while (!done(cons = read_cons(dev), w)) { check every 16th; relax; delay d; d *= 2; }
 * keeping wait_step's GERROR check cadence; returns the cons that ended it. */
#define SMMU_UDELAY_FIRST_NS 1000u
static uint32_t poll_cons_udelay_backoff(struct smmu_device *dev, hal_poll_done_fn done, const struct cons_wait *w,
                                         unsigned *spins, int *err) {
  uint64_t delay_ns = SMMU_UDELAY_FIRST_NS;
  uint32_t cons;
  while (!done(cons = read_cons(dev), w)) {
    wait_step(dev, spins, err, false);
    hal_delay_ns(delay_ns);
    delay_ns *= 2;
  }
  return cons;
}

static void write_cmd(uint64_t *slot, const uint64_t cmd[2]) {
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
  write_cmd(q_slot(q, q->prod), cmd);
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
    smmu_poll_msi_seq(dev, dev->sync_word, seq, cmdq_check_error, NULL, &err);
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
    while (!q_consumed(q->log2size, q->cons = read_cons(dev), at)) wait_step(dev, &spins, &err, true);
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

/* ---- cmdq_policy lockfree: Linux v5.4 (arm_smmu_cmdq_issue_cmdlist, commit 587e6c10a7ce). */

static uint32_t llq_prod(uint64_t v) { return (uint32_t)v; }
static uint32_t llq_cons(uint64_t v) { return (uint32_t)(v >> 32); }
static uint64_t llq_make(uint32_t prod, uint32_t cons) { return ((uint64_t)cons << 32) | prod; }
/* The cons half of the shared word, written on its own (little-endian). */
static volatile uint32_t *llq_cons_word(struct smmu_device *dev) { return (volatile uint32_t *)&dev->lf.llq + 1; }

/* The shared lock: SYNC waiters hold it shared so that cons is not moved
 * past a SYNC slot someone still polls; refreshing cons takes it exclusive. */
static void shared_lock(struct smmu_device *dev) {
  if ((int32_t)hal_fetch_add32(&dev->lf.lock, 1) >= 0) return;
  for (;;) {
    uint32_t v;
    v = hal_poll32(&dev->lf.lock, LOCK_EXCLUSIVE, 0, HAL_POLL_EQ, 0, NULL);
    if (hal_cmpxchg32(&dev->lf.lock, v, v + 1) == v) return;
  }
}
static void shared_unlock(struct smmu_device *dev) { hal_fetch_add32(&dev->lf.lock, (uint32_t)-1); }
/* Drops a shared hold unless it is the last one (then the caller publishes
 * cons first and unlocks). */
static bool shared_tryunlock(struct smmu_device *dev) {
  if (hal_load32(&dev->lf.lock) == 1) return false;
  shared_unlock(dev);
  return true;
}
static bool exclusive_trylock(struct smmu_device *dev) {
  return hal_cmpxchg32(&dev->lf.lock, 0, LOCK_EXCLUSIVE) == 0;
}
static void exclusive_unlock(struct smmu_device *dev) { hal_store32(&dev->lf.lock, 0); }

/* A full queue: one CPU refreshes cons from the SMMU under the exclusive
 * lock; the others watch the shared word until it has room. */
static uint64_t wait_for_space(struct smmu_device *dev, uint64_t llq, uint32_t need, int *err) {
  const unsigned log2 = cmdq_log2(dev);
  unsigned spins = 0;
  dev->stats.cmdq_full_waits++;
  for (;;) {
    if (exclusive_trylock(dev)) {
      hal_store32(llq_cons_word(dev), read_cons(dev));
      exclusive_unlock(dev);
    }
    llq = hal_load64(&dev->lf.llq);
    if (q_space(log2, llq_prod(llq) & ~LLQ_OWNED, llq_cons(llq)) >= need) return llq;
    wait_step(dev, &spins, err, false);
  }
}

/* The valid-map bits of slots [from, to) that share one 64-bit word and one
 * lap of the ring: the word, its mask, and where the next chunk starts. */
struct valid_chunk {
  uint32_t word, next;
  uint64_t mask;
  bool wrap;
};
static struct valid_chunk valid_chunk(unsigned log2, uint32_t from, uint32_t to) {
  const uint32_t idx = q_index(log2, from), bit = idx % 64;
  uint32_t n = 64 - bit;
  const uint32_t left = (to - from) & q_wrap_mask(log2);
  if (n > left) n = left;
  if (n > (1u << log2) - idx) n = (1u << log2) - idx;
  const struct valid_chunk c = {idx / 64, q_add(log2, from, n), (n == 64 ? ~0ull : ((1ull << n) - 1)) << bit,
                                q_wrap(log2, from) != 0};
  return c;
}

/* Marks slots [from, to) valid: the valid value of a slot's bit is the
 * inverse of its wrap bit, so each pass round the ring flips it. */
static void set_valid(struct smmu_device *dev, uint32_t from, uint32_t to) {
  while (from != to) {
    const struct valid_chunk c = valid_chunk(cmdq_log2(dev), from, to);
    if (c.wrap) hal_fetch_andnot64(&dev->lf.valid_map[c.word], c.mask);
    else hal_fetch_or64(&dev->lf.valid_map[c.word], c.mask);
    from = c.next;
  }
}

static void wait_valid(struct smmu_device *dev, uint32_t from, uint32_t to) {
  while (from != to) {
    const struct valid_chunk c = valid_chunk(cmdq_log2(dev), from, to);
    const uint64_t want = c.wrap ? 0 : c.mask;
    hal_poll64(&dev->lf.valid_map[c.word], c.mask, want, HAL_POLL_EQ, 0, NULL);
    from = c.next;
  }
}

/* Waits until the SYNC at `sync_at` has completed; returns the cons it
 * proves. MSI: the SYNC writes 0 over its own first word. */
static uint32_t wait_sync_lockfree(struct smmu_device *dev, uint32_t sync_at, int *err) {
  const unsigned log2 = cmdq_log2(dev);
  unsigned spins = 0;
  if (dev->policy.sync == SMMU_SYNC_MSI) {
    /* Nobody else writes the slot meanwhile: our shared hold keeps cons
     * before it, so it cannot be reused. */
    const volatile uint32_t *word = (volatile uint32_t *)q_slot(&dev->cmdq, sync_at);
    smmu_poll_msi(dev, word, 0, HAL_POLL_EQ, &spins, cmdq_check_error, NULL, err);
    return q_add(log2, sync_at, 1);
  }
  const bool sev = dev->policy.sync == SMMU_SYNC_SEV;
  uint32_t cons = llq_cons(hal_load64(&dev->lf.llq));
  if (q_consumed(log2, cons, sync_at)) return cons;
  wait_step(dev, &spins, err, sev);
  if (!sev) {
    const struct cons_wait past = {log2, sync_at};
    return poll_cons(dev, cons_passed, &past, &spins, err);
  }
  while (!q_consumed(log2, cons = read_cons(dev), sync_at)) wait_step(dev, &spins, err, true);
  return cons;
}

int smmu_cmdq_issue_lockfree(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync) {
  const unsigned log2 = cmdq_log2(dev);
  const uint32_t total = n + (sync ? 1u : 0u);
  int err = 0;
  if (total == 0) return 0;

  /* 1. Reserve `total` slots with one cmpxchg; whoever finds OWNED clear
   * becomes the owner of everything gathered until it closes the window. */
  uint64_t llq = hal_load64(&dev->lf.llq), head;
  for (;;) {
    if (q_space(log2, llq_prod(llq) & ~LLQ_OWNED, llq_cons(llq)) < total) llq = wait_for_space(dev, llq, total, &err);
    const uint32_t start = llq_prod(llq) & ~LLQ_OWNED;
    head = llq_make(q_add(log2, start, total) | LLQ_OWNED, llq_cons(llq));
    const uint64_t old = hal_cmpxchg64(&dev->lf.llq, llq, head);
    if (old == llq) break;
    llq = old;
  }
  const bool owner = !(llq_prod(llq) & LLQ_OWNED);
  const uint32_t start = llq_prod(llq) & ~LLQ_OWNED;
  const uint32_t end = llq_prod(head) & ~LLQ_OWNED;

  /* 2. Write our commands; a SYNC in MSI mode signals its own slot. */
  for (unsigned i = 0; i < n; i++) write_cmd(q_slot(&dev->cmdq, q_add(log2, start, i)), cmds[i]);
  const uint32_t sync_at = q_add(log2, start, n);
  if (sync) {
    uint64_t cmd[2] = {cmd_sync_word0(SMMU_SYNC_CS_NONE, 0), 0};
    if (dev->policy.sync == SMMU_SYNC_MSI) {
      cmd[0] = cmd_sync_word0(SMMU_SYNC_CS_IRQ, 0);
      cmd[1] = (dev->cmdq.base + 16ull * q_index(log2, sync_at)) & SMMU_CMD1_MSIADDR_MASK;
    } else if (dev->policy.sync == SMMU_SYNC_SEV) {
      cmd[0] = cmd_sync_word0(SMMU_SYNC_CS_SEV, 0);
    }
    write_cmd(q_slot(&dev->cmdq, sync_at), cmd);
    shared_lock(dev);
  }
  SW_STAT_ADD(dev->stats.commands, total);
  if (sync) SW_STAT_ADD(dev->stats.syncs, 1);

  /* 3. Publish them in the valid map. */
  hal_barrier(HAL_BARRIER_DMB);
  set_valid(dev, start, end);

  /* 4. The owner waits for the previous owner, closes the gather window,
   * waits for every gathered slot to be valid and writes PROD once. */
  if (owner) {
    hal_poll32(&dev->lf.owner_prod, ~0u, start, HAL_POLL_EQ, 0, NULL);
    const uint32_t prod = (uint32_t)hal_fetch_andnot64(&dev->lf.llq, LLQ_OWNED) & ~LLQ_OWNED;
    wait_valid(dev, start, prod);
    hal_barrier(HAL_BARRIER_DSB);
    smmu_wr(dev, SMMU_CMDQ_PROD, prod);
    hal_store32(&dev->lf.owner_prod, prod);
  }

  /* 5. Wait for our SYNC; the last waiter publishes the cons it proved. */
  if (sync) {
    const uint32_t cons = wait_sync_lockfree(dev, sync_at, &err);
    if (!shared_tryunlock(dev)) {
      hal_store32(llq_cons_word(dev), cons);
      shared_unlock(dev);
    }
  }
  return err;
}

int smmu_cmdq_lockfree_init(struct smmu_device *dev) {
  const unsigned words = ((1u << cmdq_log2(dev)) + 63) / 64;
  phys_addr_t pa;
  dev->lf.valid_map = hal_dma_alloc(words * 8, 64, &pa);
  if (!dev->lf.valid_map) return -1;
  /* Start where the hardware queue is now. */
  const uint32_t p = dev->cmdq.prod;
  hal_store64(&dev->lf.llq, llq_make(p, read_cons(dev)));
  hal_store32(&dev->lf.owner_prod, p);
  hal_store32(&dev->lf.lock, 0);
  /* Every slot starts invalid for its next use: a slot's next use has the
   * wrap bit of prod from prod's index on, the other one below it, and a
   * valid bit is the inverse of that wrap bit. */
  const unsigned log2 = cmdq_log2(dev);
  for (uint32_t i = 0; i < (1u << log2); i++) {
    const bool next_wrap = i >= q_index(log2, p) ? q_wrap(log2, p) != 0 : q_wrap(log2, p) == 0;
    if (next_wrap) dev->lf.valid_map[i / 64] |= 1ull << (i % 64);
  }
  return 0;
}

int smmu_cmdq_issue(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync) {
  switch (dev->policy.cmdq) {
    case SMMU_CMDQ_LOCKFREE: return smmu_cmdq_issue_lockfree(dev, cmds, n, sync);
    case SMMU_CMDQ_ECMDQ: return smmu_ecmdq_issue(dev, cmds, n, sync);
    case SMMU_CMDQ_SPINLOCK: break;
  }
  return smmu_cmdq_issue_spinlock(dev, cmds, n, sync);
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

/*
 * The main command queue's lock-free insertions. Linux v5.4's arm-smmu-v3.c
 * arm_smmu_cmdq_issue_cmdlist (commit 587e6c10a7ce "iommu/arm-smmu-v3:
 * Reduce contention during command-queue insertion"): slots claimed with a
 * cmpxchg loop on {prod, cons}, the first CPU of a gather the owner that
 * writes PROD, a valid bitmap, SYNC waiters holding a shared lock. And the
 * variant John Garry posted as "[PATCH v2 2/2] iommu/arm-smmu-v3: Remove
 * cmpxchg() in arm_smmu_cmdq_issue_cmdlist()" (LKML, Aug 2020): one fetch-add
 * claims the slots, space is checked after, and the owner takes the shared
 * lock for every SYNC it gathered. docs/driver.md.
 */
#include "lib/string.h"
#include "drivers/smmu/arm_smmu_internal.h"

#define LLQ_OWNED 0x80000000u /* bit 31 of the software prod */
#define LOCK_EXCLUSIVE 0x80000000u

static unsigned cmdq_log2(const struct smmu_device *dev) { return dev->cmdq.log2size; }

/* ---- cmdq_policy lockfree: Linux v5.4 (arm_smmu_cmdq_issue_cmdlist, commit 587e6c10a7ce). */

static uint32_t llq_prod(uint64_t v) { return (uint32_t)v; }
static uint32_t llq_cons(uint64_t v) { return (uint32_t)(v >> 32); }
static uint64_t llq_make(uint32_t prod, uint32_t cons) { return ((uint64_t)cons << 32) | prod; }
/* The cons half of the shared word, written on its own (little-endian). */
static volatile uint32_t *llq_cons_word(struct smmu_device *dev) { return (volatile uint32_t *)&dev->lf.llq + 1; }

/* The shared lock: SYNC waiters hold it shared so that cons is not moved
 * past a SYNC slot someone still polls; refreshing cons takes it exclusive.
 * A shared locker that finds it exclusive keeps its increment and waits for
 * the exclusive bit to clear: the exclusive unlock clears only that bit, so
 * the pending count then bars the next exclusive taker. (v5.4 stored 0 at
 * unlock, dropping the count; the waiter's cmpxchg could then lose to a new
 * exclusive taker forever, a livelock we met with a 16-entry queue and
 * 9-command batches. Linux fixed it the same way in "iommu/arm-smmu-v3:
 * Improve CMDQ lock fairness and efficiency", 2026.) */
static void shared_lock(struct smmu_device *dev) {
  if ((int32_t)hal_fetch_add32(&dev->lf.lock, 1) >= 0) return;
  hal_poll32(&dev->lf.lock, LOCK_EXCLUSIVE, 0, HAL_POLL_EQ, 0, NULL);
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
static void exclusive_unlock(struct smmu_device *dev) { hal_fetch_andnot32(&dev->lf.lock, LOCK_EXCLUSIVE); }

/* A full queue: one CPU refreshes cons from the SMMU under the exclusive
 * lock; the others watch the shared word until it has room. */
static uint64_t wait_for_space(struct smmu_device *dev, uint64_t llq, uint32_t need, int *err) {
  const unsigned log2 = cmdq_log2(dev);
  unsigned spins = 0;
  dev->stats.cmdq_full_waits++;
  for (;;) {
    if (exclusive_trylock(dev)) {
      hal_store32(llq_cons_word(dev), smmu_cmdq_read_cons(dev));
      exclusive_unlock(dev);
    }
    llq = hal_load64(&dev->lf.llq);
    if (q_space(log2, llq_prod(llq) & ~LLQ_OWNED, llq_cons(llq)) >= need) return llq;
    smmu_cmdq_wait_step(dev, &spins, err, false);
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
  const bool fetch_add = dev->policy.cmdq == SMMU_CMDQ_LOCKFREE_ADD;
  const unsigned log2 = cmdq_log2(dev);
  unsigned spins = 0;
  if (dev->policy.sync == SMMU_SYNC_MSI) {
    /* Nobody else writes the slot meanwhile: our shared hold keeps cons
     * before it, so it cannot be reused. */
    const volatile uint32_t *word = (volatile uint32_t *)q_slot(&dev->cmdq, sync_at);
    smmu_poll_msi(dev, word, 0, HAL_POLL_EQ, &spins, smmu_cmdq_check_error, NULL, err);
    return q_add(log2, sync_at, 1);
  }
  const bool sev = dev->policy.sync == SMMU_SYNC_SEV;
  uint32_t cons = fetch_add ? hal_load32(&dev->lf.cons) : llq_cons(hal_load64(&dev->lf.llq));
  if (q_consumed(log2, cons, sync_at)) return cons;
  smmu_cmdq_wait_step(dev, &spins, err, sev);
  if (!sev) return smmu_cmdq_poll_cons_past(dev, sync_at, &spins, err);
  while (!q_consumed(log2, cons = smmu_cmdq_read_cons(dev), sync_at)) smmu_cmdq_wait_step(dev, &spins, err, true);
  return cons;
}

/* The SYNC at `sync_at` as the policy completes it: in MSI mode it writes 0
 * over its own first word. */
static void write_sync(struct smmu_device *dev, uint32_t sync_at) {
  uint64_t cmd[2] = {cmd_sync_word0(SMMU_SYNC_CS_NONE, 0), 0};
  if (dev->policy.sync == SMMU_SYNC_MSI) {
    cmd[0] = cmd_sync_word0(SMMU_SYNC_CS_IRQ, 0);
    cmd[1] = (dev->cmdq.base + 16ull * q_index(cmdq_log2(dev), sync_at)) & SMMU_CMD1_MSIADDR_MASK;
  } else if (dev->policy.sync == SMMU_SYNC_SEV) {
    cmd[0] = cmd_sync_word0(SMMU_SYNC_CS_SEV, 0);
  }
  smmu_cmdq_write_cmd(q_slot(&dev->cmdq, sync_at), cmd);
}

/* Steps 2 and 3 of both insertions: the commands and the SYNC written into
 * slots [start, end), then marked valid. `take_shared`: a CPU with a SYNC
 * takes the shared lock itself (v5.4; in the fetch-add variant the owner
 * takes it for the SYNCs it gathered). Returns the SYNC's slot. */
static uint32_t write_and_publish(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync,
                                  uint32_t start, uint32_t end, bool take_shared) {
  const unsigned log2 = cmdq_log2(dev);
  for (unsigned i = 0; i < n; i++) smmu_cmdq_write_cmd(q_slot(&dev->cmdq, q_add(log2, start, i)), cmds[i]);
  const uint32_t sync_at = q_add(log2, start, n);
  if (sync) {
    write_sync(dev, sync_at);
    if (take_shared) shared_lock(dev);
  }
  SW_STAT_ADD(dev->stats.commands, n + (sync ? 1u : 0u));
  if (sync) SW_STAT_ADD(dev->stats.syncs, 1);
  hal_barrier(HAL_BARRIER_DMB);
  set_valid(dev, start, end);
  return sync_at;
}

/* Step 5 of both: wait for our SYNC; the last waiter to leave publishes the
 * cons it proved in `cons_word`. */
static void wait_and_release(struct smmu_device *dev, uint32_t sync_at, volatile uint32_t *cons_word, int *err) {
  const uint32_t cons = wait_sync_lockfree(dev, sync_at, err);
  if (!shared_tryunlock(dev)) {
    hal_store32(cons_word, cons);
    shared_unlock(dev);
  }
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
    SW_STAT_ADD(dev->stats.cmdq_claim_attempts, 1);
    if (old == llq) break;
    llq = old;
  }
  SW_STAT_ADD(dev->stats.cmdq_claims, 1);
  const bool owner = !(llq_prod(llq) & LLQ_OWNED);
  const uint32_t start = llq_prod(llq) & ~LLQ_OWNED;
  const uint32_t end = llq_prod(head) & ~LLQ_OWNED;

  /* 2-3. Write our commands, then publish them in the valid map. */
  const uint32_t sync_at = write_and_publish(dev, cmds, n, sync, start, end, true);

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
  if (sync) wait_and_release(dev, sync_at, llq_cons_word(dev), &err);
  return err;
}

/* ---- cmdq_policy lockfree_add: John Garry, "[PATCH v2 2/2]
 * iommu/arm-smmu-v3: Remove cmpxchg() in arm_smmu_cmdq_issue_cmdlist()"
 * (LKML, 21 Aug 2020). The shared word is {SYNCs gathered, CPUs gathered,
 * prod}; a CPU adds {sync, 1, n + sync} to it in one atomic and is the owner
 * when it found no CPU gathered. Only then does it look for room, against a
 * cons of its own word. The owner takes the shared lock for every SYNC it
 * gathered, so that no waiter holds cons back while the queue is full. */

static uint32_t add_prod(uint64_t v) { return (uint32_t)(v >> 32); }
static uint32_t add_count(uint64_t v) { return (uint32_t)(v >> 16) & 0xFFFFu; }
static uint32_t add_syncs(uint64_t v) { return (uint32_t)v & 0xFFFFu; }
static uint64_t add_make(uint32_t syncs, uint32_t count, uint32_t prod) {
  return ((uint64_t)prod << 32) | ((uint64_t)(count & 0xFFFFu) << 16) | (syncs & 0xFFFFu);
}

/* Room for `n` from `prod`, where prod may have run past cons: the claim
 * comes before the check, so a prod that lapped cons says "no room" (the
 * patch's queue_has_space). */
static bool add_has_space(unsigned log2, uint32_t prod, uint32_t cons, uint32_t n) {
  const uint32_t pi = q_index(log2, prod), ci = q_index(log2, cons);
  uint32_t space;
  if (q_wrap(log2, prod) == q_wrap(log2, cons)) {
    if (ci > pi) return false;
    space = (1u << log2) - (pi - ci);
  } else {
    if (pi > ci) return false;
    space = ci - pi;
  }
  return space >= n;
}

/* A full queue: one CPU refreshes cons from the SMMU under the exclusive
 * lock; the others watch the cons word until there is room. */
static void add_wait_for_space(struct smmu_device *dev, uint32_t prod, uint32_t need, int *err) {
  const unsigned log2 = cmdq_log2(dev);
  unsigned spins = 0;
  dev->stats.cmdq_full_waits++;
  for (;;) {
    if (exclusive_trylock(dev)) {
      hal_store32(&dev->lf.cons, smmu_cmdq_read_cons(dev));
      exclusive_unlock(dev);
    }
    if (add_has_space(log2, prod, hal_load32(&dev->lf.cons), need)) return;
    smmu_cmdq_wait_step(dev, &spins, err, false);
  }
}

/* The shared lock taken `count` times at once (the owner's, for the SYNCs it
 * gathered). */
static void shared_lock_n(struct smmu_device *dev, uint32_t count) {
  if (count == 0) return;
  if ((int32_t)hal_fetch_add32(&dev->lf.lock, count) >= 0) return;
  hal_poll32(&dev->lf.lock, LOCK_EXCLUSIVE, 0, HAL_POLL_EQ, 0, NULL);  /* as shared_lock */
}

static int issue_add(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync);

/* The claim comes before the check for room, so prod may run past cons, but
 * never a whole ring past it: no issue is larger than the queue's share of
 * one CPU (the patch series' "Calculate max commands per batch"), and every
 * issue ends with a CMD_SYNC its CPU waits for, so that no CPU holds more
 * than its share at once. A longer list goes in pieces, each with its SYNC.
 * (The v1 series issued a SYNC always for this reason; v2 dropped it, and a
 * CPU that returned from a SYNC-less piece could claim again before its
 * slots were consumed: with a 32-entry queue, four CPUs and 9-command lists
 * an owner waited for a slot that waited for room behind the owner's own
 * PROD, for ever. tests/integration/cli_cmdq_stress_test.cc.) Callers that
 * ask for no SYNC get one anyway under this policy. */
int smmu_cmdq_issue_lockfree_add(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync) {
  const unsigned most = dev->lf.max_per_issue - 1; /* and the SYNC */
  int err = 0;
  if (n == 0 && !sync) return 0;
  do {
    const unsigned k = n < most ? n : most;
    if (issue_add(dev, cmds, k, true)) err = -1;
    cmds += k;
    n -= k;
  } while (n);
  return err;
}

static int issue_add(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync) {
  const unsigned log2 = cmdq_log2(dev);
  const uint32_t total = n + (sync ? 1u : 0u);
  int err = 0;
  if (total == 0) return 0;

  /* 1. Claim `total` slots with one atomic add; room is checked after. */
  const uint64_t old = hal_fetch_add64(&dev->lf.llq, add_make(sync ? 1u : 0u, 1, total));
  const bool owner = add_count(old) == 0;
  const uint32_t start = add_prod(old) & q_wrap_mask(log2);
  const uint32_t end = q_add(log2, start, total);
  if (!add_has_space(log2, start, hal_load32(&dev->lf.cons), total)) add_wait_for_space(dev, start, total, &err);

  /* 2-3. Write our commands, then publish them in the valid map (the owner
   * takes the shared lock for our SYNC). */
  const uint32_t sync_at = write_and_publish(dev, cmds, n, sync, start, end, false);

  /* 4. The owner waits for the previous owner, closes the gather (clearing
   * the counts and prod's bits above the ring), takes the shared lock for
   * the SYNCs gathered, waits for every gathered slot and writes PROD. */
  if (owner) {
    hal_poll32(&dev->lf.owner_prod, ~0u, start, HAL_POLL_EQ, 0, NULL);
    const uint64_t closed = hal_fetch_andnot64(&dev->lf.llq, add_make(0xFFFFu, 0xFFFFu, ~q_wrap_mask(log2)));
    const uint32_t prod = add_prod(closed) & q_wrap_mask(log2);
    wait_valid(dev, start, prod);
    shared_lock_n(dev, add_syncs(closed));
    hal_barrier(HAL_BARRIER_DSB);
    smmu_wr(dev, SMMU_CMDQ_PROD, prod);
    hal_store32(&dev->lf.owner_prod, prod);
  }

  /* 5. Wait for our SYNC; the last waiter publishes the cons it proved. */
  if (sync) wait_and_release(dev, sync_at, &dev->lf.cons, &err);
  return err;
}

int smmu_cmdq_lockfree_init(struct smmu_device *dev, bool fetch_add) {
  const unsigned words = ((1u << cmdq_log2(dev)) + 63) / 64;
  phys_addr_t pa;
  dev->lf.valid_map = hal_dma_alloc(words * 8, 64, &pa);
  if (!dev->lf.valid_map) return -1;
  /* Start where the hardware queue is now. */
  const uint32_t p = dev->cmdq.prod;
  if (fetch_add) {
    /* Every CPU's largest issue fits in the ring at once, and a TLBI and
     * its SYNC go together. */
    dev->lf.max_per_issue = (1u << cmdq_log2(dev)) / hal_cpu_count();
    if (dev->lf.max_per_issue < 2) return -1;
    hal_store64(&dev->lf.llq, add_make(0, 0, p));
    hal_store32(&dev->lf.cons, smmu_cmdq_read_cons(dev));
  } else {
    hal_store64(&dev->lf.llq, llq_make(p, smmu_cmdq_read_cons(dev)));
  }
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


/*
 * What the arm_smmu_*.c files share: register access and queue index
 * arithmetic (IHI 0070 3.5: an index plus a wrap bit; equal indexes mean
 * empty with equal wrap bits, full with different ones).
 */
#ifndef SMMU_VP_SW_SMMU_ARM_SMMU_INTERNAL_H
#define SMMU_VP_SW_SMMU_ARM_SMMU_INTERNAL_H

#include "lib/compiler.h"
#include "drivers/smmu/arm_smmu.h"
#include "drivers/smmu/smmu_hw.h"

static inline uint32_t smmu_rd(const struct smmu_device *dev, uint32_t off) { return hal_read32(dev->base + off); }
static inline void smmu_wr(const struct smmu_device *dev, uint32_t off, uint32_t v) {
  hal_write32(dev->base + off, v);
}
static inline void smmu_wr64(const struct smmu_device *dev, uint32_t off, uint64_t v) {
  hal_write64(dev->base + off, v);
}

/* Index and wrap bit of a queue of 2^log2 entries. */
static inline uint32_t q_wrap_mask(unsigned log2) { return (2u << log2) - 1; }
static inline uint32_t q_index(unsigned log2, uint32_t p) { return p & ((1u << log2) - 1); }
static inline uint32_t q_wrap(unsigned log2, uint32_t p) { return p & (1u << log2); }
static inline uint32_t q_add(unsigned log2, uint32_t p, uint32_t n) { return (p + n) & q_wrap_mask(log2); }
static inline uint32_t q_space(unsigned log2, uint32_t prod, uint32_t cons) {
  const uint32_t pi = q_index(log2, prod), ci = q_index(log2, cons);
  if (q_wrap(log2, prod) == q_wrap(log2, cons)) return (1u << log2) - (pi - ci);
  return ci - pi;
}
/* Has the consumer passed slot `prod` (cons beyond it, allowing for wrap)? */
static inline bool q_consumed(unsigned log2, uint32_t cons, uint32_t prod) {
  if (q_wrap(log2, cons) == q_wrap(log2, prod)) return q_index(log2, cons) > q_index(log2, prod);
  return q_index(log2, cons) <= q_index(log2, prod);
}
static inline uint64_t *q_slot(const struct smmu_queue *q, uint32_t p) {
  return q->slots + SMMU_CMD_DWORDS * q_index(q->log2size, p);
}

/* SYNCs complete in order, so a waiter is done once the counter has reached
 * its number; the compare is wrap-safe. */
static inline bool seq_reached(uint32_t now, uint32_t want) { return (int32_t)(now - want) >= 0; }

static inline uint64_t cmd_sync_word0(unsigned cs, uint32_t msidata) {
  return SMMU_CMD_SYNC | ((uint64_t)cs << SMMU_CMD0_SYNC_CS_SHIFT) | ((uint64_t)msidata << SMMU_CMD0_SYNC_MSIDATA_SHIFT);
}

/* Error checks are an MMIO read; waiters make one every this many polls. */
#define SMMU_ERR_POLL_INTERVAL 16u

/* Waiting for a SYNC's MSI: the loop
 *   while (!done(v = hal_load32(word))) {
 *     if (++*spins % SMMU_ERR_POLL_INTERVAL == 0) check(dev, arg, err);
 *     hal_cpu_relax();
 *   }
 * with done(v) = (v == value) for HAL_POLL_EQ, (v != value) for HAL_POLL_NE;
 * returns the value that ended it. hal_poll32 makes the polls between two
 * checks. Only the SMMU writes the words polled (arm_smmu_cmdq.c). */
typedef void (*smmu_err_check_fn)(struct smmu_device *dev, void *arg, int *err);
uint32_t smmu_poll_msi(struct smmu_device *dev, const volatile uint32_t *word, uint32_t value,
                       enum hal_poll_until until, unsigned *spins, smmu_err_check_fn check, void *arg, int *err);
/* The same for `while (!seq_reached(hal_load32(word), seq))`: the word
 * holds the sequence number of the last SYNC completed. */
void smmu_poll_msi_seq(struct smmu_device *dev, const volatile uint32_t *word, uint32_t seq,
                       smmu_err_check_fn check, void *arg, int *err);

/* Main command queue (arm_smmu_cmdq.c). */
int smmu_cmdq_init(struct smmu_device *dev);
int smmu_cmdq_lockfree_init(struct smmu_device *dev, bool fetch_add);
/* Skips a command the main queue refused, if GERROR says one was: 1 if this
 * call skipped one, else 0. */
int smmu_cmdq_skip_error(struct smmu_device *dev);
int smmu_cmdq_issue_spinlock(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync);
int smmu_cmdq_issue_lockfree(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync);
int smmu_cmdq_issue_lockfree_add(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync);
/* What the queue's insertion paths share (arm_smmu_cmdq.c): one spin of a
 * wait loop (WFE or relax, a GERROR check every few spins), the error check
 * for smmu_poll_msi, CONS as read from the SMMU (wrap and index), a wait for
 * CONS past `slot`, and writing one command into its slot. */
void smmu_cmdq_wait_step(struct smmu_device *dev, unsigned *spins, int *err, bool wfe);
void smmu_cmdq_check_error(struct smmu_device *dev, void *arg, int *err);
uint32_t smmu_cmdq_read_cons(const struct smmu_device *dev);
uint32_t smmu_cmdq_poll_cons_past(struct smmu_device *dev, uint32_t slot, unsigned *spins, int *err);
void smmu_cmdq_write_cmd(uint64_t *slot, const uint64_t cmd[2]);

/* ECMDQs (arm_smmu_ecmdq.c). */
int smmu_ecmdq_enable(struct smmu_device *dev, unsigned cores);
int smmu_ecmdq_issue(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync);

/* Stream table (arm_smmu_strtab.c). */
int smmu_strtab_init(struct smmu_device *dev);

#endif

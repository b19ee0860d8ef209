/*
 * Kernel spinlocks on the HAL atomics, of the two kinds Linux has used on
 * arm64, both FIFO fair so contention shows up as queueing in simulated time
 * rather than as starvation:
 *  - ticket (the default; arm64 before Linux 4.18): every waiter polls the
 *    lock's own line, so each hand-off is seen by all of them and their
 *    re-reads queue on that line;
 *  - queued (qspinlock, kernel/locking/qspinlock.c; arm64 since "arm64:
 *    locking: Replace ticket lock implementation with qspinlock", commit
 *    c11090474d70, Linux 4.18; x86 since 4.2): one word with a locked byte,
 *    a pending bit and the tail of an MCS queue; the first waiter polls the
 *    word, the others each their own per-core node, so a hand-off moves one
 *    line to one core.
 * Every access to the lock words goes through the HAL and is charged the
 * atomic latency and cache-line transfer cost of the platform.
 */
#ifndef SMMU_VP_SW_LIB_SPINLOCK_H
#define SMMU_VP_SW_LIB_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Two words rather than one packed word: the HAL has only 32/64-bit atomics,
 * and with both counters in one word an increment of the lower one would
 * carry into the upper one when it wraps. All-zero is an unlocked ticket
 * lock. A queued lock keeps its qspinlock word in `next` and
 * SW_SPIN_QUEUED in `owner`, which a ticket count never reaches in a run. */
struct sw_spinlock {
  volatile uint32_t next;  /* next ticket to hand out; queued: the lock word */
  volatile uint32_t owner; /* ticket now holding the lock; queued: SW_SPIN_QUEUED */
};
#define SW_SPIN_QUEUED 0xffffffffu

#define SW_SPINLOCK_INIT {0, 0}

/* For locks in dynamically allocated memory. */
void sw_spin_lock_init(struct sw_spinlock *lock);
/* Makes an idle lock a queued one (ticket again with sw_spin_lock_init).
 * The per-core queue nodes are allocated on the first call: false when the
 * DMA region cannot hold them (the lock stays a ticket lock). */
bool sw_spin_lock_init_queued(struct sw_spinlock *lock);
bool sw_spin_is_queued(const struct sw_spinlock *lock);
/* A ticket lock, or a queued one when `queued`: false when a queued lock
 * could not be had (the lock is then left a ticket lock). */
bool sw_spin_lock_init_kind(struct sw_spinlock *lock, bool queued);
void sw_spin_lock(struct sw_spinlock *lock);
/* True when the lock was taken. Never waits. */
bool sw_spin_trylock(struct sw_spinlock *lock);
void sw_spin_unlock(struct sw_spinlock *lock);
/* A snapshot: may be stale by the time the caller looks at it. */
bool sw_spin_is_locked(const struct sw_spinlock *lock);

/* Mask interrupts on this core, then lock; returns the state to restore. */
unsigned sw_spin_lock_irqsave(struct sw_spinlock *lock);
void sw_spin_unlock_irqrestore(struct sw_spinlock *lock, unsigned flags);

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_SW_LIB_SPINLOCK_H */

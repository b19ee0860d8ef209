/*
 * Ticket spinlock on the HAL atomics: FIFO fair, so contention shows up as
 * queueing in simulated time rather than as starvation. Every access to the
 * lock words goes through the HAL and is charged the atomic latency and
 * cache-line transfer cost of the platform.
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
 * carry into the upper one when it wraps. All-zero is unlocked. */
struct sw_spinlock {
  volatile uint32_t next;  /* next ticket to hand out */
  volatile uint32_t owner; /* ticket now holding the lock */
};

#define SW_SPINLOCK_INIT {0, 0}

/* For locks in dynamically allocated memory. */
void sw_spin_lock_init(struct sw_spinlock *lock);
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

/* The queued spinlock behind sw_spin_* for locks made queued
 * (sw_spin_lock_init_queued): lib/spinlock.c's private interface. */
#ifndef SMMU_VP_SW_LIB_QSPINLOCK_H
#define SMMU_VP_SW_LIB_QSPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

/* Allocates the per-core queue nodes once; false when there is no room. */
bool sw_qspin_nodes_ready(void);
/* The word of an unlocked queued lock. */
uint32_t sw_qspin_unlocked_word(void);
void sw_qspin_lock(volatile uint32_t *lock);
bool sw_qspin_trylock(volatile uint32_t *lock);
void sw_qspin_unlock(volatile uint32_t *lock);
bool sw_qspin_is_locked(const volatile uint32_t *lock);

#endif /* SMMU_VP_SW_LIB_QSPINLOCK_H */

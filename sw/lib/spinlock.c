#include "lib/spinlock.h"

#include "hal/hal.h"
#include "lib/qspinlock.h"

/* HAL atomics are sequentially consistent, so taking a ticket and seeing our
 * turn act as acquire, and the owner increment as release: no extra
 * hal_barrier() is needed. Counters wrap modulo 2^32, which is harmless while
 * fewer than 2^32 cores wait. */

void sw_spin_lock_init(struct sw_spinlock *lock) {
  hal_store32(&lock->next, 0);
  hal_store32(&lock->owner, 0);
}

bool sw_spin_lock_init_queued(struct sw_spinlock *lock) {
  if (!sw_qspin_nodes_ready()) return false;
  hal_store32(&lock->next, sw_qspin_unlocked_word());
  hal_store32(&lock->owner, SW_SPIN_QUEUED);
  return true;
}

bool sw_spin_lock_init_kind(struct sw_spinlock *lock, bool queued) {
  if (queued && sw_spin_lock_init_queued(lock)) return true;
  sw_spin_lock_init(lock);
  return !queued;
}

/* A plain read: the kind is fixed while the lock is in use. */
bool sw_spin_is_queued(const struct sw_spinlock *lock) { return lock->owner == SW_SPIN_QUEUED; }

void sw_spin_lock(struct sw_spinlock *lock) {
  if (sw_spin_is_queued(lock)) {
    sw_qspin_lock(&lock->next);
    return;
  }
  const uint32_t ticket = hal_fetch_add32(&lock->next, 1);

  /* Each poll (a hal_load32 and a hal_cpu_relax) advances simulated time
   * and lets the holder run; only holders write owner, through the HAL. */
  hal_poll32(&lock->owner, ~0u, ticket, HAL_POLL_EQ, 0, NULL);
}

bool sw_spin_trylock(struct sw_spinlock *lock) {
  if (sw_spin_is_queued(lock)) return sw_qspin_trylock(&lock->next);
  const uint32_t owner = hal_load32(&lock->owner);

  /* owner only grows and never passes next, so if next still equals the
   * owner value read above, the lock is free at the moment of the swap. */
  return hal_cmpxchg32(&lock->next, owner, owner + 1) == owner;
}

void sw_spin_unlock(struct sw_spinlock *lock) {
  if (sw_spin_is_queued(lock)) {
    sw_qspin_unlock(&lock->next);
    return;
  }
  /* Only the holder writes owner: one atomic add releases and hands over. */
  (void)hal_fetch_add32(&lock->owner, 1);
}

bool sw_spin_is_locked(const struct sw_spinlock *lock) {
  if (sw_spin_is_queued(lock)) return sw_qspin_is_locked(&lock->next);
  const uint32_t owner = hal_load32(&lock->owner);
  return hal_load32(&lock->next) != owner;
}

unsigned sw_spin_lock_irqsave(struct sw_spinlock *lock) {
  /* Mask first: a handler on this core taking the same lock while we queue
   * for it would deadlock. */
  const unsigned flags = hal_irq_save();
  sw_spin_lock(lock);
  return flags;
}

void sw_spin_unlock_irqrestore(struct sw_spinlock *lock, unsigned flags) {
  sw_spin_unlock(lock);
  hal_irq_restore(flags);
}

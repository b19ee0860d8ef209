/*
 * The lock that apps of the default scenario share, with its hold and wait
 * times recorded as lock_wait_ns / lock_hold_ns in the caller's stats.
 */
#ifndef SMMU_VP_SW_APPS_SHARED_LOCK_H
#define SMMU_VP_SW_APPS_SHARED_LOCK_H

#include <stdint.h>

#include "lib/spinlock.h"

extern struct sw_spinlock app_shared_lock;

/* Takes the lock; returns the time it was acquired, for shared_lock_release. */
uint64_t shared_lock_acquire(void);
void shared_lock_release(uint64_t acquired_ns);

#endif

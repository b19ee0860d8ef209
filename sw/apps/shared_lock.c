#include "apps/shared_lock.h"

#include "hal/hal.h"
#include "lib/compiler.h"

SW_CACHELINE_ALIGNED struct sw_spinlock app_shared_lock = SW_SPINLOCK_INIT;

uint64_t shared_lock_acquire(void) {
  const uint64_t t0 = hal_now_ns();
  sw_spin_lock(&app_shared_lock);
  const uint64_t t1 = hal_now_ns();
  hal_stat_sample("lock_wait_ns", t1 - t0);
  hal_stat_add("lock_acquisitions", 1);
  return t1;
}

void shared_lock_release(uint64_t acquired_ns) {
  hal_stat_sample("lock_hold_ns", hal_now_ns() - acquired_ns);
  sw_spin_unlock(&app_shared_lock);
}

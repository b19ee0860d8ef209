/*
 * lock_contend: takes the shared lock `iterations` times, holding it for
 * hold_cycles and thinking think_cycles between acquisitions. With the DMA
 * cores taking the same lock, it shows what contention costs each side.
 */
#include "apps/shared_lock.h"
#include "hal/hal.h"

static int lock_contend_main(void) {
  const uint64_t iterations = hal_param("iterations");
  const uint64_t hold = hal_param("hold_cycles");
  const uint64_t think = hal_param("think_cycles");
  for (uint64_t i = 0; i < iterations; i++) {
    const uint64_t held = shared_lock_acquire();
    hal_cycles(hold);
    shared_lock_release(held);
    hal_cycles(think);
  }
  return 0;
}

static const struct hal_param_decl lock_contend_params[] = {
    {"iterations", 2000, "Lock acquisitions per core.", 0, 0},
    {"hold_cycles", 300, "Work inside the lock, cycles.", 0, 0},
    {"think_cycles", 600, "Work between acquisitions, cycles.", 0, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_lock_contend = {"lock_contend", "Take and release the shared spinlock in a loop.",
                                         lock_contend_main, lock_contend_params};

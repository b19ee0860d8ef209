/* Firmware that misbehaves on purpose, for the containment tests
 * (tests/integration/cli_containment_test.cc): the core of rank "rank" does
 * what "mode" says, the others return 0 at once. */
#include <stdint.h>
#include <stdlib.h>

#include "hal/hal.h"

/* An address nothing maps, for the load-time store (volatile: kept). */
static volatile uintptr_t hal_param_unused_address = 16;

/* A big frame that recursion cannot fold away: each level writes both ends
 * of its buffer and reads them after the call returns. */
static uint64_t recurse(uint64_t depth, uint64_t limit) {
  volatile char frame[2048];
  frame[0] = (char)depth;
  frame[sizeof frame - 1] = (char)(depth >> 8);
  if (depth >= limit) return 0;
  return recurse(depth + 1, limit) + (uint64_t)frame[0] + (uint64_t)frame[sizeof frame - 1];
}

/* CRASH_FIRMWARE_AT_LOAD=segv|abort|exit: misbehave in a constructor, while
 * the simulator loads the image. */
__attribute__((constructor)) static void misbehave_at_load(void) {
  const char *what = getenv("CRASH_FIRMWARE_AT_LOAD");
  if (!what) return;
  if (what[0] == 's') *(volatile int *)(uintptr_t)hal_param_unused_address = 1;
  if (what[0] == 'a') abort();
  if (what[0] == 'e') exit(4);
}

static int crash_main(void) {
  if (hal_app_rank() != hal_param("rank")) return 0;
  hal_delay_ns(1000); /* so that the fault happens at a simulated time after 0 */
  switch (hal_param("mode")) {
    case 1: { /* null: a store through a NULL pointer */
      volatile uint32_t *p = (volatile uint32_t *)(uintptr_t)hal_param("address");
      *p = 1;
      return 0;
    }
    case 2: /* stack: unbounded recursion overflows the core's stack */
      hal_stat_set("depth", (double)recurse(0, hal_param("depth")));
      return 0;
    case 3: { /* divide: integer division by a run-time zero */
      const uint64_t divisor = hal_param("divisor");
      hal_stat_set("quotient", (double)(1000000u / divisor));
      return 0;
    }
    case 4: { /* spin: loops forever without a HAL call */
      volatile uint64_t n = 0;
      for (;;) n = n + 1;
    }
    case 5: /* ill: an undefined instruction */
      __builtin_trap();
    case 6: /* abort: as a failed assert does */
      abort();
    case 7: /* exit: ends the process, if nothing stops it */
      exit(3);
    default:
      return 0;
  }
}

static const struct hal_param_decl crash_params[] = {
    {"mode", 0, "What the core of rank \"rank\" does wrong.", 7, "none,null,stack,divide,spin,ill,abort,exit"},
    {"rank", 0, "Which of the firmware's cores misbehaves (hal_app_rank).", 0, 0},
    {"address", 0, "null: the address stored to.", 0, 0},
    {"divisor", 0, "divide: the divisor.", 0, 0},
    {"depth", 1000000000, "stack: recursion depth before returning.", 0, 0},
    {0, 0, 0, 0, 0},
};

HAL_FIRMWARE("crash_firmware", "Misbehaves on purpose (containment tests).", crash_main, crash_params);

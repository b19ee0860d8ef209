#include "apps/app_window.h"

#include "hal/hal.h"

uint64_t app_wfe_in_window(uint64_t start_ns, uint64_t end_ns) {
  const uint64_t t0 = hal_now_ns();
  hal_wfe();
  const uint64_t t1 = hal_now_ns();
  const uint64_t a = t0 > start_ns ? t0 : start_ns;
  const uint64_t b = t1 < end_ns ? t1 : end_ns;
  return b > a ? b - a : 0;
}

double app_busy_cores(unsigned cores, uint64_t window_ns, uint64_t idle_ns) {
  return (double)((uint64_t)cores * window_ns - idle_ns) / (double)window_ns;
}

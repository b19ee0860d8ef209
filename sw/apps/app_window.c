#include "apps/app_window.h"

#include "hal/hal.h"

void app_window_open(const char *app, uint64_t warmup_ns, uint64_t duration_ns, uint64_t *start_ns,
                     uint64_t *end_ns) {
  const uint64_t now = hal_now_ns();
  uint64_t start, end;
  if (hal_scenario_window(&start, &end)) {
    if (now > start)
      hal_log(HAL_LOG_WARN,
              "%s: the scenario's window opened at %llu us, before the app was ready at %llu us: its figures "
              "cover only the rest of the window (a later scenario.window.warmup_us measures all of it)",
              app, (unsigned long long)(start / 1000), (unsigned long long)(now / 1000));
  } else {
    start = now + warmup_ns;
    end = start + duration_ns;
  }
  if (start == 0) {
    start = 1;
    if (end < start) end = start;
  }
  hal_measure_window(start, end);
  *start_ns = start;
  *end_ns = end;
}

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

uint64_t app_window_share(uint64_t bytes, uint64_t from_ns, uint64_t to_ns, uint64_t start_ns, uint64_t end_ns) {
  const uint64_t a = from_ns > start_ns ? from_ns : start_ns;
  const uint64_t b = to_ns < end_ns ? to_ns : end_ns;
  if (to_ns <= from_ns) return to_ns >= start_ns && to_ns < end_ns ? bytes : 0; /* no life: by completion */
  if (b <= a) return 0;
  /* bytes <= 4 MiB and a life of under 2^40 ns keep the product in 64 bits. */
  const uint64_t life = to_ns - from_ns;
  if (life >= (1ull << 40)) return (uint64_t)((double)bytes * (double)(b - a) / (double)life);
  return bytes * (b - a) / life;
}

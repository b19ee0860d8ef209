/*
 * The measurement window of apps that report throughput and CPU use (fio,
 * net_rx, net_tx): the time a core sleeps inside the window is idle, the
 * rest busy.
 */
#ifndef SMMU_VP_SW_APPS_APP_WINDOW_H
#define SMMU_VP_SW_APPS_APP_WINDOW_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens the app's measurement window, on the app's first core: the
 * scenario's (scenario.window) when it has one, else from now + warmup_ns
 * for duration_ns; announced to the platform (hal_measure_window). An app
 * that gets here after the scenario's window opened measures only the rest
 * of it, and logs a warning saying so. The start is never 0 (the apps wait
 * for a non-zero start). */
void app_window_open(const char *app, uint64_t warmup_ns, uint64_t duration_ns, uint64_t *start_ns,
                     uint64_t *end_ns);
/* hal_wfe(); returns how much of the sleep fell inside [start_ns, end_ns). */
uint64_t app_wfe_in_window(uint64_t start_ns, uint64_t end_ns);
/* Cores busy on average over a window of `window_ns`, for `cores` cores that
 * slept `idle_ns` in all inside it. */
double app_busy_cores(unsigned cores, uint64_t window_ns, uint64_t idle_ns);
/* The part of `bytes` credited to [start_ns, end_ns) for a request that
 * completed at `to_ns` and whose service began at `from_ns`: bytes times
 * the share of [from_ns, to_ns) inside the window. With `from_ns` the
 * previous completion of the same queue (or the submission, if later) this
 * is the queue's completion count interpolated between completions and read
 * at the window's edges. Counting whole requests by completion time instead
 * credits the window with the work done before it on the request that
 * straddles its start: with 512 KiB reads and a 20 ms window that is one
 * request per drive, enough to report more than the drives can carry. */
uint64_t app_window_share(uint64_t bytes, uint64_t from_ns, uint64_t to_ns, uint64_t start_ns, uint64_t end_ns);

#ifdef __cplusplus
}
#endif

#endif

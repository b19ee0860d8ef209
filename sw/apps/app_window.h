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

/* hal_wfe(); returns how much of the sleep fell inside [start_ns, end_ns). */
uint64_t app_wfe_in_window(uint64_t start_ns, uint64_t end_ns);
/* Cores busy on average over a window of `window_ns`, for `cores` cores that
 * slept `idle_ns` in all inside it. */
double app_busy_cores(unsigned cores, uint64_t window_ns, uint64_t idle_ns);

#ifdef __cplusplus
}
#endif

#endif

/* The built-in apps a scenario can place on cores (`smmu-vp apps` lists them). */
#ifndef SMMU_VP_SW_APPS_H
#define SMMU_VP_SW_APPS_H

#include <stdbool.h>

#include "hal/hal.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const struct hal_app *const sw_apps[];
extern const unsigned sw_app_count;

/* For an app that keeps its state in globals: true on its first instance;
 * on a second one (another scenario.apps entry naming it) logs why it
 * cannot run and returns false. net_rx and net_tx run several instances. */
bool app_single_instance(const char *app);

#ifdef __cplusplus
}
#endif

#endif

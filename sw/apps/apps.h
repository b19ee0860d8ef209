/* The built-in apps a scenario can place on cores (`smmu-vp apps` lists them). */
#ifndef SMMU_VP_SW_APPS_H
#define SMMU_VP_SW_APPS_H

#include "hal/hal.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const struct hal_app *const sw_apps[];
extern const unsigned sw_app_count;

#ifdef __cplusplus
}
#endif

#endif

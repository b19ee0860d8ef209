/* Instances of an app in one scenario (hal_app_instance): what an app that
 * keeps its state in globals checks before it runs. */
#ifndef SMMU_VP_SW_APPS_APP_INSTANCE_H
#define SMMU_VP_SW_APPS_APP_INSTANCE_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* True on the app's first instance; on a second one (another scenario.apps
 * entry naming it) logs why it cannot run and returns false. net_rx and
 * net_tx run several instances. */
bool app_single_instance(const char *app);

#ifdef __cplusplus
}
#endif

#endif

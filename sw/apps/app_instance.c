#include "apps/app_instance.h"

#include "hal/hal.h"

bool app_single_instance(const char *app) {
  if (hal_app_instance() == 0) return true;
  hal_log(HAL_LOG_ERROR, "%s: one instance per scenario (its state is global); the scenario names it again (instance %u)",
          app, hal_app_instance());
  return false;
}

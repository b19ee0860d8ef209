#include "apps/apps.h"

extern const struct hal_app app_dma_copy;
extern const struct hal_app app_lock_contend;
extern const struct hal_app app_smmu_stress;

const struct hal_app *const sw_apps[] = {
    &app_dma_copy,
    &app_lock_contend,
    &app_smmu_stress,
};

const unsigned sw_app_count = sizeof sw_apps / sizeof sw_apps[0];

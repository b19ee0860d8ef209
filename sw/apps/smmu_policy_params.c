#include "apps/smmu_policy_params.h"

#include "hal/hal.h"

struct smmu_policy smmu_policy_from_params(void) {
  return (struct smmu_policy){
      .cmdq = (enum smmu_cmdq_policy)hal_param("cmdq"),
      .sync = (enum smmu_sync_policy)hal_param("sync"),
      .tlbi = (enum smmu_tlbi_policy)hal_param("tlbi"),
      .sync_wait = (enum smmu_sync_wait)hal_param("sync_wait"),
      .asid_threshold_pages = hal_param("asid_threshold"),
      .elide_back_to_back_sync = hal_param("elide") != 0,
      .queued_spinlock = hal_param("spinlock") != 0,
  };
}

/*
 * The SMMU driver's policies as app parameters, declared once for every app
 * that brings the SMMU up (iommu_setup's apps, smmu_stress, map_bench), with
 * the driver's defaults (SMMU_POLICY_DEFAULT_*, drivers/smmu/arm_smmu.h) and
 * their meaning in docs/driver.md.
 */
#ifndef SMMU_VP_SW_APPS_SMMU_POLICY_PARAMS_H
#define SMMU_VP_SW_APPS_SMMU_POLICY_PARAMS_H

#include "drivers/smmu/arm_smmu.h"

#define SMMU_POLICY_PARAMS                                                                                   \
  {"cmdq", SMMU_POLICY_DEFAULT_CMDQ,                                                                         \
   "SMMU command submission: 0 spinlock (Linux v5.3), 1 lock-free (v5.4), 2 ECMDQs (SMMUv3.3), one per core while the SMMU has enough, else shared.", \
   3, "spinlock,lockfree,ecmdq,lockfree_add"},                                                                            \
  {"sync", SMMU_POLICY_DEFAULT_SYNC, "CMD_SYNC completion: 0 poll, 1 SEV, 2 MSI.", 2, "poll,sev,msi"},       \
  {"sync_wait", SMMU_POLICY_DEFAULT_SYNC_WAIT,                                                               \
   "Between CONS reads of a polled CMD_SYNC (spinlock queue, no WFE): 0 relax, read again at once; 1 udelay_backoff, Linux 4.13 drivers/iommu/arm-smmu-v3.c queue_poll_cons: udelay(d) with d from 1 us doubling, the lock held (reads at 0, 1, 3, 7 ... us).", \
   1, "relax,udelay_backoff"},                                                                               \
  {"tlbi", SMMU_POLICY_DEFAULT_TLBI, "Invalidation: 0 one TLBI per 4 KiB granule, 1 range TLBI (RIL).", 1,   \
   "per_granule,range"},                                                                                     \
  {"asid_threshold", SMMU_POLICY_DEFAULT_ASID_THRESHOLD,                                                     \
   "From this many pages, invalidate the whole ASID instead (0: never).", 0, 0},                            \
  {"elide", SMMU_POLICY_DEFAULT_ELIDE, "1: reuse a CMD_SYNC that directly precedes ours (spinlock + MSI).",  \
   1, 0},                                                                                                     \
  {"spinlock", SMMU_POLICY_DEFAULT_SPINLOCK,                                                                 \
   "The kernel's spinlocks (the SMMU driver's, its command queue's above all, the IOVA allocator's, the flush queue's and, in fio, the bounce buffers'): 0 ticket, arm64 before Linux 4.18; 1 queued, Linux's qspinlock (arm64 since 4.18, commit c11090474d70; x86 since 4.2).", \
   1, "ticket,queued"}

#ifdef __cplusplus
extern "C" {
#endif

/* The policy the running app's SMMU_POLICY_PARAMS select. */
struct smmu_policy smmu_policy_from_params(void);

#ifdef __cplusplus
}
#endif

#endif

/*
 * What apps that drive a DMA master share: the SMMU brought up once with the
 * driver policies the app's parameters select, and a device's stream
 * attached to its own DMA domain (strict or lazy) or to bypass.
 *
 * Parameters the app must declare (IOMMU_SETUP_PARAMS): the SMMU driver's
 * (SMMU_POLICY_PARAMS) and the DMA-mapping layer's: unmap,
 * gather_when_queued, iova_cache, rcache, dma32_first, sync_each_page,
 * map_sg, walk_flush, coherent_walk, fanout.
 */
#ifndef SMMU_VP_SW_APPS_IOMMU_SETUP_H
#define SMMU_VP_SW_APPS_IOMMU_SETUP_H

#include <stdbool.h>
#include <stdint.h>

#include "apps/smmu_policy_params.h"
#include "drivers/smmu/arm_smmu.h"
#include "iommu/dma_iommu.h"
#include "iommu/iommu.h"
#include "iommu/swiotlb.h"

#define IOMMU_SETUP_PARAMS                                                                                      \
  {"unmap", 0, "DMA unmap policy: 0 strict, 1 lazy (flush queue), 2 passthrough (SMMU bypass for the device).", 2, "strict,lazy,passthrough"}, \
      SMMU_POLICY_PARAMS,                                                                                     \
      {"gather_when_queued", 1, "Lazy mode: 1 gathers every unmapped leaf (baseline), 0 skips it (seed 003).", 1, 0},  \
      {"iova_cache", 1, "IOVA allocator: 0 cached32_only, 1 cached32_and_64.", 1, "cached32_only,cached32_and_64"},                                  \
      {"rcache", 1, "1: per-CPU IOVA range caches in front of the tree.", 1, 0},                                       \
      {"dma32_first", 1, "1: IOVAs below 4 GiB first (Linux's rule for PCI devices); 0: the whole 48-bit space (a platform device).", 1, 0}, \
      {"sync_each_page", 0, "1: Linux 4.13's unmap, a TLBI + CMD_SYNC per 4 KiB page; 0: one sync per unmapped range (since 2017).", 1, 0}, \
      {"map_sg", 1, "dma_map_sg into the page tables: 0 element by element through the whole call chain (before seed 002), 1 batched.", 1, "per_element,batched"}, \
      {"walk_flush", 1, "A removed table's walk-cache flush: 0 one TLBI per granule it covered (before seed 000), 1 one TLBI for the ASID.", 1, "va,asid"}, \
      {"coherent_walk", 1, "1: the SMMU's table walks snoop CPU caches; 0: io-pgtable cleans each descriptor it writes (phone SoCs).", 1, 0}, \
      {"fanout", 0, "A DMA domain whose devices sit behind several SMMUs (platform.smmus): 0 serial, each SMMU's TLBIs, CMD_SYNC and wait in turn (Linux since the arm_smmu_invs rework); 1 overlap, every SMMU's TLBIs, then the CMD_SYNCs (a what-if).", 1, "serial,overlap"}

#ifdef __cplusplus
extern "C" {
#endif

/* One device's DMA context. */
struct app_dma {
  struct iommu_domain domain;
  struct iommu_dma_cookie cookie;
  struct dma_dev dev;
  bool translated; /* false: bypass or no SMMU, device addresses are physical */
};

/* Probes and resets SMMU instance `index` (hal_smmu_get) and sets the
 * policies, once, on the first core to ask. Returns the SMMU, or NULL when
 * the platform has none (a warning is logged) or bring-up failed, or there
 * is no such instance (*failed set). iommu_setup_smmu is instance 0. */
struct smmu_device *iommu_setup_smmu_at(const char *app, unsigned index, bool *failed);
struct smmu_device *iommu_setup_smmu(const char *app, bool *failed);
/* Attaches stream `sid` of SMMU instance `smmu`: bypass (unmap 2, or no
 * SMMU) or a DMA domain of its own with ASID `asid` and the unmap policy.
 * `bounce`, if not NULL, forces bounce buffering for it (an untrusted
 * device). 0 or -1, logged. */
int iommu_setup_attach_on(struct app_dma *d, const char *app, unsigned smmu, uint32_t sid, uint16_t asid,
                          struct swiotlb_mem *bounce);
/* The same for a device (its StreamID, behind its SMMU), or for a stream of
 * instance 0 (a trace's). */
int iommu_setup_attach_device(struct app_dma *d, const char *app, const struct hal_device_info *dev, uint16_t asid,
                              struct swiotlb_mem *bounce);
int iommu_setup_attach(struct app_dma *d, const char *app, uint32_t sid, uint16_t asid, struct swiotlb_mem *bounce);
/* Attaches `dev` to `owner`'s DMA domain and IOVA space (Linux's devices in
 * one group or one VFIO container), behind whichever SMMU it sits: the
 * domain's invalidations then go to every SMMU its devices sit behind, by
 * the fanout parameter. d's own domain and cookie stay unused. */
int iommu_setup_attach_shared(struct app_dma *d, const char *app, struct app_dma *owner,
                              const struct hal_device_info *dev, struct swiotlb_mem *bounce);
/* The DMA device to map through, or NULL for physical addresses. */
static inline struct dma_dev *app_dma_dev(struct app_dma *d) { return d->translated ? &d->dev : 0; }
/* The driver's counters summed over every SMMU instance. */
void iommu_setup_smmu_totals(uint64_t *commands, uint64_t *syncs, uint64_t *syncs_elided);
/* The lock-free cmpxchg queue's slot claims and cmpxchg attempts so far, over
 * every SMMU brought up (0 and 0 under another queue). */
void iommu_setup_cmdq_claims(uint64_t *claims, uint64_t *attempts);
/* The SMMUs' and the domain's counters into the app's stats. */
void iommu_setup_report(const struct app_dma *d);
/* The same for several devices: their domains' counters summed. */
void iommu_setup_report_sum(const struct app_dma *const *ds, unsigned n);

#ifdef __cplusplus
}
#endif

#endif

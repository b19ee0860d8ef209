#include "apps/iommu_setup.h"

#include "hal/hal.h"
#include "lib/compiler.h"
#include "lib/string.h"

/* Every SMMU instance of the platform (platform.smmu, then platform.smmus),
 * brought up when a device behind it is first attached. Apps on other cores
 * (a NIC and a camera, say) share them: the first to get to an instance
 * brings it up, the others wait for it. */
#define IOMMU_SETUP_MAX_SMMUS IOMMU_DOMAIN_MAX_SMMUS
static struct smmu_device smmus[IOMMU_SETUP_MAX_SMMUS];
enum { SMMU_DOWN = 0, SMMU_COMING_UP = 1, SMMU_UP = 2, SMMU_FAILED = 3 };
static SW_CACHELINE_ALIGNED volatile uint32_t smmu_state[IOMMU_SETUP_MAX_SMMUS];

struct smmu_device *iommu_setup_smmu(const char *app, bool *failed) { return iommu_setup_smmu_at(app, 0, failed); }

struct smmu_device *iommu_setup_smmu_at(const char *app, unsigned index, bool *failed) {
  *failed = false;
  if (!hal_smmu().size) {
    hal_log(HAL_LOG_WARN, "%s: the platform has no SMMU: devices use physical addresses", app);
    return NULL;
  }
  const struct hal_region regs = hal_smmu_get(index);
  if (!regs.size || index >= IOMMU_SETUP_MAX_SMMUS) {
    hal_log(HAL_LOG_ERROR, "%s: no SMMU instance %u (the platform has %u; this driver takes %u)", app, index,
            hal_smmu_count(), IOMMU_SETUP_MAX_SMMUS);
    *failed = true;
    return NULL;
  }
  struct smmu_device *smmu = &smmus[index];
  volatile uint32_t *state = &smmu_state[index];
  if (hal_cmpxchg32(state, SMMU_DOWN, SMMU_COMING_UP) != SMMU_DOWN) {
    uint32_t st;
    while ((st = hal_load32(state)) == SMMU_COMING_UP) hal_wfe();
    *failed = st != SMMU_UP;
    return st == SMMU_UP ? smmu : NULL;
  }
  if (smmu_probe(smmu, regs.base) != 0 || smmu_reset(smmu) != 0) {
    hal_log(HAL_LOG_ERROR, "%s: bring-up of SMMU %u failed", app, index);
    *failed = true;
    hal_store32(state, SMMU_FAILED);
    hal_sev();
    return NULL;
  }
  const struct smmu_policy got = smmu_set_policy(smmu, smmu_policy_from_params());
  if (index == 0) {
    hal_stat_set("policy_cmdq", got.cmdq);
    hal_stat_set("policy_sync", got.sync);
    hal_stat_set("policy_tlbi", got.tlbi);
  }
  hal_store32(state, SMMU_UP);
  hal_sev();
  return smmu;
}

/* The ASIDs of the domains the apps have attached: two domains must never
 * share one, or the SMMU's TLB takes one's translations for the other's (a
 * NIC beside fio both asked for ASID 1). Plain memory, not HAL atomics: the
 * platform runs its cores one at a time between HAL calls, and claim_asid
 * makes none, so the claim is atomic and costs no simulated time. */
#define IOMMU_SETUP_MAX_DOMAINS 64u
static uint16_t asids_taken[IOMMU_SETUP_MAX_DOMAINS];
static unsigned asids_count;

/* `want` if no domain has it, else one above the highest taken; 0 when
 * every slot is used. */
static uint16_t claim_asid(uint16_t want) {
  uint16_t highest = 0;
  bool taken = false;
  for (unsigned i = 0; i < asids_count; i++) {
    if (asids_taken[i] == want) taken = true;
    if (asids_taken[i] > highest) highest = asids_taken[i];
  }
  if (asids_count == IOMMU_SETUP_MAX_DOMAINS) return 0;
  const uint16_t got = taken ? (uint16_t)(highest + 1) : want;
  asids_taken[asids_count++] = got;
  return got;
}

int iommu_setup_attach(struct app_dma *d, const char *app, uint32_t sid, uint16_t asid, struct swiotlb_mem *bounce) {
  return iommu_setup_attach_on(d, app, 0, sid, asid, bounce);
}

/* A device with an ATC gets ATS in its translated domain (Linux enables it
 * whenever the SMMU and the endpoint both support it). */
static int enable_ats(struct app_dma *d, const char *app, const struct hal_device_info *dev) {
  if (!dev->ats || !d->translated) return 0;
  bool failed;
  struct smmu_device *s = iommu_setup_smmu_at(app, dev->smmu, &failed);
  if (!s || iommu_enable_ats(d->dev.domain, s, dev->stream_id) != 0) {
    hal_log(HAL_LOG_ERROR, "%s: %s: cannot enable ATS for stream %u", app, dev->name, dev->stream_id);
    return -1;
  }
  hal_log(HAL_LOG_INFO, "%s: %s: ATS enabled (STE.EATS), its ATC is invalidated after each unmap", app, dev->name);
  return 0;
}

int iommu_setup_attach_device(struct app_dma *d, const char *app, const struct hal_device_info *dev, uint16_t asid,
                              struct swiotlb_mem *bounce) {
  if (iommu_setup_attach_on(d, app, dev->smmu, dev->stream_id, asid, bounce) != 0) return -1;
  return enable_ats(d, app, dev);
}

int iommu_setup_attach_on(struct app_dma *d, const char *app, unsigned smmu, uint32_t sid, uint16_t asid,
                          struct swiotlb_mem *bounce) {
  sw_memset(d, 0, sizeof *d);
  bool failed;
  struct smmu_device *s = iommu_setup_smmu_at(app, smmu, &failed);
  if (!s) return failed ? -1 : 0;
  const unsigned unmap = (unsigned)hal_param("unmap");
  if (unmap == 2) return smmu_attach_bypass(s, sid) == 0 ? 0 : -1;
  const uint16_t want = asid;
  asid = claim_asid(want);
  if (asid == 0) {
    hal_log(HAL_LOG_ERROR, "%s: stream %u: every one of the %u DMA domains is in use", app, sid, IOMMU_SETUP_MAX_DOMAINS);
    return -1;
  }
  if (asid != want)
    hal_log(HAL_LOG_INFO, "%s: stream %u: ASID %u is another domain's; this one takes ASID %u", app, sid, want, asid);
  const struct iommu_domain_policy dp = {(enum iommu_walk_flush_policy)hal_param("walk_flush"),
                                         (enum iommu_map_sg_policy)hal_param("map_sg"), hal_param("coherent_walk") == 0,
                                         hal_param("sync_each_page") != 0, false,
                                         (enum iommu_fanout_policy)hal_param("fanout")};
  struct dma_policy pol;
  sw_memset(&pol, 0, sizeof pol);
  pol.unmap = unmap == 1 ? DMA_UNMAP_LAZY : DMA_UNMAP_STRICT;
  pol.gather_when_queued = hal_param("gather_when_queued") != 0;
  pol.iova.cache = (enum iova_cache_policy)hal_param("iova_cache");
  pol.iova.rcache = hal_param("rcache") != 0;
  pol.iova.queued_locks = hal_param("spinlock") != 0;
  pol.skip_32bit_first = hal_param("dma32_first") == 0;
  if (iommu_domain_init(&d->domain, s, asid, 4096, &dp) != 0 || iommu_dma_cookie_init(&d->cookie, &d->domain, &pol) != 0 ||
      dma_dev_init(&d->dev, &d->cookie, sid, DMA_BIT_MASK(48), bounce) != 0) {
    hal_log(HAL_LOG_ERROR, "%s: cannot set up the DMA domain of stream %u", app, sid);
    return -1;
  }
  d->translated = true;
  return 0;
}

int iommu_setup_attach_shared(struct app_dma *d, const char *app, struct app_dma *owner,
                              const struct hal_device_info *dev, struct swiotlb_mem *bounce) {
  /* Passthrough or no SMMU: nothing is shared, the device is set up alone. */
  if (!owner->translated) return iommu_setup_attach_device(d, app, dev, 0, bounce);
  sw_memset(d, 0, sizeof *d);
  bool failed;
  struct smmu_device *s = iommu_setup_smmu_at(app, dev->smmu, &failed);
  if (!s) return -1;
  if (dma_dev_init_on(&d->dev, &owner->cookie, s, dev->stream_id, DMA_BIT_MASK(48), bounce) != 0) {
    hal_log(HAL_LOG_ERROR, "%s: cannot attach stream %u to the shared DMA domain", app, dev->stream_id);
    return -1;
  }
  d->translated = true;
  return enable_ats(d, app, dev);
}

void iommu_setup_smmu_totals(uint64_t *commands, uint64_t *syncs, uint64_t *syncs_elided) {
  *commands = *syncs = *syncs_elided = 0;
  for (unsigned i = 0; i < IOMMU_SETUP_MAX_SMMUS; i++) { /* an instance never brought up counted nothing */
    *commands += smmus[i].stats.commands;
    *syncs += smmus[i].stats.syncs;
    *syncs_elided += smmus[i].stats.syncs_elided;
  }
}

void iommu_setup_cmdq_claims(uint64_t *claims, uint64_t *attempts) {
  *claims = *attempts = 0;
  for (unsigned i = 0; i < IOMMU_SETUP_MAX_SMMUS; i++) {
    *claims += smmus[i].stats.cmdq_claims;
    *attempts += smmus[i].stats.cmdq_claim_attempts;
  }
}

void iommu_setup_report_sum(const struct app_dma *const *ds, unsigned n) {
  uint64_t iovas = 0, flushes = 0, gathered = 0, gather_syncs = 0, windows = 0, window_sum = 0, window_max = 0;
  bool any = false;
  for (unsigned i = 0; i < n; i++) {
    const struct app_dma *d = ds[i];
    if (!d->translated) continue;
    any = true;
    iovas += d->cookie.stats.iovas_allocated;
    flushes += d->cookie.stats.fq_flushes;
    gathered += d->domain.stats.pages_gathered;
    gather_syncs += d->domain.stats.gather_syncs;
    windows += d->cookie.stats.lazy_windows;
    window_sum += d->cookie.stats.lazy_window_sum_ns;
    if (d->cookie.stats.lazy_window_max_ns > window_max) window_max = d->cookie.stats.lazy_window_max_ns;
  }
  if (!any) return;
  uint64_t commands, syncs, elided;
  iommu_setup_smmu_totals(&commands, &syncs, &elided);
  hal_stat_set("smmu_commands", (double)commands);
  hal_stat_set("smmu_syncs", (double)syncs);
  hal_stat_set("smmu_syncs_elided", (double)elided);
  /* The share of the CMD_SYNCs wanted that back-to-back elision removed
   * (seed 001's 2018 figure): only when it removed any. */
  if (elided) hal_stat_set("smmu_syncs_elided_share", (double)elided / (double)(syncs + elided));
  hal_stat_set("iovas_allocated", (double)iovas);
  hal_stat_set("fq_flushes", (double)flushes);
  hal_stat_set("pages_gathered", (double)gathered);
  hal_stat_set("gather_syncs", (double)gather_syncs);
  if (windows) {
    hal_stat_set("lazy_window_mean_ns", (double)window_sum / (double)windows);
    hal_stat_set("lazy_window_max_ns", (double)window_max);
  }
}

void iommu_setup_report(const struct app_dma *d) { iommu_setup_report_sum(&d, 1); }

/*
 * Stream table (IHI 0070 5.1-5.2) and context descriptors (5.4): a linear
 * table, or a 2-level one (Linux's split of 8 SID bits per level-2 table,
 * each level-2 table allocated when its first stream is attached), and the
 * safe update order of IHI 0070 3.21.3.1 (as Linux's arm_smmu_write_ctx_desc
 * does it): the rest of an STE or CD before the dword that makes it valid,
 * then CFGI_STE + CMD_SYNC.
 */
#include "lib/string.h"
#include "drivers/smmu/arm_smmu_internal.h"

#define STRTAB_LINEAR_MAX_LOG2 8u /* linear tables of up to 256 STEs */
#define STRTAB_SPLIT 8u           /* SID bits resolved by a level-2 table */
#define STRTAB_L1_MAX_LOG2 12u    /* up to 4096 level-1 descriptors */

static const uint64_t ste_abort = SMMU_STE0_V | ((uint64_t)SMMU_STE_CONFIG_ABORT << SMMU_STE0_CONFIG_SHIFT);

static void init_stes_abort(uint64_t *stes, unsigned count) {
  for (unsigned i = 0; i < count; i++) {
    sw_memset(stes + SMMU_STE_DWORDS * i, 0, SMMU_STE_DWORDS * 8);
    stes[SMMU_STE_DWORDS * i] = ste_abort;
  }
}

int smmu_strtab_init(struct smmu_device *dev) {
  dev->strtab_2lvl = dev->feat.two_level_strtab && dev->feat.sidsize > STRTAB_SPLIT;
  if (dev->strtab_2lvl) {
    /* Level 1 covers SIDSIZE bits (capped); every descriptor starts invalid,
     * so an unattached stream gets C_BAD_STREAMID-like treatment by abort. */
    const unsigned sid_bits = dev->feat.sidsize < STRTAB_SPLIT + STRTAB_L1_MAX_LOG2 ? dev->feat.sidsize
                                                                                   : STRTAB_SPLIT + STRTAB_L1_MAX_LOG2;
    dev->strtab_log2 = sid_bits;
    dev->strtab_split = STRTAB_SPLIT;
    const unsigned l1_entries = 1u << (sid_bits - STRTAB_SPLIT);
    /* Aligned to its size: the SMMU ignores STRTAB_BASE.ADDR bits below it
     * (IHI 0070 6.3.24). 64-byte alignment worked only when the allocator
     * happened to give more. */
    const size_t l1_bytes = (size_t)l1_entries * 8;
    dev->strtab = hal_dma_alloc(l1_bytes, l1_bytes > 64 ? l1_bytes : 64, &dev->strtab_pa);
    if (!dev->strtab) return -1;
    hal_barrier(HAL_BARRIER_DSB);
    smmu_wr64(dev, SMMU_STRTAB_BASE, dev->strtab_pa);
    smmu_wr(dev, SMMU_STRTAB_BASE_CFG,
            sid_bits | (STRTAB_SPLIT << SMMU_STRTAB_CFG_SPLIT_SHIFT) |
                (SMMU_STRTAB_CFG_FMT_2LVL << SMMU_STRTAB_CFG_FMT_SHIFT));
    return 0;
  }
  dev->strtab_log2 = dev->feat.sidsize < STRTAB_LINEAR_MAX_LOG2 ? dev->feat.sidsize : STRTAB_LINEAR_MAX_LOG2;
  const size_t bytes = (size_t)SMMU_STE_DWORDS * 8 << dev->strtab_log2;
  dev->strtab = hal_dma_alloc(bytes, bytes > 64 ? bytes : 64, &dev->strtab_pa); /* aligned to its size */
  if (!dev->strtab) return -1;
  init_stes_abort(dev->strtab, 1u << dev->strtab_log2);
  hal_barrier(HAL_BARRIER_DSB);
  smmu_wr64(dev, SMMU_STRTAB_BASE, dev->strtab_pa);
  smmu_wr(dev, SMMU_STRTAB_BASE_CFG, dev->strtab_log2 | (SMMU_STRTAB_CFG_FMT_LINEAR << SMMU_STRTAB_CFG_FMT_SHIFT));
  return 0;
}

/* The STE of `sid`, allocating its level-2 table (all aborting) the first
 * time; NULL when the SID is beyond the table or memory ran out. */
static uint64_t *ste_of(struct smmu_device *dev, uint32_t sid) {
  if (sid >= (1u << dev->strtab_log2)) return 0;
  if (!dev->strtab_2lvl) return dev->strtab + SMMU_STE_DWORDS * sid;
  uint64_t *l1 = dev->strtab + (sid >> dev->strtab_split);
  const unsigned l2_entries = 1u << dev->strtab_split;
  sw_spin_lock(&dev->cfg_lock);
  if (!(*l1 & SMMU_L1STD_SPAN_MASK)) {
    phys_addr_t pa;
    const size_t l2_bytes = (size_t)SMMU_STE_DWORDS * 8 * l2_entries;
    uint64_t *l2 = hal_dma_alloc(l2_bytes, l2_bytes, &pa); /* aligned to its size, as L1STD.L2Ptr wants */
    if (!l2) {
      sw_spin_unlock(&dev->cfg_lock);
      return 0;
    }
    init_stes_abort(l2, l2_entries);
    hal_barrier(HAL_BARRIER_DSB);
    /* SPAN = split + 1: the level-2 table holds 2^(SPAN-1) STEs (5.1.2). */
    *l1 = ((dev->strtab_split + 1) & SMMU_L1STD_SPAN_MASK) | (pa & SMMU_L1STD_L2PTR_MASK);
    hal_barrier(HAL_BARRIER_DSB);
  }
  sw_spin_unlock(&dev->cfg_lock);
  uint64_t *l2 = hal_phys_to_virt(*l1 & SMMU_L1STD_L2PTR_MASK);
  return l2 + SMMU_STE_DWORDS * (sid & (l2_entries - 1));
}

static int write_ste(struct smmu_device *dev, uint32_t sid, uint64_t w0) {
  uint64_t *ste = ste_of(dev, sid);
  if (!ste) return -1;
  /* Dword 0 (with V) is written last, after the rest is visible. */
  for (int i = 1; i < SMMU_STE_DWORDS; i++) ste[i] = 0;
  hal_barrier(HAL_BARRIER_DSB);
  ste[0] = w0;
  hal_barrier(HAL_BARRIER_DSB);
  const uint64_t cfgi[1][2] = {{SMMU_CMD_CFGI_STE | ((uint64_t)sid << SMMU_CMD0_SID_SHIFT), SMMU_CMD1_LEAF}};
  return smmu_cmdq_issue(dev, cfgi, 1, true);
}

int smmu_attach_abort(struct smmu_device *dev, uint32_t sid) { return write_ste(dev, sid, ste_abort); }

int smmu_detach(struct smmu_device *dev, uint32_t sid) { return smmu_attach_abort(dev, sid); }

int smmu_attach_bypass(struct smmu_device *dev, uint32_t sid) {
  return write_ste(dev, sid, SMMU_STE0_V | ((uint64_t)SMMU_STE_CONFIG_BYPASS << SMMU_STE0_CONFIG_SHIFT));
}

/* Dword 0 of a valid AArch64 stage-1 CD: TTB1 walks disabled (EPD1), as
 * Linux leaves them for DMA domains; A = 1, since a CD with A = 0 is ILLEGAL
 * on an SMMU with IDR0.TERM_MODEL = 1 (IHI 0070 5.4.2), as Linux sets it;
 * R = 1, or the SMMU suppresses the event records of translation faults
 * (IHI 0070 5.5; QEMU's SMMUv3 does), as Linux sets it too. */
static uint64_t cd_word0(uint16_t asid, const struct smmu_s1_cfg *cfg) {
  return ((uint64_t)cfg->t0sz & SMMU_CD0_T0SZ_MASK) | ((uint64_t)(cfg->tg0 & 3u) << SMMU_CD0_TG0_SHIFT) |
         ((uint64_t)(cfg->irgn0 & 3u) << SMMU_CD0_IR0_SHIFT) | ((uint64_t)(cfg->orgn0 & 3u) << SMMU_CD0_OR0_SHIFT) |
         ((uint64_t)(cfg->sh0 & 3u) << SMMU_CD0_SH0_SHIFT) | SMMU_CD0_EPD1 |
         ((uint64_t)(cfg->ips & 7u) << SMMU_CD0_IPS_SHIFT) | SMMU_CD0_AA64 | SMMU_CD0_R | SMMU_CD0_A |
         ((uint64_t)asid << SMMU_CD0_ASID_SHIFT) | SMMU_CD0_V;
}

int smmu_attach_s1_cfg(struct smmu_device *dev, uint32_t sid, uint16_t asid, const struct smmu_s1_cfg *cfg) {
  phys_addr_t cd_pa;
  uint64_t *cd = hal_dma_alloc(SMMU_CD_DWORDS * 8, 64, &cd_pa);
  if (!cd) return -1;
  /* The CD's safe order (IHI 0070 3.21.3.1): dwords 1..3 first, then dword 0 with V. */
  cd[1] = cfg->ttb & SMMU_CD1_TTB0_MASK;
  cd[SMMU_CD_MAIR_DWORD] = cfg->mair;
  hal_barrier(HAL_BARRIER_DSB);
  cd[0] = cd_word0(asid, cfg);
  hal_barrier(HAL_BARRIER_DSB);
  return write_ste(dev, sid,
                   SMMU_STE0_V | ((uint64_t)SMMU_STE_CONFIG_S1 << SMMU_STE0_CONFIG_SHIFT) |
                       (cd_pa & SMMU_STE0_S1CTXPTR_MASK));
}

/* STE.EATS lives alone in dword 1's bits [29:28] here (S1DSS and the rest
 * of it are 0 for the STEs this driver writes): one 64-bit write, then the
 * STE's invalidation (IHI 0070 3.21.3: a single-copy-atomic update of a live
 * STE needs no break). */
int smmu_set_eats(struct smmu_device *dev, uint32_t sid, bool ats) {
  if (ats && !dev->feat.ats) return -1;
  uint64_t *ste = ste_of(dev, sid);
  if (!ste) return -1;
  const uint64_t field = 3ull << SMMU_STE1_EATS_SHIFT;
  ste[1] = (ste[1] & ~field) | (ats ? SMMU_STE_EATS_TRANS << SMMU_STE1_EATS_SHIFT : 0);
  hal_barrier(HAL_BARRIER_DSB);
  const uint64_t cfgi[1][2] = {{SMMU_CMD_CFGI_STE | ((uint64_t)sid << SMMU_CMD0_SID_SHIFT), SMMU_CMD1_LEAF}};
  return smmu_cmdq_issue(dev, cfgi, 1, true);
}

/* CD.S in place: one 64-bit write of dword 0 (V stays 1), then CFGI_CD. */
int smmu_set_cd_stall(struct smmu_device *dev, uint32_t sid, bool stall) {
  if (stall && ((smmu_rd(dev, SMMU_IDR0) >> SMMU_IDR0_STALL_MODEL_SHIFT) & 3u) == 1u) return -1;
  const uint64_t *ste = ste_of(dev, sid);
  if (!ste || ((ste[0] >> SMMU_STE0_CONFIG_SHIFT) & 7u) != SMMU_STE_CONFIG_S1) return -1;
  uint64_t *cd = hal_phys_to_virt(ste[0] & SMMU_STE0_S1CTXPTR_MASK);
  cd[0] = stall ? cd[0] | SMMU_CD0_S : cd[0] & ~SMMU_CD0_S;
  hal_barrier(HAL_BARRIER_DSB);
  const uint64_t cfgi[1][2] = {{SMMU_CMD_CFGI_CD | ((uint64_t)sid << SMMU_CMD0_SID_SHIFT), SMMU_CMD1_LEAF}};
  return smmu_cmdq_issue(dev, cfgi, 1, true);
}

int smmu_attach_s1(struct smmu_device *dev, uint32_t sid, uint16_t asid, phys_addr_t ttb) {
  /* 4K granule, 48-bit VA and PA; walk attributes and MAIR left zero. */
  struct smmu_s1_cfg cfg = {0};
  cfg.ttb = ttb;
  cfg.t0sz = 16;
  cfg.tg0 = SMMU_CD0_TG0_4K;
  cfg.ips = 5;
  return smmu_attach_s1_cfg(dev, sid, asid, &cfg);
}

#include "smmu/arm_smmu.h"

#include "lib/string.h"
#include "smmu/smmu_hw.h"

#define STRTAB_MAX_LOG2 8u /* linear tables of up to 256 STEs here */

static uint32_t rd(struct smmu_device *dev, uint32_t off) { return hal_read32(dev->base + off); }
static void wr(struct smmu_device *dev, uint32_t off, uint32_t v) { hal_write32(dev->base + off, v); }
static void wr64(struct smmu_device *dev, uint32_t off, uint64_t v) { hal_write64(dev->base + off, v); }

static unsigned min_u(unsigned a, unsigned b) { return a < b ? a : b; }

int smmu_probe(struct smmu_device *dev, phys_addr_t base) {
  sw_memset(dev, 0, sizeof *dev);
  dev->base = base;
  const uint32_t idr0 = rd(dev, SMMU_IDR0), idr1 = rd(dev, SMMU_IDR1);
  const uint32_t idr3 = rd(dev, SMMU_IDR3), idr5 = rd(dev, SMMU_IDR5);
  if (idr0 == 0xFFFFFFFFu || !(idr5 & SMMU_IDR5_GRAN4K)) return -1; /* no SMMU, or none we can drive */
  struct smmu_features *f = &dev->feat;
  f->s1 = (idr0 & SMMU_IDR0_S1P) != 0;
  f->s2 = (idr0 & SMMU_IDR0_S2P) != 0;
  f->msi = (idr0 & SMMU_IDR0_MSI) != 0;
  f->sev = (idr0 & SMMU_IDR0_SEV) != 0;
  f->hyp = (idr0 & SMMU_BIT(9)) != 0;
  f->two_level_strtab = ((idr0 >> 27) & 3u) == 1u;
  f->cd2l = (idr0 & SMMU_BIT(19)) != 0;
  f->ril = (idr3 & SMMU_BIT(10)) != 0;
  f->sidsize = idr1 & SMMU_IDR1_SIDSIZE_MASK;
  f->ssidsize = (idr1 >> SMMU_IDR1_SSIDSIZE_SHIFT) & SMMU_IDR1_SSIDSIZE_MASK;
  f->cmdq_log2 = (idr1 >> 21) & 0x1Fu;
  f->evtq_log2 = (idr1 >> 16) & 0x1Fu;
  static const unsigned oas[] = {32, 36, 40, 42, 44, 48, 52};
  f->oas_bits = oas[min_u(idr5 & SMMU_IDR5_OAS_MASK, 6)];
  hal_log(HAL_LOG_INFO, "smmu: s1 %d s2 %d msi %d sev %d ril %d sidsize %u cmdq 2^%u evtq 2^%u oas %u", f->s1, f->s2,
          f->msi, f->sev, f->ril, f->sidsize, f->cmdq_log2, f->evtq_log2, f->oas_bits);
  return f->s1 ? 0 : -1;
}

static void wait_ack(struct smmu_device *dev, uint32_t ack_reg, uint32_t want) {
  while (rd(dev, ack_reg) != want) hal_cpu_relax();
}

static int alloc_queue(struct smmu_queue *q, unsigned log2size, unsigned entry_bytes) {
  q->log2size = log2size;
  q->slots = hal_dma_alloc((size_t)entry_bytes << log2size, 4096, &q->base);
  q->prod = q->cons = 0;
  return q->slots ? 0 : -1;
}

static uint32_t q_mask(const struct smmu_queue *q) { return (2u << q->log2size) - 1; }
static uint32_t q_idx(const struct smmu_queue *q, uint32_t p) { return p & ((1u << q->log2size) - 1); }
static bool q_full(const struct smmu_queue *q) {
  return q_idx(q, q->prod) == q_idx(q, q->cons) && ((q->prod ^ q->cons) & (1u << q->log2size));
}

/* Skips a command the SMMU refused (CERROR_ILL) by turning it into a
 * CMD_SYNC and acknowledging the error, as Linux does. */
static void recover_cmdq_error(struct smmu_device *dev) {
  const uint32_t cons = rd(dev, SMMU_CMDQ_CONS);
  uint64_t *slot = dev->cmdq.slots + SMMU_CMD_DWORDS * q_idx(&dev->cmdq, cons);
  slot[0] = SMMU_CMD_SYNC;
  slot[1] = 0;
  hal_barrier(HAL_BARRIER_DSB);
  dev->stats.cmdq_errors++;
  hal_log(HAL_LOG_WARN, "smmu: command queue error %u at %u: skipped",
          (cons >> SMMU_CMDQ_CONS_ERR_SHIFT) & SMMU_CMDQ_CONS_ERR_MASK, q_idx(&dev->cmdq, cons));
  wr(dev, SMMU_GERRORN, rd(dev, SMMU_GERROR));
}

static bool cmdq_error_active(struct smmu_device *dev) {
  return ((rd(dev, SMMU_GERROR) ^ rd(dev, SMMU_GERRORN)) & SMMU_GERROR_CMDQ_ERR) != 0;
}

/* Polls CONS until it has passed `target`; handles errors on the way. */
static int wait_cons(struct smmu_device *dev, uint32_t target) {
  int err = 0;
  for (;;) {
    dev->cmdq.cons = rd(dev, SMMU_CMDQ_CONS) & q_mask(&dev->cmdq);
    if (dev->cmdq.cons == target) return err;
    if (cmdq_error_active(dev)) {
      recover_cmdq_error(dev);
      err = -1;
    }
    if (dev->policy.sync == SMMU_SYNC_SEV) hal_wfe();
    else hal_cpu_relax();
  }
}

/* SYNCs complete in order, so a waiter is done once the counter has reached
 * its number; the compare is wrap-safe. */
static bool seq_reached(uint32_t now, uint32_t want) { return (int32_t)(now - want) >= 0; }

struct smmu_policy smmu_set_policy(struct smmu_device *dev, struct smmu_policy want) {
  struct smmu_policy p = want;
  if (p.sync == SMMU_SYNC_SEV && !dev->feat.sev) p.sync = SMMU_SYNC_POLL;
  if (p.sync == SMMU_SYNC_MSI && !dev->feat.msi) p.sync = SMMU_SYNC_POLL;
  if (p.tlbi == SMMU_TLBI_RANGE && !dev->feat.ril) p.tlbi = SMMU_TLBI_PER_GRANULE;
  if (p.sync == SMMU_SYNC_MSI && !dev->sync_word) {
    dev->sync_word = hal_dma_alloc(64, 64, &dev->sync_word_pa);
    if (!dev->sync_word) p.sync = SMMU_SYNC_POLL;
  }
  if (p.sync != want.sync || p.tlbi != want.tlbi)
    hal_log(HAL_LOG_WARN, "smmu: policy sync %d tlbi %d not supported here; using sync %d tlbi %d", want.sync,
            want.tlbi, p.sync, p.tlbi);
  dev->policy = p;
  return p;
}

int smmu_cmdq_issue(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync) {
  struct smmu_queue *q = &dev->cmdq;
  const bool msi = dev->policy.sync == SMMU_SYNC_MSI;
  uint32_t seq = 0;
  /* One lock around insertion and the PROD write; the baseline also waits
   * for the SYNC under it, the MSI policy waits outside. */
  sw_spin_lock(&dev->cmdq_lock);
  int err = 0;
  for (unsigned i = 0; i <= n; i++) {
    if (i == n && !sync) break;
    while (q_full(q)) q->cons = rd(dev, SMMU_CMDQ_CONS) & q_mask(q);
    uint64_t *slot = q->slots + SMMU_CMD_DWORDS * q_idx(q, q->prod);
    if (i < n) {
      slot[0] = cmds[i][0];
      slot[1] = cmds[i][1];
    } else if (msi) {
      seq = ++dev->sync_seq;
      slot[0] = SMMU_CMD_SYNC | ((uint64_t)SMMU_SYNC_CS_IRQ << SMMU_CMD0_SYNC_CS_SHIFT) |
                ((uint64_t)seq << SMMU_CMD0_SYNC_MSIDATA_SHIFT);
      slot[1] = dev->sync_word_pa & SMMU_CMD1_MSIADDR_MASK;
      dev->stats.syncs++;
    } else {
      const uint64_t cs = dev->policy.sync == SMMU_SYNC_SEV ? SMMU_SYNC_CS_SEV : SMMU_SYNC_CS_NONE;
      slot[0] = SMMU_CMD_SYNC | (cs << SMMU_CMD0_SYNC_CS_SHIFT);
      slot[1] = 0;
      dev->stats.syncs++;
    }
    q->prod = (q->prod + 1) & q_mask(q);
    dev->stats.commands++;
  }
  hal_barrier(HAL_BARRIER_DSB);
  wr(dev, SMMU_CMDQ_PROD, q->prod);
  if (sync && !msi) err = wait_cons(dev, q->prod);
  sw_spin_unlock(&dev->cmdq_lock);
  if (sync && msi) {
    while (!seq_reached(hal_load32(dev->sync_word), seq)) {
      if (cmdq_error_active(dev)) {
        /* A command before our SYNC was refused: skip it under the lock. */
        sw_spin_lock(&dev->cmdq_lock);
        if (cmdq_error_active(dev)) recover_cmdq_error(dev);
        sw_spin_unlock(&dev->cmdq_lock);
        err = -1;
      }
      hal_cpu_relax();
    }
  }
  return err;
}

static int issue1(struct smmu_device *dev, uint64_t w0, uint64_t w1) {
  const uint64_t cmd[1][2] = {{w0, w1}};
  return smmu_cmdq_issue(dev, cmd, 1, true);
}

/* Appends a command to the batch, flushing 64 commands with one SYNC. */
static void batch_add(struct smmu_device *dev, uint64_t (*batch)[2], unsigned *n, uint64_t w0, uint64_t w1,
                      int *err) {
  batch[*n][0] = w0;
  batch[*n][1] = w1;
  if (++*n == 64) {
    *err |= smmu_cmdq_issue(dev, (const uint64_t(*)[2])batch, *n, true);
    *n = 0;
  }
}

int smmu_tlbi_range(struct smmu_device *dev, uint16_t asid, uint64_t iova, uint64_t size) {
  uint64_t batch[64][2];
  unsigned n = 0;
  int err = 0;
  const uint64_t first = iova & ~0xFFFull;
  uint64_t pages = (iova + size - first + 4095) / 4096;
  const uint64_t w0 = SMMU_CMD_TLBI_NH_VA | ((uint64_t)asid << SMMU_CMD0_ASID_SHIFT);
  if (dev->policy.asid_threshold_pages && pages >= dev->policy.asid_threshold_pages) {
    /* Cheaper to drop the whole ASID than to walk the range. */
    batch_add(dev, batch, &n, SMMU_CMD_TLBI_NH_ASID | ((uint64_t)asid << SMMU_CMD0_ASID_SHIFT), 0, &err);
  } else if (dev->policy.tlbi == SMMU_TLBI_RANGE) {
    /* Linux's splitting loop (facts §2), leaf, 4 KiB granule: TG = 1 and
     * TTL = 3; each command covers (NUM + 1) << SCALE pages, taking the
     * lowest set bits of the page count first. */
    uint64_t addr = first;
    while (pages) {
      const unsigned scale = (unsigned)__builtin_ctzll(pages);
      const uint64_t num = (pages >> scale) & 31;
      batch_add(dev, batch, &n,
                w0 | ((num - 1) << SMMU_CMD0_NUM_SHIFT) | ((uint64_t)scale << SMMU_CMD0_SCALE_SHIFT),
                SMMU_CMD1_LEAF | (3ull << SMMU_CMD1_TTL_SHIFT) | (1ull << SMMU_CMD1_TG_SHIFT) |
                    (addr & SMMU_CMD1_ADDR_MASK),
                &err);
      pages -= num << scale;
      addr += (num << scale) * 4096;
    }
  } else {
    for (uint64_t va = first; pages; va += 4096, pages--)
      batch_add(dev, batch, &n, w0, SMMU_CMD1_LEAF | (va & SMMU_CMD1_ADDR_MASK), &err);
  }
  if (n) err |= smmu_cmdq_issue(dev, (const uint64_t(*)[2])batch, n, true);
  return err;
}

static uint64_t *ste_of(struct smmu_device *dev, uint32_t sid) { return dev->strtab + SMMU_STE_DWORDS * sid; }

static int write_ste(struct smmu_device *dev, uint32_t sid, uint64_t w0) {
  if (sid >= (1u << dev->strtab_log2)) return -1;
  uint64_t *ste = ste_of(dev, sid);
  /* Dword 0 (with V) is written last, after the rest is visible. */
  for (int i = 1; i < SMMU_STE_DWORDS; i++) ste[i] = 0;
  hal_barrier(HAL_BARRIER_DSB);
  ste[0] = w0;
  hal_barrier(HAL_BARRIER_DSB);
  return issue1(dev, SMMU_CMD_CFGI_STE | ((uint64_t)sid << SMMU_CMD0_SID_SHIFT), SMMU_CMD1_LEAF);
}

int smmu_attach_abort(struct smmu_device *dev, uint32_t sid) {
  return write_ste(dev, sid, SMMU_STE0_V | ((uint64_t)SMMU_STE_CONFIG_ABORT << SMMU_STE0_CONFIG_SHIFT));
}

int smmu_attach_bypass(struct smmu_device *dev, uint32_t sid) {
  return write_ste(dev, sid, SMMU_STE0_V | ((uint64_t)SMMU_STE_CONFIG_BYPASS << SMMU_STE0_CONFIG_SHIFT));
}

int smmu_attach_s1(struct smmu_device *dev, uint32_t sid, uint16_t asid, phys_addr_t ttb) {
  phys_addr_t cd_pa;
  uint64_t *cd = hal_dma_alloc(SMMU_CD_DWORDS * 8, 64, &cd_pa);
  if (!cd) return -1;
  /* The CD's safe order (facts §3): dwords 1..3 first, then dword 0 with V. */
  cd[1] = ttb & SMMU_CD1_TTB0_MASK;
  hal_barrier(HAL_BARRIER_DSB);
  cd[0] = 16 /* T0SZ: 48-bit VA */ | (0ull << SMMU_CD0_TG0_SHIFT) | SMMU_CD0_EPD1 | (5ull << SMMU_CD0_IPS_SHIFT) |
          SMMU_CD0_AA64 | ((uint64_t)asid << SMMU_CD0_ASID_SHIFT) | SMMU_CD0_V;
  hal_barrier(HAL_BARRIER_DSB);
  return write_ste(dev, sid,
                   SMMU_STE0_V | ((uint64_t)SMMU_STE_CONFIG_S1 << SMMU_STE0_CONFIG_SHIFT) |
                       (cd_pa & SMMU_STE0_S1CTXPTR_MASK));
}

unsigned smmu_handle_events(struct smmu_device *dev) {
  struct smmu_queue *q = &dev->evtq;
  unsigned n = 0;
  const uint32_t prod = rd(dev, SMMU_EVENTQ_PROD);
  while ((q->cons & q_mask(q)) != (prod & q_mask(q))) {
    const uint64_t *rec = q->slots + SMMU_EVT_DWORDS * q_idx(q, q->cons);
    const uint32_t id = (uint32_t)(rec[0] & SMMU_EVT0_ID_MASK);
    dev->stats.events++;
    dev->stats.events_by_id[id]++;
    hal_stat_add("smmu_events", 1);
    hal_log(HAL_LOG_WARN, "smmu: event 0x%02x sid %u addr 0x%llx %s", id, (unsigned)(rec[0] >> SMMU_EVT0_SID_SHIFT),
            (unsigned long long)rec[2], (rec[1] & SMMU_EVT1_RNW) ? "read" : "write");
    q->cons = (q->cons + 1) & q_mask(q);
    n++;
  }
  /* Acknowledge any overflow together with the consumed records. */
  wr(dev, SMMU_EVENTQ_CONS, q->cons | (prod & SMMU_Q_OVFLG));
  return n;
}

int smmu_reset(struct smmu_device *dev) {
  /* Abort incoming transactions while the SMMU is reprogrammed. */
  if (rd(dev, SMMU_CR0) & SMMU_CR0_SMMUEN) {
    wr(dev, SMMU_GBPA, SMMU_GBPA_UPDATE | SMMU_GBPA_ABORT);
    while (rd(dev, SMMU_GBPA) & SMMU_GBPA_UPDATE) hal_cpu_relax();
  }
  wr(dev, SMMU_CR0, 0);
  wait_ack(dev, SMMU_CR0ACK, 0);
  wr(dev, SMMU_CR1, 0);
  wr(dev, SMMU_CR2, 0);

  /* Stream table: linear, every STE aborting until a stream is attached. */
  dev->strtab_log2 = min_u(dev->feat.sidsize, STRTAB_MAX_LOG2);
  dev->strtab = hal_dma_alloc((size_t)SMMU_STE_DWORDS * 8 << dev->strtab_log2, 4096, &dev->strtab_pa);
  if (!dev->strtab) return -1;
  for (uint32_t sid = 0; sid < (1u << dev->strtab_log2); sid++)
    ste_of(dev, sid)[0] = SMMU_STE0_V | ((uint64_t)SMMU_STE_CONFIG_ABORT << SMMU_STE0_CONFIG_SHIFT);
  hal_barrier(HAL_BARRIER_DSB);
  wr64(dev, SMMU_STRTAB_BASE, dev->strtab_pa);
  wr(dev, SMMU_STRTAB_BASE_CFG, dev->strtab_log2 | (SMMU_STRTAB_CFG_FMT_LINEAR << SMMU_STRTAB_CFG_FMT_SHIFT));

  /* Command queue, then invalidate whatever the SMMU may have cached. */
  if (alloc_queue(&dev->cmdq, min_u(dev->feat.cmdq_log2, 8), SMMU_CMD_DWORDS * 8)) return -1;
  wr64(dev, SMMU_CMDQ_BASE, dev->cmdq.base | dev->cmdq.log2size);
  wr(dev, SMMU_CMDQ_PROD, 0);
  wr(dev, SMMU_CMDQ_CONS, 0);
  uint32_t cr0 = SMMU_CR0_CMDQEN;
  wr(dev, SMMU_CR0, cr0);
  wait_ack(dev, SMMU_CR0ACK, cr0);
  issue1(dev, SMMU_CMD_CFGI_ALL, 31u << SMMU_CMD1_RANGE_SHIFT);
  if (dev->feat.hyp) issue1(dev, SMMU_CMD_TLBI_EL2_ALL, 0);
  issue1(dev, SMMU_CMD_TLBI_NSNH_ALL, 0);

  /* Event queue. */
  if (alloc_queue(&dev->evtq, min_u(dev->feat.evtq_log2, 7), SMMU_EVT_DWORDS * 8)) return -1;
  wr64(dev, SMMU_EVENTQ_BASE, dev->evtq.base | dev->evtq.log2size);
  wr(dev, SMMU_EVENTQ_PROD, 0);
  wr(dev, SMMU_EVENTQ_CONS, 0);
  cr0 |= SMMU_CR0_EVTQEN;
  wr(dev, SMMU_CR0, cr0);
  wait_ack(dev, SMMU_CR0ACK, cr0);

  wr(dev, SMMU_IRQ_CTRL, 0);
  wait_ack(dev, SMMU_IRQ_CTRLACK, 0);
  cr0 |= SMMU_CR0_SMMUEN;
  wr(dev, SMMU_CR0, cr0);
  wait_ack(dev, SMMU_CR0ACK, cr0);
  return 0;
}

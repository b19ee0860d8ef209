/*
 * Probe, reset, policy selection and event handling of the arm-smmu-v3
 * driver (IHI 0070 6.3 registers, 3.11 initialization, 7.3 event records;
 * Linux arm-smmu-v3.c arm_smmu_device_hw_probe, arm_smmu_device_reset and
 * arm_smmu_evtq_thread). Command submission is in arm_smmu_cmdq.c and
 * arm_smmu_ecmdq.c, tables in arm_smmu_strtab.c, invalidation in
 * arm_smmu_tlbi.c.
 */
#include <stddef.h>

#include "lib/string.h"
#include "drivers/smmu/arm_smmu_internal.h"

/* The layout arm_smmu.h promises, which the cores' cache-line model turns
 * into timing: a device (a static of the apps) starts a line, llq has one
 * of its own, the fetch-add queue's cons the next, and owner_prod and lock
 * share one as in Linux. */
_Static_assert(_Alignof(struct smmu_device) >= SW_CACHELINE_BYTES, "a device starts a cache line");
_Static_assert(offsetof(struct smmu_cmdq_lockfree, cons) / SW_CACHELINE_BYTES !=
                   offsetof(struct smmu_cmdq_lockfree, llq) / SW_CACHELINE_BYTES,
               "the fetch-add queue's cons is off llq's line");
_Static_assert(offsetof(struct smmu_cmdq_lockfree, owner_prod) / SW_CACHELINE_BYTES ==
                   offsetof(struct smmu_cmdq_lockfree, lock) / SW_CACHELINE_BYTES,
               "owner_prod and lock share a line");
_Static_assert(offsetof(struct smmu_cmdq_lockfree, owner_prod) / SW_CACHELINE_BYTES !=
                   offsetof(struct smmu_cmdq_lockfree, cons) / SW_CACHELINE_BYTES,
               "owner_prod is off cons's line");

static unsigned min_u(unsigned a, unsigned b) { return a < b ? a : b; }

int smmu_probe(struct smmu_device *dev, phys_addr_t base) {
  sw_memset(dev, 0, sizeof *dev);
  dev->base = base;
  const uint32_t idr0 = smmu_rd(dev, SMMU_IDR0), idr1 = smmu_rd(dev, SMMU_IDR1);
  const uint32_t idr3 = smmu_rd(dev, SMMU_IDR3), idr5 = smmu_rd(dev, SMMU_IDR5);
  if (idr0 == 0xFFFFFFFFu || !(idr5 & SMMU_IDR5_GRAN4K)) return -1; /* no SMMU, or none we can drive */
  struct smmu_features *f = &dev->feat;
  f->s1 = (idr0 & SMMU_IDR0_S1P) != 0;
  f->s2 = (idr0 & SMMU_IDR0_S2P) != 0;
  f->msi = (idr0 & SMMU_IDR0_MSI) != 0;
  f->sev = (idr0 & SMMU_IDR0_SEV) != 0;
  f->hyp = (idr0 & SMMU_IDR0_HYP) != 0;
  f->two_level_strtab = ((idr0 >> SMMU_IDR0_ST_LEVEL_SHIFT) & SMMU_IDR0_ST_LEVEL_MASK) == 1u;
  f->cd2l = (idr0 & SMMU_IDR0_CD2L) != 0;
  f->ats = (idr0 & SMMU_IDR0_ATS) != 0;
  f->ril = (idr3 & SMMU_IDR3_RIL) != 0;
  f->sidsize = idr1 & SMMU_IDR1_SIDSIZE_MASK;
  f->ssidsize = (idr1 >> SMMU_IDR1_SSIDSIZE_SHIFT) & SMMU_IDR1_SSIDSIZE_MASK;
  f->cmdq_log2 = (idr1 >> SMMU_IDR1_CMDQS_SHIFT) & SMMU_IDR1_QS_MASK;
  f->evtq_log2 = (idr1 >> SMMU_IDR1_EVENTQS_SHIFT) & SMMU_IDR1_QS_MASK;
  f->ecmdq = (idr1 & SMMU_IDR1_ECMDQ) != 0;
  if (f->ecmdq) {
    const uint32_t idr6 = smmu_rd(dev, SMMU_IDR6);
    f->n_ecmdq = 1u << (((idr6 >> SMMU_IDR6_LOG2NUMP_SHIFT) & SMMU_IDR6_LOG2NUM_MASK) +
                        ((idr6 >> SMMU_IDR6_LOG2NUMQ_SHIFT) & SMMU_IDR6_LOG2NUM_MASK));
  }
  static const unsigned oas[] = {32, 36, 40, 42, 44, 48, 52};
  f->oas_bits = oas[min_u(idr5 & SMMU_IDR5_OAS_MASK, 6)];
  hal_log(HAL_LOG_INFO,
          "smmu@0x%llx: s1 %d s2 %d msi %d sev %d ril %d 2lvl %d sidsize %u cmdq 2^%u evtq 2^%u ecmdqs %u oas %u",
          (unsigned long long)dev->base, f->s1, f->s2, f->msi, f->sev, f->ril, f->two_level_strtab, f->sidsize, f->cmdq_log2, f->evtq_log2,
          f->n_ecmdq, f->oas_bits);
  return f->s1 ? 0 : -1;
}

static void wait_ack(struct smmu_device *dev, uint32_t ack_reg, uint32_t want) {
  while (smmu_rd(dev, ack_reg) != want) hal_cpu_relax();
}

struct smmu_policy smmu_policy_default(void) {
  return (struct smmu_policy){
      .cmdq = SMMU_POLICY_DEFAULT_CMDQ,
      .sync = SMMU_POLICY_DEFAULT_SYNC,
      .tlbi = SMMU_POLICY_DEFAULT_TLBI,
      .sync_wait = SMMU_POLICY_DEFAULT_SYNC_WAIT,
      .asid_threshold_pages = SMMU_POLICY_DEFAULT_ASID_THRESHOLD,
      .elide_back_to_back_sync = SMMU_POLICY_DEFAULT_ELIDE != 0,
      .queued_spinlock = SMMU_POLICY_DEFAULT_SPINLOCK != 0,
  };
}

/* The driver's locks of the kind the policy names; they are idle while a
 * policy changes. False when a queued lock could not be had. */
static bool set_lock_kind(struct smmu_device *dev, bool queued) {
  struct sw_spinlock *locks[] = {&dev->cmdq_lock, &dev->err_lock, &dev->cfg_lock};
  for (unsigned i = 0; i < sizeof(locks) / sizeof(locks[0]); i++)
    if (sw_spin_is_queued(locks[i]) != queued && !sw_spin_lock_init_kind(locks[i], queued)) return false;
  return true;
}

/* The command path's shared lines under the policy `p`, named for the
 * platform's reports (which line a contended queue waits on). */
static void name_shared_lines(struct smmu_device *dev, struct smmu_policy p) {
  hal_name_shared(dev->cmdq.slots, (size_t)16 << dev->cmdq.log2size, "smmu_cmdq_slots");
  if (p.cmdq == SMMU_CMDQ_LOCKFREE || p.cmdq == SMMU_CMDQ_LOCKFREE_ADD) {
    hal_name_shared(&dev->lf.llq, sizeof(dev->lf.llq), "smmu_cmdq_llq");
    if (p.cmdq == SMMU_CMDQ_LOCKFREE_ADD) hal_name_shared(&dev->lf.cons, sizeof(dev->lf.cons), "smmu_cmdq_cons");
    hal_name_shared(&dev->lf.owner_prod, sizeof(dev->lf.owner_prod), "smmu_cmdq_owner_prod");
    hal_name_shared(&dev->lf.lock, sizeof(dev->lf.lock), "smmu_cmdq_shared_lock");
    hal_name_shared(dev->lf.valid_map, ((size_t)1 << dev->cmdq.log2size) / 8, "smmu_cmdq_valid_map");
  } else if (p.cmdq == SMMU_CMDQ_SPINLOCK) {
    hal_name_shared(&dev->cmdq_lock, sizeof(dev->cmdq_lock), "smmu_cmdq_lock");
    if (p.sync == SMMU_SYNC_MSI && dev->sync_word) hal_name_shared(dev->sync_word, 4, "smmu_sync_word");
  }
}

struct smmu_policy smmu_set_policy(struct smmu_device *dev, struct smmu_policy want) {
  struct smmu_policy p = want;
  if (p.sync == SMMU_SYNC_SEV && !dev->feat.sev) p.sync = SMMU_SYNC_POLL;
  if (p.sync == SMMU_SYNC_MSI && !dev->feat.msi) p.sync = SMMU_SYNC_POLL;
  if (p.tlbi == SMMU_TLBI_RANGE && !dev->feat.ril) p.tlbi = SMMU_TLBI_PER_GRANULE;
  /* Elision piggy-backs on the spinlock + MSI sequence counter (2018);
   * v5.4's lock-free queue dropped it. */
  if (p.elide_back_to_back_sync && (p.cmdq != SMMU_CMDQ_SPINLOCK || p.sync != SMMU_SYNC_MSI))
    p.elide_back_to_back_sync = false;
  if (p.sync == SMMU_SYNC_MSI && p.cmdq == SMMU_CMDQ_SPINLOCK && !dev->sync_word) {
    dev->sync_word = hal_dma_alloc(64, 64, &dev->sync_word_pa);
    if (!dev->sync_word) p.sync = SMMU_SYNC_POLL;
  }
  /* Policies change with the queue idle: the previous one's SYNCs are done. */
  if (p.cmdq == SMMU_CMDQ_ECMDQ && (!dev->feat.ecmdq || smmu_ecmdq_enable(dev, hal_cpu_count()) != 0))
    p.cmdq = SMMU_CMDQ_LOCKFREE;
  /* The fetch-add variant needs a ring that holds two commands per core. */
  if (p.cmdq == SMMU_CMDQ_LOCKFREE_ADD && smmu_cmdq_lockfree_init(dev, true) != 0) p.cmdq = SMMU_CMDQ_LOCKFREE;
  if (p.cmdq == SMMU_CMDQ_LOCKFREE && smmu_cmdq_lockfree_init(dev, false) != 0) p.cmdq = SMMU_CMDQ_SPINLOCK;
  /* Linux 4.13's delayed CONS polling belongs to its spinlock queue; the
   * lock-free queue and ECMDQs keep their own waits. */
  if (p.sync_wait != SMMU_SYNC_WAIT_RELAX && p.cmdq != SMMU_CMDQ_SPINLOCK) p.sync_wait = SMMU_SYNC_WAIT_RELAX;
  if (!set_lock_kind(dev, p.queued_spinlock)) {
    p.queued_spinlock = false;
    set_lock_kind(dev, false);
  }
  if (p.sync != want.sync || p.tlbi != want.tlbi || p.cmdq != want.cmdq ||
      p.elide_back_to_back_sync != want.elide_back_to_back_sync || p.sync_wait != want.sync_wait ||
      p.queued_spinlock != want.queued_spinlock)
    hal_log(HAL_LOG_WARN,
            "smmu: policy cmdq %d sync %d tlbi %d elide %d sync_wait %d spinlock %d not supported here; using cmdq %d "
            "sync %d tlbi %d elide %d sync_wait %d spinlock %d",
            want.cmdq, want.sync, want.tlbi, want.elide_back_to_back_sync, want.sync_wait, want.queued_spinlock, p.cmdq,
            p.sync, p.tlbi, p.elide_back_to_back_sync, p.sync_wait, p.queued_spinlock);
  dev->policy = p;
  name_shared_lines(dev, p);
  return p;
}

/* A stalled transaction's record (3.12.2): the page-fault handler, then
 * CMD_RESUME, retry once the page is there, else terminate with an abort
 * (Linux's arm_smmu_page_response; no CMD_SYNC: RESUME completes when
 * consumed, 4.7.3). Without a handler the transaction is terminated. */
static void resume_stalled(struct smmu_device *dev, const uint64_t *rec, smmu_page_fault_fn fault, void *ctx) {
  const uint32_t sid = (uint32_t)(rec[0] >> SMMU_EVT0_SID_SHIFT);
  const bool ok = fault && fault(ctx, sid, rec[2] & ~0xFFFull, !(rec[1] & SMMU_EVT1_RNW)) == 0;
  const uint64_t cmd[1][2] = {{SMMU_CMD_RESUME | ((uint64_t)sid << SMMU_CMD0_SID_SHIFT) |
                                   (ok ? SMMU_CMD0_RESUME_RETRY : SMMU_CMD0_RESUME_ABORT),
                               rec[1] & SMMU_EVT1_STAG_MASK}};
  smmu_cmdq_issue(dev, cmd, 1, false);
}

unsigned smmu_handle_events(struct smmu_device *dev) { return smmu_handle_events_stall(dev, 0, 0); }

unsigned smmu_handle_events_stall(struct smmu_device *dev, smmu_page_fault_fn fault, void *ctx) {
  struct smmu_queue *q = &dev->evtq;
  const unsigned log2 = q->log2size;
  unsigned n = 0;
  const uint32_t prod = smmu_rd(dev, SMMU_EVENTQ_PROD);
  while ((q->cons & q_wrap_mask(log2)) != (prod & q_wrap_mask(log2))) {
    const uint64_t *rec = q->slots + SMMU_EVT_DWORDS * q_index(log2, q->cons);
    const uint32_t id = (uint32_t)(rec[0] & SMMU_EVT0_ID_MASK);
    dev->stats.events++;
    dev->stats.events_by_id[id]++;
    if (rec[1] & SMMU_EVT1_STALL) {
      hal_stat_add("smmu_stall_events", 1);
      resume_stalled(dev, rec, fault, ctx);
    } else {
      hal_stat_add("smmu_events", 1);
      hal_log(HAL_LOG_WARN, "smmu@0x%llx: event 0x%02x sid %u addr 0x%llx %s", (unsigned long long)dev->base, id,
              (unsigned)(rec[0] >> SMMU_EVT0_SID_SHIFT), (unsigned long long)rec[2],
              (rec[1] & SMMU_EVT1_RNW) ? "read" : "write");
    }
    q->cons = q_add(log2, q->cons, 1);
    n++;
  }
  /* Acknowledge any overflow together with the consumed records. */
  smmu_wr(dev, SMMU_EVENTQ_CONS, q->cons | (prod & SMMU_Q_OVFLG));
  return n;
}

unsigned smmu_events_pending(const struct smmu_device *dev, bool *overflow) {
  const struct smmu_queue *q = &dev->evtq;
  const uint32_t prod = smmu_rd(dev, SMMU_EVENTQ_PROD);
  if (overflow) *overflow = (prod & SMMU_Q_OVFLG) != 0;
  return (prod - q->cons) & q_wrap_mask(q->log2size);
}

bool smmu_peek_event(const struct smmu_device *dev, uint64_t rec[SMMU_EVT_DWORDS]) {
  const struct smmu_queue *q = &dev->evtq;
  if (smmu_events_pending(dev, NULL) == 0) return false;
  hal_barrier(HAL_BARRIER_DMB); /* the record is read after PROD said it is there */
  const uint64_t *slot = q->slots + SMMU_EVT_DWORDS * q_index(q->log2size, q->cons);
  for (int i = 0; i < SMMU_EVT_DWORDS; i++) rec[i] = slot[i];
  return true;
}

static int alloc_evtq(struct smmu_queue *q, unsigned log2size) {
  q->log2size = log2size;
  const size_t bytes = (size_t)SMMU_EVT_DWORDS * 8 << log2size; /* aligned to its size, as the cmdq */
  q->slots = hal_dma_alloc(bytes, bytes > 4096 ? bytes : 4096, &q->base);
  q->prod = q->cons = 0;
  return q->slots ? 0 : -1;
}

int smmu_reset(struct smmu_device *dev) {
  /* Abort incoming transactions while the SMMU is reprogrammed. */
  if (smmu_rd(dev, SMMU_CR0) & SMMU_CR0_SMMUEN) {
    smmu_wr(dev, SMMU_GBPA, SMMU_GBPA_UPDATE | SMMU_GBPA_ABORT);
    while (smmu_rd(dev, SMMU_GBPA) & SMMU_GBPA_UPDATE) hal_cpu_relax();
  }
  smmu_wr(dev, SMMU_CR0, 0);
  wait_ack(dev, SMMU_CR0ACK, 0);
  smmu_wr(dev, SMMU_CR1, 0);
  smmu_wr(dev, SMMU_CR2, 0);
  dev->gerrorn = smmu_rd(dev, SMMU_GERRORN);

  /* Stream table, every STE aborting until a stream is attached. */
  if (smmu_strtab_init(dev)) return -1;

  /* Command queue (the baseline policy until smmu_set_policy), then
   * invalidate whatever the SMMU may have cached. */
  dev->policy.cmdq = SMMU_CMDQ_SPINLOCK;
  dev->policy.sync = SMMU_SYNC_POLL;
  dev->policy.sync_wait = SMMU_SYNC_WAIT_RELAX;
  if (smmu_cmdq_init(dev)) return -1;
  smmu_wr64(dev, SMMU_CMDQ_BASE, dev->cmdq.base | dev->cmdq.log2size);
  smmu_wr(dev, SMMU_CMDQ_PROD, 0);
  smmu_wr(dev, SMMU_CMDQ_CONS, 0);
  uint32_t cr0 = SMMU_CR0_CMDQEN;
  smmu_wr(dev, SMMU_CR0, cr0);
  wait_ack(dev, SMMU_CR0ACK, cr0);
  const uint64_t cfgi_all[1][2] = {{SMMU_CMD_CFGI_ALL, 31u << SMMU_CMD1_RANGE_SHIFT}};
  const uint64_t tlbi_el2[1][2] = {{SMMU_CMD_TLBI_EL2_ALL, 0}};
  const uint64_t tlbi_nsnh[1][2] = {{SMMU_CMD_TLBI_NSNH_ALL, 0}};
  smmu_cmdq_issue(dev, cfgi_all, 1, true);
  if (dev->feat.hyp) smmu_cmdq_issue(dev, tlbi_el2, 1, true);
  smmu_cmdq_issue(dev, tlbi_nsnh, 1, true);

  /* Event queue. */
  if (alloc_evtq(&dev->evtq, min_u(dev->feat.evtq_log2, 7))) return -1;
  smmu_wr64(dev, SMMU_EVENTQ_BASE, dev->evtq.base | dev->evtq.log2size);
  smmu_wr(dev, SMMU_EVENTQ_PROD, 0);
  smmu_wr(dev, SMMU_EVENTQ_CONS, 0);
  cr0 |= SMMU_CR0_EVTQEN;
  smmu_wr(dev, SMMU_CR0, cr0);
  wait_ack(dev, SMMU_CR0ACK, cr0);

  smmu_wr(dev, SMMU_IRQ_CTRL, 0);
  wait_ack(dev, SMMU_IRQ_CTRLACK, 0);
  cr0 |= SMMU_CR0_SMMUEN;
  smmu_wr(dev, SMMU_CR0, cr0);
  wait_ack(dev, SMMU_CR0ACK, cr0);
  return 0;
}

int smmu_enable_eventq_irq(struct smmu_device *dev, unsigned msi_line) {
  if (!dev->feat.msi) return -1;
  smmu_wr64(dev, SMMU_EVENTQ_IRQ_CFG0, hal_msi_doorbell());
  smmu_wr(dev, SMMU_EVENTQ_IRQ_CFG1, msi_line);
  const uint32_t v = smmu_rd(dev, SMMU_IRQ_CTRL) | SMMU_IRQ_CTRL_EVTQ_IRQEN;
  smmu_wr(dev, SMMU_IRQ_CTRL, v);
  wait_ack(dev, SMMU_IRQ_CTRLACK, v);
  return 0;
}

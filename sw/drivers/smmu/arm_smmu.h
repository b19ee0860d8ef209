/*
 * Bare-metal arm-smmu-v3 driver: probe, reset, stream table, context
 * descriptors, domains, command submission and event handling, on the HAL
 * only (C11, freestanding). Each command-submission, SYNC and invalidation
 * strategy Linux has used is here, chosen at initialisation by
 * smmu_set_policy (docs/driver.md):
 *   arm_smmu.c        probe, reset, policy selection, events
 *   arm_smmu_strtab.c stream tables (linear, 2-level), CDs, attach
 *   arm_smmu_cmdq.c   the main command queue: spinlock and lock-free insertion,
 *                     SYNC completion, error skipping
 *   arm_smmu_ecmdq.c  SMMUv3.3 ECMDQs, one per core
 *   arm_smmu_tlbi.c   TLB invalidation: per granule, range, ASID-wide
 */
#ifndef SMMU_VP_SW_SMMU_ARM_SMMU_H
#define SMMU_VP_SW_SMMU_ARM_SMMU_H

#include <stdbool.h>
#include <stdint.h>

#include "hal/hal.h"
#include "lib/compiler.h"
#include "lib/spinlock.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SMMU_MAX_CPUS 64
#define SMMU_MAX_ECMDQS 64
/* Commands gathered before one CMD_SYNC (Linux's CMDQ_BATCH_ENTRIES). */
#define SMMU_CMD_BATCH 64

struct smmu_queue {
  uint64_t *slots;     /* ring in DMA memory */
  phys_addr_t base;
  unsigned log2size;
  uint32_t prod;       /* software's copy, index with wrap */
  uint32_t cons;
  phys_addr_t prod_reg, cons_reg;
};

struct smmu_features {
  bool s1, s2, msi, sev, ril, hyp, two_level_strtab, cd2l, ecmdq, ats;
  unsigned sidsize, ssidsize, cmdq_log2, evtq_log2, oas_bits;
  unsigned n_ecmdq; /* ECMDQ interfaces (IDR6), 0 without ECMDQ */
};

/* How commands reach the queue (docs/driver.md "cmdq_policy"). */
enum smmu_cmdq_policy {
  SMMU_CMDQ_SPINLOCK = 0, /* pre-v5.4: one lock per insertion; poll/SEV waits under it */
  SMMU_CMDQ_LOCKFREE = 1, /* v5.4: cmpxchg on {prod, cons}, owner writes PROD, valid bitmap */
  SMMU_CMDQ_ECMDQ = 2,    /* SMMUv3.3: one ECMDQ per core (shared when fewer queues than cores) */
  SMMU_CMDQ_LOCKFREE_ADD = 3, /* John Garry's v2 (LKML, 2020): one fetch-add claims the slots, no cmpxchg loop */
};
/* How a waiter learns its CMD_SYNC completed. */
enum smmu_sync_policy {
  SMMU_SYNC_POLL = 0, /* poll CONS */
  SMMU_SYNC_SEV = 1,  /* WFE until CONS passes (IDR0.SEV) */
  SMMU_SYNC_MSI = 2,  /* CMD_SYNC writes memory (IDR0.MSI), polled outside any lock */
};
enum smmu_tlbi_policy {
  SMMU_TLBI_PER_GRANULE = 0, /* one TLBI_NH_VA per 4 KiB page */
  SMMU_TLBI_RANGE = 1,       /* range TLBIs (IDR3.RIL), Linux's splitting loop */
};
/* What the spinlock queue's CMD_SYNC wait does between two CONS reads when
 * it does not sleep in WFE (sync poll). */
enum smmu_sync_wait {
  SMMU_SYNC_WAIT_RELAX = 0, /* cpu_relax() only: read CONS again at once */
  /* Linux 4.13 (drivers/iommu/arm-smmu-v3.c queue_poll_cons, no SEV):
   * cpu_relax(), then udelay(d) with d = 1 us doubling after every read, so
   * CONS is read at about 0, 1, 3, 7, 15 ... us; the lock is held throughout. */
  SMMU_SYNC_WAIT_UDELAY_BACKOFF = 1,
};
/* The driver's policies; build one with designated initialisers, starting
 * from smmu_policy_default(). */
struct smmu_policy {
  enum smmu_cmdq_policy cmdq;
  enum smmu_sync_policy sync;
  enum smmu_tlbi_policy tlbi;
  enum smmu_sync_wait sync_wait; /* spinlock queue only; others fall back to relax */
  uint64_t asid_threshold_pages; /* invalidate the whole ASID from this many pages; 0: never */
  /* 2018: a waiter whose SYNC would directly follow another SYNC reuses it
   * (spinlock + MSI only, as in Linux 4.19-5.3). */
  bool elide_back_to_back_sync;
  /* The driver's spinlocks as Linux's queued spinlock (arm64 since 4.18)
   * rather than the ticket lock before it (lib/spinlock.h). */
  bool queued_spinlock;
};
/* The defaults, declared once: Linux v5.4's lock-free queue, CMD_SYNC polled
 * (relaxing between CONS reads where a spinlock queue polls), one TLBI per
 * granule, no ASID-wide threshold, no SYNC elision. The apps'
 * parameter table (sw/apps/smmu_policy_params.h) takes its defaults from
 * here. */
#define SMMU_POLICY_DEFAULT_CMDQ SMMU_CMDQ_LOCKFREE
#define SMMU_POLICY_DEFAULT_SYNC SMMU_SYNC_POLL
#define SMMU_POLICY_DEFAULT_TLBI SMMU_TLBI_PER_GRANULE
#define SMMU_POLICY_DEFAULT_SYNC_WAIT SMMU_SYNC_WAIT_RELAX
#define SMMU_POLICY_DEFAULT_ASID_THRESHOLD 0
#define SMMU_POLICY_DEFAULT_ELIDE 0
#define SMMU_POLICY_DEFAULT_SPINLOCK 0
struct smmu_policy smmu_policy_default(void);

struct smmu_stats {
  uint64_t commands, syncs, syncs_elided, events, cmdq_errors;
  uint64_t cmdq_full_waits; /* insertions that found the queue full */
  /* The lock-free queue's slot claims and the cmpxchg attempts they took
   * (the rate John Garry measured on LKML, 16 Jul 2020: 1 is ideal). */
  uint64_t cmdq_claims, cmdq_claim_attempts;
  uint64_t events_by_id[256];
};

/* The lock-free queue's shared state (Linux v5.4 arm-smmu-v3.c struct
 * arm_smmu_cmdq, commit 587e6c10a7ce), laid out as Linux lays it: llq has a
 * cache line of its own (____cacheline_aligned_in_smp), and owner_prod and
 * lock sit side by side on one line after the queue, with the valid_map
 * pointer: cores taking the shared lock and the owner handing prod on
 * contend for that one line. The fetch-add queue's cons has the line after
 * llq's, where John Garry's v2 put it ("[PATCH v2] iommu/arm-smmu-v3:
 * Improve cmdq lock efficiency", LKML, 21 Aug 2020), so that updating cons
 * does not take the line the claims use. */
struct smmu_cmdq_lockfree {
  /* SMMU_CMDQ_LOCKFREE: software {prod, cons}, bit 31 of prod the OWNED
   * flag. SMMU_CMDQ_LOCKFREE_ADD: {SYNCs gathered (16 bits), CPUs gathered
   * (16), prod (32)}, and cons in a word of its own. */
  SW_CACHELINE_ALIGNED volatile uint64_t llq;
  SW_CACHELINE_ALIGNED volatile uint32_t cons;
  uint32_t max_per_issue; /* SMMU_CMDQ_LOCKFREE_ADD: commands one CPU claims at once */
  SW_CACHELINE_ALIGNED volatile uint64_t *valid_map; /* one bit per slot, valid = !wrap */
  volatile uint32_t owner_prod;
  /* >= 0: number of SYNC waiters (shared); INT32_MIN: refreshing cons. */
  volatile uint32_t lock;
};

struct smmu_ecmdq {
  struct smmu_queue q;
  phys_addr_t regs;
  uint32_t errack;            /* PROD.ERRACK we last wrote */
  struct sw_spinlock lock;    /* only when cores share this queue */
  unsigned sharers;
  volatile uint32_t *sync_word; /* MSI target of this queue's SYNCs */
  phys_addr_t sync_word_pa;
  uint32_t sync_seq;
};

struct smmu_device {
  phys_addr_t base;
  struct smmu_features feat;
  struct smmu_queue cmdq, evtq;
  /* Stream table: linear, or level 1 of a 2-level table (strtab_split). */
  uint64_t *strtab;
  phys_addr_t strtab_pa;
  unsigned strtab_log2, strtab_split;
  bool strtab_2lvl;
  struct smmu_policy policy;
  struct sw_spinlock cmdq_lock; /* SMMU_CMDQ_SPINLOCK */
  struct sw_spinlock err_lock;  /* one CPU skips a refused command */
  struct sw_spinlock cfg_lock;  /* stream table and CD updates */
  uint32_t gerrorn;             /* what we last wrote to GERRORN */
  struct smmu_cmdq_lockfree lf; /* SMMU_CMDQ_LOCKFREE */
  uint8_t prev_opcode;          /* last command inserted (SYNC elision) */
  volatile uint32_t *sync_word; /* MSI target of CMD_SYNC (spinlock + MSI) */
  phys_addr_t sync_word_pa;
  uint32_t sync_seq;            /* last sequence number handed to a CMD_SYNC */
  struct smmu_ecmdq ecmdq[SMMU_MAX_ECMDQS];
  unsigned n_ecmdq_used;
  struct smmu_stats stats;
};

/* Chooses the strategies; a policy the SMMU cannot support (SEV, MSI, range
 * TLBI or ECMDQ it does not advertise) falls back to the baseline and says
 * so. Returns the policy in force. Call after smmu_reset, on one core. */
struct smmu_policy smmu_set_policy(struct smmu_device *dev, struct smmu_policy want);

/* Reads the ID registers into dev->feat. 0, or -1 if there is no SMMUv3. */
int smmu_probe(struct smmu_device *dev, phys_addr_t base);
/* Linux's reset order (arm-smmu-v3.c arm_smmu_device_reset; IHI 0070 3.11):
 * abort incoming traffic, disable, tables, command queue, invalidate
 * everything, event queue, then SMMUEN with every stream aborting until
 * attached. 0 or a negative error. */
int smmu_reset(struct smmu_device *dev);

/* What a stage-1 context descriptor takes from the page tables it points at
 * (IHI 0070 5.4): the io-pgtable fills these in (Linux's TCR and MAIR). */
struct smmu_s1_cfg {
  phys_addr_t ttb;            /* CD.TTB0 */
  unsigned t0sz;              /* 64 - input address bits */
  unsigned tg0;               /* SMMU_CD0_TG0_* */
  unsigned ips;               /* CD.IPS encoding: 0..5 for 32..48 bits */
  unsigned irgn0, orgn0, sh0; /* walk attributes of TTB0 */
  uint64_t mair;              /* CD dword 3 */
};

/* Stream attach: stage-1 translation through `ttb` (4K granule, 48-bit VA)
 * with `asid`; bypass; or abort (also what detach does). Writes the CD and
 * STE in the safe order and invalidates the SMMU's cached copies. */
int smmu_attach_s1(struct smmu_device *dev, uint32_t sid, uint16_t asid, phys_addr_t ttb);
/* The same with every CD field the tables need taken from `cfg`. */
int smmu_attach_s1_cfg(struct smmu_device *dev, uint32_t sid, uint16_t asid, const struct smmu_s1_cfg *cfg);
/* STE.EATS of attached stream `sid`: 0b01 (the endpoint may use ATS, Linux's
 * arm_smmu_enable_ats; needs IDR0.ATS) or 0b00, then CFGI_STE + SYNC. 0 or -1. */
int smmu_set_eats(struct smmu_device *dev, uint32_t sid, bool ats);
int smmu_attach_bypass(struct smmu_device *dev, uint32_t sid);
int smmu_attach_abort(struct smmu_device *dev, uint32_t sid);
int smmu_detach(struct smmu_device *dev, uint32_t sid);

/* Inserts the commands and, with `sync`, a CMD_SYNC, then waits for it, by
 * the policy in force. Returns 0, or -1 if this caller met a queue error
 * (the refused command is skipped and the queue goes on). */
int smmu_cmdq_issue(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync);
/* Invalidates [iova, iova + size) of `asid` by the policy (per granule,
 * range commands, or ASID-wide above the threshold), in batches of 64 and one SYNC. */
int smmu_tlbi_range(struct smmu_device *dev, uint16_t asid, uint64_t iova, uint64_t size);
/* Invalidates every translation of `asid`, with a SYNC. */
int smmu_tlbi_asid(struct smmu_device *dev, uint16_t asid);
/* smmu_tlbi_range for entries of `pgsize` bytes (a leaf size of 4 KiB-granule
 * tables: 4K, 2M or 1G), as Linux invalidates a gather of one page size: per
 * granule, the commands step by pgsize; range commands carry the TTL of that
 * leaf level (none with leaf false, which also drops walk-cache entries).
 * *tlbis (may be NULL) is increased by the TLBI commands issued. */
int smmu_tlbi_range_pgsize(struct smmu_device *dev, uint16_t asid, uint64_t iova, uint64_t size, uint64_t pgsize,
                           bool leaf, uint64_t *tlbis);
/* One TLBI_NH_VA every `step` bytes of [iova, iova + size), whatever the
 * policy (no range commands, no ASID-wide threshold), in batches of 64 and one SYNC: the
 * per-granule walk flush of SMMUv2-era drivers (seed 000). */
int smmu_tlbi_va_each(struct smmu_device *dev, uint16_t asid, uint64_t iova, uint64_t size, uint64_t step,
                      bool leaf, uint64_t *tlbis);

/* The same four invalidations without their CMD_SYNC: the commands are in
 * the queue when they return, and complete at a later smmu_sync. A domain
 * whose devices sit behind several SMMUs sends its TLBIs to every one before
 * waiting on any (sw/iommu/iommu.c, IOMMU_FANOUT_OVERLAP). */
int smmu_tlbi_asid_nosync(struct smmu_device *dev, uint16_t asid);
int smmu_tlbi_range_pgsize_nosync(struct smmu_device *dev, uint16_t asid, uint64_t iova, uint64_t size,
                                  uint64_t pgsize, bool leaf, uint64_t *tlbis);
int smmu_tlbi_va_each_nosync(struct smmu_device *dev, uint16_t asid, uint64_t iova, uint64_t size, uint64_t step,
                             bool leaf, uint64_t *tlbis);
/* A CMD_SYNC alone, waited for by the policy in force. */
int smmu_sync(struct smmu_device *dev);
/* CMD_ATC_INV for stream `sid` over [iova, iova + size) (size 0: every
 * translation), with Linux's span (arm_smmu_atc_inv_to_cmd: the smallest
 * aligned power-of-two span of 4 KiB pages holding the range), and with
 * `sync` a CMD_SYNC waited for. Issue it after the TLBIs' SYNC (IHI 0070
 * 3.9.1.4: an endpoint could refill from the SMMU's stale TLB otherwise). */
int smmu_atc_inv(struct smmu_device *dev, uint32_t sid, uint64_t iova, uint64_t size, bool sync);

/* PRI (IHI 0070 chapter 8, arm_smmu_pri.c). smmu_enable_pri sets up a PRI
 * queue of 2^log2size records (capped at IDR1.PRIQS) with its MSI to
 * `msi_line` (0: no interrupt) and turns PRIQEN on; -1 without IDR0.PRI.
 * smmu_handle_priq consumes the queue: `fault` is called for each Page
 * Request (the StreamID, the page, whether a write is wanted) and returns 0
 * once the page is present; each group is answered with CMD_PRI_RESP,
 * Success or InvalidRequest. Returns the records handled. */
typedef int (*smmu_page_fault_fn)(void *ctx, uint32_t sid, uint64_t page, bool write);
int smmu_enable_pri(struct smmu_device *dev, unsigned log2size, unsigned msi_line);
unsigned smmu_handle_priq(struct smmu_device *dev, smmu_page_fault_fn fault, void *ctx);

/* Consumes the event queue: decodes, counts and logs each record. Returns
 * the number of records handled. A stalled transaction's record (Stall = 1)
 * is terminated with CMD_RESUME. */
unsigned smmu_handle_events(struct smmu_device *dev);
/* The same, a stalled transaction's record going to `fault` (as the PRI
 * queue's, above): CMD_RESUME retries it once the page is present, else
 * terminates it (3.12.2; Linux's iopf path for stalling platform devices). */
unsigned smmu_handle_events_stall(struct smmu_device *dev, smmu_page_fault_fn fault, void *ctx);
/* The event queue's MSI to `msi_line`, and IRQ_CTRL.EVENTQ_IRQEN. -1 without MSIs. */
int smmu_enable_eventq_irq(struct smmu_device *dev, unsigned msi_line);
/* CD.S of attached stream `sid`'s context (SubstreamID 0): its stage-1
 * translation-related faults stall (needs IDR0.STALL_MODEL 0b00 or 0b10),
 * then CFGI_CD + SYNC. 0 or -1. */
int smmu_set_cd_stall(struct smmu_device *dev, uint32_t sid, bool stall);
/* Records the SMMU has written to the event queue and smmu_handle_events has
 * not consumed yet (EVENTQ_PROD against our CONS, IHI 0070 3.5); *overflow,
 * if not NULL, is EVENTQ_PROD.OVFLG (IHI 0070 7.4). */
unsigned smmu_events_pending(const struct smmu_device *dev, bool *overflow);
/* The oldest pending record, left in the queue: true and `rec` filled, or
 * false when none is pending. */
bool smmu_peek_event(const struct smmu_device *dev, uint64_t rec[4 /* SMMU_EVT_DWORDS */]);

#ifdef __cplusplus
}
#endif

#endif

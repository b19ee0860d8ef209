/*
 * Bare-metal arm-smmu-v3 driver: probe, reset, stream table, context
 * descriptors, domains, command submission and event handling, on the HAL
 * only (C11, freestanding). This is the baseline of the Linux driver: one
 * spinlock around command insertion and the wait for CMD_SYNC, which polls
 * CMDQ_CONS (cmdq_policy "spinlock", sync_policy "poll"). The optimised
 * strategies come next behind the same interface.
 */
#ifndef SMMU_VP_SW_SMMU_ARM_SMMU_H
#define SMMU_VP_SW_SMMU_ARM_SMMU_H

#include <stdbool.h>
#include <stdint.h>

#include "hal/hal.h"
#include "lib/spinlock.h"

#ifdef __cplusplus
extern "C" {
#endif

struct smmu_queue {
  uint64_t *slots;     /* ring in DMA memory */
  phys_addr_t base;
  unsigned log2size;
  uint32_t prod;       /* software's copy, index with wrap */
  uint32_t cons;
  phys_addr_t prod_reg, cons_reg;
};

struct smmu_features {
  bool s1, s2, msi, sev, ril, hyp, two_level_strtab, cd2l;
  unsigned sidsize, ssidsize, cmdq_log2, evtq_log2, oas_bits;
};

/* How commands complete and how ranges are invalidated (docs/driver.md). */
enum smmu_sync_policy {
  SMMU_SYNC_POLL = 0, /* poll CMDQ_CONS, inside the command-queue lock */
  SMMU_SYNC_SEV = 1,  /* WFE until CONS passes (IDR0.SEV), inside the lock */
  SMMU_SYNC_MSI = 2,  /* CMD_SYNC writes a sequence number to memory (IDR0.MSI), polled outside the lock */
};
enum smmu_tlbi_policy {
  SMMU_TLBI_PER_GRANULE = 0, /* one TLBI_NH_VA per 4 KiB page */
  SMMU_TLBI_RANGE = 1,       /* range TLBIs (IDR3.RIL), Linux's splitting loop */
};
struct smmu_policy {
  enum smmu_sync_policy sync;
  enum smmu_tlbi_policy tlbi;
  uint64_t asid_threshold_pages; /* invalidate the whole ASID from this many pages; 0: never */
};

struct smmu_stats {
  uint64_t commands, syncs, events, cmdq_errors;
  uint64_t events_by_id[256];
};

struct smmu_device {
  phys_addr_t base;
  struct smmu_features feat;
  struct smmu_queue cmdq, evtq;
  uint64_t *strtab;    /* linear stream table */
  phys_addr_t strtab_pa;
  unsigned strtab_log2;
  struct sw_spinlock cmdq_lock;
  struct smmu_policy policy;
  volatile uint32_t *sync_word; /* MSI target of CMD_SYNC (SMMU_SYNC_MSI) */
  phys_addr_t sync_word_pa;
  uint32_t sync_seq;            /* last sequence number handed to a CMD_SYNC */
  struct smmu_stats stats;
};

/* Chooses the strategies; a policy the SMMU cannot support (SEV, MSI or
 * range TLBI it does not advertise) falls back to the baseline and says so.
 * Returns the policy in force. Call after smmu_reset. */
struct smmu_policy smmu_set_policy(struct smmu_device *dev, struct smmu_policy want);

/* Reads the ID registers into dev->feat. 0, or -1 if there is no SMMUv3. */
int smmu_probe(struct smmu_device *dev, phys_addr_t base);
/* Linux's reset order (facts §1): abort incoming traffic, disable, tables,
 * command queue, invalidate everything, event queue, then SMMUEN with every
 * stream aborting until attached. 0 or a negative error. */
int smmu_reset(struct smmu_device *dev);

/* Stream attach: stage-1 translation through `ttb` (4K granule, 48-bit VA)
 * with `asid`; bypass; or abort. Writes the CD and STE in the safe order and
 * invalidates the SMMU's cached copies. */
int smmu_attach_s1(struct smmu_device *dev, uint32_t sid, uint16_t asid, phys_addr_t ttb);
int smmu_attach_bypass(struct smmu_device *dev, uint32_t sid);
int smmu_attach_abort(struct smmu_device *dev, uint32_t sid);

/* Inserts the commands and, with `sync`, a CMD_SYNC, then waits for it.
 * Returns 0, or -1 if the queue stopped on an error (which it then skips). */
int smmu_cmdq_issue(struct smmu_device *dev, const uint64_t (*cmds)[2], unsigned n, bool sync);
/* Invalidates [iova, iova + size) of `asid` by the policy (per granule,
 * range commands, or ASID-wide above the threshold), 64 commands per SYNC. */
int smmu_tlbi_range(struct smmu_device *dev, uint16_t asid, uint64_t iova, uint64_t size);

/* Consumes the event queue: decodes, counts and logs each record. Returns
 * the number of records handled. */
unsigned smmu_handle_events(struct smmu_device *dev);

#ifdef __cplusplus
}
#endif

#endif

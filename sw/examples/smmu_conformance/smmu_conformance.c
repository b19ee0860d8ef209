/*
 * smmu_conformance: firmware that brings up the SMMU purely through its
 * registers and memory, as a driver would, sends DMA through it and checks
 * the data and the fault records. Run it with
 *
 *   smmu-vp run platform/scenarios/firmware.json \
 *       --firmware build/sw/examples/smmu_conformance/smmu_conformance.so
 *
 * It is also the template for bringing up your own SMMU code: every step is a
 * function named after what it does to the hardware. Core 0 does the work;
 * other cores return at once. It returns the number of failed checks.
 */
#include <stdint.h>

#include "dma/dma_registers.h"
#include "hal/hal.h"
#include "drivers/smmu/smmu_hw.h"

#define IOVA_BASE 0x40000000ull
#define BYTES 8192u
#define STRTAB_LOG2 6 /* 64 StreamIDs, linear */
#define EVTQ_LOG2 4   /* 16 event records */
#define BAD_SID 5     /* left with an invalid STE */

struct ctx {
  phys_addr_t smmu, dma, strtab, evtq, buf;
  uint64_t *ste, *evtq_va;
  uint8_t *buf_va;
  uint32_t sid;
  uint32_t evtq_cons;
  unsigned failures;
};

static void check(struct ctx *c, int ok, const char *what) {
  if (ok) {
    hal_stat_add("checks_passed", 1);
    hal_log(HAL_LOG_INFO, "smmu_conformance: ok   %s", what);
  } else {
    c->failures++;
    hal_stat_add("checks_failed", 1);
    hal_log(HAL_LOG_ERROR, "smmu_conformance: FAIL %s", what);
  }
}

static void *alloc(uint64_t size, uint64_t align, phys_addr_t *pa) { return hal_dma_alloc(size, align, pa); }

static void wait_ack(struct ctx *c, uint32_t ack_reg, uint32_t want) {
  while (hal_read32(c->smmu + ack_reg) != want) hal_cpu_relax();
}

/* A 48-bit, 4K-granule stage-1 table mapping BYTES at IOVA_BASE to the
 * buffer, plus one read-only page right after it. */
static phys_addr_t build_page_tables(struct ctx *c) {
  phys_addr_t t[4];
  uint64_t *v[4];
  for (int l = 0; l < 4; l++) v[l] = alloc(4096, 4096, &t[l]);
  for (int l = 0; l < 3; l++)
    v[l][(IOVA_BASE >> (39 - 9 * l)) & 511] = t[l + 1] | SMMU_PTE_VALID | SMMU_PTE_TABLE;
  const uint64_t attrs = SMMU_PTE_VALID | SMMU_PTE_TABLE | SMMU_PTE_AF | SMMU_PTE_SH_INNER | SMMU_PTE_AP_UNPRIV;
  for (unsigned i = 0; i <= 2 * BYTES / 4096; i++) {
    const uint64_t iova = IOVA_BASE + i * 4096ull;
    uint64_t pte = ((c->buf + i * 4096ull) & SMMU_PTE_ADDR_MASK) | attrs;
    if (i == 2 * BYTES / 4096) pte |= SMMU_PTE_AP_RDONLY;
    v[3][(iova >> 12) & 511] = pte;
  }
  return t[0];
}

static void write_cd_and_ste(struct ctx *c, phys_addr_t ttb0) {
  phys_addr_t cd_pa;
  uint64_t *cd = alloc(SMMU_CD_DWORDS * 8, 64, &cd_pa);
  cd[1] = ttb0 & SMMU_CD1_TTB0_MASK;
  /* R: the faults checked below are recorded only with it (IHI 0070 5.5).
   * The valid bit last, once the rest of the CD is in place (IHI 0070 3.21.3.1). */
  hal_barrier(HAL_BARRIER_DMB);
  cd[0] = 16 /* T0SZ: 48-bit IOVAs */ | (0ull << SMMU_CD0_TG0_SHIFT) | SMMU_CD0_EPD1 | (5ull << SMMU_CD0_IPS_SHIFT) |
          SMMU_CD0_AA64 | SMMU_CD0_R | SMMU_CD0_A | (1ull << SMMU_CD0_ASID_SHIFT) | SMMU_CD0_V;
  uint64_t *ste = c->ste + c->sid * SMMU_STE_DWORDS;
  hal_barrier(HAL_BARRIER_DMB);
  ste[0] = SMMU_STE0_V | ((uint64_t)SMMU_STE_CONFIG_S1 << SMMU_STE0_CONFIG_SHIFT) | (cd_pa & SMMU_STE0_S1CTXPTR_MASK);
}

static void enable_smmu(struct ctx *c) {
  hal_write32(c->smmu + SMMU_CR0, 0);
  wait_ack(c, SMMU_CR0ACK, 0);
  hal_write64(c->smmu + SMMU_STRTAB_BASE, c->strtab);
  hal_write32(c->smmu + SMMU_STRTAB_BASE_CFG, STRTAB_LOG2 | (SMMU_STRTAB_CFG_FMT_LINEAR << SMMU_STRTAB_CFG_FMT_SHIFT));
  hal_write64(c->smmu + SMMU_EVENTQ_BASE, c->evtq | EVTQ_LOG2);
  hal_write32(c->smmu + SMMU_EVENTQ_PROD, 0);
  hal_write32(c->smmu + SMMU_EVENTQ_CONS, 0);
  hal_barrier(HAL_BARRIER_DSB);
  hal_write32(c->smmu + SMMU_CR0, SMMU_CR0_EVTQEN);
  wait_ack(c, SMMU_CR0ACK, SMMU_CR0_EVTQEN);
  hal_write32(c->smmu + SMMU_CR0, SMMU_CR0_EVTQEN | SMMU_CR0_SMMUEN);
  wait_ack(c, SMMU_CR0ACK, SMMU_CR0_EVTQEN | SMMU_CR0_SMMUEN);
}

/* Channel 0 of dma0, polled. Returns the DMA engine's error code. */
static uint32_t dma_copy(struct ctx *c, uint64_t src, uint64_t dst, uint32_t len, uint32_t sid) {
  hal_write32(c->dma + DMA_CH_REG(0, DMA_CH_SID), sid);
  hal_write64(c->dma + DMA_CH_REG(0, DMA_CH_SRC_LO), src);
  hal_write64(c->dma + DMA_CH_REG(0, DMA_CH_DST_LO), dst);
  hal_write32(c->dma + DMA_CH_REG(0, DMA_CH_LEN), len);
  hal_barrier(HAL_BARRIER_DSB);
  hal_write32(c->dma + DMA_CH_REG(0, DMA_CH_CTRL), DMA_CTRL_GO);
  uint32_t st;
  while ((st = hal_read32(c->dma + DMA_CH_REG(0, DMA_CH_STATUS))) & DMA_STATUS_BUSY) hal_cpu_relax();
  hal_write32(c->dma + DMA_CH_REG(0, DMA_CH_STATUS), DMA_STATUS_DONE | DMA_STATUS_ERROR);
  return (st & DMA_STATUS_ERROR) ? (st & DMA_STATUS_ERR_MASK) >> DMA_STATUS_ERR_SHIFT : DMA_ERR_NONE;
}

/* The next event record, consumed; 0 if the queue is empty. */
static int next_event(struct ctx *c, uint64_t rec[SMMU_EVT_DWORDS]) {
  const uint32_t prod = hal_read32(c->smmu + SMMU_EVENTQ_PROD) & SMMU_Q_WR_RD_MASK;
  if (prod == c->evtq_cons) return 0;
  const uint64_t *slot = c->evtq_va + (c->evtq_cons & ((1u << EVTQ_LOG2) - 1)) * SMMU_EVT_DWORDS;
  for (int i = 0; i < SMMU_EVT_DWORDS; i++) rec[i] = slot[i];
  c->evtq_cons = (c->evtq_cons + 1) & ((2u << EVTQ_LOG2) - 1);
  hal_write32(c->smmu + SMMU_EVENTQ_CONS, c->evtq_cons);
  return 1;
}

static void expect_event(struct ctx *c, uint32_t id, uint32_t sid, uint64_t addr, int read, const char *what) {
  uint64_t rec[SMMU_EVT_DWORDS];
  const int got = next_event(c, rec);
  check(c,
        got && (rec[0] & SMMU_EVT0_ID_MASK) == id && (rec[0] >> SMMU_EVT0_SID_SHIFT) == sid &&
            (addr == 0 || rec[2] == addr) && (read < 0 || !!(rec[1] & SMMU_EVT1_RNW) == read),
        what);
}

static int conformance_main(void) {
  if (hal_cpu_id() != 0) return 0;
  struct ctx c = {0};
  struct hal_device_info dma;
  c.smmu = hal_smmu().base;
  if (!c.smmu || hal_device_find("dma0", &dma) != 0) {
    hal_log(HAL_LOG_ERROR, "smmu_conformance: needs an SMMU and a DMA engine named dma0");
    return 1;
  }
  c.dma = dma.base;
  c.sid = dma.stream_id;

  const uint32_t idr0 = hal_read32(c.smmu + SMMU_IDR0), idr5 = hal_read32(c.smmu + SMMU_IDR5);
  check(&c, (idr0 & SMMU_IDR0_S1P) && (idr5 & SMMU_IDR5_GRAN4K), "IDR0.S1P and IDR5.GRAN4K advertised");
  check(&c, (1u << (hal_read32(c.smmu + SMMU_IDR1) & SMMU_IDR1_SIDSIZE_MASK)) > c.sid, "IDR1.SIDSIZE covers dma0");

  c.ste = alloc(SMMU_STE_DWORDS * 8 << STRTAB_LOG2, 4096, &c.strtab);
  c.evtq_va = alloc(SMMU_EVT_DWORDS * 8 << EVTQ_LOG2, 4096, &c.evtq);
  c.buf_va = alloc(3 * BYTES, 4096, &c.buf);
  if (!c.ste || !c.evtq_va || !c.buf_va) return 1;
  for (uint32_t i = 0; i < BYTES; i++) c.buf_va[i] = (uint8_t)(i * 7 + 1);
  write_cd_and_ste(&c, build_page_tables(&c));
  enable_smmu(&c);

  /* Translated copy: IOVA -> IOVA lands in the right physical pages. */
  check(&c, dma_copy(&c, IOVA_BASE, IOVA_BASE + BYTES, BYTES, c.sid) == DMA_ERR_NONE, "translated copy completes");
  int same = 1;
  for (uint32_t i = 0; i < BYTES; i++) same &= c.buf_va[BYTES + i] == c.buf_va[i];
  check(&c, same, "translated copy moved the data");

  /* Unmapped IOVA: the read aborts and F_TRANSLATION is recorded. */
  const uint64_t hole = IOVA_BASE + 0x100000;
  check(&c, dma_copy(&c, hole, IOVA_BASE, 64, c.sid) == DMA_ERR_READ, "read of an unmapped IOVA aborts");
  expect_event(&c, SMMU_EVT_F_TRANSLATION, c.sid, hole, 1, "F_TRANSLATION recorded for it");

  /* Read-only page: the write aborts with F_PERMISSION (RnW = 0). */
  const uint64_t ro = IOVA_BASE + 2 * BYTES;
  check(&c, dma_copy(&c, IOVA_BASE, ro, 64, c.sid) == DMA_ERR_WRITE, "write to a read-only page aborts");
  expect_event(&c, SMMU_EVT_F_PERMISSION, c.sid, ro, 0, "F_PERMISSION recorded for it");

  /* A StreamID whose STE is invalid: C_BAD_STE. */
  check(&c, dma_copy(&c, IOVA_BASE, IOVA_BASE, 64, BAD_SID) == DMA_ERR_READ, "a stream with an invalid STE aborts");
  expect_event(&c, SMMU_EVT_C_BAD_STE, BAD_SID, 0, -1, "C_BAD_STE recorded for it");

  uint64_t rec[SMMU_EVT_DWORDS];
  check(&c, !next_event(&c, rec), "no other event recorded");
  hal_log(HAL_LOG_INFO, "smmu_conformance: %u failure(s)", c.failures);
  return (int)c.failures;
}

HAL_FIRMWARE("smmu_conformance", "Brings up the SMMU through registers and memory and checks translation and faults.",
             conformance_main, 0);

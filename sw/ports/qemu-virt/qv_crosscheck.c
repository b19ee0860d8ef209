/*
 * The cross-check program of the qemu-virt image: the same sw/ code the
 * simulator runs (sw/lib, sw/drivers/smmu, sw/iommu, sw/apps' smmu_stress, the edu
 * driver) on QEMU's SMMUv3, with a PASS or FAIL line per check and a final
 * "RESULT: PASS n/n" (or FAIL) line; the exit status (semihosting) is 0
 * only when every check passed. docs/firmware.md "Running sw/ on QEMU".
 */
#include "qv_port.h"

#include "drivers/edu/edu.h"
#include "iommu/dma_iommu.h"
#include "iommu/iommu.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "drivers/smmu/arm_smmu.h"
#include "drivers/smmu/smmu_hw.h"

extern const struct hal_app app_smmu_stress;

/* edu starts a transfer 100 ms (virtual time) after the command; allow for
 * a loaded host. */
#define EDU_TIMEOUT_NS 5000000000ull

static unsigned checks, failures;

void qv_check(bool ok, const char *fmt, ...) {
  char line[400];
  va_list ap;
  va_start(ap, fmt);
  qv_vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  checks++;
  if (!ok) failures++;
  qv_printf("%s: %s", ok ? "PASS" : "FAIL", line);
}

unsigned qv_checks_failed(void) { return failures; }
unsigned qv_checks_total(void) { return checks; }

/* ---- HAL on this port: time, atomics and the spinlock on every core,
 * bus errors. */

#define ATOMIC_ROUNDS 2000u
static volatile uint64_t atomic_counter;
static volatile uint32_t cas_counter;
static struct sw_spinlock lock = SW_SPINLOCK_INIT;
static uint64_t locked_counter; /* plain: only the lock protects it */

static int atomics_main(void) {
  for (unsigned i = 0; i < ATOMIC_ROUNDS; i++) {
    hal_fetch_add64(&atomic_counter, 1);
    uint32_t v = hal_load32(&cas_counter), seen;
    while ((seen = hal_cmpxchg32(&cas_counter, v, v + 1)) != v) v = seen;
    sw_spin_lock(&lock);
    locked_counter++;
    sw_spin_unlock(&lock);
  }
  return 0;
}
static const struct hal_param_decl no_params[] = {{0, 0, 0, 0, 0}};
static const struct hal_app app_atomics = {"qv_atomics", "Atomics and the ticket lock on every core.", atomics_main,
                                           no_params};

static void check_hal(void) {
  const uint64_t t0 = hal_now_ns();
  hal_delay_ns(2000000);
  const uint64_t dt = hal_now_ns() - t0;
  qv_check(dt >= 2000000 && dt < 200000000, "hal_delay_ns(2 ms) took %llu us of the generic timer",
           (unsigned long long)(dt / 1000));
  const unsigned cores = qv_cpus_online();
  const int ret = qv_run_app(&app_atomics, ~0u, NULL, 0);
  const uint64_t want = (uint64_t)ATOMIC_ROUNDS * cores;
  qv_check(ret == 0 && atomic_counter == want && cas_counter == want && locked_counter == want,
           "atomics on %u cores: fetch_add %llu, cmpxchg loop %u, ticket lock %llu (each want %llu)", cores,
           (unsigned long long)atomic_counter, cas_counter, (unsigned long long)locked_counter,
           (unsigned long long)want);
  /* virt decodes nothing at the GICv3 ITS address when the GIC is v2: the
   * read takes an external abort, which the port turns into all ones. */
  const uint64_t before = hal_bus_errors();
  const uint32_t v = hal_read32(0x08080000);
  qv_check(v == 0xFFFFFFFFu && hal_bus_errors() == before + 1,
           "a read of an unmapped address returns 0x%x and counts a bus error (%llu)", v,
           (unsigned long long)(hal_bus_errors() - before));
}

/* ---- SMMU features as QEMU advertises them. */

struct idrs {
  uint32_t idr0, idr1, idr3, idr5;
};

static struct idrs read_idrs(void) {
  const phys_addr_t b = hal_smmu().base;
  const struct idrs r = {hal_read32(b + SMMU_IDR0), hal_read32(b + SMMU_IDR1), hal_read32(b + SMMU_IDR3),
                         hal_read32(b + SMMU_IDR5)};
  return r;
}

/* ---- smmu_stress under every command-queue and SYNC policy. */

static const char *const cmdq_names[] = {"spinlock", "lockfree", "ecmdq", "lockfree_add"};
static const char *const sync_names[] = {"poll", "sev", "msi"};

static void run_stress(const struct idrs *id, uint32_t mask, unsigned cmdq, unsigned sync, unsigned tlbi,
                       uint64_t pages) {
  const uint64_t iterations = 200;
  const struct qv_param p[] = {{"cmdq", cmdq}, {"sync", sync}, {"tlbi", tlbi}, {"pages", pages},
                               {"iterations", iterations}};
  const uint64_t t0 = hal_now_ns();
  const int ret = qv_run_app(&app_smmu_stress, mask, p, sizeof p / sizeof p[0]);
  const uint64_t us = (hal_now_ns() - t0) / 1000;
  const unsigned cores = (unsigned)__builtin_popcount(mask & ((1u << qv_cpus_online()) - 1));
  /* What smmu_set_policy must fall back to without the feature. */
  const bool msi = id->idr0 & SMMU_IDR0_MSI, sev = id->idr0 & SMMU_IDR0_SEV, ecmdq = id->idr1 & SMMU_IDR1_ECMDQ;
  const bool ril = id->idr3 & SMMU_IDR3_RIL;
  const unsigned want_sync = (sync == SMMU_SYNC_MSI && !msi) || (sync == SMMU_SYNC_SEV && !sev) ? 0 : sync;
  const unsigned want_cmdq = cmdq == SMMU_CMDQ_ECMDQ && !ecmdq ? SMMU_CMDQ_LOCKFREE : cmdq;
  const unsigned want_tlbi = tlbi == SMMU_TLBI_RANGE && !ril ? 0 : tlbi;
  double got_cmdq = -1, got_sync = -1, got_tlbi = -1, invals = 0, syncs = 0, cmds = 0;
  qv_stat_value("policy_cmdq", &got_cmdq);
  qv_stat_value("policy_sync", &got_sync);
  qv_stat_value("policy_tlbi", &got_tlbi);
  qv_stat_value("invalidations", &invals);
  qv_stat_value("syncs", &syncs);
  qv_stat_value("commands", &cmds);
  const uint64_t want_invals = iterations * cores;
  const phys_addr_t b = hal_smmu().base;
  const bool no_error = ((hal_read32(b + SMMU_GERROR) ^ hal_read32(b + SMMU_GERRORN)) & SMMU_GERROR_CMDQ_ERR) == 0;
  qv_check(ret == 0 && (unsigned)got_cmdq == want_cmdq && (unsigned)got_sync == want_sync &&
               (unsigned)got_tlbi == want_tlbi && (uint64_t)invals == want_invals && (uint64_t)syncs >= want_invals &&
               no_error,
           "smmu_stress cmdq=%s sync=%s tlbi=%s pages=%llu on %u core(s): ran as cmdq=%s sync=%s tlbi=%s, %.0f "
           "invalidations, %.0f commands, %.0f SYNCs, %llu us",
           cmdq_names[cmdq], sync_names[sync], tlbi ? "range" : "per_granule", (unsigned long long)pages, cores,
           got_cmdq >= 0 && got_cmdq < 4 ? cmdq_names[(unsigned)got_cmdq] : "?",
           got_sync >= 0 && got_sync < 3 ? sync_names[(unsigned)got_sync] : "?", got_tlbi > 0 ? "range" : "per_granule",
           invals, cmds, syncs, (unsigned long long)us);
}

static void check_stress(const struct idrs *id) {
  for (unsigned cmdq = 0; cmdq < 4; cmdq++)
    for (unsigned sync = 0; sync < 3; sync++) run_stress(id, 1, cmdq, sync, 0, 1);
  run_stress(id, 1, SMMU_CMDQ_LOCKFREE, SMMU_SYNC_POLL, SMMU_TLBI_RANGE, 37);
  run_stress(id, 1, SMMU_CMDQ_SPINLOCK, SMMU_SYNC_POLL, 0, 100);
}

/* ---- The command queue under contention: every core invalidates through
 * one driver instance at once. (smmu_stress itself runs on one core here:
 * its cores wait for the leader's bring-up with a 10 ms limit, fine in
 * simulated time but not on a loaded host running QEMU.) */

#define CONTEND_ROUNDS 500u
static struct smmu_device contend_smmu;
static volatile uint32_t contend_errors;

static int contend_main(void) {
  const uint64_t base = 0x100000000ull * (hal_cpu_id() + 1);
  for (unsigned i = 0; i < CONTEND_ROUNDS; i++)
    if (smmu_tlbi_range(&contend_smmu, 2, base + (i % 64) * 4096ull, 4096) != 0) hal_fetch_add32(&contend_errors, 1);
  return 0;
}
static const struct hal_app app_contend = {"qv_cmdq_contend", "Every core invalidates through one SMMU driver.",
                                           contend_main, no_params};

static void check_contention(unsigned cmdq) {
  const unsigned cores = qv_cpus_online();
  if (smmu_probe(&contend_smmu, hal_smmu().base) != 0 || smmu_reset(&contend_smmu) != 0) {
    qv_check(false, "SMMU bring-up for the contention check");
    return;
  }
  struct smmu_policy want = smmu_policy_default();
  want.cmdq = (enum smmu_cmdq_policy)cmdq;
  const struct smmu_policy got = smmu_set_policy(&contend_smmu, want);
  const uint64_t cmds0 = contend_smmu.stats.commands, syncs0 = contend_smmu.stats.syncs;
  hal_store32(&contend_errors, 0);
  const uint64_t t0 = hal_now_ns();
  const int ret = qv_run_app(&app_contend, ~0u, NULL, 0);
  const uint64_t us = (hal_now_ns() - t0) / 1000;
  const uint64_t want_syncs = (uint64_t)cores * CONTEND_ROUNDS;
  const uint64_t cmds = contend_smmu.stats.commands - cmds0, syncs = contend_smmu.stats.syncs - syncs0;
  /* Every command was consumed: the hardware's CONS caught up with PROD. */
  const uint32_t prod = hal_read32(contend_smmu.base + SMMU_CMDQ_PROD), cons = hal_read32(contend_smmu.base + SMMU_CMDQ_CONS);
  qv_check(ret == 0 && got.cmdq == cmdq && contend_errors == 0 && syncs == want_syncs && cmds == 2 * want_syncs &&
               (prod & 0xFFFFFu) == (cons & 0xFFFFFu),
           "cmdq=%s with %u cores invalidating at once: %llu commands, %llu SYNCs (want %llu), %u errors, CMDQ "
           "PROD 0x%x CONS 0x%x, %llu us",
           cmdq_names[cmdq], cores, (unsigned long long)cmds, (unsigned long long)syncs, (unsigned long long)want_syncs,
           contend_errors, prod, cons, (unsigned long long)us);
}

/* ---- DMA through the SMMU with the DMA-mapping layer and edu. */

static struct smmu_device smmu;
static struct iommu_domain domain;
static struct iommu_dma_cookie cookie;
static struct dma_dev ddev;

/* Checks that the first pending event is `id` for edu's stream at `addr`
 * with RnW `read`, then consumes every pending event through the driver. */
static void expect_fault(const struct edu_device *edu, uint32_t id, uint64_t addr, bool read, const char *what) {
  uint64_t rec[SMMU_EVT_DWORDS] = {0};
  const bool got = smmu_peek_event(&smmu, rec);
  const uint32_t got_id = (uint32_t)(rec[0] & SMMU_EVT0_ID_MASK), got_sid = (uint32_t)(rec[0] >> SMMU_EVT0_SID_SHIFT);
  const bool got_read = (rec[1] & SMMU_EVT1_RNW) != 0;
  /* How the queue looks before the driver drains it: QEMU records a fault
   * per 4-byte piece of the refused access, so a long transfer fills the
   * queue; IHI 0070 7.4 has an overflow toggle EVENTQ_PROD.OVFLG for that. */
  bool overflow = false;
  const unsigned pending = smmu_events_pending(&smmu, &overflow);
  const uint32_t gerr = hal_read32(smmu.base + SMMU_GERROR) ^ hal_read32(smmu.base + SMMU_GERRORN);
  qv_printf("note: event queue of 2^%u after the fault: %u record(s), EVENTQ_PROD.OVFLG %u, GERROR active 0x%x",
            smmu.evtq.log2size, pending, overflow ? 1u : 0u, gerr);
  const unsigned n = smmu_handle_events(&smmu);
  qv_check(got && got_id == id && got_sid == edu->stream_id && rec[2] == addr && got_read == read,
           "%s: event 0x%02x (want 0x%02x) StreamID 0x%x (want 0x%x) address 0x%llx (want 0x%llx) %s (want %s); "
           "%u record(s)",
           what, got_id, id, got_sid, edu->stream_id, (unsigned long long)rec[2], (unsigned long long)addr,
           got_read ? "read" : "write", read ? "read" : "write", n);
}

static bool all_bytes(const uint8_t *p, size_t n, uint8_t v) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != v) return false;
  return true;
}

static void fill(uint8_t *p, size_t n, uint8_t seed) {
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(seed + i * 13 + (i >> 8));
}

#define XFER 3000u  /* crosses a page boundary at the offsets used */
#define SRC_OFF 0x800u
#define DST_OFF 0x100u

static void check_dma(const struct edu_device *edu) {
  if (smmu_probe(&smmu, hal_smmu().base) != 0 || smmu_reset(&smmu) != 0) {
    qv_check(false, "SMMU bring-up for the DMA checks");
    return;
  }
  smmu_set_policy(&smmu, smmu_policy_default());
  struct dma_policy pol;
  sw_memset(&pol, 0, sizeof pol);
  pol.unmap = DMA_UNMAP_STRICT;
  const bool attached = iommu_domain_init(&domain, &smmu, 1, 4096, NULL) == 0 &&
                        iommu_dma_cookie_init(&cookie, &domain, &pol) == 0 &&
                        dma_dev_init(&ddev, &cookie, edu->stream_id, EDU_DMA_MASK, NULL) == 0;
  qv_check(attached, "edu's stream 0x%x attached to a strict DMA domain (ASID 1, 28-bit DMA mask)", edu->stream_id);
  if (!attached) return;

  phys_addr_t src_pa, dst_pa, dst2_pa;
  uint8_t *src = hal_dma_alloc(8192, 4096, &src_pa), *dst = hal_dma_alloc(8192, 4096, &dst_pa);
  uint8_t *dst2 = hal_dma_alloc(8192, 4096, &dst2_pa);
  if (!src || !dst || !dst2) {
    qv_check(false, "DMA buffers");
    return;
  }
  fill(src + SRC_OFF, XFER, 0x11);

  /* Memory -> device through a mapping. */
  const uint64_t iova_s = dma_map_single(&ddev, src_pa + SRC_OFF, XFER, DMA_TO_DEVICE);
  qv_check(iova_s != DMA_MAPPING_ERROR && iova_s + XFER - 1 <= EDU_DMA_MASK && (iova_s & 0xFFF) == SRC_OFF &&
               iommu_iova_to_phys(&domain, iova_s) == src_pa + SRC_OFF,
           "dma_map_single(PA 0x%llx, %u bytes) = IOVA 0x%llx, below edu's 28-bit limit, offset kept, tables resolve it",
           (unsigned long long)(src_pa + SRC_OFF), XFER, (unsigned long long)iova_s);
  int r = edu_dma_to_device(edu, iova_s, 0, XFER, EDU_TIMEOUT_NS);
  const uint64_t iova_d = dma_map_single(&ddev, dst_pa + DST_OFF, XFER, DMA_FROM_DEVICE);
  qv_check(iova_d != DMA_MAPPING_ERROR && iova_d + XFER - 1 <= EDU_DMA_MASK, "dma_map_single for the device to write: IOVA 0x%llx",
           (unsigned long long)iova_d);
  r |= edu_dma_from_device(edu, 0, iova_d, XFER, EDU_TIMEOUT_NS);
  qv_check(r == 0 && sw_memcmp(dst + DST_OFF, src + SRC_OFF, XFER) == 0 && all_bytes(dst, DST_OFF, 0) &&
               all_bytes(dst + DST_OFF + XFER, 8192 - DST_OFF - XFER, 0),
           "edu copied %u bytes memory -> device -> memory through the SMMU; nothing around the buffer changed", XFER);
  uint64_t rec[SMMU_EVT_DWORDS];
  qv_check(!smmu_peek_event(&smmu, rec), "no SMMU event for the mapped transfers");

  /* Strict unmap, then the device writes to the old IOVA: the SMMU must
   * refuse it (TLBI + SYNC done before dma_unmap returned). */
  dma_unmap_single(&ddev, iova_d, XFER, DMA_FROM_DEVICE);
  sw_memset(dst, 0, 8192);
  r = edu_dma_from_device(edu, 0, iova_d, XFER, EDU_TIMEOUT_NS);
  qv_check(r == 0 && all_bytes(dst, 8192, 0), "after a strict unmap the device's write to IOVA 0x%llx reached no memory",
           (unsigned long long)iova_d);
  expect_fault(edu, SMMU_EVT_F_TRANSLATION, iova_d, false, "its fault record");

  /* The same for a read: the device must not see what the CPU writes
   * into the unmapped buffer afterwards. */
  dma_unmap_single(&ddev, iova_s, XFER, DMA_TO_DEVICE);
  fill(src + SRC_OFF, XFER, 0x77);
  r = edu_dma_to_device(edu, iova_s, 0, XFER, EDU_TIMEOUT_NS);
  expect_fault(edu, SMMU_EVT_F_TRANSLATION, iova_s, true, "a read of the unmapped IOVA");
  const uint64_t iova_d2 = dma_map_single(&ddev, dst2_pa, XFER, DMA_FROM_DEVICE);
  r |= edu_dma_from_device(edu, 0, iova_d2, XFER, EDU_TIMEOUT_NS);
  dma_unmap_single(&ddev, iova_d2, XFER, DMA_FROM_DEVICE);
  const bool zeros = all_bytes(dst2, XFER, 0);
  uint8_t old[XFER];
  fill(old, XFER, 0x11);
  const bool unchanged = sw_memcmp(dst2, old, XFER) == 0;
  qv_check(r == 0 && sw_memcmp(dst2, src + SRC_OFF, XFER) != 0 && (zeros || unchanged),
           "the refused read brought the device none of the new data (its buffer then held %s)",
           zeros ? "zeros" : unchanged ? "the previous transfer's data" : "other data");

  /* A stream attached to abort: refused without an event (IHI 0070 5.2,
   * STE.Config 0b000). */
  smmu_attach_abort(&smmu, edu->stream_id);
  const uint64_t iova_d3 = dma_map_single(&ddev, dst2_pa, XFER, DMA_FROM_DEVICE);
  sw_memset(dst2, 0, XFER);
  r = edu_dma_from_device(edu, 0, iova_d3, XFER, EDU_TIMEOUT_NS);
  qv_check(r == 0 && all_bytes(dst2, XFER, 0) && !smmu_peek_event(&smmu, rec),
           "a stream whose STE aborts: the device's write reached no memory and no event was recorded");
  dma_unmap_single(&ddev, iova_d3, XFER, DMA_FROM_DEVICE);
}

/* A command the SMMU refuses: CERROR_ILL, skipped by the driver, and the
 * queue goes on (IHI 0070 7.1). */
static void check_cmdq_error(void) {
  const uint64_t before = smmu.stats.cmdq_errors;
  const uint64_t bad[1][2] = {{0x7Fu /* no such opcode */, 0}};
  const int r1 = smmu_cmdq_issue(&smmu, bad, 1, true);
  const int r2 = smmu_tlbi_asid(&smmu, 1);
  qv_check(r1 == -1 && smmu.stats.cmdq_errors == before + 1 && r2 == 0,
           "an illegal command is reported (%d), skipped (%llu), and the next TLBI + SYNC completes (%d)", r1,
           (unsigned long long)(smmu.stats.cmdq_errors - before), r2);
}

int qv_crosscheck_main(void) {
  uint64_t f;
  __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
  qv_printf("smmu-vp sw/ on QEMU virt: %u core(s), generic timer %llu Hz, RAM %llu MiB", qv_cpus_online(),
            (unsigned long long)f, (unsigned long long)(hal_dram().size >> 20));
  const uint64_t t0 = hal_now_ns();
  check_hal();

  const struct idrs id = read_idrs();
  qv_printf("SMMU IDR0 0x%08x IDR1 0x%08x IDR3 0x%08x IDR5 0x%08x", id.idr0, id.idr1, id.idr3, id.idr5);
  qv_check((id.idr0 & SMMU_IDR0_S1P) && (id.idr5 & SMMU_IDR5_GRAN4K), "the SMMU at 0x%llx has stage 1 and 4K pages",
           (unsigned long long)hal_smmu().base);

  struct edu_device edu;
  const bool have_edu = edu_probe(&edu, "edu0") == 0;
  qv_check(have_edu, "edu found on PCI bus 0 and answering (ID and liveness registers)");

  check_stress(&id);
  if (qv_cpus_online() > 1) {
    check_contention(SMMU_CMDQ_SPINLOCK);
    check_contention(SMMU_CMDQ_LOCKFREE);
    check_contention(SMMU_CMDQ_LOCKFREE_ADD);
  }
  if (have_edu) check_dma(&edu);
  if (smmu.base) check_cmdq_error();
  if (have_edu) qv_check_micro();

  /* GBPA (IHI 0070 6.3.14): an implementation holds ABORT after an update;
   * one that does not implement the register reads 0. Restored after. */
  const phys_addr_t gbpa = hal_smmu().base + SMMU_GBPA;
  hal_write32(gbpa, SMMU_GBPA_UPDATE | SMMU_GBPA_ABORT);
  const uint32_t gbpa_read = hal_read32(gbpa);
  hal_write32(gbpa, SMMU_GBPA_UPDATE);
  qv_printf("note: GBPA reads 0x%08x after writing UPDATE | ABORT (%s)", gbpa_read,
            (gbpa_read & SMMU_GBPA_ABORT) ? "the register holds ABORT" : "the register reads as zero: absent");
  qv_printf("DMA memory used: %llu KiB; %llu ms in all", (unsigned long long)(qv_dma_bytes_used() >> 10),
            (unsigned long long)((hal_now_ns() - t0) / 1000000));
  qv_printf("RESULT: %s %u/%u", failures ? "FAIL" : "PASS", checks - failures, checks);
  return failures != 0;
}

/*
 * iopf_bench: I/O page faults served through PRI (PCIe Page Request
 * Interface; IHI 0070 chapter 8) or through the stall model (3.12.2), on the
 * DMA engine `dma0` used as an accelerator: with an ATC and PRI
 * (platform.devices.dma0.atc, mode 0), or as a platform device whose faults
 * stall in the SMMU (CD.S, mode 1). One core maps
 * a source buffer and a destination buffer into the engine's DMA domain,
 * leaving `fault_percent` of the destination's pages unmapped, and copies
 * the source to the destination `transfers` times. The engine gets no
 * translation for an unmapped page and asks for it with a Page Request; the
 * core's PRI queue interrupt handler maps the page and answers the group
 * with CMD_PRI_RESP (Linux's iopf path: arm_smmu_priq_thread, the I/O
 * page-fault handler, arm_smmu_page_response), and the engine asks for the
 * translation again. Before each copy the same pages are unmapped again
 * (strict: TLBI, ATC invalidation and their CMD_SYNCs), so every copy takes
 * the same faults.
 *
 * Reports transfer_ns (a copy, GO to completion), mbps, faults (pages the
 * handler mapped), faults_per_transfer, and the domain's and SMMU's
 * counters; a fault's latency is the engine's dma0.atc.page_fault_ns with
 * PRI, the SMMU's smmu.stalls.stall_ns with stalls.
 */
#include "apps/app_instance.h"
#include "apps/iommu_setup.h"
#include "dma/dma_registers.h"
#include "drivers/dma/dma_engine.h"
#include "hal/hal.h"
#include "lib/compiler.h"
#include "lib/string.h"

#define IOPF_IOVA_BASE 0x100000000ull /* above the DMA layer's allocator's first choices: no overlap */
#define IOPF_PAGE 4096u

static SW_CACHELINE_ALIGNED struct app_dma dma;
static struct dma_engine engine;
static SW_CACHELINE_ALIGNED volatile uint32_t done;

struct iopf_ctx {
  struct iommu_domain *domain;
  uint32_t sid;
  uint64_t dst_iova, dst_pa, bytes;
  uint64_t faults, failed;
};
static struct iopf_ctx ctx;
static struct smmu_device *smmu;

/* Whether page `i` of the destination is one left to fault: spread over the
 * buffer, the share `percent`. */
static bool faulting(uint64_t i, uint64_t percent) { return (i * 37u) % 100u < percent; }

/* The I/O page-fault handler: the page is the destination's, so map it. */
static int map_faulting_page(void *arg, uint32_t sid, uint64_t page, bool write) {
  struct iopf_ctx *c = arg;
  (void)write;
  if (sid != c->sid || page < c->dst_iova || page >= c->dst_iova + c->bytes) {
    c->failed++;
    return -1;
  }
  if (iommu_map(c->domain, page, c->dst_pa + (page - c->dst_iova), IOPF_PAGE, IOMMU_READ | IOMMU_WRITE) != 0) {
    c->failed++;
    return -1;
  }
  c->faults++;
  return 0;
}

static void on_priq(unsigned irq, void *arg) {
  (void)irq;
  (void)arg;
  smmu_handle_priq(smmu, map_faulting_page, &ctx);
}

/* Stall mode: the event queue's interrupt; CMD_RESUME retries each stalled
 * write once its page is mapped. */
static void on_eventq(unsigned irq, void *arg) {
  (void)irq;
  (void)arg;
  smmu_handle_events_stall(smmu, map_faulting_page, &ctx);
}

static void on_completion(unsigned irq, void *arg) {
  (void)irq;
  (void)arg;
  hal_store32(&done, 1);
}

static int iopf_main(void) {
  if (!app_single_instance("iopf_bench")) return 1;
  const uint64_t pages = hal_param("pages"), percent = hal_param("fault_percent");
  const uint64_t transfers = hal_param("transfers");
  const unsigned line = (unsigned)hal_param("priq_line");
  const bool stall = hal_param("mode") == 1;
  if (pages == 0 || pages > 4096 || percent > 100 || transfers == 0) {
    hal_log(HAL_LOG_ERROR, "iopf_bench: pages must be 1..4096, fault_percent 0..100, transfers at least 1");
    return 1;
  }
  struct hal_device_info info;
  if (hal_device_find("dma0", &info) != 0 || dma_engine_probe(&engine, "dma0") != 0) {
    hal_log(HAL_LOG_ERROR, "iopf_bench: no DMA engine named dma0");
    return 1;
  }
  if (!stall && !info.ats) {
    hal_log(HAL_LOG_ERROR, "iopf_bench: dma0 has no ATC (set platform.devices.dma0.atc.entries and atc.pri)");
    return 1;
  }
  if (hal_param("unmap") != 0) {
    hal_log(HAL_LOG_ERROR, "iopf_bench: needs a strict DMA domain (unmap 0)");
    return 1;
  }
  if (iommu_setup_attach_device(&dma, "iopf_bench", &info, 1, 0) != 0 || !dma.translated) return 1;
  bool failed;
  smmu = iommu_setup_smmu_at("iopf_bench", info.smmu, &failed);
  if (!smmu) return 1;
  if (stall) {
    if (smmu_set_cd_stall(smmu, info.stream_id, true) != 0 || smmu_enable_eventq_irq(smmu, line) != 0 ||
        hal_irq_register(line, on_eventq, 0) != 0) {
      hal_log(HAL_LOG_ERROR, "iopf_bench: cannot stall faults (platform.smmu.features.stall_model 0, line %u free?)",
              line);
      return 1;
    }
  } else if (smmu_enable_pri(smmu, 6, line) != 0 || hal_irq_register(line, on_priq, 0) != 0) {
    hal_log(HAL_LOG_ERROR, "iopf_bench: cannot serve a PRI queue (platform.smmu.features.pri, line %u free?)", line);
    return 1;
  }
  const uint64_t bytes = pages * IOPF_PAGE;
  phys_addr_t src_pa, dst_pa;
  uint8_t *src = hal_dma_alloc(bytes, IOPF_PAGE, &src_pa);
  uint8_t *dst = hal_dma_alloc(bytes, IOPF_PAGE, &dst_pa);
  if (!src || !dst) {
    hal_log(HAL_LOG_ERROR, "iopf_bench: cannot allocate 2 x %llu bytes", (unsigned long long)bytes);
    return 1;
  }
  for (uint64_t i = 0; i < bytes; i++) src[i] = (uint8_t)(i * 7 + 1);
  struct iommu_domain *domain = dma.dev.domain;
  const uint64_t src_iova = IOPF_IOVA_BASE, dst_iova = IOPF_IOVA_BASE + bytes;
  ctx = (struct iopf_ctx){domain, info.stream_id, dst_iova, dst_pa, bytes, 0, 0};
  if (iommu_map(domain, src_iova, src_pa, bytes, IOMMU_READ | IOMMU_WRITE) != 0 ||
      iommu_map(domain, dst_iova, dst_pa, bytes, IOMMU_READ | IOMMU_WRITE) != 0) {
    hal_log(HAL_LOG_ERROR, "iopf_bench: cannot map the buffers");
    return 1;
  }
  const unsigned ch = 0;
  if (hal_irq_register(dma_engine_channel_irq(&engine, ch), on_completion, 0) != 0) return 1;

  uint64_t faulting_pages = 0;
  for (uint64_t i = 0; i < pages; i++) faulting_pages += faulting(i, percent);
  const uint64_t t_start = hal_now_ns();
  for (uint64_t t = 0; t < transfers; t++) {
    /* The pages to fault leave the domain (strict: TLBI, ATC_INV, SYNCs). */
    for (uint64_t i = 0; i < pages; i++)
      if (faulting(i, percent)) iommu_unmap(domain, dst_iova + i * IOPF_PAGE, IOPF_PAGE);
    sw_memset(dst, 0, bytes);
    hal_store32(&done, 0);
    const uint64_t t0 = hal_now_ns();
    dma_engine_start(&engine, ch, src_iova, dst_iova, (uint32_t)bytes, DMA_COMPLETE_IRQ);
    while (!hal_load32(&done)) hal_wfi();
    hal_stat_sample("transfer_ns", hal_now_ns() - t0);
    const uint32_t err = dma_engine_ack(&engine, ch);
    if (err != DMA_ERR_NONE || sw_memcmp(src, dst, bytes) != 0) {
      hal_log(HAL_LOG_ERROR, "iopf_bench: copy %llu failed (engine error %u)", (unsigned long long)t, err);
      hal_stat_add("data_errors", 1);
      return 1;
    }
  }
  const uint64_t elapsed = hal_now_ns() - t_start;
  hal_stat_add("faults", ctx.faults);
  hal_stat_add("faults_failed", ctx.failed);
  hal_stat_set("faults_per_transfer", (double)ctx.faults / (double)transfers);
  hal_stat_set("faulting_pages", (double)faulting_pages);
  hal_stat_set("mbps", (double)(bytes * transfers) / ((double)elapsed / 1e9) / 1e6);
  iommu_setup_report(&dma);
  hal_log(HAL_LOG_INFO, "iopf_bench: %llu copies of %llu pages, %llu of them faulting each time: %llu faults served, %.1f MB/s",
          (unsigned long long)transfers, (unsigned long long)pages, (unsigned long long)faulting_pages,
          (unsigned long long)ctx.faults, (double)(bytes * transfers) / ((double)elapsed / 1e9) / 1e6);
  return 0;
}

static const struct hal_param_decl iopf_params[] = {
    IOMMU_SETUP_PARAMS,
    {"pages", 64, "Pages of each buffer.", 0, 0},
    {"fault_percent", 10, "Share of the destination's pages left unmapped before each copy, %.", 0, 0},
    {"transfers", 8, "Copies.", 0, 0},
    {"mode", 0, "How faults are served: 0 PRI (dma0 with an ATC and PRI), 1 stall (CD.S; platform.smmu.features.stall_model 0).", 1, "pri,stall"},
    {"priq_line", 250, "Interrupt line the PRI queue's (mode pri) or the event queue's (mode stall) MSI raises.", 0, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_iopf_bench = {
    "iopf_bench",
    "I/O page faults through PRI: the DMA engine (an accelerator with an ATC and PRI) copies into a buffer part "
    "of which software maps only when the engine asks for it.",
    iopf_main, iopf_params};

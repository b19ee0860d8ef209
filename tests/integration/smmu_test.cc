// The SMMU in the platform, driven from a simulated core through registers and
// memory only, as a driver would: stream table, CD and page tables in DRAM,
// the event queue, CR0 and IRQ_CTRL handshakes, then DMA through it.
#include <array>
#include <cstring>

#include <gtest/gtest.h>

#include "dma/dma_registers.h"
#include "drivers/dma/dma_engine.h"
#include "hal/hal.h"
#include "platform_fixture.h"
#include "smmu_test_driver.h"
#include "smmu/commands.h"
#include "smmu/descriptors.h"
#include "smmu/event_queue.h"
#include "smmu/registers.h"

namespace smmu_vp::test {
namespace {

constexpr uint64_t kIova = 0x4000'0000;
constexpr uint32_t kBytes = 8192;

struct Outcome {
  uint32_t idr0 = 0, idr1 = 0, idr5 = 0;
  uint32_t copy_status = 0, copy_error = 0;
  bool data_ok = false;
  uint32_t fault_error = 0;
  uint32_t eventq_prod = 0;
  smmu::EventRecord record;
  unsigned eventq_irqs = 0;
} g;

void on_eventq_irq(unsigned, void*) { ++g.eventq_irqs; }

int smmu_driver_main(void) {
  const phys_addr_t smmu_base = hal_smmu().base;
  g.idr0 = hal_read32(smmu_base + reg::kIdr0);
  g.idr1 = hal_read32(smmu_base + reg::kIdr1);
  g.idr5 = hal_read32(smmu_base + reg::kIdr5);

  phys_addr_t buf_pa;
  auto* buf = static_cast<uint8_t*>(hal_dma_alloc(3 * kBytes, 4096, &buf_pa));
  const phys_addr_t src_pa = buf_pa, dst_pa = buf_pa + kBytes;
  for (uint32_t i = 0; i < kBytes; ++i) buf[i] = static_cast<uint8_t>(i * 13 + 1);
  SmmuSetup setup;
  BringUp b;
  b.ttb = build_tables(kIova, buf_pa, 2 * kBytes / 4096);
  b.eventq_handler = on_eventq_irq;
  if (!bring_up(b, &setup)) return 1;
  const phys_addr_t smmu = setup.smmu;
  uint64_t* evtq_mem = setup.evtq;

  // A copy between two IOVAs lands at the right physical addresses.
  struct dma_engine dma;
  if (dma_engine_probe(&dma, "dma0") != 0) return 1;
  dma_engine_start(&dma, 0, kIova, kIova + kBytes, kBytes, DMA_COMPLETE_POLL);
  g.copy_status = dma_engine_wait_poll(&dma, 0);
  g.copy_error = dma_engine_ack(&dma, 0);
  g.data_ok = std::memcmp(hal_phys_to_virt(src_pa), hal_phys_to_virt(dst_pa), kBytes) == 0;

  // An unmapped IOVA: the DMA read aborts and the SMMU records F_TRANSLATION.
  dma_engine_start(&dma, 0, kIova + 0x10'0000, kIova, 4096, DMA_COMPLETE_POLL);
  dma_engine_wait_poll(&dma, 0);
  g.fault_error = dma_engine_ack(&dma, 0);
  g.eventq_prod = hal_read32(smmu + reg::kEventqProd);
  std::array<uint64_t, 4> rec;
  std::memcpy(rec.data(), evtq_mem, 32);
  g.record = smmu::EventRecord::decode(rec);
  while (g.eventq_irqs == 0) hal_wfi();
  return 0;
}
const hal_app smmu_driver = {"smmu_driver", "programs the SMMU and DMAs through it", smmu_driver_main, nullptr};

struct OverflowOutcome {
  uint32_t prod_after_burst = 0;
  uint32_t prod_after_recovery = 0;
  uint32_t sids_ok = 0;
} o;

// Every DMA faults (nothing is mapped); the 2-entry event queue overflows.
int overflow_main(void) {
  phys_addr_t root;
  if (!hal_dma_alloc(4096, 4096, &root)) return 1;  // an empty level-0 table
  SmmuSetup setup;
  BringUp b;
  b.ttb = root;
  b.evtq_log2 = 1;
  b.msi_line = 70;
  b.eventq_handler = on_eventq_irq;
  if (!bring_up(b, &setup)) return 1;
  struct dma_engine dma;
  if (dma_engine_probe(&dma, "dma0") != 0) return 1;
  auto fault_once = [&](uint64_t iova) {
    dma_engine_start(&dma, 0, iova, iova, 64, DMA_COMPLETE_POLL);
    dma_engine_wait_poll(&dma, 0);
    return dma_engine_ack(&dma, 0) == DMA_ERR_READ;
  };
  for (unsigned i = 0; i < 4; ++i)
    if (!fault_once(0x1000'0000 + i * 0x1000ull)) return 2;
  o.prod_after_burst = hal_read32(setup.smmu + reg::kEventqProd);
  // The driver drains the queue and acknowledges the overflow.
  for (unsigned i = 0; i < 2; ++i) {
    std::array<uint64_t, 4> rec;
    std::memcpy(rec.data(), setup.evtq + i * 4, 32);
    if (smmu::EventRecord::decode(rec).sid == setup.sid) ++o.sids_ok;
  }
  const uint32_t ovflg = o.prod_after_burst & reg::queue_prod::kOvflg.mask32();
  hal_write32(setup.smmu + reg::kEventqCons, (o.prod_after_burst & reg::queue_prod::kWr.mask32()) | ovflg);
  if (!fault_once(0x2000'0000)) return 3;
  o.prod_after_recovery = hal_read32(setup.smmu + reg::kEventqProd);
  while (g.eventq_irqs < 3) hal_wfi();
  return 0;
}
const hal_app overflow = {"overflow", "overflows the event queue, then recovers", overflow_main, nullptr};

TEST(Smmu, EventQueueOverflowLosesRecordsAndRecovers) {
  const TestRun t = run(scenario({{{"app", "overflow"}, {"cores", {0}}}}), {&overflow});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  // Two records fit, two were lost: PROD is full (index 0, wrap 1) with OVFLG set.
  EXPECT_EQ(o.prod_after_burst, 2u | reg::queue_prod::kOvflg.mask32());
  EXPECT_EQ(o.sids_ok, 2u);
  EXPECT_EQ(t.counter("smmu.events.written"), 3u);
  EXPECT_EQ(t.counter("smmu.events.lost"), 2u);
  // After the acknowledgement a new record goes in; OVFLG stays as acknowledged.
  EXPECT_EQ(o.prod_after_recovery, 3u | reg::queue_prod::kOvflg.mask32());
  // One MSI per written record, through the doorbell.
  EXPECT_EQ(t.counter("smmu.msis"), 3u);
  EXPECT_EQ(t.counter("intc.msi_writes"), 3u);
  EXPECT_EQ(g.eventq_irqs, 3u);
}

TEST(Smmu, TranslatesDmaAndRecordsFaults) {
  const TestRun t = run(scenario({{{"app", "smmu_driver"}, {"cores", {0}}}}), {&smmu_driver});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  // ID registers describe the v3.3 profile of the base platform.
  EXPECT_TRUE(reg::idr0::kS1p.test(g.idr0));
  EXPECT_TRUE(reg::idr0::kMsi.test(g.idr0));
  EXPECT_EQ(reg::idr1::kSidSize.get(g.idr1), 16u);
  EXPECT_EQ(g.copy_error, DMA_ERR_NONE);
  EXPECT_TRUE(g.data_ok);
  EXPECT_EQ(g.fault_error, DMA_ERR_READ);
  EXPECT_EQ(g.eventq_prod, 1u);
  EXPECT_EQ(g.record.id, smmu::EventId::kTranslation);
  EXPECT_EQ(g.record.sid, 16u);
  EXPECT_EQ(g.record.input_addr, kIova + 0x10'0000);
  EXPECT_TRUE(g.record.rnw);
  EXPECT_EQ(g.eventq_irqs, 1u);
  EXPECT_EQ(t.counter("smmu.faults.F_TRANSLATION"), 1u);
  EXPECT_GT(t.counter("smmu.tlb.hits"), 0u);
  EXPECT_GT(t.counter("smmu.ptw.walks.s1"), 0u);
}

TEST(Smmu, StaleCheckLooksAtMemoryThroughDebugTransport) {
  const TestRun t = run(scenario({{{"app", "smmu_driver"}, {"cores", {0}}}}), {&smmu_driver},
                        {"platform.smmu.stale_check=true"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_TRUE(g.data_ok);
  // Every TLB hit was checked against the tables, none of which changed.
  EXPECT_EQ(t.counter("smmu.stale_check.checks"), t.counter("smmu.tlb.hits"));
  EXPECT_GT(t.counter("smmu.stale_check.checks"), 0u);
  EXPECT_EQ(t.counter("smmu.stale_check.stale_hits"), 0u);
}

// SMMU_STRTAB_BASE moved to a second stream table while SMMUEN = 0 (the
// registers are guarded by it, IHI 0070 6.3.24), then CFGI_ALL: dma0's
// translation must come from the new table, whose STE for it is invalid
// (C_BAD_STE), so the copy that worked before aborts. The SMMU keeps the
// decoded STRTAB registers between accesses; this checks it sees the write.
struct MovedOutcome {
  uint32_t before = 0, after = 0;
  uint32_t eventq_prod = 0;
  smmu::EventRecord record;
} moved;

int strtab_moved_main(void) {
  phys_addr_t buf_pa;
  if (!hal_dma_alloc(2 * 4096, 4096, &buf_pa)) return 1;
  SmmuSetup setup;
  BringUp b;
  b.ttb = build_tables(kIova, buf_pa, 2);
  b.cmdq_log2 = 4;
  if (!bring_up(b, &setup)) return 2;
  const phys_addr_t smmu = setup.smmu;
  struct dma_engine dma;
  if (dma_engine_probe(&dma, "dma0") != 0) return 3;
  dma_engine_start(&dma, 0, kIova, kIova + 4096, 4096, DMA_COMPLETE_POLL);
  dma_engine_wait_poll(&dma, 0);
  moved.before = dma_engine_ack(&dma, 0);

  phys_addr_t other;
  void* other_mem = hal_dma_alloc(64 * 64, 4096, &other);
  if (!other_mem) return 4;
  std::memset(other_mem, 0, 64 * 64);  // every STE invalid (V = 0)
  hal_barrier(HAL_BARRIER_DSB);
  const uint32_t cr0 = hal_read32(smmu + reg::kCr0);
  hal_write32(smmu + reg::kCr0, cr0 & ~reg::cr0::kSmmuEn.mask32());
  wait_ack(reg::kCr0Ack, cr0 & ~reg::cr0::kSmmuEn.mask32(), smmu);
  hal_write64(smmu + reg::kStrtabBase, other);
  hal_write32(smmu + reg::kCr0, cr0);
  wait_ack(reg::kCr0Ack, cr0, smmu);
  submit(setup, smmu::cmd_cfgi_all());
  submit(setup, smmu::cmd_sync(smmu::SyncCs::kNone));
  if (!wait_consumed(setup)) return 5;

  dma_engine_start(&dma, 0, kIova, kIova + 4096, 4096, DMA_COMPLETE_POLL);
  dma_engine_wait_poll(&dma, 0);
  moved.after = dma_engine_ack(&dma, 0);
  moved.eventq_prod = hal_read32(smmu + reg::kEventqProd);
  std::array<uint64_t, 4> rec;
  std::memcpy(rec.data(), setup.evtq, 32);
  moved.record = smmu::EventRecord::decode(rec);
  return 0;
}
const hal_app strtab_moved = {"strtab_moved", "DMA, then the stream table moved", strtab_moved_main, nullptr};

TEST(Smmu, MovedStreamTableIsUsedAfterCfgiAll) {
  const TestRun t = run(scenario({{{"app", "strtab_moved"}, {"cores", {0}}}}), {&strtab_moved});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(moved.before, DMA_ERR_NONE);
  EXPECT_EQ(moved.after, DMA_ERR_READ);
  EXPECT_EQ(moved.eventq_prod, 1u);
  EXPECT_EQ(moved.record.id, smmu::EventId::kBadSte);
  EXPECT_EQ(moved.record.sid, 16u);
}

int bypass_main(void) {
  // SMMUEN = 0 with GBPA at reset: DMA passes untranslated.
  struct dma_engine dma;
  phys_addr_t src, dst;
  if (dma_engine_probe(&dma, "dma0") != 0 || !hal_dma_alloc(4096, 4096, &src) || !hal_dma_alloc(4096, 4096, &dst))
    return 1;
  dma_engine_start(&dma, 0, src, dst, 4096, DMA_COMPLETE_POLL);
  dma_engine_wait_poll(&dma, 0);
  if (dma_engine_ack(&dma, 0) != DMA_ERR_NONE) return 2;
  // GBPA.ABORT: the same copy is aborted.
  const phys_addr_t smmu = hal_smmu().base;
  hal_write32(smmu + reg::kGbpa, reg::gbpa::kUpdate.mask32() | reg::gbpa::kAbort.mask32());
  while (hal_read32(smmu + reg::kGbpa) & reg::gbpa::kUpdate.mask32()) hal_cpu_relax();
  dma_engine_start(&dma, 0, src, dst, 4096, DMA_COMPLETE_POLL);
  dma_engine_wait_poll(&dma, 0);
  return dma_engine_ack(&dma, 0) == DMA_ERR_READ ? 0 : 3;
}
const hal_app bypass = {"bypass", "DMA with SMMUEN = 0, then GBPA.ABORT", bypass_main, nullptr};

TEST(Smmu, DisabledSmmuFollowsGbpa) {
  const TestRun t = run(scenario({{{"app", "bypass"}, {"cores", {0}}}}), {&bypass});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GT(t.counter("smmu.bypass_transactions"), 0u);
  EXPECT_EQ(t.counter("smmu.aborted_transactions"), 1u);
}

}  // namespace
}  // namespace smmu_vp::test

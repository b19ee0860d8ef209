// The SMMU's command queue driven from a simulated core: TLBI + CMD_SYNC
// making a removed mapping fault, SYNC completion by polling, MSI and SEV,
// and recovery from an illegal command.
#include <array>
#include <cstring>

#include <gtest/gtest.h>

#include "dma/dma_registers.h"
#include "drivers/dma/dma_engine.h"
#include "hal/hal.h"
#include "platform_fixture.h"
#include "smmu/commands.h"
#include "smmu_test_driver.h"

namespace smmu_vp::test {
namespace {

constexpr uint64_t kIova = 0x4000'0000;

struct Outcome {
  uint32_t before_unmap = 0, stale_copy = 0, after_tlbi = 0;
  uint32_t msi_word = 0;
  uint64_t sev_wait_ns = 0;
  uint32_t error_cons = 0, gerror_active = 0;
  bool resumed = false;
} g;

uint32_t copy(struct dma_engine* dma, uint64_t src, uint64_t dst) {
  dma_engine_start(dma, 0, src, dst, 256, DMA_COMPLETE_POLL);
  dma_engine_wait_poll(dma, 0);
  return dma_engine_ack(dma, 0);
}

int cmdq_main(void) {
  phys_addr_t buf;
  if (!hal_dma_alloc(4 * 4096, 4096, &buf)) return 1;
  uint64_t* leaf = nullptr;
  BringUp b;
  b.ttb = build_tables(kIova, buf, 4, &leaf);
  b.cmdq_log2 = 6;
  SmmuSetup s;
  if (!bring_up(b, &s)) return 1;
  struct dma_engine dma;
  if (dma_engine_probe(&dma, "dma0") != 0) return 1;

  // 1. Unmap a page without invalidating: the TLB still translates it (the
  // window lazy unmap leaves open); after TLBI_NH_VA + SYNC it faults.
  g.before_unmap = copy(&dma, kIova, kIova + 0x1000);
  leaf[(kIova >> 12) & 511] = 0;
  hal_barrier(HAL_BARRIER_DSB);
  g.stale_copy = copy(&dma, kIova, kIova + 0x1000);
  submit(s, smmu::cmd_tlbi_nh_va(1, 0, kIova, true));
  submit(s, smmu::cmd_sync(smmu::SyncCs::kNone));
  if (!wait_consumed(s)) return 2;
  g.after_tlbi = copy(&dma, kIova, kIova + 0x1000);

  // 2. SYNC completion signalled by an MSI write to memory.
  phys_addr_t flag_pa;
  auto* flag = static_cast<volatile uint32_t*>(hal_dma_alloc(64, 64, &flag_pa));
  submit(s, smmu::cmd_sync(smmu::SyncCs::kIrq, flag_pa, 0xC0FFEE));
  while (hal_load32(flag) == 0) hal_cpu_relax();
  g.msi_word = hal_load32(flag);

  // 3. SYNC completion by SEV: the core sleeps in WFE until it comes.
  const uint64_t t0 = hal_now_ns();
  submit(s, smmu::cmd_sync(smmu::SyncCs::kSev));
  const uint32_t mask = (2u << s.cmdq_log2) - 1;
  while ((hal_read32(s.smmu + reg::kCmdqCons) & mask) != s.cmdq_prod) hal_wfe();
  g.sev_wait_ns = hal_now_ns() - t0;

  // 4. An illegal command stops the queue with CERROR_ILL; the driver
  // replaces it with a CMD_SYNC, acknowledges GERROR, and the queue resumes.
  std::array<uint64_t, 2> bad = {0xFF, 0};
  submit(s, bad);
  submit(s, smmu::cmd_sync(smmu::SyncCs::kNone));
  if (wait_consumed(s)) return 3;  // must stop on the error
  g.error_cons = hal_read32(s.smmu + reg::kCmdqCons);
  const uint32_t gerror = hal_read32(s.smmu + reg::kGerror);
  g.gerror_active = gerror ^ hal_read32(s.smmu + reg::kGerrorn);
  const uint32_t at = g.error_cons & ((1u << s.cmdq_log2) - 1);
  const auto sync = smmu::cmd_sync(smmu::SyncCs::kNone);
  s.cmdq[2 * at] = sync[0];
  s.cmdq[2 * at + 1] = sync[1];
  hal_barrier(HAL_BARRIER_DSB);
  hal_write32(s.smmu + reg::kGerrorn, gerror);
  g.resumed = wait_consumed(s);
  return 0;
}
const hal_app cmdq_app = {"cmdq", "drives the SMMU command queue", cmdq_main, nullptr};

TEST(SmmuCmdq, TlbiSyncMsiSevAndErrorRecovery) {
  const TestRun t = run(scenario({{{"app", "cmdq"}, {"cores", {0}}}}), {&cmdq_app}, {"platform.cpu.event_stream_ns=0"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(g.before_unmap, DMA_ERR_NONE);
  EXPECT_EQ(g.stale_copy, DMA_ERR_NONE);  // served from the TLB: no invalidation yet
  EXPECT_EQ(g.after_tlbi, DMA_ERR_READ);  // the walk finds the page gone
  EXPECT_EQ(g.msi_word, 0xC0FFEEu);
  EXPECT_GT(g.sev_wait_ns, 0u);
  EXPECT_EQ(reg::queue_cons::kErr.get(g.error_cons), reg::cerror::kIll);
  EXPECT_TRUE(g.gerror_active & reg::gerror::kCmdqErr.mask32());
  EXPECT_TRUE(g.resumed);
  EXPECT_EQ(t.counter("smmu.cmdq.errors.CERROR_ILL"), 1u);
  EXPECT_EQ(t.counter("smmu.cmdq.syncs"), 5u);
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_VA"), 1u);
  EXPECT_GE(t.counter("cpus.cpu0.wfe_sleep_ps"), 1u);
}

uint64_t g_sync_wait_ns;

// A CMD_SYNC completes only after the TLBI before it has completed.
int slow_tlbi_main(void) {
  SmmuSetup s;
  if (!bring_up_for_commands(4, &s)) return 1;
  const uint64_t t0 = hal_now_ns();
  submit(s, smmu::cmd_tlbi_nh_asid(1, 0));
  submit(s, smmu::cmd_sync(smmu::SyncCs::kNone));
  if (!wait_consumed(s)) return 2;
  g_sync_wait_ns = hal_now_ns() - t0;
  return 0;
}
const hal_app slow_tlbi = {"slow_tlbi", "a TLBI that takes 5 us, then a SYNC", slow_tlbi_main, nullptr};

TEST(SmmuCmdq, SyncWaitsForTheTlbiBeforeIt) {
  const TestRun t = run(scenario({{{"app", "slow_tlbi"}, {"cores", {0}}}}), {&slow_tlbi},
                        {"platform.smmu.cmdq.tlbi_ns=5000"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GE(g_sync_wait_ns, 5000u);
  const Histogram* sync = t.histogram("smmu.cmdq.sync_latency_ns");
  ASSERT_NE(sync, nullptr);
  EXPECT_GE(sync->min(), 5000.0);
}

// tlbi_context_ns: a TLBI of a whole context (here by ASID) has a cost of
// its own, apart from one by address (tlbi_ns).
TEST(SmmuCmdq, ATlbiByAsidCostsTheContextCost) {
  const TestRun t = run(scenario({{{"app", "slow_tlbi"}, {"cores", {0}}}}), {&slow_tlbi},
                        {"platform.smmu.cmdq.tlbi_ns=100", "platform.smmu.cmdq.tlbi_context_ns=5000"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GE(g_sync_wait_ns, 5000u);
  const Histogram* sync = t.histogram("smmu.cmdq.sync_latency_ns");
  ASSERT_NE(sync, nullptr);
  EXPECT_GE(sync->min(), 5000.0);
}

uint32_t g_abt_cons, g_abt_gerror;

// A command queue in memory that does not exist: the fetch aborts.
int fetch_abort_main(void) {
  phys_addr_t root;
  if (!hal_dma_alloc(4096, 4096, &root)) return 1;
  BringUp b;
  b.ttb = root;
  SmmuSetup s;
  if (!bring_up(b, &s)) return 1;
  const uint32_t cr0 = hal_read32(s.smmu + reg::kCr0);
  hal_write32(s.smmu + reg::kCr0, cr0 & ~reg::cr0::kCmdqEn.mask32());
  wait_ack(reg::kCr0Ack, cr0 & ~reg::cr0::kCmdqEn.mask32(), s.smmu);
  hal_write64(s.smmu + reg::kCmdqBase, 0x4000'0000ull | reg::queue_base::kLog2Size.place(4));  // unmapped
  hal_write32(s.smmu + reg::kCmdqProd, 0);
  hal_write32(s.smmu + reg::kCmdqCons, 0);
  hal_write32(s.smmu + reg::kCr0, cr0 | reg::cr0::kCmdqEn.mask32());
  wait_ack(reg::kCr0Ack, cr0 | reg::cr0::kCmdqEn.mask32(), s.smmu);
  hal_write32(s.smmu + reg::kCmdqProd, 1);
  while (!((hal_read32(s.smmu + reg::kGerror) ^ hal_read32(s.smmu + reg::kGerrorn)) & reg::gerror::kCmdqErr.mask32()))
    hal_cpu_relax();
  g_abt_cons = hal_read32(s.smmu + reg::kCmdqCons);
  g_abt_gerror = hal_read32(s.smmu + reg::kGerror);
  return 0;
}
const hal_app fetch_abort = {"fetch_abort", "command queue in unmapped memory", fetch_abort_main, nullptr};

TEST(SmmuCmdq, FetchAbortIsCerrorAbt) {
  const TestRun t = run(scenario({{{"app", "fetch_abort"}, {"cores", {0}}}}), {&fetch_abort});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(reg::queue_cons::kErr.get(g_abt_cons), reg::cerror::kAbt);
  EXPECT_EQ(reg::queue_cons::kRd.get(g_abt_cons), 0u);  // CONS stays on the command it could not fetch
  EXPECT_TRUE(g_abt_gerror & reg::gerror::kCmdqErr.mask32());
  EXPECT_EQ(t.counter("smmu.cmdq.errors.CERROR_ABT"), 1u);
}

}  // namespace
}  // namespace smmu_vp::test

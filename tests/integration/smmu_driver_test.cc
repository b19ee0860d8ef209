// The bare-metal arm-smmu-v3 driver (sw/smmu) against the SMMU model: probe,
// reset in the Linux order, attach, invalidation, events, error recovery, and
// several cores sharing the command queue under the spinlock policy.
#include <gtest/gtest.h>

#include "drivers/dma/dma_engine.h"
#include "hal/hal.h"
#include "platform_fixture.h"
#include "smmu/arm_smmu.h"
#include "smmu_test_driver.h"

namespace smmu_vp::test {
namespace {

constexpr uint64_t kIova = 0x4000'0000;

smmu_device g_dev;
volatile uint32_t g_ready;
struct {
  int probe = -1, reset = -1;
  uint32_t copy = 99, stale = 99, after_tlbi = 99, aborted = 99, bypass = 99;
  uint64_t f_translation = 0, events_after_abort = 0;
  int bad_cmd = 0;
  int after_bad = -1;
  unsigned per_core_ok[4] = {};
} g;

uint32_t copy(struct dma_engine* dma, uint64_t src, uint64_t dst) {
  dma_engine_start(dma, 0, src, dst, 256, DMA_COMPLETE_POLL);
  dma_engine_wait_poll(dma, 0);
  return dma_engine_ack(dma, 0);
}

int driver_main(void) {
  const unsigned cpu = hal_cpu_id();
  struct hal_device_info dev;
  if (hal_device_find("dma0", &dev) != 0) return 1;
  if (cpu == 0) {
    g.probe = smmu_probe(&g_dev, hal_smmu().base);
    g.reset = smmu_reset(&g_dev);
    if (g.probe || g.reset) return 1;
    phys_addr_t buf;
    if (!hal_dma_alloc(4 * 4096, 4096, &buf)) return 1;
    uint64_t* leaf = nullptr;
    const uint64_t ttb = build_tables(kIova, buf, 4, &leaf);
    if (smmu_attach_s1(&g_dev, dev.stream_id, 1, ttb)) return 2;
    struct dma_engine dma;
    if (dma_engine_probe(&dma, "dma0") != 0) return 1;
    g.copy = copy(&dma, kIova, kIova + 0x1000);
    leaf[(kIova >> 12) & 511] = 0;  // unmap, not yet invalidated
    hal_barrier(HAL_BARRIER_DSB);
    g.stale = copy(&dma, kIova, kIova + 0x1000);
    if (smmu_tlbi_range(&g_dev, 1, kIova, 4096)) return 3;
    g.after_tlbi = copy(&dma, kIova, kIova + 0x1000);
    smmu_handle_events(&g_dev);
    g.f_translation = g_dev.stats.events_by_id[0x10];
    // Abort: no event (STE.Config = abort); bypass: physical addresses.
    smmu_attach_abort(&g_dev, dev.stream_id);
    g.aborted = copy(&dma, kIova + 0x1000, kIova + 0x2000);
    smmu_handle_events(&g_dev);
    g.events_after_abort = g_dev.stats.events;
    smmu_attach_bypass(&g_dev, dev.stream_id);
    g.bypass = copy(&dma, buf, buf + 0x2000);
    // An illegal command is skipped and the queue goes on.
    const uint64_t bad[1][2] = {{0xFF, 0}};
    g.bad_cmd = smmu_cmdq_issue(&g_dev, bad, 1, true);
    g.after_bad = smmu_tlbi_range(&g_dev, 1, kIova, 4096);
    hal_store32(&g_ready, 1);
  }
  while (!hal_load32(&g_ready)) hal_cpu_relax();
  // Every core invalidates through the one queue: nothing may be lost.
  for (unsigned i = 0; i < 25; ++i)
    if (smmu_tlbi_range(&g_dev, 1, kIova + (cpu * 64 + i) * 4096ull, 2 * 4096) == 0) ++g.per_core_ok[cpu];
  return 0;
}
const hal_app driver_app = {"smmu_driver_c", "the bare-metal driver", driver_main, nullptr};

TEST(SmmuDriver, BringUpAttachInvalidateAndShareTheQueue) {
  const TestRun t = run(scenario({{{"app", "smmu_driver_c"}, {"cores", {0, 1, 2, 3}}}}), {&driver_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(g.probe, 0);
  EXPECT_EQ(g.reset, 0);
  EXPECT_TRUE(g_dev.feat.s1 && g_dev.feat.msi && g_dev.feat.ril);
  EXPECT_EQ(g_dev.feat.sidsize, 16u);
  EXPECT_EQ(g.copy, DMA_ERR_NONE);
  EXPECT_EQ(g.stale, DMA_ERR_NONE);       // the TLB still had it
  EXPECT_EQ(g.after_tlbi, DMA_ERR_READ);  // gone after TLBI + SYNC
  EXPECT_EQ(g.f_translation, 1u);
  EXPECT_EQ(g.aborted, DMA_ERR_READ);
  EXPECT_EQ(g.events_after_abort, 1u);    // abort records nothing
  EXPECT_EQ(g.bypass, DMA_ERR_NONE);
  EXPECT_EQ(g.bad_cmd, -1);
  EXPECT_EQ(g.after_bad, 0);
  EXPECT_EQ(g_dev.stats.cmdq_errors, 1u);
  for (unsigned c = 0; c < 4; ++c) EXPECT_EQ(g.per_core_ok[c], 25u) << "cpu" << c;
  // Every command the driver inserted was executed, none lost: the illegal
  // one was replaced by a CMD_SYNC in its slot, so one more SYNC ran.
  EXPECT_EQ(t.counter("smmu.cmdq.errors.CERROR_ILL"), 1u);
  EXPECT_EQ(t.counter("smmu.cmdq.commands"), g_dev.stats.commands);
  EXPECT_EQ(t.counter("smmu.cmdq.syncs"), g_dev.stats.syncs + g_dev.stats.cmdq_errors);
}

}  // namespace
}  // namespace smmu_vp::test

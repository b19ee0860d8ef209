// The bare-metal arm-smmu-v3 driver (sw/drivers/smmu) against the SMMU model: probe,
// reset in the Linux order, attach, invalidation, events, error recovery, and
// several cores sharing the command queue under the spinlock policy.
#include <map>
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include "dma/dma_registers.h"
#include "drivers/dma/dma_engine.h"
#include "hal/hal.h"
#include "platform_fixture.h"
#include "drivers/smmu/arm_smmu.h"
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
  unsigned pending_before = 0, pending_after = 0;  // smmu_events_pending around smmu_handle_events
  bool overflow = true;
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
    g.pending_before = smmu_events_pending(&g_dev, &g.overflow);
    smmu_handle_events(&g_dev);
    g.pending_after = smmu_events_pending(&g_dev, nullptr);
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
  EXPECT_EQ(g.pending_before, 1u);  // the fault's record, until the driver consumed it
  EXPECT_EQ(g.pending_after, 0u);
  EXPECT_FALSE(g.overflow);
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

// ---- Policies: each must leave no stale translation behind.

struct PolicyOutcome {
  struct smmu_policy in_force {};
  uint64_t commands = 0;  // issued by the invalidation alone
  unsigned faults = 0, checked = 0;
  bool warm_ok = false;
} p;

constexpr unsigned kPages = 64;

int policy_main(void) {
  struct hal_device_info dev;
  if (hal_device_find("dma0", &dev) != 0 || smmu_probe(&g_dev, hal_smmu().base) || smmu_reset(&g_dev)) return 1;
  struct smmu_policy want = {};
  want.sync = static_cast<enum smmu_sync_policy>(hal_param("sync"));
  want.tlbi = static_cast<enum smmu_tlbi_policy>(hal_param("tlbi"));
  want.asid_threshold_pages = hal_param("asid_threshold");
  p.in_force = smmu_set_policy(&g_dev, want);
  phys_addr_t buf;
  if (!hal_dma_alloc((kPages + 1) * 4096, 4096, &buf)) return 1;
  uint64_t* leaf = nullptr;
  if (smmu_attach_s1(&g_dev, dev.stream_id, 1, build_tables(kIova, buf, kPages, &leaf))) return 2;
  struct dma_engine dma;
  if (dma_engine_probe(&dma, "dma0") != 0) return 1;
  p.warm_ok = true;
  for (unsigned i = 0; i < kPages; ++i)  // every page into the TLB
    p.warm_ok &= copy(&dma, kIova + i * 4096ull, kIova + i * 4096ull) == DMA_ERR_NONE;
  for (unsigned i = 0; i < kPages; ++i) leaf[((kIova >> 12) + i) & 511] = 0;
  hal_barrier(HAL_BARRIER_DSB);
  const uint64_t before = g_dev.stats.commands;
  if (smmu_tlbi_range(&g_dev, 1, kIova, kPages * 4096ull)) return 3;
  p.commands = g_dev.stats.commands - before;
  for (unsigned i = 0; i < kPages; i += 7, ++p.checked)
    p.faults += copy(&dma, kIova + i * 4096ull, kIova + i * 4096ull) == DMA_ERR_READ;
  return 0;
}
const hal_param_decl policy_params[] = {
    {"sync", 0, "smmu_sync_policy", 0, 0}, {"tlbi", 0, "smmu_tlbi_policy", 0, 0}, {"asid_threshold", 0, "pages", 0, 0}, {}};
const hal_app policy_app = {"smmu_policy", "invalidation under one driver policy", policy_main, policy_params};

TestRun run_policy(unsigned sync, unsigned tlbi, unsigned threshold) {
  return run(scenario({{{"app", "smmu_policy"},
                        {"cores", {0}},
                        {"params", {{"sync", sync}, {"tlbi", tlbi}, {"asid_threshold", threshold}}}}}),
             {&policy_app}, {"platform.cpu.event_stream_ns=0"});
}

void expect_clean(const TestRun& t) {
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_TRUE(p.warm_ok);
  EXPECT_EQ(p.faults, p.checked);  // no stale translation survived
}

TEST(SmmuDriverPolicy, PollAndOneTlbiPerGranule) {
  const TestRun t = run_policy(SMMU_SYNC_POLL, SMMU_TLBI_PER_GRANULE, 0);
  expect_clean(t);
  EXPECT_EQ(p.commands, kPages + 1u);  // 64 TLBIs and one SYNC
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_VA"), kPages);
}

TEST(SmmuDriverPolicy, SevAndRangeInvalidation) {
  const TestRun t = run_policy(SMMU_SYNC_SEV, SMMU_TLBI_RANGE, 0);
  expect_clean(t);
  EXPECT_EQ(p.in_force.sync, SMMU_SYNC_SEV);
  EXPECT_EQ(p.commands, 2u);  // 64 pages = (0 + 1) << 6: one range TLBI, one SYNC
  EXPECT_GT(t.counter("cpus.cpu0.wfe"), 0u);
}

TEST(SmmuDriverPolicy, MsiSyncOutsideTheLock) {
  const TestRun t = run_policy(SMMU_SYNC_MSI, SMMU_TLBI_RANGE, 0);
  expect_clean(t);
  EXPECT_EQ(p.in_force.sync, SMMU_SYNC_MSI);
  EXPECT_EQ(g_dev.sync_word[0], g_dev.sync_seq);  // the last SYNC wrote its number
}

TEST(SmmuDriverPolicy, AsidWideAboveTheThreshold) {
  const TestRun t = run_policy(SMMU_SYNC_POLL, SMMU_TLBI_PER_GRANULE, 16);
  expect_clean(t);
  EXPECT_EQ(p.commands, 2u);  // TLBI_NH_ASID and a SYNC
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_ASID"), 1u);
}

TEST(SmmuDriverPolicy, UnsupportedPoliciesFallBackOnV30) {
  // MSI completion and range TLBI on the v3.0 profile, which has neither.
  const TestRun t = run(scenario({{{"app", "smmu_policy"},
                                   {"cores", {0}},
                                   {"params", {{"sync", SMMU_SYNC_MSI}, {"tlbi", SMMU_TLBI_RANGE}}}}}),
                        {&policy_app}, {"platform.smmu.profile=\"v3.0\""});
  expect_clean(t);
  EXPECT_EQ(p.in_force.sync, SMMU_SYNC_POLL);
  EXPECT_EQ(p.in_force.tlbi, SMMU_TLBI_PER_GRANULE);
  EXPECT_EQ(p.commands, kPages + 1u);
}

// ---- sync_wait: Linux 4.13's CMD_SYNC wait (queue_poll_cons without SEV).
// Core 0 invalidates one page (a TLBI and a CMD_SYNC, each under the cmdq
// spinlock); core 1 waits until the SYNC has taken the lock, then queues for
// it. Reads of CONS at 0, 1, 3, 7, 15 us after the SYNC went in: the wait ends
// at the first of them after the SMMU completed the SYNC, and the lock is
// held until then.

struct SyncWaitOutcome {
  struct smmu_policy in_force {};
  uint64_t issue_ns = 0;      // smmu_tlbi_range, TLBI + SYNC, as core 0 saw it
  uint64_t lock_wait_ns = 0;  // core 1: from the SYNC taking the lock to core 1 getting it
  int err = -1;
} swo;
volatile uint32_t g_sw_go;

int sync_wait_main(void) {
  if (hal_cpu_id() == 1) {
    hal_poll32(&g_sw_go, ~0u, 0, HAL_POLL_NE, 0, nullptr);
    if (swo.in_force.cmdq != SMMU_CMDQ_SPINLOCK) return 0;  // no lock to queue for
    // The TLBI's ticket and the SYNC's: the SYNC now holds the lock.
    const uint32_t sync_ticket = hal_load32(&g_sw_go) + 1;
    hal_poll32(&g_dev.cmdq_lock.next, ~0u, sync_ticket + 1, HAL_POLL_EQ, 0, nullptr);
    const uint64_t seen = hal_now_ns();
    sw_spin_lock(&g_dev.cmdq_lock);
    swo.lock_wait_ns = hal_now_ns() - seen;
    sw_spin_unlock(&g_dev.cmdq_lock);
    return 0;
  }
  if (smmu_probe(&g_dev, hal_smmu().base) || smmu_reset(&g_dev)) return 1;
  struct smmu_policy want = smmu_policy_default();
  want.cmdq = static_cast<enum smmu_cmdq_policy>(hal_param("cmdq"));
  want.sync = static_cast<enum smmu_sync_policy>(hal_param("sync"));
  want.sync_wait = static_cast<enum smmu_sync_wait>(hal_param("sync_wait"));
  swo.in_force = smmu_set_policy(&g_dev, want);
  // The next ticket of the cmdq lock: the TLBI takes it, the SYNC the one
  // after. Not 0: bring-up's commands took the lock before.
  hal_store32(&g_sw_go, hal_load32(&g_dev.cmdq_lock.next));
  const uint64_t t0 = hal_now_ns();
  swo.err = smmu_tlbi_range(&g_dev, 1, kIova, 4096);
  swo.issue_ns = hal_now_ns() - t0;
  return 0;
}
const hal_param_decl sync_wait_params[] = {{"cmdq", 0, "smmu_cmdq_policy", 0, 0},
                                           {"sync", 0, "smmu_sync_policy", 0, 0},
                                           {"sync_wait", 0, "smmu_sync_wait", 0, 0},
                                           {}};
const hal_app sync_wait_app = {"smmu_sync_wait", "one TLBI + SYNC while another core queues for the lock",
                               sync_wait_main, sync_wait_params};

struct SyncWaitCase {
  const char* name;
  unsigned cmdq, sync, sync_wait;
  bool sev;                 // IDR0.SEV
  unsigned sync_ns;         // the SMMU's CMD_SYNC cost: when it completes
  uint64_t last_read_ns;    // 0: the wait ends when the SYNC completes; else the CONS read that ends it
  unsigned sync_wait_in_force;
};

void PrintTo(const SyncWaitCase& c, std::ostream* os) { *os << c.name; }

class SmmuDriverSyncWait : public ::testing::TestWithParam<SyncWaitCase> {};

TEST_P(SmmuDriverSyncWait, ConsIsReadAtTheBackoffTimes) {
  const SyncWaitCase& c = GetParam();
  const TestRun t = run(scenario({{{"app", "smmu_sync_wait"},
                                   {"cores", {0, 1}},
                                   {"params", {{"cmdq", c.cmdq}, {"sync", c.sync}, {"sync_wait", c.sync_wait}}}}}),
                        {&sync_wait_app},
                        {std::string("platform.smmu.features.sev=") + (c.sev ? "true" : "false"),
                         "platform.smmu.cmdq.sync_ns=" + std::to_string(c.sync_ns), "platform.cpu.event_stream_ns=0"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  ASSERT_EQ(swo.err, 0);
  EXPECT_EQ(swo.in_force.cmdq, c.cmdq);
  EXPECT_EQ(swo.in_force.sync, c.sev ? SMMU_SYNC_SEV : SMMU_SYNC_POLL);  // 4.13 asks for SEV; without it, polls
  EXPECT_EQ(swo.in_force.sync_wait, c.sync_wait_in_force);
  // The SMMU's view: PROD write to completion of every SYNC of the run.
  const Histogram* sync = t.histogram("smmu.cmdq.sync_latency_ns");
  ASSERT_NE(sync, nullptr);
  // The TLBI before the SYNC, the SYNC's insertion and a CONS read: what
  // the caller pays besides the wait itself.
  constexpr double kOverheadNs = 400;
  SCOPED_TRACE(::testing::Message() << "TLBI + SYNC " << swo.issue_ns << " ns, lock wait " << swo.lock_wait_ns
                                    << " ns, SYNC latency " << sync->min() << ".." << sync->max() << " ns");
  if (c.last_read_ns == 0) {
    // Relax or WFE: back as soon as the SYNC completed.
    EXPECT_LT(static_cast<double>(swo.issue_ns), sync->max() + kOverheadNs);
  } else {
    // The SYNC completed after the read before last (at (last + 1) / 2 - 1
    // us: 0, 1, 3, 7 ...) and before the last one, which ended the wait.
    const double before_last = static_cast<double>((c.last_read_ns + 1000) / 2 - 1000);
    EXPECT_GT(sync->max(), before_last);
    EXPECT_LT(sync->max(), static_cast<double>(c.last_read_ns));
    EXPECT_GE(swo.issue_ns, c.last_read_ns);
    EXPECT_LT(static_cast<double>(swo.issue_ns), static_cast<double>(c.last_read_ns) + kOverheadNs);
    // Core 1 waited for the lock until that read: the SYNC held it throughout.
    EXPECT_GE(static_cast<double>(swo.lock_wait_ns), static_cast<double>(c.last_read_ns) - kOverheadNs);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policies, SmmuDriverSyncWait,
    ::testing::Values(
        // Linux 4.13 without SEV: the SYNC is done within a few hundred ns,
        // found by the read at 1 us; slower SYNCs by the reads at 3, 7, 15 us.
        SyncWaitCase{"udelay_backoff_1us", 0, 1, 1, false, 10, 1000, 1},
        SyncWaitCase{"udelay_backoff_3us", 0, 1, 1, false, 1500, 3000, 1},
        SyncWaitCase{"udelay_backoff_7us", 0, 1, 1, false, 5000, 7000, 1},
        SyncWaitCase{"udelay_backoff_15us", 0, 1, 1, false, 10000, 15000, 1},
        // Today's wait: CONS read back to back, back when the SYNC is.
        SyncWaitCase{"relax", 0, 1, 0, false, 5000, 0, 0},
        // With SEV the 4.13 wait is WFE, woken by the SYNC's event.
        SyncWaitCase{"udelay_backoff_with_sev_waits_in_wfe", 0, 1, 1, true, 5000, 0, 1},
        // The lock-free queue has no such wait: the policy falls back.
        SyncWaitCase{"lockfree_falls_back_to_relax", 1, 0, 1, false, 10, 0, 0}),
    [](const ::testing::TestParamInfo<SyncWaitCase>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace smmu_vp::test

namespace smmu_vp::test {
namespace {

TEST(SmmuStressApp, EveryCoreInvalidatesThroughTheDriver) {
  const TestRun t = run(scenario({{{"app", "smmu_stress"},
                                   {"cores", {0, 1, 2}},
                                   {"params", {{"iterations", 30}, {"pages", 3}, {"sync", 2}, {"tlbi", 0}}}}}),
                        {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(t.counter("sw.smmu_stress.invalidations"), 90u);
  // 3 pages, one TLBI each: every one reached the SMMU.
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_VA"), 270u);
  const double* rate = t.stats().find_value("sw.smmu_stress.invalidations_per_s_total");
  ASSERT_NE(rate, nullptr);
  EXPECT_GT(*rate, 0.0);
}

// The driver policy is declared once: every built-in app that takes a policy
// parameter declares all six, with the driver's default, and the policy they
// build with their defaults is smmu_policy_default().
TEST(SmmuPolicyParams, EveryAppTakesTheDriversDefaults) {
  const smmu_policy want = smmu_policy_default();
  const std::map<std::string, uint64_t> defaults = {
      {"cmdq", want.cmdq}, {"sync", want.sync}, {"tlbi", want.tlbi}, {"sync_wait", want.sync_wait},
      {"asid_threshold", want.asid_threshold_pages}, {"elide", want.elide_back_to_back_sync ? 1u : 0u}};
  EXPECT_EQ(want.cmdq, SMMU_CMDQ_LOCKFREE);  // Linux v5.4's queue, as docs/driver.md says
  EXPECT_EQ(want.sync_wait, SMMU_SYNC_WAIT_RELAX);  // today's wait; the 4.13 backoff is opt-in
  unsigned apps_with_policy = 0;
  for (const hal_app* app : with_builtin({})) {
    std::map<std::string, uint64_t> got;
    for (const hal_param_decl* p = app->params; p && p->name; ++p)
      if (defaults.count(p->name)) got[p->name] = p->default_value;
    if (got.empty()) continue;
    ++apps_with_policy;
    EXPECT_EQ(got, defaults) << app->name;
  }
  // iommu_setup's five apps, smmu_stress and map_bench.
  EXPECT_GE(apps_with_policy, 7u);
}

}  // namespace
}  // namespace smmu_vp::test

// The driver's command-submission policies under several cores: every core
// maps its own pages, warms them into the TLB by DMA, removes them, and
// invalidates through the driver; a DMA right after the invalidation returns
// must fault (no SYNC may return before its TLBIs ran), and every command the
// driver counted must have reached the SMMU (none lost). Also: bring-up on
// each profile and table format, recovery from an illegal command under each
// policy, and the fallback when ECMDQ is absent.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dma/dma_registers.h"
#include "drivers/dma/dma_engine.h"
#include "hal/hal.h"
#include "platform_fixture.h"
#include "drivers/smmu/arm_smmu.h"
#include "smmu_test_driver.h"

namespace smmu_vp::test {
namespace {

constexpr uint64_t kIova = 0x4000'0000;
constexpr unsigned kCores = 4;
constexpr unsigned kRounds = 8;  // pages each core removes and invalidates

smmu_device g_dev;
volatile uint32_t g_ready, g_done;
uint64_t* g_leaf;
struct Outcome {
  struct smmu_policy in_force {};
  unsigned warm_ok[kCores] = {}, faulted[kCores] = {};
  int bad_cmd = 0, after_bad = -1;
  uint64_t events = 0, syncs_at_policy = 0;
} g;

uint32_t dma_read(struct dma_engine* dma, unsigned ch, uint64_t iova) {
  dma_engine_start(dma, ch, iova, iova, 64, DMA_COMPLETE_POLL);
  dma_engine_wait_poll(dma, ch);
  return dma_engine_ack(dma, ch);
}

int cmdq_policy_main(void) {
  const unsigned cpu = hal_cpu_id();
  struct hal_device_info info;
  if (hal_device_find("dma0", &info) != 0) return 1;
  if (cpu == 0) {
    if (smmu_probe(&g_dev, hal_smmu().base) || smmu_reset(&g_dev)) return 1;
    struct smmu_policy want = {};
    want.cmdq = static_cast<enum smmu_cmdq_policy>(hal_param("cmdq"));
    want.sync = static_cast<enum smmu_sync_policy>(hal_param("sync"));
    want.elide_back_to_back_sync = hal_param("elide") != 0;
    want.queued_spinlock = hal_param("spinlock") != 0;
    g.in_force = smmu_set_policy(&g_dev, want);
    g.syncs_at_policy = g_dev.stats.syncs;
    phys_addr_t buf;
    if (!hal_dma_alloc(kCores * kRounds * 4096, 4096, &buf)) return 1;
    if (smmu_attach_s1(&g_dev, info.stream_id, 1, build_tables(kIova, buf, kCores * kRounds, &g_leaf))) return 2;
    if (hal_param("inject_illegal")) {
      // An illegal command is skipped and the queue goes on.
      const uint64_t bad[1][2] = {{0xFF, 0}};
      g.bad_cmd = smmu_cmdq_issue(&g_dev, bad, 1, true);
      g.after_bad = smmu_tlbi_range(&g_dev, 1, kIova, 4096);
    }
    hal_store32(&g_ready, 1);
  }
  while (!hal_load32(&g_ready)) hal_cpu_relax();
  struct dma_engine dma;
  if (dma_engine_probe(&dma, "dma0") != 0) return 1;
  const unsigned ch = cpu;  // one DMA channel per core
  for (unsigned i = 0; i < kRounds; ++i) {
    const unsigned page = cpu * kRounds + i;
    const uint64_t iova = kIova + page * 4096ull;
    g.warm_ok[cpu] += dma_read(&dma, ch, iova) == DMA_ERR_NONE;
    g_leaf[((kIova >> 12) + page) & 511] = 0;
    hal_barrier(HAL_BARRIER_DSB);
    if (smmu_tlbi_range(&g_dev, 1, iova, 4096) != 0) return 3;
    g.faulted[cpu] += dma_read(&dma, ch, iova) == DMA_ERR_READ;
  }
  hal_fetch_add32(&g_done, 1);
  if (cpu == 0) {
    while (hal_load32(&g_done) != kCores) hal_cpu_relax();
    g.events = smmu_handle_events(&g_dev);
  }
  return 0;
}
const hal_param_decl cmdq_policy_params[] = {{"cmdq", 0, "smmu_cmdq_policy", 0, 0},
                                             {"sync", 0, "smmu_sync_policy", 0, 0},
                                             {"elide", 0, "elide back-to-back SYNCs", 0, 0},
                                             {"spinlock", 0, "1: the driver's locks queued", 0, 0},
                                             {"inject_illegal", 0, "issue an illegal command first", 0, 0},
                                             {}};
const hal_app cmdq_policy_app = {"smmu_cmdq_policy", "invalidation on every core under one queue policy",
                                 cmdq_policy_main, cmdq_policy_params};

struct Case {
  const char* name;
  unsigned cmdq, sync, elide;
  std::vector<std::string> overrides;
  bool queue_fills = false;  // the queue is small enough that inserters must wait for room
  bool queued = false;       // the driver's spinlocks queued (qspinlock) rather than ticket
};

TestRun run_case(const Case& c, unsigned inject = 0) {
  // The command-queue checker watches every run (docs/smmu.md).
  std::vector<std::string> o = {"platform.devices.dma0.channels=4", "platform.smmu.cmdq_check=true"};
  o.insert(o.end(), c.overrides.begin(), c.overrides.end());
  return run(scenario({{{"app", "smmu_cmdq_policy"},
                        {"cores", {0, 1, 2, 3}},
                        {"params",
                         {{"cmdq", c.cmdq}, {"sync", c.sync}, {"elide", c.elide}, {"spinlock", c.queued ? 1 : 0},
                          {"inject_illegal", inject}}}}}),
             {&cmdq_policy_app}, o);
}

// Commands the SMMU consumed, over the main queue and every ECMDQ.
uint64_t smmu_commands(const TestRun& t) {
  uint64_t n = t.counter("smmu.cmdq.commands");
  for (unsigned q = 0; q < 16; ++q) n += t.counter("smmu.ecmdq" + std::to_string(q) + ".commands");
  return n;
}
uint64_t smmu_syncs(const TestRun& t) {
  uint64_t n = t.counter("smmu.cmdq.syncs");
  for (unsigned q = 0; q < 16; ++q) n += t.counter("smmu.ecmdq" + std::to_string(q) + ".syncs");
  return n;
}

// What the command-queue checker found, over every queue.
uint64_t check_errors(const TestRun& t) {
  uint64_t n = t.counter("smmu.cmdq.check_errors");
  for (unsigned q = 0; q < 16; ++q) n += t.counter("smmu.ecmdq" + std::to_string(q) + ".check_errors");
  return n;
}

std::string check_reports(const TestRun& t) {
  std::string out;
  for (const std::string& r : t.platform->smmu()->cmdq_check_reports()) out += r + "; ";
  return out;
}

class SmmuDriverCmdq : public ::testing::TestWithParam<Case> {};

TEST_P(SmmuDriverCmdq, NoSyncReturnsEarlyAndNoCommandIsLost) {
  const Case& c = GetParam();
  const TestRun t = run_case(c);
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(g.in_force.cmdq, c.cmdq);
  EXPECT_EQ(g.in_force.sync, c.sync);
  EXPECT_EQ(g.in_force.queued_spinlock, c.queued);
  EXPECT_EQ(sw_spin_is_queued(&g_dev.cmdq_lock), c.queued);
  for (unsigned cpu = 0; cpu < kCores; ++cpu) {
    EXPECT_EQ(g.warm_ok[cpu], kRounds) << "cpu" << cpu;
    EXPECT_EQ(g.faulted[cpu], kRounds) << "cpu" << cpu << ": a translation survived its invalidation";
  }
  EXPECT_EQ(g.events, kCores * kRounds);  // one F_TRANSLATION per removed page
  EXPECT_EQ(smmu_commands(t), g_dev.stats.commands);
  EXPECT_EQ(smmu_syncs(t), g_dev.stats.syncs);
  EXPECT_EQ(t.counter("smmu.cmdq.errors.CERROR_ILL"), 0u);
  EXPECT_EQ(check_errors(t), 0u) << "the command-queue checker: " << check_reports(t);
  if (c.queue_fills) {
    EXPECT_GT(g_dev.stats.cmdq_full_waits, 0u);
  }
  if (c.elide) {
    // Every SYNC asked for after the policy took effect (the attach's and
    // one per invalidation) was either issued or elided.
    EXPECT_EQ(g_dev.stats.syncs_elided + g_dev.stats.syncs, g.syncs_at_policy + 1u + kCores * kRounds);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policies, SmmuDriverCmdq,
    ::testing::Values(Case{"SpinlockPoll", SMMU_CMDQ_SPINLOCK, SMMU_SYNC_POLL, 0, {}},
                      Case{"SpinlockSev", SMMU_CMDQ_SPINLOCK, SMMU_SYNC_SEV, 0, {}},
                      Case{"SpinlockMsiElide", SMMU_CMDQ_SPINLOCK, SMMU_SYNC_MSI, 1, {}},
                      // Linux 4.18 on: the same queue behind a queued spinlock.
                      Case{"QueuedSpinlockPoll", SMMU_CMDQ_SPINLOCK, SMMU_SYNC_POLL, 0, {}, false, true},
                      Case{"QueuedSpinlockMsiElide", SMMU_CMDQ_SPINLOCK, SMMU_SYNC_MSI, 1, {}, false, true},
                      Case{"LockfreePoll", SMMU_CMDQ_LOCKFREE, SMMU_SYNC_POLL, 0, {}},
                      Case{"LockfreeSev", SMMU_CMDQ_LOCKFREE, SMMU_SYNC_SEV, 0, {}},
                      Case{"LockfreeMsi", SMMU_CMDQ_LOCKFREE, SMMU_SYNC_MSI, 0, {}},
                      // A 4-entry queue: four cores keep it full, so the
                      // exclusive cons refresh and the wrap of the valid map run.
                      Case{"LockfreeMsiSmallQueue", SMMU_CMDQ_LOCKFREE, SMMU_SYNC_MSI, 0,
                           {"platform.smmu.features.cmdqs=2"},
                           true},
                      // John Garry's v2: one fetch-add claims the slots. The
                      // tightest ring it allows (two slots per core) and a
                      // slow SYNC make claims run past cons and wait for room.
                      Case{"LockfreeAddPoll", SMMU_CMDQ_LOCKFREE_ADD, SMMU_SYNC_POLL, 0, {}},
                      Case{"LockfreeAddMsi", SMMU_CMDQ_LOCKFREE_ADD, SMMU_SYNC_MSI, 0, {}},
                      Case{"LockfreeAddMsiSmallQueue", SMMU_CMDQ_LOCKFREE_ADD, SMMU_SYNC_MSI, 0,
                           {"platform.smmu.features.cmdqs=3", "platform.smmu.cmdq.sync_ns=3000"},
                           true},
                      Case{"EcmdqPoll", SMMU_CMDQ_ECMDQ, SMMU_SYNC_POLL, 0, {}},
                      Case{"EcmdqMsi", SMMU_CMDQ_ECMDQ, SMMU_SYNC_MSI, 0, {}},
                      // Two queues for four cores: pairs share a queue.
                      Case{"EcmdqSharedQueues", SMMU_CMDQ_ECMDQ, SMMU_SYNC_MSI, 0,
                           {"platform.smmu.features.ecmdq_log2_pages=0", "platform.smmu.features.ecmdq_log2_queues=1"}}),
    [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

TEST(SmmuDriverCmdqFallback, EcmdqAbsentFallsBackToLockfree) {
  const TestRun t = run_case(Case{"", SMMU_CMDQ_ECMDQ, SMMU_SYNC_MSI, 0, {"platform.smmu.profile=\"v3.0\""}});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_FALSE(g_dev.feat.ecmdq);
  EXPECT_EQ(g.in_force.cmdq, SMMU_CMDQ_LOCKFREE);
  EXPECT_EQ(g.in_force.sync, SMMU_SYNC_POLL);  // v3.0 has no MSI either
  for (unsigned cpu = 0; cpu < kCores; ++cpu) EXPECT_EQ(g.faulted[cpu], kRounds) << "cpu" << cpu;
  EXPECT_EQ(smmu_commands(t), g_dev.stats.commands);
}

TEST(SmmuDriverCmdqFallback, FetchAddNeedsTwoSlotsPerCore) {
  // A 4-entry ring for 4 cores: the fetch-add claims could lap cons twice.
  const TestRun t = run_case(Case{"", SMMU_CMDQ_LOCKFREE_ADD, SMMU_SYNC_MSI, 0, {"platform.smmu.features.cmdqs=2"}});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(g.in_force.cmdq, SMMU_CMDQ_LOCKFREE);
  for (unsigned cpu = 0; cpu < kCores; ++cpu) EXPECT_EQ(g.faulted[cpu], kRounds) << "cpu" << cpu;
}

TEST(SmmuDriverCmdqFallback, ElisionOnlyWithSpinlockAndMsi) {
  const TestRun t = run_case(Case{"", SMMU_CMDQ_LOCKFREE, SMMU_SYNC_MSI, 1, {}});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_FALSE(g.in_force.elide_back_to_back_sync);
  EXPECT_EQ(g_dev.stats.syncs_elided, 0u);
}

// Edges of the driver's command paths, on one core: a lone CMD_SYNC (the
// iotlb_sync of an empty gather, a fan-out's sync) under each insertion;
// with spinlock + MSI + elision, exactly the SYNC that directly follows
// another is elided; and a range that starts and ends inside pages gets a
// TLBI for each page it touches.
struct Edges {
  int lone_sync = -1;
  uint64_t elided = 0, issued = 0, unaligned_tlbis = 0;
} g_edges;

int edges_main(void) {
  if (smmu_probe(&g_dev, hal_smmu().base) || smmu_reset(&g_dev)) return 1;
  struct smmu_policy want = smmu_policy_default();
  want.cmdq = static_cast<enum smmu_cmdq_policy>(hal_param("cmdq"));
  want.sync = static_cast<enum smmu_sync_policy>(hal_param("sync"));
  want.elide_back_to_back_sync = hal_param("elide") != 0;
  g.in_force = smmu_set_policy(&g_dev, want);
  g_edges.lone_sync = smmu_sync(&g_dev);  // a SYNC alone
  const uint64_t elided0 = g_dev.stats.syncs_elided, issued0 = g_dev.stats.syncs;
  if (smmu_tlbi_range(&g_dev, 1, kIova, 4096)) return 2;  // TLBI + SYNC: never elided
  if (smmu_sync(&g_dev)) return 3;                          // right after a SYNC: elided when eliding
  if (smmu_tlbi_range(&g_dev, 1, kIova, 4096)) return 4;  // TLBI + SYNC again
  g_edges.elided = g_dev.stats.syncs_elided - elided0;
  g_edges.issued = g_dev.stats.syncs - issued0;
  uint64_t tlbis = 0;  // [kIova + 2 KiB, + 4 KiB): two pages
  if (smmu_tlbi_range_pgsize(&g_dev, 1, kIova + 2048, 4096, 4096, true, &tlbis)) return 5;
  g_edges.unaligned_tlbis = tlbis;
  return 0;
}
const hal_app edges = {"edges", "a lone SYNC, elision, an unaligned range", edges_main, cmdq_policy_params};

TestRun run_edges(unsigned cmdq, unsigned sync, unsigned elide) {
  return run(scenario({{{"app", "edges"}, {"cores", {0}}, {"params", {{"cmdq", cmdq}, {"sync", sync}, {"elide", elide}}}}}),
             {&edges}, {"platform.smmu.cmdq_check=true"});
}

TEST(SmmuDriverEdges, SpinlockMsiElidesOnlyTheSyncAfterASync) {
  const TestRun t = run_edges(SMMU_CMDQ_SPINLOCK, SMMU_SYNC_MSI, 1);
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_TRUE(g.in_force.elide_back_to_back_sync);
  EXPECT_EQ(g_edges.lone_sync, 0);
  EXPECT_EQ(g_edges.elided, 1u);
  EXPECT_EQ(g_edges.issued, 2u);
  EXPECT_EQ(g_edges.unaligned_tlbis, 2u);
}

TEST(SmmuDriverEdges, LockfreeCompletesALoneSync) {
  const TestRun t = run_edges(SMMU_CMDQ_LOCKFREE, SMMU_SYNC_MSI, 0);
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(g.in_force.cmdq, SMMU_CMDQ_LOCKFREE);
  EXPECT_EQ(g_edges.lone_sync, 0);
  EXPECT_EQ(g_edges.issued, 3u);
  EXPECT_EQ(check_errors(t), 0u) << check_reports(t);
}

TEST(SmmuDriverEdges, LockfreeAddCompletesALoneSync) {
  const TestRun t = run_edges(SMMU_CMDQ_LOCKFREE_ADD, SMMU_SYNC_POLL, 0);
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(g.in_force.cmdq, SMMU_CMDQ_LOCKFREE_ADD);
  EXPECT_EQ(g_edges.lone_sync, 0);
  EXPECT_EQ(g_edges.issued, 3u);
}

class SmmuDriverRecovery : public ::testing::TestWithParam<Case> {};

TEST_P(SmmuDriverRecovery, IllegalCommandIsSkipped) {
  const TestRun t = run_case(GetParam(), 1);
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(g.bad_cmd, -1);
  EXPECT_EQ(g.after_bad, 0);
  EXPECT_EQ(g_dev.stats.cmdq_errors, 1u);
  for (unsigned cpu = 0; cpu < kCores; ++cpu) EXPECT_EQ(g.faulted[cpu], kRounds) << "cpu" << cpu;
  uint64_t ill = t.counter("smmu.cmdq.errors.CERROR_ILL");
  for (unsigned q = 0; q < 16; ++q) ill += t.counter("smmu.ecmdq" + std::to_string(q) + ".errors.CERROR_ILL");
  EXPECT_EQ(ill, 1u);
}

INSTANTIATE_TEST_SUITE_P(Policies, SmmuDriverRecovery,
                         ::testing::Values(Case{"LockfreeAddMsi", SMMU_CMDQ_LOCKFREE_ADD, SMMU_SYNC_MSI, 0, {}},
                                           Case{"SpinlockMsi", SMMU_CMDQ_SPINLOCK, SMMU_SYNC_MSI, 0, {}},
                                           Case{"LockfreePoll", SMMU_CMDQ_LOCKFREE, SMMU_SYNC_POLL, 0, {}},
                                           Case{"LockfreeMsi", SMMU_CMDQ_LOCKFREE, SMMU_SYNC_MSI, 0, {}},
                                           Case{"EcmdqMsi", SMMU_CMDQ_ECMDQ, SMMU_SYNC_MSI, 0, {}}),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

// Bring-up on each profile and stream-table format: the v3.3 and v3.0
// profiles (SIDSIZE 16: a 2-level table), and a small SID space that takes
// a linear table.
class SmmuDriverBringUp : public ::testing::TestWithParam<Case> {};

TEST_P(SmmuDriverBringUp, TranslatesAndInvalidates) {
  const TestRun t = run_case(GetParam());
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  for (unsigned cpu = 0; cpu < kCores; ++cpu) {
    EXPECT_EQ(g.warm_ok[cpu], kRounds) << "cpu" << cpu;
    EXPECT_EQ(g.faulted[cpu], kRounds) << "cpu" << cpu;
  }
  EXPECT_EQ(g_dev.strtab_2lvl, g_dev.feat.sidsize > 8);
}

INSTANTIATE_TEST_SUITE_P(
    Profiles, SmmuDriverBringUp,
    ::testing::Values(Case{"V33TwoLevel", SMMU_CMDQ_SPINLOCK, SMMU_SYNC_POLL, 0, {}},
                      Case{"V30TwoLevel", SMMU_CMDQ_SPINLOCK, SMMU_SYNC_POLL, 0, {"platform.smmu.profile=\"v3.0\""}},
                      Case{"V33Linear", SMMU_CMDQ_SPINLOCK, SMMU_SYNC_POLL, 0,
                           {"platform.smmu.features.sidsize=6", "platform.smmu.features.two_level_strtab=false"}}),
    [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace smmu_vp::test

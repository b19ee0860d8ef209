// ECMDQ (SMMUv3.3): two cores each with their own command queue, the enable
// handshake, and an error on one queue that does not stop the other.
#include <array>

#include <gtest/gtest.h>

#include "hal/hal.h"
#include "platform_fixture.h"
#include "smmu/commands.h"
#include "smmu_test_driver.h"

namespace smmu_vp::test {
namespace {

constexpr unsigned kLog2 = 4;  // 16 commands per queue
constexpr unsigned kRounds = 20;

volatile uint32_t g_ready, g_q1_stopped, g_q0_went_on;
struct PerCore {
  bool enabled = false;
  unsigned completed = 0;
  uint32_t err_cons = 0;
  bool resumed = false;
} g_core[2];
uint32_t g_gerror;

// ECMDQ interface q: page q / 4, slot q % 4 (v3.3 profile: 4 queues a page).
phys_addr_t queue_regs(unsigned q) {
  return hal_smmu().base + reg::kEcmdqPagesOffset + (q / 4) * reg::kPageSize + (q % 4) * reg::ecmdq_queue_stride(2);
}

struct Ecmdq {
  phys_addr_t regs;
  uint64_t* slots;
  uint32_t prod = 0;
};

void publish(Ecmdq& q, const std::array<uint64_t, 2>& cmd) {
  uint64_t* s = q.slots + 2 * (q.prod & ((1u << kLog2) - 1));
  s[0] = cmd[0];
  s[1] = cmd[1];
  q.prod = (q.prod + 1) & ((2u << kLog2) - 1);
  hal_barrier(HAL_BARRIER_DSB);
  hal_write32(q.regs + reg::kEcmdqProd, reg::ecmdq_prod::kEn.mask32() | q.prod);
}

bool consumed(const Ecmdq& q) {
  return (hal_read32(q.regs + reg::kEcmdqCons) & reg::ecmdq_cons::kRd.mask32()) == q.prod;
}

int ecmdq_main(void) {
  const unsigned cpu = hal_cpu_id();
  if (cpu == 0) {
    phys_addr_t root;
    if (!hal_dma_alloc(4096, 4096, &root)) return 1;
    BringUp b;
    b.ttb = root;
    SmmuSetup s;
    if (!bring_up(b, &s)) return 1;
    hal_store32(&g_ready, 1);
  }
  while (!hal_load32(&g_ready)) hal_cpu_relax();

  // Enable this core's queue: base, CONS, then PROD.EN and wait for ENACK.
  Ecmdq q;
  phys_addr_t base;
  q.regs = queue_regs(cpu);
  q.slots = static_cast<uint64_t*>(hal_dma_alloc(16u << kLog2, 4096, &base));
  hal_write64(q.regs + reg::kEcmdqBase, base | reg::queue_base::kLog2Size.place(kLog2));
  hal_write32(q.regs + reg::kEcmdqCons, 0);
  hal_write32(q.regs + reg::kEcmdqProd, reg::ecmdq_prod::kEn.mask32());
  while (!(hal_read32(q.regs + reg::kEcmdqCons) & reg::ecmdq_cons::kEnAck.mask32())) hal_cpu_relax();
  g_core[cpu].enabled = true;

  // Both cores invalidate at once, each waiting for its own SYNC.
  for (unsigned i = 0; i < kRounds; ++i) {
    publish(q, smmu::cmd_tlbi_nh_va(1, 0, 0x4000'0000ull + (cpu * kRounds + i) * 4096, true));
    publish(q, smmu::cmd_sync(smmu::SyncCs::kNone));
    while (!consumed(q)) hal_cpu_relax();
    ++g_core[cpu].completed;
  }

  if (cpu == 1) {
    // An illegal command stops queue 1 only.
    publish(q, {0xFF, 0});
    uint32_t cons;
    while (!((cons = hal_read32(q.regs + reg::kEcmdqCons)) & reg::ecmdq_cons::kErr.mask32())) hal_cpu_relax();
    g_core[1].err_cons = cons;
    g_gerror = hal_read32(hal_smmu().base + reg::kGerror);
    hal_store32(&g_q1_stopped, 1);
    while (!hal_load32(&g_q0_went_on)) hal_cpu_relax();
    // Replace it with a SYNC, then acknowledge: PROD.ERRACK = CONS.ERR.
    const auto sync = smmu::cmd_sync(smmu::SyncCs::kNone);
    const uint32_t at = cons & ((1u << kLog2) - 1);
    q.slots[2 * at] = sync[0];
    q.slots[2 * at + 1] = sync[1];
    hal_barrier(HAL_BARRIER_DSB);
    hal_write32(q.regs + reg::kEcmdqProd, reg::ecmdq_prod::kEn.mask32() | reg::ecmdq_prod::kErrAck.mask32() | q.prod);
    while (!consumed(q)) hal_cpu_relax();
    g_core[1].resumed = true;
  } else {
    while (!hal_load32(&g_q1_stopped)) hal_cpu_relax();
    publish(q, smmu::cmd_tlbi_nh_asid(1, 0));
    publish(q, smmu::cmd_sync(smmu::SyncCs::kNone));
    while (!consumed(q)) hal_cpu_relax();
    g_core[0].resumed = true;  // went on while queue 1 was stopped
    hal_store32(&g_q0_went_on, 1);
  }
  return 0;
}
const hal_app ecmdq_app = {"ecmdq", "one ECMDQ per core", ecmdq_main, nullptr};

TEST(SmmuEcmdq, TwoCoresTwoQueuesAndAPerQueueError) {
  const TestRun t = run(scenario({{{"app", "ecmdq"}, {"cores", {0, 1}}}}), {&ecmdq_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  for (unsigned c = 0; c < 2; ++c) {
    EXPECT_TRUE(g_core[c].enabled);
    EXPECT_EQ(g_core[c].completed, kRounds);
    EXPECT_TRUE(g_core[c].resumed);
  }
  EXPECT_EQ(reg::ecmdq_cons::kErrReason.get(g_core[1].err_cons), reg::cerror::kIll);
  EXPECT_TRUE(g_gerror & reg::gerror::kCmdqpErr.mask32());
  EXPECT_EQ(t.counter("smmu.ecmdq0.syncs"), kRounds + 1);
  EXPECT_EQ(t.counter("smmu.ecmdq1.syncs"), kRounds + 1);
  EXPECT_EQ(t.counter("smmu.ecmdq1.errors.CERROR_ILL"), 1u);
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_VA"), 2 * kRounds);
}

}  // namespace
}  // namespace smmu_vp::test

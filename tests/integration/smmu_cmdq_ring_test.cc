// The command queue's ring at its edges (issue 37 item 3): a batch of
// commands published at once that wraps past the ring's end, fetched in two
// reads that each stop at the end, and a queue filled to exactly its size
// (PROD at CONS's index with the other wrap bit: full, not empty), every
// command executed and none refused.
#include <array>

#include <gtest/gtest.h>

#include "hal/hal.h"
#include "platform_fixture.h"
#include "smmu/commands.h"
#include "smmu_test_driver.h"

namespace smmu_vp::test {
namespace {

constexpr unsigned kLog2 = 3;  // eight slots
bool g_consumed[3];

// Writes a command at the software PROD without publishing it.
void put(SmmuSetup& s, uint64_t page) {
  const std::array<uint64_t, 2> cmd = smmu::cmd_tlbi_nh_va(1, 0, 0x4000'0000 + page * 4096, true);
  uint64_t* slot = s.cmdq + 2 * (s.cmdq_prod & ((1u << kLog2) - 1));
  slot[0] = cmd[0];
  slot[1] = cmd[1];
  s.cmdq_prod = (s.cmdq_prod + 1) & ((2u << kLog2) - 1);
}

// Makes everything put so far visible with one write of PROD.
bool publish_and_wait(SmmuSetup& s) {
  hal_barrier(HAL_BARRIER_DSB);
  hal_write32(s.smmu + reg::kCmdqProd, s.cmdq_prod);
  return wait_consumed(s);
}

int ring_main(void) {
  SmmuSetup s;
  if (!bring_up_for_commands(kLog2, &s)) return 1;
  uint64_t page = 0;
  for (int i = 0; i < 5; ++i) put(s, page++);  // slots 0-4
  g_consumed[0] = publish_and_wait(s);
  for (int i = 0; i < 6; ++i) put(s, page++);  // slots 5-7, then 0-2 on the next lap
  g_consumed[1] = publish_and_wait(s);
  for (int i = 0; i < 8; ++i) put(s, page++);  // slots 3-7, 0-2: PROD index 3 = CONS index 3, wrap bits differ
  g_consumed[2] = publish_and_wait(s);
  return 0;
}
const hal_app ring = {"ring", "command batches that wrap and fill the ring", ring_main, nullptr};

TEST(SmmuCmdqRing, ABatchThatWrapsAndAFullQueueAreEachConsumedWhole) {
  const TestRun t = run(scenario({{{"app", "ring"}, {"cores", {0}}}}), {&ring}, {"platform.smmu.cmdq.fetch_batch=8"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(g_consumed[i]) << "batch " << i << " stopped on a command error";
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_VA"), 5u + 6u + 8u);
  EXPECT_EQ(t.counter("smmu.cmdq.errors.CERROR_ILL"), 0u);
  // One read for the first batch; two for each of the others, split at the
  // ring's end (a read never runs past it).
  EXPECT_EQ(t.counter("smmu.cmdq.fetches"), 1u + 2u + 2u);
  // The full queue held all eight at once.
  EXPECT_EQ(t.histogram("smmu.cmdq.occupancy")->max(), 8.0);
}

}  // namespace
}  // namespace smmu_vp::test

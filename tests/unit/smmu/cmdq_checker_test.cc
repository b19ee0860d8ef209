// The command-queue checker (smmu/cmdq_checker.h) on its own: PROD moving
// backwards or past CONS plus the size, a slot consumed twice without being
// rewritten, and a correct producer that it leaves alone.
#include "smmu/cmdq_checker.h"

#include <gtest/gtest.h>

#include "fake_memory.h"

namespace smmu_vp::smmu {
namespace {

constexpr uint64_t kBase = 0x1000;
constexpr unsigned kLog2 = 2;  // four slots

struct Bench {
  test::FakeMemory mem{kBase, 4 * 16, 0};
  StatsRegistry stats;
  CmdqChecker check{"smmu.cmdq", mem, stats};

  // Software writes `cmd` to `slot`, as a driver's store would.
  void write(uint32_t slot, uint64_t cmd) {
    const uint64_t words[2] = {cmd, 0};
    Ps done;
    mem.write(kBase + slot * 16, words, 16, 0, &done);
  }
  // The SMMU fetches and consumes `slot`: what it is given to decode.
  uint64_t consume(uint32_t slot) {
    uint64_t words[2];
    Ps done;
    mem.read(kBase + slot * 16, words, 16, 0, &done);
    check.check(slot, 4, words);
    check.consumed(kBase + slot * 16);
    return words[0];
  }
};

QueueIndex q(uint32_t v) { return QueueIndex(kLog2, v); }

TEST(CmdqChecker, ACorrectProducerIsLeftAlone) {
  Bench b;
  for (uint32_t n = 0; n < 12; ++n) {  // three laps of the ring
    b.write(n % 4, 0x100 + n);
    b.check.prod_written(q(n), q(n + 1), q(n), "cpu0");
    EXPECT_EQ(b.consume(n % 4), 0x100 + n);
  }
  EXPECT_EQ(b.check.violations(), 0u);
  EXPECT_EQ(b.stats.find_counter("smmu.cmdq.check_errors"), nullptr);  // a clean run's statistics keep their shape
}

TEST(CmdqChecker, ASlotConsumedAgainWithoutANewCommandIsReportedAndGivesTheStaleCommand) {
  Bench b;
  b.write(0, 0x42);
  b.check.prod_written(q(0), q(1), q(0), "cpus.cpu3.run");
  EXPECT_EQ(b.consume(0), 0x42u);
  b.check.prod_written(q(1), q(5), q(1), "cpus.cpu3.run");  // a lap on, slot 0 never rewritten
  EXPECT_EQ(b.consume(0), 0x42u);  // what the hardware would read: the old command
  ASSERT_EQ(b.check.violations(), 1u);
  EXPECT_NE(b.check.reports()[0].find("smmu.cmdq: slot 0 consumed without a command written"), std::string::npos);
  EXPECT_NE(b.check.reports()[0].find("cpus.cpu3.run"), std::string::npos);
  EXPECT_EQ(b.stats.find_counter("smmu.cmdq.check_errors")->value(), 1u);
}

TEST(CmdqChecker, ProdBackwardsOrPastConsPlusTheSizeIsReported) {
  Bench b;
  b.check.prod_written(q(2), q(1), q(0), "cpu1");  // backwards
  b.check.prod_written(q(3), q(6), q(1), "cpu2");  // 2 used, 3 more: 5 in a queue of 4
  b.check.prod_written(q(1), q(5), q(1), "cpu2");  // exactly full: fine
  ASSERT_EQ(b.check.violations(), 2u);
  EXPECT_NE(b.check.reports()[0].find("cpu1 moved PROD backwards"), std::string::npos) << b.check.reports()[0];
  EXPECT_NE(b.check.reports()[1].find("past CONS 0x1 plus the queue's 4 entries"), std::string::npos)
      << b.check.reports()[1];
}

}  // namespace
}  // namespace smmu_vp::smmu

// hal_read_poll32 (sw/hal/hal.h): a core polling a register the SMMU can
// watch (CMDQ_CONS, an ECMDQ's CONS) sleeps until the SMMU reports a value
// that ends the poll, and resumes at the plain loop's read. The plain loop
// (platform.cpu.poll_sleep=false) must give the same results, all but the
// counts of reads and loads the sleeps left out. Both runs are of the same
// build, so this holds in a sanitized build too.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

using namespace cli_test;

namespace {

// The run's results without what differs by design: the wall clock and the
// counts of polls slept through.
nlohmann::json simulated(nlohmann::json stats, uint64_t* skipped_reads) {
  stats.erase("wallclock");
  *skipped_reads = 0;
  for (auto& [cpu, s] : stats["cpus"].items()) {
    if (!s.is_object()) continue;
    if (s.contains("poll_skipped_reads")) *skipped_reads += s["poll_skipped_reads"].get<uint64_t>();
    s.erase("poll_skipped_reads");
    s.erase("poll_skipped_loads");
  }
  return stats;
}

nlohmann::json run(const std::string& scenario, const std::string& sets, bool sleep, uint64_t* skipped_reads) {
  const fs::path out = temp_dir("poll-" + scenario + (sleep ? "-sleep" : "-loop"));
  const Cmd r = sh("run " + std::string(SMMU_VP_SOURCE_DIR) + "/platform/scenarios/" + scenario + ".json " + sets +
                   " --set platform.cpu.poll_sleep=" + (sleep ? "true" : "false") + " --quiet --out " + out.string());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  if (!fs::exists(out / "stats.json")) return {};
  return simulated(read_json(out / "stats.json"), skipped_reads);
}

// Runs `scenario` with `sets` asleep and as the plain loop, expects the same
// results, and returns the sleeping run's (null if a run failed) with the
// reads it slept through.
nlohmann::json expect_loops_results(const std::string& scenario, const std::string& sets, uint64_t* slept) {
  uint64_t looped = 0;
  const nlohmann::json sleeping = run(scenario, sets, true, slept);
  const nlohmann::json loop = run(scenario, sets, false, &looped);
  if (sleeping.is_null() || loop.is_null()) return {};
  const nlohmann::json patch = nlohmann::json::diff(loop, sleeping);
  EXPECT_TRUE(patch.empty()) << patch.size() << " values differ, first: " << patch.front().dump();
  EXPECT_EQ(looped, 0u);
  return sleeping;
}

uint64_t sum_over_cores(const nlohmann::json& stats, const char* counter) {
  uint64_t n = 0;
  for (const auto& [cpu, s] : stats["cpus"].items())
    if (s.is_object() && s.contains(counter)) n += s[counter].get<uint64_t>();
  return n;
}

// Four cores invalidating and waiting for a CMD_SYNC whose completion they
// poll through CONS, under each command-queue policy: 0 spinlock (the SYNC
// waited for under the lock), 1 lock-free (v5.4), 2 ECMDQs, two of them for
// the four cores (a queue of its own is polled read by read).
class RegisterPoll : public ::testing::TestWithParam<int> {};

TEST_P(RegisterPoll, SleepingGivesThePlainLoopsResults) {
  uint64_t slept = 0;
  std::string sets =
      "--set scenario.apps.0.params.sync=0 --set scenario.apps.0.params.cmdq=" + std::to_string(GetParam());
  if (GetParam() == 2)
    sets += " --set platform.smmu.features.ecmdq_log2_pages=0 --set platform.smmu.features.ecmdq_log2_queues=1";
  const nlohmann::json sleeping = expect_loops_results("smmu_stress", sets, &slept);
  ASSERT_FALSE(sleeping.is_null());
  // The sleeps happened: reads were left out, and counted as made.
  EXPECT_GT(slept, 1000u);
  EXPECT_GT(sum_over_cores(sleeping, "mmio_accesses"), slept);
}

// Sixteen cores receiving from the 100 Gbit/s NIC, each unmapping with a
// TLBI and a SYNC polled through CONS under the command-queue lock (seed001's
// sweep point strict-spinlock+poll), the NIC's interrupts coming in while
// cores sleep in their polls.
TEST(RegisterPoll, NicReceiveWithPolledSyncsGivesThePlainLoopsResults) {
  uint64_t slept = 0;
  const nlohmann::json sleeping =
      expect_loops_results("seed001_nic_100g",
                           "--set scenario.apps.0.params.unmap=0 --set scenario.apps.0.params.cmdq=0 "
                           "--set scenario.apps.0.params.sync=0 --set scenario.apps.0.params.elide=0",
                           &slept);
  ASSERT_FALSE(sleeping.is_null());
  EXPECT_GT(slept, 10000u);
  EXPECT_GT(sum_over_cores(sleeping, "irqs_taken"), 10u);
}

// One core filling a two-slot queue with TLBIs of 200 ns: it waits for room
// by polling CONS, which the consumer moves at its own time, ahead of the
// kernel's while the core sleeps; the core must see each move then and no
// earlier. (Woken at the kernel's time instead, it read CONS before the
// consumer's time and the results moved.)
TEST(RegisterPoll, ConsMovedAheadOfTheKernelIsSeenAtItsTime) {
  uint64_t slept = 0;
  const nlohmann::json sleeping =
      expect_loops_results("smmu_stress",
                           "--set platform.smmu.features.cmdqs=1 --set platform.smmu.cmdq.tlbi_ns=200 "
                           "--set platform.smmu.cmdq.decode_ns=0 --set scenario.apps.0.cores=[0] "
                           "--set scenario.apps.0.params.pages=16 --set scenario.apps.0.params.sync=0 "
                           "--set scenario.apps.0.params.cmdq=0",
                           &slept);
  ASSERT_FALSE(sleeping.is_null());
  EXPECT_GT(slept, 1000u);
  EXPECT_GT(sleeping["sw"]["smmu_stress"]["cmdq_full_waits"].get<double>(), 100.0);
}

std::string policy_name(const ::testing::TestParamInfo<int>& info) {
  const char* const kNames[] = {"spinlock", "lockfree", "shared_ecmdq"};
  return kNames[info.param];
}

INSTANTIATE_TEST_SUITE_P(CmdqPolicies, RegisterPoll, ::testing::Values(0, 1, 2), policy_name);

}  // namespace

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

// The first value that differs, or "".
std::string first_difference(const nlohmann::json& want, const nlohmann::json& got) {
  const nlohmann::json patch = nlohmann::json::diff(want, got);
  return patch.empty() ? "" : std::to_string(patch.size()) + " values differ, first: " + patch.front().dump();
}

// Four cores invalidating and waiting for a CMD_SYNC whose completion they
// poll through CONS, under each command-queue policy: 0 spinlock (the SYNC
// waited for under the lock), 1 lock-free (v5.4), 2 one ECMDQ per core.
class RegisterPoll : public ::testing::TestWithParam<int> {};

TEST_P(RegisterPoll, SleepingGivesThePlainLoopsResults) {
  const std::string sets = "--set scenario.apps.0.params.sync=0 --set scenario.apps.0.params.cmdq=" +
                           std::to_string(GetParam());
  uint64_t slept = 0, looped = 0;
  const nlohmann::json sleeping = run("smmu_stress", sets, true, &slept);
  const nlohmann::json loop = run("smmu_stress", sets, false, &looped);
  ASSERT_FALSE(sleeping.is_null());
  ASSERT_FALSE(loop.is_null());
  EXPECT_EQ(first_difference(loop, sleeping), "");
  // The sleeps happened: reads were left out, and counted as made.
  EXPECT_GT(slept, 1000u);
  EXPECT_EQ(looped, 0u);
  uint64_t mmio = 0;
  for (const auto& [cpu, s] : sleeping["cpus"].items())
    if (s.is_object() && s.contains("mmio_accesses")) mmio += s["mmio_accesses"].get<uint64_t>();
  EXPECT_GT(mmio, slept);
}

// Sixteen cores receiving from the 100 Gbit/s NIC, each unmapping with a
// TLBI and a SYNC polled through CONS under the command-queue lock (seed001's
// sweep point strict-spinlock+poll), the NIC's interrupts coming in while
// cores sleep in their polls.
TEST(RegisterPoll, NicReceiveWithPolledSyncsGivesThePlainLoopsResults) {
  const std::string sets =
      "--set scenario.apps.0.params.unmap=0 --set scenario.apps.0.params.cmdq=0 "
      "--set scenario.apps.0.params.sync=0 --set scenario.apps.0.params.elide=0";
  uint64_t slept = 0, looped = 0;
  const nlohmann::json sleeping = run("seed001_nic_100g", sets, true, &slept);
  const nlohmann::json loop = run("seed001_nic_100g", sets, false, &looped);
  ASSERT_FALSE(sleeping.is_null());
  ASSERT_FALSE(loop.is_null());
  EXPECT_EQ(first_difference(loop, sleeping), "");
  EXPECT_GT(slept, 10000u);
  uint64_t irqs = 0;
  for (const auto& [cpu, s] : sleeping["cpus"].items())
    if (s.is_object() && s.contains("irqs_taken")) irqs += s["irqs_taken"].get<uint64_t>();
  EXPECT_GT(irqs, 10u);
}

// One core filling a two-slot queue with TLBIs of 200 ns: it waits for room
// by polling CONS, which the consumer moves at its own time, ahead of the
// kernel's while the core sleeps; the core must see each move then and no
// earlier. (Woken at the kernel's time instead, it read CONS before the
// consumer's time and the results moved.)
TEST(RegisterPoll, ConsMovedAheadOfTheKernelIsSeenAtItsTime) {
  const std::string sets =
      "--set platform.smmu.features.cmdqs=1 --set platform.smmu.cmdq.tlbi_ns=200 "
      "--set platform.smmu.cmdq.decode_ns=0 --set scenario.apps.0.cores=[0] "
      "--set scenario.apps.0.params.pages=16 --set scenario.apps.0.params.sync=0 "
      "--set scenario.apps.0.params.cmdq=0";
  uint64_t slept = 0, looped = 0;
  const nlohmann::json sleeping = run("smmu_stress", sets, true, &slept);
  const nlohmann::json loop = run("smmu_stress", sets, false, &looped);
  ASSERT_FALSE(sleeping.is_null());
  ASSERT_FALSE(loop.is_null());
  EXPECT_EQ(first_difference(loop, sleeping), "");
  EXPECT_GT(slept, 1000u);
  EXPECT_GT(sleeping["sw"]["smmu_stress"]["cmdq_full_waits"].get<double>(), 100.0);
}

std::string policy_name(const ::testing::TestParamInfo<int>& info) {
  const char* const kNames[] = {"spinlock", "lockfree", "ecmdq"};
  return kNames[info.param];
}

INSTANTIATE_TEST_SUITE_P(CmdqPolicies, RegisterPoll, ::testing::Values(0, 1, 2), policy_name);

}  // namespace

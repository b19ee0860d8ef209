// The lock-free command queue under pressure (issue 37 item 1), run as a
// user runs smmu_stress, with the command-queue checker on
// (platform.smmu.cmdq_check, docs/smmu.md):
// - a queue small enough that the cores wait for room all the time (16
//   entries, 9-command insertions) once livelocked v5.4's shared lock: the
//   exclusive unlock dropped a waiting SYNC's count and its cmpxchg lost to
//   the next exclusive taker forever;
// - a queue that fills with batches of two sizes (127 pages: 64 + 63 and a
//   SYNC) makes a later owner ready before an earlier one: an owner that did
//   not wait for the previous one would move PROD backwards, which the
//   checker reports (tests/mutants/mutants.json, lockfree-owner-no-wait);
// - the fetch-add variant's pieces of a long list each wait for a SYNC.
#include "cli_support.h"

namespace cli_test {
namespace {

nlohmann::json stress(const fs::path& out, unsigned cmdq_log2, unsigned pages, const std::string& sync,
                      const std::string& cmdq = "lockfree") {
  const Cmd r = sh("run " + kScenarios + "smmu_stress.json --quiet --out " + out.string() +
                   " --set platform.smmu.cmdq_check=true --set platform.smmu.features.cmdqs=" + std::to_string(cmdq_log2) +
                   " --set scenario.apps.0.params.cmdq=" + cmdq + " --set scenario.apps.0.params.sync=" + sync +
                   " --set scenario.apps.0.params.pages=" + std::to_string(pages) +
                   " --set scenario.stop.max_time_us=20000");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return read_json(out / "stats.json");
}

uint64_t counter(const nlohmann::json& s, const char* a, const char* b) {
  return s.contains(a) && s[a].contains(b) ? s[a][b].get<uint64_t>() : 0;
}

TEST(CmdqStress, ASmallQueueFullAllTheTimeMakesProgress) {
  const fs::path d = temp_dir("cmdq-stress-small");
  const nlohmann::json s = stress(d / "out", 4, 8, "poll");
  EXPECT_EQ(s["run"]["status"], "completed");
  EXPECT_EQ(s["sw"]["smmu_stress"]["invalidations"].get<double>(), 4 * 200);  // every core's every one
  EXPECT_EQ(counter(s["smmu"], "cmdq", "check_errors"), 0u);
  fs::remove_all(d);
}

TEST(CmdqStress, OwnersOfUnequalBatchesPublishInOrder) {
  const fs::path d = temp_dir("cmdq-stress-order");
  const nlohmann::json s = stress(d / "out", 8, 127, "msi");
  EXPECT_EQ(s["run"]["status"], "completed");
  EXPECT_EQ(counter(s["smmu"], "cmdq", "check_errors"), 0u);
  EXPECT_EQ(counter(s["smmu"]["cmdq"], "errors", "CERROR_ILL"), 0u);
  fs::remove_all(d);
}

// The fetch-add variant splits a list longer than one CPU's share of the
// ring; each piece must end with a SYNC its CPU waits for, or a CPU holds two
// shares at once and the claims deadlock (32 entries, 9-command lists).
TEST(CmdqStress, FetchAddPiecesEachWaitForTheirSync) {
  const fs::path d = temp_dir("cmdq-stress-add");
  const nlohmann::json s = stress(d / "out", 5, 8, "poll", "lockfree_add");
  EXPECT_EQ(s["run"]["status"], "completed");
  EXPECT_EQ(s["sw"]["smmu_stress"]["invalidations"].get<double>(), 4 * 200);
  EXPECT_EQ(counter(s["smmu"], "cmdq", "check_errors"), 0u);
  fs::remove_all(d);
}

}  // namespace
}  // namespace cli_test

// The same-time order (models/common/tlm_time.h): two events due at the same
// picosecond resume in rank order, whatever else SystemC's timed-event heap
// holds. A shipped scenario is run with a process beside it that fills the
// heap with notifications it then cancels or moves (stale entries at random
// femtoseconds, as waits with a timeout ended by an event leave them), and
// must give its golden results (tests/golden/) exactly. Before ranks, a
// change in the heap's history alone swapped same-time ties and moved them.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sysc/kernel/sc_spawn.h>

#include "platform_fixture.h"

namespace smmu_vp::test {
namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// Timed notifications of events nobody waits for, most of them cancelled or
// moved before their time: entries that only reshape the kernel's heap.
void heap_noise() {
  std::vector<sc_core::sc_event> evs(48);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  const auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (;;) {
    for (auto& e : evs) e.notify(sc_core::sc_time::from_value(1 + next() % 40'000'000));  // up to 40 ns, any fs
    for (size_t i = 0; i < evs.size(); i += 2) evs[i].cancel();
    for (size_t i = 1; i < evs.size(); i += 4) evs[i].notify(sc_core::sc_time::from_value(1 + next() % 1'000'000));
    sc_core::wait(sc_core::sc_time::from_value(5'000'000 + next() % 10'000'000));  // 5-15 ns
  }
}

// A shipped scenario's results (stats.json without the wall clock), run
// in-process with `overrides`, and with heap_noise beside it if asked.
nlohmann::json run_shipped(const std::string& name, const std::vector<std::string>& overrides, bool noise) {
  const std::string dir = SMMU_VP_SOURCE_DIR "/platform/scenarios";
  auto cfg = config::build_run_config(read_json(dir + "/" + name + ".json"), dir, overrides, with_builtin({}));
  auto log = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  Platform p(cfg, nullptr, log);
  if (noise) sc_core::sc_spawn(&heap_noise, "heap_noise");
  const RunResult r = p.run();
  nlohmann::json got = p.results_json(r);
  got.erase("wallclock");
  return got;
}

// Empty when `got` is the golden result; else the count and the first change.
std::string moved(const nlohmann::json& want, const nlohmann::json& got) {
  const nlohmann::json patch = nlohmann::json::diff(want, got);
  return patch.empty() ? "" : std::to_string(patch.size()) + " values moved, first: " + patch.front().dump();
}

class SameTimeOrder : public ::testing::TestWithParam<std::string> {};

TEST_P(SameTimeOrder, ResultsDoNotDependOnWhatElseTheEventHeapHolds) {
  const std::string name = GetParam();
  const nlohmann::json want = read_json(SMMU_VP_SOURCE_DIR "/tests/golden/" + name + ".json");
  EXPECT_EQ(moved(want, run_shipped(name, {}, true)), "") << name;
}

// Two scenarios in which this noise moved results before ranks (seen with
// every rank set to 0: smmu_stress 20 values, trace_replay 65, from the cores'
// atomics on): cores contending for the command queue, and a trace player's
// channels beside the cores that map for it.
INSTANTIATE_TEST_SUITE_P(Shipped, SameTimeOrder, ::testing::Values("smmu_stress", "trace_replay"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// hal_poll's sleeping (platform.cpu.poll_sleep, on by default) makes each
// load at the plain loop's time, at the core's rank (docs/architecture.md,
// "Polling"): the plain loop must give the golden results too, all but the
// count of loads it did not skip. Three scenarios that moved before a poll
// woken later in a picosecond than its core's rank knew that picosecond's
// load was already made (dma_copy 26 values, nvme_features_sweep 57,
// seed003_lazy_gather 133).
class PollSleep : public ::testing::TestWithParam<std::string> {};

void erase_poll_skipped(nlohmann::json& stats) {
  for (auto& [cpu, s] : stats["cpus"].items())
    if (s.is_object()) {
      s.erase("poll_skipped_loads");
      s.erase("poll_skipped_reads");
    }
}

TEST_P(PollSleep, ThePlainLoopGivesTheSameResults) {
  const std::string name = GetParam();
  nlohmann::json want = read_json(SMMU_VP_SOURCE_DIR "/tests/golden/" + name + ".json");
  erase_poll_skipped(want);
  EXPECT_EQ(moved(want, run_shipped(name, {"platform.cpu.poll_sleep=false"}, false)), "") << name;
}

INSTANTIATE_TEST_SUITE_P(Shipped, PollSleep, ::testing::Values("dma_copy", "nvme_features_sweep", "seed003_lazy_gather",
                                                          "nic_features_sweep", "seed000_camera"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace smmu_vp::test

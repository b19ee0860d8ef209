// Golden results: every shipped scenario's base run, and the sweep points of
// tests/golden_points.json, must give the stats.json (outside the wall-clock
// section) kept in tests/golden/. A speed or
// refactoring change must leave them as they are; a change meant to move a
// simulated value regenerates them with scripts/update-golden.sh and says in
// its commit which values moved and why.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

using namespace cli_test;

namespace {

const fs::path kGolden = fs::path(SMMU_VP_SOURCE_DIR) / "tests" / "golden";

std::vector<std::string> golden_scenarios() {
  std::vector<std::string> v;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kGolden, ec))
    if (e.path().extension() == ".json") v.push_back(e.path().stem().string());
  std::sort(v.begin(), v.end());
  return v;
}

// Paths where `got` differs from `want` ("/smmu/tlb/hits: 12 -> 13"), at most `max`.
void diff(const nlohmann::json& want, const nlohmann::json& got, const std::string& path,
          std::vector<std::string>& out, size_t max) {
  if (out.size() >= max) return;
  if (want.is_object() && got.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key())) out.push_back(path + "/" + it.key() + ": gone");
      else diff(it.value(), got.at(it.key()), path + "/" + it.key(), out, max);
    }
    for (auto it = got.begin(); it != got.end(); ++it)
      if (!want.contains(it.key())) out.push_back(path + "/" + it.key() + ": new");
    return;
  }
  if (want != got) out.push_back(path + ": " + want.dump() + " -> " + got.dump());
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, SimulatedResultsAreUnchanged) {
  // The sanitizer build too: ASan's redzones move sw/'s statics, and the
  // cores' cache-line model keys lines by address, so the same results from
  // both builds show that no shared sw/ data shares a line the build chose
  // (sw/lib/compiler.h SW_CACHELINE_ALIGNED).
  const std::string name = GetParam();
  const fs::path out = temp_dir("golden-" + name);
  // A base run, or a sweep point (SCENARIO@LABEL, tests/golden_points.json).
  const Cmd r = shell("python3 " + std::string(SMMU_VP_SOURCE_DIR) + "/scripts/golden-point.py " + SMMU_VP_CLI + " '" +
                      name + "' " + out.string() + " 2>&1");
  ASSERT_TRUE(fs::exists(out / "stats.json")) << r.out;
  nlohmann::json got = read_json(out / "stats.json");
  got.erase("wallclock");
  // Every shipped scenario's results are physically possible (invariants.h).
  EXPECT_FALSE(got["run"].contains("invariant_violations")) << name << ": " << got["run"]["invariant_violations"].dump();
  const nlohmann::json want = read_json(kGolden / (name + ".json"));
  std::vector<std::string> diffs;
  diff(want, got, "", diffs, 20);
  std::string list;
  for (const auto& d : diffs) list += "  " + d + "\n";
  EXPECT_TRUE(diffs.empty()) << name << ": simulated results moved (first " << diffs.size() << "):\n"
                             << list << "If the change means to move them: scripts/update-golden.sh build " << name;
}

INSTANTIATE_TEST_SUITE_P(Shipped, Golden, ::testing::ValuesIn(golden_scenarios()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;  // a test name is letters, digits and _
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// Every point of every shipped sweep is physically possible (invariants.h):
// the golden runs above check only each sweep's base point.
std::vector<std::string> shipped_sweeps() {
  std::vector<std::string> v;
  for (const auto& e : fs::directory_iterator(fs::path(SMMU_VP_SOURCE_DIR) / "platform" / "scenarios"))
    if (read_json(e.path()).contains("sweep")) v.push_back(e.path().stem().string());
  std::sort(v.begin(), v.end());
  return v;
}

class SweepPoints : public ::testing::TestWithParam<std::string> {};

TEST_P(SweepPoints, EveryPointIsPhysicallyPossible) {
#ifdef SMMU_VP_SANITIZED
  GTEST_SKIP() << "the normal build checks the shipped results; a sanitized one would take minutes per sweep";
#endif
  const std::string name = GetParam();
  const fs::path out = temp_dir("sweep-points-" + name);
  const Cmd r = sh("sweep " + kScenarios + name + ".json --jobs 2 --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  unsigned points = 0;
  for (const auto& e : fs::directory_iterator(out)) {
    if (!fs::exists(e.path() / "stats.json")) continue;
    ++points;
    const nlohmann::json run = read_json(e.path() / "stats.json")["run"];
    EXPECT_FALSE(run.contains("invariant_violations"))
        << name << ", " << e.path().filename().string() << ": " << run["invariant_violations"].dump();
  }
  EXPECT_GT(points, 0u) << r.out;
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(Shipped, SweepPoints, ::testing::ValuesIn(shipped_sweeps()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

TEST(GoldenSet, EveryShippedScenarioWithAppsHasGoldenResults) {
  const auto have = golden_scenarios();
  for (const auto& e : fs::directory_iterator(fs::path(SMMU_VP_SOURCE_DIR) / "platform" / "scenarios")) {
    const nlohmann::json s = read_json(e.path());
    if (!s.contains("scenario") || !s["scenario"].contains("apps")) continue;
    const std::string name = e.path().stem().string();
    EXPECT_TRUE(std::find(have.begin(), have.end(), name) != have.end())
        << name << " has no tests/golden/" << name << ".json: scripts/update-golden.sh build " << name;
  }
  const nlohmann::json points = read_json(fs::path(SMMU_VP_SOURCE_DIR) / "tests" / "golden_points.json");
  for (auto it = points.begin(); it != points.end(); ++it) {
    if (it.key()[0] == '_') continue;
    EXPECT_TRUE(std::find(have.begin(), have.end(), it.key()) != have.end())
        << it.key() << " has no golden results: scripts/update-golden.sh build '" << it.key() << "'";
  }
}

}  // namespace

// What the command-line tests share: running the smmu-vp binary (SMMU_VP_CLI)
// as a user does, temporary directories, result files, sweep tables.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace cli_test {

namespace fs = std::filesystem;

struct Cmd {
  int exit_code;
  std::string out;  // stdout and stderr together
};

// Runs a command line with sh; `out` holds what it writes on stdout.
inline Cmd shell(const std::string& cmd) {
  Cmd r{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// Runs smmu-vp; `out` holds stdout and, unless `with_stderr` is false, stderr.
inline Cmd sh(const std::string& args, bool with_stderr = true) {
  return shell(std::string(SMMU_VP_CLI) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

inline fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("smmu-vp-cli-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

inline nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

inline std::string write_file(const fs::path& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir / name) << text;
  return (dir / name).string();
}

inline std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

// Whether some line of `out` starts with the words `cells`.
inline bool has_row(const std::string& out, const std::vector<std::string>& cells) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> w = words(line);
    if (w.size() >= cells.size() && std::equal(cells.begin(), cells.end(), w.begin())) return true;
  }
  return false;
}

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline const std::string kScenarios = std::string(SMMU_VP_SOURCE_DIR) + "/platform/scenarios/";

// A scenario with a sweep section: smmu_stress with a few iterations per
// core, so that each point runs in a few milliseconds.
inline std::string sweep_scenario(const fs::path& dir, const std::string& sweep) {
  return write_file(dir, "sweep.json", std::string(R"({"platform": ")") + SMMU_VP_SOURCE_DIR +
      R"(/platform/platforms/base.json", "scenario": {"apps": [{"app": "smmu_stress", "cores": [0],
         "params": {"iterations": 5}}]}, "sweep": )" + sweep + "}");
}

inline const std::string kTwoByTwo = R"({
  "title": "two by two",
  "axes": [
    {"name": "policy", "values": {"poll": {"scenario.apps.0.params.sync": 0},
                                  "msi": {"scenario.apps.0.params.sync": 2}}},
    {"name": "cores", "values": {"1": {"platform.cpu.count": 1, "scenario.apps.0.cores": [0]},
                                 "2": {"platform.cpu.count": 2, "scenario.apps.0.cores": [0, 1]}}}],
  "columns": [
    {"title": "invalidations", "stat": "sw.smmu_stress.invalidations"},
    {"title": "inv p50", "stat": "sw.smmu_stress.invalidation_ns", "field": "p50", "unit": "ns", "digits": 1},
    {"title": "syncs/inv", "ratio": ["sw.smmu_stress.syncs", "sw.smmu_stress.invalidations"], "digits": 3}]})";

// Runs a shipped sweep; returns each point's stats.json by its labels on
// `axes`, joined with '/' in that order (e.g. "lockfree/16").
inline std::map<std::string, nlohmann::json> sweep_stats(const std::string& scenario, const std::string& args,
                                                  const std::vector<std::string>& axes) {
  const fs::path d = temp_dir(scenario);
  const Cmd r = sh("sweep " + kScenarios + scenario + ".json " + args + " --out " + d.string());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  std::map<std::string, nlohmann::json> at;
  if (r.exit_code != 0) return at;
  const nlohmann::json sweep = read_json(d / "sweep.json");
  for (const auto& p : sweep["points"]) {
    EXPECT_EQ(p["status"], "ok") << p.dump();
    std::string key;
    for (const auto& axis : axes) key += (key.empty() ? "" : "/") + p["labels"][axis].get<std::string>();
    at[key] = read_json(d / p["dir"].get<std::string>() / "stats.json");
  }
  return at;
}

// The same for a one-axis sweep, each point's sw.<app> section.
inline std::map<std::string, nlohmann::json> sweep_app_stats(const std::string& scenario, const std::string& args,
                                                      const std::string& axis, const std::string& app) {
  std::map<std::string, nlohmann::json> at = sweep_stats(scenario, args, {axis});
  for (auto& [label, stats] : at) stats = stats["sw"][app];
  return at;
}

inline uint64_t u64(const nlohmann::json& stats, const std::vector<std::string>& path) {
  const nlohmann::json* j = &stats;
  for (const auto& k : path) {
    if (!j->contains(k)) return 0;
    j = &(*j)[k];
  }
  return j->get<uint64_t>();
}

}  // namespace cli_test

#include "cli/sweep.h"

#include "platform.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/sweep_results.h"
#include "cli/sweep_runner.h"
#include "config/schema.h"

namespace smmu_vp::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;
constexpr int kExitPointFailed = 3;
constexpr int kExitInterrupted = 130;

fs::path point_dir(const SweepArgs& a, const SweepPoint& pt) { return fs::path(a.out) / pt.dir_name; }

// Creates every point's directory and removes a stats.json an earlier sweep
// left, so a point can only be read from its own run.
void prepare_dirs(const SweepArgs& a, const std::vector<SweepPoint>& points) {
  for (const SweepPoint& pt : points) {
    std::error_code ec;
    fs::create_directories(point_dir(a, pt), ec);
    if (!ec) fs::remove(point_dir(a, pt) / "stats.json", ec);
    if (ec)
      throw std::runtime_error("cannot prepare output directory '" + point_dir(a, pt).string() + "': " + ec.message());
  }
}

std::vector<ChildSpec> child_specs(const SweepArgs& a, const std::string& exe, const std::vector<SweepPoint>& points) {
  std::vector<ChildSpec> specs;
  for (const SweepPoint& pt : points) {
    ChildSpec c;
    c.argv = {exe, "run", a.file};
    for (const std::string& s : pt.sets) c.argv.insert(c.argv.end(), {"--set", s});
    for (const std::string& s : a.sets) c.argv.insert(c.argv.end(), {"--set", s});
    c.argv.insert(c.argv.end(), {"--out", point_dir(a, pt).string(), "--quiet"});
    if (a.seed) c.argv.insert(c.argv.end(), {"--seed", std::to_string(*a.seed)});
    c.log_path = (point_dir(a, pt) / "run.log").string();
    specs.push_back(std::move(c));
  }
  return specs;
}

unsigned job_count(unsigned requested) {
  if (requested) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

// Sets `stop_signal` to the SIGINT/SIGTERM that interrupted the sweep, else 0.
std::vector<ChildOutcome> run_points(const SweepArgs& a, const LoadedSweep& plan, int& stop_signal) {
  const std::string exe = self_executable();
  const std::vector<ChildSpec> specs = child_specs(a, exe, plan.points);
  std::vector<ChildOutcome> outcomes(specs.size());
  size_t finished = 0;
  stop_signal = run_children(exe, specs, {job_count(a.jobs), a.point_timeout_s}, [&](size_t i, const ChildOutcome& o) {
    outcomes[i] = o;
    if (o.not_started) return;  // listed once at the end
    const std::string result =
        o.ok() ? fmt::format("ok {:.1f} s", o.wall_seconds)
               : fmt::format("{} with {} after {:.1f} s; output in {}/ (run.log)", o.status(), o.describe(),
                             o.wall_seconds, point_dir(a, plan.points[i]).string());
    std::cerr << fmt::format("[{}/{}] {}: {}\n", ++finished, specs.size(), plan.points[i].describe(plan.spec), result);
  });
  return outcomes;
}

std::vector<PointOutcome> point_outcomes(const std::vector<ChildOutcome>& outcomes) {
  std::vector<PointOutcome> out;
  for (const ChildOutcome& o : outcomes) {
    const bool unfinished = o.not_started || o.timed_out || o.interrupted;
    const auto kind = o.ok() ? PointOutcome::Kind::kOk
                             : unfinished ? PointOutcome::Kind::kUnfinished : PointOutcome::Kind::kFailed;
    out.push_back({kind, o.status(), o.describe(), o.wall_seconds});
  }
  return out;
}

ordered_json wallclock_json(const LoadedSweep& plan, const std::vector<ChildOutcome>& outcomes, double wall_seconds) {
  ordered_json times = ordered_json::object();
  for (size_t p = 0; p < plan.points.size(); ++p) times[plan.points[p].dir_name] = outcomes[p].wall_seconds;
  return {{"note", "host wall-clock figures: the only section that differs between identical sweeps"},
          {"elapsed_seconds", wall_seconds},
          {"points", times}};
}

}  // namespace

int run_sweep(const SweepArgs& a, const std::vector<const hal_app*>& apps) {
  const auto start = std::chrono::steady_clock::now();
  LoadedSweep plan;
  try {
    plan = load_sweep(a, apps);
    prepare_dirs(a, plan.points);
  } catch (const config::ConfigError& e) {
    std::cerr << "smmu-vp: " << a.file << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "smmu-vp: " << e.what() << "\n";
    return kExitBadInput;
  }

  int stop_signal = 0;
  const std::vector<ChildOutcome> outcomes = run_points(a, plan, stop_signal);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bool all_found = false;
  try {
    all_found = write_results(a, plan, point_outcomes(outcomes), wallclock_json(plan, outcomes, wall));
  } catch (const std::exception& e) {
    std::cerr << "smmu-vp: " << e.what() << "\n";
    return kExitBadInput;
  }
  const auto failed = std::count_if(outcomes.begin(), outcomes.end(), [](const ChildOutcome& o) { return !o.ok(); });
  std::string unfinished;
  for (size_t p = 0; p < outcomes.size(); ++p)
    if (outcomes[p].not_started || outcomes[p].interrupted || outcomes[p].timed_out)
      unfinished += fmt::format("  {}: {}\n", plan.points[p].describe(plan.spec), outcomes[p].describe());
  if (stop_signal)
    std::cerr << fmt::format("sweep: interrupted by {}; these points did not finish:\n{}",
                             signal_name(stop_signal), unfinished);
  else if (!unfinished.empty())
    std::cerr << "sweep: these points did not finish (--point-timeout):\n" << unfinished;
  std::cerr << fmt::format("sweep: {} points, {} failed, {:.1f} s wall; results in {}/ (sweep.csv, sweep.json, a directory per point)\n",
                           plan.points.size(), failed, wall, a.out);
  if (stop_signal) return kExitInterrupted;
  if (failed) return kExitPointFailed;
  return all_found ? kExitOk : kExitBadInput;
}

}  // namespace smmu_vp::cli

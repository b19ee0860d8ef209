#include "cli/sweep.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/sweep_runner.h"
#include "cli/sweep_spec.h"
#include "cli/sweep_table.h"
#include "config/run_config.h"

namespace smmu_vp::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;
constexpr int kExitPointFailed = 3;
constexpr int kExitInterrupted = 130;

struct Plan {
  SweepSpec spec;
  std::vector<SweepPoint> points;
  ordered_json section;  // the "sweep" object as written, echoed in sweep.json
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

template <typename Json>
Json parse(const std::string& text, const std::string& path) {
  return smmu_vp::config::parse_json_document<Json>(text, path);
}

// What a point's `run` applies: its axis values, then the user's --set, then --seed.
std::vector<std::string> run_sets(const SweepPoint& pt, const SweepArgs& a) {
  std::vector<std::string> sets = pt.sets;
  sets.insert(sets.end(), a.sets.begin(), a.sets.end());
  if (a.seed) sets.push_back("scenario.seed=" + std::to_string(*a.seed));
  return sets;
}

// Builds (so validates) every point's configuration before anything runs, so
// a bad override is one exit 2 naming the point rather than N failed runs.
void check_points(const Plan& plan, const json& base, const std::string& base_dir, const SweepArgs& a,
                  const std::vector<const hal_app*>& apps) {
  for (const SweepPoint& pt : plan.points) {
    try {
      config::build_run_config(base, base_dir, run_sets(pt, a), apps);
    } catch (const config::ConfigError& e) {
      throw config::ConfigError(e.path(), e.reason() + " (at sweep point " + pt.describe(plan.spec) + ")");
    }
  }
}

Plan load_plan(const SweepArgs& a, const std::vector<const hal_app*>& apps) {
  const std::string text = read_text(a.file);
  const auto doc = parse<ordered_json>(text, a.file);  // ordered: axis values keep file order
  Plan plan;
  plan.spec = parse_sweep_spec(doc);
  plan.section = doc.at("sweep");
  plan.points = expand_points(plan.spec);
  const fs::path dir = fs::path(a.file).parent_path();
  check_points(plan, parse<json>(text, a.file), dir.empty() ? "." : dir.string(), a, apps);
  return plan;
}

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
std::vector<ChildOutcome> run_points(const SweepArgs& a, const Plan& plan, int& stop_signal) {
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

std::vector<Cell> point_cells(const SweepSpec& spec, const fs::path& stats_path, const ChildOutcome& o) {
  std::vector<Cell> row(spec.columns.size());
  if (o.not_started || o.timed_out || o.interrupted) {
    for (Cell& c : row) c = {Cell::Kind::kUnfinished, 0, o.status()};
    return row;
  }
  if (!o.ok()) return row;  // every cell kFailed
  json stats;
  try {
    stats = parse<json>(read_text(stats_path.string()), stats_path.string());
  } catch (const std::exception& e) {
    for (Cell& c : row) c = {Cell::Kind::kMissing, 0, e.what()};
    return row;
  }
  for (size_t c = 0; c < spec.columns.size(); ++c) row[c] = column_cell(spec.columns[c], stats);
  return row;
}

std::vector<std::vector<Cell>> collect_cells(const SweepArgs& a, const Plan& plan,
                                             const std::vector<ChildOutcome>& outcomes) {
  std::vector<std::vector<Cell>> cells;
  for (size_t p = 0; p < plan.points.size(); ++p)
    cells.push_back(point_cells(plan.spec, point_dir(a, plan.points[p]) / "stats.json", outcomes[p]));
  return cells;
}

// Warns once per column about cells shown as "-". Returns false when some
// column's stat is in no point that ran (most likely a misspelt name).
bool report_missing(const SweepArgs& a, const Plan& plan, const std::vector<std::vector<Cell>>& cells) {
  bool all_found = true;
  for (size_t c = 0; c < plan.spec.columns.size(); ++c) {
    const std::string& title = plan.spec.columns[c].title;
    bool any_value = false, any_missing = false, warned = false;
    for (size_t p = 0; p < cells.size(); ++p) {
      const Cell& cell = cells[p][c];
      any_value = any_value || cell.kind == Cell::Kind::kValue;
      any_missing = any_missing || cell.kind == Cell::Kind::kMissing;
      if (warned || cell.problem.empty() || cell.kind == Cell::Kind::kUnfinished) continue;
      std::cerr << fmt::format("smmu-vp: warning: column \"{}\": {} (at {}, {}); shown as -\n", title, cell.problem,
                               plan.points[p].describe(plan.spec), (point_dir(a, plan.points[p]) / "stats.json").string());
      warned = true;
    }
    if (any_missing && !any_value) {
      std::string stats;
      for (const std::string& st : plan.spec.columns[c].stats) stats += (stats.empty() ? "\"" : "\", \"") + st;
      std::cerr << fmt::format("smmu-vp: {}: column \"{}\": no point that ran has a value for {}\"\n", a.file, title, stats);
      all_found = false;
    }
  }
  return all_found;
}

std::string render(const std::string& format, const Table& t, const std::string& title) {
  if (format == "csv") return render_csv(t);
  if (format == "markdown") return render_markdown(t);
  return render_text(t, title);
}

ordered_json point_json(const Plan& plan, size_t p, const ChildOutcome& o, const std::vector<Cell>& row) {
  const SweepPoint& pt = plan.points[p];
  ordered_json labels = ordered_json::object(), values = ordered_json::object();
  for (size_t i = 0; i < pt.labels.size(); ++i) labels[plan.spec.axes[i].name] = pt.labels[i];
  for (size_t c = 0; c < row.size(); ++c)
    values[plan.spec.columns[c].title] = row[c].kind == Cell::Kind::kValue ? ordered_json(row[c].value) : ordered_json();
  return ordered_json{{"labels", labels},
                      {"dir", pt.dir_name},
                      {"overrides", pt.overrides},
                      {"status", o.status()},
                      {"outcome", o.describe()},
                      {"values", values}};
}

// Everything but "wallclock" depends only on the inputs, as in stats.json.
ordered_json sweep_json(const SweepArgs& a, const Plan& plan, const std::vector<ChildOutcome>& outcomes,
                        const std::vector<std::vector<Cell>>& cells, double wall_seconds) {
  ordered_json points = ordered_json::array(), times = ordered_json::object();
  for (size_t p = 0; p < plan.points.size(); ++p) {
    points.push_back(point_json(plan, p, outcomes[p], cells[p]));
    times[plan.points[p].dir_name] = outcomes[p].wall_seconds;
  }
  return ordered_json{{"scenario", a.file},
                      {"sets", a.sets},
                      {"seed", a.seed ? ordered_json(*a.seed) : ordered_json()},
                      {"sweep", plan.section},
                      {"points", points},
                      {"wallclock", {{"note", "host wall-clock figures: the only section that differs between identical sweeps"},
                                     {"elapsed_seconds", wall_seconds},
                                     {"points", times}}}};
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

int run_sweep(const SweepArgs& a, const std::vector<const hal_app*>& apps) {
  const auto start = std::chrono::steady_clock::now();
  Plan plan;
  try {
    plan = load_plan(a, apps);
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
  const std::vector<std::vector<Cell>> cells = collect_cells(a, plan, outcomes);
  const bool all_found = report_missing(a, plan, cells);
  const Table table = make_table(plan.spec, plan.points, cells);
  std::cout << render(a.format, table, plan.spec.title) << std::flush;

  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  try {
    write_file(fs::path(a.out) / "sweep.csv", render_csv(table));
    write_file(fs::path(a.out) / "sweep.json", sweep_json(a, plan, outcomes, cells, wall).dump(2) + "\n");
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
                             stop_signal == SIGINT ? "SIGINT" : "SIGTERM", unfinished);
  else if (!unfinished.empty())
    std::cerr << "sweep: these points did not finish (--point-timeout):\n" << unfinished;
  std::cerr << fmt::format("sweep: {} points, {} failed, {:.1f} s wall; results in {}/ (sweep.csv, sweep.json, a directory per point)\n",
                           plan.points.size(), failed, wall, a.out);
  if (stop_signal) return kExitInterrupted;
  if (failed) return kExitPointFailed;
  return all_found ? kExitOk : kExitBadInput;
}

}  // namespace smmu_vp::cli

#include "cli/sweep_dist.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/sweep_results.h"
#include "cli/sweep_runner.h"
#include "config/run_config.h"

namespace smmu_vp::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;
using config::ConfigError;

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;
constexpr int kExitPointFailed = 3;

// What collect checks before it trusts a directory as a plan.
constexpr const char* kPlanKind = "smmu-vp sweep plan";
constexpr int kPlanVersion = 1;

// A point's files inside its directory: the job's input, and what the job
// line adds to what `run --out` writes.
constexpr const char* kJobScenario = "scenario.json";
constexpr const char* kExitStatus = "exit_status";

// One word for sh, whatever it holds (labels may contain spaces or quotes).
std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The job of one point as one sh line, runnable from any directory: it runs
// the point's own scenario.json and records the exit status next to the
// results, so collect can tell a failed point from one that never ran; the
// line's own status is the run's, so an engine's retry/resume sees failures.
std::string job_line(const std::string& exe, const fs::path& point_dir) {
  return fmt::format("cd {} || exit 2; rm -f {} stats.json; {} run {} --out . --quiet >run.log 2>&1; "
                     "s=$?; echo $s >{}; exit $s",
                     shell_quote(point_dir.string()), kExitStatus, shell_quote(exe), kJobScenario, kExitStatus);
}

// The plan directory must be new (or empty): a job list mixed with an older
// plan's results could be collected as this one's.
fs::path new_plan_dir(const std::string& out) {
  const fs::path dir = fs::absolute(out).lexically_normal();
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec))
    throw std::runtime_error("plan directory '" + dir.string() + "' is not empty: plan into a new directory");
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create plan directory '" + dir.string() + "': " + ec.message());
  return dir;
}

// Each point's configuration as `run` reads it back: every --set and the
// seed applied, defaults filled, relative file paths made absolute.
void write_point_jobs(const fs::path& dir, const LoadedSweep& sweep) {
  for (size_t p = 0; p < sweep.points.size(); ++p) {
    const fs::path pd = dir / sweep.points[p].dir_name;
    std::error_code ec;
    fs::create_directories(pd, ec);
    if (ec) throw std::runtime_error("cannot create '" + pd.string() + "': " + ec.message());
    const json cfg = config::anchor_paths(config::run_schema(), sweep.configs[p], sweep.base_dir);
    write_file((pd / kJobScenario).string(), cfg.dump(2) + "\n");
  }
}

ordered_json plan_json(const PlanArgs& a, const LoadedSweep& sweep, const std::vector<std::string>& lines) {
  ordered_json points = ordered_json::array();
  for (size_t p = 0; p < sweep.points.size(); ++p) {
    const SweepPoint& pt = sweep.points[p];
    ordered_json labels = ordered_json::object();
    for (size_t i = 0; i < pt.labels.size(); ++i) labels[sweep.spec.axes[i].name] = pt.labels[i];
    points.push_back({{"labels", labels}, {"dir", pt.dir_name}, {"overrides", pt.overrides}, {"job", lines[p]}});
  }
  return ordered_json{{"plan", kPlanKind},
                      {"version", kPlanVersion},
                      {"scenario", a.sweep.file},
                      {"sets", a.sweep.sets},
                      {"seed", a.sweep.seed ? ordered_json(*a.sweep.seed) : ordered_json()},
                      {"sweep", sweep.section},
                      {"points", points}};
}

std::string job_name(const std::string& file) { return "smmu-vp-" + fs::path(file).stem().string(); }

// One array task per point: task i runs line i + 1 of jobs.txt.
std::string sbatch_script(const PlanArgs& a, const fs::path& dir, size_t points) {
  const SlurmArgs& s = a.slurm;
  const std::string jobs = (dir / "jobs.txt").string();
  std::string out = "#!/bin/bash\n";
  out += fmt::format("# smmu-vp sweep plan of {}: one array task per point, task i runs line i+1 of jobs.txt.\n",
                     a.sweep.file);
  out += fmt::format("# Submit: sbatch {}   Then: smmu-vp sweep collect {}\n", (dir / "sweep.sbatch").string(),
                     dir.string());
  out += fmt::format("#SBATCH --job-name={}\n", job_name(a.sweep.file));
  out += fmt::format("#SBATCH --array=0-{}%{}\n", points - 1, s.concurrency);
  out += fmt::format("#SBATCH --output={}/%A_%a.out\n", (dir / "slurm").string());
  out += fmt::format("#SBATCH --ntasks=1\n#SBATCH --cpus-per-task={}\n", s.cpus_per_task);
  if (!s.time.empty()) out += "#SBATCH --time=" + s.time + "\n";
  if (!s.mem.empty()) out += "#SBATCH --mem=" + s.mem + "\n";
  if (!s.partition.empty()) out += "#SBATCH --partition=" + s.partition + "\n";
  for (const std::string& o : s.options) out += "#SBATCH " + o + "\n";
  out += "set -u\n";
  out += fmt::format("line=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" {})\n", shell_quote(jobs));
  out += fmt::format("[ -n \"$line\" ] || {{ echo \"no line $((SLURM_ARRAY_TASK_ID + 1)) in {}\" >&2; exit 2; }}\n", jobs);
  out += "exec bash -c \"$line\"\n";
  return out;
}

// #SBATCH lines are split on blanks, so the paths they hold must have none.
void check_slurm_args(const SlurmArgs& s, const fs::path& dir) {
  if (dir.string().find_first_of(" \t\n") != std::string::npos)
    throw std::runtime_error("--slurm: the plan directory '" + dir.string() + "' contains blanks, which #SBATCH --output cannot hold");
  for (const std::string& o : s.options)
    if (o.rfind("-", 0) != 0) throw std::runtime_error("--slurm-option \"" + o + "\": expected an sbatch option such as --qos=low");
}

void write_plan(const PlanArgs& a, const fs::path& dir, const LoadedSweep& sweep, const std::string& exe) {
  write_point_jobs(dir, sweep);
  std::vector<std::string> lines;
  std::string jobs;
  for (const SweepPoint& pt : sweep.points) {
    lines.push_back(job_line(exe, dir / pt.dir_name));
    jobs += lines.back() + "\n";
  }
  write_file((dir / "jobs.txt").string(), jobs);
  write_file((dir / "plan.json").string(), plan_json(a, sweep, lines).dump(2) + "\n");
  if (!a.slurm.enabled) return;
  std::error_code ec;
  fs::create_directories(dir / "slurm", ec);
  if (ec) throw std::runtime_error("cannot create '" + (dir / "slurm").string() + "': " + ec.message());
  write_file((dir / "sweep.sbatch").string(), sbatch_script(a, dir, sweep.points.size()));
}

void print_next_steps(const PlanArgs& a, const fs::path& dir, size_t points) {
  std::cout << fmt::format("planned {} points in {}/ (plan.json, jobs.txt{}, a directory per point)\n", points,
                           dir.string(), a.slurm.enabled ? ", sweep.sbatch" : "");
  std::cout << fmt::format("run the jobs, e.g.: parallel --will-cite --joblog {0}/joblog --resume -j 4 < {0}/jobs.txt\n",
                           dir.string());
  if (a.slurm.enabled) std::cout << fmt::format("   or on SLURM:     sbatch {}/sweep.sbatch\n", dir.string());
  std::cout << fmt::format("then: smmu-vp sweep collect {}\n", dir.string());
}

// ---- collect ----------------------------------------------------------------

const json& field(const json& obj, const char* key, const std::string& path) {
  if (!obj.is_object() || !obj.contains(key)) throw ConfigError(path + "/" + key, "required field is missing");
  return obj.at(key);
}

// The plan's inputs as the local runner would have had them, so sweep.json
// says the same.
SweepArgs plan_args(const ordered_json& plan, const CollectArgs& c) {
  SweepArgs a;
  a.out = c.dir;
  a.format = c.format;
  const json p = plan;  // field() reads the unordered form
  if (field(p, "plan", "") != kPlanKind) throw ConfigError("/plan", std::string("expected \"") + kPlanKind + "\"");
  if (field(p, "version", "") != kPlanVersion)
    throw ConfigError("/version", "this smmu-vp reads plan version " + std::to_string(kPlanVersion));
  const json& file = field(p, "scenario", ""), &sets = field(p, "sets", ""), &seed = field(p, "seed", "");
  if (!file.is_string()) throw ConfigError("/scenario", "expected a string");
  if (!sets.is_array() || !std::all_of(sets.begin(), sets.end(), [](const json& s) { return s.is_string(); }))
    throw ConfigError("/sets", "expected an array of strings");
  if (!seed.is_null() && !seed.is_number_unsigned()) throw ConfigError("/seed", "expected null or an unsigned integer");
  a.file = file.get<std::string>();
  a.sets = sets.get<std::vector<std::string>>();
  if (!seed.is_null()) a.seed = seed.get<uint64_t>();
  return a;
}

// The sweep the plan holds; its point list must be the one its section
// expands to (a hand-edited plan.json could otherwise mislabel results).
LoadedSweep plan_sweep_of(const ordered_json& plan) {
  LoadedSweep sweep;
  sweep.spec = parse_sweep_spec(plan);
  sweep.section = plan.at("sweep");
  sweep.points = expand_points(sweep.spec);
  const ordered_json& listed = plan.contains("points") ? plan.at("points") : ordered_json();
  if (!listed.is_array() || listed.size() != sweep.points.size())
    throw ConfigError("/points", fmt::format("expected an array of the sweep's {} points", sweep.points.size()));
  for (size_t p = 0; p < listed.size(); ++p) {
    const std::string path = "/points/" + std::to_string(p) + "/dir";
    const ordered_json& d = listed[p].is_object() && listed[p].contains("dir") ? listed[p].at("dir") : ordered_json();
    if (d != sweep.points[p].dir_name)
      throw ConfigError(path, "expected \"" + sweep.points[p].dir_name + "\", the sweep's point " + std::to_string(p + 1));
  }
  return sweep;
}

// A point's run time as its own stats.json records it (0 when unreadable).
double recorded_wall_seconds(const fs::path& stats) {
  try {
    const json s = json::parse(config::read_file(stats.string()));
    return s.at("wallclock").at("elapsed_seconds").get<double>();
  } catch (const std::exception&) {
    return 0;
  }
}

PointOutcome point_outcome(const fs::path& point_dir) {
  const fs::path status_file = point_dir / kExitStatus;
  const double wall = recorded_wall_seconds(point_dir / "stats.json");
  std::error_code ec;
  if (!fs::exists(status_file, ec))
    return {PointOutcome::Kind::kUnfinished, "missing",
            std::string("no ") + kExitStatus + ": not run, or still running", wall};
  std::string text = config::read_file(status_file.string());
  text.erase(text.find_last_not_of(" \n\r\t") + 1);
  const bool numeric = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos && text.size() < 4;
  if (!numeric) return {PointOutcome::Kind::kFailed, "failed", "unreadable " + std::string(kExitStatus) + " \"" + text + "\"", wall};
  if (text == "0") return {PointOutcome::Kind::kOk, "ok", "exit code 0", wall};
  return {PointOutcome::Kind::kFailed, "failed", "exit code " + text, wall};
}

ordered_json collected_wallclock(const LoadedSweep& sweep, const std::vector<PointOutcome>& outcomes) {
  ordered_json times = ordered_json::object();
  for (size_t p = 0; p < sweep.points.size(); ++p) times[sweep.points[p].dir_name] = outcomes[p].wall_seconds;
  return {{"note", "host wall-clock figures: the only section that differs between identical sweeps; collected "
                   "from a plan, so the whole sweep's elapsed time is not known, each point's is its stats.json's"},
          {"elapsed_seconds", nullptr},
          {"points", times}};
}

// Names every point that did not finish well, on stderr; returns how many.
size_t report_points(const CollectArgs& c, const LoadedSweep& sweep, const std::vector<PointOutcome>& outcomes) {
  size_t bad = 0;
  for (size_t p = 0; p < outcomes.size(); ++p) {
    if (outcomes[p].kind == PointOutcome::Kind::kOk) continue;
    ++bad;
    std::cerr << fmt::format("sweep collect: {}: {} ({}); in {}/\n", sweep.points[p].describe(sweep.spec),
                             outcomes[p].status, outcomes[p].outcome,
                             (fs::path(c.dir) / sweep.points[p].dir_name).string());
  }
  return bad;
}

}  // namespace

int plan_sweep(const PlanArgs& a, const std::vector<const hal_app*>& apps) {
  try {
    const LoadedSweep sweep = load_sweep(a.sweep, apps);
    const fs::path dir = fs::absolute(a.sweep.out).lexically_normal();
    if (a.slurm.enabled) check_slurm_args(a.slurm, dir);
    const std::string exe = a.exe.empty() ? self_executable() : fs::absolute(a.exe).lexically_normal().string();
    write_plan(a, new_plan_dir(a.sweep.out), sweep, exe);
    print_next_steps(a, dir, sweep.points.size());
  } catch (const ConfigError& e) {
    std::cerr << "smmu-vp: " << a.sweep.file << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "smmu-vp: " << e.what() << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

int collect_sweep(const CollectArgs& c) {
  const std::string plan_file = (fs::path(c.dir) / "plan.json").string();
  SweepArgs a;
  LoadedSweep sweep;
  try {
    const auto plan = config::parse_json_document<ordered_json>(config::read_file(plan_file), plan_file);
    a = plan_args(plan, c);
    sweep = plan_sweep_of(plan);
  } catch (const ConfigError& e) {
    std::cerr << "smmu-vp: " << plan_file << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "smmu-vp: " << e.what() << " (is " << c.dir << " a directory `smmu-vp sweep plan` wrote?)\n";
    return kExitBadInput;
  }
  std::vector<PointOutcome> outcomes;
  for (const SweepPoint& pt : sweep.points) outcomes.push_back(point_outcome(fs::path(c.dir) / pt.dir_name));
  bool all_found = false;
  try {
    all_found = write_results(a, sweep, outcomes, collected_wallclock(sweep, outcomes));
  } catch (const std::exception& e) {
    std::cerr << "smmu-vp: " << e.what() << "\n";
    return kExitBadInput;
  }
  const size_t bad = report_points(c, sweep, outcomes);
  std::cerr << fmt::format("sweep collect: {} points, {} failed or missing; results in {}/ (sweep.csv, sweep.json)\n",
                           sweep.points.size(), bad, c.dir);
  if (bad) return kExitPointFailed;
  return all_found ? kExitOk : kExitBadInput;
}

}  // namespace smmu_vp::cli

// smmu-vp command line: run a scenario, sweep one over axes of overrides (here,
// or planned as jobs for other engines and collected), list apps, print the
// config reference.
// Exit codes: 0 success, 1 internal error, 2 bad input (command line, config,
// firmware, output directory), 3 an app failed (sweep: a point failed),
// 4 time limit, 5 deadlock, 6 --strict found problems, 7 a program crashed,
// 8 hung (the watchdog fired), 130 interrupted (SIGINT/SIGTERM; sweep too).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <systemc>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "config/run_config.h"
#include "firmware_loader.h"
#include "dmatrace/dma_trace_recorder.h"
#include "output/summary.h"
#include "output/trace_writer.h"
#include "platform.h"
#include "apps/apps.h"
#include "common/tlm_time.h"
#include "cli/sweep.h"
#include "cli/sweep_dist.h"
#include "cli/trace_cmd.h"

#ifndef SMMU_VP_VERSION
#define SMMU_VP_VERSION "unknown"
#endif

namespace {

// A seed is an unsigned integer: "-1" must not wrap around to 2^64 - 1.
const CLI::Validator kNotNegative(
    [](std::string& v) { return v.rfind('-', 0) == 0 ? std::string("must not be negative (got " + v + ")") : std::string(); },
    "UINT");

// What is valid but rarely meant: said once, as a warning, before the run.
void warn_about(const smmu_vp::config::RunConfig& cfg, spdlog::logger& log) {
  if (!cfg.platform_given)
    log.warn("the scenario names no \"platform\": running the built-in defaults (no SMMU, no devices)");
  std::vector<bool> used(cfg.cpu.count, false);
  for (const auto& as : cfg.apps)
    for (unsigned c : as.cores) used[c] = true;
  std::string idle;
  unsigned n = 0;
  for (unsigned c = 0; c < cfg.cpu.count; ++c)
    if (!used[c]) {
      idle += (idle.empty() ? "" : ", ") + std::to_string(c);
      ++n;
    }
  // A cost class the defaults do not have is only used by code that names
  // it in hal_cost(): most likely a misspelt default.
  const auto defaults = smmu_vp::config::default_cost_table();
  for (const auto& [name, cycles] : cfg.costs)
    if (!defaults.count(name))
      log.warn("platform.cpu.costs.{} is not a built-in cost class: only code calling hal_cost(\"{}\") will use it",
               name, name);
  if (!cfg.apps.empty() && n)
    log.warn("{} no app and {} idle (platform.cpu.count = {})",
             n > 1 ? "cores " + idle + " run" : "core " + idle + " runs", n > 1 ? "stay" : "stays", cfg.cpu.count);
}

}  // namespace

namespace {

// SystemC prints its banner on stdout unless this is set before it starts;
// a static initialiser runs before SystemC's main().
const bool kQuietSystemC = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;

constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitProblems = 6;  // --strict and the run met hardware errors

struct RunArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::string out = "out";
  bool trace = false;
  std::string log_level = "info";
  std::optional<uint64_t> seed;
  std::string firmware;
  std::string record_trace;
  bool quiet = false;
  bool strict = false;
  double watchdog_s = 60;
};

std::vector<const hal_app*> builtin_apps() {
  std::vector<const hal_app*> v;
  for (unsigned i = 0; i < sw_app_count; ++i) v.push_back(sw_apps[i]);
  return v;
}

bool write_json(const std::filesystem::path& path, const nlohmann::json& j) {
  std::ofstream f(path);
  f << j.dump(2) << "\n";
  return static_cast<bool>(f);
}

int run(const RunArgs& a) {
  auto log = std::make_shared<spdlog::logger>("smmu-vp", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  log->set_pattern("[%^%l%$] %v");
  log->set_level(spdlog::level::from_str(a.log_level));

  std::unique_ptr<smmu_vp::FirmwareImage> fw;
  std::vector<const hal_app*> apps = builtin_apps();
  smmu_vp::config::RunConfig cfg;
  try {
    if (!a.firmware.empty()) {
      fw = std::make_unique<smmu_vp::FirmwareImage>(a.firmware);
      for (const hal_app* b : apps)
        if (std::string(b->name) == fw->app()->name)
          throw std::runtime_error("firmware '" + a.firmware + "' is named \"" + b->name + "\" like a built-in app; rename it");
      apps.push_back(fw->app());
    }
    std::vector<std::string> sets = a.sets;
    if (a.seed) sets.push_back("scenario.seed=" + std::to_string(*a.seed));
    cfg = smmu_vp::config::load_run_config(a.scenario, sets, apps);
    if (fw) {
      // The firmware runs on every core the scenario leaves free, unless the
      // scenario places it itself.
      bool placed = false;
      std::vector<bool> used(cfg.cpu.count, false);
      for (const auto& as : cfg.apps) {
        placed = placed || as.app == fw->app();
        for (unsigned c : as.cores) used[c] = true;
      }
      if (!placed) {
        smmu_vp::config::AppAssignment as;
        as.app = fw->app();
        for (unsigned c = 0; c < cfg.cpu.count; ++c)
          if (!used[c]) as.cores.push_back(c);
        for (const hal_param_decl* p = as.app->params; p && p->name; ++p) as.params[p->name] = p->default_value;
        if (as.cores.empty()) throw std::runtime_error("--firmware: every core already runs a scenario app");
        cfg.resolved["scenario"]["apps"].push_back({{"app", as.app->name}, {"cores", as.cores}, {"params", as.params}});
        cfg.apps.push_back(std::move(as));
      }
    }
  } catch (const smmu_vp::config::ConfigError& e) {
    std::cerr << "smmu-vp: " << a.scenario << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "smmu-vp: " << e.what() << "\n";
    return kExitBadInput;
  }

  const std::filesystem::path out(a.out);
  warn_about(cfg, *log);
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) {
    std::cerr << "smmu-vp: cannot create output directory '" << a.out << "': " << ec.message() << "\n";
    return kExitBadInput;
  }
  if (!write_json(out / "config.json", cfg.resolved)) {
    std::cerr << "smmu-vp: cannot write " << (out / "config.json") << "\n";
    return kExitBadInput;
  }

  std::unique_ptr<smmu_vp::TraceWriter> trace;
  if (a.trace) trace = std::make_unique<smmu_vp::TraceWriter>((out / "trace.json").string());
  else std::filesystem::remove(out / "trace.json", ec);  // an earlier run's timeline would not be this run's

  std::unique_ptr<smmu_vp::Platform> built;
  try {
    built = std::make_unique<smmu_vp::Platform>(cfg, trace.get(), log);
  } catch (const std::exception& e) {  // a device that cannot be built from its parameters
    std::cerr << "smmu-vp: " << a.scenario << ": " << e.what() << "\n";
    return kExitBadInput;
  }
  smmu_vp::Platform& platform = *built;
  platform.set_containment(a.watchdog_s);
  std::unique_ptr<smmu_vp::DmaTraceRecorder> recorder;
  if (!a.record_trace.empty()) {
    try {
      recorder = std::make_unique<smmu_vp::DmaTraceRecorder>(a.record_trace, cfg);
    } catch (const std::exception& e) {
      std::cerr << "smmu-vp: --record-trace: " << e.what() << "\n";
      return kExitBadInput;
    }
    platform.record_dma_trace(recorder.get());
  }
  auto progress = [&](const smmu_vp::Progress& p) {
    std::cerr << fmt::format("progress: {:.3f} ms simulated ({:.1f}% of the limit), {} core(s) running, {:.1f} s wall\n",
                             p.sim_ns / 1e6, 100.0 * p.sim_ns / p.limit_ns, p.cores_running, p.wall_seconds);
  };
  const smmu_vp::RunResult r = a.quiet ? platform.run() : platform.run(progress);
  // After a run stopped mid-step in the simulator itself, SystemC's teardown
  // is not safe to run: the results are written, then the process ends.
  auto finish = [&platform](int rc) {
    if (!platform.kernel_abandoned()) return rc;
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(rc);
  };
  if (trace) trace->close();
  if (recorder) {
    platform.record_dma_trace(nullptr);
    recorder->close();
  }
  if (!write_json(out / "stats.json", platform.results_json(r))) {
    std::cerr << "smmu-vp: cannot write " << (out / "stats.json") << "\n";
    return finish(kExitInternal);
  }
  smmu_vp::print_summary(std::cout, platform, r);
  std::cout << "results in " << out.string() << "/ (stats.json, config.json" << (a.trace ? ", trace.json" : "") << ")\n";
  if (recorder) std::cout << "trace: " << recorder->records() << " records in " << recorder->path() << "\n";
  if (recorder && !recorder->error().empty()) {
    std::cerr << "smmu-vp: --record-trace: " << recorder->error() << " (the trace is incomplete)\n";
    return finish(kExitInternal);
  }
  if (a.strict && r.exit_code() == 0 && !smmu_vp::run_problems(platform).empty()) {
    std::cerr << "smmu-vp: --strict: the run met hardware errors (see \"problems\" above)\n";
    return finish(kExitProblems);
  }
  return finish(r.exit_code());
}

void list_apps() {
  for (const hal_app* app : builtin_apps()) {
    std::cout << app->name << ": " << app->summary << "\n";
    for (const hal_param_decl* p = app->params; p && p->name; ++p)
      std::cout << fmt::format("    {:<20} default {:<10} {:<12} {}{}\n", p->name, p->default_value,
                               p->max ? fmt::format("0..{}", p->max) : std::string("any"), p->help,
                               p->names ? fmt::format(" Names: {}.", p->names) : std::string());
  }
}

// `sweep plan FILE --out DIR`: the sweep as one job per point (sweep_dist.h).
CLI::App* add_plan_command(CLI::App& sweep_cmd, smmu_vp::cli::PlanArgs& pa) {
  CLI::App* c = sweep_cmd.add_subcommand(
      "plan", "Write one self-contained job per point and a job list (jobs.txt) for any engine: GNU parallel, SLURM, ...");
  c->add_option("scenario", pa.sweep.file, "Scenario JSON file with a \"sweep\" section")->required()->check(CLI::ExistingFile);
  c->add_option("--out", pa.sweep.out, "Plan directory to create (new or empty): plan.json, jobs.txt, a directory per point")
      ->required();
  c->add_option("--set", pa.sweep.sets, "Override a config value at every point, after the point's own: dotted.path=value (repeatable)");
  c->add_option("--seed", pa.sweep.seed, "Seed of hal_random() at every point (overrides scenario.seed)")->check(kNotNegative);
  c->add_option("--exe", pa.exe, "The smmu-vp the jobs run, as the machines running them see it (default: this executable's absolute path)");
  c->add_flag("--slurm", pa.slurm.enabled, "Also write sweep.sbatch: a SLURM job array, one task per point");
  c->add_option("--slurm-concurrency", pa.slurm.concurrency, "Array tasks running at once (--array=0-N%C)")
      ->check(CLI::Range(1u, 100000u))->capture_default_str();
  c->add_option("--slurm-time", pa.slurm.time, "sbatch --time of each task, e.g. 00:10:00");
  c->add_option("--slurm-mem", pa.slurm.mem, "sbatch --mem of each task, e.g. 2G");
  c->add_option("--slurm-partition", pa.slurm.partition, "sbatch --partition");
  c->add_option("--slurm-cpus", pa.slurm.cpus_per_task, "sbatch --cpus-per-task (a point is one single-threaded process)")
      ->check(CLI::Range(1u, 4096u))->capture_default_str();
  c->add_option("--slurm-option", pa.slurm.options, "Another sbatch option for every task, e.g. --qos=low (repeatable)");
  return c;
}

// The first of `sweep`'s own options given on the command line ("" when
// none): with `plan`/`collect` it would be silently ignored.
std::string sweep_option_given(const CLI::App& sweep_cmd) {
  for (const CLI::Option* o : sweep_cmd.get_options())
    if (o->count() > 0) return o->get_name();
  return "";
}

}  // namespace

// SystemC's own main() calls sc_main with the command line.
int sc_main(int argc, char** argv) {
  (void)kQuietSystemC;
  smmu_vp::use_ranked_time();  // before any sc_time is made (common/tlm_time.h)
  // sc_stop() ends every run; SystemC need not announce it.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);

  CLI::App cli{"smmu-vp: SystemC/TLM-2.0 virtual platform for SMMUv3 performance work"};
  cli.set_version_flag("--version", std::string("smmu-vp ") + SMMU_VP_VERSION);
  cli.require_subcommand(1);

  RunArgs ra;
  CLI::App* run_cmd = cli.add_subcommand("run", "Run a scenario and write its results");
  run_cmd->add_option("scenario", ra.scenario, "Scenario JSON file (see platform/scenarios/)")->required()->check(CLI::ExistingFile);
  run_cmd->add_option("--set", ra.sets, "Override a config value: dotted.path=value (repeatable), e.g. platform.dram.read_latency_ns=100");
  run_cmd->add_option("--out", ra.out, "Directory for stats.json, config.json and trace.json")->capture_default_str();
  run_cmd->add_flag("--trace", ra.trace, "Write trace.json (Chrome/Perfetto JSON trace format)");
  run_cmd->add_option("--log-level", ra.log_level, "Log level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))->capture_default_str();
  run_cmd->add_option("--seed", ra.seed, "Seed of hal_random() (overrides scenario.seed)")
      ->check(kNotNegative);
  run_cmd->add_option("--firmware", ra.firmware, "Firmware .so exporting smmu_vp_firmware (docs/firmware.md)")->check(CLI::ExistingFile);
  run_cmd->add_option("--record-trace", ra.record_trace,
                      "Write the run's DMA-API calls, SMMU transactions, faults and commands to FILE in the smmu-vp trace format (traces/README.md; gzip when FILE ends in .gz)");
  run_cmd->add_flag("--quiet", ra.quiet, "No progress lines on stderr");
  run_cmd->add_option("--watchdog", ra.watchdog_s,
                      "Stop the run as hung (exit 8) when simulated time has not advanced for SECONDS of wall time "
                      "(a program looping without HAL calls); 0 disables")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  run_cmd->add_flag("--strict", ra.strict, "Fail the run (exit 6) when it met any hardware error the summary lists under problems");

  smmu_vp::cli::SweepArgs sa;
  CLI::App* sweep_cmd = cli.add_subcommand("sweep", "Run a scenario at every point of its \"sweep\" axes, a process per point, and tabulate the results");
  // Not required(): `sweep plan FILE` and `sweep collect DIR` take the place of `sweep FILE`.
  sweep_cmd->add_option("scenario", sa.file, "Scenario JSON file with a \"sweep\" section (e.g. platform/scenarios/smmu_stress_sweep.json)")
      ->check(CLI::ExistingFile);
  sweep_cmd->add_option("--set", sa.sets, "Override a config value at every point, after the point's own: dotted.path=value (repeatable)");
  sweep_cmd->add_option("--out", sa.out, "Directory for sweep.csv, sweep.json and one directory per point")->capture_default_str();
  sweep_cmd->add_option("--jobs,-j", sa.jobs, "Points run at once (default: one per hardware thread)")->check(CLI::Range(1u, 4096u));
  sweep_cmd->add_option("--seed", sa.seed, "Seed of hal_random() at every point (overrides scenario.seed)")
      ->check(kNotNegative);
  sweep_cmd->add_option("--point-timeout", sa.point_timeout_s,
                        "Stop a point that runs longer than SECONDS of wall time (SIGTERM, then SIGKILL) and report it "
                        "as \"timeout\"; 0: no limit")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  sweep_cmd->add_option("--format", sa.format, "Rendering of the table on stdout")
      ->check(CLI::IsMember({"table", "csv", "markdown"}))->capture_default_str();

  smmu_vp::cli::PlanArgs pa;
  CLI::App* plan_cmd = add_plan_command(*sweep_cmd, pa);
  smmu_vp::cli::CollectArgs ca;
  CLI::App* collect_cmd = sweep_cmd->add_subcommand(
      "collect", "Tabulate the finished points of a planned sweep, as `sweep` does; name the failed and missing ones");
  collect_cmd->add_option("dir", ca.dir, "The directory `sweep plan` wrote")->required()->check(CLI::ExistingDirectory);
  collect_cmd->add_option("--format", ca.format, "Rendering of the table on stdout")
      ->check(CLI::IsMember({"table", "csv", "markdown"}))->capture_default_str();
  sweep_cmd->require_subcommand(0, 1);

  CLI::App* trace_cmd = smmu_vp::cli::add_trace_command(cli);

  CLI::App* apps_cmd = cli.add_subcommand("apps", "List the built-in apps and their parameters");
  CLI::App* doc_cmd = cli.add_subcommand("config-reference", "Print the configuration reference (Markdown, as in docs/config.md)");

  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = cli.exit(e);
    return rc == 0 ? 0 : kExitBadInput;
  }

  try {
    if (*run_cmd) return run(ra);
    if (*sweep_cmd) {
      if (const std::string clash = sweep_option_given(*sweep_cmd); !clash.empty() && (*plan_cmd || *collect_cmd)) {
        const char* sub = *plan_cmd ? "plan" : "collect";
        std::cerr << "smmu-vp: sweep " << sub << ": " << clash << " before `" << sub << "` is an option of `sweep FILE`; "
                  << "the options of `sweep " << sub << "` come after it (see sweep " << sub << " --help)\n";
        return kExitBadInput;
      }
      if (*plan_cmd) return smmu_vp::cli::plan_sweep(pa, builtin_apps());
      if (*collect_cmd) return smmu_vp::cli::collect_sweep(ca);
      if (sa.file.empty()) {
        std::cerr << "smmu-vp: sweep: a scenario file is required (or `sweep plan FILE`, `sweep collect DIR`); see sweep --help\n";
        return kExitBadInput;
      }
      return smmu_vp::cli::run_sweep(sa, builtin_apps());
    }
    if (*trace_cmd) return smmu_vp::cli::run_trace_command(*trace_cmd);
    if (*apps_cmd) {
      list_apps();
      return 0;
    }
    if (*doc_cmd) {
      std::cout << smmu_vp::config::render_config_reference(builtin_apps());
      return 0;
    }
  } catch (const std::exception& e) {
    std::cerr << "smmu-vp: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
  return kExitInternal;
}

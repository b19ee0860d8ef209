// `smmu-vp run` (run_cmd.h): the scenario and the firmware loaded, the output
// directory prepared, the platform built and run, the results written. The
// options' values live in one RunArgs that the command's run shares with the
// parser.
#include "cli/run_cmd.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/sweep_runner.h"
#include "config/run_config.h"
#include "dmatrace/dma_trace_recorder.h"
#include "firmware_loader.h"
#include "hal/hal.h"
#include "output/output_lock.h"
#include "output/summary.h"
#include "output/trace_writer.h"
#include "platform.h"

namespace smmu_vp::cli {

namespace {

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

// What is valid but rarely meant: said once, as a warning, before the run.
void warn_about(const config::RunConfig& cfg, spdlog::logger& log) {
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
  const auto defaults = config::default_cost_table();
  for (const auto& [name, cycles] : cfg.costs)
    if (!defaults.count(name))
      log.warn("platform.cpu.costs.{} is not a built-in cost class: only code calling hal_cost(\"{}\") will use it",
               name, name);
  if (!cfg.apps.empty() && n)
    log.warn("{} no app and {} idle (platform.cpu.count = {})",
             n > 1 ? "cores " + idle + " run" : "core " + idle + " runs", n > 1 ? "stay" : "stays", cfg.cpu.count);
}

// Written beside its place and renamed over it only once complete, so that a
// full disk or a killed run never leaves a truncated file where the previous
// run's results were (issue 31).
bool write_json(const std::filesystem::path& path, const nlohmann::json& j) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream f(tmp);
    f << j.dump(2) << "\n";
    f.flush();
    if (!f) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::error_code renamed, removed;
  std::filesystem::rename(tmp, path, renamed);
  if (renamed) std::filesystem::remove(tmp, removed);
  return !renamed;
}

// The firmware runs on every core the scenario leaves free, unless the
// scenario places it itself.
void place_firmware(config::RunConfig& cfg, const hal_app* firmware) {
  bool placed = false;
  std::vector<bool> used(cfg.cpu.count, false);
  for (const auto& as : cfg.apps) {
    placed = placed || as.app == firmware;
    for (unsigned c : as.cores) used[c] = true;
  }
  if (placed) return;
  config::AppAssignment as;
  as.app = firmware;
  as.name = firmware->name;  // its results under sw.<name>.
  for (const auto& other : cfg.apps)
    if (other.name == as.name) as.name += "_firmware";  // a built-in app's name: kept apart
  for (unsigned c = 0; c < cfg.cpu.count; ++c)
    if (!used[c]) as.cores.push_back(c);
  for (const hal_param_decl* p = as.app->params; p && p->name; ++p) as.params[p->name] = p->default_value;
  if (as.cores.empty()) throw std::runtime_error("--firmware: every core already runs a scenario app");
  cfg.resolved["scenario"]["apps"].push_back(
      {{"app", as.app->name}, {"name", as.name}, {"cores", as.cores}, {"params", as.params}});
  cfg.apps.push_back(std::move(as));
}

// The firmware image (if any) into `fw`, the scenario with it into `cfg`.
// Returns 0, or kExitBadInput when either cannot be loaded (said on stderr).
int load(const RunArgs& a, std::unique_ptr<FirmwareImage>& fw, config::RunConfig& cfg) {
  std::vector<const hal_app*> apps = builtin_apps();
  try {
    if (!a.firmware.empty()) {
      fw = std::make_unique<FirmwareImage>(a.firmware);
      for (const hal_app* b : apps)
        if (std::string(b->name) == fw->app()->name)
          throw std::runtime_error("firmware '" + a.firmware + "' is named \"" + b->name + "\" like a built-in app; rename it");
      apps.push_back(fw->app());
    }
    std::vector<std::string> sets = a.sets;
    if (a.seed) sets.push_back("scenario.seed=" + std::to_string(*a.seed));
    cfg = config::load_run_config(a.scenario, sets, apps);
    if (fw) place_firmware(cfg, fw->app());
  } catch (const config::ConfigError& e) {
    std::cerr << "smmu-vp: " << a.scenario << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "smmu-vp: " << e.what() << "\n";
    return kExitBadInput;
  }
  return 0;
}

// A sweep's point dies with its sweep (cli/sweep_runner.h, kParentPidEnv):
// the kernel sends it SIGTERM, which ends the run as interrupted, with its
// results, when the sweep is gone, even killed outright.
void die_with_sweep() {
  const char* parent = std::getenv(kParentPidEnv);
  if (!parent) return;
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != static_cast<pid_t>(std::atol(parent))) ::raise(SIGTERM);  // gone before we asked
}

// The output directory, with the resolved configuration in config.json.
// Returns 0, or kExitBadInput (said on stderr).
int write_config(const RunArgs& a, const config::RunConfig& cfg) {
  const std::filesystem::path out(a.out);
  if (!write_json(out / "config.json", cfg.resolved)) {
    std::cerr << "smmu-vp: cannot write " << (out / "config.json") << "\n";
    return kExitBadInput;
  }
  return 0;
}

int run(const RunArgs& a) {
  auto log = std::make_shared<spdlog::logger>("smmu-vp", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  log->set_pattern("[%^%l%$] %v");
  log->set_level(spdlog::level::from_str(a.log_level));

  std::unique_ptr<FirmwareImage> fw;
  config::RunConfig cfg;
  die_with_sweep();
  if (const int rc = load(a, fw, cfg)) return rc;
  warn_about(cfg, *log);
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec) {
    std::cerr << "smmu-vp: cannot create output directory '" << a.out << "': " << ec.message() << "\n";
    return kExitBadInput;
  }
  const OutputLock lock(a.out);
  if (!lock.held()) {
    std::cerr << "smmu-vp: " << lock.error() << "\n";
    return kExitBadInput;
  }
  if (const int rc = write_config(a, cfg)) return rc;

  const std::filesystem::path out(a.out);
  ec.clear();
  std::unique_ptr<TraceWriter> trace;
  if (a.trace) trace = std::make_unique<TraceWriter>((out / "trace.json").string());
  else std::filesystem::remove(out / "trace.json", ec);  // an earlier run's timeline would not be this run's

  std::unique_ptr<Platform> built;
  try {
    built = std::make_unique<Platform>(cfg, trace.get(), log);
  } catch (const std::exception& e) {  // a device that cannot be built from its parameters
    std::cerr << "smmu-vp: " << a.scenario << ": " << e.what() << "\n";
    return kExitBadInput;
  }
  Platform& platform = *built;
  platform.set_containment(a.watchdog_s);
  std::unique_ptr<DmaTraceRecorder> recorder;
  if (!a.record_trace.empty() && cfg.smmu_count() > 1) {
    std::cerr << "smmu-vp: --record-trace: the platform has " << cfg.smmu_count()
              << " SMMU instances (platform.smmus), each with its own StreamIDs; a trace holds one StreamID space, so "
                 "record on a platform with one SMMU\n";
    return kExitBadInput;
  }
  if (!a.record_trace.empty()) {
    try {
      recorder = std::make_unique<DmaTraceRecorder>(a.record_trace, cfg);
    } catch (const std::exception& e) {
      std::cerr << "smmu-vp: --record-trace: " << e.what() << "\n";
      return kExitBadInput;
    }
    platform.record_dma_trace(recorder.get());
  }
  auto progress = [&](const Progress& p) {
    std::cerr << fmt::format("progress: {:.3f} ms simulated ({:.1f}% of the limit), {} core(s) running, {:.1f} s wall\n",
                             p.sim_ns / 1e6, 100.0 * p.sim_ns / p.limit_ns, p.cores_running, p.wall_seconds);
  };
  const RunResult r = a.quiet ? platform.run() : platform.run(progress);
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
  print_summary(std::cout, platform, r);
  std::cout << "results in " << out.string() << "/ (stats.json, config.json" << (a.trace ? ", trace.json" : "") << ")\n";
  if (recorder) std::cout << "trace: " << recorder->records() << " records in " << recorder->path() << "\n";
  if (recorder && !recorder->error().empty()) {
    std::cerr << "smmu-vp: --record-trace: " << recorder->error() << " (the trace is incomplete)\n";
    return finish(kExitInternal);
  }
  if (a.strict && r.exit_code() == 0 && !run_problems(platform).empty()) {
    std::cerr << "smmu-vp: --strict: the run met hardware errors (see \"problems\" above)\n";
    return finish(kExitProblems);
  }
  return finish(r.exit_code());
}

}  // namespace

Subcommand add_run_command(CLI::App& cli) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* c = cli.add_subcommand("run", "Run a scenario and write its results");
  c->add_option("scenario", a->scenario, "Scenario JSON file (see platform/scenarios/)")->required()->check(CLI::ExistingFile);
  c->add_option("--set", a->sets, "Override a config value: dotted.path=value (repeatable), e.g. platform.dram.read_latency_ns=100");
  c->add_option("--out", a->out, "Directory for stats.json, config.json and trace.json")->capture_default_str();
  c->add_flag("--trace", a->trace, "Write trace.json (Chrome/Perfetto JSON trace format)");
  c->add_option("--log-level", a->log_level, "Log level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))->capture_default_str();
  c->add_option("--seed", a->seed, "Seed of hal_random() (overrides scenario.seed)")
      ->check(not_negative());
  c->add_option("--firmware", a->firmware, "Firmware .so exporting smmu_vp_firmware (docs/firmware.md)")->check(CLI::ExistingFile);
  c->add_option("--record-trace", a->record_trace,
                "Write the run's DMA-API calls, SMMU transactions, faults and commands to FILE in the smmu-vp trace format (traces/README.md; gzip when FILE ends in .gz)");
  c->add_flag("--quiet", a->quiet, "No progress lines on stderr");
  c->add_option("--watchdog", a->watchdog_s,
                "Stop the run as hung (exit 8) when simulated time has not advanced for SECONDS of wall time "
                "(a program looping without HAL calls); 0 disables")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  c->add_flag("--strict", a->strict, "Fail the run (exit 6) when it met any hardware error the summary lists under problems");
  return {c, [a] { return run(*a); }};
}

}  // namespace smmu_vp::cli

// `smmu-vp sweep`, `sweep plan` and `sweep collect` (sweep_cmd.h): their
// options, and which of them runs. The options' values live in one
// SweepOptions that the command's run shares with the parser.
#include "cli/sweep_cmd.h"

#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/sweep.h"
#include "cli/sweep_dist.h"

namespace smmu_vp::cli {

namespace {

struct SweepOptions {
  SweepArgs sweep;
  PlanArgs plan;
  CollectArgs collect;
};

// `sweep FILE`'s own options.
void add_sweep_options(CLI::App& c, SweepArgs& sa) {
  // Not required(): `sweep plan FILE` and `sweep collect DIR` take the place of `sweep FILE`.
  c.add_option("scenario", sa.file, "Scenario JSON file with a \"sweep\" section (e.g. platform/scenarios/smmu_stress_sweep.json)")
      ->check(CLI::ExistingFile);
  c.add_option("--set", sa.sets, "Override a config value at every point, after the point's own: dotted.path=value (repeatable)");
  c.add_option("--out", sa.out, "Directory for sweep.csv, sweep.json and one directory per point")->capture_default_str();
  c.add_option("--jobs,-j", sa.jobs, "Points run at once (default: one per hardware thread)")->check(CLI::Range(1u, 4096u));
  c.add_option("--seed", sa.seed, "Seed of hal_random() at every point (overrides scenario.seed)")
      ->check(not_negative());
  c.add_option("--point-timeout", sa.point_timeout_s,
               "Stop a point that runs longer than SECONDS of wall time (SIGTERM, then SIGKILL) and report it "
               "as \"timeout\"; 0: no limit")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  c.add_option("--format", sa.format, "Rendering of the table on stdout")
      ->check(CLI::IsMember({"table", "csv", "markdown"}))->capture_default_str();
}

// `sweep plan FILE --out DIR`: the sweep as one job per point (sweep_dist.h).
CLI::App* add_plan_command(CLI::App& sweep, PlanArgs& pa) {
  CLI::App* c = sweep.add_subcommand(
      "plan", "Write one self-contained job per point and a job list (jobs.txt) for any engine: GNU parallel, SLURM, ...");
  c->add_option("scenario", pa.sweep.file, "Scenario JSON file with a \"sweep\" section")->required()->check(CLI::ExistingFile);
  c->add_option("--out", pa.sweep.out, "Plan directory to create (new or empty): plan.json, jobs.txt, a directory per point")
      ->required();
  c->add_option("--set", pa.sweep.sets, "Override a config value at every point, after the point's own: dotted.path=value (repeatable)");
  c->add_option("--seed", pa.sweep.seed, "Seed of hal_random() at every point (overrides scenario.seed)")->check(not_negative());
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

// `sweep collect DIR`: the table of a planned sweep's finished points (sweep_dist.h).
CLI::App* add_collect_command(CLI::App& sweep, CollectArgs& ca) {
  CLI::App* c = sweep.add_subcommand(
      "collect", "Tabulate the finished points of a planned sweep, as `sweep` does; name the failed and missing ones");
  c->add_option("dir", ca.dir, "The directory `sweep plan` wrote")->required()->check(CLI::ExistingDirectory);
  c->add_option("--format", ca.format, "Rendering of the table on stdout")
      ->check(CLI::IsMember({"table", "csv", "markdown"}))->capture_default_str();
  return c;
}

// The first of `sweep`'s own options given on the command line ("" when
// none): with `plan`/`collect` it would be silently ignored.
std::string sweep_option_given(const CLI::App& sweep) {
  for (const CLI::Option* o : sweep.get_options())
    if (o->count() > 0) return o->get_name();
  return "";
}

int run_sweep_command(const CLI::App& sweep, const CLI::App& plan, const CLI::App& collect, const SweepOptions& o) {
  if (const std::string clash = sweep_option_given(sweep); !clash.empty() && (plan.parsed() || collect.parsed())) {
    const char* sub = plan.parsed() ? "plan" : "collect";
    std::cerr << "smmu-vp: sweep " << sub << ": " << clash << " before `" << sub << "` is an option of `sweep FILE`; "
              << "the options of `sweep " << sub << "` come after it (see sweep " << sub << " --help)\n";
    return kExitBadInput;
  }
  if (plan.parsed()) return plan_sweep(o.plan, builtin_apps());
  if (collect.parsed()) return collect_sweep(o.collect);
  if (o.sweep.file.empty()) {
    std::cerr << "smmu-vp: sweep: a scenario file is required (or `sweep plan FILE`, `sweep collect DIR`); see sweep --help\n";
    return kExitBadInput;
  }
  return run_sweep(o.sweep, builtin_apps());
}

}  // namespace

Subcommand add_sweep_command(CLI::App& cli) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* sweep = cli.add_subcommand("sweep", "Run a scenario at every point of its \"sweep\" axes, a process per point, and tabulate the results");
  add_sweep_options(*sweep, o->sweep);
  CLI::App* plan = add_plan_command(*sweep, o->plan);
  CLI::App* collect = add_collect_command(*sweep, o->collect);
  sweep->require_subcommand(0, 1);
  return {sweep, [=] { return run_sweep_command(*sweep, *plan, *collect, *o); }};
}

}  // namespace smmu_vp::cli

// Sweeps beyond one machine: `smmu-vp sweep plan` writes one self-contained
// job per point and a job list for any engine (GNU parallel, a SLURM job
// array, a shell loop); `smmu-vp sweep collect` reads the finished points
// back into the table, sweep.csv and sweep.json the local runner writes
// (README.md, "Sweeps"; docs/studies.md, "Beyond one machine").
#pragma once

#include <string>
#include <vector>

#include "cli/sweep.h"

struct hal_app;

namespace smmu_vp::cli {

struct SlurmArgs {
  bool enabled = false;         // also write sweep.sbatch
  unsigned concurrency = 16;    // array tasks running at once (the %N of --array)
  std::string time;             // --time, e.g. 00:10:00; empty: the partition's default
  std::string mem;              // --mem, e.g. 2G; empty: the partition's default
  std::string partition;        // --partition; empty: the default partition
  unsigned cpus_per_task = 1;   // a point is one single-threaded process
  std::vector<std::string> options;  // further sbatch options, one #SBATCH line each
};

struct PlanArgs {
  SweepArgs sweep;   // file, sets, seed; `out` is the plan directory
  std::string exe;   // the smmu-vp the jobs run; empty: this executable
  SlurmArgs slurm;
};

struct CollectArgs {
  std::string dir;               // a plan directory
  std::string format = "table";  // table, csv or markdown
};

// Exit code: 0 planned, 2 bad input (nothing written but what names the problem).
int plan_sweep(const PlanArgs& args, const std::vector<const hal_app*>& apps);

// Exit code: 0 every point finished and every column was found; 2 not a plan
// directory (or a column found at no point); 3 some point failed or is
// missing (after the table).
int collect_sweep(const CollectArgs& args);

}  // namespace smmu_vp::cli

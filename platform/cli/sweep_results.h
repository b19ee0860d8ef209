// What the local sweep runner and `sweep collect` share: a loaded sweep (its
// spec, points and section, every point's configuration checked) and the
// results made from the points' outcomes: the table on stdout, sweep.csv and
// sweep.json (README.md, "Sweeps").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/sweep.h"
#include "cli/sweep_spec.h"

struct hal_app;

namespace smmu_vp::cli {

struct LoadedSweep {
  SweepSpec spec;
  std::vector<SweepPoint> points;
  nlohmann::ordered_json section;      // the "sweep" object as written, echoed in sweep.json
  std::vector<nlohmann::json> configs;  // per point: its validated configuration (what `run` writes as config.json)
  std::string base_dir;                 // the scenario file's directory: where its relative paths start
};

// How a point ended, however it was run.
struct PointOutcome {
  enum class Kind {
    kOk,          // ran to the end with exit code 0: its stats.json is read
    kFailed,      // ended with an error: every cell "failed"
    kUnfinished,  // did not end (timeout, interrupted, not run, missing): cells show `status`
  };
  Kind kind = Kind::kFailed;
  std::string status;   // "ok", "failed", "timeout", "interrupted", "not-run", "missing"
  std::string outcome;  // "exit code 4", "missing: no exit_status (not run, or still running)", ...
  double wall_seconds = 0;
};

// Writes a whole file; std::runtime_error naming it when it cannot be written.
void write_file(const std::string& path, const std::string& text);

// What a point's `run` applies: its axis values, then the user's --set, then --seed.
std::vector<std::string> point_sets(const SweepPoint& pt, const SweepArgs& a);

// Reads a.file, validates its "sweep" section and builds every point's
// configuration, so a bad override is one error naming the point rather than
// N failed runs. Throws config::ConfigError (bad content) or
// std::runtime_error (unreadable file).
LoadedSweep load_sweep(const SweepArgs& a, const std::vector<const hal_app*>& apps);

// The results of a sweep whose points ended as `outcomes`, each point's
// stats.json read from a.out/<point dir>/: warns about missing stats on
// stderr, prints the table on stdout in a.format, writes a.out/sweep.csv and
// a.out/sweep.json (with `wallclock` as its wall-clock section). Returns
// false when some column has a value at no point that ran (a misspelt stat).
// Throws std::runtime_error when a file cannot be written.
bool write_results(const SweepArgs& a, const LoadedSweep& sweep, const std::vector<PointOutcome>& outcomes,
                   const nlohmann::ordered_json& wallclock);

}  // namespace smmu_vp::cli

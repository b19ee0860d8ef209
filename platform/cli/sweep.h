// `smmu-vp sweep`: runs a scenario at every point of the cross product of the
// axes in its "sweep" section, one `smmu-vp run` process per point, and
// tabulates the chosen stats (README.md, "Sweeps").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct hal_app;

namespace smmu_vp::cli {

struct SweepArgs {
  std::string file;
  std::vector<std::string> sets;  // user --set, applied after each point's own
  std::string out = "out";
  unsigned jobs = 0;              // 0: one per hardware thread
  std::optional<uint64_t> seed;
  std::string format = "table";   // table, csv or markdown
  double point_timeout_s = 0;     // a point running longer is stopped ("timeout"); 0 none
};

// Returns the exit code: 0 every point ran and every column was found, 2 bad
// input (nothing run; or a column's stat in no point), 3 a point failed or
// timed out, 130 interrupted by SIGINT/SIGTERM (the results so far written,
// the points that did not finish marked).
int run_sweep(const SweepArgs& args, const std::vector<const hal_app*>& apps);

}  // namespace smmu_vp::cli

// `smmu-vp sweep`: runs a scenario at every point of its "sweep" axes
// (sweep.h), or, as `sweep plan`, writes the points as jobs for other engines
// and, as `sweep collect`, tabulates their results (sweep_dist.h).
#pragma once

#include "cli/subcommand.h"

namespace smmu_vp::cli {

// `sweep` with its own subcommands, `plan` and `collect`. Exit codes as
// run_sweep, plan_sweep and collect_sweep return them; 2 when an option of
// `sweep FILE` comes before `plan`/`collect`, or no scenario is named.
Subcommand add_sweep_command(CLI::App& cli);

}  // namespace smmu_vp::cli

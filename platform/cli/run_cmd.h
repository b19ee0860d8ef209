// `smmu-vp run`: runs a scenario (its apps, and --firmware on the cores they
// leave free) and writes its results: stats.json, config.json, optionally
// trace.json and a DMA trace, and a summary on stdout.
#pragma once

#include "cli/subcommand.h"

namespace smmu_vp::cli {

// Exit code: how the run ended, as main.cc lists the codes; 1 when a result
// cannot be written, 2 bad input (nothing run).
Subcommand add_run_command(CLI::App& cli);

}  // namespace smmu_vp::cli

// `smmu-vp apps`: lists the built-in apps and their parameters.
#pragma once

#include "cli/subcommand.h"

namespace smmu_vp::cli {

// Exit code 0.
Subcommand add_apps_command(CLI::App& cli);

}  // namespace smmu_vp::cli

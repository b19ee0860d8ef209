// `smmu-vp config-reference`: prints the configuration reference, Markdown as
// in docs/config.md, with every built-in app's parameters.
#pragma once

#include "cli/subcommand.h"

namespace smmu_vp::cli {

// Exit code 0.
Subcommand add_config_reference_command(CLI::App& cli);

}  // namespace smmu_vp::cli

// `smmu-vp config-reference` (config_reference_cmd.h).
#include "cli/config_reference_cmd.h"

#include <iostream>

#include <CLI/CLI.hpp>

#include "config/run_config.h"

namespace smmu_vp::cli {

namespace {

int print_config_reference() {
  std::cout << config::render_config_reference(builtin_apps());
  return 0;
}

}  // namespace

Subcommand add_config_reference_command(CLI::App& cli) {
  CLI::App* cmd =
      cli.add_subcommand("config-reference", "Print the configuration reference (Markdown, as in docs/config.md)");
  return {cmd, print_config_reference};
}

}  // namespace smmu_vp::cli

// `smmu-vp apps` (apps_cmd.h).
#include "cli/apps_cmd.h"

#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "hal/hal.h"

namespace smmu_vp::cli {

namespace {

int list_apps() {
  for (const hal_app* app : builtin_apps()) {
    std::cout << app->name << ": " << app->summary << "\n";
    for (const hal_param_decl* p = app->params; p && p->name; ++p)
      std::cout << fmt::format("    {:<20} default {:<10} {:<12} {}{}\n", p->name, p->default_value,
                               p->max ? fmt::format("0..{}", p->max) : std::string("any"), p->help,
                               p->names ? fmt::format(" Names: {}.", p->names) : std::string());
  }
  return 0;
}

}  // namespace

Subcommand add_apps_command(CLI::App& cli) {
  CLI::App* cmd = cli.add_subcommand("apps", "List the built-in apps and their parameters");
  return {cmd, list_apps};
}

}  // namespace smmu_vp::cli

// What several subcommands share (subcommand.h).
#include "cli/subcommand.h"

#include <string>

#include <CLI/CLI.hpp>

#include "apps/apps.h"

namespace smmu_vp::cli {

std::vector<const hal_app*> builtin_apps() {
  std::vector<const hal_app*> v;
  for (unsigned i = 0; i < sw_app_count; ++i) v.push_back(sw_apps[i]);
  return v;
}

const CLI::Validator& not_negative() {
  static const CLI::Validator v(
      [](std::string& s) { return s.rfind('-', 0) == 0 ? std::string("must not be negative (got " + s + ")") : std::string(); },
      "UINT");
  return v;
}

}  // namespace smmu_vp::cli

// What several subcommands share (subcommand.h).
#include "cli/subcommand.h"

#include <stdexcept>
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
  // Negative, or beyond 64 bits: both would be taken silently otherwise (a
  // seed of 10^23 saturated to 2^64 - 1).
  static const CLI::Validator v(
      [](std::string& s) {
        if (s.rfind('-', 0) == 0) return std::string("must not be negative (got " + s + ")");
        const size_t digits = s.find_first_not_of("0123456789");
        if (digits == std::string::npos && s.size() > 0) {
          try {
            (void)std::stoull(s);
          } catch (const std::out_of_range&) {
            return std::string("is larger than 18446744073709551615, the largest 64-bit value (got " + s + ")");
          }
        }
        return std::string();
      },
      "UINT");
  return v;
}

}  // namespace smmu_vp::cli

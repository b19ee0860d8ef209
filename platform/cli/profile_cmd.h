// `smmu-vp profile`: the machine profiles (config/profile.h).
//   profile list                  names, titles and machines
//   profile show NAME|FILE [--json]  every timing value with its provenance
//   profile check [NAME|FILE ...]  exit 2 naming the file and key of the first problem
//   profile doc                   docs/profiles.md's generated section
#pragma once

#include "cli/subcommand.h"

namespace smmu_vp::cli {

// Exit codes: 0, or kExitBadInput (an unknown profile, bad content).
Subcommand add_profile_command(CLI::App& cli);

}  // namespace smmu_vp::cli

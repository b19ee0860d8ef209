// One subcommand of smmu-vp (cli/main.cc): each cli/<name>_cmd.cc declares
// its options with add_<name>_command and hands back how to run it; main.cc
// runs the one the command line named. Also what several subcommands share.
#pragma once

#include <functional>
#include <vector>

// CLI11 itself stays in the .cc files (it costs seconds of compile per file).
namespace CLI {
class App;
class Validator;
}  // namespace CLI

struct hal_app;

namespace smmu_vp::cli {

struct Subcommand {
  CLI::App* app;             // parsed when the command line named it
  std::function<int()> run;  // after parsing: runs it, returns the exit code
};

// The exit codes every subcommand may return (the full list in main.cc).
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

// The apps built into smmu-vp (sw/apps), in the order `smmu-vp apps` lists them.
std::vector<const hal_app*> builtin_apps();

// --seed's check: a seed is an unsigned integer, and "-1" must not wrap
// around to 2^64 - 1.
const CLI::Validator& not_negative();

}  // namespace smmu_vp::cli

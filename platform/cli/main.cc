// smmu-vp command line: run a scenario, sweep one over axes of overrides (here,
// or planned as jobs for other engines and collected), list apps, print the
// config reference. Each subcommand is declared and run by its own
// cli/<name>_cmd.cc (cli/subcommand.h); this file parses and dispatches.
// Exit codes: 0 success, 1 internal error, 2 bad input (command line, config,
// firmware, output directory), 3 an app failed (sweep: a point failed),
// 4 time limit, 5 deadlock, 6 --strict found problems, 7 a program crashed,
// 8 hung (the watchdog fired), 9 a program called exit(), 130 interrupted
// (SIGINT, SIGTERM, SIGHUP or SIGQUIT; sweep too).
#include <csignal>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <systemc>

#include "cli/apps_cmd.h"
#include "cli/config_reference_cmd.h"
#include "cli/profile_cmd.h"
#include "cli/run_cmd.h"
#include "cli/subcommand.h"
#include "cli/sweep_cmd.h"
#include "cli/trace_cmd.h"
#include "common/tlm_time.h"

#ifndef SMMU_VP_VERSION
#define SMMU_VP_VERSION "unknown"
#endif

namespace {

namespace cmd = smmu_vp::cli;

// SystemC prints its banner on stdout unless this is set before it starts;
// a static initialiser runs before SystemC's main().
const bool kQuietSystemC = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;

}  // namespace

// SystemC's own main() calls sc_main with the command line.
int sc_main(int argc, char** argv) {
  (void)kQuietSystemC;
  // Output piped into a reader that stops early (`| head`) must not kill a
  // run before it writes its results: a write to it fails instead.
  std::signal(SIGPIPE, SIG_IGN);
  smmu_vp::use_ranked_time();  // before any sc_time is made (common/tlm_time.h)
  // sc_stop() ends every run; SystemC need not announce it.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);

  CLI::App cli{"smmu-vp: SystemC/TLM-2.0 virtual platform for SMMUv3 performance work"};
  cli.set_version_flag("--version", std::string("smmu-vp ") + SMMU_VP_VERSION);
  cli.require_subcommand(1);
  // In the order --help lists them.
  const std::vector<cmd::Subcommand> subcommands = {
      cmd::add_run_command(cli),
      cmd::add_sweep_command(cli),
      cmd::add_trace_command(cli),
      cmd::add_apps_command(cli),
      cmd::add_config_reference_command(cli),
      cmd::add_profile_command(cli),
  };

  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = cli.exit(e);
    return rc == 0 ? 0 : cmd::kExitBadInput;
  }

  try {
    for (const cmd::Subcommand& s : subcommands)
      if (s.app->parsed()) return s.run();
  } catch (const std::exception& e) {
    std::cerr << "smmu-vp: internal error: " << e.what() << "\n";
    return cmd::kExitInternal;
  }
  return cmd::kExitInternal;
}

// Runs child processes a bounded number at a time. SystemC elaborates one
// platform per process, so each sweep point is its own `smmu-vp run`.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace smmu_vp::cli {

struct ChildSpec {
  std::vector<std::string> argv;  // argv[0] included
  std::string log_path;           // receives the child's stdout and stderr
};

struct ChildOutcome {
  int exit_code = 0;        // when it exited
  int signal = 0;           // non-zero: a signal ended it
  std::string spawn_error;  // non-empty: it never started
  bool not_started = false; // the sweep was interrupted before its turn
  bool timed_out = false;   // it ran past the time limit and was stopped
  bool interrupted = false; // it was running when the sweep was interrupted
  double wall_seconds = 0;

  bool ok() const {
    return spawn_error.empty() && !not_started && !timed_out && !interrupted && signal == 0 && exit_code == 0;
  }
  // "ok", "failed", "timeout", "interrupted" or "not-run"
  std::string status() const;
  // "exit code 4", "killed by signal 9", "could not start: ...", "timeout after 10 s (exit code 130)"
  std::string describe() const;
};

struct ChildLimits {
  unsigned jobs = 1;       // at most this many at once
  double timeout_s = 0;    // per child: stopped (SIGTERM, then SIGKILL) past this; 0 none
};

// The path of the running executable (/proc/self/exe resolved).
std::string self_executable();

// Starts `exe` once per spec, at most `limits.jobs` at a time, without a
// shell, each in a process group of its own (so that a terminal's Ctrl-C
// reaches only this process, which forwards it once); calls `on_done(index,
// outcome)` as each one finishes, in finishing order.
// SIGINT or SIGTERM received meanwhile is forwarded to the running children;
// no more start, every remaining one is reported not_started, and the signal
// is returned (0 when none came). A second one kills the children (SIGKILL).
// The environment variable by which a sweep tells its points its pid.
inline constexpr char kParentPidEnv[] = "SMMU_VP_SWEEP_PID";

int run_children(const std::string& exe, const std::vector<ChildSpec>& children, const ChildLimits& limits,
                 const std::function<void(size_t, const ChildOutcome&)>& on_done);

}  // namespace smmu_vp::cli

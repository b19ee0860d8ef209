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
  double wall_seconds = 0;

  bool ok() const { return spawn_error.empty() && signal == 0 && exit_code == 0; }
  // "exit code 4", "killed by signal 9", "could not start: ..."
  std::string describe() const;
};

// The path of the running executable (/proc/self/exe resolved).
std::string self_executable();

// Starts `exe` once per spec, at most `jobs` at a time, without a shell;
// calls `on_done(index, outcome)` as each one finishes, in finishing order.
void run_children(const std::string& exe, const std::vector<ChildSpec>& children, unsigned jobs,
                  const std::function<void(size_t, const ChildOutcome&)>& on_done);

}  // namespace smmu_vp::cli

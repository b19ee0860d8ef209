#include "cli/sweep_runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>

extern char** environ;

namespace smmu_vp::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct Running {
  size_t index;
  Clock::time_point start;
};

// Returns the pid, or -1 with `error` set.
pid_t spawn(const std::string& exe, const ChildSpec& spec, std::string& error) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, spec.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    error = std::strerror(rc);
    return -1;
  }
  return pid;
}

ChildOutcome outcome_of(int status, Clock::time_point start) {
  ChildOutcome o;
  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  o.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return o;
}

}  // namespace

std::string ChildOutcome::describe() const {
  if (!spawn_error.empty()) return "could not start: " + spawn_error;
  if (signal != 0) return "killed by signal " + std::to_string(signal);
  return "exit code " + std::to_string(exit_code);
}

std::string self_executable() {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the smmu-vp executable (/proc/self/exe): " + ec.message());
  return p.string();
}

void run_children(const std::string& exe, const std::vector<ChildSpec>& children, unsigned jobs,
                  const std::function<void(size_t, const ChildOutcome&)>& on_done) {
  std::map<pid_t, Running> running;
  size_t next = 0;
  while (next < children.size() || !running.empty()) {
    while (next < children.size() && running.size() < jobs) {
      const size_t i = next++;
      std::string error;
      const pid_t pid = spawn(exe, children[i], error);
      if (pid < 0) {
        ChildOutcome o;
        o.spawn_error = error;
        on_done(i, o);
      } else {
        running[pid] = {i, Clock::now()};
      }
    }
    if (running.empty()) continue;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;  // not a point of this sweep
    const Running r = it->second;
    running.erase(it);
    on_done(r.index, outcome_of(status, r.start));
  }
}

}  // namespace smmu_vp::cli

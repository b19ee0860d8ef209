#include "cli/sweep_runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace smmu_vp::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct Running {
  size_t index;
  Clock::time_point start;
  bool timed_out = false;
  Clock::time_point term_sent;  // when timed out: SIGTERM then, SIGKILL kKillAfter later
};

// A child stopped with SIGTERM writes its results and ends; one that has not
// after this long is killed.
constexpr double kKillAfter = 10.0;
constexpr auto kPoll = std::chrono::milliseconds(20);

volatile std::sig_atomic_t g_stop_signal = 0;   // the first SIGINT/SIGTERM/SIGHUP/SIGQUIT
volatile std::sig_atomic_t g_stop_count = 0;

void on_stop(int signo) {
  if (!g_stop_signal) g_stop_signal = signo;
  g_stop_count = g_stop_count + 1;
}

// SIGINT/SIGTERM handlers for the lifetime of run_children.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    g_stop_count = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~StopSignals() {
    for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  struct sigaction old_[std::size(kSignals)] {};
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Returns the pid, or -1 with `error` set.
pid_t spawn(const std::string& exe, const ChildSpec& spec, std::string& error) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, spec.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  // A process group of its own; default signal dispositions, nothing blocked.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The child learns who its sweep is, to die with it (run_cmd.cc,
  // PR_SET_PDEATHSIG): a sweep killed outright leaves no point running.
  const std::string parent = std::string(kParentPidEnv) + "=" + std::to_string(getpid());
  std::vector<char*> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, kParentPidEnv, std::strlen(kParentPidEnv)) != 0 || (*e)[std::strlen(kParentPidEnv)] != '=')
      env.push_back(*e);
  env.push_back(const_cast<char*>(parent.c_str()));
  env.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(), env.data());
  posix_spawnattr_destroy(&attr);
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

std::string ChildOutcome::status() const {
  if (ok()) return "ok";
  if (not_started) return "not-run";
  if (timed_out) return "timeout";
  if (interrupted) return "interrupted";
  return "failed";
}

std::string ChildOutcome::describe() const {
  if (!spawn_error.empty()) return "could not start: " + spawn_error;
  if (not_started) return "not run (the sweep was interrupted)";
  const std::string end = signal != 0 ? "killed by signal " + std::to_string(signal) : "exit code " + std::to_string(exit_code);
  if (timed_out) return "timeout after " + std::to_string(static_cast<long>(wall_seconds)) + " s (" + end + ")";
  if (interrupted) return "interrupted (" + end + ")";
  return end;
}

std::string self_executable() {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the smmu-vp executable (/proc/self/exe): " + ec.message());
  return p.string();
}

int run_children(const std::string& exe, const std::vector<ChildSpec>& children, const ChildLimits& limits,
                 const std::function<void(size_t, const ChildOutcome&)>& on_done) {
  StopSignals stop_signals;
  std::map<pid_t, Running> running;
  size_t next = 0;
  int forwarded = 0;  // how many stop signals were passed on
  while (next < children.size() || !running.empty()) {
    if (g_stop_signal) {
      // No more children start; the running ones get the signal (SIGKILL from
      // the second one on) and are waited for.
      while (next < children.size()) {
        ChildOutcome o;
        o.not_started = true;
        on_done(next++, o);
      }
      const int count = g_stop_count;
      if (count > forwarded) {
        for (const auto& [pid, r] : running) kill(pid, forwarded == 0 ? g_stop_signal : SIGKILL);
        forwarded = count;
      }
    }
    while (!g_stop_signal && next < children.size() && running.size() < std::max(1u, limits.jobs)) {
      const size_t i = next++;
      std::string error;
      const pid_t pid = spawn(exe, children[i], error);
      if (pid < 0) {
        ChildOutcome o;
        o.spawn_error = error;
        on_done(i, o);
      } else {
        running[pid] = {i, Clock::now(), false, {}};
      }
    }
    if (running.empty()) continue;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno != EINTR && errno != ECHILD)
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    if (pid <= 0) {
      // Nothing ended: enforce the time limit, then look again shortly.
      for (auto& [child, r] : running) {
        if (limits.timeout_s > 0 && !r.timed_out && seconds_since(r.start) > limits.timeout_s) {
          r.timed_out = true;
          r.term_sent = Clock::now();
          kill(child, SIGTERM);  // smmu-vp run ends as "interrupted", its results written
        } else if (r.timed_out && seconds_since(r.term_sent) > kKillAfter) {
          kill(child, SIGKILL);
        }
      }
      std::this_thread::sleep_for(kPoll);
      continue;
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;  // not a point of this sweep
    const Running r = it->second;
    running.erase(it);
    ChildOutcome o = outcome_of(status, r.start);
    // A child that finished on its own just as it was told to stop keeps its outcome.
    const bool stopped = o.signal != 0 || o.exit_code == 130;
    o.timed_out = r.timed_out && (stopped || o.exit_code != 0);
    o.interrupted = !o.timed_out && g_stop_signal != 0 && stopped;
    on_done(r.index, o);
  }
  return g_stop_signal;
}

}  // namespace smmu_vp::cli

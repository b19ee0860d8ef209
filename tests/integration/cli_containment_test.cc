// Containment (README.md "Using it", docs/firmware.md): a firmware that
// crashes, overflows its stack or never yields ends the run with its own
// status and exit code and every output written; SIGINT/SIGTERM stop a run
// or a sweep cleanly; a sweep point can have a time limit.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cli_support.h"

namespace cli_test {
namespace {

// Whether this is the sanitizer build (-DSMMU_VP_SANITIZE=ON: ASan and UBSan,
// the test firmware included). ASan lets smmu-vp's SIGSEGV handler replace
// its own (allow_user_segv_handler), but UBSan stops an integer division by
// zero in the firmware before it can raise SIGFPE.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

// A scenario running crash_firmware on cores 0 and 1 with `params` (JSON
// object members); the misbehaving core is the one of rank "rank".
std::string crash_scenario(const fs::path& d, const std::string& params) {
  return write_file(d, "scenario.json",
                    R"({"platform": ")" + std::string(SMMU_VP_SOURCE_DIR) +
                        R"(/platform/platforms/base.json", "scenario": {"name": "crash", "apps": [)"
                        R"({"app": "crash_firmware", "cores": [0, 1], "params": {)" + params +
                        R"(}}], "stop": {"max_time_us": 100000}}})");
}

std::string crash_run(const fs::path& d, const std::string& params, const std::string& extra = "") {
  return "run " + crash_scenario(d, params) + " --quiet --trace --firmware " + CRASH_FIRMWARE + " --out " +
         (d / "out").string() + " " + extra;
}

// Everything a stopped run must leave: stats.json with `status`, a summary
// on stdout, a trace.json that parses (so it was closed).
void expect_outputs(const fs::path& out, const Cmd& r, const std::string& status) {
  ASSERT_TRUE(fs::exists(out / "stats.json")) << r.out;
  const nlohmann::json stats = read_json(out / "stats.json");
  EXPECT_EQ(stats["run"]["status"], status) << r.out;
  EXPECT_NE(r.out.find("status    " + status), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("results in"), std::string::npos) << r.out;
  ASSERT_TRUE(fs::exists(out / "trace.json"));
  const std::string trace = read_text(out / "trace.json");
  EXPECT_TRUE(nlohmann::json::accept(trace)) << trace.substr(trace.size() > 200 ? trace.size() - 200 : 0);
}

TEST(CliContainment, NullDereferenceIsReportedAsCrashed) {
  const fs::path d = temp_dir("crash-null");
  const Cmd r = sh(crash_run(d, R"("mode": "null", "rank": 1, "address": 16)"));
  EXPECT_EQ(r.exit_code, 7) << r.out;
  expect_outputs(d / "out", r, "crashed");
  const nlohmann::json run = read_json(d / "out" / "stats.json")["run"];
  const std::string msg = run["message"];
  EXPECT_NE(msg.find("cpu1 (crash_firmware)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("SIGSEGV"), std::string::npos) << msg;
  EXPECT_NE(msg.find("at address 0x10"), std::string::npos) << msg;
  EXPECT_NE(msg.find("NULL pointer"), std::string::npos) << msg;
  EXPECT_NE(msg.find("crash_firmware.so"), std::string::npos) << msg;  // where the code was
  EXPECT_NE(msg.find("us simulated"), std::string::npos) << msg;
  EXPECT_GT(run["simulated_time_ns"].get<double>(), 0.0);
  // The crashed core is finished with a failure; the other finished cleanly.
  for (const auto& c : run["cores"]) {
    if (c["cpu"] == 1) EXPECT_NE(c["failure"].get<std::string>().find("crashed"), std::string::npos);
    else EXPECT_EQ(c["failure"], "");
  }
}

TEST(CliContainment, StackOverflowFaultsInTheGuardPage) {
  const fs::path d = temp_dir("crash-stack");
  const Cmd r = sh(crash_run(d, R"("mode": "stack")"));
  EXPECT_EQ(r.exit_code, 7) << r.out;
  expect_outputs(d / "out", r, "crashed");
  const std::string msg = read_json(d / "out" / "stats.json")["run"]["message"];
  EXPECT_NE(msg.find("cpu0 (crash_firmware)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("stack overflow"), std::string::npos) << msg;
  EXPECT_EQ(r.out.find("found no guard page"), std::string::npos) << r.out;
}

TEST(CliContainment, IllegalInstruction) {
  const fs::path d = temp_dir("crash-ill");
  const Cmd r = sh(crash_run(d, R"("mode": "ill")"));
  EXPECT_EQ(r.exit_code, 7) << r.out;
  expect_outputs(d / "out", r, "crashed");
  const std::string msg = read_json(d / "out" / "stats.json")["run"]["message"];
  EXPECT_NE(msg.find("SIGILL"), std::string::npos) << msg;
}

TEST(CliContainment, DivisionByZero) {
  if (kAsan) GTEST_SKIP() << "sanitizer build: UBSan reports the division by zero in the firmware before SIGFPE";
  const fs::path d = temp_dir("crash-fpe");
  const Cmd r = sh(crash_run(d, R"("mode": "divide")"));
  EXPECT_EQ(r.exit_code, 7) << r.out;
  expect_outputs(d / "out", r, "crashed");
  const std::string msg = read_json(d / "out" / "stats.json")["run"]["message"];
  EXPECT_NE(msg.find("SIGFPE"), std::string::npos) << msg;
  EXPECT_NE(msg.find("at instruction 0x"), std::string::npos) << msg;
}

TEST(CliContainment, WatchdogStopsAFirmwareThatNeverYields) {
  const fs::path d = temp_dir("hang");
  const auto t0 = std::chrono::steady_clock::now();
  const Cmd r = sh(crash_run(d, R"("mode": "spin", "rank": 1)", "--watchdog 1"));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 8) << r.out;
  expect_outputs(d / "out", r, "hung");
  const std::string msg = read_json(d / "out" / "stats.json")["run"]["message"];
  EXPECT_NE(msg.find("cpu1 (crash_firmware): hung"), std::string::npos) << msg;
  EXPECT_LT(wall, 30.0);
}

TEST(CliContainment, WatchdogOptionIsChecked) {
  const Cmd r = sh("run " + kScenarios + "firmware.json --watchdog -1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(sh("run --help").out.find("--watchdog"), std::string::npos);
  EXPECT_NE(sh("sweep --help").out.find("--point-timeout"), std::string::npos);
}

// Starts smmu-vp with `args` in the background, stdout and stderr to `log`.
pid_t start(const std::string& args, const fs::path& log) {
  const std::string cmd = "exec " + std::string(SMMU_VP_CLI) + " " + args + " >" + log.string() + " 2>&1";
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// The exit code of `pid`, waiting at most `limit_s` (then it is killed: -1).
int wait_exit(pid_t pid, double limit_s) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > limit_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// A scenario that runs for minutes: lock_contend on two cores with no end in sight.
std::string long_scenario(const fs::path& d) {
  return write_file(d, "long.json",
                    R"({"platform": ")" + std::string(SMMU_VP_SOURCE_DIR) +
                        R"(/platform/platforms/base.json", "scenario": {"name": "long", "apps": [)"
                        R"({"app": "lock_contend", "cores": [0, 1], "params": {"iterations": 1000000000000}}],)"
                        R"( "stop": {"max_time_us": 100000000}},)"
                        R"( "sweep": {"axes": [{"name": "hold", "values": {"a": {"scenario.apps.0.params.hold_cycles": 100},)"
                        R"( "b": {"scenario.apps.0.params.hold_cycles": 200}, "c": {"scenario.apps.0.params.hold_cycles": 300}}}],)"
                        R"( "columns": [{"title": "atomics", "stat": "cpus.cpu0.atomics"}]}})");
}

TEST(CliContainment, SigintStopsARunWithItsResults) {
  const fs::path d = temp_dir("sigint");
  const fs::path log = d / "log.txt";
  const pid_t pid = start("run " + long_scenario(d) + " --trace --out " + (d / "out").string(), log);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(pid, SIGINT);
  const int rc = wait_exit(pid, 30);
  const Cmd r{rc, read_text(log)};
  EXPECT_EQ(rc, 130) << r.out;
  expect_outputs(d / "out", r, "interrupted");
  const nlohmann::json stats = read_json(d / "out" / "stats.json");
  EXPECT_GT(stats["run"]["simulated_time_ns"].get<double>(), 0.0);
  EXPECT_GT(stats["cpus"]["cpu0"]["atomics"].get<double>(), 0.0);
  EXPECT_NE(r.out.find("interrupted by SIGINT"), std::string::npos) << r.out;
}

TEST(CliContainment, SigtermStopsAFirmwareThatNeverYields) {
  // No HAL call ever sees the request: after the grace period the core is
  // stopped from the signal handler.
  const fs::path d = temp_dir("sigterm-spin");
  const fs::path log = d / "log.txt";
  const pid_t pid = start(crash_run(d, R"("mode": "spin")", "--watchdog 0"), log);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  kill(pid, SIGTERM);
  const int rc = wait_exit(pid, 30);
  const Cmd r{rc, read_text(log)};
  EXPECT_EQ(rc, 130) << r.out;
  expect_outputs(d / "out", r, "interrupted");
  EXPECT_NE(r.out.find("interrupted by SIGTERM"), std::string::npos) << r.out;
}

// Whether some process still has `text` on its command line.
bool process_with(const std::string& text) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string cmdline = read_text(e.path() / "cmdline");
    if (cmdline.find(text) != std::string::npos && e.path().filename() != std::to_string(getpid())) return true;
  }
  return false;
}

TEST(CliContainment, PointTimeoutStopsAPoint) {
  const fs::path d = temp_dir("sweep-timeout");
  const auto t0 = std::chrono::steady_clock::now();
  const Cmd r = sh("sweep " + long_scenario(d) + " --jobs 2 --point-timeout 1 --out " + (d / "out").string());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_LT(wall, 60.0);
  const nlohmann::json sweep = read_json(d / "out" / "sweep.json");
  ASSERT_EQ(sweep["points"].size(), 3u);
  for (const auto& p : sweep["points"]) {
    EXPECT_EQ(p["status"], "timeout") << p.dump();
    // The point was stopped with SIGTERM: it wrote its results as interrupted.
    EXPECT_EQ(read_json(d / "out" / p["dir"].get<std::string>() / "stats.json")["run"]["status"], "interrupted");
  }
  EXPECT_NE(r.out.find("did not finish (--point-timeout)"), std::string::npos) << r.out;
  EXPECT_TRUE(has_row(read_text(d / "out" / "sweep.csv"), {"a,timeout"})) << read_text(d / "out" / "sweep.csv");
}

TEST(CliContainment, SigintStopsASweepAndItsChildren) {
  const fs::path d = temp_dir("sweep-sigint");
  const fs::path log = d / "log.txt";
  const std::string out = (d / "out").string();
  const pid_t pid = start("sweep " + long_scenario(d) + " --jobs 1 --out " + out, log);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(pid, SIGINT);
  const int rc = wait_exit(pid, 30);
  const std::string text = read_text(log);
  EXPECT_EQ(rc, 130) << text;
  EXPECT_FALSE(process_with(out)) << "a sweep point outlived its sweep";
  const nlohmann::json sweep = read_json(d / "out" / "sweep.json");
  ASSERT_EQ(sweep["points"].size(), 3u);
  EXPECT_EQ(sweep["points"][0]["status"], "interrupted") << sweep.dump(2);
  EXPECT_EQ(sweep["points"][1]["status"], "not-run");
  EXPECT_EQ(sweep["points"][2]["status"], "not-run");
  EXPECT_EQ(read_json(fs::path(out) / sweep["points"][0]["dir"].get<std::string>() / "stats.json")["run"]["status"],
            "interrupted");
  EXPECT_NE(text.find("interrupted by SIGINT; these points did not finish"), std::string::npos) << text;
  const std::string csv = read_text(d / "out" / "sweep.csv");
  EXPECT_TRUE(has_row(csv, {"a,interrupted"})) << csv;
  EXPECT_TRUE(has_row(csv, {"c,not-run"})) << csv;
}

// abort() (a failed assert) is a crash, named; exit() ends the program's core
// with its own status, not the simulator with the firmware's code.
TEST(CliContainment, AbortIsACrashAndExitEndsOnlyTheCore) {
  const fs::path d = temp_dir("abort-exit");
  const Cmd a = sh(crash_run(d, R"("mode": "abort", "rank": 1)"));
  EXPECT_EQ(a.exit_code, 7) << a.out;
  expect_outputs(d / "out", a, "crashed");
  std::string msg = read_json(d / "out" / "stats.json")["run"]["message"];
  EXPECT_NE(msg.find("cpu1 (crash_firmware): crashed: SIGABRT (abort(), e.g. a failed assert)"), std::string::npos) << msg;
  const Cmd e = sh(crash_run(d, R"("mode": "exit", "rank": 1)"));
  EXPECT_EQ(e.exit_code, 9) << e.out;
  expect_outputs(d / "out", e, "exited");
  msg = read_json(d / "out" / "stats.json")["run"]["message"];
  EXPECT_NE(msg.find("cpu1 (crash_firmware): called exit(3) at"), std::string::npos) << msg;
}

// A firmware whose constructors crash, abort or exit while it is loaded is
// a bad image: exit 2, saying what it did, and nothing run.
TEST(CliContainment, AFirmwareThatMisbehavesWhileLoadingIsRefused) {
  const fs::path d = temp_dir("load-time");
  for (const auto& [mode, said] : std::vector<std::pair<std::string, std::string>>{
           {"segv", "crashed while loading (in its constructors): Segmentation fault"},
           {"abort", "crashed while loading (in its constructors): Aborted"},
           {"exit", "called exit(4) while loading (in its constructors)"}}) {
    const Cmd r = shell("CRASH_FIRMWARE_AT_LOAD=" + mode + " " + std::string(SMMU_VP_CLI) + " " +
                        crash_run(d, R"("mode": "none")") + " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << mode << ": " << r.out;
    EXPECT_NE(r.out.find(said), std::string::npos) << mode << ": " << r.out;
  }
}

// A dropped ssh connection (SIGHUP) and Ctrl-\ (SIGQUIT) end a run as
// Ctrl-C does: interrupted, with its results.
TEST(CliContainment, SighupStopsARunWithItsResults) {
  const fs::path d = temp_dir("sighup");
  const fs::path log = d / "log.txt";
  const pid_t pid = start("run " + long_scenario(d) + " --out " + (d / "out").string(), log);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(pid, SIGHUP);
  const int rc = wait_exit(pid, 30);
  const Cmd r{rc, read_text(log)};
  EXPECT_EQ(rc, 130) << r.out;
  EXPECT_EQ(read_json(d / "out" / "stats.json")["run"]["status"], "interrupted");
  EXPECT_NE(r.out.find("interrupted by SIGHUP"), std::string::npos) << r.out;
}

// Output piped into a reader that stops early (`| head -1`) costs the rest
// of the summary, not the run: stats.json is written and the exit is 0.
TEST(CliContainment, AReaderThatStopsEarlyDoesNotKillTheRun) {
  const fs::path d = temp_dir("sigpipe");
  const Cmd r = shell("bash -c 'set -o pipefail; " + std::string(SMMU_VP_CLI) + " run " + kScenarios +
                      "dma_copy.json --out " + (d / "out").string() + " 2>/dev/null | head -1; echo \"exit ${PIPESTATUS[0]}\"'");
  EXPECT_NE(r.out.find("exit 0"), std::string::npos) << r.out;
  ASSERT_TRUE(fs::exists(d / "out" / "stats.json"));
  EXPECT_EQ(read_json(d / "out" / "stats.json")["run"]["status"], "completed");
}

// Two runs on one --out would mix their files: the second is refused.
TEST(CliContainment, ASecondRunOnTheSameOutputIsRefused) {
  const fs::path d = temp_dir("out-lock");
  const fs::path log = d / "log.txt";
  const std::string out = (d / "out").string();
  const pid_t pid = start("run " + long_scenario(d) + " --out " + out, log);
  for (int i = 0; i < 250 && !fs::exists(d / "out" / "config.json"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const Cmd second = sh("run " + kScenarios + "dma_copy.json --out " + out);
  EXPECT_EQ(second.exit_code, 2) << second.out;
  EXPECT_NE(second.out.find("is in use by another run (pid " + std::to_string(pid) + ")"), std::string::npos)
      << second.out;
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit(pid, 30), 130) << read_text(log);
  EXPECT_EQ(read_json(d / "out" / "stats.json")["run"]["scenario"], "long");  // the first run's, whole
  // Free again once the first has ended.
  EXPECT_EQ(sh("run " + kScenarios + "dma_copy.json --quiet --out " + out).exit_code, 0);
}

// A sweep killed outright (SIGKILL: no handler runs) takes its points with
// it: each gets SIGTERM from the kernel and ends as interrupted, with its results.
TEST(CliContainment, AKilledSweepLeavesNoPointRunning) {
  const fs::path d = temp_dir("sweep-sigkill");
  const fs::path log = d / "log.txt";
  const std::string out = (d / "out").string();
  const pid_t pid = start("sweep " + long_scenario(d) + " --jobs 1 --out " + out, log);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_TRUE(process_with(out)) << read_text(log);
  kill(pid, SIGKILL);
  wait_exit(pid, 30);
  bool gone = false;
  for (int i = 0; i < 500 && !(gone = !process_with(out)); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(gone) << "a sweep point outlived its sweep";
  bool interrupted = false;
  for (const auto& e : fs::directory_iterator(out))
    if (fs::exists(e.path() / "stats.json"))
      interrupted |= read_json(e.path() / "stats.json")["run"]["status"] == "interrupted";
  EXPECT_TRUE(interrupted) << "the running point wrote no results";
}

}  // namespace
}  // namespace cli_test

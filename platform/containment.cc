#include "containment.h"

#include <sys/mman.h>
#include <sys/ucontext.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "common/tlm_time.h"

namespace smmu_vp {

namespace {

constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
// What a user's session sends to stop a run: Ctrl-C, kill, a dropped ssh
// connection, Ctrl-\. Each ends the run as interrupted with its results.
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr size_t kAltStackSize = 256 * 1024;  // room for ASan's interceptors too

// Everything the handlers touch: written before they are installed, then
// only read by them or set as flags.
struct State {
  CpuCluster* cpus = nullptr;
  pid_t tid = 0;  // the simulation thread
  double watchdog_s = 0;
  sigjmp_buf main_escape;
  volatile std::sig_atomic_t main_armed = 0;
  CpuCore::Fault main_fault;
  volatile std::sig_atomic_t interrupt_signo = 0;
  double interrupt_wall = 0;
  // Watchdog: the simulated time seen last and when it last moved.
  uint64_t last_sim = 0;
  double last_advance_wall = 0;
  volatile std::sig_atomic_t hang_requested = 0;
  double hang_wall = 0;
  // What was installed before, restored at the end.
  struct sigaction old_fault[std::size(kFaultSignals)];
  struct sigaction old_stop[std::size(kStopSignals)];
  struct sigaction old_alarm;
  struct itimerval old_timer;
  stack_t old_altstack;
  void* altstack = nullptr;
};

State g;
volatile std::sig_atomic_t g_active = 0;

pid_t this_thread() { return static_cast<pid_t>(syscall(SYS_gettid)); }

double wall_now() {  // clock_gettime is async-signal-safe
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void say(const char* msg) {  // async-signal-safe stderr output
  const ssize_t n = write(STDERR_FILENO, msg, std::strlen(msg));
  (void)n;
}

// Stops whatever runs now, from a handler running on the simulation thread:
// the running core's program if it can take an escape, else the main loop if
// it is simulating. Returns only when neither applies.
void hard_stop(CpuCore::StopKind kind, int signo, int code, uintptr_t addr, uintptr_t pc = 0) {
  for (unsigned i = 0; i < g.cpus->size(); ++i) {
    CpuCore& c = g.cpus->core(i);
    if (!c.is_running()) continue;
    if (!c.escapable()) break;
    CpuCore::Fault f;
    f.kind = kind;
    f.signo = signo;
    f.code = code;
    f.addr = addr;
    f.pc = pc;
    f.at = c.now();
    f.stack_overflow = kind == CpuCore::StopKind::kCrashed && c.in_stack_guard(addr);
    if (kind == CpuCore::StopKind::kHung) CpuCore::clear_stop_request();
    c.escape(f);
  }
  if (g.main_armed) {
    g.main_armed = 0;
    g.main_fault = CpuCore::Fault{kind, signo, code, addr, pc, now_ps(), false};
    siglongjmp(g.main_escape, 1);
  }
}

uintptr_t fault_pc(void* context) {
#if defined(__x86_64__)
  return static_cast<uintptr_t>(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<uintptr_t>(static_cast<ucontext_t*>(context)->uc_mcontext.pc);
#else
  (void)context;
  return 0;
#endif
}

void on_fault(int signo, siginfo_t* si, void* context) {
  if (g_active)
    hard_stop(CpuCore::StopKind::kCrashed, signo, si->si_code, reinterpret_cast<uintptr_t>(si->si_addr),
              fault_pc(context));
  // Not in the simulation: let the signal do what it would have done.
  say("smmu-vp: fatal signal outside the simulation\n");
  signal(signo, SIG_DFL);
  raise(signo);  // pending until the handler returns (or re-raised by the faulting instruction)
}

// A program that calls exit() would end the whole simulator with its
// status and nothing written: the first exit handler to run (registered
// last, when containment starts) stops its core instead, as a crash does.
// glibc unlocks its handler list while a handler runs, and this one never
// returns, so the rest of exit() does not happen. Registered again for the
// next program that tries.
void on_program_exit(int status, void*) {
  if (!g_active) return;  // the simulator itself is ending
  on_exit(on_program_exit, nullptr);
  hard_stop(CpuCore::StopKind::kExited, status, 0, 0);
}

void on_stop_signal(int signo) {
  if (g.interrupt_signo) {
    say("smmu-vp: second interrupt: stopping at once\n");
    signal(signo, SIG_DFL);
    raise(signo);
    return;
  }
  g.interrupt_wall = wall_now();
  g.interrupt_signo = signo;
  CpuCore::request_stop(CpuCore::StopKind::kInterrupted);
  switch (signo) {
    case SIGINT: say("smmu-vp: interrupted (SIGINT): stopping the run and writing its results; again to kill\n"); break;
    case SIGHUP: say("smmu-vp: hung up (SIGHUP): stopping the run and writing its results; again to kill\n"); break;
    case SIGQUIT: say("smmu-vp: quit (SIGQUIT): stopping the run and writing its results; again to kill\n"); break;
    default: say("smmu-vp: terminated (SIGTERM): stopping the run and writing its results; again to kill\n"); break;
  }
}

void on_tick(int) {
  if (this_thread() != g.tid) {  // a process-directed signal taken by another thread
    syscall(SYS_tgkill, getpid(), g.tid, SIGALRM);
    return;
  }
  const int saved_errno = errno;
  const double wall = wall_now();
  const uint64_t sim = sc_core::sc_time_stamp().value();
  if (sim != g.last_sim) {
    g.last_sim = sim;
    g.last_advance_wall = wall;
    g.hang_requested = 0;
  }
  if (g.interrupt_signo && wall - g.interrupt_wall >= Containment::kGrace)
    hard_stop(CpuCore::StopKind::kInterrupted, g.interrupt_signo, 0, 0);
  if (g.watchdog_s > 0 && wall - g.last_advance_wall >= g.watchdog_s) {
    if (!g.hang_requested) {
      g.hang_requested = 1;
      g.hang_wall = wall;
      CpuCore::request_stop(CpuCore::StopKind::kHung);
    } else if (wall - g.hang_wall >= Containment::kGrace) {
      hard_stop(CpuCore::StopKind::kHung, SIGALRM, 0, 0);
    }
  }
  errno = saved_errno;
}

void install(int signo, void (*fn)(int, siginfo_t*, void*), struct sigaction* old) {
  struct sigaction sa {};
  sa.sa_sigaction = fn;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  // Blocked while a handler runs: a stop request must not interrupt an escape.
  for (int s : kStopSignals) sigaddset(&sa.sa_mask, s);
  sigaddset(&sa.sa_mask, SIGALRM);
  if (sigaction(signo, &sa, old) != 0) throw std::runtime_error(std::string("sigaction: ") + std::strerror(errno));
}

void install(int signo, void (*fn)(int), struct sigaction* old) {
  struct sigaction sa {};
  sa.sa_handler = fn;
  sa.sa_flags = SA_ONSTACK | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int s : kStopSignals) sigaddset(&sa.sa_mask, s);
  sigaddset(&sa.sa_mask, SIGALRM);
  if (sigaction(signo, &sa, old) != 0) throw std::runtime_error(std::string("sigaction: ") + std::strerror(errno));
}

}  // namespace

Containment::Containment(CpuCluster& cpus, double watchdog_s) {
  if (g_active) throw std::logic_error("one Containment at a time");
  g.cpus = &cpus;
  g.tid = this_thread();
  g.watchdog_s = watchdog_s;
  g.main_armed = 0;
  g.main_fault = CpuCore::Fault{};
  g.interrupt_signo = 0;
  g.last_sim = sc_core::sc_time_stamp().value();
  g.last_advance_wall = wall_now();
  g.hang_requested = 0;
  CpuCore::clear_stop_request();

  // The handlers run on a stack of their own: a core that overflowed its
  // stack has none left.
  g.altstack = mmap(nullptr, kAltStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (g.altstack == MAP_FAILED) throw std::runtime_error("cannot allocate the signal stack");
  stack_t ss{};
  ss.ss_sp = g.altstack;
  ss.ss_size = kAltStackSize;
  sigaltstack(&ss, &g.old_altstack);

  for (size_t i = 0; i < std::size(kFaultSignals); ++i) install(kFaultSignals[i], on_fault, &g.old_fault[i]);
  for (size_t i = 0; i < std::size(kStopSignals); ++i) install(kStopSignals[i], on_stop_signal, &g.old_stop[i]);
  install(SIGALRM, on_tick, &g.old_alarm);
  // After every handler registered so far (the firmware's destructors
  // included): it runs first.
  on_exit(on_program_exit, nullptr);

  // Ticks often enough to see a hang within a quarter of the watchdog's
  // period, and to escalate a stop request after kGrace.
  const double tick = watchdog_s > 0 ? std::clamp(watchdog_s / 4, 0.05, kGrace / 2) : kGrace / 2;
  itimerval it{};
  it.it_interval.tv_sec = static_cast<time_t>(tick);
  it.it_interval.tv_usec = static_cast<suseconds_t>((tick - static_cast<double>(it.it_interval.tv_sec)) * 1e6);
  it.it_value = it.it_interval;
  setitimer(ITIMER_REAL, &it, &g.old_timer);
  g_active = 1;
}

Containment::~Containment() {
  g_active = 0;
  setitimer(ITIMER_REAL, &g.old_timer, nullptr);
  sigaction(SIGALRM, &g.old_alarm, nullptr);
  for (size_t i = 0; i < std::size(kStopSignals); ++i) sigaction(kStopSignals[i], &g.old_stop[i], nullptr);
  for (size_t i = 0; i < std::size(kFaultSignals); ++i) sigaction(kFaultSignals[i], &g.old_fault[i], nullptr);
  sigaltstack(&g.old_altstack, nullptr);
  munmap(g.altstack, kAltStackSize);
  g.altstack = nullptr;
  CpuCore::clear_stop_request();
}

sigjmp_buf& Containment::main_escape() { return g.main_escape; }
void Containment::arm_main(bool armed) { g.main_armed = armed ? 1 : 0; }
const CpuCore::Fault& Containment::main_fault() const { return g.main_fault; }
int Containment::interrupt_signal() const { return g.interrupt_signo; }
double Containment::watchdog_s() const { return g.watchdog_s; }

}  // namespace smmu_vp

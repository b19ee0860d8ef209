#include "cpu/cpu_cluster.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/payload.h"
#include "common/tlm_time.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace smmu_vp {

namespace {
// After an escape: ASan unpoisons the stack a longjmp leaves, but it was
// called on the signal stack, so the abandoned frames of the core's stack
// (below this function's frame, down to the guard) keep their redzones.
[[gnu::noinline]] void unpoison_abandoned_frames(uintptr_t stack_lo) {
#if defined(__SANITIZE_ADDRESS__)
  const uintptr_t here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (stack_lo && stack_lo < here) __asan_unpoison_memory_region(reinterpret_cast<void*>(stack_lo), here - stack_lo);
#else
  (void)stack_lo;
#endif
}
}  // namespace

CpuCore* CpuCore::current_ = nullptr;
volatile std::sig_atomic_t CpuCore::stop_request_ = 0;
volatile std::sig_atomic_t CpuCore::stop_acknowledged_ = 0;

namespace {
// Thrown by CpuCore::fatal, caught by CpuCore::run.
struct ProgramStopped {};

std::string stat(const CpuCore& c, const char* leaf) { return std::string(c.name()) + "." + leaf; }
}  // namespace

CpuCore::CpuCore(sc_core::sc_module_name name, unsigned id, CpuCluster& cluster)
    : sc_module(name),
      socket("socket"),
      id_(id),
      cluster_(cluster),
      cycle_ps_(ns_to_ps(1000.0 / cluster.config().frequency_mhz)),
      cfg_cpu_relax_cycles_(cluster.config().cpu_relax_cycles),
      clock_(ns_to_ps(cluster.config().quantum_ns)),
      track_("cpu" + std::to_string(id)),
      mmio_accesses_(cluster.stats().counter(stat(*this, "mmio_accesses"))),
      dram_accesses_(cluster.stats().counter(stat(*this, "dram_accesses"))),
      bus_errors_(cluster.stats().counter(stat(*this, "bus_errors"))),
      atomics_(cluster.stats().counter(stat(*this, "atomics"))),
      line_transfers_(cluster.stats().counter(stat(*this, "cacheline_transfers"))),
      wfe_(cluster.stats().counter(stat(*this, "wfe"))),
      wfe_sleep_ps_(cluster.stats().counter(stat(*this, "wfe_sleep_ps"))),
      wfi_sleep_ps_(cluster.stats().counter(stat(*this, "wfi_sleep_ps"))),
      irqs_taken_(cluster.stats().counter(stat(*this, "irqs_taken"))),
      spurious_irqs_(cluster.stats().counter(stat(*this, "spurious_irqs"))),
      // Only where polls sleep: with the plain loop nothing is skipped, and a
      // run keeps exactly the stats it had before hal_poll existed.
      poll_skipped_(cluster.config().poll_sleep ? &cluster.stats().counter(stat(*this, "poll_skipped_loads")) : nullptr),
      poll_skipped_reads_(cluster.config().poll_sleep ? &cluster.stats().counter(stat(*this, "poll_skipped_reads"))
                                                      : nullptr),
      line_retries_(cluster.config().line_queueing && cluster.config().line_retry_ns > 0
                        ? &cluster.stats().counter(stat(*this, "line_retries"))
                        : nullptr),
      line_retried_grants_(line_retries_ ? &cluster.stats().counter(stat(*this, "line_retried_grants")) : nullptr),
      line_rng_(0x9E3779B97F4A7C15ull * (id + 1)) {
  if (cycle_ps_ == 0) throw std::invalid_argument("cpu frequency too high: cycle rounds to 0 ps");
  // Built once: an `a | b` list is allocated on every wait.
  poll_wake_or_irq_ |= poll_wake_;
  poll_wake_or_irq_ |= cluster.intc().wake_event(id);
  SC_THREAD(run);
  set_stack_size(cluster.config().stack_kib * 1024);
  clock_.start_quantum(0);
}

void CpuCore::set_program(std::function<int()> entry, std::string label) {
  entry_ = std::move(entry);
  label_ = std::move(label);
}

void CpuCore::run() {
  if (!entry_) return;
  resumed();
  start_time_ = now();
  if (cluster_.trace()) program_slice_ = cluster_.trace()->begin(track_, label_, start_time_);
  process_ = sc_core::sc_get_current_process_b();
  find_stack_guard();
  if (run_guarded()) {
    unpoison_abandoned_frames(guard_hi_);
    current_ = this;
    abandon_polls();  // the program's frames are gone, a poll among them
    exit_code_ = -1;
    if (fault_.kind == StopKind::kInterrupted) {
      // Stopped where it was: the core did not finish, the run ends now.
      stop_acknowledged_ = 1;
      sc_core::sc_stop();
      return;
    }
    failure_ = describe_fault();
  }
  current_ = this;
  wait_local_time();
  current_ = this;
  finished_ = true;
  finish_time_ = now_ps();
  if (cluster_.trace()) cluster_.trace()->end(program_slice_, finish_time_);
  cluster_.core_done(*this);
}

// A signal handler's escape() lands in the sigsetjmp (returning non-zero)
// with fault_ filled in; the program's frames are abandoned, not unwound.
// Nothing but the jump buffer lives across it here, so no local can be
// clobbered (GCC's -Wclobbered, at -O1, flagged run()'s string temporaries).
bool CpuCore::run_guarded() {
  if (sigsetjmp(escape_, 1) == 0) {
    escape_armed_ = 1;
    exit_code_ = run_program();
    escape_armed_ = 0;
    return false;
  }
  escape_armed_ = 0;
  return true;
}

// Apart from run() so that nothing run() keeps across sigsetjmp changes.
int CpuCore::run_program() {
  try {
    return entry_();
  } catch (const ProgramStopped&) {
    return -1;
  }
}

bool CpuCore::is_running() const {
  return process_ != nullptr && sc_core::sc_get_current_process_b() == process_;
}

void CpuCore::escape(const Fault& f) {
  fault_ = f;
  siglongjmp(escape_, 1);
}

std::string CpuCore::describe_fault() const {
  const Fault& f = fault_;
  char when[64];
  std::snprintf(when, sizeof when, "at %.3f us simulated", ps_to_ns(f.at) / 1000.0);
  if (f.kind == StopKind::kHung)
    return std::string("hung: never yielded to the simulator (no HAL call advanced simulated time) for the "
                       "watchdog's period; stopped ") + when;
  if (f.kind == StopKind::kExited)
    return "called exit(" + std::to_string(f.signo) + ") " + when +
           ": a program ends by returning from its main function, not by ending the simulator's process";
  if (f.signo == SIGABRT)
    return std::string("crashed: SIGABRT (abort(), e.g. a failed assert) ") + when;
  const bool data = f.signo == SIGSEGV || f.signo == SIGBUS;
  const char* what = f.signo == SIGSEGV ? "SIGSEGV (invalid memory access)"
                     : f.signo == SIGBUS ? "SIGBUS (bus error)"
                     : f.signo == SIGFPE ? "SIGFPE (arithmetic fault, e.g. integer division by zero)"
                     : f.signo == SIGILL ? "SIGILL (illegal instruction)"
                                         : "a fatal signal";
  char buf[512];
  std::snprintf(buf, sizeof buf, "crashed: %s %s %#" PRIxPTR, what, data ? "at address" : "at instruction", f.addr);
  std::string s = buf;
  // Where the code was: the function and the image (firmware .so or smmu-vp).
  Dl_info info{};
  if (f.pc && dladdr(reinterpret_cast<void*>(f.pc), &info) && info.dli_fname) {
    const char* image = std::strrchr(info.dli_fname, '/');
    image = image ? image + 1 : info.dli_fname;
    if (info.dli_sname)
      std::snprintf(buf, sizeof buf, " in %s+%#" PRIxPTR " (%s)", info.dli_sname,
                    f.pc - reinterpret_cast<uintptr_t>(info.dli_saddr), image);
    else
      std::snprintf(buf, sizeof buf, " in %s+%#" PRIxPTR, image, f.pc - reinterpret_cast<uintptr_t>(info.dli_fbase));
    s += buf;
  }
  s += std::string(", ") + when;
  if (f.stack_overflow) {
    std::snprintf(buf, sizeof buf, " (stack overflow: the address is in the guard under the core's %" PRIu64
                  " KiB stack, platform.cpu.stack_kib)", cluster_.config().stack_kib);
    s += buf;
  } else if (f.signo == SIGSEGV && f.addr < 4096) {
    s += " (a NULL pointer dereference)";
  }
  return s;
}

void CpuCore::on_stop_request() {
  const auto kind = static_cast<StopKind>(stop_request_);
  if (kind == StopKind::kHung) {
    // The first core to get here is the one that kept the simulator from
    // advancing (it runs, time stands still); unwinds like fatal().
    stop_request_ = 0;
    fault_ = Fault{};
    fault_.kind = StopKind::kHung;
    fault_.signo = SIGALRM;
    fault_.at = now();
    failure_ = describe_fault();
    throw ProgramStopped{};
  }
  if (kind == StopKind::kInterrupted && !stop_acknowledged_) {
    stop_acknowledged_ = 1;
    sc_core::sc_stop();
  }
}

// SystemC 2.3.4 built with QuickThreads (Debian's libsystemc) mmaps each
// thread's stack and mprotects its lowest page (sc_cor_qt::stack_protect,
// called from sc_thread_process::prepare_for_simulation), so running off the
// end of a core's stack faults. A frame larger than a page can step over one
// page, though, so the lowest kExtraGuard bytes of the stack are protected
// too. The layout is checked in /proc/self/maps first: a PROT_NONE page right
// under the read-write mapping that holds this frame, no more than a stack's
// size below it; otherwise nothing is changed and a warning says so.
void CpuCore::find_stack_guard() {
  constexpr uintptr_t kExtraGuard = 64 * 1024;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  const uintptr_t stack_size = (cluster_.config().stack_kib * 1024 + page - 1) / page * page;
  std::ifstream maps("/proc/self/maps");
  uintptr_t prev_lo = 0, prev_hi = 0;
  bool prev_none = false;
  for (std::string line; std::getline(maps, line);) {
    uintptr_t lo = 0, hi = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %4s", &lo, &hi, perms) != 3) continue;
    if (frame >= lo && frame < hi) {
      if (prev_none && prev_hi == lo && frame - lo <= stack_size) {
        guard_lo_ = prev_lo;
        guard_hi_ = lo;
        if (frame - lo > 4 * kExtraGuard && mprotect(reinterpret_cast<void*>(lo), kExtraGuard, PROT_NONE) == 0) {
          extra_guard_ = lo;
          guard_hi_ = lo + kExtraGuard;
        }
      }
      break;
    }
    prev_lo = lo;
    prev_hi = hi;
    prev_none = std::strncmp(perms, "---", 3) == 0;
  }
  if (!guard_hi_)
    std::fprintf(stderr, "smmu-vp: warning: %s: found no guard page under this core's stack; a stack overflow may "
                 "corrupt memory instead of stopping the run\n", name());
}

CpuCore::~CpuCore() {
  // The stack may go back to an allocator: leave it as SystemC made it.
  if (extra_guard_) mprotect(reinterpret_cast<void*>(extra_guard_), 64 * 1024, PROT_READ | PROT_WRITE);
}

Ps CpuCore::idle_ps(Ps end) const {
  if (!entry_) return end;
  // Every term below lies in [0, end] for an `end` at or after the kernel's
  // time; the clamps only keep an earlier `end` (a query mid-run) sane.
  Ps idle = std::min(start_time_, end) + wfe_sleep_ps_.value() + wfi_sleep_ps_.value();
  if (asleep_ && end > sleep_start_) idle += end - sleep_start_;
  if (finished_ && end > finish_time_) idle += end - finish_time_;
  return std::min(idle, end);
}

void CpuCore::fatal(const std::string& why) {
  failure_ = why;
  throw ProgramStopped{};
}

// The kernel's time in picoseconds (a core has a TimeRank, so SystemC runs
// at 1 fs). It moves only while this core's thread waits: the core keeps
// it from its last resumption (resumed()).
Ps CpuCore::read_kernel_ps() { return sc_core::sc_time_stamp().value() / kRanksPerPs; }

Ps CpuCore::now() const { return clock_.now(kernel_ps_); }

void CpuCore::advance(Ps ps) {
  if (stop_request_) on_stop_request();
  clock_.advance(ps);
  if (clock_.need_sync(kernel_ps_)) sync();
}

// The quantum keeper's sync(), at this core's rank: wait out the local time,
// then start the next quantum.
void CpuCore::wait_local_time() {
  const Ps t = now();
  sc_core::wait(rank_.until(t));
  resumed();
  clock_.set_ahead(0);
  clock_.start_quantum(t);
}

void CpuCore::sync_now() {
  wait_local_time();
  if (!irq_masked_) take_interrupts();
}

void CpuCore::take_interrupts() {
  InterruptControllerCore& ic = cluster_.intc().core();
  int line;
  while ((line = ic.take_pending(id_, now())) >= 0) {
    const CpuCluster::IrqHandler* h = cluster_.irq_handler(static_cast<unsigned>(line));
    if (!h) {
      spurious_irqs_.add();
      continue;
    }
    irqs_taken_.add();
    const Ps t0 = now();
    TraceSink* tr = cluster_.trace();
    const TraceSink::SliceId slice = tr ? tr->begin(track_, "irq " + std::to_string(line), t0, {{"line", line}}) : 0;
    irq_masked_ = true;
    (*h)(static_cast<unsigned>(line));
    irq_masked_ = false;
    if (tr) tr->end(slice, now());
    // Whoever took the interrupt goes on from the handler's last
    // synchronisation, with the kernel there, as if none had been skipped:
    // it may next wake another process (SEV, a register write) at once.
    catch_up();
  }
}

bool CpuCore::access(bool is_write, uint64_t addr, void* data, unsigned len) {
  const bool dram = cluster_.is_dram(addr, len);
  if (!dram) sync();
  else if (is_write && cluster_.has_pollers()) catch_up();
  (dram ? dram_accesses_ : mmio_accesses_).add();
  prepare_access(trans_, is_write, addr, data, len);
  sc_core::sc_time delay = ps_to_sc(clock_.ahead());
  socket->b_transport(trans_, delay);
  kernel_ps_ = read_kernel_ps();  // in case the target waited
  clock_.set_ahead(sc_to_ps(delay));
  const bool ok = trans_.is_response_ok();
  if (!ok) {
    bus_errors_.add();
    if (!is_write) std::memset(data, 0xff, len);
  }
  if (clock_.need_sync(kernel_ps_)) sync();
  return ok;
}

bool CpuCore::get_dmi(uint64_t addr, tlm::tlm_dmi& dmi) {
  tlm::tlm_generic_payload t;
  t.set_command(tlm::TLM_READ_COMMAND);
  t.set_address(addr);
  t.set_data_length(1);
  return socket->get_direct_mem_ptr(t, dmi);
}

// A synchronisation before an access to memory alone (a shared load, an
// atomic, a barrier). When no other process can run before this core's time
// (TimeRank::alone_until), waiting would only resume this core there: it
// starts its next quantum without the wait, and the kernel stays behind
// until the core's next real synchronisation. What follows happens as after
// the wait, with two exceptions that would show the kernel's time to
// another core, handled by really synchronising: a write to a line a core
// polls (`written`), which wakes the poller now, and a bus write to memory
// while a core polls (access(), catch_up()). A bus access to a device
// synchronises anyway.
void CpuCore::sync_memory(const volatile void* written) {
  if (stop_request_) on_stop_request();
  const Ps t = now();
  // Not while a stop is under way (the kernel must reach sc_stop), and not
  // a quantum or more ahead of the kernel (its time must move on for the
  // watchdog and the progress line even in a loop of atomics alone).
  if (!stop_request_ && clock_.ahead() < clock_.quantum() && !(written && cluster_.line_polled(written)) &&
      rank_.alone_until(t)) {
    unwaited_ = t;
    clock_.start_quantum(t);
    if (!irq_masked_) take_interrupts();
    return;
  }
  sync_now();
}

// The wait sync_memory() left out, to the time it was due: the kernel is
// where it would have been, the core ahead of it by what it ran since.
// Nothing can have become due before then (only this core ran since).
void CpuCore::catch_up() {
  if (unwaited_ <= kernel_ps_) return;
  const Ps t = now();
  sc_core::wait(rank_.until(unwaited_));
  resumed();
  clock_.set_ahead(t - unwaited_);
}

// Between a core and the home node of the first die, where a device's line
// (CpuCluster::device_write_ns) and a far atomic's line sit: as between the
// core and a core of the first die in no core's cluster.
namespace {
double home_transfer_ns(const CpuConfig& cfg, unsigned core) {
  if (cfg.cluster_cores >= cfg.count) return cfg.cacheline_transfer_ns;
  return core / cfg.die_cores == 0 ? cfg.cacheline_transfer_die_ns : cfg.cacheline_transfer_remote_ns;
}
}  // namespace

// What moving a line to `cpu` costs when `others` hold it: a write waits
// for the farthest copy to be given up, a load takes the line from the
// nearest core that has it.
double line_transfer_ns(const CpuConfig& cfg, unsigned cpu, const CoreSet& others, bool is_write) {
  // One cluster holds every core (the default): no holder to look at.
  if (cfg.cluster_cores >= cfg.count) return cfg.cacheline_transfer_ns;
  auto cost_from = [&](unsigned other) {
    if (other >= cfg.count) return home_transfer_ns(cfg, cpu);
    if (other / cfg.cluster_cores == cpu / cfg.cluster_cores) return cfg.cacheline_transfer_ns;
    if (other / cfg.die_cores == cpu / cfg.die_cores) return cfg.cacheline_transfer_die_ns;
    return cfg.cacheline_transfer_remote_ns;
  };
  double cost = is_write ? 0.0 : -1.0;
  others.for_each([&](unsigned c) {
    const double ns = cost_from(c);
    cost = is_write ? std::max(cost, ns) : (cost < 0 ? ns : std::min(cost, ns));
  });
  return cost;
}

// A structure walked again and again keeps in each cache level the part of
// its working set that level can hold (a cyclic walk through a cache that is
// not strictly LRU keeps about that share; strict LRU would keep none). So of
// the walk's objects, the share beyond the private caches misses them: the
// share up to the shared cache's size is served there, the rest by memory.
double walk_miss_ns(const CpuConfig& cfg, uint64_t objects, uint64_t footprint_bytes) {
  const uint64_t priv = cfg.private_cache_kib * 1024;
  if (priv == 0 || objects == 0 || footprint_bytes <= priv) return 0.0;
  const uint64_t shared = cfg.shared_cache_kib * 1024;
  const uint64_t in_shared = shared > priv ? std::min(footprint_bytes, shared) - priv : 0;
  const uint64_t in_memory = footprint_bytes - priv - in_shared;
  return static_cast<double>(objects) *
         (static_cast<double>(in_shared) * cfg.shared_cache_ns + static_cast<double>(in_memory) * cfg.memory_load_ns) /
         static_cast<double>(footprint_bytes);
}

void CpuCore::before_shared_access(const volatile void* addr, SharedAccess kind) {
  const bool is_write = kind != SharedAccess::kLoad;
  sync_memory(is_write ? addr : nullptr);
  atomics_.add();
  const CpuConfig& cfg = cluster_.config();
  // A far atomic (cpu.far_atomics; the configuration refuses it beyond
  // CoherenceTracker::kMaxCores - 1 cores) is done at the line's home node.
  const bool at_home = kind == SharedAccess::kAtomic && cfg.far_atomics;
  if (line_retries_) {
    retry_for_line(addr, is_write, at_home);
    return;
  }
  Ps cost = 0;
  const CoreSet others = take_line(addr, is_write, at_home, cost);
  if (!others.empty()) {
    line_transfers_.add();
    const Ps transfer = ns_to_ps(line_transfer_ns(cfg, id_, others, is_write));
    if (cfg.line_queueing) {
      // Behind the transfers already under way; the line is then this
      // core's for the transfer and the access. A core that had to wait
      // pays only the hand-off from the previous holder.
      CoherenceTracker& coherence = cluster_.coherence();
      CoherenceTracker::Occupancy& line = coherence.occupancy(reinterpret_cast<uintptr_t>(addr));
      const Ps t = now();
      const bool queued = line.busy_until > t;
      const Ps start = queued ? line.busy_until : t;
      // (Not for a far atomic: nothing is handed from cache to cache.)
      const Ps moved = queued && cfg.queued_handoff_share < 1.0 && !at_home
                           ? static_cast<Ps>(static_cast<double>(transfer) * cfg.queued_handoff_share)
                           : transfer;
      coherence.occupy(line, start, start + moved + cost);
      cost += (start - t) + moved;
    } else {
      cost += transfer;
    }
  }
  // The access itself happens now; the core then pays for it.
  clock_.advance(cost);
}

// The access made: the line's copies updated (a far atomic, at_home, sends
// every copy back to the home node, an id no core has: the id a device's line
// also takes, both sitting with the first die) and a write shown to the
// cores polling the line. Returns the holders it involved and sets `cost` to
// the access's own time.
CoreSet CpuCore::take_line(const volatile void* addr, bool is_write, bool at_home, Ps& cost) {
  CoherenceTracker& coherence = cluster_.coherence();
  const CpuConfig& cfg = cluster_.config();
  const auto a = reinterpret_cast<uintptr_t>(addr);
  const CoreSet others = at_home ? coherence.to_home(a, id_, cfg.count) : coherence.holders(a, id_, is_write);
  if (is_write) cluster_.core_wrote(addr);
  cost = (is_write ? cfg.atomic_cycles : cfg.shared_load_cycles) * cycle_ps_;
  return others;
}

// A busy line granted in no fixed order (cpu.line_retry_ns), as by a home
// node that keeps a request only while no other waits and answers the rest
// with a retry. A kept request takes the line as it frees; a retried one
// tries again after a random delay, so the retried cores get it in no fixed
// order, and pays the home node's grant (cpu.line_retry_grant_ns). Each try
// synchronises, so tries meet in time order, and the access happens when
// the core gets the line. Two cores passing a line back and forth never
// have a request retried.
constexpr unsigned kHomeNodeKeeps = 1;

void CpuCore::retry_for_line(const volatile void* addr, bool is_write, bool at_home) {
  const CpuConfig& cfg = cluster_.config();
  CoherenceTracker& coherence = cluster_.coherence();
  const auto a = reinterpret_cast<uintptr_t>(addr);
  const Ps window = ns_to_ps(cfg.line_retry_ns);
  // Nothing to wait for when no other core holds what the access needs and
  // none waits for the line. A write while others wait queues like theirs,
  // even the holder's: their requests are at the home node first, which
  // takes the line from its holder as soon as the holder's access is done.
  // (A load of a copy the core holds is a hit and waits for nobody.)
  struct Waiting {
    CoherenceTracker& coherence;
    uintptr_t a;
    bool on = false, retried = false;
    // Also on the way out of a stopped program: a waiter left counted would
    // make every later access to the line retry.
    ~Waiting() {
      if (!on) return;
      CoherenceTracker::Occupancy& line = coherence.occupancy(a);
      --line.waiters;
      if (!retried) --line.kept;
    }
  } w{coherence, a};
  while (at_home || coherence.others_hold(a, id_, is_write) ||
         (!w.on && is_write && coherence.occupancy(a).waiters > 0)) {
    const Ps t = now();
    CoherenceTracker::Occupancy& line = coherence.occupancy(a);
    if (line.busy_until <= t && (w.on || line.waiters == 0)) break;
    // A kept request whose line has freed is being served, not waiting; a
    // request kept behind it comes after it.
    const unsigned served = line.busy_until <= t && line.kept > 0 ? 1 : 0;
    if (!w.on) {
      w.on = true;
      w.retried = line.waiters - served >= kHomeNodeKeeps;
      ++line.waiters;
      if (!w.retried) ++line.kept;
    }
    line_retries_->add();
    clock_.advance(std::max(line.busy_until, t) - t + (w.retried ? random_below(window) : served) + 1);
    sync_memory(is_write ? addr : nullptr);
  }
  const bool retried = w.retried;
  Ps cost = 0;
  const CoreSet others = take_line(addr, is_write, at_home, cost);
  if (!others.empty()) {
    line_transfers_.add();
    if (retried) line_retried_grants_->add();
    const double grant_ns = retried ? cfg.line_retry_grant_ns : 0.0;
    const Ps transfer = ns_to_ps(line_transfer_ns(cfg, id_, others, is_write) + grant_ns);
    const Ps t = now();
    coherence.occupy(coherence.occupancy(a), t, t + transfer + cost);
    cost += transfer;
  }
  clock_.advance(cost);
}

// Uniform in [0, bound), from this core's own xorshift64* stream: the same
// run draws the same delays.
Ps CpuCore::random_below(Ps bound) {
  if (bound == 0) return 0;
  line_rng_ ^= line_rng_ >> 12;
  line_rng_ ^= line_rng_ << 25;
  line_rng_ ^= line_rng_ >> 27;
  return (line_rng_ * 0x2545F4914F6CDD1Dull) % bound;
}

void CpuCore::barrier(Barrier kind) {
  sync_memory(nullptr);
  const CpuConfig& cfg = cluster_.config();
  switch (kind) {
    case Barrier::kDmb: cycles(cfg.dmb_cycles); break;
    case Barrier::kDsb: cycles(cfg.dsb_cycles); break;
    case Barrier::kIsb: cycles(cfg.isb_cycles); break;
  }
}

void CpuCore::wfe() {
  wfe_.add();
  sync();
  if (event_register_) {
    event_register_ = false;
    return;
  }
  const Ps t0 = now();
  asleep_ = true;
  sleep_start_ = t0;
  TraceSink* tr = cluster_.trace();
  const TraceSink::SliceId slice = tr ? tr->begin(track_, "wfe", t0) : 0;
  const double stream_ns = cluster_.config().event_stream_ns;
  sc_core::sc_event_or_list wake = cluster_.sev_event() | cluster_.intc().wake_event(id_);
  if (stream_ns > 0.0) {
    // The event stream ticks on a global grid, so wake-ups are deterministic.
    const Ps period = ns_to_ps(stream_ns);
    const Ps next_tick = (t0 / period + 1) * period;
    sc_core::wait(rank_.until(next_tick), wake);
  } else {
    sc_core::wait(wake);
  }
  resumed();
  asleep_ = false;
  event_register_ = false;
  const Ps slept = now() - t0;
  wfe_sleep_ps_.add(slept);
  end_sleep_slice(slice, t0, t0 + slept);
  if (!irq_masked_) take_interrupts();
}

void CpuCore::wfi() {
  sync();
  const Ps t0 = now();
  asleep_ = true;
  sleep_start_ = t0;
  TraceSink* tr = cluster_.trace();
  const TraceSink::SliceId slice = tr ? tr->begin(track_, "wfi", t0) : 0;
  InterruptControllerCore& ic = cluster_.intc().core();
  for (;;) {
    const Ps pending = ic.next_pending(id_);
    const Ps t = now();
    if (pending <= t) break;
    if (pending == InterruptControllerCore::kNotPending) sc_core::wait(cluster_.intc().wake_event(id_));
    else sc_core::wait(rank_.until(pending), cluster_.intc().wake_event(id_));
    resumed();
  }
  asleep_ = false;
  const Ps slept = now() - t0;
  wfi_sleep_ps_.add(slept);
  end_sleep_slice(slice, t0, t0 + slept);
  if (!irq_masked_) take_interrupts();
}

// A sleep that lasted no time (the event or interrupt was there) is not shown.
void CpuCore::end_sleep_slice(TraceSink::SliceId slice, Ps from, Ps to) {
  TraceSink* tr = cluster_.trace();
  if (!tr) return;
  if (to > from) tr->end(slice, to);
  else tr->discard(slice);
}

void CpuCore::sev() {
  sync();
  cluster_.send_event();
}

unsigned CpuCore::irq_save() {
  const unsigned was = irq_masked_ ? 1u : 0u;
  irq_masked_ = true;
  return was;
}

void CpuCore::irq_restore(unsigned flags) {
  irq_masked_ = flags != 0;
  if (!irq_masked_) take_interrupts();
}

CpuCluster::CpuCluster(sc_core::sc_module_name name, const CpuConfig& cfg, uint64_t dram_base,
                       uint64_t dram_size, InterruptController& intc, StatsRegistry& stats, TraceSink* trace)
    : sc_module(name),
      cfg_(cfg),
      dram_base_(dram_base),
      dram_size_(dram_size),
      intc_(intc),
      stats_(stats),
      trace_(trace),
      handlers_(intc.core().lines()) {
  if (cfg_.count == 0 || cfg_.count > CoherenceTracker::kMaxCores)
    throw std::invalid_argument("cpu count must be 1.." + std::to_string(CoherenceTracker::kMaxCores));
  tlm::tlm_global_quantum::instance().set(ps_to_sc(ns_to_ps(cfg_.quantum_ns)));  // for the DMA engine
  for (unsigned i = 0; i < cfg_.count; ++i)
    cores_.push_back(std::make_unique<CpuCore>(("cpu" + std::to_string(i)).c_str(), i, *this));
}

void CpuCluster::finalize(Ps end) {
  for (auto& c : cores_) {
    c->count_polls_slept_through(end);
    stats_.value(stat(*c, "busy_ns")) = ps_to_ns(c->busy_ps(end));
    stats_.value(stat(*c, "idle_ns")) = ps_to_ns(c->idle_ps(end));
    stats_.value(stat(*c, "utilisation")) = c->utilisation(end);
  }
  if (cfg_.line_queueing) finalize_lines(end);
}

// With line_queueing a line is a server of its own: each named one's
// transfers and busy share (of its busiest line), and the busiest line no
// name covers, as cpus.lines.<name>.*; platform/bounds.cc reads them.
void CpuCluster::finalize_lines(Ps end) {
  auto put = [&](const CoherenceTracker::NamedUse& u) {
    const std::string p = "cpus.lines." + u.name + ".";
    stats_.value(p + "transfers") = static_cast<double>(u.transfers);
    if (end > 0) stats_.value(p + "busy_share") = static_cast<double>(u.busy) / static_cast<double>(end);
    if (coherence_.has_window())
      stats_.value(p + "busy_share_in_window") =
          static_cast<double>(u.busy_in_window) / static_cast<double>(coherence_.window_length());
  };
  for (const auto& u : coherence_.named_use()) put(u);
  put(coherence_.busiest_unnamed());
}

void CpuCluster::remove_poller(CpuCore& c) {
  auto it = std::find(pollers_.begin(), pollers_.end(), &c);
  if (it == pollers_.end()) return;
  *it = pollers_.back();
  pollers_.pop_back();
}

double CpuCluster::device_write_ns(const void* p, uint64_t len) {
  if (len == 0 || cfg_.count >= CoherenceTracker::kMaxCores) return 0.0;
  const unsigned device = cfg_.count;  // no core has this id
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) >> CoherenceTracker::kLineShift;
  const uintptr_t last = (reinterpret_cast<uintptr_t>(p) + len - 1) >> CoherenceTracker::kLineShift;
  double ns = 0.0;
  for (uintptr_t line = first; line <= last; ++line) {
    const CoreSet others = coherence_.holders(line << CoherenceTracker::kLineShift, device, true);
    others.for_each([&](unsigned c) {
      if (c != device) ns = std::max(ns, home_transfer_ns(cfg_, c));
    });
  }
  return ns;
}

bool CpuCluster::line_polled(const volatile void* addr) const {
  const auto a = reinterpret_cast<uintptr_t>(addr);
  for (const CpuCore* c : pollers_)
    if (c->polls_line(a)) return true;
  return false;
}

// The writer too: a handler on a polling core may write the polled line.
void CpuCluster::wake_pollers_of_line(uintptr_t addr) {
  for (CpuCore* c : pollers_)
    if (c->polls_line(addr)) c->poll_changed();
}

void CpuCluster::wake_pollers_of_bytes(uintptr_t p, uint64_t len) {
  for (CpuCore* c : pollers_)
    if (c->polls_bytes(p, p + len)) c->poll_changed();
}

void CpuCluster::send_event() {
  for (auto& c : cores_) c->set_event_register();
  sev_event_.notify(sc_core::SC_ZERO_TIME);
}

bool CpuCluster::set_irq_handler(unsigned line, IrqHandler handler) {
  if (line >= handlers_.size() || handlers_[line]) return false;
  handlers_[line] = std::move(handler);
  return true;
}

bool CpuCluster::clear_irq_handler(unsigned line) {
  if (line >= handlers_.size() || !handlers_[line]) return false;
  handlers_[line] = nullptr;
  return true;
}

const CpuCluster::IrqHandler* CpuCluster::irq_handler(unsigned line) const {
  return (line < handlers_.size() && handlers_[line]) ? &handlers_[line] : nullptr;
}

}  // namespace smmu_vp

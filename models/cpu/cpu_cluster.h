// CPU cores that run sw/ code. Each core is an SC_THREAD executing a C entry
// point; the HAL (platform/hal_backend) turns sw/ calls into the methods below.
//
// Time: each core keeps a local offset ahead of sc_time_stamp() (TLM-2.0
// temporal decoupling with a quantum keeper). Compute annotations and DRAM
// accesses add to it; MMIO accesses, atomics, barriers, WFE/WFI synchronise
// first. Interrupts are taken at synchronisation points and while sleeping.
//
// Busy / idle: a core is idle before its program starts, while asleep in WFE
// or WFI, and after its program returns (the whole run without a program);
// it is busy the rest of the time (running, spinning, polling MMIO). Sleeps
// are measured on the same synchronised time base as the wfe/wfi sleep
// counters, so accounting adds no wait and changes no timing.
#pragma once

#include <csetjmp>
#include <csignal>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "common/register_watch.h"
#include "common/sim_time.h"
#include "common/stats.h"
#include "common/tlm_time.h"
#include "common/trace.h"
#include "cpu/coherence.h"
#include "cpu/core_clock.h"
#include "cpu/interrupt_controller.h"

namespace smmu_vp {

struct CpuConfig {
  unsigned count = 4;
  double frequency_mhz = 2000.0;
  double quantum_ns = 500.0;           // max local time ahead of the kernel
  uint64_t shared_load_cycles = 4;     // hal_load* of a line this core holds
  uint64_t atomic_cycles = 20;         // store / RMW on a line this core owns
  double cacheline_transfer_ns = 40.0; // line held by another core of the same cluster
  // Where cores sit, for the cost of a line that moves between them: cores
  // [k*cluster_cores, (k+1)*cluster_cores) share a cluster, and likewise for
  // dies. The defaults put every core in one cluster of one die.
  unsigned cluster_cores = 64;
  unsigned die_cores = 64;
  double cacheline_transfer_die_ns = 40.0;    // from another cluster of the same die
  double cacheline_transfer_remote_ns = 40.0; // from another die
  // A line serves one transfer at a time: a core that needs a line while
  // another core's transfer of it is under way waits for that to finish.
  bool line_queueing = false;
  // With line_queueing, the share of a transfer that a core already waiting
  // for the line pays when the line comes on to it: its request is already
  // at the home node, so only the data's hop from the previous holder is
  // left (1: the whole transfer, as for an idle line).
  double queued_handoff_share = 1.0;
  // With line_queueing, how a busy line is granted: 0, first come first
  // served (each request queues behind the transfers under way); > 0, the
  // home node keeps a request only while no other waits and retries the
  // rest, a retried core trying again once the line frees after a random
  // delay below this many ns, so the retried cores get it in no fixed
  // order; each access happens when its core gets the line.
  double line_retry_ns = 0.0;
  // With line_retry_ns: what the grant to a core that had to retry adds to
  // its transfer (the home node's answer to the retried request before the
  // line moves); the line is busy for it too.
  double line_retry_grant_ns = 0.0;
  // An atomic read-modify-write is performed at the line's home node (the
  // shared cache, taken to sit with the first die): the core pays the
  // transfer from there whatever it held, and afterwards no core holds the
  // line. Loads and stores still bring the line into the core's cache.
  bool far_atomics = false;
  uint64_t dmb_cycles = 10;
  uint64_t dsb_cycles = 40;
  uint64_t isb_cycles = 20;
  uint64_t cpu_relax_cycles = 10;
  double event_stream_ns = 100000.0;   // periodic WFE wake-up; 0 disables
  uint64_t stack_kib = 1024;           // host stack of each core's thread
  // Caches as hal_cost_walk sees them (a core re-walking a pointer-linked
  // structure): what the core's private caches and its share of the shared
  // cache hold, and the load latency of an object that only the shared cache
  // or only memory holds. private_cache_kib 0 (default): no cache model, a
  // walk costs only what its code charges per step.
  uint64_t private_cache_kib = 0;
  uint64_t shared_cache_kib = 0;
  double shared_cache_ns = 0.0;
  double memory_load_ns = 0.0;
  bool poll_sleep = true;              // CpuCore::poll sleeps between polls that cannot see a change
};

// The extra cost of an access by `cpu` to a line that the cores in `others`
// (CoherenceTracker::holders) hold, by where they sit.
double line_transfer_ns(const CpuConfig& cfg, unsigned cpu, const CoreSet& others, bool is_write);

// The memory time, beyond cache hits, of one walk over `objects` distinct
// objects whose working set is `footprint_bytes`, on a structure the core
// walks again and again (hal_cost_walk): the part of the working set the
// private caches cannot hold comes from the shared cache while it fits there,
// the rest from memory, each object charged the latency of where it lives.
// 0 without a cache model (private_cache_kib 0).
double walk_miss_ns(const CpuConfig& cfg, uint64_t objects, uint64_t footprint_bytes);

class CpuCluster;

class CpuCore : public sc_core::sc_module {
 public:
  enum class Barrier { kDmb, kDsb, kIsb };

  tlm_utils::simple_initiator_socket<CpuCore> socket;

  SC_HAS_PROCESS(CpuCore);
  CpuCore(sc_core::sc_module_name name, unsigned id, CpuCluster& cluster);
  ~CpuCore() override;

  // The core whose thread is running now; nullptr outside sw/ code.
  static CpuCore* current() { return current_; }

  // Program to run: set before simulation starts. A core without one idles.
  void set_program(std::function<int()> entry, std::string label);
  bool has_program() const { return static_cast<bool>(entry_); }

  unsigned id() const { return id_; }
  const std::string& label() const { return label_; }

  // ---- time
  Ps now() const;
  void advance(Ps ps);
  void cycles(uint64_t n) { advance(n * cycle_ps_); }
  Ps cycle_ps() const { return cycle_ps_; }
  void sync() {
    if (stop_request_) on_stop_request();
    sync_now();
  }

  // ---- bus: false on a bus error (data of a failed read is all ones)
  bool access(bool is_write, uint64_t addr, void* data, unsigned len);
  uint64_t bus_errors() const { return bus_errors_.value(); }
  // Direct memory interface for `addr` through the core's socket (the router
  // forwards it to DRAM); false when the target does not grant one.
  bool get_dmi(uint64_t addr, tlm::tlm_dmi& dmi);

  // ---- shared memory: call before performing a load, a store or an
  // atomic read-modify-write on `addr`
  enum class SharedAccess { kLoad, kStore, kAtomic };
  void before_shared_access(const volatile void* addr, SharedAccess kind);
  void barrier(Barrier kind);
  void cpu_relax() { cycles(cfg_cpu_relax_cycles_); }

  // ---- polling (hal_poll32/64, sw/hal/hal.h): exactly the loop
  //   for (n = 0; max_polls == 0 || n < max_polls; ++n) {
  //     v = load(p);  // before_shared_access(p, kLoad), then the load
  //     if (((v & mask) == value) != until_ne) break;
  //     cpu_relax();
  //   }
  // `size` is 4 or 8. Between two loads that find the line held and the
  // word unchanged, the core sleeps instead of synchronising at every poll
  // (poll_sleep in the configuration): until another core's HAL write to
  // the line, a DRAM write over the word (memory_written), an interrupt due
  // for it or the last poll, then resumes on the loop's poll grid.
  struct PollResult {
    uint64_t value;
    unsigned polls;
  };
  PollResult poll(const volatile void* p, unsigned size, uint64_t mask, uint64_t value, bool until_ne,
                  unsigned max_polls);
  // For CpuCluster: whether this core polls the line of `addr` / bytes of
  // [lo, hi), and telling it that the polled word may have changed.
  bool polls_line(uintptr_t addr) const { return (addr >> CoherenceTracker::kLineShift) == poll_.line; }
  bool polls_bytes(uintptr_t lo, uintptr_t hi) const { return lo < poll_.hi && poll_.lo < hi; }
  void poll_changed() {
    poll_.changed = true;
    poll_wake_.notify();
  }
  // hal_read_poll32 (sw/hal/hal.h): exactly the loop
  //   for (n = 0; max_polls == 0 || n < max_polls; ++n) {
  //     v = read(addr);  // access(false, addr, &v, 4)
  //     if (done(v)) break;
  //     cpu_relax();
  //   }
  // Where the device behind `addr` can watch the register
  // (common/register_watch.h) and polls sleep (poll_sleep), the core sleeps
  // between reads until the device reports a value that ends the poll, an
  // interrupt is due or the last read comes, and resumes on the loop's grid.
  // `done` must depend on its argument alone: the device calls it too.
  PollResult read_poll(uint64_t addr, const std::function<bool(uint64_t)>& done, unsigned max_polls);
  // Asleep in a poll with no bound: the loop would spin until the run ends.
  bool polls_forever() const { return sleep_.active && sleep_.forever; }
  // At the end of a run: counts the loads a poll asleep since g0 would have
  // made by `end`, as the loop would have counted them.
  void count_polls_slept_through(Ps end);

  // ---- events and interrupts
  void wfe();
  void wfi();
  void sev();
  unsigned irq_save();
  void irq_restore(unsigned flags);
  void set_event_register() { event_register_ = true; }

  // Stops this core's program with an error; the run ends with it. Unwinds
  // the core's stack back to its thread function (sw/ C code is compiled with
  // unwind tables for this), so nothing the program held is left behind.
  [[noreturn]] void fatal(const std::string& why);

  // ---- containment (platform/containment.h). A program that crashes or
  // never yields is stopped from a signal handler: the handler fills a Fault
  // and escape()s, a siglongjmp back into run() on this core's own stack, so
  // the core ends like a failed program and the simulation winds down
  // normally. Everything marked async-signal-safe only reads plain members.
  // kExited: the program called exit() (signo holds its status).
  enum class StopKind : int { kNone = 0, kCrashed, kHung, kInterrupted, kExited };
  struct Fault {
    StopKind kind = StopKind::kNone;
    int signo = 0;          // the host signal (SIGSEGV, SIGALRM for the watchdog, SIGINT ...)
    int code = 0;           // its si_code
    uintptr_t addr = 0;     // si_addr: the faulting address
    uintptr_t pc = 0;       // the instruction that faulted (0: unknown)
    Ps at = 0;              // the core's simulated time then
    bool stack_overflow = false;  // `addr` lies in the guard below the core's stack
  };
  // Whether this core's thread is the SystemC process running now (async-signal-safe).
  bool is_running() const;
  // Whether run() can take an escape now: the program is under way (async-signal-safe).
  bool escapable() const { return escape_armed_ != 0; }
  // Whether `addr` is in the guard pages under this core's stack (async-signal-safe).
  bool in_stack_guard(uintptr_t addr) const { return addr >= guard_lo_ && addr < guard_hi_; }
  // Async-signal-safe; only from a signal handler running for this core's thread.
  [[noreturn]] void escape(const Fault& f);
  const Fault& fault() const { return fault_; }
  // Asks every core to stop at its next synchronisation point (set from a
  // signal handler): kHung fails the first core that sees it, kInterrupted
  // stops the simulation (sc_stop) leaving the cores where they are.
  static void request_stop(StopKind kind) { stop_request_ = static_cast<int>(kind); }
  static void clear_stop_request() { stop_request_ = 0; stop_acknowledged_ = 0; }

  // ---- outcome
  bool finished() const { return finished_; }
  int exit_code() const { return exit_code_; }
  const std::string& failure() const { return failure_; }
  Ps finish_time() const { return finish_time_; }

  // ---- busy / idle over [0, end], `end` the simulated end of the run (ps).
  // idle_ps(end) + busy_ps(end) == end; a sleep still under way at `end`
  // counts as idle up to `end`, a program still running as busy.
  Ps idle_ps(Ps end) const;
  Ps busy_ps(Ps end) const { return end - idle_ps(end); }
  // busy / end; 0 for a run of no time.
  double utilisation(Ps end) const {
    return end ? static_cast<double>(busy_ps(end)) / static_cast<double>(end) : 0.0;
  }

 private:
  void run();
  bool run_guarded();  // runs the program; true when a fault escaped from it
  int run_program();
  void on_stop_request();
  void sync_now();
  void sync_memory(const volatile void* written);
  void catch_up();
  void wait_local_time();
  void find_stack_guard();
  std::string describe_fault() const;
  void take_interrupts();
  void end_sleep_slice(TraceSink::SliceId slice, Ps from, Ps to);
  // After every wait of this core's thread: the running core, and the
  // kernel's time now.
  void resumed() {
    current_ = this;
    kernel_ps_ = read_kernel_ps();
  }
  static Ps read_kernel_ps();
  struct PollGrid;
  struct PollScope;
  class RegisterPollWatch;
  uint64_t skip_polls(uint64_t left);
  uint64_t sleep_on_grid(const PollGrid& g, uint64_t left, bool mmio);
  // After an escape from the program: its polls' frames are gone.
  void abandon_polls();
  void unwatch_registers(size_t n);

  static CpuCore* current_;
  static volatile std::sig_atomic_t stop_request_;       // a StopKind
  static volatile std::sig_atomic_t stop_acknowledged_;  // kInterrupted: sc_stop issued

  sigjmp_buf escape_;
  volatile std::sig_atomic_t escape_armed_ = 0;
  Fault fault_;
  sc_core::sc_process_b* process_ = nullptr;
  uintptr_t guard_lo_ = 0, guard_hi_ = 0;  // guard pages under the stack
  uintptr_t extra_guard_ = 0;              // start of the pages find_stack_guard() protected

  unsigned id_;
  CpuCluster& cluster_;
  Ps cycle_ps_;
  uint64_t cfg_cpu_relax_cycles_;
  CoreClock clock_;
  Ps kernel_ps_ = 0;  // the kernel's time when this core last resumed
  Ps unwaited_ = 0;  // the time of the last synchronisation sync_memory() left out
  TimeRank rank_;  // where this core's timed waits fall within a picosecond
  tlm::tlm_generic_payload trans_;
  std::function<int()> entry_;
  std::string label_;
  std::string track_;
  bool event_register_ = false;
  bool irq_masked_ = false;
  bool finished_ = false;
  int exit_code_ = 0;
  std::string failure_;
  Ps start_time_ = 0;
  Ps finish_time_ = 0;
  bool asleep_ = false;  // in WFE/WFI since sleep_start_
  Ps sleep_start_ = 0;
  TraceSink::SliceId program_slice_ = 0;  // the program's slice, open until it returns

  // The poll in progress (poll(), read_poll()); `line` ~0 when none.
  struct PollWatch {
    uintptr_t line = ~uintptr_t{0};
    uintptr_t lo = 0, hi = 0;  // the polled word's bytes
    bool changed = false;      // written since the last load (read)
  };
  PollWatch poll_;
  void set_poll(const PollWatch& w);
  // Register polls under way (read_poll), innermost last.
  std::vector<std::pair<WatchableRegisters*, RegisterWatch*>> register_watches_;
  // The sleep in progress in skip_polls: the loop's grid from g0.
  struct PollSleep {
    bool active = false;
    bool forever = false;  // no timeout: nothing but a change ends it
    Ps g0 = 0, period = 0;
    bool mmio = false;  // a register poll
  };
  PollSleep sleep_;
  sc_core::sc_event poll_wake_;
  sc_core::sc_event_or_list poll_wake_or_irq_;  // poll_wake_ or the controller's wake event, built once

  Counter& mmio_accesses_;
  Counter& dram_accesses_;
  Counter& bus_errors_;
  Counter& atomics_;
  Counter& line_transfers_;
  Counter& wfe_;
  Counter& wfe_sleep_ps_;
  Counter& wfi_sleep_ps_;
  Counter& irqs_taken_;
  Counter& spurious_irqs_;
  Counter* poll_skipped_;  // null when poll_sleep is off
  Counter* poll_skipped_reads_;  // the same, for register polls
  Counter* line_retries_;  // null unless line_queueing with cpu.line_retry_ns > 0
  Counter* line_retried_grants_;  // likewise: grants to retried requests
  uint64_t line_rng_;      // the retry delays' xorshift state, per core
  void retry_for_line(const volatile void* addr, bool is_write, bool at_home);
  CoreSet take_line(const volatile void* addr, bool is_write, bool at_home, Ps& cost);
  Ps random_below(Ps bound);
};

class CpuCluster : public sc_core::sc_module {
 public:
  using IrqHandler = std::function<void(unsigned line)>;

  CpuCluster(sc_core::sc_module_name name, const CpuConfig& cfg, uint64_t dram_base, uint64_t dram_size,
             InterruptController& intc, StatsRegistry& stats, TraceSink* trace);

  unsigned size() const { return static_cast<unsigned>(cores_.size()); }
  CpuCore& core(unsigned i) { return *cores_[i]; }
  const CpuConfig& config() const { return cfg_; }
  InterruptController& intc() { return intc_; }
  StatsRegistry& stats() { return stats_; }
  TraceSink* trace() { return trace_; }
  CoherenceTracker& coherence() { return coherence_; }
  // The interconnect the cores' sockets reach, for register polls that
  // sleep (CpuCore::read_poll); none: they make every read.
  void set_register_bus(RegisterPollBus* bus) { register_bus_ = bus; }
  RegisterPollBus* register_bus() const { return register_bus_; }

  // Cores in CpuCore::poll, and what may change the word they poll: a HAL
  // write to `addr` by a core (before_shared_access), or a write of host
  // memory [p, p + len) by anyone (the DRAM model's writes).
  void add_poller(CpuCore& c) { pollers_.push_back(&c); }
  bool has_pollers() const { return !pollers_.empty(); }
  bool line_polled(const volatile void* addr) const;
  void remove_poller(CpuCore& c);
  void core_wrote(const volatile void* addr) {
    if (!pollers_.empty()) wake_pollers_of_line(reinterpret_cast<uintptr_t>(addr));
  }
  void memory_written(const void* p, uint64_t len) {
    if (!pollers_.empty()) wake_pollers_of_bytes(reinterpret_cast<uintptr_t>(p), len);
  }
  // A coherent write of host memory [p, p + len) by a device (the SMMU's
  // MSI, cmdq.msi_coherent): the device, which sits with the first die, takes
  // each line from the cores that hold it; returns the time until the
  // farthest copy is given up (0 when no core held one). The lines are then
  // the device's (CoherenceTracker id `count`), so a core's next access
  // fetches them from it. Nothing is tracked with 256 cores (no id is free).
  double device_write_ns(const void* p, uint64_t len);
  bool is_dram(uint64_t addr, uint64_t len) const {
    return addr >= dram_base_ && len <= dram_size_ && addr - dram_base_ <= dram_size_ - len;
  }

  // Whether a core sleeps in a poll that only a change can end: as the loop
  // it stands for, it keeps the run going (not a deadlock).
  bool polls_forever() const {
    for (const auto& c : cores_)
      if (c->polls_forever()) return true;
    return false;
  }

  // SEV from a core or a device: every core's event register is set and cores
  // sleeping in WFE wake.
  void send_event();
  sc_core::sc_event& sev_event() { return sev_event_; }

  // Handlers run on the core the line is routed to.
  bool set_irq_handler(unsigned line, IrqHandler handler);
  bool clear_irq_handler(unsigned line);
  const IrqHandler* irq_handler(unsigned line) const;

  // Called when a core's program returns or fails.
  void set_on_core_done(std::function<void(CpuCore&)> fn) { on_core_done_ = std::move(fn); }
  void core_done(CpuCore& c) { if (on_core_done_) on_core_done_(c); }

  // At the end of the run (`end`: simulated end time, ps): every core's
  // cpus.cpuN.busy_ns, idle_ns and utilisation (busy / (busy + idle)).
  void finalize(Ps end);
  // An app's measurement window: the lines' busy share inside it too.
  void set_window(Ps start, Ps end) { coherence_.set_window(start, end); }

 private:
  void finalize_lines(Ps end);
  CpuConfig cfg_;
  uint64_t dram_base_, dram_size_;
  InterruptController& intc_;
  StatsRegistry& stats_;
  TraceSink* trace_;
  CoherenceTracker coherence_;
  RegisterPollBus* register_bus_ = nullptr;
  std::vector<CpuCore*> pollers_;
  void wake_pollers_of_line(uintptr_t addr);
  void wake_pollers_of_bytes(uintptr_t p, uint64_t len);
  sc_core::sc_event sev_event_;
  std::vector<IrqHandler> handlers_;
  std::vector<std::unique_ptr<CpuCore>> cores_;
  std::function<void(CpuCore&)> on_core_done_;
};

}  // namespace smmu_vp

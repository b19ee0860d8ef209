// CpuCore's polls: hal_poll32/64 on a shared word and hal_read_poll32 on a
// device register (sw/hal/hal.h). Each is exactly the loop it stands for,
// with the core asleep between the polls that cannot end it
// (docs/architecture.md, "Polling" and "Polling a register").
#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include "common/tlm_time.h"
#include "cpu/cpu_cluster.h"

namespace smmu_vp {

namespace {
// Beyond any run: a poll grid that reaches it is cut there.
constexpr Ps kFar = Ps{1} << 62;
// poll_.line of a register poll: no memory line is this (lines are addresses >> 6).
constexpr uintptr_t kRegisterPoll = ~uintptr_t{0} - 1;
}  // namespace

// The loop's timeline while nothing changes. Poll i starts at g0 + i * period.
// A register read ends `read` later, where the core synchronises again when
// the read crossed a quantum boundary (access()); a shared load has no such
// point (read 0). Positions count both in time order: 2i is poll i, 2i + 1
// the end of its read.
struct CpuCore::PollGrid {
  Ps g0 = 0, period = 0, read = 0;
  const CoreClock& clock;
  Ps time(uint64_t pos) const { return g0 + pos / 2 * period + (pos % 2 ? read : 0); }
  // Whether the core synchronises at a position: at every poll, and at the
  // end of a read that reached the quantum boundary set at its start.
  bool syncs(uint64_t pos) const {
    if (pos % 2 == 0) return true;
    return read != 0 && clock.boundary_between(time(pos - 1), time(pos));
  }
};

// Keeps this core's watch for the length of one poll. An interrupt handler on
// this core may poll inside our poll: its watch replaces ours until it
// returns, and ours then counts as changed, for anything written to our word
// meanwhile went unwatched.
struct CpuCore::PollScope {
  CpuCore& c;
  PollWatch outer;
  bool watching;
  PollScope(CpuCore& core, bool watch) : c(core), outer(core.poll_), watching(watch) {}
  PollScope(const PollScope&) = delete;
  PollScope& operator=(const PollScope&) = delete;
  bool nested() const { return outer.line != PollWatch{}.line; }
  ~PollScope() {
    if (!watching) return;
    if (!nested()) {
      c.set_poll(PollWatch{});
    } else {
      PollWatch w = outer;
      w.changed = true;
      c.set_poll(w);
    }
  }
};

CpuCore::PollResult CpuCore::poll(const volatile void* p, unsigned size, uint64_t mask, uint64_t value,
                                  bool until_ne, unsigned max_polls) {
  const bool sleep = cluster_.config().poll_sleep;
  PollScope scope(*this, sleep);
  if (sleep) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    set_poll(PollWatch{a >> CoherenceTracker::kLineShift, a, a + size, false});
  }
  PollResult r{0, 0};
  uint64_t n = 0;
  while (max_polls == 0 || n < max_polls) {
    before_shared_access(p, SharedAccess::kLoad);
    poll_.changed = false;  // this load sees every write so far
    r.value = size == 4 ? __atomic_load_n(static_cast<const volatile uint32_t*>(p), __ATOMIC_SEQ_CST)
                        : __atomic_load_n(static_cast<const volatile uint64_t*>(p), __ATOMIC_SEQ_CST);
    ++n;
    if (((r.value & mask) == value) != until_ne) break;
    const uint64_t irqs = irqs_taken_.value();
    cpu_relax();
    // A handler run by cpu_relax's synchronisation may have written the
    // word with a plain store: poll again for real.
    if (sleep && irqs_taken_.value() == irqs) n += skip_polls(max_polls == 0 ? UINT64_MAX : max_polls - n);
  }
  r.polls = static_cast<unsigned>(n);
  return r;
}

// Called after a poll that found the word unchanged and cpu_relax: the loop
// would now load at g0 = now(), g0 + period, ... (period: a shared load of a
// line this core holds, and cpu_relax) while nothing changes. Sleeps until
// the first of those loads that could see a change (a write reported through
// poll_changed(), an interrupt due) or the last of `left` polls, and
// leaves the core at that load's time, as the loop would have. Returns the
// loads skipped; each counts as the shared access it stands for.
uint64_t CpuCore::skip_polls(uint64_t left) {
  const CpuConfig& cfg = cluster_.config();
  const PollGrid grid{now(), (cfg.shared_load_cycles + cfg.cpu_relax_cycles) * cycle_ps_, 0, clock_};
  const uint64_t j = sleep_on_grid(grid, left, false) / 2;
  if (j == 0) return 0;
  atomics_.add(j);
  if (poll_skipped_) poll_skipped_->add(j);
  // The loop's cpu_relax before load j synchronised if a quantum boundary
  // lies in (g(j-1), gj]: the sync after the load there set the next one.
  const Ps gj = now();
  if (clock_.boundary_between(gj - grid.period, gj)) sync();
  return j;
}

// Sleeps on the grid from position 0 (the next poll, now()) until the first
// position where the loop could see something this core has not: a change
// of the polled value (poll_.changed, seen by a poll), an interrupt due (taken
// at the first synchronisation at or after its time) or the last of `left`
// polls. Leaves the core at that position's time and returns it.
uint64_t CpuCore::sleep_on_grid(const PollGrid& g, uint64_t left, bool mmio) {
  if (left < 2 || g.period == 0 || poll_.changed || g.g0 >= kFar) return 0;
  const uint64_t last = 2 * std::min<uint64_t>(left - 1, (kFar - g.g0) / g.period);
  // Whether position `pos`, at this core's rank in its picosecond, comes at
  // or after time t: when t is now and something of a later rank woke us,
  // what the loop does at t has been done (common/tlm_time.h).
  const auto not_before = [&](uint64_t pos, Ps t) {
    const Ps s = g.time(pos);
    return s > t || (s == t && !rank_.passed_in(t));
  };
  // The first poll at or after t, and the first synchronisation.
  const auto poll_at = [&](Ps t) -> uint64_t {
    if (t < g.g0) return 0;
    const uint64_t i = (t - g.g0 + g.period - 1) / g.period;
    return 2 * (not_before(2 * i, t) ? i : i + 1);
  };
  const auto sync_at = [&](Ps t) -> uint64_t {
    const uint64_t pos = poll_at(t);
    return pos >= 2 && g.syncs(pos - 1) && not_before(pos - 1, t) ? pos - 1 : pos;
  };
  InterruptControllerCore& ic = cluster_.intc().core();
  uint64_t pos;
  Ps t;
  for (;;) {
    t = kernel_ps_;
    const uint64_t here = sync_at(t);
    uint64_t stop = last;
    if (!irq_masked_) {
      const Ps due = ic.next_pending(id_);
      if (due != InterruptControllerCore::kNotPending) stop = std::min(stop, sync_at(due));
    }
    if (poll_.changed) stop = std::min(stop, poll_at(t));
    if (stop <= here) {
      pos = std::max(stop, here);
      // The loop is there at this core's rank: woken earlier in its
      // picosecond, wait for that turn and look again.
      const sc_core::sc_time turn = rank_.rest_of_turn();
      if (g.time(pos) == t && turn != sc_core::SC_ZERO_TIME) {
        sc_core::wait(turn);
        resumed();
        continue;
      }
      break;
    }
    // A wake-up later than any run can last is left out: SystemC would keep
    // it in its timed-event heap until then once a change ends the sleep.
    const Ps wake_at = g.time(stop);
    sleep_ = PollSleep{true, wake_at >= kMaxRankedPs, g.g0, g.period, mmio};
    if (sleep_.forever) {
      if (irq_masked_) sc_core::wait(poll_wake_);
      else sc_core::wait(poll_wake_or_irq_);
    } else {
      const sc_core::sc_time until = rank_.until(wake_at);
      if (irq_masked_) sc_core::wait(until, poll_wake_);
      else sc_core::wait(until, poll_wake_or_irq_);
    }
    sleep_.active = false;
    resumed();
  }
  clock_.set_ahead(g.time(pos) - t);
  return pos;
}

// A register poll's watch: the device calls ended() at the time the register
// takes a value that ends the poll.
class CpuCore::RegisterPollWatch : public RegisterWatch {
 public:
  RegisterPollWatch(CpuCore& c, uint64_t offset, unsigned size, std::function<bool(uint64_t)> ends)
      : RegisterWatch(offset, size, std::move(ends)), c_(c) {}
  // Marked changed now, for a change `delay` ahead: the device runs ahead
  // only while nothing else can run before its time (TimeRank::alone_until),
  // so this core wakes at the change or later, never before it.
  void ended(const sc_core::sc_time& delay) override {
    c_.poll_.changed = true;
    c_.poll_wake_.notify(delay);
  }

 private:
  CpuCore& c_;
};

CpuCore::PollResult CpuCore::read_poll(uint64_t addr, const std::function<bool(uint64_t)>& done, unsigned max_polls) {
  constexpr unsigned size = 4;
  uint64_t offset = 0;
  RegisterPollBus* bus = cluster_.register_bus();
  WatchableRegisters* regs = cluster_.config().poll_sleep && bus ? bus->watchable(addr, size, &offset) : nullptr;
  PollScope scope(*this, regs != nullptr);
  std::optional<RegisterPollWatch> watch;
  struct Unwatch {
    CpuCore& c;
    bool armed = false;
    ~Unwatch() {
      if (armed) c.unwatch_registers(1);
    }
  } unwatch{*this};
  if (regs) {
    set_poll(PollWatch{kRegisterPoll, 0, 0, false});
    watch.emplace(*this, offset, size, done);
    regs->watch(*watch);
    register_watches_.push_back({regs, &*watch});
    unwatch.armed = true;
  }
  const Ps relax = cfg_cpu_relax_cycles_ * cycle_ps_;
  PollResult r{0, 0};
  uint64_t n = 0;
  Ps read = 0;             // how long a read takes (the device says it always takes the same)
  bool read_made = false;  // the core stands at the end of a read slept through
  uint64_t irqs_then = 0;  // interrupts taken before that read's end
  while (max_polls == 0 || n < max_polls) {
    // A handler run from here on may have changed what the device holds:
    // then read again for real.
    const uint64_t irqs = read_made ? irqs_then : irqs_taken_.value();
    if (!read_made) {
      const Ps start = now();
      // This read sees every change so far, those made while it synchronises too.
      if (regs) poll_.changed = false;
      uint32_t v = 0;
      access(false, addr, &v, size);
      r.value = v;
      ++n;
      if (done(r.value)) break;
      read = now() - start;
    }
    read_made = false;
    cpu_relax();
    if (!regs || irqs_taken_.value() != irqs || read == 0) continue;
    const PollGrid grid{now(), read + relax, read, clock_};
    const uint64_t pos = sleep_on_grid(grid, max_polls == 0 ? UINT64_MAX : max_polls - n, true);
    const uint64_t reads = (pos + 1) / 2;
    if (reads == 0) continue;
    n += reads;
    mmio_accesses_.add(reads);
    bus->count_reads_slept_through(reads);
    if (poll_skipped_reads_) poll_skipped_reads_->add(reads);
    if (pos % 2) {
      // Stopped at the end of a read where the loop synchronises (an
      // interrupt is due): the read found nothing new, the loop goes on from there.
      irqs_then = irqs_taken_.value();
      sync();
      read_made = true;
    } else {
      // At a read: the loop's cpu_relax before it synchronised if it reached
      // a quantum boundary (the one set at the previous read's start or end),
      // and the read's own synchronisation comes after that one's handlers.
      const Ps g = now();
      if (clock_.boundary_between(g - relax, g)) sync();
    }
  }
  r.polls = static_cast<unsigned>(n);
  return r;
}

// The polls the loop would have made by `end` (all of that picosecond): the
// grid points from g0 on, counted as the sleep counts them.
void CpuCore::count_polls_slept_through(Ps end) {
  if (!sleep_.active || end < sleep_.g0) return;
  const uint64_t n = (end - sleep_.g0) / sleep_.period + 1;
  if (sleep_.mmio) {
    mmio_accesses_.add(n);
    if (RegisterPollBus* bus = cluster_.register_bus()) bus->count_reads_slept_through(n);
    if (poll_skipped_reads_) poll_skipped_reads_->add(n);
  } else {
    atomics_.add(n);
    if (poll_skipped_) poll_skipped_->add(n);
  }
  sleep_.active = false;
}

void CpuCore::abandon_polls() {
  set_poll(PollWatch{});
  unwatch_registers(register_watches_.size());
}

// The last `n` register watches this core left with devices. After an
// escape their frames are gone: only their addresses are used here.
void CpuCore::unwatch_registers(size_t n) {
  for (; n && !register_watches_.empty(); --n) {
    register_watches_.back().first->unwatch(*register_watches_.back().second);
    register_watches_.pop_back();
  }
}

// A core is among the cluster's pollers while it polls a word of memory.
void CpuCore::set_poll(const PollWatch& w) {
  const auto memory = [](uintptr_t line) { return line != PollWatch{}.line && line != kRegisterPoll; };
  if (memory(poll_.line) && !memory(w.line)) cluster_.remove_poller(*this);
  if (!memory(poll_.line) && memory(w.line)) cluster_.add_poller(*this);
  poll_ = w;
}

}  // namespace smmu_vp

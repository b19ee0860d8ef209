#include "platform.h"

#include <csignal>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "common/tlm_time.h"
#include "containment.h"
#include "devices/platform_device.h"
#include "dmatrace/dma_trace_recorder.h"
#include "hal/hal.h"
#include "hal_backend/hal_context.h"
#include "bounds.h"
#include "invariants.h"

namespace smmu_vp {

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGPIPE: return "SIGPIPE";
    case SIGKILL: return "SIGKILL";
    default: return strsignal(sig);
  }
}

const char* RunResult::status_name(Status s) {
  switch (s) {
    case Status::kCompleted: return "completed";
    case Status::kAppFailed: return "app-failed";
    case Status::kTimeLimit: return "time-limit";
    case Status::kDeadlock: return "deadlock";
    case Status::kCrashed: return "crashed";
    case Status::kHung: return "hung";
    case Status::kInterrupted: return "interrupted";
    case Status::kExited: return "exited";
  }
  return "?";
}

int RunResult::exit_code() const {
  switch (status) {
    case Status::kCompleted: return 0;
    case Status::kAppFailed: return 3;
    case Status::kTimeLimit: return 4;
    case Status::kDeadlock: return 5;
    case Status::kCrashed: return 7;
    case Status::kHung: return 8;
    case Status::kInterrupted: return 130;  // as a shell reports a process ended by SIGINT
    case Status::kExited: return 9;
  }
  return 1;
}

Platform::Platform(const config::RunConfig& cfg, TraceSink* trace, std::shared_ptr<spdlog::logger> log)
    : cfg_(cfg), trace_(trace), log_(std::move(log)) {
  router_ = std::make_unique<Router>("router", cfg_.interconnect.latency_ns, stats_);
  dram_ = std::make_unique<Dram>("dram", cfg_.dram, stats_);
  intc_ = std::make_unique<InterruptController>("intc", cfg_.intc.lines, cfg_.cpu.count, cfg_.intc.reg_latency_ns,
                                                stats_, trace_);
  cpus_ = std::make_unique<CpuCluster>("cpus", cfg_.cpu, cfg_.dram.base, cfg_.dram.size, *intc_, stats_, trace_);

  router_->map("dram", cfg_.dram.base, cfg_.dram.size, dram_->socket);
  // Only sleeping polls watch DRAM writes: otherwise no call per write.
  if (cfg_.cpu.poll_sleep)
    dram_->set_write_observer([this](const uint8_t* p, uint64_t len) { cpus_->memory_written(p, len); });
  router_->map("intc", cfg_.intc.base, InterruptController::kRegBlockSize, intc_->socket);
  for (unsigned i = 0; i < cpus_->size(); ++i) cpus_->core(i).socket.bind(router_->upstream);
  cpus_->set_register_bus(router_.get());
  for (unsigned i = 0; i < cfg_.smmu_count(); ++i) {
    const std::string name = cfg_.smmu_name(i);
    auto s = std::make_unique<smmu::Smmu>(name.c_str(), cfg_.smmu_config(i), intc_.get(), stats_, trace_);
    router_->map(name, cfg_.smmu_config(i).base, s->register_space_size(), s->regs, s.get());
    s->downstream.bind(router_->upstream);
    s->set_event_sender([this]() { cpus_->send_event(); });
    if (cfg_.smmu_config(i).cmdq.msi_coherent)
      s->set_coherent_write([this](uint64_t pa, unsigned len) -> Ps {
        if (!cpus_->is_dram(pa, len)) return 0;
        return ns_to_ps(cpus_->device_write_ns(dram_->core().data() + (pa - cfg_.dram.base), len));
      });
    smmus_.push_back(std::move(s));
  }

  DeviceEnv env{intc_.get(), stats_, trace_, [this](uint64_t pa, uint64_t len) -> uint8_t* {
                  const uint64_t base = cfg_.dram.base, size = cfg_.dram.size;
                  if (pa < base || len > size || pa - base > size - len) return nullptr;
                  return dram_->core().data() + (pa - base);
                }};
  for (size_t i = 0; i < cfg_.devices.size(); ++i) {
    const DeviceConfig& d = cfg_.devices[i];
    std::unique_ptr<PlatformDevice> dev = find_device_type(d.type)->create(d, env);
    router_->map(d.name, d.base, d.size, dev->regs());
    // Master port: through its SMMU when there is one (its port number there
    // is its place among that SMMU's devices, as the TBU map expects).
    if (!smmus_.empty()) dev->mem().bind(smmus_[cfg_.device_smmu[i]]->upstream);
    else dev->mem().bind(router_->upstream);
    if (smmu::AtsDevice* atc = dev->ats_device(); atc && !smmus_.empty())
      smmus_[cfg_.device_smmu[i]]->attach_ats_device(d.stream_id, atc);
    devices_.push_back(std::move(dev));
  }

  hal_ = std::make_unique<HalContext>(HalPlatform{cfg_, *cpus_, stats_, *log_, recorder_,
                                                  [this](Ps start, Ps end) { set_window(start, end); }});
  for (const auto& a : cfg_.apps) {
    for (unsigned c : a.cores) {
      const hal_app* app = a.app;
      cpus_->core(c).set_program([app]() { return app->main(); }, a.name);
      ++programs_;
    }
  }
  cpus_->set_on_core_done([this](CpuCore& c) { on_core_done(c); });
}

Platform::~Platform() = default;

void Platform::record_dma_trace(DmaTraceRecorder* recorder) {
  recorder_ = recorder;
  // One trace holds one StreamID space: the CLI refuses --record-trace on a
  // platform of several SMMUs, so only the first is observed.
  if (!smmus_.empty()) smmus_[0]->set_observer(recorder);
}

void Platform::on_core_done(CpuCore& c) {
  ++programs_done_;
  if (!c.failure().empty()) {
    failed_ = true;
    log_->error("cpu{} ({}): {}", c.id(), c.label(), c.failure());
  } else if (c.exit_code() != 0) {
    failed_ = true;
    log_->error("cpu{} ({}) returned {}", c.id(), c.label(), c.exit_code());
  }
  if (failed_ || programs_done_ == programs_) sc_core::sc_stop();
}

// The main loop, in slices so that progress can be reported and limits checked.
void Platform::simulate(RunResult& r, const std::function<void(const Progress&)>& progress,
                        double progress_interval_s, const Containment* guard) {
  using clock = std::chrono::steady_clock;
  const auto wall0 = clock::now();
  auto last_report = wall0;
  const Ps limit = cfg_.max_time_ps;
  const Ps slice = ns_to_ps(100000.0);
  if (programs_ == 0) {
    r.status = RunResult::Status::kCompleted;
    r.message = "no app assigned to any core";
  }
  while (programs_ > 0) {
    if (guard && guard->interrupt_signal()) { r.status = RunResult::Status::kInterrupted; break; }
    if (failed_) { r.status = RunResult::Status::kAppFailed; break; }
    if (programs_done_ == programs_) { r.status = RunResult::Status::kCompleted; break; }
    const Ps now = now_ps();
    if (now >= limit) {
      r.status = RunResult::Status::kTimeLimit;
      r.message = "simulated-time limit reached (scenario.stop.max_time_us) with " +
                  std::to_string(programs_ - programs_done_) + " core(s) still running";
      break;
    }
    // A core asleep in an unbounded poll would spin to the limit in the loop.
    if (now > 0 && !sc_core::sc_pending_activity() && !cpus_->polls_forever()) {
      r.status = RunResult::Status::kDeadlock;
      r.message = "no pending activity while " + std::to_string(programs_ - programs_done_) +
                  " core(s) still run: every one waits for an event nothing will send (WFI with no interrupt coming?)";
      break;
    }
    // Up to the last rank of the slice's last picosecond (common/tlm_time.h):
    // a slice holds whole picoseconds, so where it ends moves no result.
    const uint64_t end = (std::min(slice, limit - now) + now + 1) * kRanksPerPs - 1;
    TimeRank::run_horizon_fs() = end;  // nothing runs ahead past the slice
    sc_core::sc_start(sc_core::sc_time::from_value(end - sc_core::sc_time_stamp().value()));
    TimeRank::run_horizon_fs() = 0;
    if (sc_core::sc_get_status() == sc_core::SC_STOPPED) {
      r.status = failed_ ? RunResult::Status::kAppFailed : RunResult::Status::kCompleted;
      break;
    }
    if (progress && std::chrono::duration<double>(clock::now() - last_report).count() >= progress_interval_s) {
      last_report = clock::now();
      progress({ps_to_ns(now_ps()), ps_to_ns(limit), programs_ - programs_done_,
                std::chrono::duration<double>(last_report - wall0).count()});
    }
  }
}

// sigsetjmp here, in a frame that changes nothing it keeps, so that a
// siglongjmp from a handler (Containment, main_escape) finds it intact.
bool Platform::simulate_contained(Containment& guard, RunResult& r,
                                  const std::function<void(const Progress&)>& progress, double progress_interval_s) {
  if (sigsetjmp(guard.main_escape(), 1) != 0) return false;
  guard.arm_main(true);
  simulate(r, progress, progress_interval_s, &guard);
  guard.arm_main(false);
  return true;
}

// What containment saw outranks what the main loop concluded: a crash, then a
// hang, then an interruption.
void Platform::containment_outcome(RunResult& r, const Containment& guard) const {
  using Kind = CpuCore::StopKind;
  for (Kind kind : {Kind::kCrashed, Kind::kHung, Kind::kExited}) {
    for (unsigned i = 0; i < cpus_->size(); ++i) {
      const CpuCore& c = cpus_->core(i);
      if (c.fault().kind != kind) continue;
      r.status = kind == Kind::kCrashed ? RunResult::Status::kCrashed
                 : kind == Kind::kHung  ? RunResult::Status::kHung
                                        : RunResult::Status::kExited;
      r.message = "cpu" + std::to_string(i) + " (" + c.label() + "): " + c.failure();
      return;
    }
    const CpuCore::Fault& f = guard.main_fault();
    if (f.kind != kind) continue;
    const std::string when = fmt::format("at {:.3f} us simulated", ps_to_ns(f.at) / 1000.0);
    if (kind == Kind::kCrashed) {
      r.status = RunResult::Status::kCrashed;
      r.message = fmt::format("crashed outside every core's program (a device model or the simulator): {} at {:#x} {}",
                              strsignal(f.signo), f.addr, when);
    } else if (kind == Kind::kExited) {
      r.status = RunResult::Status::kExited;
      r.message = fmt::format("exit({}) called outside every core's program (a device model?) {}", f.signo, when);
    } else {
      r.status = RunResult::Status::kHung;
      r.message = fmt::format("hung: simulated time stood still for {} s of wall time with no core's program "
                              "running (a device model or the simulator loops); stopped {}", guard.watchdog_s(), when);
    }
    return;
  }
  if (const int sig = guard.interrupt_signal()) {
    unsigned running = 0;
    for (unsigned i = 0; i < cpus_->size(); ++i)
      running += cpus_->core(i).has_program() && !cpus_->core(i).finished();
    r.status = RunResult::Status::kInterrupted;
    r.message = fmt::format("interrupted by {} at {:.3f} us simulated with {} core(s) still running",
                            signal_name(sig),
                            ps_to_ns(now_ps()) / 1000.0, running);
  }
}

RunResult Platform::run(const std::function<void(const Progress&)>& progress, double progress_interval_s) {
  using clock = std::chrono::steady_clock;
  const auto wall0 = clock::now();
  RunResult r;
  std::unique_ptr<Containment> guard;
  if (contain_) guard = std::make_unique<Containment>(*cpus_, watchdog_s_);
  if (!guard) simulate(r, progress, progress_interval_s, nullptr);
  else if (!simulate_contained(*guard, r, progress, progress_interval_s)) kernel_abandoned_ = true;
  if (guard) {
    containment_outcome(r, *guard);
    guard.reset();  // before the results are written: the handlers are for the simulation only
  }
  r.wall_seconds = std::chrono::duration<double>(clock::now() - wall0).count();
  const Ps end = now_ps();
  r.sim_ns = ps_to_ns(end);
  for (unsigned i = 0; i < cpus_->size(); ++i) {
    CpuCore& c = cpus_->core(i);
    CoreOutcome o;
    o.cpu = i;
    o.app = c.has_program() ? c.label() : "";
    o.finished = c.finished();
    o.exit_code = c.exit_code();
    o.failure = c.failure();
    o.finish_ns = ps_to_ns(c.finish_time());
    o.busy_ns = ps_to_ns(c.busy_ps(end));
    o.idle_ns = ps_to_ns(c.idle_ps(end));
    o.utilisation = c.utilisation(end);
    r.cores.push_back(o);
    if (r.status == RunResult::Status::kAppFailed && r.message.empty() && c.finished() &&
        (!c.failure().empty() || c.exit_code() != 0))
      r.message = "cpu" + std::to_string(i) + " (" + c.label() + "): " +
                  (c.failure().empty() ? "returned " + std::to_string(c.exit_code()) : c.failure());
  }
  finalize_stats(end);
  if (trace_) {
    // Whatever ran until the end (however the run ended) shows, cut there.
    for (auto& s : smmus_) s->finish_trace(end);
    trace_->finish(end);
  }
  return r;
}

void Platform::set_window(Ps start, Ps end) {
  if (end <= start) return;
  if (window_end_ > window_start_) {
    start = std::min(start, window_start_);
    end = std::max(end, window_end_);
  }
  window_start_ = start;
  window_end_ = end;
  dram_->core().set_window(start, end);
  cpus_->set_window(start, end);
  for (auto& s : smmus_) s->set_window(start, end);
  for (auto& d : devices_) d->set_window(start, end);
}

void Platform::finalize_stats(Ps end) {
  dram_->core().finalize(end);
  intc_->finalize();
  cpus_->finalize(end);
  for (auto& s : smmus_) s->finalize(end);
  for (auto& d : devices_) d->finalize();
}

nlohmann::json Platform::results_json(const RunResult& r) const {
  nlohmann::json j = stats_.to_json();
  for (const DeviceConfig& d : cfg_.devices) {
    const DeviceType* t = find_device_type(d.type);
    if (!t || !t->results) continue;
    nlohmann::json extra = t->results(d, stats_);
    if (extra.is_object())
      for (auto it = extra.begin(); it != extra.end(); ++it) j[d.name][it.key()] = it.value();
  }
  nlohmann::json run = {{"scenario", cfg_.name},
                        {"status", RunResult::status_name(r.status)},
                        {"message", r.message},
                        {"seed", cfg_.seed},
                        {"simulated_time_ns", r.sim_ns}};
  nlohmann::json cores = nlohmann::json::array();
  for (const auto& c : r.cores) {
    if (c.app.empty()) continue;
    cores.push_back({{"cpu", c.cpu}, {"app", c.app}, {"finished", c.finished}, {"exit_code", c.exit_code},
                     {"failure", c.failure}, {"finish_ns", c.finish_ns},
                     {"busy_ns", c.busy_ns}, {"idle_ns", c.idle_ns}, {"utilisation", c.utilisation}});
  }
  run["cores"] = cores;
  if (window_end_ > window_start_) run["window_ns"] = {ps_to_ns(window_start_), ps_to_ns(window_end_)};
  // Only when there are any: the results of a sound run keep their shape.
  if (const auto broken = invariant_violations(stats_, cfg_); !broken.empty()) run["invariant_violations"] = broken;
  if (const auto unsteady = steady_state_warnings(stats_); !unsteady.empty()) run["steady_state_warnings"] = unsteady;
  // What bounded it (bounds.h): every resource's share, and those at 90 % or more.
  const std::vector<ResourceUse> use = resource_use(stats_, cfg_);
  nlohmann::json shares = nlohmann::json::object();
  for (const auto& u : use) shares[u.resource] = u.share;
  run["resource_use"] = shares;
  run["bound"] = bounds(use);
  j["run"] = run;
  j["wallclock"] = {{"note", "host wall-clock figures: the only section that differs between identical runs"},
                    {"elapsed_seconds", r.wall_seconds},
                    {"simulated_ns_per_wall_second", r.wall_seconds > 0 ? r.sim_ns / r.wall_seconds : 0.0}};
  return j;
}

}  // namespace smmu_vp

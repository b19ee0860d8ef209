// The virtual platform: builds the models from a RunConfig, wires their
// sockets, places programs on cores and runs the simulation.
//
// Wiring (docs/architecture.md):
//   cpuN.socket ----------------------------> router.upstream
//   <device>.mem (master port) --> [smmu.upstream, smmu.downstream] --> router.upstream
//        (through the instance of platform.smmus that names the device, if
//        any; straight to the router when the platform has no SMMU)
//   router.downstream -> dram.socket | intc.socket | smmu.regs | <device>.regs
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/stats.h"
#include "common/trace.h"
#include "config/run_config.h"
#include "cpu/cpu_cluster.h"
#include "cpu/interrupt_controller.h"
#include "config/device_type.h"
#include "memory/dram.h"
#include "memory/router.h"
#include "smmu/smmu.h"

namespace smmu_vp {

// "SIGINT", "SIGHUP" ... for the signals a user sends; strsignal's text else.
const char* signal_name(int sig);

class HalContext;
class DmaTraceRecorder;
class Containment;

struct CoreOutcome {
  unsigned cpu = 0;
  std::string app;  // empty: idle core
  bool finished = false;
  int exit_code = 0;
  std::string failure;
  double finish_ns = 0;
  // Over the whole run (CpuCore::idle_ps): busy + idle = RunResult::sim_ns.
  double busy_ns = 0;
  double idle_ns = 0;
  double utilisation = 0;  // busy / (busy + idle), 0 for a run of no time
};

struct RunResult {
  enum class Status { kCompleted, kAppFailed, kTimeLimit, kDeadlock, kCrashed, kHung, kInterrupted, kExited };
  Status status = Status::kCompleted;
  std::string message;
  double sim_ns = 0;
  double wall_seconds = 0;
  std::vector<CoreOutcome> cores;

  static const char* status_name(Status s);
  // Process exit code for this outcome (docs/user-guide.md).
  int exit_code() const;
};

struct Progress {
  double sim_ns;
  double limit_ns;
  unsigned cores_running;
  double wall_seconds;
};

class Platform {
 public:
  // Throws std::invalid_argument / ConfigError when the configuration cannot be built.
  Platform(const config::RunConfig& cfg, TraceSink* trace, std::shared_ptr<spdlog::logger> log);
  ~Platform();
  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;

  // Runs to completion, failure, deadlock or the time limit. `progress` is
  // called about every `progress_interval_s` of wall-clock time.
  RunResult run(const std::function<void(const Progress&)>& progress = nullptr, double progress_interval_s = 2.0);

  // Makes run() contain crashes, hangs and SIGINT/SIGTERM (containment.h):
  // status crashed, hung or interrupted instead of a dead or stuck process.
  // watchdog_s: wall-clock seconds of simulated time standing still before
  // the run counts as hung; 0 disables the watchdog.
  void set_containment(double watchdog_s) {
    contain_ = true;
    watchdog_s_ = watchdog_s;
  }
  // After a run() stopped outside every core's program (a crash or hang in a
  // model or the simulator): the kernel was left mid-step, so the results
  // may be written but the process must end without SystemC's teardown
  // (std::_Exit).
  bool kernel_abandoned() const { return kernel_abandoned_; }

  // stats.json content: run outcome, every model's stats, and the wall-clock
  // section (the only part that differs between identical runs).
  nlohmann::json results_json(const RunResult& r) const;

  const config::RunConfig& config() const { return cfg_; }
  StatsRegistry& stats() { return stats_; }
  CpuCluster& cpus() { return *cpus_; }
  InterruptController& intc() { return *intc_; }
  Router& router() { return *router_; }
  Dram& dram() { return *dram_; }
  // SMMU instance i (0: platform.smmu); nullptr when there is none.
  smmu::Smmu* smmu(unsigned i = 0) { return i < smmus_.size() ? smmus_[i].get() : nullptr; }
  // Records the run's DMA/IOMMU activity (--record-trace); nullptr stops.
  void record_dma_trace(DmaTraceRecorder* recorder);
  DmaTraceRecorder* dma_trace_recorder() { return recorder_; }
  spdlog::logger& log() { return *log_; }

 private:
  void on_core_done(CpuCore& core);
  void simulate(RunResult& r, const std::function<void(const Progress&)>& progress, double progress_interval_s,
                const Containment* guard);
  bool simulate_contained(Containment& guard, RunResult& r, const std::function<void(const Progress&)>& progress,
                          double progress_interval_s);
  void containment_outcome(RunResult& r, const Containment& guard) const;
  void finalize_stats(Ps end);  // end: simulated end of the run
  // An app announced its measurement window (hal_measure_window): the
  // models sum their use over it too; several apps' windows make one, their
  // union.
  void set_window(Ps start, Ps end);

  config::RunConfig cfg_;
  TraceSink* trace_;
  std::shared_ptr<spdlog::logger> log_;
  StatsRegistry stats_;
  std::unique_ptr<Router> router_;
  std::unique_ptr<Dram> dram_;
  std::unique_ptr<InterruptController> intc_;
  std::unique_ptr<CpuCluster> cpus_;
  std::vector<std::unique_ptr<smmu::Smmu>> smmus_;  // [0] platform.smmu, then platform.smmus
  std::vector<std::unique_ptr<PlatformDevice>> devices_;
  std::unique_ptr<HalContext> hal_;
  unsigned programs_ = 0;
  unsigned programs_done_ = 0;
  bool failed_ = false;
  bool contain_ = false;
  double watchdog_s_ = 0;
  bool kernel_abandoned_ = false;
  DmaTraceRecorder* recorder_ = nullptr;
  Ps window_start_ = 0, window_end_ = 0;  // none while equal
};

}  // namespace smmu_vp

// State behind the C HAL (hal_backend.cc): which app each core runs, the cost
// table, the device list handed to sw/, the DMA allocator, per-core random
// streams. One instance per platform; the HAL reaches it through current().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/sim_time.h"
#include "common/stats.h"
#include "hal/hal.h"
#include "hal_backend/dma_allocator.h"

namespace spdlog { class logger; }

namespace smmu_vp {

class CpuCore;
class CpuCluster;
class DmaTraceRecorder;
namespace config { struct AppAssignment; struct RunConfig; }

// What the HAL reaches of the platform it serves; the Platform fills it in.
struct HalPlatform {
  const config::RunConfig& config;
  CpuCluster& cpus;
  StatsRegistry& stats;
  spdlog::logger& log;
  DmaTraceRecorder* const& recorder;   // the platform's: null while not recording
  // An app's measurement window (hal_measure_window): the platform's models
  // then also sum their use over it.
  std::function<void(Ps start, Ps end)> measure_window;
};

class HalContext {
 public:
  explicit HalContext(const HalPlatform& platform);
  ~HalContext();

  // The context of the running platform. Aborts with a message when sw/ code
  // calls the HAL outside a simulated core.
  static HalContext& current();
  static CpuCore& core();

  const config::RunConfig& config() const { return platform_.config; }
  CpuCluster& cpus() { return platform_.cpus; }
  StatsRegistry& stats() { return platform_.stats; }
  spdlog::logger& log() { return platform_.log; }
  void measure_window(Ps start, Ps end) {
    if (platform_.measure_window) platform_.measure_window(start, end);
  }
  DmaTraceRecorder* dma_trace_recorder() { return platform_.recorder; }

  struct CoreApp {
    const config::AppAssignment* assignment = nullptr;
    std::string stat_prefix;  // "sw.<instance name>."
    uint64_t rng = 0;
    uint64_t spread_rng = 0;  // draws of platform.cpu.cost_spread, apart from hal_random()
    // Looked up by the name's address (apps pass literals), with the name
    // kept so that a reused buffer holding another name is looked up again.
    template <typename T>
    struct ByName {
      std::string name;
      T* stat = nullptr;
    };
    std::unordered_map<const char*, ByName<Counter>> counters;
    std::unordered_map<const char*, ByName<Histogram>> histograms;
  };
  CoreApp& app(unsigned cpu) { return apps_[cpu]; }

  // Cost table, resolved to picoseconds.
  int cost_lookup(const char* name) const;
  // What `count` of a class costs the core `cpu` this time: count times its
  // cycles, or with a spread (platform.cpu.cost_spread) that share of it
  // drawn from an exponential distribution of the same mean.
  Ps charge_ps(int handle, uint64_t count, unsigned cpu);
  std::string cost_names() const;

  const std::vector<hal_device_info>& devices() const { return devices_; }
  DmaAllocator& dma_allocator() { return dma_alloc_; }
  // Host pointer to the start of DRAM, obtained through DMI the first time a
  // core asks (DMI needs the elaborated sockets).
  uint8_t* dram_host();
  uint64_t dram_base() const { return dram_base_; }
  uint64_t dram_size() const { return dram_size_; }

 private:
  static HalContext* current_;

  HalPlatform platform_;
  std::vector<CoreApp> apps_;
  struct CostClass {
    std::string name;
    Ps ps;
    double spread;  // 0: fixed
  };
  std::vector<CostClass> costs_;
  std::vector<hal_device_info> devices_;
  std::vector<std::unique_ptr<std::string>> names_;  // storage behind devices_' strings
  DmaAllocator dma_alloc_;
  uint8_t* dram_host_;
  uint64_t dram_base_, dram_size_;
};

}  // namespace smmu_vp

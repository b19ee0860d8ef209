// DRAM behaviour without SystemC: backing store and timing.
// Timing: a transfer occupies the DRAM data bus for bytes / bandwidth and
// queues behind earlier transfers (Resource); its completion is the moment it
// got the bus plus the access latency plus its transfer time. So achieved
// bandwidth never exceeds `bandwidth_gbps` and latency never drops below the
// configured read/write latency.
#pragma once

#include <cstdint>
#include <string>

#include "common/invalid_config.h"
#include "common/resource.h"
#include "common/sim_time.h"
#include "common/stats.h"

namespace smmu_vp {

// The part of DRAM the platform sets aside for device buffers (what
// hal_dma_alloc() serves), from the DRAM base.
struct DmaRegion {
  uint64_t offset = 256ull << 20;  // bytes
  uint64_t size = 256ull << 20;    // bytes
};

struct DramConfig {
  uint64_t base = 0x80000000;      // where the platform maps it; the model sees offsets
  uint64_t size = 1ull << 30;      // bytes
  double read_latency_ns = 80.0;   // first data after the bus is granted
  double write_latency_ns = 60.0;  // write acknowledged after the bus is granted
  double bandwidth_gbps = 25.6;    // GB/s = bytes per ns
  DmaRegion dma_region;            // used by the platform, not the model

  // Throws InvalidConfig naming the first field the model cannot be built
  // with (the module's constructor calls it).
  void validate() const;
};

class DramCore {
 public:
  DramCore(std::string name, const DramConfig& cfg, StatsRegistry& stats);
  ~DramCore();
  DramCore(const DramCore&) = delete;
  DramCore& operator=(const DramCore&) = delete;

  // Timing of an access of `bytes` arriving at `arrival`; returns completion.
  // `now` is the current simulation time (never later than `arrival`).
  Ps access(Ps now, Ps arrival, bool is_write, uint64_t bytes);

  // Backing store; `offset` is relative to the DRAM's own base.
  bool contains(uint64_t offset, uint64_t len) const { return offset < cfg_.size && len <= cfg_.size - offset; }
  uint8_t* data() { return mem_; }
  const DramConfig& config() const { return cfg_; }
  const Resource& bus() const { return bus_; }
  // Derived figures for a run that lasted `sim_end`: achieved bandwidth and
  // bus utilisation, into the stats registry.
  void finalize(Ps sim_end);
  // An app's measurement window: the bus's use inside it (utilization_in_window).
  void set_window(Ps start, Ps end) { bus_.set_window(start, end); }

 private:
  std::string name_;
  DramConfig cfg_;
  StatsRegistry& stats_;
  uint8_t* mem_;  // lazily-backed anonymous mapping, zero-filled
  Resource bus_;
  Counter& reads_;
  Counter& writes_;
  Counter& bytes_read_;
  Counter& bytes_written_;
  Histogram& read_latency_;
  Histogram& write_latency_;
  Histogram& queue_wait_;
};

}  // namespace smmu_vp

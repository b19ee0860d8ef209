#include "memory/dram_core.h"

#include <sys/mman.h>

#include <new>
#include <stdexcept>

namespace smmu_vp {

DramCore::DramCore(std::string name, const DramConfig& cfg, StatsRegistry& stats)
    : name_(std::move(name)),
      cfg_(cfg),
      stats_(stats),
      mem_(nullptr),
      bus_(name_ + ".bus", 1),
      reads_(stats.counter(name_ + ".reads")),
      writes_(stats.counter(name_ + ".writes")),
      bytes_read_(stats.counter(name_ + ".bytes_read")),
      bytes_written_(stats.counter(name_ + ".bytes_written")),
      read_latency_(stats.histogram(name_ + ".read_latency_ns", "ns", 1000.0)),
      write_latency_(stats.histogram(name_ + ".write_latency_ns", "ns", 1000.0)),
      queue_wait_(stats.histogram(name_ + ".queue_wait_ns", "ns", 1000.0)) {
  if (cfg_.size == 0) throw std::invalid_argument(name_ + ": size must be non-zero");
  if (cfg_.bandwidth_gbps <= 0.0) throw std::invalid_argument(name_ + ": bandwidth must be positive");
  // Reserve address space only; pages are backed on first touch, so a large
  // simulated DRAM costs host memory only for what the run uses.
  void* p = mmap(nullptr, cfg_.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error(name_ + ": cannot map " + std::to_string(cfg_.size) + " bytes of backing store");
  mem_ = static_cast<uint8_t*>(p);
}

DramCore::~DramCore() { munmap(mem_, cfg_.size); }

Ps DramCore::access(Ps now, Ps arrival, bool is_write, uint64_t bytes) {
  // Retiring now and then keeps the bus timeline short.
  if ((reads_.value() + writes_.value()) % 64 == 0) bus_.retire(now);
  const Ps occupancy = transfer_time_ps(bytes, cfg_.bandwidth_gbps);
  const Resource::Grant g = bus_.reserve(arrival, occupancy);
  const Ps latency = ns_to_ps(is_write ? cfg_.write_latency_ns : cfg_.read_latency_ns);
  const Ps done = g.start + latency + occupancy;
  if (is_write) {
    writes_.add();
    bytes_written_.add(bytes);
  } else {
    reads_.add();
    bytes_read_.add(bytes);
  }
  (is_write ? write_latency_ : read_latency_).record(done - arrival);
  queue_wait_.record(g.waited);
  return done;
}

void DramCore::finalize(Ps sim_end) {
  stats_.value(name_ + ".configured_bandwidth_gbps") = cfg_.bandwidth_gbps;
  if (sim_end == 0) return;
  const double bytes = static_cast<double>(bytes_read_.value() + bytes_written_.value());
  stats_.value(name_ + ".bandwidth_gbps") = bytes / ps_to_ns(sim_end);
  stats_.value(name_ + ".utilization") = static_cast<double>(bus_.busy_time()) / static_cast<double>(sim_end);
  if (bus_.has_window()) stats_.value(name_ + ".utilization_in_window") = bus_.window_utilisation();
}

void DramConfig::validate() const {
  check::at_least_one(size, "size");
  check::time(read_latency_ns, "read_latency_ns");
  check::time(write_latency_ns, "write_latency_ns");
  check::rate(bandwidth_gbps, "bandwidth_gbps");
}

}  // namespace smmu_vp

#include "hal_backend/hal_context.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "config/run_config.h"
#include "cpu/cpu_cluster.h"

namespace smmu_vp {

HalContext* HalContext::current_ = nullptr;

namespace {
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

HalContext::HalContext(const HalPlatform& p)
    : platform_(p),
      apps_(p.config.cpu.count),
      dma_alloc_(p.config.dram.base + p.config.dram.dma_region.offset, p.config.dram.dma_region.size),
      dram_host_(nullptr),
      dram_base_(p.config.dram.base),
      dram_size_(p.config.dram.size) {
  const auto& cfg = p.config;
  for (const auto& a : cfg.apps)
    for (unsigned c : a.cores) {
      apps_[c].assignment = &a;
      apps_[c].stat_prefix = "sw." + a.name + ".";
    }
  for (unsigned c = 0; c < apps_.size(); ++c) {
    uint64_t s = cfg.seed * 0x100000001B3ull + c;
    apps_[c].rng = splitmix64(s);
    apps_[c].spread_rng = splitmix64(s);
  }
  const Ps cycle = p.cpus.core(0).cycle_ps();
  for (const auto& [name, cycles] : cfg.costs) {
    auto spread = cfg.cost_spread.find(name);
    costs_.push_back({name, cycles * cycle, spread == cfg.cost_spread.end() ? 0.0 : spread->second});
  }
  for (const auto& d : cfg.devices) {
    hal_device_info info{};
    names_.push_back(std::make_unique<std::string>(d.name));
    info.name = names_.back()->c_str();
    names_.push_back(std::make_unique<std::string>(d.type));
    info.type = names_.back()->c_str();
    info.base = d.base;
    info.size = d.size;
    info.stream_id = d.stream_id;
    info.irq = d.irq;
    info.smmu = cfg.has_smmu ? cfg.device_smmu[devices_.size()] : 0;
    info.ats = d.uses_ats();
    devices_.push_back(info);
  }
  current_ = this;
}

HalContext::~HalContext() {
  if (current_ == this) current_ = nullptr;
}

HalContext& HalContext::current() {
  if (!current_) {
    std::fputs("smmu-vp: HAL called with no platform running\n", stderr);
    std::abort();
  }
  return *current_;
}

CpuCore& HalContext::core() {
  CpuCore* c = CpuCore::current();
  if (!c) {
    std::fputs("smmu-vp: HAL called outside a simulated core\n", stderr);
    std::abort();
  }
  return *c;
}

uint8_t* HalContext::dram_host() {
  if (dram_host_) return dram_host_;
  tlm::tlm_dmi dmi;
  CpuCore& c = core();
  if (!c.get_dmi(dram_base_, dmi) || !dmi.is_read_write_allowed() || dmi.get_start_address() > dram_base_ ||
      dmi.get_end_address() < dram_base_ + dram_size_ - 1)
    c.fatal("HAL: DRAM does not grant DMI over its whole range");
  dram_host_ = dmi.get_dmi_ptr() + (dram_base_ - dmi.get_start_address());
  return dram_host_;
}

int HalContext::cost_lookup(const char* name) const {
  for (size_t i = 0; i < costs_.size(); ++i)
    if (costs_[i].name == name) return static_cast<int>(i);
  return -1;
}

std::string HalContext::cost_names() const {
  std::string s;
  for (const auto& c : costs_) s += (s.empty() ? "" : ", ") + c.name;
  return s;
}

Ps HalContext::charge_ps(int handle, uint64_t count, unsigned cpu) {
  const CostClass& c = costs_[static_cast<size_t>(handle)];
  const Ps mean = c.ps * count;
  if (c.spread <= 0.0 || mean == 0) return mean;
  // An exponential draw of mean 1 by inversion, u in (0, 1) from the top 53
  // bits of the core's splitmix64 stream.
  const double u = (static_cast<double>(splitmix64(apps_[cpu].spread_rng) >> 11) + 0.5) * 0x1p-53;
  const double factor = (1.0 - c.spread) + c.spread * -std::log(u);
  // A draw far in the tail of a charge of days would not fit: saturate.
  const double ps = static_cast<double>(mean) * factor;
  return ps >= 9.0e18 ? std::numeric_limits<Ps>::max() : static_cast<Ps>(std::llround(ps));
}

}  // namespace smmu_vp

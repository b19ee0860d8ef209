// What bounded a run: each resource the platform can say the use of (the
// apps' cores, the command queue as the share of their time spent in it,
// DRAM, each NIC's link, each drive's bandwidth and media slots, the SMMU's
// translation slots, walkers and command lanes, each TBU's slots), as a
// share of what it can carry, and those at or above kBoundShare named as the bound. The
// summary prints it ("bound"), stats.json keeps it (run.bound), so that a
// result always says whether the SMMU, the CPU, the memory or a device set
// it. Plain C++: tested without a simulation.
#pragma once

#include <string>
#include <vector>

#include "common/stats.h"
#include "config/run_config.h"

namespace smmu_vp {

// At or above this share of its capacity a resource is called a bound.
constexpr double kBoundShare = 0.90;

struct ResourceUse {
  std::string resource;  // e.g. "drive nvme0 read bandwidth", "smmu walkers", "cores of fio"
  double share = 0;      // of its capacity, over the run (apps' cores: over their window)
};

// Every resource whose use the run's statistics give, most used first.
std::vector<ResourceUse> resource_use(const StatsRegistry& stats, const config::RunConfig& cfg);

// One line per resource at or above kBoundShare ("drive nvme0 read
// bandwidth 100.0 %"); empty when none is.
std::vector<std::string> bounds(const std::vector<ResourceUse>& use);

}  // namespace smmu_vp

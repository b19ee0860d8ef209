// The SMMU instances of a platform (platform.smmu and platform.smmus) and
// how the devices and TBUs are shared out among them: read, checked and
// resolved for RunConfig (run_config.cc), errors naming the JSON path.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "config/run_config.h"

namespace smmu_vp::config {

// Where instance i is configured: "/platform/smmu", "/platform/smmus/0" ...
std::string smmu_path(unsigned i);
// The checks of platform.smmu that no single parameter's range expresses
// (its features, its lines against intc.lines, TLB and walk-cache shapes).
void check_smmu(const RunConfig& rc);
// platform.smmus: copies of platform.smmu with their own name, registers and
// lines; which devices sit behind each is resolved with the devices.
void read_more_smmus(const nlohmann::json& list, RunConfig& rc);
// Which instance each device's master port sits behind (rc.device_smmu).
void resolve_device_smmus(RunConfig& rc);
// platform.smmu.tbus shared out among the instances; each instance's port map.
void resolve_tbus(RunConfig& rc);

}  // namespace smmu_vp::config

// The `atc` object of a PCIe device that can use ATS (nic, nvme): its ATC
// (models/common/device_atc.h), declared once for both.
#pragma once

#include <string>

#include "common/device_atc.h"
#include "common/stats.h"
#include "config/params.h"

namespace smmu_vp {

const config::ParamTable<AtcConfig>& atc_params();
// The summary line of device `name`'s ATC ("" when it has none).
std::string atc_summary(const std::string& name, const StatsRegistry& stats);
inline constexpr const char* kAtcHelp =
    "PCIe ATS with an Address Translation Cache in the device (docs/devices.md, \"ATS\"); needs "
    "platform.smmu.features.ats. Off by default (entries 0).";

}  // namespace smmu_vp

// The `atc` object of a PCIe device that can use ATS (nic, nvme): its ATC
// (models/common/device_atc.h), declared once for both.
#pragma once

#include "common/device_atc.h"
#include "config/params.h"

namespace smmu_vp {

const config::ParamTable<AtcConfig>& atc_params();
inline constexpr const char* kAtcHelp =
    "PCIe ATS with an Address Translation Cache in the device (docs/devices.md, \"ATS\"); needs "
    "platform.smmu.features.ats. Off by default (entries 0).";

}  // namespace smmu_vp

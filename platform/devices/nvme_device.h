// "type": "nvme": the NVMe drive (models/nvme) as a platform device.
#pragma once

#include "devices/platform_device.h"
#include "nvme/nvme.h"

namespace smmu_vp {

// The drive's configuration from a validated platform.devices entry.
NvmeConfig nvme_config(const DeviceConfig& d);

}  // namespace smmu_vp

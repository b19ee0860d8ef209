// "type": "nic": the multi-queue Ethernet controller (models/nic) as a
// platform device.
#pragma once

#include "devices/platform_device.h"
#include "nic/nic.h"

namespace smmu_vp {

// The NIC's configuration from a validated platform.devices entry.
NicConfig nic_config(const DeviceConfig& d);

}  // namespace smmu_vp

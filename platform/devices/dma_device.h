// "type": "dma": the generic copy engine (models/dma) as a platform device.
#pragma once

#include "devices/platform_device.h"
#include "dma/dma_engine.h"

namespace smmu_vp {

// The engine's configuration from a validated platform.devices entry.
DmaConfig dma_config(const DeviceConfig& d);

}  // namespace smmu_vp

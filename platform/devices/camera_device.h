// "type": "camera": the camera (models/camera) as a platform device.
#pragma once

#include "camera/camera.h"
#include "devices/platform_device.h"

namespace smmu_vp {

// The camera's configuration from a validated platform.devices entry.
CameraConfig camera_config(const DeviceConfig& d);

}  // namespace smmu_vp

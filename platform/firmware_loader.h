// Loads a firmware image: a shared object built against sw/hal/hal.h that
// exports `const struct hal_app smmu_vp_firmware` (docs/firmware.md).
#pragma once

#include <string>

#include "hal/hal.h"

namespace smmu_vp {

class FirmwareImage {
 public:
  // Throws std::runtime_error naming the file and what is wrong with it.
  explicit FirmwareImage(const std::string& path);
  ~FirmwareImage();
  FirmwareImage(const FirmwareImage&) = delete;
  FirmwareImage& operator=(const FirmwareImage&) = delete;

  const hal_app* app() const { return app_; }

 private:
  void* handle_ = nullptr;
  const hal_app* app_ = nullptr;
};

}  // namespace smmu_vp

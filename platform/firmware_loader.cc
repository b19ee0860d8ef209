#include "firmware_loader.h"

#include <dlfcn.h>

#include <stdexcept>

namespace smmu_vp {

FirmwareImage::FirmwareImage(const std::string& path) {
  // A path without a slash would make dlopen search the library path instead.
  const std::string p = path.find('/') == std::string::npos ? "./" + path : path;
  handle_ = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw std::runtime_error("firmware '" + path + "': cannot load: " + dlerror());
  app_ = static_cast<const hal_app*>(dlsym(handle_, HAL_FIRMWARE_SYMBOL));
  if (!app_) {
    dlclose(handle_);
    handle_ = nullptr;
    throw std::runtime_error("firmware '" + path + "': no symbol '" HAL_FIRMWARE_SYMBOL
                             "' (define it with HAL_FIRMWARE(...) from hal/hal.h)");
  }
  if (!app_->name || !app_->name[0] || !app_->main || !app_->summary) {
    dlclose(handle_);
    handle_ = nullptr;
    throw std::runtime_error("firmware '" + path + "': " HAL_FIRMWARE_SYMBOL " needs a name, a summary and a main function");
  }
}

FirmwareImage::~FirmwareImage() {
  if (handle_) dlclose(handle_);
}

}  // namespace smmu_vp

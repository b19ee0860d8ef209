#include "config/device_type.h"

#include <stdexcept>

namespace smmu_vp {

namespace {
std::map<std::string, DeviceType>& registry() {
  static std::map<std::string, DeviceType> r;  // built before first use, in any order of static init
  return r;
}
}  // namespace

bool register_device_type(DeviceType t) {
  const std::string name = t.type;
  if (!registry().emplace(name, std::move(t)).second)
    throw std::logic_error("device type \"" + name + "\" registered twice");
  return true;
}

const std::map<std::string, DeviceType>& device_types() { return registry(); }

const DeviceType* find_device_type(const std::string& type) {
  auto it = registry().find(type);
  return it == registry().end() ? nullptr : &it->second;
}

}  // namespace smmu_vp

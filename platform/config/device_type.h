// A device model's registration with the platform: its parameters, how large
// its register block is, how many interrupt lines it uses, how to build it,
// and what it adds to the run summary. Each model registers itself from its
// own file in platform/devices/ (REGISTER_DEVICE_TYPE below), so adding a
// device changes no central code, only the CMake source lists
// (docs/architecture.md, "Adding a device"): the configuration accepts its
// "type", the platform maps its registers, binds its master port behind the
// SMMU and finalizes it, and docs/config.md documents it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/schema.h"

namespace smmu_vp {

// One entry of platform.devices, validated, with what every device has.
struct DeviceConfig {
  std::string name;
  std::string type;
  uint64_t base = 0;
  uint64_t size = 0;       // register block, from the device type
  uint32_t stream_id = 0;  // StreamID of its master port's transactions
  uint32_t irq = 0;        // first wired interrupt line
  unsigned irq_lines = 0;  // lines it uses, irq .. irq + irq_lines - 1
  bool irq_given = true;   // false: the entry named none and the platform chose `irq` (assign_interrupt_lines)
  nlohmann::json params;   // the validated entry, defaults filled
  // A numeric parameter of the entry; 0 when it has none of that name.
  double number(const char* key) const {
    return params.contains(key) && params[key].is_number() ? params[key].get<double>() : 0.0;
  }
  // A PCIe device with an ATC that uses ATS (its atc.entries above 0).
  bool uses_ats() const { return params.contains("atc") && params["atc"].value("entries", 0) > 0; }
  std::string base_dir;    // where relative file paths in params start: the scenario file's directory
  // The platform's DMA region (platform.dram.dma_region.size): what a device
  // loads into DRAM for its driver (a trace's image) must fit in it.
  uint64_t dma_region_bytes = 0;
  // What layout() read for create() (e.g. a trace file: read once, and while
  // the configuration is checked), shared by copies.
  std::shared_ptr<const void> prepared;
};

// Built by create(), in devices/platform_device.h: a device's sockets and
// the environment it is built in. Declared here so that the configuration
// knows the registry without SystemC.
class PlatformDevice;
struct DeviceEnv;
class StatsRegistry;

struct DeviceType {
  std::string type;
  std::string help;
  std::string irq_help;  // what its interrupt lines are
  // Fields beyond the common type, base, stream_id and irq.
  std::vector<std::pair<std::string, config::NodePtr>> fields;
  // Register block size and number of interrupt lines of a validated entry.
  std::function<void(DeviceConfig&)> layout;
  std::function<std::unique_ptr<PlatformDevice>(const DeviceConfig&, DeviceEnv&)> create;
  // Lines for the run summary, from the device's stats ("" for none).
  std::function<std::string(const DeviceConfig&, const StatsRegistry&)> summary;
  // What the device adds to its section of stats.json beyond the registry's
  // numbers (e.g. names), or null for nothing; most types have no such hook.
  std::function<nlohmann::json(const DeviceConfig&, const StatsRegistry&)> results;
};

// A device model's own checks at the entry's JSON path: the struct's fields
// are named as the entry's parameters.
template <class Config>
void validate_device_config(const DeviceConfig& d, const Config& c) {
  config::validate_at(c, [&d](const std::string& field) { return "/platform/devices/" + d.name + "/" + field; });
}

// Registers a type; returns true (for static initialisers). A second
// registration of the same name throws std::logic_error.
bool register_device_type(DeviceType t);
// Every registered type by name.
const std::map<std::string, DeviceType>& device_types();
const DeviceType* find_device_type(const std::string& type);

}  // namespace smmu_vp

// Registers a device type from a function returning its DeviceType.
#define REGISTER_DEVICE_TYPE(fn) \
  static const bool registered_##fn = ::smmu_vp::register_device_type(fn())

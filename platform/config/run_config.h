// The validated configuration of one run: the platform (address map, DRAM,
// cores, cost table, devices) and the scenario (apps on cores, parameters,
// stop condition). Built from JSON by load_run_config(); documented in
// docs/config.md, whose reference section is generated from run_schema().
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/schema.h"
#include "cpu/cpu_cluster.h"
#include "cpu/interrupt_controller.h"
#include "config/device_type.h"
#include "memory/dram_core.h"
#include "memory/router.h"
#include "smmu/smmu.h"

struct hal_app;

namespace smmu_vp::config {

// platform.devices entries (config/device_type.h).
using smmu_vp::DeviceConfig;

struct AppAssignment {
  const hal_app* app = nullptr;
  // Which instance of its app this is (0 for the first scenario.apps entry
  // naming the app, 1 for the next ...), and the name its results go under
  // (sw.<name>.*): the app's own for the first, <app>_<instance> after,
  // unless the entry names it.
  unsigned instance = 0;
  std::string name;
  std::vector<unsigned> cores;
  std::map<std::string, uint64_t> params;  // every declared parameter, defaults filled
};

// Where the platform of a run comes from: the profile it names (empty for
// an inline platform or a plain platform file) and which of its values the
// scenario's "set" and the command line's --set changed (paths below
// "platform.").
struct PlatformOrigin {
  std::string profile;
  std::string file;
  std::vector<std::string> set_by_scenario, set_by_command_line;
};

struct RunConfig {
  // platform
  CpuConfig cpu;
  std::map<std::string, uint64_t> costs;  // cost class -> cycles
  // cost class -> the share of its cycles drawn at random (platform.cpu.cost_spread)
  std::map<std::string, double> cost_spread;
  DramConfig dram;
  InterconnectConfig interconnect;
  IntcConfig intc;
  std::vector<DeviceConfig> devices;
  // The SMMU between every device's master port and the router, if present.
  bool has_smmu = false;
  smmu::SmmuConfig smmu;
  // platform.smmus: more instances, each a copy of `smmu` with its own name,
  // registers, interrupt lines and devices (one per PCIe root complex).
  struct SmmuInstance {
    std::string name;
    smmu::SmmuConfig config;
    std::vector<std::string> masters;
  };
  std::vector<SmmuInstance> more_smmus;
  // The SMMU instance each device's master port sits behind (index into
  // smmu_config()); empty without an SMMU.
  std::vector<unsigned> device_smmu;
  unsigned smmu_count() const { return has_smmu ? 1u + static_cast<unsigned>(more_smmus.size()) : 0u; }
  // Instance i: 0 is platform.smmu ("smmu"), then platform.smmus in order.
  const smmu::SmmuConfig& smmu_config(unsigned i) const { return i == 0 ? smmu : more_smmus[i - 1].config; }
  smmu::SmmuConfig& smmu_config(unsigned i) { return i == 0 ? smmu : more_smmus[i - 1].config; }
  std::string smmu_name(unsigned i) const { return i == 0 ? "smmu" : more_smmus[i - 1].name; }
  // scenario
  std::string name, description;
  std::vector<AppAssignment> apps;
  uint64_t max_time_ps = 0;
  // scenario.window: one measurement window for every app (none while equal).
  uint64_t window_start_ps = 0, window_end_ps = 0;
  uint64_t seed = 1;
  bool platform_given = false;  // the document named a platform (else the built-in defaults)
  PlatformOrigin origin;
  // the whole validated document, defaults filled (written to OUT/config.json)
  nlohmann::json resolved;
};

// Schema of the whole document ({"platform": ..., "scenario": ...}).
const Node& run_schema();

// Loads a scenario file. "platform" may be an object, a path to a JSON file
// (relative to the scenario's directory) or the name of a profile
// (config/profile.h), whose provenance is checked. A top-level "sweep" section (read by
// `smmu-vp sweep`) is ignored. `overrides` are --set assignments.
// `apps` are the programs that can be named (built-in apps, or the firmware).
// Throws ConfigError (bad content) or std::runtime_error (unreadable file).
RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides,
                          const std::vector<const hal_app*>& apps);
// Same, from a document already in memory (relative paths from `base_dir`).
RunConfig build_run_config(nlohmann::json doc, const std::string& base_dir,
                           const std::vector<std::string>& overrides, const std::vector<const hal_app*>& apps);

// The whole of a text file; std::runtime_error naming it when it cannot be opened.
std::string read_file(const std::string& path);

// Markdown parameter reference (docs/config.md) including every app's parameters.
std::string render_config_reference(const std::vector<const hal_app*>& apps);

// The cost table every run starts from (platform.cpu.costs adds to it).
std::map<std::string, uint64_t> default_cost_table();

}  // namespace smmu_vp::config

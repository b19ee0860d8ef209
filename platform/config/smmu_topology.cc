#include "config/smmu_topology.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "config/schema.h"

namespace smmu_vp::config {

using nlohmann::json;

namespace {

unsigned u(const json& v) { return static_cast<unsigned>(v.get<uint64_t>()); }

// Instance i's interrupt lines exist.
void check_smmu_lines(const RunConfig& rc, unsigned i) {
  const smmu::SmmuConfig& c = rc.smmu_config(i);
  const std::pair<const char*, unsigned> lines[] = {
      {"eventq_irq", c.eventq_irq}, {"gerror_irq", c.gerror_irq}, {"sync_irq", c.sync_irq}};
  for (const auto& [line, n] : lines)
    if (n >= rc.intc.lines)
      throw ConfigError(smmu_path(i) + "/" + line, "line " + std::to_string(n) + " does not exist (intc.lines = " +
                                                      std::to_string(rc.intc.lines) + ")");
  if (c.features.pri && c.priq_irq >= rc.intc.lines)
    throw ConfigError(smmu_path(i) + "/priq_irq", "line " + std::to_string(c.priq_irq) +
                                                     " does not exist (intc.lines = " + std::to_string(rc.intc.lines) + ")");
}

// Where a field of SmmuConfig (InvalidConfig::field(), "translation.tlb.ways")
// is in platform.smmu: the translator's and the TBUs' parameters sit at its
// top level (platform_params.cc).
std::string smmu_json_path(const std::string& field) {
  static const std::pair<const char*, const char*> renamed[] = {
      {"translation.micro_tlb_entries", "micro_tlb.entries"},
      {"translation.micro_tlb_lookup_ns", "micro_tlb.lookup_ns"},
      {"translation.walk.step_ns", "walk_step_ns"},
      {"translation.distributed.", ""},
      {"translation.", ""}};
  // port_tbu is not a parameter: the platform fills it from tbus[].masters.
  if (field.rfind("translation.distributed.port_tbu", 0) == 0) return "/platform/smmu/tbus";
  std::string f = field;
  for (const auto& [from, to] : renamed)
    if (f.rfind(from, 0) == 0) {
      f = to + f.substr(std::string(from).size());
      break;
    }
  std::replace(f.begin(), f.end(), '.', '/');
  return "/platform/smmu/" + f;
}

}  // namespace

std::string smmu_path(unsigned i) { return i == 0 ? "/platform/smmu" : "/platform/smmus/" + std::to_string(i - 1); }

// The checks of platform.smmu that no single parameter's range expresses:
// the model's own (SmmuConfig::validate) at the parameters' JSON paths, and
// the interrupt lines against the interrupt controller.
void check_smmu(const RunConfig& rc) {
  validate_at(rc.smmu, smmu_json_path);
  check_smmu_lines(rc, 0);
}

// platform.smmus: copies of platform.smmu with their own name, registers and
// lines; which devices sit behind each is resolved with the devices.
void read_more_smmus(const json& list, RunConfig& rc) {
  if (!list.empty() && !rc.has_smmu)
    throw ConfigError("/platform/smmus", "more SMMU instances need platform.smmu, which they copy");
  std::set<std::string> names = {"smmu"};
  for (size_t k = 0; k < list.size(); ++k) {
    const json& e = list[k];
    RunConfig::SmmuInstance inst;
    inst.name = e["name"];
    const std::string at = "/platform/smmus/" + std::to_string(k);
    if (inst.name.empty() || inst.name.find_first_of(". ") != std::string::npos)
      throw ConfigError(at + "/name", "an SMMU instance needs a name without dots or spaces");
    if (inst.name == "dram" || inst.name == "intc" || inst.name == "cpus" || inst.name == "router" ||
        inst.name == "sw" || inst.name == "run")
      throw ConfigError(at + "/name", "\"" + inst.name + "\" is reserved for a platform component");
    if (!names.insert(inst.name).second)
      throw ConfigError(at + "/name", "SMMU \"" + inst.name + "\" is named twice");
    inst.config = rc.smmu;
    inst.config.base = e["base"];
    inst.config.eventq_irq = u(e["eventq_irq"]);
    inst.config.gerror_irq = u(e["gerror_irq"]);
    inst.config.sync_irq = u(e["sync_irq"]);
    inst.masters = e["masters"].get<std::vector<std::string>>();
    rc.more_smmus.push_back(std::move(inst));
    check_smmu_lines(rc, static_cast<unsigned>(k + 1));
  }
}

// Which SMMU instance each device's master port sits behind: the instance of
// platform.smmus that names it, else platform.smmu.
void resolve_device_smmus(RunConfig& rc) {
  if (!rc.has_smmu) return;
  rc.device_smmu.assign(rc.devices.size(), 0);
  for (size_t k = 0; k < rc.more_smmus.size(); ++k) {
    const RunConfig::SmmuInstance& inst = rc.more_smmus[k];
    const std::string at = "/platform/smmus/" + std::to_string(k);
    for (const DeviceConfig& d : rc.devices)
      if (d.name == inst.name) throw ConfigError(at + "/name", "\"" + inst.name + "\" is also a device's name");
    for (size_t m = 0; m < inst.masters.size(); ++m) {
      const std::string& dev = inst.masters[m];
      const auto it = std::find_if(rc.devices.begin(), rc.devices.end(), [&](const DeviceConfig& c) { return c.name == dev; });
      if (it == rc.devices.end())
        throw ConfigError(at + "/masters/" + std::to_string(m), "no device named \"" + dev + "\" in platform.devices");
      unsigned& owner = rc.device_smmu[static_cast<size_t>(it - rc.devices.begin())];
      if (owner != 0)
        throw ConfigError(at + "/masters/" + std::to_string(m),
                          "device \"" + dev + "\" is already behind SMMU \"" + rc.smmu_name(owner) + "\"");
      owner = static_cast<unsigned>(k + 1);
    }
  }
}

// A distributed SMMU's TBUs (platform.smmu.tbus), shared out among the SMMU
// instances: a TBU belongs to the instance its devices sit behind (one
// without devices to platform.smmu). Then each instance maps its master
// ports (its devices, in platform order) to its TBUs; every device is in
// exactly one TBU.
void resolve_tbus(RunConfig& rc) {
  const smmu::TranslatorConfig& t = rc.smmu.translation;
  const smmu::DistributedConfig& d = t.distributed;
  if (!d.enabled()) return;
  const std::string p = "/platform/smmu/tbus";
  constexpr unsigned kNone = ~0u;
  const std::vector<smmu::TbuSpec> all = d.tbus;
  std::vector<unsigned> device_tbu(rc.devices.size(), kNone), tbu_smmu(all.size(), 0);
  std::map<std::string, unsigned> names;
  for (unsigned i = 0; i < all.size(); ++i) {
    const smmu::TbuSpec& tbu = all[i];
    const std::string at = p + "/" + std::to_string(i);
    if (tbu.name.empty() || tbu.name.find_first_of(". ") != std::string::npos)
      throw ConfigError(at + "/name", "a TBU needs a name without dots or spaces");
    if (!names.emplace(tbu.name, i).second) throw ConfigError(at + "/name", "TBU \"" + tbu.name + "\" is named twice");
    for (unsigned m = 0; m < tbu.masters.size(); ++m) {
      const std::string& dev = tbu.masters[m];
      const auto it = std::find_if(rc.devices.begin(), rc.devices.end(), [&](const DeviceConfig& c) { return c.name == dev; });
      if (it == rc.devices.end())
        throw ConfigError(at + "/masters/" + std::to_string(m), "no device named \"" + dev + "\" in platform.devices");
      const size_t di = static_cast<size_t>(it - rc.devices.begin());
      if (device_tbu[di] != kNone)
        throw ConfigError(at + "/masters/" + std::to_string(m),
                          "device \"" + dev + "\" is already behind TBU \"" + all[device_tbu[di]].name + "\"");
      device_tbu[di] = i;
      if (m > 0 && rc.device_smmu[di] != tbu_smmu[i])
        throw ConfigError(at + "/masters/" + std::to_string(m),
                          "device \"" + dev + "\" sits behind SMMU \"" + rc.smmu_name(rc.device_smmu[di]) +
                              "\", the TBU's other devices behind \"" + rc.smmu_name(tbu_smmu[i]) +
                              "\": a TBU serves one SMMU instance");
      tbu_smmu[i] = rc.device_smmu[di];
    }
  }
  for (size_t i = 0; i < rc.devices.size(); ++i)
    if (device_tbu[i] == kNone)
      throw ConfigError(p, "device \"" + rc.devices[i].name + "\" is behind no TBU: name it in one TBU's masters");
  for (unsigned k = 0; k < rc.smmu_count(); ++k) {
    smmu::DistributedConfig& dk = rc.smmu_config(k).translation.distributed;
    std::vector<unsigned> local(all.size(), kNone);  // TBU index -> index among instance k's
    dk.tbus.clear();
    for (unsigned i = 0; i < all.size(); ++i)
      if (tbu_smmu[i] == k) {
        local[i] = static_cast<unsigned>(dk.tbus.size());
        dk.tbus.push_back(all[i]);
      }
    dk.port_tbu.clear();
    for (size_t i = 0; i < rc.devices.size(); ++i)
      if (rc.device_smmu[i] == k) dk.port_tbu.push_back(local[device_tbu[i]]);
  }
}

}  // namespace smmu_vp::config

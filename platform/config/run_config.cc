#include "config/run_config.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "config/default_costs.h"
#include "config/platform_params.h"
#include "cpu/interrupt_controller.h"
#include "hal/hal.h"
#include "memory/address_map.h"

namespace smmu_vp::config {

namespace {

using T = Type;

}  // namespace

static json default_costs() {
  json j = json::object();
  for (const DefaultCost& c : kDefaultCosts) j[c.name] = c.cycles;
  return j;
}

std::map<std::string, uint64_t> default_cost_table() {
  std::map<std::string, uint64_t> t;
  for (const DefaultCost& c : kDefaultCosts) t[c.name] = c.cycles;
  return t;
}

namespace {

// One schema per registered device type: the fields every device has, then
// the type's own (config/device_type.h).
NodePtr devices_schema() {
  std::map<std::string, NodePtr> variants;
  for (const auto& [name, t] : device_types()) {
    std::vector<std::pair<std::string, NodePtr>> fields = {
        {"type", choice(name, {name}, "Device model.")},
        {"base", leaf(T::kAddress, json(), "address", "Physical base of the register block.")},
        {"stream_id", ranged(T::kUint, 0, 0, 0xFFFFFFFFu, "", "StreamID of the transactions on its master port.")},
        {"irq", ranged(T::kUint, json(), 0, 1023, "line", t.irq_help)},
    };
    fields.insert(fields.end(), t.fields.begin(), t.fields.end());
    variants[name] = object(fields, t.help);
  }
  return map_of(variant(variants, ""), json::object(), "Devices by instance name; each entry's `type` selects its model.");
}

NodePtr platform_schema() {
  auto cpu = cpu_params().fields();
  cpu.emplace_back("costs", map_of(ranged(T::kUint, 0, 0, 1e9, "cycles", ""), default_costs(),
                                   "Cost table: named compute costs in cycles, charged by hal_cost(). Entries given here are added to (or replace) the defaults."));
  return object({
      {"cpu", object(cpu, "CPU cores that run sw/ code, and the cost of what they do.")},
      {"dram", object(dram_params().fields(), "Main memory.")},
      {"interconnect", object(interconnect_params().fields(), "The address router between initiators and targets.")},
      {"intc", object(intc_params().fields(), "Interrupt controller: wired lines and an MSI doorbell.")},
      {"smmu", optional(object(smmu_params().fields(), "SMMUv3 between the devices' master ports and memory. Absent: devices reach memory directly."))},
      {"devices", devices_schema()},
  }, "The hardware: cores, memory, interconnect, interrupt controller and devices. May be given inline or as the path of a JSON file, relative to the scenario file.");
}

NodePtr scenario_schema() {
  return object({
      {"name", leaf(T::kString, "unnamed", "", "Scenario name, shown in the results.")},
      {"description", leaf(T::kString, "", "", "What the scenario shows.")},
      {"seed", leaf(T::kUint, 1, "", "Seed of hal_random(); --seed overrides it.")},
      {"apps", array_of(object({
                            {"app", leaf(T::kString, json(), "", "Name of a built-in app (`smmu-vp apps` lists them) or of the --firmware image.")},
                            {"cores", array_of(ranged(T::kUint, 0, 0, 63, "", ""), json(), "Cores that run it, each at most once in the scenario.")},
                            {"params", map_of(leaf(T::kUintOrName, 0, "", ""), json::object(), "The app's parameters (see the app reference below); absent ones take their defaults. A parameter with named values also takes the name (e.g. \"cmdq\": \"lockfree\").")},
                        }),
                        json::array(), "Which program runs on which cores.")},
      {"stop", object({
           {"max_time_us", ranged(T::kNumber, 1e6, 0.001, 5e9, "us", "Simulated-time limit; reaching it ends the run as incomplete (exit 4). At most 5e9 us (83 minutes): SystemC counts femtoseconds in 64 bits.")},
       }, "When the run ends: when every app has returned, or at the time limit.")},
  }, "What runs.");
}

nlohmann::json parse_json(const std::string& text, const std::string& what) {
  return parse_json_document<nlohmann::json>(text, what);
}

// The names an app parameter's values go by (hal_param_decl.names).
std::vector<std::string> param_value_names(const hal_param_decl* decl) {
  std::vector<std::string> out;
  if (!decl || !decl->names) return out;
  std::string cur;
  for (const char* c = decl->names;; ++c) {
    if (*c == ',' || *c == 0) {
      out.push_back(cur);
      cur.clear();
      if (!*c) break;
    } else if (*c != ' ') {
      cur += *c;
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
  return out;
}

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

unsigned u(const json& v) { return static_cast<unsigned>(v.get<uint64_t>()); }

void check_address_map(const RunConfig& rc) {
  AddressMap map;
  auto add = [&](const std::string& name, uint64_t base, uint64_t size, const std::string& path) {
    try {
      map.add({name, base, size, 0});
    } catch (const std::invalid_argument& e) {
      throw ConfigError(path, e.what());
    }
  };
  add("dram", rc.dram.base, rc.dram.size, "/platform/dram/base");
  add("intc", rc.intc.base, InterruptController::kRegBlockSize, "/platform/intc/base");
  if (rc.has_smmu) add("smmu", rc.smmu.base, rc.smmu.features.register_space_size(), "/platform/smmu/base");
  for (const auto& d : rc.devices) add(d.name, d.base, d.size, "/platform/devices/" + d.name + "/base");
}

// No two interrupt sources may share a wired line: a handler would take the
// other's interrupts for its own.
void check_interrupt_lines(const RunConfig& rc) {
  struct Owner {
    std::string who, path;
  };
  std::map<unsigned, Owner> owner;
  auto claim = [&](unsigned line, const std::string& who, const std::string& path) {
    const auto [it, fresh] = owner.emplace(line, Owner{who, path});
    if (!fresh)
      throw ConfigError(path, "interrupt line " + std::to_string(line) + " of " + who + " is already " +
                                  it->second.who + "'s (" + it->second.path + ")");
  };
  if (rc.has_smmu) {
    claim(rc.smmu.eventq_irq, "the SMMU's event queue", "/platform/smmu/eventq_irq");
    claim(rc.smmu.gerror_irq, "the SMMU's global errors", "/platform/smmu/gerror_irq");
    claim(rc.smmu.sync_irq, "the SMMU's CMD_SYNC", "/platform/smmu/sync_irq");
  }
  for (const auto& d : rc.devices)
    for (unsigned i = 0; i < d.irq_lines; ++i)
      claim(d.irq + i, d.name, "/platform/devices/" + d.name + "/irq");
}

// The checks of platform.smmu that no single parameter's range expresses.
void check_smmu(const RunConfig& rc) {
  const std::string p = "/platform/smmu";
  const smmu::SmmuConfig& c = rc.smmu;
  const std::vector<std::string> problems = c.features.validate();
  if (!problems.empty()) throw ConfigError(p + "/features", "not a valid SMMU: " + problems.front());
  const std::pair<const char*, unsigned> lines[] = {
      {"eventq_irq", c.eventq_irq}, {"gerror_irq", c.gerror_irq}, {"sync_irq", c.sync_irq}};
  for (const auto& [line, n] : lines)
    if (n >= rc.intc.lines)
      throw ConfigError(p + "/" + line, "line " + std::to_string(n) + " does not exist (intc.lines = " +
                                           std::to_string(rc.intc.lines) + ")");
  const smmu::TranslatorConfig& t = c.translation;
  if (t.tlb.entries % t.tlb.ways != 0)
    throw ConfigError(p + "/tlb/ways", "entries (" + std::to_string(t.tlb.entries) + ") must be a multiple of ways");
  if (t.walk_cache.entries % t.walk_cache.ways != 0)
    throw ConfigError(p + "/walk_cache/ways", "entries must be a multiple of ways");
}

}  // namespace

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}


const Node& run_schema() {
  static const NodePtr schema = object({
      {"platform", platform_schema()},
      {"scenario", scenario_schema()},
  });
  return *schema;
}

RunConfig build_run_config(json doc, const std::string& base_dir, const std::vector<std::string>& overrides,
                           const std::vector<const hal_app*>& apps) {
  if (!doc.is_object()) throw ConfigError("", "expected an object with \"platform\" and \"scenario\"");
  // The same file serves `smmu-vp sweep`, which reads this section; a run
  // takes the base values and ignores it.
  doc.erase("sweep");
  if (doc.contains("platform") && doc["platform"].is_string()) {
    const std::string p = doc["platform"].get<std::string>();
    const std::string full = (!p.empty() && p[0] == '/') ? p : base_dir + "/" + p;
    doc["platform"] = parse_json(read_file(full), full);
  }
  // "set": overrides the scenario itself makes to the platform it names
  // (e.g. another SMMU profile), applied before the command line's.
  if (doc.contains("set")) {
    const json set = doc["set"];
    doc.erase("set");
    if (!set.is_object()) throw ConfigError("/set", "expected an object of \"dotted.path\": value");
    for (auto it = set.begin(); it != set.end(); ++it) apply_override(doc, it.key() + "=" + it.value().dump());
  }
  for (const auto& o : overrides) apply_override(doc, o);

  RunConfig rc;
  rc.platform_given = doc.contains("platform");
  rc.resolved = validate(run_schema(), doc);
  const json& pl = rc.resolved["platform"];
  const json& sc = rc.resolved["scenario"];
  rc.seed = sc["seed"];

  const json& cpu = pl["cpu"];
  cpu_params().read(cpu, rc.cpu);
  // User entries extend the default cost table rather than replace it.
  const json defaults = default_costs();
  for (auto it = defaults.begin(); it != defaults.end(); ++it) rc.costs[it.key()] = it.value().get<uint64_t>();
  for (auto it = cpu["costs"].begin(); it != cpu["costs"].end(); ++it) rc.costs[it.key()] = it.value().get<uint64_t>();
  rc.resolved["platform"]["cpu"]["costs"] = rc.costs;

  dram_params().read(pl["dram"], rc.dram);
  const DmaRegion& region = rc.dram.dma_region;
  if (region.offset >= rc.dram.size || region.size > rc.dram.size - region.offset)
    throw ConfigError("/platform/dram/dma_region", "must lie inside DRAM (offset + size <= dram.size)");
  if (rc.dram.base + (rc.dram.size - 1) < rc.dram.base)
    throw ConfigError("/platform/dram/size", "DRAM wraps past the top of the address space");

  interconnect_params().read(pl["interconnect"], rc.interconnect);
  intc_params().read(pl["intc"], rc.intc);

  if (pl.contains("smmu")) {
    rc.has_smmu = true;
    smmu_params().read(pl["smmu"], rc.smmu);
    check_smmu(rc);
    rc.smmu.translation.tlb.seed = rc.seed;
  }

  for (auto it = pl["devices"].begin(); it != pl["devices"].end(); ++it) {
    const json& d = it.value();
    const std::string path = "/platform/devices/" + it.key();
    DeviceConfig dc;
    dc.name = it.key();
    dc.type = d["type"];
    dc.base = d["base"];
    dc.stream_id = static_cast<uint32_t>(d["stream_id"].get<uint64_t>());
    dc.irq = u(d["irq"]);
    if (dc.name == "dram" || dc.name == "intc" || dc.name == "cpus" || dc.name == "router" || dc.name == "smmu")
      throw ConfigError(path, "name is reserved for a platform component");
    dc.params = d;
    dc.base_dir = base_dir;
    find_device_type(dc.type)->layout(dc);  // validation accepted only registered types
    if (dc.irq + dc.irq_lines > rc.intc.lines)
      throw ConfigError(path + "/irq", "lines " + std::to_string(dc.irq) + ".." + std::to_string(dc.irq + dc.irq_lines - 1) +
                                           " do not exist (intc.lines = " + std::to_string(rc.intc.lines) + ")");
    rc.devices.push_back(dc);
  }
  check_address_map(rc);
  check_interrupt_lines(rc);

  rc.name = sc["name"];
  rc.description = sc["description"];
  rc.max_time_ps = static_cast<uint64_t>(sc["stop"]["max_time_us"].get<double>() * 1e6);
  std::set<unsigned> used_cores;
  for (size_t i = 0; i < sc["apps"].size(); ++i) {
    const json& a = sc["apps"][i];
    const std::string path = "/scenario/apps/" + std::to_string(i);
    AppAssignment as;
    const std::string name = a["app"];
    std::string known;
    for (const hal_app* app : apps) {
      if (name == app->name) as.app = app;
      known += (known.empty() ? "" : ", ") + std::string(app->name);
    }
    if (!as.app) throw ConfigError(path + "/app", "no app named \"" + name + "\" (known: " + known + ")");
    if (a["cores"].empty()) throw ConfigError(path + "/cores", "must name at least one core");
    for (size_t k = 0; k < a["cores"].size(); ++k) {
      const unsigned c = u(a["cores"][k]);
      const std::string cp = path + "/cores/" + std::to_string(k);
      if (c >= rc.cpu.count) throw ConfigError(cp, "core " + std::to_string(c) + " does not exist (cpu.count = " + std::to_string(rc.cpu.count) + ")");
      if (!used_cores.insert(c).second) throw ConfigError(cp, "core " + std::to_string(c) + " already runs another app");
      as.cores.push_back(c);
    }
    for (const hal_param_decl* p = as.app->params; p && p->name; ++p) as.params[p->name] = p->default_value;
    for (auto it = a["params"].begin(); it != a["params"].end(); ++it) {
      if (!as.params.count(it.key())) {
        std::string declared;
        for (const auto& [k, v] : as.params) declared += (declared.empty() ? "" : ", ") + k;
        throw ConfigError(path + "/params/" + it.key(), "app \"" + name + "\" has no such parameter (it has: " +
                                                            (declared.empty() ? "none" : declared) + ")");
      }
      const hal_param_decl* decl = nullptr;
      for (const hal_param_decl* p = as.app->params; p && p->name; ++p)
        if (it.key() == p->name) decl = p;
      const std::string ppath = path + "/params/" + it.key();
      uint64_t v = 0;
      if (it.value().is_string()) {
        const std::string want = it.value().get<std::string>();
        const std::vector<std::string> names = param_value_names(decl);
        const auto found = std::find(names.begin(), names.end(), want);
        if (found == names.end())
          throw ConfigError(ppath, "app \"" + name + "\": " + it.key() + " = \"" + want + "\" is not a value it names" +
                                       (names.empty() ? " (it takes numbers only)" : " (one of: " + join(names) + ")"));
        v = static_cast<uint64_t>(found - names.begin());
      } else {
        v = it.value().get<uint64_t>();
      }
      if (decl->max && v > decl->max)
        throw ConfigError(ppath, "app \"" + name + "\": " + it.key() + " = " + std::to_string(v) + " is out of range (0 to " +
                                     std::to_string(decl->max) + ": " + decl->help + ")");
      as.params[it.key()] = v;
    }
    rc.resolved["scenario"]["apps"][i]["params"] = as.params;
    rc.apps.push_back(std::move(as));
  }
  return rc;
}

RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides,
                          const std::vector<const hal_app*>& apps) {
  return build_run_config(parse_json(read_file(path), path), dir_of(path), overrides, apps);
}

std::string render_config_reference(const std::vector<const hal_app*>& apps) {
  std::string out = render_reference(run_schema());
  out += "\n### App parameters (`scenario.apps.N.params`)\n";
  for (const hal_app* app : apps) {
    out += "\n`" + std::string(app->name) + "`: " + app->summary + "\n\n";
    if (!app->params || !app->params->name) {
      out += "No parameters.\n";
      continue;
    }
    out += "| parameter | default | range | description |\n|---|---|---|---|\n";
    for (const hal_param_decl* p = app->params; p->name; ++p)
      out += "| `" + std::string(p->name) + "` | " + std::to_string(p->default_value) + " | " +
             (p->names ? join(param_value_names(p)) + " (" : "") + (p->max ? "0 to " + std::to_string(p->max) : "any") +
             (p->names ? ")" : "") + " | " + p->help + " |\n";
  }
  return out;
}

}  // namespace smmu_vp::config

// build_run_config (run_config.h) in steps: resolve the document, validate
// it, then read the platform, its devices and the scenario (the scenario's
// apps and their parameters in app_params.cc), checking what the schema alone
// cannot: address ranges, interrupt lines, cores, parameter values.
#include "config/run_config.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "config/app_params.h"
#include "config/default_costs.h"
#include "config/platform_params.h"
#include "config/profile.h"
#include "config/smmu_topology.h"
#include "cpu/interrupt_controller.h"
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
        {"irq", optional(ranged(T::kUint, json(), 0, 1023, "line",
                                t.irq_help + " Absent: the platform gives the device the lowest free block of lines from 32 on, after every line given explicitly (config.json records it)."))},
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
  cpu.emplace_back("cost_spread", map_of(ranged(T::kNumber, 0, 0, 1, "share", ""), json::object(),
                                         "How much a class of the cost table (by its name in costs) varies from one charge to the next: the share, 0 to 1, of its cycles that each charge (one hal_cost() or hal_cost_id() call, whatever its count) draws from an exponential distribution with the same mean, so that the mean stays the class's cycles and the spread (standard deviation over mean) is this share; the rest is fixed. Draws come from each core's own stream, seeded by scenario.seed, so runs stay deterministic. Empty (default): every charge costs exactly its cycles. Real code paths vary (cache misses, branch history, interrupts), and a shared resource the cores queue for loses throughput to that variation long before it is saturated; a model with fixed costs does not."));
  return object({
      {"cpu", object(cpu, "CPU cores that run sw/ code, and the cost of what they do.")},
      {"dram", object(dram_params().fields(), "Main memory.")},
      {"interconnect", object(interconnect_params().fields(), "The address router between initiators and targets.")},
      {"intc", object(intc_params().fields(), "Interrupt controller: wired lines and an MSI doorbell.")},
      {"smmu", optional(object(smmu_params().fields(), "SMMUv3 between the devices' master ports and memory. Absent: devices reach memory directly."))},
      {"smmus", array_of(object({
           {"name", leaf(T::kString, json(), "", "Instance name, without dots or spaces: its statistics are <name>.*.")},
           {"base", leaf(T::kAddress, json(), "address", "Physical base of its register pages.")},
           {"eventq_irq", ranged(T::kUint, json(), 0, 1023, "line", "Wired interrupt of its event queue.")},
           {"gerror_irq", ranged(T::kUint, json(), 0, 1023, "line", "Wired interrupt of its global errors.")},
           {"sync_irq", ranged(T::kUint, json(), 0, 1023, "line", "Wired interrupt of its CMD_SYNC with CS = SIG_IRQ.")},
           {"masters", array_of(leaf(T::kString, json(), "", ""), json::array(),
                                "Devices whose master ports sit behind it (every other device sits behind platform.smmu).")},
       }, ""), json::array(),
       "More SMMU instances (docs/smmu.md, \"Several SMMU instances\"), as a large server puts one behind each PCIe root complex: each is a copy of platform.smmu (the same parameters) with its own name, registers, interrupt lines and devices, and its own StreamID space. Needs platform.smmu.")},
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
                            {"name", leaf(T::kString, "", "", "Name of this instance of the app, under which its results go (sw.<name>.*): letters, digits and _. Empty: the app's name for its first instance, <app>_<N> for its N-th after it.")},
                            {"cores", array_of(ranged(T::kUint, 0, 0, 255, "", ""), json(), "Cores that run it, each at most once in the scenario.")},
                            {"params", map_of(leaf(T::kUintOrName, 0, "", ""), json::object(), "The app's parameters (see the app reference below); absent ones take their defaults. A parameter with named values also takes the name (e.g. \"cmdq\": \"lockfree\").")},
                        }),
                        json::array(), "Which program runs on which cores.")},
      {"window", optional(object({
           {"warmup_us", ranged(T::kNumber, json(), 0, 5e9, "us", "When the window opens, from the start of the run.")},
           {"duration_us", ranged(T::kNumber, json(), 0.001, 5e9, "us", "How long it stays open.")},
       }, "One measurement window for every app of the scenario (fio, net_rx, net_tx, dma_map_bench), in place of each app's own warmup_us and duration (runtime_us, duration_us), so that the apps of a mixed run measure the same interval. An app still setting up when it opens starts measuring late, and says so."))},
      {"stop", object({
           {"max_time_us", ranged(T::kNumber, 1e6, 0.001, 5e9, "us", "Simulated-time limit; reaching it ends the run as incomplete (exit 4). At most 5e9 us (83 minutes): SystemC counts femtoseconds in 64 bits.")},
       }, "When the run ends: when every app has returned, or at the time limit.")},
  }, "What runs.");
}

nlohmann::json parse_json(const std::string& text, const std::string& what) {
  return parse_json_document<nlohmann::json>(text, what);
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
  for (unsigned i = 0; i < rc.smmu_count(); ++i)
    add(rc.smmu_name(i), rc.smmu_config(i).base, rc.smmu_config(i).features.register_space_size(), smmu_path(i) + "/base");
  for (const auto& d : rc.devices) add(d.name, d.base, d.size, "/platform/devices/" + d.name + "/base");
}

// Behind one SMMU no two devices may share a StreamID: they would share one
// STE, one context and one IOVA space, and each take the other's mappings.
// Each SMMU instance has a StreamID space of its own.
void check_stream_ids(const RunConfig& rc) {
  if (!rc.has_smmu) return;
  std::map<std::pair<unsigned, uint32_t>, std::string> owner;
  for (size_t i = 0; i < rc.devices.size(); ++i) {
    const DeviceConfig& d = rc.devices[i];
    const unsigned smmu = rc.device_smmu[i];
    const auto [it, fresh] = owner.emplace(std::make_pair(smmu, d.stream_id), d.name);
    if (!fresh)
      throw ConfigError("/platform/devices/" + d.name + "/stream_id",
                        "StreamID " + std::to_string(d.stream_id) + " is already " + it->second + "'s: each device behind " +
                            (rc.more_smmus.empty() ? "the SMMU" : "SMMU \"" + rc.smmu_name(smmu) + "\"") +
                            " needs its own");
  }
}

// A device that uses ATS (atc.entries > 0) needs an SMMU that has it.
void check_ats(const RunConfig& rc) {
  for (size_t i = 0; i < rc.devices.size(); ++i) {
    const DeviceConfig& d = rc.devices[i];
    if (!d.uses_ats()) continue;
    const std::string path = "/platform/devices/" + d.name + "/atc/entries";
    if (!rc.has_smmu) throw ConfigError(path, "a device using ATS needs an SMMU (the platform has none)");
    const unsigned smmu = rc.device_smmu[i];
    if (!rc.smmu_config(smmu).features.ats)
      throw ConfigError(path, "ATS needs the SMMU to have it: set " + smmu_path(smmu) + "/features/ats to true");
    if (d.params["atc"].value("pri", false) && !rc.smmu_config(smmu).features.pri)
      throw ConfigError("/platform/devices/" + d.name + "/atc/pri",
                        "PRI needs the SMMU to have it: set " + smmu_path(smmu) + "/features/pri to true");
  }
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
  for (unsigned i = 0; i < rc.smmu_count(); ++i) {
    const smmu::SmmuConfig& c = rc.smmu_config(i);
    const std::string who = i == 0 ? "the SMMU's" : "SMMU \"" + rc.smmu_name(i) + "\"'s";
    claim(c.eventq_irq, who + " event queue", smmu_path(i) + "/eventq_irq");
    claim(c.gerror_irq, who + " global errors", smmu_path(i) + "/gerror_irq");
    if (c.features.pri) claim(c.priq_irq, who + " PRI queue", smmu_path(i) + "/priq_irq");
    claim(c.sync_irq, who + " CMD_SYNC", smmu_path(i) + "/sync_irq");
  }
  for (const auto& d : rc.devices)
    for (unsigned i = 0; i < d.irq_lines; ++i)
      claim(d.irq + i, d.name, "/platform/devices/" + d.name + "/irq");
}

}  // namespace

std::string read_file(const std::string& path) {
  // A scenario or platform file is a regular file of modest size: a FIFO
  // would block forever, /dev/zero grow until the machine runs out of memory.
  constexpr uint64_t kMaxBytes = 64ull << 20;
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw std::runtime_error("'" + path + "' is not a regular file (a directory, a device or a FIFO?)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxBytes)
      throw std::runtime_error("'" + path + "' is larger than 64 MiB, more than any scenario or platform file");
  }
  return text;
}


const Node& run_schema() {
  static const NodePtr schema = object({
      {"platform", platform_schema()},
      {"scenario", scenario_schema()},
  });
  return *schema;
}

namespace {

// The document the schema sees: without the "sweep" section, with a named
// platform file read in, then the scenario's own "set" and the command
// line's --set applied, in that order.
// A named platform is a profile name or a file: a profile's provenance is
// checked here, so that no run uses a profile with an unsourced value.
// `origin` receives the profile and what the scenario and command line
// changed of it.
json resolve_document(json doc, const std::string& base_dir, const std::vector<std::string>& overrides,
                      PlatformOrigin& origin) {
  if (!doc.is_object()) throw ConfigError("", "expected an object with \"platform\" and \"scenario\"");
  // The same file serves `smmu-vp sweep`, which reads this section; a run
  // takes the base values and ignores it.
  doc.erase("sweep");
  // `--set platform=NAME` runs the scenario on another profile: it replaces
  // the platform before it is read, and the scenario's own "set" still
  // applies on top.
  std::vector<std::string> rest;
  for (const auto& o : overrides) {
    if (o.rfind("platform=", 0) == 0) {
      apply_override(doc, o);
      origin.set_by_command_line.push_back("platform");
    } else {
      rest.push_back(o);
    }
  }
  if (doc.contains("platform") && doc["platform"].is_string()) {
    const std::string named = doc["platform"];
    const Profile profile = load_profile(find_profile(named, base_dir));
    if (profile.is_profile) check_provenance(profile);
    origin.profile = profile.is_profile ? profile.name : "";
    origin.file = named;  // as the scenario names it: stats.json stays the same wherever the tree is
    doc["platform"] = profile.platform;
  } else if (doc.contains("platform") && doc["platform"].is_object()) {
    // A profile's content given inline (a test, a planned sweep job): its
    // values, without the profile's own keys.
    const Profile profile = profile_from_document(doc["platform"], "/platform", base_dir);
    if (profile.is_profile) check_provenance(profile);
    origin.profile = profile.is_profile ? profile.name : "";
    doc["platform"] = profile.platform;
  }
  auto note_platform_change = [](const std::string& path, std::vector<std::string>& into) {
    if (path.rfind("platform.", 0) == 0) into.push_back(path.substr(9));
  };
  // "set": overrides the scenario itself makes to the platform it names
  // (e.g. another SMMU profile), applied before the command line's.
  if (doc.contains("set")) {
    const json set = doc["set"];
    doc.erase("set");
    if (!set.is_object()) throw ConfigError("/set", "expected an object of \"dotted.path\": value");
    for (auto it = set.begin(); it != set.end(); ++it) {
      apply_override(doc, it.key() + "=" + it.value().dump());
      note_platform_change(it.key(), origin.set_by_scenario);
    }
  }
  for (const auto& o : rest) {
    apply_override(doc, o);
    note_platform_change(o.substr(0, o.find('=')), origin.set_by_command_line);
  }
  return doc;
}

// The validated document, defaults filled; the seed is read first because
// the SMMU's TLB takes it too.
RunConfig validate_document(const json& doc) {
  RunConfig rc;
  rc.platform_given = doc.contains("platform");
  rc.resolved = validate(run_schema(), doc);
  rc.seed = rc.resolved["scenario"]["seed"];
  return rc;
}

void read_cpu(const json& cpu, RunConfig& rc) {
  cpu_params().read(cpu, rc.cpu);
  if (rc.cpu.die_cores % rc.cpu.cluster_cores != 0)
    throw ConfigError("/platform/cpu/die_cores", "must be a multiple of cluster_cores (" +
                                                     std::to_string(rc.cpu.cluster_cores) + ")");
  // The home node takes a core id of its own.
  if (rc.cpu.far_atomics && rc.cpu.count >= CoherenceTracker::kMaxCores)
    throw ConfigError("/platform/cpu/far_atomics", "needs platform.cpu.count below " +
                                                       std::to_string(CoherenceTracker::kMaxCores) + " (it is " +
                                                       std::to_string(rc.cpu.count) + ")");
  // User entries extend the default cost table rather than replace it.
  const json defaults = default_costs();
  for (auto it = defaults.begin(); it != defaults.end(); ++it) rc.costs[it.key()] = it.value().get<uint64_t>();
  for (auto it = cpu["costs"].begin(); it != cpu["costs"].end(); ++it) rc.costs[it.key()] = it.value().get<uint64_t>();
  rc.resolved["platform"]["cpu"]["costs"] = rc.costs;
  for (auto it = cpu["cost_spread"].begin(); it != cpu["cost_spread"].end(); ++it) {
    if (!rc.costs.count(it.key())) {
      std::string known;
      for (const auto& [name, cycles] : rc.costs) known += (known.empty() ? "" : ", ") + name;
      throw ConfigError("/platform/cpu/cost_spread/" + it.key(), "no cost class of that name (known: " + known + ")");
    }
    rc.cost_spread[it.key()] = it.value().get<double>();
  }
}

void read_dram(const json& dram, RunConfig& rc) {
  dram_params().read(dram, rc.dram);
  validate_at(rc.dram, [](const std::string& field) { return "/platform/dram/" + field; });
  const DmaRegion& region = rc.dram.dma_region;
  if (region.offset >= rc.dram.size || region.size > rc.dram.size - region.offset)
    throw ConfigError("/platform/dram/dma_region", "must lie inside DRAM (offset + size <= dram.size)");
  if (rc.dram.base + (rc.dram.size - 1) < rc.dram.base)
    throw ConfigError("/platform/dram/size", "DRAM wraps past the top of the address space");
}

// platform.*, but for the devices: intc before the SMMU, whose lines it checks.
void read_platform(RunConfig& rc) {
  const json& pl = rc.resolved["platform"];
  read_cpu(pl["cpu"], rc);
  read_dram(pl["dram"], rc);
  interconnect_params().read(pl["interconnect"], rc.interconnect);
  intc_params().read(pl["intc"], rc.intc);
  if (pl.contains("smmu")) {
    rc.has_smmu = true;
    smmu_params().read(pl["smmu"], rc.smmu);
    check_smmu(rc);
    rc.smmu.translation.tlb.seed = rc.seed;
  }
  read_more_smmus(pl["smmus"], rc);
}

// One platform.devices entry, laid out by its type; the platform read so
// far bounds its interrupt lines and what it loads into DRAM.
DeviceConfig read_device(const std::string& name, const json& d, const std::string& base_dir, const RunConfig& rc) {
  const std::string path = "/platform/devices/" + name;
  DeviceConfig dc;
  dc.name = name;
  dc.type = d["type"];
  dc.base = d["base"];
  dc.stream_id = static_cast<uint32_t>(d["stream_id"].get<uint64_t>());
  dc.irq_given = d.contains("irq");
  dc.irq = dc.irq_given ? u(d["irq"]) : 0;
  if (dc.name == "dram" || dc.name == "intc" || dc.name == "cpus" || dc.name == "router" || dc.name == "smmu")
    throw ConfigError(path, "name is reserved for a platform component");
  dc.params = d;
  dc.base_dir = base_dir;
  dc.dma_region_bytes = rc.dram.dma_region.size;
  find_device_type(dc.type)->layout(dc);  // validation accepted only registered types
  const unsigned intc_lines = rc.intc.lines;
  if (dc.irq_given && dc.irq + dc.irq_lines > intc_lines)
    throw ConfigError(path + "/irq", "lines " + std::to_string(dc.irq) + ".." + std::to_string(dc.irq + dc.irq_lines - 1) +
                                         " do not exist (intc.lines = " + std::to_string(intc_lines) + ")");
  return dc;
}

// Devices that name no interrupt line get the lowest free block of their
// lines from 32 on (below are the private interrupts of a GIC), once every
// line given explicitly, the SMMUs' included, is taken; in platform order.
void assign_interrupt_lines(RunConfig& rc) {
  std::vector<bool> taken(rc.intc.lines, false);
  auto take = [&](unsigned first, unsigned n) {
    for (unsigned l = first; l < first + n && l < taken.size(); ++l) taken[l] = true;
  };
  for (unsigned i = 0; i < rc.smmu_count(); ++i) {
    const smmu::SmmuConfig& c = rc.smmu_config(i);
    for (unsigned l : {c.eventq_irq, c.gerror_irq, c.sync_irq}) take(l, 1);
  }
  for (const DeviceConfig& d : rc.devices)
    if (d.irq_given) take(d.irq, d.irq_lines);
  for (DeviceConfig& d : rc.devices) {
    if (d.irq_given || d.irq_lines == 0) continue;
    unsigned first = 32;
    for (unsigned run = 0; first + run < taken.size() && run < d.irq_lines;)
      if (taken[first + run]) {
        first += run + 1;
        run = 0;
      } else {
        ++run;
      }
    if (first + d.irq_lines > taken.size())
      throw ConfigError("/platform/devices/" + d.name + "/irq",
                        "no free block of " + std::to_string(d.irq_lines) + " interrupt lines left for it (intc.lines = " +
                            std::to_string(rc.intc.lines) + "): give it an irq, or the platform more intc.lines");
    d.irq = first;
    take(first, d.irq_lines);
    rc.resolved["platform"]["devices"][d.name]["irq"] = d.irq;
  }
}

// Every device, then the checks across them and the platform: address
// ranges and interrupt lines each have one owner.
void read_devices(RunConfig& rc, const std::string& base_dir) {
  const json& devices = rc.resolved["platform"]["devices"];
  for (auto it = devices.begin(); it != devices.end(); ++it)
    rc.devices.push_back(read_device(it.key(), it.value(), base_dir, rc));
  check_address_map(rc);
  assign_interrupt_lines(rc);
  check_interrupt_lines(rc);
  resolve_device_smmus(rc);
  check_stream_ids(rc);
  check_ats(rc);
  if (rc.has_smmu) resolve_tbus(rc);
}

// scenario.*: what runs, and until when.
void read_scenario(RunConfig& rc, const std::vector<const hal_app*>& apps) {
  const json& sc = rc.resolved["scenario"];
  rc.name = sc["name"];
  rc.description = sc["description"];
  rc.max_time_ps = static_cast<uint64_t>(sc["stop"]["max_time_us"].get<double>() * 1e6);
  if (sc.contains("window") && sc["window"].is_object()) {
    const json& w = sc["window"];
    rc.window_start_ps = static_cast<uint64_t>(w["warmup_us"].get<double>() * 1e6);
    rc.window_end_ps = rc.window_start_ps + static_cast<uint64_t>(w["duration_us"].get<double>() * 1e6);
    if (rc.window_end_ps > rc.max_time_ps)
      throw ConfigError("/scenario/window", "the window ends after stop.max_time_us");
  }
  read_apps(rc, apps);
}

}  // namespace

RunConfig build_run_config(json doc, const std::string& base_dir, const std::vector<std::string>& overrides,
                           const std::vector<const hal_app*>& apps) {
  PlatformOrigin origin;
  RunConfig rc = validate_document(resolve_document(std::move(doc), base_dir, overrides, origin));
  rc.origin = std::move(origin);
  read_platform(rc);
  read_devices(rc, base_dir);
  read_scenario(rc, apps);
  return rc;
}

RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides,
                          const std::vector<const hal_app*>& apps) {
  return build_run_config(parse_json(read_file(path), path), dir_of(path), overrides, apps);
}

std::string render_config_reference(const std::vector<const hal_app*>& apps) {
  return render_reference(run_schema()) + render_app_params_reference(apps);
}

}  // namespace smmu_vp::config

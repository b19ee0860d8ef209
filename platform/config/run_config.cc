#include "config/run_config.h"

#include <fstream>
#include <set>
#include <sstream>

#include "config/default_costs.h"
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

NodePtr cpu_schema() {
  const CpuConfig d;
  return object({
      {"count", ranged(T::kUint, d.count, 1, 64, "cores", "Number of CPU cores.")},
      {"frequency_mhz", ranged(T::kNumber, d.frequency_mhz, 1, 10000, "MHz", "Core clock; hal_cycles() and the cost table count cycles of it.")},
      {"quantum_ns", ranged(T::kNumber, d.quantum_ns, 1, 1e6, "ns", "Temporal-decoupling quantum: how far a core may run ahead of the others before it synchronises.")},
      {"shared_load_cycles", ranged(T::kUint, d.shared_load_cycles, 0, 1e6, "cycles", "hal_load*() of a cache line this core holds.")},
      {"atomic_cycles", ranged(T::kUint, d.atomic_cycles, 0, 1e6, "cycles", "Atomic read-modify-write or hal_store*() on a line this core owns.")},
      {"cacheline_transfer_ns", ranged(T::kNumber, d.cacheline_transfer_ns, 0, 1e6, "ns", "Extra cost when the line of an atomic or shared load is held by another core.")},
      {"dmb_cycles", ranged(T::kUint, d.dmb_cycles, 0, 1e6, "cycles", "HAL_BARRIER_DMB.")},
      {"dsb_cycles", ranged(T::kUint, d.dsb_cycles, 0, 1e6, "cycles", "HAL_BARRIER_DSB.")},
      {"isb_cycles", ranged(T::kUint, d.isb_cycles, 0, 1e6, "cycles", "HAL_BARRIER_ISB.")},
      {"cpu_relax_cycles", ranged(T::kUint, d.cpu_relax_cycles, 0, 1e6, "cycles", "hal_cpu_relax() in spin loops.")},
      {"event_stream_ns", ranged(T::kNumber, d.event_stream_ns, 0, 1e12, "ns", "Period of the event stream that wakes WFE (Linux uses 100 us); 0 disables it.")},
      {"stack_kib", ranged(T::kUint, d.stack_kib, 64, 1 << 20, "KiB", "Host stack of each core's thread (sw/ code runs on it).")},
      {"costs", map_of(ranged(T::kUint, 0, 0, 1e9, "cycles", ""), default_costs(),
                       "Cost table: named compute costs in cycles, charged by hal_cost(). Entries given here are added to (or replace) the defaults.")},
  }, "CPU cores that run sw/ code, and the cost of what they do.");
}

NodePtr dram_schema() {
  const DramConfig d;
  return object({
      {"base", leaf(T::kAddress, d.base, "address", "Physical base of DRAM.")},
      {"size", ranged(T::kAddress, d.size, 4096, 1ull << 44, "bytes", "DRAM size (host memory is used only for pages the run touches).")},
      {"read_latency_ns", ranged(T::kNumber, d.read_latency_ns, 0, 1e6, "ns", "Read latency once the data bus is granted.")},
      {"write_latency_ns", ranged(T::kNumber, d.write_latency_ns, 0, 1e6, "ns", "Write acknowledgement latency once the data bus is granted.")},
      {"bandwidth_gbps", ranged(T::kNumber, d.bandwidth_gbps, 0.001, 1e5, "GB/s", "Data bus bandwidth (bytes per ns); transfers queue behind each other for it.")},
      {"dma_region", object({
           {"offset", leaf(T::kAddress, d.dma_region.offset, "bytes", "Start of the region hal_dma_alloc() serves, from the DRAM base.")},
           {"size", ranged(T::kAddress, d.dma_region.size, 4096, 1ull << 44, "bytes", "Size of that region.")},
       }, "")},
  }, "Main memory.");
}

// One schema per registered device type: the fields every device has, then
// the type's own (devices/device_type.h).
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

// Feature switches a configuration may change on top of its profile, each
// with the SmmuFeatures member it sets (ID register fields, IHI 0070 6.3).
struct BoolFeature {
  const char* name;
  bool smmu::SmmuFeatures::*member;
  const char* help;
};
struct UintFeature {
  const char* name;
  unsigned smmu::SmmuFeatures::*member;
  unsigned min, max;
  const char* help;
};
const std::vector<BoolFeature>& bool_features() {
  static const std::vector<BoolFeature> v = {
      {"stage1", &smmu::SmmuFeatures::stage1, "IDR0.S1P: stage 1 translation."},
      {"stage2", &smmu::SmmuFeatures::stage2, "IDR0.S2P: stage 2 translation."},
      {"two_level_strtab", &smmu::SmmuFeatures::two_level_strtab, "IDR0.ST_LEVEL: two-level stream tables."},
      {"two_level_cd", &smmu::SmmuFeatures::two_level_cd, "IDR0.CD2L: two-level CD tables."},
      {"msi", &smmu::SmmuFeatures::msi, "IDR0.MSI: message-signalled interrupts."},
      {"sev", &smmu::SmmuFeatures::sev, "IDR0.SEV: WFE wake-up events."},
      {"cohacc", &smmu::SmmuFeatures::cohacc, "IDR0.COHACC: coherent table and queue accesses."},
      {"ecmdq", &smmu::SmmuFeatures::ecmdq, "IDR1.ECMDQ: enhanced command queues (needs MSI, COHACC, v3.3)."},
      {"ril", &smmu::SmmuFeatures::ril, "IDR3.RIL: range invalidation."},
      {"gran4k", &smmu::SmmuFeatures::gran4k, "IDR5.GRAN4K."},
      {"gran16k", &smmu::SmmuFeatures::gran16k, "IDR5.GRAN16K."},
      {"gran64k", &smmu::SmmuFeatures::gran64k, "IDR5.GRAN64K."},
  };
  return v;
}
const std::vector<UintFeature>& uint_features() {
  static const std::vector<UintFeature> v = {
      {"sidsize", &smmu::SmmuFeatures::sidsize, 0, 32, "IDR1.SIDSIZE: StreamID bits."},
      {"ssidsize", &smmu::SmmuFeatures::ssidsize, 0, 20, "IDR1.SSIDSIZE: SubstreamID bits."},
      {"cmdqs", &smmu::SmmuFeatures::cmdqs, 0, 19, "IDR1.CMDQS: log2 of the largest command queue."},
      {"eventqs", &smmu::SmmuFeatures::eventqs, 0, 19, "IDR1.EVENTQS: log2 of the largest event queue."},
      {"oas_bits", &smmu::SmmuFeatures::oas_bits, 32, 52, "IDR5.OAS in bits (32, 36, 40, 42, 44, 48 or 52)."},
      {"ecmdq_log2_pages", &smmu::SmmuFeatures::ecmdq_log2_pages, 0, 8, "IDR6.CMDQ_CONTROL_PAGE_LOG2NUMP: log2 of the command queue control pages."},
      {"ecmdq_log2_queues", &smmu::SmmuFeatures::ecmdq_log2_queues, 0, 8, "IDR6.CMDQ_CONTROL_PAGE_LOG2NUMQ: log2 of the ECMDQs per control page."},
  };
  return v;
}

NodePtr smmu_feature_overrides() {
  std::vector<std::pair<std::string, NodePtr>> fields;
  for (const auto& f : bool_features()) fields.emplace_back(f.name, optional(leaf(T::kBool, json(), "", f.help)));
  for (const auto& f : uint_features())
    fields.emplace_back(f.name, optional(ranged(T::kUint, json(), f.min, f.max, "", f.help)));
  return object(fields, "Changes to the profile; absent ones keep the profile's value.");
}

NodePtr smmu_schema() {
  const smmu::SmmuConfig d;
  const smmu::TranslatorConfig& t = d.translation;
  std::vector<std::string> profiles = smmu::profile_names();
  return optional(object({
      {"base", leaf(T::kAddress, json(), "address", "Physical base of the register pages (page 0; page 1 follows at +64 KiB).")},
      {"profile", choice(profiles.back(), profiles, "Feature profile: which SMMUv3 the ID registers describe (docs/smmu.md).")},
      {"features", smmu_feature_overrides()},
      {"eventq_irq", ranged(T::kUint, json(), 0, 1023, "line", "Wired interrupt of the event queue (used when no MSI is configured).")},
      {"gerror_irq", ranged(T::kUint, json(), 0, 1023, "line", "Wired interrupt of global errors (used when no MSI is configured).")},
      {"sync_irq", ranged(T::kUint, json(), 0, 1023, "line", "Wired interrupt of CMD_SYNC with CS = SIG_IRQ on an SMMU without MSIs.")},
      {"cmdq", object({
           {"fetch_batch", ranged(T::kUint, d.cmdq.fetch_batch, 1, 1 << 19, "commands", "Commands fetched by one memory read.")},
           {"decode_ns", ranged(T::kNumber, d.cmdq.decode_ns, 0, 1e6, "ns", "Per command, before it goes to a lane.")},
           {"cfgi_ns", ranged(T::kNumber, d.cmdq.cfgi_ns, 0, 1e6, "ns", "CFGI_* execution.")},
           {"tlbi_ns", ranged(T::kNumber, d.cmdq.tlbi_ns, 0, 1e6, "ns", "TLBI_* execution (the broadcast to TBUs).")},
           {"tlbi_per_entry_ns", ranged(T::kNumber, d.cmdq.tlbi_per_entry_ns, 0, 1e6, "ns", "Added per TLB entry a TLBI removes (0: fixed cost; else a scan).")},
           {"tlbi_range_ns", ranged(T::kNumber, d.cmdq.tlbi_range_ns, 0, 1e6, "ns", "A range TLBI (TG != 0), whatever the range.")},
           {"sync_ns", ranged(T::kNumber, d.cmdq.sync_ns, 0, 1e6, "ns", "CMD_SYNC, after the commands and translations it waits for.")},
           {"prefetch_ns", ranged(T::kNumber, d.cmdq.prefetch_ns, 0, 1e6, "ns", "PREFETCH_* execution.")},
           {"other_ns", ranged(T::kNumber, d.cmdq.other_ns, 0, 1e6, "ns", "ATC_INV and other commands.")},
           {"lanes", ranged(T::kUint, d.cmdq.lanes, 1, 64, "", "Commands executing at once.")},
       }, "Command queue consumer timing (docs/smmu.md).")},
      {"reg_latency_ns", ranged(T::kNumber, d.reg_latency_ns, 0, 1e6, "ns", "Register access latency.")},
      {"bypass_latency_ns", ranged(T::kNumber, d.bypass_latency_ns, 0, 1e6, "ns", "Added to a transaction passed through with SMMUEN = 0.")},
      {"tlb_lookup_ns", ranged(T::kNumber, t.tlb_lookup_ns, 0, 1e6, "ns", "TLB lookup, hit or miss.")},
      {"config_lookup_ns", ranged(T::kNumber, t.config_lookup_ns, 0, 1e6, "ns", "Config cache (STE or CD) lookup, hit or miss.")},
      {"walk_step_ns", ranged(T::kNumber, t.walk.step_ns, 0, 1e6, "ns", "Walker work per descriptor, after its read completes.")},
      {"translation_slots", ranged(T::kUint, t.translation_slots, 1, 4096, "", "Translations in progress at once; more queue.")},
      {"walker_slots", ranged(T::kUint, t.walker_slots, 1, 1024, "", "Table walks in progress at once; more queue.")},
      {"tlb", object({
           {"entries", ranged(T::kUint, t.tlb.entries, 1, 1 << 20, "entries", "TLB capacity.")},
           {"ways", ranged(T::kUint, t.tlb.ways, 1, 1 << 20, "ways", "Associativity; entries must be a multiple of it (ways = entries: fully associative).")},
           {"replacement", choice("lru", {"lru", "fifo", "random"}, "Replacement policy (random is seeded by scenario.seed).")},
       }, "")},
      {"config_cache", object({
           {"ste_entries", ranged(T::kUint, t.config_cache.ste_entries, 0, 1 << 20, "entries", "Cached STEs (0: none).")},
           {"cd_entries", ranged(T::kUint, t.config_cache.cd_entries, 0, 1 << 20, "entries", "Cached CDs (0: none).")},
       }, "")},
      {"micro_tlb", object({
           {"entries", ranged(T::kUint, t.micro_tlb_entries, 0, 4096, "entries", "Fully associative micro-TLB per master port, looked up before the main TLB (0: none).")},
           {"lookup_ns", ranged(T::kNumber, t.micro_tlb_lookup_ns, 0, 1e6, "ns", "Micro-TLB lookup, hit or miss.")},
       }, "")},
      {"stale_check", leaf(T::kBool, false, "", "Debug: check every TLB hit against the page tables in memory and count stale hits (smmu.stale_check.*), to measure the window of lazy invalidation. Costs host time, not simulated time.")},
      {"walk_cache", object({
           {"entries", ranged(T::kUint, t.walk_cache.entries, 1, 1 << 20, "entries", "Cached intermediate table addresses.")},
           {"ways", ranged(T::kUint, t.walk_cache.ways, 1, 1 << 20, "ways", "Associativity; entries must be a multiple of it.")},
       }, "")},
  }, "SMMUv3 between the devices' master ports and memory. Absent: devices reach memory directly."));
}

NodePtr platform_schema() {
  const InterconnectConfig ic;
  const IntcConfig intc;
  return object({
      {"cpu", cpu_schema()},
      {"dram", dram_schema()},
      {"interconnect", object({{"latency_ns", ranged(T::kNumber, ic.latency_ns, 0, 1e6, "ns", "Latency of one pass through the address router.")}},
                              "The address router between initiators and targets.")},
      {"intc", object({
           {"base", leaf(T::kAddress, intc.base, "address", "Physical base of the interrupt controller (MSI doorbell at +0x40).")},
           {"lines", ranged(T::kUint, intc.lines, 1, 1024, "", "Number of interrupt lines.")},
           {"reg_latency_ns", ranged(T::kNumber, intc.reg_latency_ns, 0, 1e6, "ns", "Register access latency.")},
       }, "Interrupt controller: wired lines and an MSI doorbell.")},
      {"smmu", smmu_schema()},
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
                            {"params", map_of(leaf(T::kUint, 0, "", ""), json::object(), "The app's parameters (see the app reference below); absent ones take their defaults.")},
                        }),
                        json::array(), "Which program runs on which cores.")},
      {"stop", object({
           {"max_time_us", ranged(T::kNumber, 1e6, 0.001, 1e12, "us", "Simulated-time limit; reaching it ends the run as incomplete (exit 4).")},
       }, "When the run ends: when every app has returned, or at the time limit.")},
  }, "What runs.");
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json parse_json(const std::string& text, const std::string& what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(what + ": not valid JSON: " + e.what());
  }
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

void parse_smmu(const json& j, RunConfig& rc) {
  const std::string p = "/platform/smmu";
  rc.has_smmu = true;
  rc.smmu.base = j["base"];
  smmu::SmmuConfig& c = rc.smmu;
  c.features = *smmu::profile_by_name(j["profile"]);
  const json& f = j["features"];
  for (const auto& b : bool_features())
    if (f.contains(b.name)) c.features.*b.member = f[b.name].get<bool>();
  for (const auto& n : uint_features())
    if (f.contains(n.name)) c.features.*n.member = u(f[n.name]);
  const std::vector<std::string> problems = c.features.validate();
  if (!problems.empty()) throw ConfigError(p + "/features", "not a valid SMMU: " + problems.front());
  c.eventq_irq = u(j["eventq_irq"]);
  c.gerror_irq = u(j["gerror_irq"]);
  c.sync_irq = u(j["sync_irq"]);
  const json& q = j["cmdq"];
  c.cmdq.fetch_batch = u(q["fetch_batch"]);
  c.cmdq.decode_ns = q["decode_ns"];
  c.cmdq.cfgi_ns = q["cfgi_ns"];
  c.cmdq.tlbi_ns = q["tlbi_ns"];
  c.cmdq.tlbi_per_entry_ns = q["tlbi_per_entry_ns"];
  c.cmdq.tlbi_range_ns = q["tlbi_range_ns"];
  c.cmdq.sync_ns = q["sync_ns"];
  c.cmdq.prefetch_ns = q["prefetch_ns"];
  c.cmdq.other_ns = q["other_ns"];
  c.cmdq.lanes = u(q["lanes"]);
  for (const char* line : {"eventq_irq", "gerror_irq", "sync_irq"})
    if (u(j[line]) >= rc.intc.lines)
      throw ConfigError(p + "/" + line, "line " + std::to_string(u(j[line])) + " does not exist (intc.lines = " +
                                           std::to_string(rc.intc.lines) + ")");
  c.reg_latency_ns = j["reg_latency_ns"];
  c.bypass_latency_ns = j["bypass_latency_ns"];
  c.stale_check = j["stale_check"];
  smmu::TranslatorConfig& t = c.translation;
  t.tlb_lookup_ns = j["tlb_lookup_ns"];
  t.config_lookup_ns = j["config_lookup_ns"];
  t.walk.step_ns = j["walk_step_ns"];
  t.translation_slots = u(j["translation_slots"]);
  t.walker_slots = u(j["walker_slots"]);
  t.tlb.entries = u(j["tlb"]["entries"]);
  t.tlb.ways = u(j["tlb"]["ways"]);
  if (t.tlb.entries % t.tlb.ways != 0)
    throw ConfigError(p + "/tlb/ways", "entries (" + std::to_string(t.tlb.entries) + ") must be a multiple of ways");
  const std::string repl = j["tlb"]["replacement"];
  t.tlb.replacement = repl == "lru" ? smmu::ReplacementPolicy::kLru
                      : repl == "fifo" ? smmu::ReplacementPolicy::kFifo : smmu::ReplacementPolicy::kRandom;
  t.tlb.seed = rc.seed;
  t.micro_tlb_entries = u(j["micro_tlb"]["entries"]);
  t.micro_tlb_lookup_ns = j["micro_tlb"]["lookup_ns"];
  t.config_cache.ste_entries = u(j["config_cache"]["ste_entries"]);
  t.config_cache.cd_entries = u(j["config_cache"]["cd_entries"]);
  t.walk_cache.entries = u(j["walk_cache"]["entries"]);
  t.walk_cache.ways = u(j["walk_cache"]["ways"]);
  if (t.walk_cache.entries % t.walk_cache.ways != 0)
    throw ConfigError(p + "/walk_cache/ways", "entries must be a multiple of ways");
}

}  // namespace

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
  rc.resolved = validate(run_schema(), doc);
  const json& pl = rc.resolved["platform"];
  const json& sc = rc.resolved["scenario"];
  rc.seed = sc["seed"];

  const json& cpu = pl["cpu"];
  rc.cpu.count = u(cpu["count"]);
  rc.cpu.frequency_mhz = cpu["frequency_mhz"];
  rc.cpu.quantum_ns = cpu["quantum_ns"];
  rc.cpu.shared_load_cycles = cpu["shared_load_cycles"];
  rc.cpu.atomic_cycles = cpu["atomic_cycles"];
  rc.cpu.cacheline_transfer_ns = cpu["cacheline_transfer_ns"];
  rc.cpu.dmb_cycles = cpu["dmb_cycles"];
  rc.cpu.dsb_cycles = cpu["dsb_cycles"];
  rc.cpu.isb_cycles = cpu["isb_cycles"];
  rc.cpu.cpu_relax_cycles = cpu["cpu_relax_cycles"];
  rc.cpu.event_stream_ns = cpu["event_stream_ns"];
  rc.cpu.stack_kib = cpu["stack_kib"];
  // User entries extend the default cost table rather than replace it.
  const json defaults = default_costs();
  for (auto it = defaults.begin(); it != defaults.end(); ++it) rc.costs[it.key()] = it.value().get<uint64_t>();
  for (auto it = cpu["costs"].begin(); it != cpu["costs"].end(); ++it) rc.costs[it.key()] = it.value().get<uint64_t>();
  rc.resolved["platform"]["cpu"]["costs"] = rc.costs;

  const json& dram = pl["dram"];
  rc.dram.base = dram["base"];
  rc.dram.size = dram["size"];
  rc.dram.read_latency_ns = dram["read_latency_ns"];
  rc.dram.write_latency_ns = dram["write_latency_ns"];
  rc.dram.bandwidth_gbps = dram["bandwidth_gbps"];
  rc.dram.dma_region.offset = dram["dma_region"]["offset"];
  rc.dram.dma_region.size = dram["dma_region"]["size"];
  if (rc.dram.dma_region.offset >= rc.dram.size || rc.dram.dma_region.size > rc.dram.size - rc.dram.dma_region.offset)
    throw ConfigError("/platform/dram/dma_region", "must lie inside DRAM (offset + size <= dram.size)");
  if (rc.dram.base + (rc.dram.size - 1) < rc.dram.base)
    throw ConfigError("/platform/dram/size", "DRAM wraps past the top of the address space");

  rc.interconnect.latency_ns = pl["interconnect"]["latency_ns"];
  rc.intc.base = pl["intc"]["base"];
  rc.intc.lines = u(pl["intc"]["lines"]);
  rc.intc.reg_latency_ns = pl["intc"]["reg_latency_ns"];

  if (pl.contains("smmu")) parse_smmu(pl["smmu"], rc);

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
    find_device_type(dc.type)->layout(dc);  // validation accepted only registered types
    if (dc.irq + dc.irq_lines > rc.intc.lines)
      throw ConfigError(path + "/irq", "lines " + std::to_string(dc.irq) + ".." + std::to_string(dc.irq + dc.irq_lines - 1) +
                                           " do not exist (intc.lines = " + std::to_string(rc.intc.lines) + ")");
    rc.devices.push_back(dc);
  }
  check_address_map(rc);

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
      as.params[it.key()] = it.value().get<uint64_t>();
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
    out += "| parameter | default | description |\n|---|---|---|\n";
    for (const hal_param_decl* p = app->params; p->name; ++p)
      out += "| `" + std::string(p->name) + "` | " + std::to_string(p->default_value) + " | " + p->help + " |\n";
  }
  return out;
}

}  // namespace smmu_vp::config

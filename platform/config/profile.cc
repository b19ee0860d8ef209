// Machine profiles and their provenance (profile.h).
#include "config/profile.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "config/run_config.h"

#ifndef SMMU_VP_INSTALLED_PROFILE_DIR
#define SMMU_VP_INSTALLED_PROFILE_DIR "share/smmu-vp/platform/platforms"
#endif
#ifndef SMMU_VP_PROFILE_DIR
#define SMMU_VP_PROFILE_DIR "platform/platforms"
#endif

namespace smmu_vp::config {

using nlohmann::json;

namespace {

// Parameters with a timing unit that are settings of the simulator, not
// properties of the machine: they need no provenance.
const std::set<std::string> kSimulatorSettings = {"cpu.quantum_ns"};

const std::set<std::string> kKinds = {"source", "fitted", "guess"};

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : sep) + e;
  return s;
}

// A non-empty string field of a provenance entry, or ConfigError.
void require_text(const json& entry, const char* field, const std::string& where, const std::string& kind) {
  if (!entry.contains(field) || !entry[field].is_string() || entry[field].get<std::string>().empty())
    throw ConfigError(where, "a \"" + kind + "\" entry needs \"" + field + "\" (a non-empty string)");
}

Provenance read_entry(const json& entry, const std::string& where, const std::string& file) {
  if (!entry.is_object() || !entry.contains("kind") || !entry["kind"].is_string())
    throw ConfigError(where, "expected an object with \"kind\": \"source\", \"fitted\" or \"guess\"");
  const std::string kind = entry["kind"];
  if (!kKinds.count(kind))
    throw ConfigError(where, "unknown kind \"" + kind + "\" (expected \"source\", \"fitted\" or \"guess\")");
  if (kind == "source") {
    require_text(entry, "quote", where, kind);
    require_text(entry, "address", where, kind);
  } else if (kind == "fitted") {
    if (!entry.contains("to") || !entry["to"].is_array() || entry["to"].empty() ||
        !std::all_of(entry["to"].begin(), entry["to"].end(), [](const json& t) { return t.is_string(); }))
      throw ConfigError(where, "a \"fitted\" entry needs \"to\": the figures it was fitted to (a non-empty array of ids)");
    require_text(entry, "residual", where, kind);
  } else {
    require_text(entry, "reasoning", where, kind);
  }
  return {kind, entry, file};
}

// `file` and what it extends, merged into `p` (the parent first, so the
// child's values and provenance win).
void absorb(json doc, const std::string& file, const std::string& base_dir, Profile& p, std::vector<std::string>& seen);

void load_chain(const std::string& file, Profile& p, std::vector<std::string>& seen) {
  if (std::find(seen.begin(), seen.end(), file) != seen.end())
    throw ConfigError(file + ": extends", "a cycle: " + join(seen, " -> ") + " -> " + file);
  seen.push_back(file);
  absorb(parse_json_document<json>(read_file(file), file), file, dir_of(file), p, seen);
  seen.pop_back();
}

// One platform document (`file` names it in messages) merged into `p`.
void absorb(json doc, const std::string& file, const std::string& base_dir, Profile& p, std::vector<std::string>& seen) {
  if (!doc.is_object()) throw ConfigError(file, "expected a JSON object (a platform)");
  if (doc.contains("extends")) {
    if (!doc["extends"].is_string()) throw ConfigError(file + ": extends", "expected the path of a profile file");
    const std::string parent = doc["extends"];
    load_chain(find_profile(parent, base_dir), p, seen);
    doc.erase("extends");
  }
  if (doc.contains("provenance")) {
    const json& prov = doc["provenance"];
    if (!prov.is_object()) throw ConfigError(file + ": provenance", "expected an object of \"parameter.path\": entry");
    for (auto it = prov.begin(); it != prov.end(); ++it)
      p.provenance[it.key()] = read_entry(it.value(), file + ": provenance." + it.key(), file);
    doc.erase("provenance");
  }
  if (doc.contains("profile")) {
    const json& meta = doc["profile"];
    for (const char* f : {"name", "title", "machine"})
      if (!meta.is_object() || !meta.contains(f) || !meta[f].is_string() || meta[f].get<std::string>().empty())
        throw ConfigError(file + ": profile." + f, "a profile needs a non-empty \"" + std::string(f) + "\"");
    p.name = meta["name"];
    p.title = meta["title"];
    p.machine = meta["machine"];
    p.is_profile = true;
    doc.erase("profile");
  }
  p.platform.merge_patch(doc);
  p.chain.insert(p.chain.begin(), file);
}

const Node& platform_node() {
  for (const auto& [name, node] : run_schema().fields)
    if (name == "platform") return *node;
  throw std::logic_error("run_schema() has no platform");
}

const Provenance* lookup(const Profile& p, const std::string& key, const std::string& type_key) {
  auto it = p.provenance.find(key);
  if (it == p.provenance.end() && !type_key.empty()) it = p.provenance.find(type_key);
  return it == p.provenance.end() ? nullptr : &it->second;
}

// Walks `node` over `value`: every leaf's key into `all`, every timing
// leaf into `rows`. `type_key` is the same path by device type, for the
// parameters of a device.
void walk(const Profile& p, const Node& node, const json& value, const std::string& key, const std::string& type_key,
          std::vector<ProvenanceRow>& rows, std::set<std::string>& all) {
  auto sub = [](const std::string& base, const std::string& k) { return base.empty() ? k : base + "." + k; };
  switch (node.type) {
    case Type::kObject:
      for (const auto& [name, f] : node.fields)
        if (value.is_object() && value.contains(name))
          walk(p, *f, value[name], sub(key, name), type_key.empty() ? "" : sub(type_key, name), rows, all);
      return;
    case Type::kMap:
      if (key == "devices") {
        const Node& v = *node.element;
        for (auto it = value.begin(); it != value.end(); ++it) {
          const std::string type = it.value().value("type", "");
          auto var = v.variants.find(type);
          if (var == v.variants.end()) continue;
          walk(p, *var->second, it.value(), "devices." + it.key(), "device_types." + type, rows, all);
        }
        return;
      }
      for (auto it = value.begin(); it != value.end(); ++it)
        walk(p, *node.element, it.value(), sub(key, it.key()), "", rows, all);
      return;
    case Type::kArray:
    case Type::kVariant:
      return;
    default:
      all.insert(key);
      if (!type_key.empty()) all.insert(type_key);
      if (kSimulatorSettings.count(key)) return;
      // Every timing value; other values (sizes, counts) when the profile sources them.
      if (is_timing_unit(node.unit)) rows.push_back({key, value, node.unit, lookup(p, key, type_key)});
      else if (const Provenance* prov = lookup(p, key, type_key)) rows.push_back({key, value, node.unit, prov});
  }
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::string out;
  for (char c : s) out += (c == '|') ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string format_value(const json& v) {
  if (v.is_number_float()) {
    std::ostringstream os;
    os << v.get<double>();
    return os.str();
  }
  return v.dump();
}

}  // namespace

bool is_timing_unit(const std::string& unit) {
  static const std::set<std::string> units = {"ps", "ns", "us", "ms", "cycles", "MHz", "GB/s", "Gbit/s", "MB/s"};
  return units.count(unit) > 0;
}

std::string profile_dir() {
  if (const char* env = std::getenv("SMMU_VP_PROFILES"); env && *env) return env;
  // An installed smmu-vp (cmake --install, the Debian package) finds them
  // beside it: <prefix>/bin/smmu-vp, <prefix>/share/smmu-vp/platform/platforms.
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path installed = exe.parent_path().parent_path() / SMMU_VP_INSTALLED_PROFILE_DIR;
    if (std::filesystem::is_directory(installed, ec)) return installed.string();
  }
  return SMMU_VP_PROFILE_DIR;
}

std::vector<std::string> profile_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(profile_dir(), ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string find_profile(const std::string& name_or_path, const std::string& base_dir) {
  const bool bare = name_or_path.find('/') == std::string::npos &&
                    (name_or_path.size() < 5 || name_or_path.compare(name_or_path.size() - 5, 5, ".json") != 0);
  if (!bare) return (!name_or_path.empty() && name_or_path[0] == '/') ? name_or_path : base_dir + "/" + name_or_path;
  const std::string file = profile_dir() + "/" + name_or_path + ".json";
  if (!std::filesystem::exists(file))
    throw ConfigError(name_or_path, "unknown profile (known: " + join(profile_names(), ", ") + "; in " + profile_dir() + ")");
  return file;
}

Profile load_profile(const std::string& path) {
  Profile p;
  p.platform = json::object();
  p.file = path;
  std::vector<std::string> seen;
  load_chain(path, p, seen);
  return p;
}

Profile profile_from_document(const json& doc, const std::string& label, const std::string& base_dir) {
  Profile p;
  p.platform = json::object();
  p.file = label;
  std::vector<std::string> seen;
  absorb(doc, label, base_dir, p, seen);
  return p;
}

json resolved_platform(const Profile& profile) {
  json platform = validate(platform_node(), profile.platform, "/platform");
  // A run adds the entries it is given to the default cost table (read_cpu).
  for (const auto& [name, cycles] : default_cost_table())
    if (!platform["cpu"]["costs"].contains(name)) platform["cpu"]["costs"][name] = cycles;
  return platform;
}

std::vector<ProvenanceRow> provenance_rows(const Profile& profile, const json& platform) {
  std::vector<ProvenanceRow> rows;
  std::set<std::string> all;
  walk(profile, platform_node(), platform, "", "", rows, all);
  return rows;
}

void check_provenance(const Profile& profile) {
  const json platform = resolved_platform(profile);
  std::vector<ProvenanceRow> rows;
  std::set<std::string> all;
  walk(profile, platform_node(), platform, "", "", rows, all);
  for (const auto& r : rows)
    if (!r.provenance)
      throw ConfigError(profile.file + ": provenance." + r.key,
                        "the timing value " + format_value(r.value) + " " + r.unit +
                            " has no provenance (a \"source\", \"fitted\" or \"guess\" entry)");
  for (const auto& [key, prov] : profile.provenance)
    if (!all.count(key))
      throw ConfigError(prov.file + ": provenance." + key, "names no parameter of the platform");
}

std::string render_profile(const Profile& profile) {
  const json platform = resolved_platform(profile);
  std::ostringstream os;
  os << "### `" << profile.name << "`: " << profile.title << "\n\n" << profile.machine << "\n\n";
  os << "Files: ";
  for (size_t i = 0; i < profile.chain.size(); ++i)
    os << (i ? " extends " : "") << "`" << std::filesystem::path(profile.chain[i]).filename().string() << "`";
  os << ".\n\n| parameter | value | unit | kind | provenance |\n|---|---|---|---|---|\n";
  for (const auto& r : provenance_rows(profile, platform)) {
    os << "| `" << r.key << "` | " << format_value(r.value) << " | " << r.unit << " | ";
    if (!r.provenance) {
      os << "**none** | |\n";
      continue;
    }
    const json& e = r.provenance->entry;
    os << r.provenance->kind << " | ";
    if (r.provenance->kind == "source") {
      os << "\"" << one_line(e["quote"]) << "\" (" << one_line(e["address"]) << ")";
      if (e.contains("note")) os << "; " << one_line(e["note"]);
    } else if (r.provenance->kind == "fitted") {
      std::vector<std::string> to;
      for (const auto& t : e["to"]) to.push_back("`" + t.get<std::string>() + "`");
      os << "to " << join(to, ", ") << "; residual " << one_line(e["residual"]);
      if (e.contains("note")) os << "; " << one_line(e["note"]);
    } else {
      os << one_line(e["reasoning"]);
    }
    os << " |\n";
  }
  return os.str();
}

}  // namespace smmu_vp::config

// fuzz_config: the configuration loader (platform/config/run_config.h). The
// input is a JSON document, then, after each NUL byte, one `--set`
// assignment ("dotted.path=value"). It goes through parse_json_document (as
// load_run_config reads a file) and build_run_config with the built-in apps.
// The loader's contract is ConfigError for bad content and
// std::runtime_error for an unreadable or invalid file: any other exception
// (a json::type_error from an unchecked access, std::out_of_range, ...) or a
// crash is a bug.
// "platform" may name a file or a profile, and an inline platform may
// extend one (config/profile.h: its provenance is checked); only the shipped
// profiles are allowed, so that the fuzzer cannot make the loader read
// /dev/zero.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/apps.h"
#include "config/profile.h"
#include "config/run_config.h"
#include "config/schema.h"

using smmu_vp::config::ConfigError;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts;
  size_t pos = 0;
  while (true) {
    const size_t z = input.find('\0', pos);
    parts.push_back(input.substr(pos, z == std::string::npos ? std::string::npos : z - pos));
    if (z == std::string::npos) break;
    pos = z + 1;
  }
  if (parts.size() > 17) return 0;  // a handful of overrides is all a command line has
  static const std::vector<const hal_app*> apps(sw_apps, sw_apps + sw_app_count);

  nlohmann::json doc;
  try {
    doc = smmu_vp::config::parse_json_document<nlohmann::json>(parts[0], "<fuzz>");
  } catch (const std::runtime_error&) {
    return 0;
  }
  // A platform file, or a profile an inline platform extends, only among
  // the shipped profiles (by name or as ../platforms/NAME.json).
  auto shipped = [](const nlohmann::json& name) {
    if (!name.is_string()) return false;
    for (const auto& p : smmu_vp::config::profile_names())
      if (name == p || name == "../platforms/" + p + ".json") return true;
    return false;
  };
  if (doc.is_object() && doc.contains("platform")) {
    const nlohmann::json& pl = doc["platform"];
    if (pl.is_string() && !shipped(pl)) return -1;  // keep it out of the corpus
    if (pl.is_object() && pl.contains("extends") && !shipped(pl["extends"])) return -1;
  }
  const std::vector<std::string> overrides(parts.begin() + 1, parts.end());
  try {
    const smmu_vp::config::RunConfig rc =
        smmu_vp::config::build_run_config(doc, SMMU_VP_SCENARIO_DIR, overrides, apps);
    // The resolved document is a complete configuration: it must load again.
    smmu_vp::config::build_run_config(rc.resolved, SMMU_VP_SCENARIO_DIR, {}, apps);
  } catch (const ConfigError&) {
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "json exception escaped the loader: %s\n", e.what());
    std::abort();
  } catch (const std::runtime_error&) {
  }
  return 0;
}

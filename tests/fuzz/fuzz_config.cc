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
// One input in 16 (by a hash of the input) goes the way of a scenario file
// instead: written to a file in a directory beside a link to the shipped
// platforms, and loaded by load_run_config (the bounded file read, the
// scenario's directory).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/apps.h"
#include "config/profile.h"
#include "config/run_config.h"
#include "config/schema.h"

using smmu_vp::config::ConfigError;

namespace {

// <tmp>/scenarios/fuzz.json, with <tmp>/platforms linked to the shipped
// platforms so that "../platforms/NAME.json" resolves as from a scenario.
const std::string& scenario_file() {
  static const std::string path = [] {
    char tmpl[] = "/tmp/fuzz_config.XXXXXX";
    if (!mkdtemp(tmpl)) std::abort();
    const std::filesystem::path dir(tmpl);
    std::filesystem::create_directory(dir / "scenarios");
    std::filesystem::create_directory_symlink(std::filesystem::path(SMMU_VP_SCENARIO_DIR) / ".." / "platforms",
                                              dir / "platforms");
    return (dir / "scenarios" / "fuzz.json").string();
  }();
  return path;
}

// The loader's contract on one configuration (see the top of the file).
template <typename Load>
void check_loader(Load load) {
  try {
    const smmu_vp::config::RunConfig rc = load();
    // The resolved document is a complete configuration: it must load again.
    static const std::vector<const hal_app*> apps(sw_apps, sw_apps + sw_app_count);
    smmu_vp::config::build_run_config(rc.resolved, SMMU_VP_SCENARIO_DIR, {}, apps);
  } catch (const ConfigError&) {
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "json exception escaped the loader: %s\n", e.what());
    std::abort();
  } catch (const std::runtime_error&) {
  }
}

}  // namespace

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
  if (std::hash<std::string_view>()(std::string_view(input)) % 16 == 0) {
    const std::string& file = scenario_file();
    {
      std::ofstream f(file, std::ios::binary | std::ios::trunc);
      f << parts[0];
      if (!f) std::abort();
    }
    check_loader([&] { return smmu_vp::config::load_run_config(file, overrides, apps); });
    return 0;
  }
  check_loader([&] { return smmu_vp::config::build_run_config(doc, SMMU_VP_SCENARIO_DIR, overrides, apps); });
  return 0;
}

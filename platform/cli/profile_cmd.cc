// `smmu-vp profile` (profile_cmd.h).
#include "cli/profile_cmd.h"

#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "config/profile.h"

namespace smmu_vp::cli {

namespace {

struct ProfileArgs {
  std::vector<std::string> names;
  bool json = false;
};

config::Profile load_named(const std::string& name) {
  return config::load_profile(config::find_profile(name, "."));
}

int list_profiles() {
  for (const auto& name : config::profile_names()) {
    const config::Profile p = load_named(name);
    std::cout << name << "\n  " << (p.is_profile ? p.title : "(a platform file without a \"profile\" block)") << "\n";
  }
  return 0;
}

nlohmann::json profile_json(const config::Profile& p) {
  nlohmann::json values = nlohmann::json::array();
  for (const auto& r : config::provenance_rows(p, config::resolved_platform(p))) {
    nlohmann::json row = {{"parameter", r.key}, {"value", r.value}, {"unit", r.unit}};
    if (r.provenance) {
      row["provenance"] = r.provenance->entry;
      row["stated_in"] = r.provenance->file;
    }
    values.push_back(row);
  }
  return {{"name", p.name}, {"title", p.title}, {"machine", p.machine}, {"files", p.chain}, {"values", values}};
}

int show_profiles(const ProfileArgs& a) {
  for (const auto& name : a.names) {
    const config::Profile p = load_named(name);
    if (a.json) std::cout << profile_json(p).dump(2) << "\n";
    else std::cout << config::render_profile(p) << "\n";
  }
  return 0;
}

int check_profiles(const ProfileArgs& a) {
  const std::vector<std::string> names = a.names.empty() ? config::profile_names() : a.names;
  for (const auto& name : names) {
    const config::Profile p = load_named(name);
    if (!p.is_profile) throw config::ConfigError(p.file + ": profile", "not a profile (no \"profile\" block)");
    config::check_provenance(p);
    std::cout << name << ": every timing value has provenance\n";
  }
  return 0;
}

int document_profiles() {
  for (const auto& name : config::profile_names()) {
    const config::Profile p = load_named(name);
    if (p.is_profile) std::cout << config::render_profile(p) << "\n";
  }
  return 0;
}

// Runs `f`, turning a bad profile into a message and exit 2.
int guarded(const std::function<int()>& f) {
  try {
    return f();
  } catch (const config::ConfigError& e) {
    std::cerr << "smmu-vp profile: " << e.what() << "\n";
  } catch (const std::runtime_error& e) {
    std::cerr << "smmu-vp profile: " << e.what() << "\n";
  }
  return kExitBadInput;
}

}  // namespace

Subcommand add_profile_command(CLI::App& cli) {
  auto a = std::make_shared<ProfileArgs>();
  CLI::App* cmd = cli.add_subcommand("profile", "Machine profiles: list them, show one with the provenance of every timing value, check them");
  cmd->require_subcommand(1);
  CLI::App* list = cmd->add_subcommand("list", "Name and title of every profile in the profile directory");
  CLI::App* show = cmd->add_subcommand("show", "Every timing value of a profile with its provenance (Markdown, or --json)");
  show->add_option("profile", a->names, "Profile name (e.g. kunpeng920) or file")->required();
  show->add_flag("--json", a->json, "Print JSON instead of Markdown");
  CLI::App* check = cmd->add_subcommand("check", "Check that every timing value has provenance (all profiles by default)");
  check->add_option("profile", a->names, "Profile names or files");
  CLI::App* doc = cmd->add_subcommand("doc", "Print the generated section of docs/profiles.md");
  return {cmd, [=]() {
            return guarded([&]() {
              if (list->parsed()) return list_profiles();
              if (show->parsed()) return show_profiles(*a);
              if (check->parsed()) return check_profiles(*a);
              if (doc->parsed()) return document_profiles();
              return kExitBadInput;
            });
          }};
}

}  // namespace smmu_vp::cli

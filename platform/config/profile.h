// Machine profiles (platform/platforms/*.json): a platform file that says
// which machine it stands for ("profile") and where each of its timing
// values comes from ("provenance"), optionally on top of another profile
// ("extends"). docs/profiles.md describes the format and is generated from
// the profiles themselves (`smmu-vp profile doc`).
//
//   {
//     "profile": {"name": "kunpeng920", "title": "...", "machine": "..."},
//     "extends": "base.json",
//     "cpu": {"frequency_mhz": 2600},
//     "provenance": {
//       "cpu.frequency_mhz": {"kind": "source", "quote": "...", "address": "https://..."},
//       "smmu.cmdq.sync_ns": {"kind": "fitted", "to": ["lkml_cmd_sync_empty"], "residual": "..."},
//       "cpu.costs.list_op": {"kind": "guess", "reasoning": "..."}
//     }
//   }
//
// Every timing value of the resolved platform (a parameter whose unit is a
// time, a clock, cycles or a rate, defaults included) must have an entry,
// keyed by its path below "platform"; a device parameter by
// "devices.<instance>.<param>" or, for every device of a type,
// "device_types.<type>.<param>". Other values (sizes, counts) may have one
// too, and are then shown with it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/schema.h"

namespace smmu_vp::config {

// Where one value comes from, as its profile file states it.
struct Provenance {
  std::string kind;    // "source", "fitted" or "guess"
  nlohmann::json entry;  // the whole entry, as written
  std::string file;    // the profile file that states it
};

struct Profile {
  std::string name, title, machine;
  std::string file;                 // the profile's own file
  std::vector<std::string> chain;   // it, then what it extends, in order
  nlohmann::json platform;          // the platform values, the chain merged, without the profile keys
  std::map<std::string, Provenance> provenance;  // by parameter key
  bool is_profile = false;          // false: a plain platform file (no "profile" block)
};

// One timing value of a resolved platform and its provenance (null kind when none).
struct ProvenanceRow {
  std::string key;     // e.g. "smmu.cmdq.sync_ns", "devices.nvme0.read_latency_us"
  nlohmann::json value;
  std::string unit;
  const Provenance* provenance = nullptr;
};

// True for a unit that makes a parameter a timing value: a time, a clock,
// cycles or a rate.
bool is_timing_unit(const std::string& unit);

// Reads a platform file and what it extends. Throws ConfigError naming the
// file and key of bad content (an unknown provenance kind, an entry missing
// its quote, address, residual or reasoning, a cycle of "extends"), or
// std::runtime_error for an unreadable file.
Profile load_profile(const std::string& path);

// The same for a platform document already in memory (an inline
// "platform"); `label` names it in messages, "extends" is relative to
// `base_dir`.
Profile profile_from_document(const nlohmann::json& doc, const std::string& label, const std::string& base_dir);

// The file of a profile given by name ("kunpeng920") or path: a name without
// '/' or ".json" is looked up in the profile directory. Throws ConfigError
// naming the known profiles when there is no such profile.
std::string find_profile(const std::string& name_or_path, const std::string& base_dir = ".");

// The directory named profiles are found in: $SMMU_VP_PROFILES, else an
// installed copy beside the executable (<prefix>/share/smmu-vp/platform/
// platforms), else the source tree's platform/platforms.
std::string profile_dir();
// Names of the profiles in profile_dir(), sorted.
std::vector<std::string> profile_names();

// Every timing value of `platform` (validated, defaults filled) with the
// provenance `profile` gives it, in schema order.
std::vector<ProvenanceRow> provenance_rows(const Profile& profile, const nlohmann::json& platform);

// The profile's platform validated alone (defaults filled). Throws ConfigError.
nlohmann::json resolved_platform(const Profile& profile);

// Throws ConfigError (path "<file>: provenance.<key>") for the first timing
// value without provenance, or a provenance key that names no timing value.
void check_provenance(const Profile& profile);

// Markdown: the profile's table of timing values and their provenance.
std::string render_profile(const Profile& profile);

}  // namespace smmu_vp::config

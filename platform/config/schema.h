// A small schema engine for the JSON configuration: validates a document
// (unknown keys, types, ranges, choices), fills in defaults, and renders the
// parameter reference in docs/config.md. Errors carry the JSON path.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/invalid_config.h"

namespace smmu_vp::config {

using nlohmann::json;

class ConfigError : public std::runtime_error {
 public:
  ConfigError(const std::string& path, const std::string& reason)
      : std::runtime_error((path.empty() ? std::string("/") : path) + ": " + reason), path_(path), reason_(reason) {}
  const std::string& path() const { return path_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string path_;
  std::string reason_;
};

// A model configuration's own checks (its validate(), which the model's
// constructor makes too) reported as a ConfigError at a JSON path:
// `json_path` maps the field InvalidConfig names to the parameter's path.
template <class Config, class JsonPath>
void validate_at(const Config& c, const JsonPath& json_path) {
  try {
    c.validate();
  } catch (const InvalidConfig& e) {
    throw ConfigError(json_path(e.field()), e.reason());
  }
}

enum class Type {
  kBool,
  kUint,     // non-negative integer
  kUintOrName,  // non-negative integer, or a name (a string) its consumer resolves
  kNumber,   // floating point
  kString,
  kAddress,  // integer, or a string "0x..." / "64KiB" / "1GiB"
  kObject,   // fixed fields
  kMap,      // any key, every value of one schema
  kArray,    // every element of one schema
  kVariant,  // object whose "type" field selects its schema
};

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct Node {
  Type type = Type::kObject;
  std::string help;
  std::string unit;
  json default_value;           // null: required (for leaves) / empty (for containers)
  double min = 0, max = 0;      // for numbers, when has_range
  bool has_range = false;
  std::vector<std::string> choices;  // for strings: allowed values
  std::vector<std::pair<std::string, NodePtr>> fields;  // kObject, in documentation order
  NodePtr element;                                      // kMap / kArray
  std::map<std::string, NodePtr> variants;             // kVariant: type -> object schema
  bool optional = false;        // object field that may be absent and has no default
};

// Builders, so the schema reads as a table.
NodePtr leaf(Type t, json def, std::string unit, std::string help);
NodePtr ranged(Type t, json def, double min, double max, std::string unit, std::string help);
NodePtr choice(std::string def, std::vector<std::string> choices, std::string help);
NodePtr object(std::vector<std::pair<std::string, NodePtr>> fields, std::string help = "");
NodePtr map_of(NodePtr element, json def, std::string help);
NodePtr array_of(NodePtr element, json def, std::string help);
NodePtr variant(std::map<std::string, NodePtr> variants, std::string help);
NodePtr optional(NodePtr n);

// Validated copy of `doc` with every default filled in; addresses normalised to
// integers. Throws ConfigError naming the first problem.
json validate(const Node& schema, const json& doc, const std::string& path = "");

// `doc` (as validate() returns it) with every relative file path, a string
// parameter whose unit is "path", made to start at `base_dir`: the document
// then names the same files wherever it is read from (a planned sweep's job
// files live in another directory than the scenario they come from).
json anchor_paths(const Node& schema, json doc, const std::string& base_dir);

// Parses an address/size: integer, "0x..." hex, decimal string, or a number
// with a KiB/MiB/GiB/TiB suffix. Throws ConfigError.
uint64_t parse_address(const json& v, const std::string& path);

// Markdown reference of every parameter: path, type, default, unit, help.
std::string render_reference(const Node& schema, const std::string& root_path = "");

// How deep a configuration document may nest (scenarios use under 10).
constexpr int kMaxJsonDepth = 64;

// Parses a JSON document as the configuration wants it: a syntax error, a
// number out of range (1e400), nesting deeper than kMaxJsonDepth or a key
// given twice in one object (the JSON library would keep the last silently)
// is a std::runtime_error naming `what`.
template <typename Json>
Json parse_json_document(const std::string& text, const std::string& what) {
  std::vector<std::vector<std::string>> keys;  // per open object, the keys seen
  std::string duplicate;
  auto callback = [&](int depth, typename Json::parse_event_t event, Json& parsed) {
    using E = typename Json::parse_event_t;
    // Deeper than any scenario needs, a value would only be printed back
    // recursively in an error message (10^5 levels overflowed the stack).
    if (depth > kMaxJsonDepth)
      throw std::runtime_error(what + ": nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (event == E::object_start) keys.emplace_back();
    else if (event == E::object_end && !keys.empty()) keys.pop_back();
    else if (event == E::key && !keys.empty()) {
      const std::string k = parsed.template get<std::string>();
      for (const auto& seen : keys.back())
        if (seen == k && duplicate.empty()) duplicate = k;
      keys.back().push_back(k);
    }
    return true;
  };
  Json doc;
  try {
    doc = Json::parse(text, callback);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(what + ": not valid JSON: " + e.what());
  }
  if (!duplicate.empty()) throw std::runtime_error(what + ": the key \"" + duplicate + "\" is given twice in one object");
  return doc;
}

// Applies `dotted.path=value` (value parsed as JSON, else taken as a string);
// numeric components index arrays. Throws ConfigError.
void apply_override(json& doc, const std::string& assignment);

}  // namespace smmu_vp::config

#include "config/schema.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace smmu_vp::config {

NodePtr leaf(Type t, json def, std::string unit, std::string help) {
  auto n = std::make_shared<Node>();
  n->type = t;
  n->default_value = std::move(def);
  n->unit = std::move(unit);
  n->help = std::move(help);
  return n;
}

NodePtr ranged(Type t, json def, double min, double max, std::string unit, std::string help) {
  auto n = std::make_shared<Node>(*leaf(t, std::move(def), std::move(unit), std::move(help)));
  n->min = min;
  n->max = max;
  n->has_range = true;
  return n;
}

NodePtr choice(std::string def, std::vector<std::string> choices, std::string help) {
  auto n = std::make_shared<Node>(*leaf(Type::kString, std::move(def), "", std::move(help)));
  n->choices = std::move(choices);
  return n;
}

NodePtr object(std::vector<std::pair<std::string, NodePtr>> fields, std::string help) {
  auto n = std::make_shared<Node>();
  n->type = Type::kObject;
  n->fields = std::move(fields);
  n->help = std::move(help);
  return n;
}

NodePtr map_of(NodePtr element, json def, std::string help) {
  auto n = std::make_shared<Node>();
  n->type = Type::kMap;
  n->element = std::move(element);
  n->default_value = std::move(def);
  n->help = std::move(help);
  return n;
}

NodePtr array_of(NodePtr element, json def, std::string help) {
  auto n = std::make_shared<Node>();
  n->type = Type::kArray;
  n->element = std::move(element);
  n->default_value = std::move(def);
  n->help = std::move(help);
  return n;
}

NodePtr variant(std::map<std::string, NodePtr> variants, std::string help) {
  auto n = std::make_shared<Node>();
  n->type = Type::kVariant;
  n->variants = std::move(variants);
  n->help = std::move(help);
  return n;
}

NodePtr optional(NodePtr n) {
  auto copy = std::make_shared<Node>(*n);
  copy->optional = true;
  return copy;
}

namespace {

const char* type_name(Type t) {
  switch (t) {
    case Type::kBool: return "boolean";
    case Type::kUint: return "unsigned integer";
    case Type::kUintOrName: return "unsigned integer or name";
    case Type::kNumber: return "number";
    case Type::kString: return "string";
    case Type::kAddress: return "address/size";
    case Type::kObject: return "object";
    case Type::kMap: return "object (map)";
    case Type::kArray: return "array";
    case Type::kVariant: return "object";
  }
  return "?";
}

std::string got(const json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return std::string(v.type_name()) + " " + s;
}

std::string fmt_num(double d) {
  if (d == std::floor(d) && std::fabs(d) < 1e18) return std::to_string(static_cast<long long>(d));
  std::ostringstream os;
  os << d;
  return os.str();
}

void check_range(const Node& n, double v, const std::string& path) {
  if (!n.has_range) return;
  if (v < n.min || v > n.max)
    throw ConfigError(path, "must be between " + fmt_num(n.min) + " and " + fmt_num(n.max) + (n.unit.empty() ? "" : " " + n.unit) + " (got " + fmt_num(v) + ")");
}

json validate_object(const Node& schema, const json& doc, const std::string& path) {
  if (!doc.is_object()) throw ConfigError(path, "expected an object, got " + got(doc));
  json out = json::object();
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    bool known = false;
    for (const auto& [name, node] : schema.fields) known = known || name == it.key();
    if (!known) {
      std::string names;
      for (const auto& [name, node] : schema.fields) names += (names.empty() ? "" : ", ") + name;
      throw ConfigError(path + "/" + it.key(), "unknown key (known here: " + names + ")");
    }
  }
  for (const auto& [name, node] : schema.fields) {
    const std::string p = path + "/" + name;
    if (doc.contains(name)) {
      out[name] = validate(*node, doc.at(name), p);
    } else if (node->type == Type::kObject) {
      if (!node->optional) out[name] = validate(*node, json::object(), p);
    } else if (!node->default_value.is_null()) {
      out[name] = validate(*node, node->default_value, p);
    } else if (!node->optional) {
      throw ConfigError(p, "required " + std::string(type_name(node->type)) + " is missing");
    }
  }
  return out;
}

}  // namespace

uint64_t parse_address(const json& v, const std::string& path) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) {
    if (v.get<int64_t>() < 0) throw ConfigError(path, "must not be negative (got " + v.dump() + ")");
    return static_cast<uint64_t>(v.get<int64_t>());
  }
  if (!v.is_string()) throw ConfigError(path, "expected an integer or a string like \"0x80000000\" or \"64KiB\", got " + got(v));
  const std::string s = v.get<std::string>();
  // Hex with 0x, otherwise decimal (never octal); no sign, no spaces.
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const char* c = s.c_str() + (hex ? 2 : 0);
  const bool digit_first = hex ? std::isxdigit(static_cast<unsigned char>(*c)) : std::isdigit(static_cast<unsigned char>(*c));
  char* end = nullptr;
  errno = 0;
  const unsigned long long base = digit_first ? std::strtoull(c, &end, hex ? 16 : 10) : 0;
  if (!digit_first || errno == ERANGE)
    throw ConfigError(path, "cannot read \"" + s + "\" as an address or size");
  const std::string suffix(end);
  uint64_t mult = 1;
  if (suffix.empty()) mult = 1;
  else if (suffix == "KiB" || suffix == "K") mult = 1ull << 10;
  else if (suffix == "MiB" || suffix == "M") mult = 1ull << 20;
  else if (suffix == "GiB" || suffix == "G") mult = 1ull << 30;
  else if (suffix == "TiB" || suffix == "T") mult = 1ull << 40;
  else throw ConfigError(path, "unknown suffix \"" + suffix + "\" in \"" + s + "\" (use KiB, MiB, GiB or TiB)");
  if (base > UINT64_MAX / mult) throw ConfigError(path, "\"" + s + "\" does not fit in 64 bits");
  return base * mult;
}

json validate(const Node& schema, const json& doc, const std::string& path) {
  switch (schema.type) {
    case Type::kBool:
      if (!doc.is_boolean()) throw ConfigError(path, "expected true or false, got " + got(doc));
      return doc;
    case Type::kUintOrName:
      if (doc.is_string()) return doc;
      [[fallthrough]];
    case Type::kUint: {
      if (doc.is_number_float()) {
        const double d = doc.get<double>();
        if (d != std::floor(d)) throw ConfigError(path, "expected an unsigned integer, got " + got(doc));
        if (d < 0) throw ConfigError(path, "must not be negative (got " + got(doc) + ")");
        if (d >= 18446744073709551616.0) throw ConfigError(path, "does not fit in 64 bits (got " + got(doc) + ")");
        check_range(schema, d, path);
        return static_cast<uint64_t>(d);
      }
      if (!doc.is_number_integer()) throw ConfigError(path, "expected an unsigned integer, got " + got(doc));
      if (doc.is_number_integer() && !doc.is_number_unsigned() && doc.get<int64_t>() < 0)
        throw ConfigError(path, "must not be negative (got " + doc.dump() + ")");
      check_range(schema, static_cast<double>(doc.get<uint64_t>()), path);
      return doc.get<uint64_t>();
    }
    case Type::kNumber:
      if (!doc.is_number()) throw ConfigError(path, "expected a number, got " + got(doc));
      if (!std::isfinite(doc.get<double>())) throw ConfigError(path, "must be finite");
      check_range(schema, doc.get<double>(), path);
      return doc.get<double>();
    case Type::kString:
      if (!doc.is_string()) throw ConfigError(path, "expected a string, got " + got(doc));
      if (!schema.choices.empty()) {
        bool ok = false;
        std::string list;
        for (const auto& c : schema.choices) {
          ok = ok || c == doc.get<std::string>();
          list += (list.empty() ? "" : ", ") + c;
        }
        if (!ok) throw ConfigError(path, "\"" + doc.get<std::string>() + "\" is not one of: " + list);
      }
      return doc;
    case Type::kAddress: {
      const uint64_t v = parse_address(doc, path);
      check_range(schema, static_cast<double>(v), path);
      return v;
    }
    case Type::kObject:
      return validate_object(schema, doc, path);
    case Type::kMap: {
      if (!doc.is_object()) throw ConfigError(path, "expected an object, got " + got(doc));
      json out = json::object();
      for (auto it = doc.begin(); it != doc.end(); ++it) {
        if (it.key().empty()) throw ConfigError(path, "empty key");
        out[it.key()] = validate(*schema.element, it.value(), path + "/" + it.key());
      }
      return out;
    }
    case Type::kArray: {
      if (!doc.is_array()) throw ConfigError(path, "expected an array, got " + got(doc));
      json out = json::array();
      for (size_t i = 0; i < doc.size(); ++i)
        out.push_back(validate(*schema.element, doc[i], path + "/" + std::to_string(i)));
      return out;
    }
    case Type::kVariant: {
      if (!doc.is_object()) throw ConfigError(path, "expected an object, got " + got(doc));
      std::string list;
      for (const auto& [name, node] : schema.variants) list += (list.empty() ? "" : ", ") + name;
      if (!doc.contains("type") || !doc.at("type").is_string())
        throw ConfigError(path + "/type", "required string is missing (one of: " + list + ")");
      const std::string t = doc.at("type").get<std::string>();
      auto it = schema.variants.find(t);
      if (it == schema.variants.end()) throw ConfigError(path + "/type", "\"" + t + "\" is not one of: " + list);
      return validate(*it->second, doc, path);
    }
  }
  return doc;
}

json anchor_paths(const Node& schema, json doc, const std::string& base_dir) {
  switch (schema.type) {
    case Type::kString:
      if (schema.unit == "path" && doc.is_string()) {
        const std::filesystem::path p = doc.get<std::string>();
        if (!p.empty() && p.is_relative()) doc = (std::filesystem::absolute(base_dir) / p).lexically_normal().string();
      }
      return doc;
    case Type::kObject:
      for (const auto& [name, field] : schema.fields)
        if (doc.is_object() && doc.contains(name)) doc[name] = anchor_paths(*field, doc[name], base_dir);
      return doc;
    case Type::kMap:
    case Type::kArray:
      for (auto& element : doc) element = anchor_paths(*schema.element, element, base_dir);
      return doc;
    case Type::kVariant: {
      const auto it = doc.is_object() && doc.contains("type") && doc["type"].is_string()
                          ? schema.variants.find(doc["type"].get<std::string>())
                          : schema.variants.end();
      return it == schema.variants.end() ? doc : anchor_paths(*it->second, doc, base_dir);
    }
    default:
      return doc;
  }
}

namespace {

std::string default_text(const Node& n) {
  if (n.default_value.is_null()) return n.optional ? "(absent)" : "(required)";
  if (n.type == Type::kAddress && n.default_value.is_number_unsigned()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(n.default_value.get<uint64_t>()));
    return buf;
  }
  return n.default_value.dump();
}

void render(const Node& n, const std::string& path, std::string& out) {
  switch (n.type) {
    case Type::kObject:
      for (const auto& [name, child] : n.fields) render(*child, path + "." + name, out);
      return;
    case Type::kVariant:
      for (const auto& [name, child] : n.variants) {
        out += "\n`" + path.substr(1) + "` with `\"type\": \"" + name + "\"`" + (child->help.empty() ? "" : ": " + child->help) + "\n\n";
        out += "| parameter | type | default | unit | description |\n|---|---|---|---|---|\n";
        render(*child, path, out);
      }
      return;
    case Type::kMap:
    case Type::kArray:
      if (n.element->type == Type::kObject || n.element->type == Type::kVariant) {
        out += "| `" + path.substr(1) + "` | " + type_name(n.type) + " | " + default_text(n) + " | | " + n.help + " |\n";
        render(*n.element, path + (n.type == Type::kMap ? ".NAME" : ".N"), out);
        return;
      }
      out += "| `" + path.substr(1) + "` | " + type_name(n.type) + " of " + type_name(n.element->type) + " | " +
             default_text(n) + " | " + n.element->unit + " | " + n.help + " |\n";
      return;
    default: {
      std::string help = n.help;
      if (n.has_range) help += " Range " + fmt_num(n.min) + " to " + fmt_num(n.max) + ".";
      if (!n.choices.empty()) {
        help += " One of:";
        for (const auto& c : n.choices) help += " `" + c + "`";
        help += ".";
      }
      out += "| `" + path.substr(1) + "` | " + type_name(n.type) + " | " + default_text(n) + " | " + n.unit + " | " + help + " |\n";
    }
  }
}

}  // namespace

std::string render_reference(const Node& schema, const std::string& root_path) {
  std::string out;
  if (schema.type == Type::kObject) {
    for (const auto& [name, child] : schema.fields) {
      out += "\n### `" + (root_path.empty() ? name : root_path + "." + name) + "`\n\n";
      if (!child->help.empty()) out += child->help + "\n\n";
      if (child->type != Type::kVariant && !(child->type == Type::kMap && child->element->type == Type::kVariant))
        out += "| parameter | type | default | unit | description |\n|---|---|---|---|---|\n";
      render(*child, (root_path.empty() ? "" : "." + root_path) + "." + name, out);
    }
  }
  return out;
}

void apply_override(json& doc, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--set " + assignment, "expected path=value, e.g. platform.dram.read_latency_ns=100");
  // JSON strings are UTF-8: a path or value that is not would be stored as is
  // and make every later dump() of the document (error messages, the
  // resolved config.json) throw json::type_error. Found by fuzz_config.
  try {
    (void)json(assignment).dump();
  } catch (const json::type_error&) {
    throw ConfigError("--set", "not valid UTF-8");
  }
  const std::string dotted = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  json value = json::parse(text, nullptr, false);
  if (value.is_discarded()) value = text;
  json* cur = &doc;
  std::string path;
  size_t start = 0;
  for (;;) {
    const size_t dot = dotted.find('.', start);
    const std::string key = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (key.empty()) throw ConfigError("--set " + dotted, "empty path component");
    path += "/" + key;
    const bool last = dot == std::string::npos;
    if (cur->is_array()) {
      char* end = nullptr;
      const unsigned long idx = std::strtoul(key.c_str(), &end, 10);
      if (*end != '\0' || idx >= cur->size())
        throw ConfigError(path, "index out of range for an array of " + std::to_string(cur->size()));
      cur = &(*cur)[idx];
    } else {
      if (cur->is_null()) *cur = json::object();
      if (!cur->is_object()) throw ConfigError(path, "cannot set a field inside a " + std::string(cur->type_name()));
      cur = &(*cur)[key];
    }
    if (last) break;
    start = dot + 1;
  }
  *cur = value;
}

}  // namespace smmu_vp::config

#include "cli/sweep_spec.h"

#include <cmath>
#include <initializer_list>
#include <set>

#include "config/schema.h"

namespace smmu_vp::cli {

namespace {

using ojson = nlohmann::ordered_json;
using config::ConfigError;

// A key as a JSON-pointer path component (RFC 6901), so error paths stay exact.
std::string token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string got(const ojson& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return std::string(v.type_name()) + " " + s;
}

void expect_object(const ojson& v, const std::string& path) {
  if (!v.is_object()) throw ConfigError(path, "expected an object, got " + got(v));
}

std::string expect_string(const ojson& v, const std::string& path) {
  if (!v.is_string()) throw ConfigError(path, "expected a string, got " + got(v));
  return v.get<std::string>();
}

std::string expect_nonempty_string(const ojson& v, const std::string& path) {
  std::string s = expect_string(v, path);
  if (s.empty()) throw ConfigError(path, "must not be empty");
  return s;
}

void check_keys(const ojson& obj, const std::string& path, std::initializer_list<const char*> known) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    std::string names;
    for (const char* k : known) {
      ok = ok || it.key() == k;
      names += (names.empty() ? "" : ", ") + std::string(k);
    }
    if (!ok) throw ConfigError(path + "/" + token(it.key()), "unknown key (known here: " + names + ")");
  }
}

const ojson& require(const ojson& obj, const char* key, const std::string& path, const char* what) {
  if (!obj.contains(key)) throw ConfigError(path + "/" + key, std::string("required ") + what + " is missing");
  return obj.at(key);
}

// "a.b.0.c": non-empty components, as --set and stats.json both need.
void check_dotted(const std::string& dotted, const std::string& path, const char* what) {
  if (dotted.empty() || dotted.front() == '.' || dotted.back() == '.' || dotted.find("..") != std::string::npos)
    throw ConfigError(path, std::string("\"") + dotted + "\" is not a dotted " + what + " (like a.b.c)");
}

// Labels name output directories (joined by "__"), so they must be plain names.
void check_label(const std::string& label, const std::string& path) {
  if (label.empty()) throw ConfigError(path, "empty label");
  if (label == "." || label == ".." || label.find('/') != std::string::npos || label.find("__") != std::string::npos)
    throw ConfigError(path, "label \"" + label + "\" names a directory: it must not be . or .. nor contain / or __");
}

AxisValue parse_axis_value(const std::string& label, const ojson& overrides, const std::string& path) {
  check_label(label, path);
  if (!overrides.is_object())
    throw ConfigError(path, "expected an object of overrides {\"dotted.path\": value}, got " + got(overrides));
  AxisValue v{label, {}, overrides};
  for (auto it = overrides.begin(); it != overrides.end(); ++it) {
    const std::string p = path + "/" + token(it.key());
    check_dotted(it.key(), p, "config path");
    if (it.key().find('=') != std::string::npos) throw ConfigError(p, "a config path cannot contain '='");
    // The same text `--set path=value` takes: the value as JSON.
    v.sets.push_back(it.key() + "=" + it.value().dump());
  }
  return v;
}

Axis parse_axis(const ojson& a, const std::string& path) {
  expect_object(a, path);
  check_keys(a, path, {"name", "values"});
  Axis axis;
  axis.name = expect_nonempty_string(require(a, "name", path, "string"), path + "/name");
  const ojson& values = require(a, "values", path, "object");
  const std::string vp = path + "/values";
  if (!values.is_object())
    throw ConfigError(vp, "expected an object {\"label\": {\"dotted.path\": value, ...}, ...}, got " + got(values));
  if (values.empty()) throw ConfigError(vp, "must have at least one value");
  for (auto it = values.begin(); it != values.end(); ++it)
    axis.values.push_back(parse_axis_value(it.key(), it.value(), vp + "/" + token(it.key())));
  return axis;
}

std::vector<Axis> parse_axes(const ojson& axes, const std::string& path) {
  if (!axes.is_array()) throw ConfigError(path, "expected an array of axes, got " + got(axes));
  if (axes.empty()) throw ConfigError(path, "must have at least one axis");
  std::vector<Axis> out;
  std::set<std::string> names;
  for (size_t i = 0; i < axes.size(); ++i) {
    const std::string p = path + "/" + std::to_string(i);
    out.push_back(parse_axis(axes[i], p));
    if (!names.insert(out.back().name).second)
      throw ConfigError(p + "/name", "another axis is already named \"" + out.back().name + "\"");
  }
  return out;
}

std::string parse_stat_name(const ojson& v, const std::string& path) {
  const std::string s = expect_nonempty_string(v, path);
  check_dotted(s, path, "stat name");
  return s;
}

std::vector<std::string> parse_stats(const ojson& c, const std::string& path) {
  const bool has_stat = c.contains("stat"), has_ratio = c.contains("ratio");
  if (has_stat == has_ratio) throw ConfigError(path, "give exactly one of \"stat\" and \"ratio\"");
  if (has_stat) return {parse_stat_name(c.at("stat"), path + "/stat")};
  const ojson& r = c.at("ratio");
  if (!r.is_array() || r.size() != 2)
    throw ConfigError(path + "/ratio", "expected [\"numerator.stat\", \"denominator.stat\"], got " + got(r));
  return {parse_stat_name(r[0], path + "/ratio/0"), parse_stat_name(r[1], path + "/ratio/1")};
}

std::string parse_field(const ojson& v, const std::string& path) {
  const std::string f = expect_string(v, path);
  std::string list;
  for (const auto& known : histogram_fields()) {
    if (f == known) return f;
    list += (list.empty() ? "" : ", ") + known;
  }
  throw ConfigError(path, "\"" + f + "\" is not a histogram field (one of: " + list + ")");
}

double parse_scale(const ojson& v, const std::string& path) {
  if (!v.is_number() || !std::isfinite(v.get<double>())) throw ConfigError(path, "expected a finite number, got " + got(v));
  return v.get<double>();
}

unsigned parse_digits(const ojson& v, const std::string& path) {
  constexpr int64_t kMaxDigits = 12;
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > kMaxDigits)
    throw ConfigError(path, "expected an integer from 0 to " + std::to_string(kMaxDigits) + ", got " + got(v));
  return static_cast<unsigned>(v.get<int64_t>());
}

Column parse_column(const ojson& c, const std::string& path) {
  expect_object(c, path);
  check_keys(c, path, {"title", "stat", "ratio", "field", "scale", "unit", "digits"});
  Column col;
  col.title = expect_nonempty_string(require(c, "title", path, "string"), path + "/title");
  col.stats = parse_stats(c, path);
  if (c.contains("field")) col.field = parse_field(c.at("field"), path + "/field");
  if (c.contains("scale")) col.scale = parse_scale(c.at("scale"), path + "/scale");
  if (c.contains("unit")) col.unit = expect_string(c.at("unit"), path + "/unit");
  if (c.contains("digits")) col.digits = parse_digits(c.at("digits"), path + "/digits");
  return col;
}

std::vector<Column> parse_columns(const ojson& cols, const std::string& path) {
  if (!cols.is_array()) throw ConfigError(path, "expected an array of columns, got " + got(cols));
  if (cols.empty()) throw ConfigError(path, "must have at least one column");
  std::vector<Column> out;
  std::set<std::string> titles;
  for (size_t i = 0; i < cols.size(); ++i) {
    const std::string p = path + "/" + std::to_string(i);
    out.push_back(parse_column(cols[i], p));
    // sweep.json keys each point's values by title.
    if (!titles.insert(out.back().title).second)
      throw ConfigError(p + "/title", "another column is already titled \"" + out.back().title + "\"");
  }
  return out;
}

}  // namespace

std::string Column::header() const { return unit.empty() ? title : title + " (" + unit + ")"; }

std::string SweepPoint::describe(const SweepSpec& spec) const {
  std::string s;
  for (size_t i = 0; i < labels.size(); ++i) s += (i ? " " : "") + spec.axes[i].name + "=" + labels[i];
  return s;
}

const std::vector<std::string>& histogram_fields() {
  static const std::vector<std::string> fields = {"p50", "p90", "p99", "p999", "max", "min", "mean", "count"};
  return fields;
}

SweepSpec parse_sweep_spec(const ojson& doc) {
  const std::string p = "/sweep";
  if (!doc.is_object() || !doc.contains("sweep"))
    throw ConfigError(p, "required object is missing: `smmu-vp sweep` runs the axes and columns it describes");
  const ojson& s = doc.at("sweep");
  expect_object(s, p);
  check_keys(s, p, {"title", "axes", "columns", "bound"});
  SweepSpec spec;
  if (s.contains("title")) spec.title = expect_string(s.at("title"), p + "/title");
  if (s.contains("bound")) {
    if (!s.at("bound").is_boolean()) throw ConfigError(p + "/bound", "expected true or false, got " + got(s.at("bound")));
    spec.bound = s.at("bound").get<bool>();
  }
  spec.axes = parse_axes(require(s, "axes", p, "array"), p + "/axes");
  spec.columns = parse_columns(require(s, "columns", p, "array"), p + "/columns");
  return spec;
}

std::vector<SweepPoint> expand_points(const SweepSpec& spec) {
  std::vector<SweepPoint> points;
  std::vector<size_t> index(spec.axes.size(), 0);  // an odometer, last axis fastest
  for (;;) {
    SweepPoint pt;
    pt.overrides = ojson::object();
    for (size_t a = 0; a < spec.axes.size(); ++a) {
      const AxisValue& v = spec.axes[a].values[index[a]];
      pt.labels.push_back(v.label);
      pt.sets.insert(pt.sets.end(), v.sets.begin(), v.sets.end());
      for (auto it = v.overrides.begin(); it != v.overrides.end(); ++it) pt.overrides[it.key()] = it.value();
      pt.dir_name += (a ? "__" : "") + v.label;
    }
    points.push_back(std::move(pt));
    size_t a = spec.axes.size();
    while (a > 0 && ++index[a - 1] == spec.axes[a - 1].values.size()) index[--a] = 0;
    if (a == 0) return points;
  }
}

}  // namespace smmu_vp::cli

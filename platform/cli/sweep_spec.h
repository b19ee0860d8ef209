// The "sweep" section of a scenario file: axes of labelled override sets and
// the columns of the results table. Parsed and validated here; the format is
// documented in README.md ("Sweeps").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace smmu_vp::cli {

// One value of an axis: a label and the --set assignments it stands for,
// in file order ("dotted.path=<JSON>").
struct AxisValue {
  std::string label;
  std::vector<std::string> sets;
  nlohmann::ordered_json overrides;  // the same, as written: {"dotted.path": value}
};

struct Axis {
  std::string name;
  std::vector<AxisValue> values;
};

// A column of the table: one stat, or the ratio of two, times `scale`.
struct Column {
  std::string title;
  std::vector<std::string> stats;  // one stat, or numerator and denominator
  std::string field;               // histogram field; empty for counters and values
  double scale = 1.0;
  std::string unit;
  std::optional<unsigned> digits;  // absent: 0 if every value is whole, else 2

  bool is_ratio() const { return stats.size() == 2; }
  // "title (unit)", as the table header shows it.
  std::string header() const;
};

struct SweepSpec {
  std::string title;
  std::vector<Axis> axes;
  std::vector<Column> columns;
  // "bound": true adds a last column naming what bounded each point (its
  // run.bound: the first resource at 90 % or more, and how many more).
  bool bound = false;
};

// One point of the cross product: a value of every axis.
struct SweepPoint {
  std::vector<std::string> labels;  // one per axis, in axis order
  std::vector<std::string> sets;    // every axis's assignments, in axis order
  nlohmann::ordered_json overrides;  // the same as one object (a later axis wins)
  std::string dir_name;             // labels joined by "__"
  std::string describe(const SweepSpec& spec) const;  // "policy=msi cores=4"
};

// Histogram fields a column may select.
const std::vector<std::string>& histogram_fields();

// Validates doc["sweep"] (file order kept by ordered_json). Throws
// config::ConfigError naming the JSON path of the first problem.
SweepSpec parse_sweep_spec(const nlohmann::ordered_json& doc);

// The cross product of the axes, the first axis varying slowest.
std::vector<SweepPoint> expand_points(const SweepSpec& spec);

}  // namespace smmu_vp::cli

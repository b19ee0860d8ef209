// The results table of a sweep: column values read from each point's
// stats.json, formatted, and rendered as aligned text, CSV or Markdown.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/sweep_spec.h"

namespace smmu_vp::cli {

struct Cell {
  enum class Kind {
    kValue,      // `value` holds the scaled number
    kFailed,     // the point's run failed
    kMissing,    // the stat is not in stats.json (or is not a number)
    kUndefined,  // a ratio whose denominator is 0
    kUnfinished, // the point did not finish: `problem` says how ("timeout", "interrupted", "not-run")
  };
  Kind kind = Kind::kFailed;
  double value = 0;
  std::string problem;  // why there is no value, for kMissing, kUndefined and kUnfinished
};

// The column's value in one point's stats.json.
Cell column_cell(const Column& column, const nlohmann::json& stats);

struct Table {
  std::vector<std::string> header;
  std::vector<bool> numeric;  // per column: right-aligned
  std::vector<std::vector<std::string>> rows;
};

// One row per point: its labels, then each column's cell as text
// (cells[point][column]); with spec.bound, what bounded each point, from
// its stats.json's run section (runs[point], empty for a failed point).
Table make_table(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                 const std::vector<std::vector<Cell>>& cells, const std::vector<nlohmann::json>& runs = {});
// What bounded a run, for a table cell: run.bound's first entry and how
// many more ("none" when nothing reached 90 %, "-" without a run).
std::string bound_text(const nlohmann::json& run);

std::string render_text(const Table& t, const std::string& title);
std::string render_csv(const Table& t);
std::string render_markdown(const Table& t);

}  // namespace smmu_vp::cli

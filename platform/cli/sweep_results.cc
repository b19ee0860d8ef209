#include "cli/sweep_results.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "cli/sweep_table.h"
#include "config/run_config.h"

namespace smmu_vp::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

template <typename Json>
Json parse(const std::string& text, const std::string& path) {
  return smmu_vp::config::parse_json_document<Json>(text, path);
}

// Builds (so validates) every point's configuration before anything runs.
std::vector<json> check_points(const LoadedSweep& sweep, const json& base, const SweepArgs& a,
                               const std::vector<const hal_app*>& apps) {
  std::vector<json> configs;
  for (const SweepPoint& pt : sweep.points) {
    try {
      configs.push_back(config::build_run_config(base, sweep.base_dir, point_sets(pt, a), apps).resolved);
    } catch (const config::ConfigError& e) {
      throw config::ConfigError(e.path(), e.reason() + " (at sweep point " + pt.describe(sweep.spec) + ")");
    }
  }
  return configs;
}

fs::path stats_path(const SweepArgs& a, const SweepPoint& pt) { return fs::path(a.out) / pt.dir_name / "stats.json"; }

// The point's cells; `run` receives its stats.json's "run" section (the
// point checks read it), left empty when there is none.
std::vector<Cell> point_cells(const SweepSpec& spec, const fs::path& stats_path, const PointOutcome& o, json& run) {
  std::vector<Cell> row(spec.columns.size());
  if (o.kind == PointOutcome::Kind::kUnfinished) {
    for (Cell& c : row) c = {Cell::Kind::kUnfinished, 0, o.status};
    return row;
  }
  if (o.kind == PointOutcome::Kind::kFailed) return row;  // every cell kFailed
  json stats;
  try {
    stats = parse<json>(config::read_file(stats_path.string()), stats_path.string());
  } catch (const std::exception& e) {
    for (Cell& c : row) c = {Cell::Kind::kMissing, 0, e.what()};
    return row;
  }
  for (size_t c = 0; c < spec.columns.size(); ++c) row[c] = column_cell(spec.columns[c], stats);
  run = stats.value("run", json::object());
  return row;
}

std::vector<std::vector<Cell>> collect_cells(const SweepArgs& a, const LoadedSweep& sweep,
                                             const std::vector<PointOutcome>& outcomes, std::vector<json>& runs) {
  std::vector<std::vector<Cell>> cells;
  runs.assign(sweep.points.size(), json::object());
  for (size_t p = 0; p < sweep.points.size(); ++p)
    cells.push_back(point_cells(sweep.spec, stats_path(a, sweep.points[p]), outcomes[p], runs[p]));
  return cells;
}

// Warns once per column about cells shown as "-". Returns false when some
// column's stat is in no point that ran (most likely a misspelt name).
bool report_missing(const SweepArgs& a, const LoadedSweep& sweep, const std::vector<std::vector<Cell>>& cells) {
  bool all_found = true;
  for (size_t c = 0; c < sweep.spec.columns.size(); ++c) {
    const std::string& title = sweep.spec.columns[c].title;
    bool any_value = false, any_missing = false, warned = false;
    for (size_t p = 0; p < cells.size(); ++p) {
      const Cell& cell = cells[p][c];
      any_value = any_value || cell.kind == Cell::Kind::kValue;
      any_missing = any_missing || cell.kind == Cell::Kind::kMissing;
      if (warned || cell.problem.empty() || cell.kind == Cell::Kind::kUnfinished) continue;
      std::cerr << fmt::format("smmu-vp: warning: column \"{}\": {} (at {}, {}); shown as -\n", title, cell.problem,
                               sweep.points[p].describe(sweep.spec), stats_path(a, sweep.points[p]).string());
      warned = true;
    }
    if (any_missing && !any_value) {
      std::string stats;
      for (const std::string& st : sweep.spec.columns[c].stats) stats += (stats.empty() ? "\"" : "\", \"") + st;
      std::cerr << fmt::format("smmu-vp: {}: column \"{}\": no point that ran has a value for {}\"\n", a.file, title, stats);
      all_found = false;
    }
  }
  return all_found;
}

std::string render(const std::string& format, const Table& t, const std::string& title) {
  if (format == "csv") return render_csv(t);
  if (format == "markdown") return render_markdown(t);
  return render_text(t, title);
}

ordered_json point_json(const LoadedSweep& sweep, size_t p, const PointOutcome& o, const std::vector<Cell>& row) {
  const SweepPoint& pt = sweep.points[p];
  ordered_json labels = ordered_json::object(), values = ordered_json::object();
  for (size_t i = 0; i < pt.labels.size(); ++i) labels[sweep.spec.axes[i].name] = pt.labels[i];
  for (size_t c = 0; c < row.size(); ++c)
    values[sweep.spec.columns[c].title] = row[c].kind == Cell::Kind::kValue ? ordered_json(row[c].value) : ordered_json();
  return ordered_json{{"labels", labels},
                      {"dir", pt.dir_name},
                      {"overrides", pt.overrides},
                      {"status", o.status},
                      {"outcome", o.outcome},
                      {"values", values}};
}

// Everything but "wallclock" depends only on the inputs, as in stats.json.
ordered_json sweep_json(const SweepArgs& a, const LoadedSweep& sweep, const std::vector<PointOutcome>& outcomes,
                        const std::vector<std::vector<Cell>>& cells, const ordered_json& wallclock) {
  ordered_json points = ordered_json::array();
  for (size_t p = 0; p < sweep.points.size(); ++p) points.push_back(point_json(sweep, p, outcomes[p], cells[p]));
  return ordered_json{{"scenario", a.file},
                      {"sets", a.sets},
                      {"seed", a.seed ? ordered_json(*a.seed) : ordered_json()},
                      {"sweep", sweep.section},
                      {"points", points},
                      {"wallclock", wallclock}};
}

}  // namespace

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

std::vector<std::string> point_sets(const SweepPoint& pt, const SweepArgs& a) {
  std::vector<std::string> sets = pt.sets;
  sets.insert(sets.end(), a.sets.begin(), a.sets.end());
  if (a.seed) sets.push_back("scenario.seed=" + std::to_string(*a.seed));
  return sets;
}

LoadedSweep load_sweep(const SweepArgs& a, const std::vector<const hal_app*>& apps) {
  const std::string text = config::read_file(a.file);
  const auto doc = parse<ordered_json>(text, a.file);  // ordered: axis values keep file order
  LoadedSweep sweep;
  sweep.spec = parse_sweep_spec(doc);
  sweep.section = doc.at("sweep");
  sweep.points = expand_points(sweep.spec);
  const fs::path dir = fs::path(a.file).parent_path();
  sweep.base_dir = dir.empty() ? "." : dir.string();
  sweep.configs = check_points(sweep, parse<json>(text, a.file), a, apps);
  return sweep;
}

// The points whose results broke a physical invariant (a bug) or whose
// window was not a steady state (invariants.h), said on stderr after the table.
void report_point_checks(const LoadedSweep& sweep, const std::vector<json>& runs) {
  std::string impossible, unsteady;
  for (size_t p = 0; p < sweep.points.size(); ++p) {
    const json& run = runs[p];
    const std::string point = sweep.points[p].describe(sweep.spec);
    for (const auto& line : run.value("invariant_violations", json::array()))
      impossible += fmt::format("  {}: {}\n", point, line.get<std::string>());
    for (const auto& line : run.value("steady_state_warnings", json::array()))
      unsteady += fmt::format("  {}: {}\n", point, line.get<std::string>());
  }
  if (!impossible.empty())
    std::cerr << "sweep: results that are not physically possible (a bug in a model or an app):\n" << impossible;
  if (!unsteady.empty()) std::cerr << "sweep: warning: windows that were not a steady state:\n" << unsteady;
}

bool write_results(const SweepArgs& a, const LoadedSweep& sweep, const std::vector<PointOutcome>& outcomes,
                   const ordered_json& wallclock) {
  std::vector<json> runs;
  const std::vector<std::vector<Cell>> cells = collect_cells(a, sweep, outcomes, runs);
  const bool all_found = report_missing(a, sweep, cells);
  const Table table = make_table(sweep.spec, sweep.points, cells, runs);
  // The title describes the scenario as shipped: what --set changed at every
  // point (another trace, another profile) goes with it.
  std::string title = sweep.spec.title;
  if (!title.empty() && !a.sets.empty()) {
    title += " (with --set";
    for (const std::string& s : a.sets) title += " " + s;
    title += ")";
  }
  std::cout << render(a.format, table, title) << std::flush;
  write_file((fs::path(a.out) / "sweep.csv").string(), render_csv(table));
  write_file((fs::path(a.out) / "sweep.json").string(), sweep_json(a, sweep, outcomes, cells, wallclock).dump(2) + "\n");
  report_point_checks(sweep, runs);
  return all_found;
}

}  // namespace smmu_vp::cli

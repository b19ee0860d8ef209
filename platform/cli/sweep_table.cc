#include "cli/sweep_table.h"

#include <cmath>
#include <optional>

#include <fmt/format.h>

namespace smmu_vp::cli {

namespace {

using nlohmann::json;

// stats.json nests every stat under the dot-separated components of its name.
const json* find_stat(const json& stats, const std::string& name) {
  const json* node = &stats;
  size_t start = 0;
  for (;;) {
    const size_t dot = name.find('.', start);
    const std::string key = name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object()) return nullptr;
    const auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

bool is_histogram(const json& n) { return n.is_object() && n.contains("p50") && n.contains("unit"); }

std::string field_list() {
  std::string list;
  for (const auto& f : histogram_fields()) list += (list.empty() ? "" : ", ") + f;
  return list;
}

// The number a counter or value holds, or the `field` of a histogram; sets
// `problem` when there is none.
std::optional<double> stat_number(const json& stats, const std::string& name, const std::string& field,
                                  std::string& problem) {
  const json* n = find_stat(stats, name);
  if (!n) {
    problem = "no stat \"" + name + "\"";
    return std::nullopt;
  }
  if (is_histogram(*n)) {
    if (field.empty()) problem = "\"" + name + "\" is a histogram: the column needs a \"field\" (" + field_list() + ")";
    else if (!n->contains(field) || !n->at(field).is_number()) problem = "histogram \"" + name + "\" has no \"" + field + "\"";
    else return n->at(field).get<double>();
    return std::nullopt;
  }
  if (n->is_object()) problem = "\"" + name + "\" is a group of stats, not one stat";
  else if (!n->is_number()) problem = "\"" + name + "\" is not a number";
  else if (!field.empty()) problem = "\"" + name + "\" is not a histogram, so \"field\": \"" + field + "\" does not apply";
  else return n->get<double>();
  return std::nullopt;
}

unsigned digits_for(const Column& column, const std::vector<std::vector<Cell>>& cells, size_t c) {
  if (column.digits) return *column.digits;
  for (const auto& row : cells)
    if (row[c].kind == Cell::Kind::kValue && row[c].value != std::floor(row[c].value)) return 2;
  return 0;
}

std::string cell_text(const Cell& cell, unsigned digits) {
  switch (cell.kind) {
    case Cell::Kind::kValue: return fmt::format("{:.{}f}", cell.value, digits);
    case Cell::Kind::kFailed: return "failed";
    case Cell::Kind::kUnfinished: return cell.problem;
    case Cell::Kind::kMissing:
    case Cell::Kind::kUndefined: return "-";
  }
  return "-";
}

// Display width: UTF-8 code points, so labels such as "µs" still align.
size_t width(const std::string& s) {
  size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

std::vector<size_t> column_widths(const Table& t) {
  std::vector<size_t> w;
  for (const auto& h : t.header) w.push_back(width(h));
  for (const auto& row : t.rows)
    for (size_t c = 0; c < row.size(); ++c) w[c] = std::max(w[c], width(row[c]));
  return w;
}

std::string pad(const std::string& s, size_t w, bool right) {
  const std::string fill(w > width(s) ? w - width(s) : 0, ' ');
  return right ? fill + s : s + fill;
}

// One line of cells separated by `gap`, between `lead` and `tail`; the last
// cell is not padded on the right so lines carry no trailing blanks.
std::string line(const std::vector<std::string>& cells, const Table& t, const std::vector<size_t>& w,
                 const std::string& lead, const std::string& gap, const std::string& tail) {
  std::string out = lead;
  for (size_t c = 0; c < cells.size(); ++c) {
    const bool last = c + 1 == cells.size();
    out += (c ? gap : "") + ((last && !t.numeric[c] && tail.empty()) ? cells[c] : pad(cells[c], w[c], t.numeric[c]));
  }
  return out + tail + "\n";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char ch : s) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

}  // namespace

Cell column_cell(const Column& column, const json& stats) {
  std::vector<double> v;
  for (const std::string& name : column.stats) {
    Cell cell{Cell::Kind::kMissing, 0, ""};
    const std::optional<double> x = stat_number(stats, name, column.field, cell.problem);
    if (!x) return cell;
    v.push_back(*x);
  }
  if (!column.is_ratio()) return {Cell::Kind::kValue, v[0] * column.scale, ""};
  if (v[1] == 0) return {Cell::Kind::kUndefined, 0, "denominator \"" + column.stats[1] + "\" is 0"};
  return {Cell::Kind::kValue, v[0] / v[1] * column.scale, ""};
}

std::string bound_text(const nlohmann::json& run) {
  if (!run.is_object() || !run.contains("bound") || !run["bound"].is_array()) return "-";
  const nlohmann::json& b = run["bound"];
  if (b.empty()) return "none";
  std::string s = b[0].is_string() ? b[0].get<std::string>() : "?";
  if (b.size() > 1) s += " (+" + std::to_string(b.size() - 1) + ")";
  return s;
}

Table make_table(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                 const std::vector<std::vector<Cell>>& cells, const std::vector<nlohmann::json>& runs) {
  Table t;
  for (const Axis& a : spec.axes) {
    t.header.push_back(a.name);
    t.numeric.push_back(false);
  }
  std::vector<unsigned> digits;
  for (size_t c = 0; c < spec.columns.size(); ++c) {
    t.header.push_back(spec.columns[c].header());
    t.numeric.push_back(true);
    digits.push_back(digits_for(spec.columns[c], cells, c));
  }
  if (spec.bound) {
    t.header.push_back("bound");
    t.numeric.push_back(false);
  }
  for (size_t p = 0; p < points.size(); ++p) {
    std::vector<std::string> row = points[p].labels;
    for (size_t c = 0; c < spec.columns.size(); ++c) row.push_back(cell_text(cells[p][c], digits[c]));
    if (spec.bound) row.push_back(p < runs.size() ? bound_text(runs[p]) : "-");
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string render_text(const Table& t, const std::string& title) {
  const std::vector<size_t> w = column_widths(t);
  std::vector<std::string> rule;
  for (size_t c = 0; c < w.size(); ++c) rule.push_back(std::string(w[c], '-'));
  std::string out = title.empty() ? "" : title + "\n\n";
  out += line(t.header, t, w, "", "  ", "");
  out += line(rule, t, w, "", "  ", "");
  for (const auto& row : t.rows) out += line(row, t, w, "", "  ", "");
  return out;
}

std::string render_csv(const Table& t) {
  std::string out;
  auto add = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) out += (c ? "," : "") + csv_field(cells[c]);
    out += "\n";
  };
  add(t.header);
  for (const auto& row : t.rows) add(row);
  return out;
}

std::string render_markdown(const Table& t) {
  auto escaped = [](std::vector<std::string> cells) {
    for (auto& s : cells) s = markdown_cell(s);
    return cells;
  };
  Table e{escaped(t.header), t.numeric, {}};
  for (const auto& row : t.rows) e.rows.push_back(escaped(row));
  std::vector<size_t> w = column_widths(e);
  std::vector<std::string> rule;
  for (size_t c = 0; c < w.size(); ++c) {
    w[c] = std::max<size_t>(w[c], 3);  // room for "--:"
    rule.push_back(e.numeric[c] ? std::string(w[c] - 1, '-') + ":" : std::string(w[c], '-'));
  }
  std::string out = line(e.header, e, w, "| ", " | ", " |");
  out += line(rule, e, w, "| ", " | ", " |");
  for (const auto& row : e.rows) out += line(row, e, w, "| ", " | ", " |");
  return out;
}

}  // namespace smmu_vp::cli

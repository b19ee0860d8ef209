// `smmu-vp trace import` and `smmu-vp trace stats` (trace_cmd.h). The options
// live in the CLI::App itself and are read back from it when the command
// runs, so it keeps no state of its own.
#include "cli/trace_cmd.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "dmatrace/dma_trace.h"
#include "dmatrace/ftrace_import.h"
#include "dmatrace/phases.h"

namespace smmu_vp::cli {

namespace {

namespace dt = smmu_vp::dmatrace;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// "NAME=SID": the SID after the last '=' (device names hold ':' and '.', not '=').
bool parse_device_sid(const std::string& s, std::string& name, uint32_t& sid, std::string& why) {
  const size_t eq = s.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
    why = "expected NAME=SID, e.g. 0000:01:00.0=5";
    return false;
  }
  name = s.substr(0, eq);
  const std::string v = s.substr(eq + 1);
  size_t used = 0;
  unsigned long long x = 0;
  try {
    x = std::stoull(v, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || v[0] == '-' || x > std::numeric_limits<uint32_t>::max()) {
    why = "the StreamID '" + v + "' is not a number from 0 to 4294967295";
    return false;
  }
  sid = static_cast<uint32_t>(x);
  return true;
}

std::string count(uint64_t n) { return fmt::format("{:>12}", n); }

int run_import(const CLI::App& cmd) {
  const std::string in = cmd.get_option("IN")->as<std::string>();
  const std::string out = cmd.get_option("--out")->as<std::string>();
  const bool quiet = cmd.get_option("--quiet")->count() > 0;
  dt::ImportOptions opt;
  opt.default_sid = cmd.get_option("--sid")->as<uint32_t>();
  opt.number_devices = cmd.get_option("--no-number-devices")->count() == 0;
  opt.skip_malformed = cmd.get_option("--skip-malformed")->count() > 0;
  opt.recover_domains = cmd.get_option("--no-recover-domains")->count() == 0;
  const CLI::Option* ds = cmd.get_option("--device-sid");
  if (ds->count())
    for (const std::string& s : ds->as<std::vector<std::string>>()) {
      std::string name, why;
      uint32_t sid = 0;
      if (!parse_device_sid(s, name, sid, why)) {
        std::cerr << "smmu-vp: trace import: --device-sid " << s << ": " << why << "\n";
        return kExitBadInput;
      }
      opt.device_sids[name] = sid;
    }
  std::error_code ec;
  if (std::filesystem::exists(out, ec) && std::filesystem::equivalent(in, out, ec)) {
    std::cerr << "smmu-vp: trace import: the output " << out << " is the input file\n";
    return kExitBadInput;
  }

  const Clock::time_point t0 = Clock::now();
  Clock::time_point last = t0;
  const auto progress = [&](uint64_t lines) {
    if (quiet) return;
    const Clock::time_point now = Clock::now();
    if (now - last < std::chrono::seconds(2)) return;
    last = now;
    const double s = seconds_since(t0);
    std::cerr << fmt::format("smmu-vp: trace import: {:.1f} M lines ({:.2f} M lines/s)\n", lines / 1e6,
                             lines / 1e6 / s);
  };

  dt::ImportStats st;
  try {
    st = dt::import_ftrace(in, out, opt, progress);
  } catch (const dt::TraceError& e) {
    std::cerr << "smmu-vp: trace import: " << e.what() << "\n";
    return kExitBadInput;
  }
  const double s = seconds_since(t0);

  std::cout << fmt::format("imported {} -> {}\n", in, out);
  std::cout << "  lines              " << count(st.lines) << "\n";
  std::cout << "  records written    " << count(st.records) << "\n";
  for (const auto& [name, n] : st.by_event) std::cout << fmt::format("    {:<27}{:>12}\n", name, n);
  std::cout << "  unknown events     " << count(st.unknown_events) << "  (skipped)\n";
  std::cout << "  malformed skipped  " << count(st.malformed_skipped) << "\n";
  std::cout << "  other lines        " << count(st.other_lines) << "  (headers, comments, blank)\n";
  std::cout << fmt::format("  devices (StreamID; records without a device: {})\n", opt.default_sid);
  if (st.device_sids.empty()) std::cout << "    (none)\n";
  for (const auto& [dev, sid] : st.device_sids)
    std::cout << fmt::format("    {:<27}{:>12}{}\n", dev, sid, opt.device_sids.count(dev) ? "  (--device-sid)" : "");
  if (opt.recover_domains && (st.recovery.maps || st.recovery.unmaps))
    std::cout << "  " << dt::domain_recovery_summary(st.recovery) << "\n";
  std::cout << fmt::format("  time {:.3f} s, {:.0f} lines/s\n", s, s > 0 ? st.lines / s : 0.0);
  return 0;
}

std::string ns_to_s(uint64_t ns) { return fmt::format("{}.{:09}", ns / 1000000000ull, ns % 1000000000ull); }

// Per phase (dmatrace/phases.h), only for a trace with phase markers: a
// table of what each phase holds, then its records per op.
void print_phases(const std::vector<dt::PhaseSummary>& phases) {
  if (phases.empty()) return;
  std::cout << fmt::format("  phases ({}; a marker \"phase NAME\" opens one, until the next)\n", phases.size());
  constexpr const char* kRow = "    {:<24}{:>8}  {:<16} {:<16}{:>8}{:>14}{:>10}\n";
  std::cout << fmt::format(kRow, "phase", "line", "start s", "span s", "records", "bytes mapped", "unmapped");
  for (const auto& p : phases) {
    const uint64_t span = p.t_max >= p.t_min ? p.t_max - p.t_min : 0;
    std::cout << fmt::format(kRow, p.name,
                             p.mark_line ? std::to_string(p.mark_line) : std::string("-"), ns_to_s(p.mark_time_ns),
                             ns_to_s(span), p.records, p.bytes_mapped, p.bytes_unmapped);
  }
  for (const auto& p : phases) {
    std::string ops;
    for (const auto& [op, c] : p.by_op) ops += fmt::format("{}{} {}", ops.empty() ? "" : ", ", dt::op_name(op), c);
    std::cout << fmt::format("    {}: {}\n", p.name, ops.empty() ? std::string("no records") : ops);
  }
}

int run_stats(const CLI::App& cmd) {
  const std::string file = cmd.get_option("FILE")->as<std::string>();
  std::map<dt::Op, uint64_t> by_op;
  struct PerSid {
    uint64_t records = 0;
    std::map<std::string, uint64_t> devs;
  };
  std::map<uint32_t, PerSid> by_sid;
  uint64_t n = 0, t_min = UINT64_MAX, t_max = 0, mapped = 0, unmapped = 0;
  std::map<dt::Op, uint64_t> bytes;
  std::vector<std::string> notes;
  dt::PhaseSplitter phases;
  try {
    dt::ReaderOptions ro;
    ro.notes = &notes;
    dt::TraceReader reader(file, ro);
    dt::Record r;
    while (reader.next(r)) {
      ++n;
      phases.add(r, reader.line());
      ++by_op[r.op];
      PerSid& ps = by_sid[r.sid];
      ++ps.records;
      if (!r.dev.empty()) ++ps.devs[r.dev];
      t_min = std::min(t_min, r.time_ns);
      t_max = std::max(t_max, r.time_ns);
      if (dt::maps_bytes(r.op)) {
        mapped += r.size;
        bytes[r.op] += r.size;
      } else if (dt::unmaps_bytes(r.op)) {
        unmapped += r.size;
        bytes[r.op] += r.size;
      }
    }
  } catch (const dt::TraceError& e) {
    std::cerr << "smmu-vp: trace stats: " << e.what() << "\n";
    return kExitBadInput;
  }

  std::cout << fmt::format("{}: {} records\n", file, n);
  if (n)
    std::cout << fmt::format("  time {} s .. {} s, span {} s\n", ns_to_s(t_min), ns_to_s(t_max), ns_to_s(t_max - t_min));
  std::cout << "  op                 records        bytes\n";
  for (const auto& [op, c] : by_op) {
    const auto b = bytes.find(op);
    std::cout << fmt::format("    {:<15}{:>12}{}\n", dt::op_name(op), c,
                             b != bytes.end() ? fmt::format("{:>13}", b->second) : std::string());
  }
  std::cout << "  sid                records  devices\n";
  for (const auto& [sid, ps] : by_sid) {
    std::string devs;
    for (const auto& [d, c] : ps.devs) devs += (devs.empty() ? "" : ", ") + d;
    std::cout << fmt::format("    {:<15}{:>12}{}\n", sid == dt::kNoSid ? std::string("none") : std::to_string(sid),
                             ps.records, devs.empty() ? std::string() : "  " + devs);
  }
  std::cout << fmt::format("  bytes mapped {} (map, map_sg, alloc, iommu_map), unmapped {}\n", mapped, unmapped);
  for (const std::string& note : notes) std::cout << "  " << note.substr(std::string_view("smmu-vp ").size()) << "\n";
  print_phases(phases.phases());
  return 0;
}

int run_trace_command(const CLI::App& trace_cmd) {
  if (const CLI::App* imp = trace_cmd.get_subcommand("import"); imp && imp->parsed()) return run_import(*imp);
  if (const CLI::App* st = trace_cmd.get_subcommand("stats"); st && st->parsed()) return run_stats(*st);
  std::cerr << "smmu-vp: trace: a subcommand is required (import, stats)\n";
  return kExitBadInput;
}

}  // namespace

Subcommand add_trace_command(CLI::App& cli) {
  CLI::App* trace = cli.add_subcommand("trace", "DMA/IOMMU trace files: import Linux ftrace text, summarise a trace");
  trace->require_subcommand(1);

  CLI::App* imp = trace->add_subcommand(
      "import", "Convert Linux ftrace text (iommu:* and dma:* events; plain or gzip) into a trace file (traces/README.md)");
  imp->add_option("IN", "ftrace text: /sys/kernel/tracing/trace or `trace-cmd report` output")->required();
  imp->add_option("-o,--out", "Trace file to write (gzip when it ends in .gz)")->required();
  imp->add_option("--sid", "StreamID of records naming no device, and the base of the devices' numbering")
      ->default_val(0u)
      ->check(CLI::Range(0u, std::numeric_limits<uint32_t>::max()));
  imp->add_option("--device-sid", "A device's StreamID: NAME=SID, e.g. 0000:01:00.0=5 (repeatable)")
      ->type_size(1)
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  imp->add_flag("--no-number-devices",
                "Devices without --device-sid get the --sid StreamID (default: --sid + 1, + 2, ... in order of appearance)");
  imp->add_flag("--no-recover-domains",
                "iommu:map/unmap events that name no device get the --sid StreamID (default: the DMA domain recovered "
                "from the trace, docs/traces.md)");
  imp->add_flag("--skip-malformed", "Count and skip malformed lines of known events instead of failing");
  imp->add_flag("--quiet", "No progress lines on stderr");

  CLI::App* stats = trace->add_subcommand(
      "stats", "Summarise a trace file: records per op and StreamID, time span, bytes mapped; per phase when it has "
               "phase markers (docs/traces.md, \"Phases\")");
  stats->add_option("FILE", "Trace file (plain or gzip)")->required();
  return {trace, [trace] { return run_trace_command(*trace); }};
}

}  // namespace smmu_vp::cli

#include "output/summary.h"

#include <map>

#include <fmt/format.h>

#include "config/device_type.h"
#include "bounds.h"
#include "invariants.h"
#include "util/human.h"

namespace smmu_vp {

namespace {

void histogram_row(std::ostream& os, const std::string& label, const Histogram& h) {
  os << fmt::format("  {:<34} {:>9} {:>11} {:>11} {:>11} {:>11}\n", label, h.count(),
                    human_ns(h.percentile(50)), human_ns(h.percentile(90)),
                    human_ns(h.percentile(99)), human_ns(h.max()));
}

// The SMMU instance whose statistic `path` is ("" for none).
std::string smmu_of(const config::RunConfig& cfg, const std::string& path) {
  for (unsigned i = 0; i < cfg.smmu_count(); ++i) {
    const std::string name = cfg.smmu_name(i);
    if (path.size() > name.size() && path.compare(0, name.size(), name) == 0 && path[name.size()] == '.') return name;
  }
  return "";
}

// TLB lookups per StreamID, when more than one StreamID was translated: which
// device the TLB served, and how well (a replayed trace's devices, a SoC's).
void print_tlb_by_stream(std::ostream& os, const StatsRegistry& s, const std::string& p) {
  const std::string by = p + "tlb.by_sid.", leaf = ".lookups";
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> sids;  // sid -> lookups, hits
  for (const auto& path : s.paths()) {
    if (path.size() <= by.size() + leaf.size() || path.compare(0, by.size(), by) != 0 ||
        path.compare(path.size() - leaf.size(), leaf.size(), leaf) != 0)
      continue;
    const std::string sid = path.substr(by.size(), path.size() - by.size() - leaf.size());
    if (sid.empty() || sid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (const uint64_t n = s.counter_value(path)) sids[std::stoull(sid)] = {n, s.counter_value(by + sid + ".hits")};
  }
  if (sids.size() < 2) return;
  os << "  TLB by StreamID:";
  const char* sep = " ";
  for (const auto& [sid, lh] : sids) {
    os << fmt::format("{}{}: {} lookups, {:.1f}% hits", sep, sid, lh.first,
                      100.0 * static_cast<double>(lh.second) / static_cast<double>(lh.first));
    sep = "; ";
  }
  os << "\n";
}

// What SMMU instance i did: translation, invalidation, and faults a user must see.
void print_smmu(std::ostream& os, const StatsRegistry& s, const config::RunConfig& cfg, unsigned i) {
  const std::string n = cfg.smmu_name(i), p = n + ".";
  const smmu::SmmuConfig& c = cfg.smmu_config(i);
  const uint64_t lookups = s.counter_value(p + "tlb.lookups"), hits = s.counter_value(p + "tlb.hits");
  os << "\n" << n << "\n";
  os << fmt::format("  transactions {} ({} bypassed, {} aborted); {}TLB lookups {}, hit rate {:.1f}%, table walks {}\n",
                    s.counter_value(p + "transactions"), s.counter_value(p + "bypassed"),
                    s.counter_value(p + "aborted"), c.translation.distributed.enabled() ? "TCU " : "", lookups,
                    lookups ? 100.0 * static_cast<double>(hits) / static_cast<double>(lookups) : 0.0,
                    s.counter_value(p + "ptw.walks.s1") + s.counter_value(p + "ptw.walks.s2"));
  print_tlb_by_stream(os, s, p);
  if (const auto& tbus = c.translation.distributed.tbus; !tbus.empty()) {
    uint64_t translations = 0, tbu_hits = 0, misses = 0, waits = 0;
    for (const auto& t : tbus) {
      const std::string b = p + "tbu." + t.name + ".";
      translations += s.counter_value(b + "translations");
      tbu_hits += s.counter_value(b + "hits");
      misses += s.counter_value(b + "misses");
      waits += s.counter_value(b + "slot_waits");
    }
    os << fmt::format(
        "  {} TBUs: {} translations, {} answered by the TBU ({:.1f}%), {} sent to the TCU; {} waited "
        "for a TBU slot; {} invalidations and {} syncs reached each TBU\n",
        tbus.size(), translations, tbu_hits,
        translations ? 100.0 * static_cast<double>(tbu_hits) / static_cast<double>(translations) : 0.0, misses, waits,
        s.counter_value(p + "tbu." + tbus.front().name + ".invalidations"),
        s.counter_value(p + "tbu." + tbus.front().name + ".syncs"));
  }
  // ECMDQs (SMMUv3.3): how many carried commands, for how many cores, and
  // so how many cores share each (under a lock in the driver).
  const unsigned ecmdqs = c.features.ecmdq_pages() * c.features.ecmdq_queues_per_page();
  unsigned used = 0;
  uint64_t ecmdq_commands = 0;
  for (unsigned q = 0; q < ecmdqs; ++q)
    if (const uint64_t in_queue = s.counter_value(p + "ecmdq" + std::to_string(q) + ".commands")) {
      ++used;
      ecmdq_commands += in_queue;
    }
  if (used) {
    unsigned cores = 0;
    for (const auto& a : cfg.apps) cores += static_cast<unsigned>(a.cores.size());
    os << fmt::format("  ECMDQs: {} commands through {} of the {} queues, for {} core(s) of the apps: {}\n",
                      ecmdq_commands, used, ecmdqs, cores,
                      cores > used ? fmt::format("{:.1f} cores share each queue, under its lock", double(cores) / used)
                                   : std::string("a queue per core"));
  }
  os << fmt::format("  commands {} ({} CMD_SYNC)", s.counter_value(p + "cmdq.commands"),
                    s.counter_value(p + "cmdq.syncs"));
  if (const Histogram* h = s.find_histogram(p + "cmdq.sync_latency_ns"); h && h->count())
    os << fmt::format(", SYNC latency p50 {} p99 {}", human_ns(h->percentile(50)), human_ns(h->percentile(99)));
  if (const Histogram* h = s.find_histogram(p + "cmdq.occupancy"); h && h->count())
    os << fmt::format(", queue occupancy mean {:.1f}", h->mean());
  os << "\n";
  const uint64_t faults = s.counter_value(p + "faults.total");
  const uint64_t cerrors = s.counter_value(p + "cmdq.errors.CERROR_ILL") +
                           s.counter_value(p + "cmdq.errors.CERROR_ABT") +
                           s.counter_value(p + "cmdq.errors.CERROR_ATC_INV_SYNC");
  if (faults || cerrors)
    os << fmt::format(
        "  FAULTS: {} translation faults and aborts ({} event records written, {} lost), {} command "
        "errors (stats.json {}faults, {}cmdq.errors)\n",
        faults, s.counter_value(p + "events.written"), s.counter_value(p + "events.lost"), cerrors, p, p);
  if (s.find_counter(p + "ats.translation_requests")) {
    os << fmt::format(
        "  ATS: {} translation requests ({} with a translation, {} without access, {} UR, {} CA), {} translated "
        "accesses ({} aborted), {} ATC invalidations ({} timed out)",
        s.counter_value(p + "ats.translation_requests"), s.counter_value(p + "ats.success"),
        s.counter_value(p + "ats.no_access"), s.counter_value(p + "ats.unsupported_request"),
        s.counter_value(p + "ats.completer_abort"), s.counter_value(p + "ats.translated"),
        s.counter_value(p + "ats.translated_aborted"), s.counter_value(p + "ats.atc_invalidations"),
        s.counter_value(p + "ats.atc_inv_timeouts"));
    if (const Histogram* h = s.find_histogram(p + "ats.atc_inv_latency_ns"); h && h->count())
      os << fmt::format(", ATC_INV round trip p50 {}", human_ns(h->percentile(50)));
    os << "\n";
  }
  if (const Counter* stale = s.find_counter(p + "stale_check.stale_hits"))
    os << fmt::format("  stale check: {} of {} TLB hits used a translation the page tables no longer hold\n",
                      stale->value(), s.counter_value(p + "stale_check.checks"));
}

}  // namespace

std::vector<std::string> run_problems(const Platform& p) {
  const StatsRegistry& s = const_cast<Platform&>(p).stats();
  std::vector<std::string> out;
  auto is_problem = [](const std::string& name) {
    return name.find("error") != std::string::npos || name.find("fault") != std::string::npos ||
           name.find("fatal") != std::string::npos || name.find("lost") != std::string::npos;
  };
  for (const auto& path : s.paths()) {
    const Counter* c = s.find_counter(path);
    if (!c || !c->value()) continue;
    if (path.rfind("cpus.", 0) == 0 && path.size() > 11 && path.compare(path.size() - 11, 11, ".bus_errors") == 0) {
      out.push_back(fmt::format("{}: {} bus errors (an access to an unmapped address or a device that refused it)",
                                path.substr(5, path.size() - 16), c->value()));
    } else if (const std::string smmu = smmu_of(p.config(), path); !smmu.empty()) {
      const std::string leaf = path.substr(smmu.size() + 1);
      if (leaf.rfind("faults.", 0) == 0 && leaf != "faults.total")
        out.push_back(fmt::format("{}: {} {} events", smmu, c->value(), leaf.substr(7)));
      else if (leaf.rfind("cmdq.errors.", 0) == 0)
        out.push_back(fmt::format("{}: {} commands refused with {}", smmu, c->value(), leaf.substr(12)));
      else if (leaf == "events.lost")
        out.push_back(fmt::format("{}: {} event records lost (event queue full)", smmu, c->value()));
      else if (leaf.size() > 13 && leaf.compare(leaf.size() - 13, 13, ".check_errors") == 0)
        out.push_back(fmt::format("{}: the command-queue checker found {} violations ({})", smmu, c->value(), path));
    } else {
      for (const auto& d : p.config().devices) {
        const std::string prefix = d.name + ".";
        if (path.rfind(prefix, 0) == 0 && is_problem(path.substr(prefix.size())))
          out.push_back(fmt::format("{}: {} = {}", d.name, path.substr(prefix.size()), c->value()));
      }
    }
  }
  // What the command-queue checker saw, in its words.
  for (unsigned i = 0; i < p.config().smmu_count(); ++i)
    if (const smmu::Smmu* m = const_cast<Platform&>(p).smmu(i))
      for (auto& line : m->cmdq_check_reports()) out.push_back(std::move(line));
  // Results that are not physically possible (invariants.h).
  for (auto& line : invariant_violations(s, p.config())) out.push_back(std::move(line));
  return out;
}

// Which profile the run's platform is, and what the scenario and the command
// line changed of it: a figure is the profile's only where both lists are empty.
static void print_platform_origin(std::ostream& os, const config::PlatformOrigin& o) {
  if (o.file.empty() && o.set_by_scenario.empty() && o.set_by_command_line.empty()) return;
  os << "platform  " << (o.profile.empty() ? "file " + o.file : "profile " + o.profile + " (" + o.file + ")") << "\n";
  auto list = [&os](const char* who, const std::vector<std::string>& keys) {
    if (keys.empty()) return;
    os << "          " << who << " sets";
    for (size_t i = 0; i < keys.size(); ++i) os << (i ? ", " : " ") << keys[i];
    os << "\n";
  };
  list("the scenario", o.set_by_scenario);
  list("--set", o.set_by_command_line);
}

void print_summary(std::ostream& os, Platform& p, const RunResult& r) {
  const StatsRegistry& s = p.stats();
  const auto& cfg = p.config();
  os << fmt::format("\nscenario  {}{}\n", cfg.name, cfg.description.empty() ? "" : ": " + cfg.description);
  print_platform_origin(os, cfg.origin);
  os << fmt::format("status    {} after {} simulated ({:.2f} s wall){}\n", RunResult::status_name(r.status),
                    human_ns(r.sim_ns), r.wall_seconds, r.message.empty() ? "" : "\n          " + r.message);

  os << "\ncores\n";
  // Every core, idle ones too: busy time and utilisation over the whole run.
  os << fmt::format("  {:<5} {:<20} {:>6} {:>14} {:>14} {:>6}\n", "cpu", "app", "exit", "finished at", "busy", "util");
  for (const auto& c : r.cores) {
    const bool idle = c.app.empty();
    const std::string exit = !idle && c.finished ? std::to_string(c.exit_code) : "-";
    const std::string finished = idle ? "-" : c.finished ? human_ns(c.finish_ns) : "running";
    os << fmt::format("  {:<5} {:<20} {:>6} {:>14} {:>14} {:>5.1f}%\n", c.cpu, idle ? "-" : c.app, exit, finished,
                      human_ns(c.busy_ns), 100.0 * c.utilisation);
  }

  const double dram_bytes =
      static_cast<double>(s.counter_value("dram.bytes_read") + s.counter_value("dram.bytes_written"));
  os << "\nmemory\n";
  os << fmt::format("  dram: {} moved, {:.2f} GB/s over the run of {:.2f} GB/s configured, bus busy {:.1f}%\n",
                    human_bytes(dram_bytes), s.value_or_zero("dram.bandwidth_gbps"), cfg.dram.bandwidth_gbps,
                    100.0 * s.value_or_zero("dram.utilization"));
  for (const char* kind : {"read", "write"}) {
    const Histogram* h = s.find_histogram(std::string("dram.") + kind + "_latency_ns");
    if (!h || !h->count()) continue;
    os << fmt::format("  dram {:<5} latency: min {}  p50 {}  p99 {}  max {} (configured {})\n", kind,
                      human_ns(h->min()), human_ns(h->percentile(50)), human_ns(h->percentile(99)), human_ns(h->max()),
                      human_ns(kind[0] == 'r' ? cfg.dram.read_latency_ns : cfg.dram.write_latency_ns));
  }

  for (unsigned i = 0; i < cfg.smmu_count(); ++i) print_smmu(os, s, cfg, i);

  bool header = false;
  for (const auto& d : cfg.devices) {
    const DeviceType* t = find_device_type(d.type);
    const std::string lines = t && t->summary ? t->summary(d, s) : "";
    if (lines.empty()) continue;
    if (!header) os << "\ndevices\n";
    header = true;
    os << lines;
  }

  // What bounded the run (bounds.h): the resources at 90 % or more, else the most used.
  if (const auto use = resource_use(s, cfg); !use.empty()) {
    os << "\nbound\n";
    const auto bound = bounds(use);
    for (const auto& line : bound) os << "  " << line << "\n";
    if (bound.empty())
      os << fmt::format("  none at {:.0f} % or more: latency or the offered load set the rate\n", 100 * kBoundShare);
    // The next most used, for what would bound the run next.
    std::string next;
    for (size_t i = bound.size(), n = 0; i < use.size() && n < 3; ++i, ++n)
      next += fmt::format("{}{} {:.1f} %", n ? ", " : "", use[i].resource, 100 * use[i].share);
    if (!next.empty()) os << "  next: " << next << "\n";
  }

  if (const auto unsteady = steady_state_warnings(p.stats()); !unsteady.empty()) {
    os << "\nwarnings\n";
    for (const auto& line : unsteady) os << "  " << line << "\n";
  }
  const std::vector<std::string> problems = run_problems(p);
  if (!problems.empty()) {
    os << "\nproblems\n";
    for (const auto& line : problems) os << "  " << line << "\n";
  }

  // Everything the apps reported, in registry order.
  header = false;
  for (const auto& path : s.paths()) {
    if (path.rfind("sw.", 0) != 0) continue;
    if (!header) {
      os << "\nsoftware\n";
      os << fmt::format("  {:<34} {:>9} {:>11} {:>11} {:>11} {:>11}\n", "histogram", "count", "p50", "p90", "p99", "max");
      header = true;
    }
    const std::string label = path.substr(3);
    if (const Histogram* h = s.find_histogram(path)) histogram_row(os, label, *h);
  }
  for (const auto& path : s.paths()) {
    if (path.rfind("sw.", 0) != 0) continue;
    const std::string label = path.substr(3);
    if (const Counter* c = s.find_counter(path)) os << fmt::format("  {:<34} {:>9}\n", label, c->value());
    else if (const double* v = s.find_value(path)) os << fmt::format("  {:<34} {:>9.4g}\n", label, *v);
  }
  os << "\n";
}

}  // namespace smmu_vp

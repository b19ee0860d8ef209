// What bounded a run (bounds.h).
#include "bounds.h"

#include <algorithm>

#include <fmt/format.h>

#include "hal/hal.h"

namespace smmu_vp {

std::vector<ResourceUse> resource_use(const StatsRegistry& s, const config::RunConfig& cfg) {
  std::vector<ResourceUse> out;
  // A model's use over the apps' measurement window (path + "_in_window")
  // when there was one, else over the run.
  auto add = [&](std::string resource, const std::string& path, double capacity) {
    const double* v = s.find_value(path + "_in_window");
    if (!v) v = s.find_value(path);
    if (v && capacity > 0) out.push_back({std::move(resource), *v / capacity});
  };
  // The apps' cores: the app's own figure over its window when it gives one,
  // else its cores' mean over the run.
  for (const auto& a : cfg.apps) {
    const std::string& name = a.name;
    if (s.find_value("sw." + name + ".cpu_utilisation")) {
      add("cores of " + name, "sw." + name + ".cpu_utilisation", 1.0);
      continue;
    }
    double sum = 0;
    unsigned n = 0;
    for (unsigned c : a.cores)
      if (const double* u = s.find_value("cpus.cpu" + std::to_string(c) + ".utilisation")) {
        sum += *u;
        ++n;
      }
    if (n) out.push_back({"cores of " + name, sum / n});
  }
  // The command queue, as the share of the apps' cores' time spent in it
  // (inserting, waiting for room and for CMD_SYNC: the driver's
  // smmu_cmdq_ps): cores that are busy because they wait there are bound by
  // the queue, not by their own work.
  for (const auto& a : cfg.apps) {
    const Counter* in_cmdq = s.find_counter("sw." + a.name + ".smmu_cmdq_ps");
    if (!in_cmdq) continue;
    double total_ns = 0;
    for (unsigned c : a.cores) {
      const std::string p = "cpus.cpu" + std::to_string(c) + ".";
      const double* busy = s.find_value(p + "busy_ns");
      const double* idle = s.find_value(p + "idle_ns");
      if (busy && idle) total_ns += *busy + *idle;
    }
    if (total_ns > 0)
      out.push_back({"smmu command queue (cores of " + a.name + " in it)",
                     static_cast<double>(in_cmdq->value()) / 1000.0 / total_ns});
  }
  // Cache lines that serve one transfer at a time (cpu.line_queueing): each
  // named one (hal_name_shared) and the busiest unnamed one, as the share of
  // the time the line was moving between cores.
  const std::string lines = "cpus.lines.", busy = ".busy_share";
  for (const std::string& path : s.paths()) {
    if (path.rfind(lines, 0) != 0 || path.size() <= lines.size() + busy.size() ||
        path.compare(path.size() - busy.size(), busy.size(), busy) != 0)
      continue;
    const std::string name = path.substr(lines.size(), path.size() - lines.size() - busy.size());
    add(name == "busiest_unnamed" ? "busiest unnamed cache line" : "cache line " + name, path, 1.0);
  }
  add("dram bandwidth", "dram.utilization", 1.0);
  // The links as the network apps see them in their window (a device's own
  // rate counts from its first frame, ramp-up included): goodput over every
  // link's rate.
  double links_gbps = 0;
  for (const auto& d : cfg.devices)
    if (d.type == "nic") links_gbps += d.number("link_gbps");
  for (const auto& a : cfg.apps)
    if (std::string(a.app->name) == "net_rx" || std::string(a.app->name) == "net_tx")
      add("links, " + a.name + "'s goodput in its window", "sw." + a.name + ".gbps", links_gbps);
  for (const auto& d : cfg.devices) {
    const std::string p = d.name + ".";
    if (d.type == "nic") {
      const double link = d.number("link_gbps");
      add("link " + d.name + " receive", p + "rx_gbps", link);
      add("link " + d.name + " send", p + "tx_gbps", link);
    } else if (d.type == "nvme") {
      const double pcie = d.number("pcie_gbps") * 1000 / 8;
      add("drive " + d.name + " read bandwidth", p + "read_mbps", std::min(d.number("read_mbps"), pcie));
      add("drive " + d.name + " write bandwidth", p + "write_mbps", std::min(d.number("write_mbps"), pcie));
      add("drive " + d.name + " media slots", p + "media_utilisation", 1.0);  // its parallelism
    }
  }
  for (unsigned i = 0; i < cfg.smmu_count(); ++i) {
    const std::string n = cfg.smmu_name(i), p = n + ".";
    const smmu::DistributedConfig& d = cfg.smmu_config(i).translation.distributed;
    add(n + (d.enabled() ? " tcu translation slots" : " translation slots"),
        p + (d.enabled() ? "tcu.translation_slot_utilisation" : "translation_slot_utilisation"), 1.0);
    add(n + " walkers", p + "walker_utilisation", 1.0);
    add(n + " command lanes", p + "cmdq.lane_utilisation", 1.0);
    for (const auto& t : d.tbus) add(n + " tbu " + t.name + " translation slots", p + "tbu." + t.name + ".slot_utilisation", 1.0);
  }
  std::stable_sort(out.begin(), out.end(), [](const ResourceUse& a, const ResourceUse& b) { return a.share > b.share; });
  return out;
}

std::vector<std::string> bounds(const std::vector<ResourceUse>& use) {
  std::vector<std::string> out;
  for (const auto& u : use)
    if (u.share >= kBoundShare) out.push_back(fmt::format("{} {:.1f} %", u.resource, 100.0 * u.share));
  return out;
}

}  // namespace smmu_vp

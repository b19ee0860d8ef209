// Physical invariants of a run's results (invariants.h).
#include "invariants.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "hal/hal.h"

namespace smmu_vp {

namespace {

// Values a float computation may overshoot a bound by through rounding.
constexpr double kSlack = 1e-9;
// An app's throughput is read from the cores' completion times, whose
// handling (interrupts, the completion path) varies by up to microseconds at
// the window's edges: over a window of milliseconds that moves it by parts
// per million (1.3 ppm at seed 001's drive-bound fio points). Bounds on apps
// allow 10 ppm; a whole request counted at an edge (1800 ppm there) is
// still caught.
constexpr double kAppSlack = 1e-5;

struct Checker {
  const StatsRegistry& stats;
  std::vector<std::string> out;

  const double* value(const std::string& path) const { return stats.find_value(path); }
  uint64_t counter(const std::string& path) const {
    const Counter* c = stats.find_counter(path);
    return c ? c->value() : 0;
  }
  // `path` (a value) at most `bound`, said as `what` when it is not.
  void at_most(const std::string& path, double bound, const std::string& what, double slack = kSlack) {
    const double* v = value(path);
    if (v && *v > bound * (1 + slack) + kSlack)
      out.push_back(fmt::format("invariant: {} = {:.6g} exceeds {} ({:.6g})", path, *v, what, bound));
  }
};

}  // namespace

std::vector<std::string> invariant_violations(const StatsRegistry& stats, const config::RunConfig& cfg) {
  Checker c{stats, {}};
  // Memory: no more than the bus carries.
  c.at_most("dram.utilization", 1.0, "the whole of the run");
  c.at_most("dram.bandwidth_gbps", cfg.dram.bandwidth_gbps, "the configured DRAM bandwidth in GB/s");
  // Cores and apps: busy at most all of the time.
  for (unsigned i = 0; i < cfg.cpu.count; ++i)
    c.at_most("cpus.cpu" + std::to_string(i) + ".utilisation", 1.0, "the whole of the run");
  for (const auto& path : stats.paths())
    if (path.rfind("sw.", 0) == 0 && path.size() > 16 && path.compare(path.size() - 16, 16, ".cpu_utilisation") == 0)
      c.at_most(path, 1.0, "the whole of the window");
  // Devices: no faster than their link or medium, nothing handled that was not offered.
  double link_gbps = 0, drive_mbps = 0;
  for (const auto& d : cfg.devices) {
    const std::string p = d.name + ".";
    if (d.type == "nic") {
      const double link = d.number("link_gbps");
      link_gbps += link;
      c.at_most(p + "rx_gbps", link, "the link in Gbit/s");
      c.at_most(p + "tx_gbps", link, "the link in Gbit/s");
      if (c.counter(p + "rx_packets") > c.counter(p + "rx_offered"))
        c.out.push_back(fmt::format("invariant: {}rx_packets = {} exceeds the frames offered ({})", p,
                                    c.counter(p + "rx_packets"), c.counter(p + "rx_offered")));
    } else if (d.type == "nvme") {
      const double link_mbps = d.number("pcie_gbps") * 1000 / 8;
      c.at_most(p + "read_mbps", std::min(d.number("read_mbps"), link_mbps), "the drive's read bandwidth in MB/s");
      c.at_most(p + "write_mbps", std::min(d.number("write_mbps"), link_mbps),
                "the drive's write bandwidth in MB/s");
      drive_mbps += std::max(d.number("read_mbps"), d.number("write_mbps"));
    }
  }
  // Apps, each instance: no more than every link or drive of the platform could carry.
  for (const auto& a : cfg.apps) {
    const std::string app = a.app->name, p = "sw." + a.name + ".";
    if (app == "net_rx" || app == "net_tx") c.at_most(p + "gbps", link_gbps, "every NIC's link in Gbit/s", kAppSlack);
    if (app == "fio") c.at_most(p + "mbps", drive_mbps, "every drive's bandwidth in MB/s", kAppSlack);
  }
  return c.out;
}

std::vector<std::string> steady_state_warnings(const StatsRegistry& stats) {
  static const std::string kFirst = ".window_bytes_first_half", kSecond = ".window_bytes_second_half";
  std::vector<std::string> out;
  for (const auto& path : stats.paths()) {
    if (path.rfind("sw.", 0) != 0 || path.size() <= kFirst.size() ||
        path.compare(path.size() - kFirst.size(), kFirst.size(), kFirst) != 0)
      continue;
    const std::string app = path.substr(0, path.size() - kFirst.size());
    const Counter* a = stats.find_counter(path);
    const Counter* b = stats.find_counter(app + kSecond);
    const double h1 = a ? static_cast<double>(a->value()) : 0.0, h2 = b ? static_cast<double>(b->value()) : 0.0;
    const double larger = std::max(h1, h2);
    if (larger > 0 && std::abs(h1 - h2) > kSteadyStateTolerance * larger)
      out.push_back(fmt::format("{}: the window's halves carried {:.0f} and {:.0f} bytes ({:+.1f} %): not a steady "
                                "state (a longer warmup_us or duration_us, or a backlog that keeps growing)",
                                app, h1, h2, 100.0 * (h2 - h1) / larger));
  }
  return out;
}

}  // namespace smmu_vp

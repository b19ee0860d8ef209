// invariant_violations (invariants.h): results no machine could produce are
// named, sound ones pass. Plain C++, no simulation.
#include "invariants.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_apps.h"

namespace smmu_vp {
namespace {

using test::assign;
using test::kFio;
using test::kNetRx;

config::RunConfig platform_with_a_nic_and_a_drive() {
  config::RunConfig cfg;
  cfg.cpu.count = 2;
  cfg.dram.bandwidth_gbps = 25.6;
  DeviceConfig nic;
  nic.name = "nic0";
  nic.type = "nic";
  nic.params = {{"link_gbps", 100.0}};
  DeviceConfig drive;
  drive.name = "nvme0";
  drive.type = "nvme";
  drive.params = {{"read_mbps", 2800.0}, {"write_mbps", 2000.0}, {"pcie_gbps", 31.5}};
  cfg.devices = {nic, drive};
  cfg.apps = {assign(&kNetRx, {0}), assign(&kFio, {1})};
  return cfg;
}

bool names(const std::vector<std::string>& lines, const std::string& what) {
  for (const auto& l : lines)
    if (l.find(what) != std::string::npos) return true;
  return false;
}

TEST(Invariants, SoundResultsPass) {
  StatsRegistry s;
  s.value("dram.utilization") = 0.5;
  s.value("dram.bandwidth_gbps") = 12.0;
  s.value("cpus.cpu0.utilisation") = 1.0;
  s.value("nic0.rx_gbps") = 99.9;
  s.counter("nic0.rx_offered").add(10);
  s.counter("nic0.rx_packets").add(10);
  s.value("nvme0.read_mbps") = 2800.0;
  s.value("sw.net_rx.gbps") = 94.1;
  s.value("sw.net_rx.cpu_utilisation") = 0.7;
  s.value("sw.fio.mbps") = 2700.0;
  EXPECT_TRUE(invariant_violations(s, platform_with_a_nic_and_a_drive()).empty());
}

TEST(Invariants, EachImpossibleResultIsNamed) {
  StatsRegistry s;
  s.value("dram.utilization") = 1.2;
  s.value("dram.bandwidth_gbps") = 30.0;
  s.value("cpus.cpu1.utilisation") = 1.01;
  s.value("nic0.rx_gbps") = 101.0;
  s.counter("nic0.rx_offered").add(10);
  s.counter("nic0.rx_packets").add(11);
  s.value("nvme0.read_mbps") = 2900.0;
  s.value("nvme0.write_mbps") = 3000.0;
  s.value("sw.net_rx.gbps") = 222.7;
  s.value("sw.net_rx.cpu_utilisation") = 1.5;
  s.value("sw.fio.mbps") = 9000.0;
  const auto v = invariant_violations(s, platform_with_a_nic_and_a_drive());
  for (const char* what : {"dram.utilization", "dram.bandwidth_gbps", "cpus.cpu1.utilisation", "nic0.rx_gbps",
                           "nic0.rx_packets", "nvme0.read_mbps", "nvme0.write_mbps", "sw.net_rx.gbps",
                           "sw.net_rx.cpu_utilisation", "sw.fio.mbps"})
    EXPECT_TRUE(names(v, what)) << what;
  EXPECT_EQ(v.size(), 10u);
  EXPECT_TRUE(names(v, "exceeds the link in Gbit/s (100)")) << v[3];
}

// An app's throughput is read from completion times that jitter at the
// window's edges by parts per million; a whole request too many is not.
TEST(Invariants, AppThroughputAllowsEdgeJitterButNotAWholeRequest) {
  StatsRegistry jitter;
  jitter.value("sw.fio.mbps") = 2800.015;  // 5 ppm over the drive
  EXPECT_TRUE(invariant_violations(jitter, platform_with_a_nic_and_a_drive()).empty());
  StatsRegistry whole;
  whole.value("sw.fio.mbps") = 2800.0 * 108 / 107;  // 107 requests' time, 108 counted
  EXPECT_TRUE(names(invariant_violations(whole, platform_with_a_nic_and_a_drive()), "sw.fio.mbps"));
  StatsRegistry device;
  device.value("nvme0.read_mbps") = 2800.015;  // a device's own count has no such excuse
  EXPECT_TRUE(names(invariant_violations(device, platform_with_a_nic_and_a_drive()), "nvme0.read_mbps"));
}

TEST(SteadyState, HalvesWithinTheToleranceAreSteady) {
  StatsRegistry s;
  s.counter("sw.net_rx.window_bytes_first_half").add(1000);
  s.counter("sw.net_rx.window_bytes_second_half").add(1090);
  EXPECT_TRUE(steady_state_warnings(s).empty());
}

TEST(SteadyState, HalvesFartherApartNameTheApp) {
  StatsRegistry s;
  s.counter("sw.fio.window_bytes_first_half").add(1000);
  s.counter("sw.fio.window_bytes_second_half").add(1200);
  s.counter("sw.net_rx.window_bytes_first_half").add(500);  // nothing in the second half at all
  const auto w = steady_state_warnings(s);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_TRUE(names(w, "sw.fio: the window's halves carried 1000 and 1200 bytes (+16.7 %)"));
  EXPECT_TRUE(names(w, "sw.net_rx:"));
}

}  // namespace
}  // namespace smmu_vp

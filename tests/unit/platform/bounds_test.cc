// resource_use / bounds (bounds.h): each resource's share of its capacity,
// most used first, and the ones at 90 % or more named as the bound. Plain
// C++, no simulation.
#include "bounds.h"

#include <gtest/gtest.h>

#include "test_apps.h"

namespace smmu_vp {
namespace {

using test::assign;
using test::kFio;
using test::kNetRx;
using test::kOther;

config::RunConfig platform_with_two_drives_and_tbus() {
  config::RunConfig cfg;
  cfg.cpu.count = 4;
  for (const char* name : {"nvme0", "nvme1"}) {
    DeviceConfig d;
    d.name = name;
    d.type = "nvme";
    d.params = {{"read_mbps", 3000.0}, {"write_mbps", 2000.0}, {"pcie_gbps", 16.0}};  // PCIe: 2000 MB/s
    cfg.devices.push_back(d);
  }
  cfg.has_smmu = true;
  cfg.smmu.translation.distributed.tbus = {{"pcie0", {"nvme0", "nvme1"}}};
  cfg.apps = {assign(&kFio, {0, 1}), assign(&kOther, {2, 3})};
  return cfg;
}

TEST(Bounds, EachResourceAsAShareOfWhatItCarriesMostUsedFirst) {
  StatsRegistry s;
  s.value("nvme0.read_mbps") = 1990.0;  // bounded by its PCIe link, not its 3000 MB/s medium
  s.value("nvme1.read_mbps") = 1000.0;
  s.value("sw.fio.cpu_utilisation") = 0.3;
  s.value("cpus.cpu2.utilisation") = 0.2;  // "other" gives no figure of its own: its cores' mean
  s.value("cpus.cpu3.utilisation") = 0.4;
  s.value("dram.utilization") = 0.05;
  s.value("smmu.tcu.translation_slot_utilisation") = 0.1;
  s.value("smmu.walker_utilisation") = 0.92;
  s.value("smmu.tbu.pcie0.slot_utilisation") = 0.5;
  const auto use = resource_use(s, platform_with_two_drives_and_tbus());
  ASSERT_EQ(use.size(), 8u);
  EXPECT_EQ(use[0].resource, "drive nvme0 read bandwidth");
  EXPECT_DOUBLE_EQ(use[0].share, 0.995);
  EXPECT_EQ(use[1].resource, "smmu walkers");
  EXPECT_EQ(use[2].resource, "drive nvme1 read bandwidth");
  EXPECT_EQ(use[3].resource, "smmu tbu pcie0 translation slots");
  bool other = false;
  for (const auto& u : use)
    if (u.resource == "cores of other") {
      other = true;
      EXPECT_DOUBLE_EQ(u.share, 0.3);
    }
  EXPECT_TRUE(other);
  EXPECT_EQ(bounds(use), (std::vector<std::string>{"drive nvme0 read bandwidth 99.5 %", "smmu walkers 92.0 %"}));
}

// Cores busy because they wait in the command queue: the share of their
// time in it (the driver's smmu_cmdq_ps) is a resource of its own; and a
// network app's goodput in its window against the links.
TEST(Bounds, TheCommandQueueAsTheShareOfTheCoresTimeInItAndTheLinksInTheWindow) {
  config::RunConfig cfg = platform_with_two_drives_and_tbus();
  DeviceConfig nic;
  nic.name = "nic0";
  nic.type = "nic";
  nic.params = {{"link_gbps", 100.0}};
  cfg.devices.push_back(nic);
  cfg.apps.push_back(assign(&kNetRx, {}));
  StatsRegistry s;
  for (unsigned c : {0u, 1u}) {
    s.value("cpus.cpu" + std::to_string(c) + ".busy_ns") = 900.0;
    s.value("cpus.cpu" + std::to_string(c) + ".idle_ns") = 100.0;
  }
  s.counter("sw.fio.smmu_cmdq_ps").add(1'900'000);  // 1900 of the cores' 2000 ns
  s.value("sw.net_rx.gbps") = 95.0;
  s.value("nic0.rx_gbps") = 60.0;  // from its first frame, ramp-up included
  const auto use = resource_use(s, cfg);
  EXPECT_EQ(bounds(use), (std::vector<std::string>{"smmu command queue (cores of fio in it) 95.0 %",
                                                    "links, net_rx's goodput in its window 95.0 %"}));
}

// A model's use over the apps' window, when it has one, is what counts: a
// run's total dilutes it with the warm-up.
TEST(Bounds, TheWindowsShareWinsOverTheRuns) {
  StatsRegistry s;
  s.value("smmu.cmdq.lane_utilisation") = 0.6;
  s.value("smmu.cmdq.lane_utilisation_in_window") = 0.99;
  const auto use = resource_use(s, platform_with_two_drives_and_tbus());
  EXPECT_EQ(bounds(use), (std::vector<std::string>{"smmu command lanes 99.0 %"}));
}

TEST(Bounds, NothingNearItsCapacityIsNoBound) {
  StatsRegistry s;
  s.value("dram.utilization") = 0.2;
  EXPECT_TRUE(bounds(resource_use(s, platform_with_two_drives_and_tbus())).empty());
}

// A cache line that serves one transfer at a time is a resource of its own:
// each named line and the busiest unnamed one, over the window when there
// is one; a line's transfer count alone is no share.
TEST(Bounds, ACacheLineAsTheShareOfTheTimeItWasMoving) {
  StatsRegistry s;
  s.value("cpus.lines.smmu_cmdq_llq.transfers") = 1000.0;
  s.value("cpus.lines.smmu_cmdq_llq.busy_share") = 0.7;
  s.value("cpus.lines.smmu_cmdq_llq.busy_share_in_window") = 0.98;
  s.value("cpus.lines.smmu_cmdq_shared_lock.busy_share") = 0.3;
  s.value("cpus.lines.busiest_unnamed.busy_share") = 0.95;
  const auto use = resource_use(s, platform_with_two_drives_and_tbus());
  EXPECT_EQ(bounds(use), (std::vector<std::string>{"cache line smmu_cmdq_llq 98.0 %", "busiest unnamed cache line 95.0 %"}));
  bool lock = false;
  for (const auto& u : use) {
    EXPECT_EQ(u.resource.find("transfers"), std::string::npos) << u.resource;
    if (u.resource == "cache line smmu_cmdq_shared_lock") lock = true;
  }
  EXPECT_TRUE(lock);
}

}  // namespace
}  // namespace smmu_vp

// The NIC driver's RX page reuse (issue 29, item 4; sw/drivers/nic/nic_rx.c):
// hns3's hns3_nic_reuse_page (Linux v5.4), the driver of seed 001's 100G
// NIC. Each RX slot owns a page of buffers, mapped once; the page is
// unmapped and replaced only when the slot wraps to its first buffer while
// the stack still holds another of its buffers.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

using namespace cli_test;

namespace {

const std::string kDefault = std::string(SMMU_VP_SOURCE_DIR) + "/platform/scenarios/default.json";

nlohmann::json run_nic(const std::string& name, const std::string& sets) {
  const fs::path d = temp_dir("nic-buffers-" + name);
  const Cmd r = sh("run " + kDefault + " --quiet --out " + d.string() + sets);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json s = read_json(d / "stats.json");
  fs::remove_all(d);
  return s;
}

}  // namespace

// 100 Gbit/s on 16 queues of 1024 slots: a slot comes back every 2 ms. A
// stack that frees its buffers within 0.1 ms lets every page be reused: no
// unmap, no TLBI, no SYNC after set-up. One that holds them 3 ms makes
// many slots wrap onto a page still held: those pages are unmapped, one
// strict unmap (and SYNC) each. Either way every frame arrives intact.
TEST(CliNicBuffers, PageReuseUnmapsOnlyPagesTheStackStillHolds) {
  const nlohmann::json per_packet = run_nic("per-packet", "");
  const nlohmann::json quick = run_nic("quick", " --set scenario.apps.0.params.buffers=page_reuse");
  const nlohmann::json slow = run_nic("slow", " --set scenario.apps.0.params.buffers=page_reuse"
                                              " --set scenario.apps.0.params.stack_hold_ns=3000000");
  for (const nlohmann::json* s : {&quick, &slow}) {
    const nlohmann::json& rx = (*s)["sw"]["net_rx"];
    EXPECT_FALSE(rx.contains("frames_corrupt")) << rx.dump();
    EXPECT_GT(rx["gbps"].get<double>(), 93.0);
    // Every buffer the driver took back was either reused or its page
    // unmapped (what the NIC wrote after the window's end stays in the ring).
    const uint64_t taken = u64(rx, {"rx_page_reuses"}) + u64(rx, {"rx_page_unmaps"});
    EXPECT_LE(taken, u64(*s, {"nic0", "rx_packets"}));
    EXPECT_GT(taken, u64(*s, {"nic0", "rx_packets"}) * 95 / 100);
  }
  EXPECT_EQ(u64(quick, {"sw", "net_rx", "rx_page_unmaps"}), 0u);
  EXPECT_LT(u64(quick, {"smmu", "cmdq", "syncs"}), 10u);
  const uint64_t unmaps = u64(slow, {"sw", "net_rx", "rx_page_unmaps"});
  EXPECT_GT(unmaps, u64(slow, {"nic0", "rx_packets"}) / 4);
  EXPECT_LT(unmaps, u64(slow, {"nic0", "rx_packets"}) * 3 / 4);
  EXPECT_NEAR(static_cast<double>(u64(slow, {"smmu", "cmdq", "syncs"})), static_cast<double>(unmaps), 10.0);
  // The IOMMU's share of the CPU goes with the unmaps.
  const double cpu_pp = per_packet["sw"]["net_rx"]["cpu_utilisation"].get<double>();
  const double cpu_slow = slow["sw"]["net_rx"]["cpu_utilisation"].get<double>();
  const double cpu_quick = quick["sw"]["net_rx"]["cpu_utilisation"].get<double>();
  EXPECT_GT(cpu_pp, cpu_slow);
  EXPECT_GT(cpu_slow, cpu_quick);
  // Per packet the policy's counters are not reported.
  EXPECT_FALSE(per_packet["sw"]["net_rx"].contains("rx_page_reuses"));
}

// A page that is not a power of two of 2 to 32 buffers is refused by the
// driver at probe, naming the sizes; the app fails (exit 3).
TEST(CliNicBuffers, PageReuseRefusesAPageThatIsNotWholeBuffers) {
  const fs::path d = temp_dir("nic-buffers-bad");
  const Cmd r = sh("run " + kDefault + " --quiet --out " + d.string() +
                   " --set scenario.apps.0.params.buffers=page_reuse --set scenario.apps.0.params.page_bytes=6144");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("page reuse needs a power-of-two page of 2 to 32 buffers of 2048 bytes, not 6144 bytes"),
            std::string::npos)
      << r.out;
  fs::remove_all(d);
}

// CoherenceTracker: which shared-memory accesses are local and which move a
// cache line between cores (and so pay the transfer cost).
#include "cpu/coherence.h"

#include "cpu/cpu_cluster.h"

#include <gtest/gtest.h>

namespace smmu_vp {
namespace {

constexpr bool kRead = false;
constexpr bool kWrite = true;

TEST(Coherence, ColdAccessIsLocal) {
  // Nobody holds the line: it comes from memory, not another core.
  CoherenceTracker c;
  EXPECT_FALSE(c.access(0x1000, 0, kRead));
  EXPECT_FALSE(c.access(0x2000, 1, kWrite));
  EXPECT_EQ(c.local(), 2u);
  EXPECT_EQ(c.transfers(), 0u);
}

TEST(Coherence, RepeatedAccessByOwnerIsLocal) {
  CoherenceTracker c;
  c.access(0x1000, 2, kWrite);
  EXPECT_FALSE(c.access(0x1000, 2, kWrite));
  EXPECT_FALSE(c.access(0x1000, 2, kRead));
  EXPECT_FALSE(c.access(0x1000, 2, kWrite));  // still the sole holder after reading
  EXPECT_EQ(c.transfers(), 0u);
}

TEST(Coherence, ReadSharing) {
  CoherenceTracker c;
  c.access(0x40, 0, kRead);
  EXPECT_TRUE(c.access(0x40, 1, kRead));   // fetched from core 0
  EXPECT_FALSE(c.access(0x40, 0, kRead));  // both share it now
  EXPECT_FALSE(c.access(0x40, 1, kRead));
  EXPECT_TRUE(c.access(0x40, 2, kRead));
  EXPECT_EQ(c.transfers(), 2u);
  EXPECT_EQ(c.local(), 3u);
}

TEST(Coherence, WriteInvalidatesSharers) {
  CoherenceTracker c;
  c.access(0x80, 0, kRead);
  c.access(0x80, 1, kRead);
  c.access(0x80, 2, kRead);
  // Core 0 holds a copy but others do too: the write must invalidate them.
  EXPECT_TRUE(c.access(0x80, 0, kWrite));
  // Now core 0 is the sole owner: further writes are local ...
  EXPECT_FALSE(c.access(0x80, 0, kWrite));
  // ... and the former sharers lost their copies.
  EXPECT_TRUE(c.access(0x80, 1, kRead));
  EXPECT_TRUE(c.access(0x80, 2, kRead));
}

TEST(Coherence, WritePingPongTransfersEveryTime) {
  // A contended lock word: every write by the other core moves the line.
  CoherenceTracker c;
  c.access(0x100, 0, kWrite);
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(c.access(0x100, 1, kWrite));
    EXPECT_TRUE(c.access(0x100, 0, kWrite));
  }
  EXPECT_EQ(c.transfers(), 20u);
  EXPECT_EQ(c.local(), 1u);
}

TEST(Coherence, GranularityIsA64ByteLine) {
  CoherenceTracker c;
  c.access(0x1000, 0, kWrite);
  EXPECT_TRUE(c.access(0x103F, 1, kRead));   // same line
  EXPECT_FALSE(c.access(0x1040, 1, kWrite));  // next line: cold
  EXPECT_FALSE(c.access(0x0FFF, 1, kWrite));  // previous line: cold
}

TEST(Coherence, PrivateLinesStayLocal) {
  // Per-core data on separate lines never transfers.
  CoherenceTracker c;
  for (int round = 0; round < 5; ++round)
    for (unsigned cpu = 0; cpu < 8; ++cpu) EXPECT_FALSE(c.access(0x10000 + cpu * 64, cpu, round % 2 ? kRead : kWrite));
  EXPECT_EQ(c.transfers(), 0u);
  EXPECT_EQ(c.local(), 40u);
}

TEST(Coherence, HighestCoreNumber) {
  CoherenceTracker c;
  const unsigned top = CoherenceTracker::kMaxCores - 1;
  c.access(0x200, top, kWrite);
  EXPECT_TRUE(c.access(0x200, 0, kRead));
  EXPECT_FALSE(c.access(0x200, top, kRead));  // still shares it
  EXPECT_TRUE(c.access(0x200, top, kWrite));  // core 0 must be invalidated
}

TEST(Coherence, ManyLinesKeepTheirHolders) {
  // Far more lines than the table starts with, some colliding in its low
  // bits: each keeps its own holder through every growth of the table.
  CoherenceTracker c;
  constexpr unsigned kLines = 20000;
  const auto addr = [](unsigned i) { return uintptr_t{0x4000'0000} + uintptr_t{i} * 64 * (i % 3 ? 1 : 4096); };
  for (unsigned i = 0; i < kLines; ++i) EXPECT_FALSE(c.access(addr(i), i % 7, kWrite));
  EXPECT_EQ(c.lines(), kLines);
  for (unsigned i = 0; i < kLines; ++i) {
    EXPECT_FALSE(c.access(addr(i), i % 7, kRead)) << i;     // its writer still holds it
    EXPECT_TRUE(c.access(addr(i), (i + 1) % 7, kRead)) << i;  // another core fetches it
  }
  EXPECT_EQ(c.lines(), kLines);
  EXPECT_EQ(c.transfers(), kLines);
}


// Where cores sit sets what a moving line costs (CpuConfig's topology): a
// write waits for the farthest copy, a load takes the nearest one.
TEST(LineTransfer, CostFollowsTheTopology) {
  CpuConfig cfg;
  cfg.count = 64;
  cfg.cluster_cores = 4;
  cfg.die_cores = 32;
  cfg.cacheline_transfer_ns = 30;
  cfg.cacheline_transfer_die_ns = 35;
  cfg.cacheline_transfer_remote_ns = 80;
  auto bit = [](unsigned c) { return CoreSet::of(c); };
  EXPECT_EQ(line_transfer_ns(cfg, 0, bit(3), kWrite), 30.0);   // same cluster
  EXPECT_EQ(line_transfer_ns(cfg, 0, bit(4), kWrite), 35.0);   // another cluster of the die
  EXPECT_EQ(line_transfer_ns(cfg, 0, bit(32), kWrite), 80.0);  // another die
  EXPECT_EQ(line_transfer_ns(cfg, 33, bit(63), kRead), 35.0);
  EXPECT_EQ(line_transfer_ns(cfg, 0, bit(1) | bit(40), kWrite), 80.0) << "a write invalidates every copy";
  EXPECT_EQ(line_transfer_ns(cfg, 0, bit(1) | bit(40), kRead), 30.0) << "a load takes the nearest copy";
}

TEST(LineTransfer, TheDefaultTopologyIsOneCluster) {
  const CpuConfig cfg;
  EXPECT_EQ(line_transfer_ns(cfg, 0, CoreSet::of(63), kWrite), cfg.cacheline_transfer_ns);
}

// A line a device wrote (CpuCluster::device_write_ns, the SMMU's coherent
// MSI) is held by id `count`, no core's: it comes back to a core as from a
// core of the first die in another cluster, or from the other die.
TEST(LineTransfer, ADevicesLineComesAsFromTheFirstDie) {
  CpuConfig cfg;
  cfg.count = 64;
  cfg.cluster_cores = 4;
  cfg.die_cores = 32;
  cfg.cacheline_transfer_ns = 30;
  cfg.cacheline_transfer_die_ns = 35;
  cfg.cacheline_transfer_remote_ns = 80;
  const CoreSet device = CoreSet::of(cfg.count);
  EXPECT_EQ(line_transfer_ns(cfg, 0, device, kRead), 35.0);
  EXPECT_EQ(line_transfer_ns(cfg, 31, device, kRead), 35.0);
  EXPECT_EQ(line_transfer_ns(cfg, 32, device, kRead), 80.0);
  EXPECT_EQ(line_transfer_ns(cfg, 63, device, kWrite), 80.0);
  cfg.cluster_cores = 64;  // one cluster: every transfer costs the same
  EXPECT_EQ(line_transfer_ns(cfg, 63, device, kRead), 30.0);
}

// Server core counts: cores beyond 64 hold lines of their own, and a line
// moving between dies far apart costs the remote transfer.
TEST(LineTransfer, BeyondSixtyFourCores) {
  CpuConfig cfg;
  cfg.count = 256;
  cfg.cluster_cores = 4;
  cfg.die_cores = 128;
  cfg.cacheline_transfer_ns = 30;
  cfg.cacheline_transfer_die_ns = 35;
  cfg.cacheline_transfer_remote_ns = 80;
  CoherenceTracker c;
  EXPECT_FALSE(c.access(0x3000, 200, kWrite));
  const CoreSet from = c.holders(0x3000, 5, kRead);
  EXPECT_TRUE(from == CoreSet::of(200));
  EXPECT_EQ(line_transfer_ns(cfg, 5, from, kRead), 80.0);
  EXPECT_EQ(line_transfer_ns(cfg, 201, CoreSet::of(200), kWrite), 30.0);
  EXPECT_EQ(line_transfer_ns(cfg, 130, CoreSet::of(255) | CoreSet::of(64), kRead), 35.0);
  unsigned n = 0, last = 0;
  (CoreSet::of(0) | CoreSet::of(63) | CoreSet::of(64) | CoreSet::of(255)).for_each([&](unsigned core) {
    EXPECT_GE(core, last);
    last = core;
    ++n;
  });
  EXPECT_EQ(n, 4u);
}

TEST(Coherence, HoldersNamesTheCoresAnAccessInvolves) {
  CoherenceTracker c;
  c.holders(0x1000, 1, kRead);
  c.holders(0x1000, 2, kRead);
  EXPECT_TRUE(c.holders(0x1000, 3, kWrite) == (CoreSet::of(1) | CoreSet::of(2)));
  EXPECT_TRUE(c.holders(0x1000, 0, kRead) == CoreSet::of(3));
  EXPECT_TRUE(c.holders(0x1000, 0, kRead).empty()) << "a copy it holds is local";
}

TEST(NamedLines, EachNameReportsItsTransfersAndItsBusiestLine) {
  CoherenceTracker c;
  c.name_lines(0x1000, 8, "llq");
  c.name_lines(0x2000, 128, "map");  // two lines
  c.holders(0x1000, 0, kWrite);
  c.holders(0x1000, 1, kWrite);  // a transfer
  c.holders(0x1000, 0, kWrite);  // another
  c.holders(0x2000, 0, kWrite);
  c.holders(0x2040, 1, kWrite);
  c.holders(0x2040, 2, kWrite);  // the map's one transfer, on its second line
  c.occupy(c.occupancy(0x2000), 0, 10);
  c.occupy(c.occupancy(0x2040), 0, 30);
  c.occupy(c.occupancy(0x2040), 40, 50);
  const auto use = c.named_use();
  ASSERT_EQ(use.size(), 2u);
  EXPECT_EQ(use[0].name, "llq");
  EXPECT_EQ(use[0].transfers, 2u);
  EXPECT_EQ(use[0].busy, 0u) << "no occupancy was recorded for it";
  EXPECT_EQ(use[1].name, "map");
  EXPECT_EQ(use[1].transfers, 1u);
  EXPECT_EQ(use[1].busy, 40u) << "the busiest of its lines, not their sum";
  EXPECT_EQ(c.occupancy(0x2040).busy_until, 50u);
}

TEST(NamedLines, NamingTwiceIsNothingNewAndASecondRangeIsNumbered) {
  CoherenceTracker c;
  c.name_lines(0x1000, 8, "llq");
  c.name_lines(0x1000, 8, "llq");  // a driver setting its policy again
  c.name_lines(0x9000, 8, "llq");  // a second SMMU's queue
  c.name_lines(0x1000, 4, "llq_lock");  // another name on the first line: false sharing
  c.name_lines(0x5000, 0, "empty");     // no bytes, no line
  const auto use = c.named_use();
  ASSERT_EQ(use.size(), 3u);
  EXPECT_EQ(use[0].name, "llq");
  EXPECT_EQ(use[1].name, "llq_2");
  EXPECT_EQ(use[2].name, "llq_lock") << "a longer name is not a numbered one";
}

TEST(NamedLines, BusyInsideTheWindowIsClipped) {
  CoherenceTracker c;
  c.set_window(100, 200);
  auto& o = c.occupancy(0x40);
  c.occupy(o, 50, 120);   // 20 inside
  c.occupy(o, 150, 160);  // 10 inside
  c.occupy(o, 190, 260);  // 10 inside
  c.occupy(o, 300, 310);  // none
  EXPECT_EQ(o.busy, 70u + 10u + 70u + 10u);
  EXPECT_EQ(o.busy_in_window, 40u);
  EXPECT_EQ(c.window_length(), 100u);
}

TEST(NamedLines, ALineBusyOnlyOutsideTheWindowStillGivesTheNamesBusyTime) {
  CoherenceTracker c;
  c.set_window(1000, 2000);
  c.name_lines(0x1000, 128, "map");
  c.occupy(c.occupancy(0x1040), 0, 300);  // before the window
  const auto use = c.named_use();
  ASSERT_EQ(use.size(), 1u);
  EXPECT_EQ(use[0].busy_in_window, 0u);
  EXPECT_EQ(use[0].busy, 300u);
}

TEST(NamedLines, TheBusiestUnnamedLineIsFoundAndTiesGoToTransfers) {
  CoherenceTracker c;
  c.name_lines(0x1000, 8, "named");
  c.occupy(c.occupancy(0x1000), 0, 500);  // busier, but named
  c.holders(0x2000, 0, kWrite);
  c.holders(0x2000, 1, kWrite);
  c.occupy(c.occupancy(0x2000), 0, 100);
  c.holders(0x3000, 0, kWrite);
  c.holders(0x3000, 1, kWrite);
  c.holders(0x3000, 0, kWrite);
  c.occupy(c.occupancy(0x3000), 0, 100);  // as busy, one transfer more
  const auto u = c.busiest_unnamed();
  EXPECT_EQ(u.busy, 100u);
  EXPECT_EQ(u.transfers, 2u);
}

}  // namespace
}  // namespace smmu_vp

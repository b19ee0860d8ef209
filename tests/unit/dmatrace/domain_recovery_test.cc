// Domain recovery for iommu:map/unmap events without a device (issue 32):
// devices' IOVA spaces overlap, so collisions of live ranges, the
// allocator's contiguous ranges and the tasks tell the domains apart.
#include <gtest/gtest.h>

#include "dmatrace/domain_recovery.h"

namespace smmu_vp::dmatrace {
namespace {

// Two devices allocating top-down from just below 4 GiB, interleaved, as a
// 6.1 kernel's trace shows them: each map overlaps the other device's live
// mapping, so they go to two domains, each continuing its own range.
TEST(DomainRecovery, OverlappingIovaSpacesBecomeTwoDomains) {
  DomainRecovery r;
  r.attached("0000:01:00.0");
  r.attached("0000:02:00.0");
  const uint64_t top = 0x1'0000'0000ull;
  EXPECT_EQ(r.map(top - 0x1000, 0x1000, 10), 0u);
  EXPECT_EQ(r.map(top - 0x1000, 0x1000, 20), 1u);  // collides: a second domain
  for (uint64_t i = 2; i < 10; ++i) {
    EXPECT_EQ(r.map(top - i * 0x1000, 0x1000, 10), 0u) << i;  // each continues a domain's last range
    EXPECT_EQ(r.map(top - i * 0x1000, 0x1000, 20), 1u) << i;
  }
  EXPECT_EQ(r.name(0), "0000:01:00.0");
  EXPECT_EQ(r.name(1), "0000:02:00.0");
  EXPECT_EQ(r.stats().new_domains, 2u);
  EXPECT_EQ(r.stats().by_adjacency, 16u);
  // Both domains hold the first unmap's IOVA: its task decides. Then only
  // the other one holds it.
  EXPECT_EQ(r.unmap(top - 0x3000, 0x1000, 20), 1u);
  EXPECT_EQ(r.unmap(top - 0x3000, 0x1000, 10), 0u);
  EXPECT_EQ(r.stats().unmaps_ambiguous, 1u);
  EXPECT_EQ(r.stats().unmaps_unique, 1u);
  // A task that mapped nothing: the domain used last (0), then the other,
  // the only one still holding it; then none.
  EXPECT_EQ(r.unmap(top - 0x1000, 0x1000, 99), 0u);
  EXPECT_EQ(r.unmap(top - 0x1000, 0x1000, 99), 1u);
  EXPECT_EQ(r.stats().unmaps_ambiguous, 2u);
  EXPECT_EQ(r.stats().unmaps_unique, 2u);
  EXPECT_EQ(r.unmap(top - 0x1000, 0x1000, 99), DomainRecovery::kNone);
  EXPECT_EQ(r.stats().unmaps_unmatched, 1u);
}

// dma-iommu unmaps an IOVA allocation whole, so of two domains holding the
// unmap's IOVA the one whose mapping it would cut is not the one, whatever
// the task says; the other keeps its mapping, so no later map goes over it.
TEST(DomainRecovery, AnUnmapGoesWhereItEndsWholeMappings) {
  DomainRecovery r;
  EXPECT_EQ(r.map(0x1000, 0x5000, 1), 0u);  // a 20 KiB coherent buffer
  EXPECT_EQ(r.map(0x1000, 0x1000, 2), 1u);  // collides: a second domain
  EXPECT_EQ(r.map(0x6000, 0x1000, 7), 0u);  // continues domain 0: task 7's domain
  EXPECT_EQ(r.unmap(0x1000, 0x1000, 7), 1u);  // would cut domain 0's buffer
  EXPECT_EQ(r.stats().unmaps_whole, 1u);
  EXPECT_EQ(r.stats().unmaps_ambiguous, 0u);
  // Domain 0's buffer is still live: a map over it goes elsewhere.
  EXPECT_EQ(r.map(0x3000, 0x1000, 1), 1u);
}

TEST(DomainRecovery, ATaskKeepsItsDomainAndDomainsWithoutADeviceAreNamed) {
  DomainRecovery r;
  EXPECT_EQ(r.map(0x10000, 0x1000, 1), 0u);
  EXPECT_EQ(r.map(0x10000, 0x1000, 2), 1u);
  EXPECT_EQ(r.name(0), "iommu-domain-1");
  EXPECT_EQ(r.name(1), "iommu-domain-2");
  // Far from both domains' last ranges, free in both: the task's domain.
  EXPECT_EQ(r.map(0x900000, 0x1000, 1), 0u);
  EXPECT_EQ(r.map(0xa00000, 0x1000, 2), 1u);
  EXPECT_EQ(r.stats().by_task, 2u);
  // A new task, free in both: the one used last, and ambiguous.
  EXPECT_EQ(r.map(0x5000000, 0x1000, 3), 1u);
  EXPECT_EQ(r.stats().ambiguous, 1u);
}

// An unmap of a range ends every mapping in it.
TEST(DomainRecovery, AnUnmapEndsEveryMappingInItsRange) {
  DomainRecovery r;
  for (uint64_t i = 0; i < 4; ++i) r.map(0x40000000 + i * 0x200000, 0x200000, 7);
  EXPECT_EQ(r.unmap(0x40000000, 0x800000, 7), 0u);
  EXPECT_EQ(r.unmap(0x40200000, 0x200000, 7), DomainRecovery::kNone);
  EXPECT_EQ(r.map(0x40000000, 0x800000, 8), 0u);  // free again: no new domain
  EXPECT_EQ(r.stats().new_domains, 1u);
  EXPECT_NE(domain_recovery_summary(r.stats()).find("5 iommu maps without a device assigned to 1 domains"),
            std::string::npos)
      << domain_recovery_summary(r.stats());
}

}  // namespace
}  // namespace smmu_vp::dmatrace

// DmaAllocator: first-fit allocation of the DRAM region behind hal_dma_alloc().
#include "hal_backend/dma_allocator.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace smmu_vp {
namespace {

constexpr uint64_t kBase = 0x90000000;
constexpr uint64_t kSize = 1 << 20;

TEST(DmaAllocator, FirstAllocationAtBase) {
  DmaAllocator a(kBase, kSize);
  EXPECT_EQ(a.alloc(100, 64), kBase);
  EXPECT_EQ(a.size_of(kBase), 100u);
  EXPECT_EQ(a.bytes_in_use(), 100u);
}

TEST(DmaAllocator, HonoursAlignment) {
  DmaAllocator a(kBase, kSize);
  ASSERT_TRUE(a.alloc(100, 1));
  const auto p = a.alloc(64, 4096);
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, kBase + 4096);  // the first 4 KiB boundary after the first block
  // The padding in front stays usable for smaller alignments.
  const auto q = a.alloc(16, 16);
  ASSERT_TRUE(q);
  EXPECT_EQ(*q, kBase + 112);  // 100 rounded up to 16
  for (uint64_t align = 1; align <= kSize; align <<= 1) {
    DmaAllocator b(kBase + 8, kSize);  // unaligned base
    const auto r = b.alloc(8, align);
    ASSERT_TRUE(r) << align;
    EXPECT_EQ(*r % align, 0u) << align;
    EXPECT_GE(*r, kBase + 8);
  }
}

TEST(DmaAllocator, RejectsBadRequests) {
  DmaAllocator a(kBase, kSize);
  EXPECT_FALSE(a.alloc(0, 64));    // empty
  EXPECT_FALSE(a.alloc(64, 0));    // no alignment
  EXPECT_FALSE(a.alloc(64, 48));   // not a power of two
  EXPECT_FALSE(a.alloc(64, 3));
  EXPECT_EQ(a.bytes_in_use(), 0u);
  EXPECT_EQ(a.free_blocks(), 1u);  // failed requests split nothing
}

TEST(DmaAllocator, ExhaustionReturnsNullopt) {
  DmaAllocator a(kBase, kSize);
  EXPECT_FALSE(a.alloc(kSize + 1, 1));
  ASSERT_EQ(a.alloc(kSize, 1), kBase);  // exactly all of it
  EXPECT_EQ(a.free_blocks(), 0u);
  EXPECT_FALSE(a.alloc(1, 1));
  ASSERT_TRUE(a.free(kBase));
  EXPECT_EQ(a.alloc(kSize / 2, 1), kBase);
  EXPECT_EQ(a.alloc(kSize / 2, 1), kBase + kSize / 2);
  EXPECT_FALSE(a.alloc(1, 1));
}

TEST(DmaAllocator, AlignmentPaddingCanMakeARequestFail) {
  DmaAllocator a(0x1010, 0x1000);  // [0x1010, 0x2010)
  EXPECT_FALSE(a.alloc(32, 0x1000));  // 0x2000 leaves only 16 bytes
  EXPECT_EQ(a.alloc(16, 0x1000), 0x2000u);
  EXPECT_FALSE(a.alloc(16, 1ull << 63));  // alignment beyond the region
}

TEST(DmaAllocator, EmptyRegionAllocatesNothing) {
  DmaAllocator a(kBase, 0);
  EXPECT_EQ(a.free_blocks(), 0u);
  EXPECT_FALSE(a.alloc(1, 1));
}

TEST(DmaAllocator, RegionAtTopOfAddressSpace) {
  DmaAllocator a(0xFFFFFFFFFFFFF000ull, 0x1000);
  EXPECT_FALSE(a.alloc(8, 1ull << 63));  // rounding up would wrap
  EXPECT_EQ(a.alloc(0x800, 0x800), 0xFFFFFFFFFFFFF000ull);
  EXPECT_EQ(a.alloc(0x800, 0x800), 0xFFFFFFFFFFFFF800ull);
  EXPECT_FALSE(a.alloc(1, 1));
}

TEST(DmaAllocator, BadFreeReturnsFalse) {
  DmaAllocator a(kBase, kSize);
  const auto p = a.alloc(256, 64);
  ASSERT_TRUE(p);
  EXPECT_FALSE(a.free(*p + 64));   // inside the block, not its start
  EXPECT_FALSE(a.free(kBase + kSize / 2));  // never allocated
  EXPECT_FALSE(a.free(0));
  EXPECT_EQ(a.bytes_in_use(), 256u);
  EXPECT_TRUE(a.free(*p));
  EXPECT_FALSE(a.free(*p));  // double free
  EXPECT_EQ(a.bytes_in_use(), 0u);
  EXPECT_EQ(a.size_of(*p), 0u);
  EXPECT_EQ(a.free_blocks(), 1u);
}

TEST(DmaAllocator, InUseAndPeak) {
  DmaAllocator a(kBase, kSize);
  const auto x = a.alloc(100, 1);
  const auto y = a.alloc(200, 1);
  ASSERT_TRUE(x && y);
  EXPECT_EQ(a.bytes_in_use(), 300u);
  EXPECT_EQ(a.peak_bytes(), 300u);
  a.free(*x);
  EXPECT_EQ(a.bytes_in_use(), 200u);
  EXPECT_EQ(a.peak_bytes(), 300u);  // the peak stays
  ASSERT_TRUE(a.alloc(50, 1));
  EXPECT_EQ(a.peak_bytes(), 300u);
  ASSERT_TRUE(a.alloc(500, 1));
  EXPECT_EQ(a.bytes_in_use(), 750u);
  EXPECT_EQ(a.peak_bytes(), 750u);
}

TEST(DmaAllocator, FreeMergesWithBothNeighbours) {
  DmaAllocator a(kBase, kSize);
  const auto p = a.alloc(64, 1), q = a.alloc(64, 1), r = a.alloc(64, 1);
  ASSERT_TRUE(p && q && r);
  EXPECT_EQ(a.free_blocks(), 1u);  // the tail
  a.free(*p);
  EXPECT_EQ(a.free_blocks(), 2u);
  a.free(*r);  // merges with the tail
  EXPECT_EQ(a.free_blocks(), 2u);
  a.free(*q);  // merges with both
  EXPECT_EQ(a.free_blocks(), 1u);
  EXPECT_EQ(a.alloc(kSize, 1), kBase);  // the whole region is one block again
}

TEST(DmaAllocator, FreeingAllInRandomOrderLeavesOneBlock) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 20; ++round) {
    DmaAllocator a(kBase, kSize);
    std::vector<uint64_t> live;
    while (auto p = a.alloc(1 + rng() % 8192, uint64_t{1} << (rng() % 13))) live.push_back(*p);
    ASSERT_GT(live.size(), 10u);
    std::shuffle(live.begin(), live.end(), rng);
    for (uint64_t p : live) ASSERT_TRUE(a.free(p));
    EXPECT_EQ(a.free_blocks(), 1u) << "round " << round;
    EXPECT_EQ(a.bytes_in_use(), 0u);
    EXPECT_EQ(a.alloc(kSize, 1), kBase);
  }
}

// Random allocations and frees against a model of the live set: every block
// is aligned, inside the region, disjoint from every other live block, and the
// accounting matches.
TEST(DmaAllocatorProperty, RandomAllocFreeNeverOverlaps) {
  std::mt19937_64 rng(2024);
  DmaAllocator a(kBase, kSize);
  std::map<uint64_t, uint64_t> live;  // start -> size
  uint64_t in_use = 0, peak = 0;
  for (int i = 0; i < 20000; ++i) {
    if (live.empty() || rng() % 100 < 55) {
      const uint64_t size = 1 + rng() % 20000;
      const uint64_t align = uint64_t{1} << (rng() % 16);
      const auto p = a.alloc(size, align);
      if (!p) continue;
      ASSERT_EQ(*p % align, 0u);
      ASSERT_GE(*p, kBase);
      ASSERT_LE(*p + size, kBase + kSize);
      auto next = live.lower_bound(*p);
      if (next != live.end()) {
        ASSERT_LE(*p + size, next->first) << "overlaps the next block";
      }
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second, *p) << "overlaps the previous block";
      }
      live.emplace(*p, size);
      in_use += size;
      peak = std::max(peak, in_use);
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      ASSERT_EQ(a.size_of(it->first), it->second);
      ASSERT_TRUE(a.free(it->first));
      in_use -= it->second;
      live.erase(it);
    }
    ASSERT_EQ(a.bytes_in_use(), in_use);
    ASSERT_EQ(a.peak_bytes(), peak);
  }
  for (const auto& [p, size] : live) ASSERT_TRUE(a.free(p));
  EXPECT_EQ(a.free_blocks(), 1u);
}

}  // namespace
}  // namespace smmu_vp

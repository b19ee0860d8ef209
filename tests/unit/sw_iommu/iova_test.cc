// sw/iommu IOVA allocator on the host HAL: tree and cached-node invariants
// under random traffic for both cached-node policies with and without rcache,
// the seed-001 search length, the 32-bit rules, and the rcache magazines and
// depot.
#include "iommu/iova.h"

extern "C" {
#include "iommu/iova_internal.h"
#include "lib/spinlock.h"
}

#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "host_hal.h"

namespace {

namespace hh = smmu_vp::host_hal;

constexpr uint64_t kGranule = 4096;
constexpr uint64_t kDma32Pfn = 1ull << 20;  // 4 GiB in 4 KiB pages
constexpr uint64_t kLimit32 = kDma32Pfn - 1;
constexpr uint64_t kLimit48 = (1ull << 36) - 1;  // 48-bit device

const iova* IovaOf(const sw_rb_node* n) { return sw_rb_entry(n, const iova, node); }

uint64_t RoundUpPow2(uint64_t n) {
  uint64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// Tree nodes in order, the anchor last.
std::vector<const iova*> Nodes(const iova_domain& d) {
  std::vector<const iova*> out;
  for (const sw_rb_node* n = sw_rb_first(&d.root); n != nullptr; n = sw_rb_next(n)) out.push_back(IovaOf(n));
  return out;
}

// Order, anchor, start_pfn, and where the cached nodes may point. Returns an
// empty string when all hold.
std::string CheckTree(const iova_domain& d) {
  const std::vector<const iova*> nodes = Nodes(d);
  if (nodes.empty() || nodes.back() != &d.anchor) return "anchor is not the last node";
  if (d.anchor.pfn_lo != IOVA_ANCHOR_PFN || d.anchor.pfn_hi != IOVA_ANCHOR_PFN) return "anchor moved";
  bool cached_found = false, cached32_found = false;
  for (size_t i = 0; i < nodes.size(); i++) {
    const iova* v = nodes[i];
    if (v->pfn_lo > v->pfn_hi) return "node with pfn_lo > pfn_hi at " + std::to_string(v->pfn_lo);
    if (i > 0 && nodes[i - 1]->pfn_hi >= v->pfn_lo)
      return "overlap or disorder at " + std::to_string(v->pfn_lo);
    if (v != &d.anchor && v->pfn_lo < d.start_pfn) return "node below start_pfn at " + std::to_string(v->pfn_lo);
    cached_found |= &v->node == d.cached_node;
    cached32_found |= &v->node == d.cached32_node;
  }
  if (d.nodes != nodes.size())
    return "node count " + std::to_string(d.nodes) + " but " + std::to_string(nodes.size()) + " in the tree";
  if (!cached_found) return "cached_node is not in the tree";
  if (!cached32_found) return "cached32_node is not in the tree";
  if (d.policy.cache == IOVA_CACHED32_ONLY && d.cached_node != &d.anchor.node)
    return "CACHED32_ONLY moved cached_node";
  // Only nodes reaching above 4 GiB become the 64-bit cached node, and moving
  // it to a successor keeps that true.
  if (d.policy.cache == IOVA_CACHED32_AND_64 && IovaOf(d.cached_node)->pfn_hi < d.dma_32bit_pfn)
    return "cached_node lies below 4 GiB";
  return "";
}

class IovaTest : public ::testing::Test {
 protected:
  void SetUp() override { hh::reset(); }
  void TearDown() override {
    if (inited_) put_iova_domain(&d_);
  }
  void Init(iova_cache_policy cache, bool rcache, uint64_t start_pfn = 1, bool queued_locks = false) {
    const iova_policy policy{cache, rcache, queued_locks};
    ASSERT_EQ(init_iova_domain(&d_, kGranule, start_pfn, &policy), 0);
    inited_ = true;
  }
  uint64_t Visits() const { return hh::cost_count("rbtree_visit"); }
  const iova* Cached32() const { return IovaOf(d_.cached32_node); }
  const iova* Cached() const { return IovaOf(d_.cached_node); }

  iova_domain d_{};
  bool inited_ = false;
};

TEST_F(IovaTest, InitAndDomainGeometry) {
  Init(IOVA_CACHED32_AND_64, true, 0);
  EXPECT_EQ(d_.start_pfn, 1u);  // pfn 0 means failure in the pfn-returning calls
  EXPECT_EQ(d_.shift, 12u);
  EXPECT_EQ(d_.dma_32bit_pfn, kDma32Pfn);
  EXPECT_EQ(d_.max32_alloc_size, kDma32Pfn);
  EXPECT_EQ(d_.cached_node, &d_.anchor.node);
  EXPECT_EQ(d_.cached32_node, &d_.anchor.node);
  EXPECT_EQ(CheckTree(d_), "");

  iova_domain bad{};
  const iova_policy p{IOVA_CACHED32_AND_64, false, false};
  EXPECT_EQ(init_iova_domain(&bad, 3000, 1, &p), -1);
  EXPECT_EQ(init_iova_domain(&bad, 256, 1, &p), -1);
  ASSERT_EQ(init_iova_domain(&bad, 65536, 1, &p), 0);
  EXPECT_EQ(bad.dma_32bit_pfn, 1u << 16);
  put_iova_domain(&bad);
}

TEST_F(IovaTest, TopDownAndSizeAligned) {
  Init(IOVA_CACHED32_AND_64, false);
  const iova* a = alloc_iova(&d_, 1, kLimit48, false);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->pfn_hi, kLimit48);
  EXPECT_EQ(a->pfn_lo, kLimit48);
  // 4 pages aligned to 4: the top 4-aligned slot below a, leaving a hole.
  const iova* b = alloc_iova(&d_, 4, kLimit48, true);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->pfn_lo, (kLimit48 - 4) & ~3ull);
  EXPECT_EQ(iova_size(b), 4u);
  EXPECT_EQ(find_iova(&d_, kLimit48 - 1), nullptr);  // alignment hole
  // Unaligned 3 pages sit right below b.
  const iova* c = alloc_iova(&d_, 3, kLimit48, false);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->pfn_hi + 1, b->pfn_lo);
  EXPECT_EQ(Cached(), c);
  EXPECT_EQ(find_iova(&d_, c->pfn_lo + 1), c);
  // 3 pages aligned to the next power of two, 4.
  const iova* e = alloc_iova(&d_, 3, kLimit48, true);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->pfn_lo % 4, 0u);
  EXPECT_EQ(e->pfn_lo, (c->pfn_lo - 3) & ~3ull);
  EXPECT_EQ(iova_size(e), 3u);
  EXPECT_EQ(find_iova(&d_, IOVA_ANCHOR_PFN), nullptr);
  EXPECT_EQ(alloc_iova(&d_, 0, kLimit48, false), nullptr);
  EXPECT_EQ(CheckTree(d_), "");
  EXPECT_EQ(d_.stats.nodes_visited, Visits());
}

TEST_F(IovaTest, Limit32Honoured) {
  Init(IOVA_CACHED32_AND_64, false);
  for (int i = 0; i < 8; i++) ASSERT_NE(alloc_iova(&d_, 4, kLimit48, true), nullptr);
  const iova* low = alloc_iova(&d_, 2, kLimit32, true);
  ASSERT_NE(low, nullptr);
  EXPECT_EQ(low->pfn_hi, kLimit32);
  EXPECT_EQ(Cached32(), low);
  EXPECT_GE(Cached()->pfn_lo, kDma32Pfn);
  // A 28-bit device.
  const uint64_t limit28 = (1ull << 16) - 1;
  const iova* tiny = alloc_iova(&d_, 5, limit28, false);
  ASSERT_NE(tiny, nullptr);
  EXPECT_EQ(tiny->pfn_hi, limit28);

  // The DMA layer's 32-bit-first rule: a 64-bit device still gets low IOVAs.
  const uint64_t pfn = iova_alloc_dma(&d_, 1, kLimit48);
  ASSERT_NE(pfn, 0u);
  EXPECT_LT(pfn, kDma32Pfn);
  // A 32-bit device is never given more.
  const uint64_t pfn32 = iova_alloc_dma(&d_, 16, kLimit32);
  ASSERT_NE(pfn32, 0u);
  EXPECT_LE(pfn32 + 15, kLimit32);
  EXPECT_EQ(CheckTree(d_), "");
}

TEST_F(IovaTest, DmaAllocFallsBackAbove4GiB) {
  Init(IOVA_CACHED32_AND_64, true, kDma32Pfn - 16);
  std::vector<uint64_t> pfns;
  for (int i = 0; i < 16; i++) {
    const uint64_t pfn = iova_alloc_dma(&d_, 1, kLimit48);
    ASSERT_NE(pfn, 0u);
    EXPECT_LT(pfn, kDma32Pfn);
    pfns.push_back(pfn);
  }
  const uint64_t high = iova_alloc_dma(&d_, 1, kLimit48);
  EXPECT_EQ(high, kLimit48);
  EXPECT_EQ(iova_alloc_dma(&d_, 1, kLimit32), 0u);
  free_iova_fast(&d_, pfns[3], 1);
  EXPECT_EQ(iova_alloc_dma(&d_, 1, kLimit32), pfns[3]);  // from the rcache
}

TEST_F(IovaTest, Max32AllocSizeFailsFast) {
  Init(IOVA_CACHED32_AND_64, false, kDma32Pfn - 64);
  std::vector<const iova*> live;
  for (int i = 0; i < 64; i++) {
    const iova* v = alloc_iova(&d_, 1, kLimit32, false);
    ASSERT_NE(v, nullptr);
    live.push_back(v);
  }
  EXPECT_EQ(alloc_iova(&d_, 1, kLimit32, false), nullptr);  // a real search
  EXPECT_EQ(d_.stats.failures, 1u);
  EXPECT_EQ(d_.stats.fast_fails, 0u);
  EXPECT_EQ(d_.max32_alloc_size, 1u);

  const uint64_t before = Visits();
  EXPECT_EQ(alloc_iova(&d_, 1, kLimit32, false), nullptr);
  EXPECT_EQ(alloc_iova(&d_, 8, kLimit32, true), nullptr);
  EXPECT_EQ(Visits(), before);  // refused without touching the tree
  EXPECT_EQ(d_.stats.fast_fails, 2u);
  EXPECT_EQ(d_.stats.failures, 3u);

  // Only 32-bit requests are refused.
  const iova* high = alloc_iova(&d_, 1, kLimit48, false);
  ASSERT_NE(high, nullptr);
  EXPECT_EQ(high->pfn_lo, kLimit48);

  // A free below 4 GiB forgets the failing size, and the hole is found.
  const uint64_t hole = live[20]->pfn_lo;
  ASSERT_TRUE(free_iova(&d_, hole));
  EXPECT_EQ(d_.max32_alloc_size, kDma32Pfn);
  const iova* again = alloc_iova(&d_, 1, kLimit32, false);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->pfn_lo, hole);
  EXPECT_EQ(CheckTree(d_), "");
}

// The search from cached32 fails, yet an alignment hole above it fits: Linux
// retries between the limit and the cached node.
TEST_F(IovaTest, RetryFromLimitFindsSpaceAboveCachedNode) {
  Init(IOVA_CACHED32_AND_64, false, kDma32Pfn - 4);
  const iova* top = alloc_iova(&d_, 1, kLimit32, true);
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->pfn_lo, kDma32Pfn - 1);
  const iova* pair = alloc_iova(&d_, 2, kLimit32, true);  // leaves kDma32Pfn - 2 free
  ASSERT_NE(pair, nullptr);
  EXPECT_EQ(pair->pfn_lo, kDma32Pfn - 4);
  EXPECT_EQ(Cached32(), pair);
  const iova* filler = alloc_iova(&d_, 1, kLimit32, false);
  ASSERT_NE(filler, nullptr);
  EXPECT_EQ(filler->pfn_lo, kDma32Pfn - 2);
  EXPECT_EQ(d_.stats.retries, 1u);
  EXPECT_EQ(alloc_iova(&d_, 1, kLimit32, false), nullptr);
  EXPECT_EQ(CheckTree(d_), "");
}

TEST_F(IovaTest, ReserveKeepsRangeOut) {
  Init(IOVA_CACHED32_AND_64, false, kDma32Pfn - 32);
  const iova* r = reserve_iova(&d_, kDma32Pfn - 20, kDma32Pfn - 5);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(reserve_iova(&d_, kDma32Pfn - 6, kDma32Pfn - 3), nullptr);  // overlaps
  EXPECT_EQ(reserve_iova(&d_, 10, 5), nullptr);
  int n = 0;
  while (const iova* v = alloc_iova(&d_, 1, kLimit32, false)) {
    EXPECT_TRUE(v->pfn_hi < r->pfn_lo || v->pfn_lo > r->pfn_hi);
    n++;
  }
  EXPECT_EQ(n, 32 - 16);
  EXPECT_EQ(CheckTree(d_), "");
}

TEST_F(IovaTest, FreeMovesCachedNodesUp) {
  Init(IOVA_CACHED32_AND_64, false);
  std::vector<const iova*> hi, lo;
  for (int i = 0; i < 10; i++) hi.push_back(alloc_iova(&d_, 1, kLimit48, false));
  for (int i = 0; i < 10; i++) lo.push_back(alloc_iova(&d_, 1, kLimit32, false));
  EXPECT_EQ(Cached(), hi[9]);
  EXPECT_EQ(Cached32(), lo[9]);
  // Freeing above the cached node: it moves to the freed node's successor.
  const uint64_t h5 = hi[5]->pfn_lo;
  free_iova_node(&d_, const_cast<iova*>(hi[5]));
  EXPECT_EQ(Cached(), hi[4]);
  EXPECT_GT(Cached()->pfn_lo, h5);
  EXPECT_EQ(Cached32(), lo[9]);  // a 64-bit free leaves the 32-bit node alone
  // Freeing below it changes nothing.
  free_iova_node(&d_, const_cast<iova*>(hi[8]));
  EXPECT_EQ(Cached(), hi[4]);
  // The next 64-bit allocation takes the hole just below the cached node.
  const iova* v = alloc_iova(&d_, 1, kLimit48, false);
  EXPECT_EQ(v->pfn_lo, h5);
  // Freeing the 32-bit cached node itself.
  const uint64_t l9 = lo[9]->pfn_lo;
  free_iova_node(&d_, const_cast<iova*>(lo[9]));
  EXPECT_EQ(Cached32(), lo[8]);
  EXPECT_GT(Cached32()->pfn_lo, l9);
  EXPECT_EQ(CheckTree(d_), "");
}

TEST_F(IovaTest, SlabChargesKmemAndDestroyFreesAll) {
  Init(IOVA_CACHED32_AND_64, true);
  const uint64_t kmem0 = hh::cost_count("kmem_alloc");
  const iova* v = alloc_iova(&d_, 1, kLimit48, false);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(hh::cost_count("kmem_alloc") - kmem0, 1u);
  EXPECT_TRUE(free_iova(&d_, v->pfn_lo));
  EXPECT_EQ(hh::cost_count("kmem_alloc") - kmem0, 2u);
  EXPECT_FALSE(free_iova(&d_, v->pfn_lo));
  EXPECT_EQ(d_.stats.slab_pages, 1u);
  const uint64_t per_page = (4096 - sizeof(void*)) / sizeof(iova);
  for (uint64_t i = 0; i < per_page + 1; i++) ASSERT_NE(alloc_iova(&d_, 1, kLimit48, false), nullptr);
  EXPECT_EQ(d_.stats.slab_pages, 2u);
  // Magazines too.
  for (int i = 0; i < 300; i++) free_iova_fast(&d_, alloc_iova_fast(&d_, 1, kLimit48, false), 1);
  EXPECT_GT(hh::dma_bytes_in_use(), 0u);
  put_iova_domain(&d_);
  inited_ = false;
  EXPECT_EQ(hh::dma_bytes_in_use(), 0u);
}

// ---- Seed 001: many live 64-bit IOVAs.

struct SeedResult {
  uint64_t alloc_visits, free_visits;
  uint64_t pair_visits;
  uint64_t pair_cost_count;  // host HAL's count of "rbtree_visit" charges
  uint64_t build_visits;
  std::vector<hh::Walk> pair_walks;  // hal_cost_walk calls of the pair: the alloc's, then the free's
};

class IovaSeed001Test : public IovaTest {
 protected:
  static constexpr int kLive = 5000;

  // kLive one-page 64-bit IOVAs top-down, then one more allocation and its
  // free, as a DMA map/unmap pair would do.
  SeedResult Run(iova_cache_policy cache, uint64_t limit) {
    Init(cache, false);
    for (int i = 0; i < kLive; i++) {
      const iova* v = alloc_iova(&d_, 1, limit, true);
      EXPECT_NE(v, nullptr);
      if (v == nullptr) return {};
      EXPECT_EQ(v->pfn_lo, limit - static_cast<uint64_t>(i));
    }
    SeedResult r{};
    r.build_visits = d_.stats.nodes_visited;
    const uint64_t v0 = d_.stats.nodes_visited, c0 = Visits();
    const size_t w0 = hh::walks().size();
    const iova* v = alloc_iova(&d_, 1, limit, true);
    EXPECT_NE(v, nullptr);
    if (v == nullptr) return r;
    EXPECT_EQ(v->pfn_lo, limit - kLive);
    r.alloc_visits = d_.stats.nodes_visited - v0;
    EXPECT_TRUE(free_iova(&d_, v->pfn_lo));
    r.pair_visits = d_.stats.nodes_visited - v0;
    r.free_visits = r.pair_visits - r.alloc_visits;
    r.pair_cost_count = Visits() - c0;
    r.pair_walks.assign(hh::walks().begin() + static_cast<std::ptrdiff_t>(w0), hh::walks().end());
    EXPECT_EQ(CheckTree(d_), "");
    return r;
  }
};

TEST_F(IovaSeed001Test, Cached32OnlyWalksEveryLive64BitIova) {
  const SeedResult r = Run(IOVA_CACHED32_ONLY, kLimit48);
  std::cout << "seed001 CACHED32_ONLY: " << kLive << " live 64-bit IOVAs, alloc+free pair visited "
            << r.pair_visits << " nodes (alloc " << r.alloc_visits << ", free " << r.free_visits
            << "; building them: " << r.build_visits << ")\n";
  RecordProperty("pair_visits", std::to_string(r.pair_visits));
  EXPECT_EQ(r.pair_visits, r.pair_cost_count);
  EXPECT_GT(r.pair_visits, static_cast<uint64_t>(kLive / 2));
}

TEST_F(IovaSeed001Test, Cached64NodeMakesItConstant) {
  const SeedResult r = Run(IOVA_CACHED32_AND_64, kLimit48);
  std::cout << "seed001 CACHED32_AND_64: " << kLive << " live 64-bit IOVAs, alloc+free pair visited "
            << r.pair_visits << " nodes (alloc " << r.alloc_visits << ", free " << r.free_visits
            << "; building them: " << r.build_visits << ")\n";
  RecordProperty("pair_visits", std::to_string(r.pair_visits));
  EXPECT_EQ(r.pair_visits, r.pair_cost_count);
  // What remains is logarithmic: the lowest node's predecessor climb, the
  // lookup on free, each at most a red-black height (2 log2(N) ~ 25 here).
  EXPECT_LT(r.pair_visits, 64u);
}

// What each walk reports as its working set (hal_cost_walk): the search
// before 2017 steps on every node twice or so, so its working set is the
// whole tree (the live IOVAs, the new one and the anchor), a line each; the
// free's lookup from the root is one node per step.
TEST_F(IovaSeed001Test, Cached32OnlyWalkReportsTheWholeTreeAsItsWorkingSet) {
  const SeedResult r = Run(IOVA_CACHED32_ONLY, kLimit48);
  ASSERT_EQ(r.pair_walks.size(), 2u);
  const uint64_t tree = kLive + 2;
  EXPECT_GT(r.alloc_visits, tree);
  EXPECT_EQ(r.pair_walks[0].objects, tree);
  EXPECT_EQ(r.pair_walks[0].footprint_bytes, tree * 64);
  EXPECT_EQ(r.pair_walks[1].objects, r.free_visits);
  EXPECT_EQ(r.pair_walks[1].footprint_bytes, r.free_visits * 64);
}

TEST_F(IovaSeed001Test, Cached64NodeWalksReportOnlyTheNodesTheyStepOn) {
  const SeedResult r = Run(IOVA_CACHED32_AND_64, kLimit48);
  ASSERT_EQ(r.pair_walks.size(), 2u);
  EXPECT_EQ(r.pair_walks[0].objects, r.alloc_visits);
  EXPECT_EQ(r.pair_walks[1].objects, r.free_visits);
  EXPECT_LT(r.pair_walks[0].objects + r.pair_walks[1].objects, 64u);
}

// Below 4 GiB both policies have a cached node: the old allocator was only
// slow for 64-bit searches.
TEST_F(IovaSeed001Test, Live32BitIovasAreCheapForBothPolicies) {
  const SeedResult r = Run(IOVA_CACHED32_ONLY, kLimit32);
  std::cout << "seed001 CACHED32_ONLY, 32-bit IOVAs: alloc+free pair visited " << r.pair_visits << " nodes\n";
  EXPECT_LT(r.pair_visits, 64u);
}

// ---- rcache.

TEST_F(IovaTest, RcacheHitAvoidsTree) {
  Init(IOVA_CACHED32_AND_64, true);
  const uint64_t pfn = alloc_iova_fast(&d_, 3, kLimit48, true);
  ASSERT_NE(pfn, 0u);
  EXPECT_EQ(pfn % 4, 0u);
  const iova* node = find_iova(&d_, pfn);
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(iova_size(node), 4u);  // rounded up: rcache entries are interchangeable
  free_iova_fast(&d_, pfn, 3);
  EXPECT_EQ(d_.stats.rcache_inserts, 1u);
  EXPECT_EQ(d_.stats.frees, 0u);  // still in the tree, held by this CPU's magazine
  EXPECT_EQ(iova_rcache_pfns(&d_), 1u);

  const uint64_t visits = Visits(), kmem = hh::cost_count("kmem_alloc");
  EXPECT_EQ(alloc_iova_fast(&d_, 4, kLimit48, true), pfn);
  EXPECT_EQ(Visits(), visits);
  EXPECT_EQ(hh::cost_count("kmem_alloc"), kmem);
  EXPECT_EQ(d_.stats.rcache_hits, 1u);

  // Sizes above 32 pages bypass the rcache.
  const uint64_t big = alloc_iova_fast(&d_, 40, kLimit48, true);
  ASSERT_NE(big, 0u);
  free_iova_fast(&d_, big, 40);
  EXPECT_EQ(d_.stats.rcache_inserts, 1u);
  EXPECT_EQ(find_iova(&d_, big), nullptr);
}

// policy.queued_locks: every lock of the allocator (tree, slab, depots,
// per-CPU caches) is a queued one, and the allocator works the same.
TEST_F(IovaTest, QueuedLocksEverywhereAndTheSameAllocations) {
  Init(IOVA_CACHED32_AND_64, true, 1, true);
  EXPECT_TRUE(sw_spin_is_queued(&d_.lock));
  EXPECT_TRUE(sw_spin_is_queued(&d_.slab_lock));
  for (unsigned order = 0; order < IOVA_RCACHE_ORDERS; order++) {
    ASSERT_NE(d_.rcaches[order], nullptr);
    EXPECT_TRUE(sw_spin_is_queued(&d_.rcaches[order]->lock)) << order;
    for (unsigned cpu = 0; cpu < iova_max_cpus(); cpu++)
      EXPECT_TRUE(sw_spin_is_queued(&iova_cpu_block(&d_, cpu)->rc[order].lock)) << order << " " << cpu;
  }
  const uint64_t pfn = alloc_iova_fast(&d_, 1, kLimit48, true);
  ASSERT_NE(pfn, 0u);
  free_iova_fast(&d_, pfn, 1);
  EXPECT_EQ(alloc_iova_fast(&d_, 1, kLimit48, true), pfn);
  EXPECT_EQ(d_.stats.rcache_hits, 1u);
  EXPECT_EQ(CheckTree(d_), "");
  // Ticket locks (the default) otherwise.
  iova_domain ticket{};
  const iova_policy p{IOVA_CACHED32_AND_64, true, false};
  ASSERT_EQ(init_iova_domain(&ticket, 4096, 1, &p), 0);
  EXPECT_FALSE(sw_spin_is_queued(&ticket.lock));
  EXPECT_FALSE(sw_spin_is_queued(&ticket.rcaches[0]->lock));
  put_iova_domain(&ticket);
}

TEST_F(IovaTest, RcacheRespectsLimit) {
  Init(IOVA_CACHED32_AND_64, true);
  const uint64_t high = alloc_iova_fast(&d_, 1, kLimit48, true);
  EXPECT_EQ(d_.stats.rcache_misses, 1u);  // nothing cached yet
  free_iova_fast(&d_, high, 1);
  const uint64_t low = alloc_iova_fast(&d_, 1, kLimit32, true);
  ASSERT_NE(low, 0u);
  EXPECT_LE(low, kLimit32);
  EXPECT_EQ(d_.stats.rcache_misses, 2u);  // the cached pfn is above the limit
  EXPECT_EQ(d_.stats.rcache_hits, 0u);
  EXPECT_EQ(alloc_iova_fast(&d_, 1, kLimit48, true), high);
  EXPECT_EQ(d_.stats.rcache_hits, 1u);
}

TEST_F(IovaTest, MagazinesMoveThroughDepot) {
  hh::set_cpu(0, 2);
  Init(IOVA_CACHED32_AND_64, true);
  // Two full magazines on CPU 0, then one more free pushes a full one to the
  // depot.
  const int n = 2 * IOVA_MAG_SIZE + 1;
  std::set<uint64_t> freed;
  std::vector<uint64_t> pfns;
  for (int i = 0; i < n; i++) pfns.push_back(alloc_iova_fast(&d_, 1, kLimit48, true));
  for (uint64_t pfn : pfns) {
    free_iova_fast(&d_, pfn, 1);
    freed.insert(pfn);
  }
  EXPECT_EQ(d_.stats.depot_puts, 1u);
  EXPECT_EQ(d_.rcaches[0]->depot_size, 1u);
  EXPECT_EQ(iova_rcache_pfns(&d_), static_cast<uint64_t>(n));

  // CPU 1 has nothing of its own: it takes the depot's magazine, tree untouched.
  hh::set_cpu(1, 2);
  const uint64_t visits = Visits();
  for (unsigned i = 0; i < IOVA_MAG_SIZE; i++) {
    const uint64_t pfn = alloc_iova_fast(&d_, 1, kLimit48, true);
    EXPECT_EQ(freed.count(pfn), 1u);
  }
  EXPECT_EQ(Visits(), visits);
  EXPECT_EQ(d_.stats.depot_gets, 1u);
  EXPECT_EQ(d_.rcaches[0]->depot_size, 0u);
  EXPECT_EQ(d_.stats.rcache_hits, IOVA_MAG_SIZE);
  // Magazine and depot empty: the next one comes from the tree.
  const uint64_t misses = d_.stats.rcache_misses;
  const uint64_t fresh = alloc_iova_fast(&d_, 1, kLimit48, true);
  EXPECT_EQ(freed.count(fresh), 0u);
  EXPECT_GT(Visits(), visits);
  EXPECT_EQ(d_.stats.rcache_misses, misses + 1);

  // CPU 0 still has its own two magazines.
  hh::set_cpu(0, 2);
  EXPECT_EQ(freed.count(alloc_iova_fast(&d_, 1, kLimit48, true)), 1u);
  EXPECT_EQ(CheckTree(d_), "");
}

TEST_F(IovaTest, FullDepotReturnsMagazineToTree) {
  Init(IOVA_CACHED32_AND_64, true);
  // Loaded and previous full, the depot full, then one magazine more.
  const int n = (2 + IOVA_DEPOT_MAX_MAGS) * IOVA_MAG_SIZE + 1;
  std::vector<uint64_t> pfns;
  for (int i = 0; i < n; i++) {
    pfns.push_back(alloc_iova_fast(&d_, 1, kLimit48, true));
    ASSERT_NE(pfns.back(), 0u);
  }
  for (uint64_t pfn : pfns) free_iova_fast(&d_, pfn, 1);
  EXPECT_EQ(d_.rcaches[0]->depot_size, IOVA_DEPOT_MAX_MAGS);
  EXPECT_EQ(d_.stats.depot_puts, IOVA_DEPOT_MAX_MAGS);
  EXPECT_EQ(d_.stats.depot_overflows, 1u);
  EXPECT_EQ(d_.stats.frees, IOVA_MAG_SIZE);
  EXPECT_EQ(Nodes(d_).size() - 1, iova_rcache_pfns(&d_));
  EXPECT_EQ(CheckTree(d_), "");
  iova_flush_rcaches(&d_);
  EXPECT_EQ(iova_rcache_pfns(&d_), 0u);
  EXPECT_EQ(Nodes(d_).size(), 1u);
}

TEST_F(IovaTest, FailureFlushesOtherCpusMagazines) {
  hh::set_cpu(1, 2);
  Init(IOVA_CACHED32_AND_64, true, kDma32Pfn - 8);
  std::vector<uint64_t> pfns;
  for (int i = 0; i < 8; i++) pfns.push_back(alloc_iova_fast(&d_, 1, kLimit32, true));
  EXPECT_EQ(alloc_iova_fast(&d_, 1, kLimit32, false), 0u);
  for (uint64_t pfn : pfns) free_iova_fast(&d_, pfn, 1);  // all held by CPU 1

  hh::set_cpu(0, 2);
  EXPECT_EQ(alloc_iova_fast(&d_, 2, kLimit32, false), 0u);
  EXPECT_EQ(d_.stats.rcache_flushes, 0u);
  const uint64_t pfn = alloc_iova_fast(&d_, 2, kLimit32, true);
  EXPECT_EQ(pfn, kDma32Pfn - 2);
  EXPECT_EQ(d_.stats.rcache_flushes, 1u);
  EXPECT_EQ(iova_rcache_pfns(&d_), 0u);
  EXPECT_EQ(Nodes(d_).size(), 2u);
  EXPECT_EQ(CheckTree(d_), "");
}

// ---- Random traffic.

struct Live {
  uint64_t lo, hi;  // the node's range
  uint64_t size;    // as requested
  bool fast;        // alloc_iova_fast: freed with free_iova_fast
};

class IovaRandomTest : public IovaTest, public ::testing::WithParamInterface<std::tuple<iova_cache_policy, bool>> {};

TEST_P(IovaRandomTest, InvariantsHoldUnderRandomTraffic) {
  const auto [cache, rcache] = GetParam();
  constexpr unsigned kCpus = 4;
  // Small spaces (4096 pages below 4 GiB, 8192 above) so that they fill up
  // and failures, retries and max32_alloc_size all happen.
  constexpr uint64_t kStart = kDma32Pfn - 4096;
  constexpr uint64_t kHigh = kDma32Pfn + 8192 - 1;
  hh::set_cpu(0, kCpus);
  Init(cache, rcache, kStart);

  std::mt19937_64 rng(0x10a5eed + static_cast<unsigned>(cache) * 2 + (rcache ? 1 : 0));
  std::map<uint64_t, Live> live;  // by pfn_lo
  uint64_t failures = 0;

  auto check_all = [&](int step) {
    const std::string err = CheckTree(d_);
    ASSERT_EQ(err, "") << "step " << step;
    ASSERT_EQ(Nodes(d_).size() - 1, live.size() + iova_rcache_pfns(&d_)) << "step " << step;
    for (const auto& [lo, l] : live) {
      const iova* v = find_iova(&d_, lo);
      ASSERT_NE(v, nullptr) << "step " << step;
      ASSERT_EQ(v->pfn_lo, l.lo);
      ASSERT_EQ(v->pfn_hi, l.hi);
    }
  };

  constexpr int kOps = 8000;
  for (int step = 0; step < kOps; step++) {
    hh::set_cpu(static_cast<unsigned>(rng() % kCpus), kCpus);
    const bool do_alloc = live.empty() || rng() % 100 < 55;
    if (do_alloc) {
      const uint64_t r = rng() % 100;
      const uint64_t size = r < 70 ? 1 + rng() % 8 : r < 95 ? 9 + rng() % 32 : 41 + rng() % 60;
      const uint64_t limit = rng() % 100 < 40 ? kLimit32 : kHigh;
      const int api = static_cast<int>(rng() % 4);  // 0,1: fast; 2: aligned; 3: unaligned
      const uint64_t allocs_before = d_.stats.allocs;
      Live l{};
      l.size = size;
      uint64_t align = 1;
      if (api <= 1) {
        const uint64_t pfn = api == 0 && limit == kHigh ? iova_alloc_dma(&d_, size, kHigh)
                                                        : alloc_iova_fast(&d_, size, limit, rng() % 2 == 0);
        if (pfn == 0) {
          failures++;
          continue;
        }
        const uint64_t node_size = size < IOVA_RCACHE_MAX_PAGES ? RoundUpPow2(size) : size;
        l = {pfn, pfn + node_size - 1, size, true};
        align = RoundUpPow2(node_size);
      } else {
        const bool aligned = api == 2;
        const iova* v = alloc_iova(&d_, size, limit, aligned);
        if (v == nullptr) {
          failures++;
          continue;
        }
        ASSERT_EQ(iova_size(v), size);
        l = {v->pfn_lo, v->pfn_hi, size, false};
        if (aligned) align = RoundUpPow2(size);
      }
      ASSERT_GE(l.lo, kStart) << "step " << step;
      ASSERT_LE(l.hi, limit) << "step " << step;
      ASSERT_EQ(l.lo % align, 0u) << "step " << step;
      // No overlap with any live range.
      auto next = live.lower_bound(l.lo);
      if (next != live.end()) {
        ASSERT_LT(l.hi, next->second.lo) << "step " << step;
      }
      if (next != live.begin()) {
        ASSERT_LT(std::prev(next)->second.hi, l.lo) << "step " << step;
      }
      // A tree allocation leaves its space's cached node on the new node.
      if (d_.stats.allocs != allocs_before) {
        if (l.hi < kDma32Pfn) {
          ASSERT_EQ(Cached32()->pfn_lo, l.lo) << "step " << step;
        } else if (cache == IOVA_CACHED32_AND_64) {
          ASSERT_EQ(Cached()->pfn_lo, l.lo) << "step " << step;
        }
      }
      live.emplace(l.lo, l);
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      const Live l = it->second;
      live.erase(it);
      const uint64_t frees_before = d_.stats.frees, inserts_before = d_.stats.rcache_inserts;
      const bool was_cached32 = Cached32()->pfn_lo == l.lo;
      if (l.fast)
        free_iova_fast(&d_, l.lo, l.size);
      else
        ASSERT_TRUE(free_iova(&d_, l.lo));
      // Linux's rule: a range freed to the tree ends up below the cached node
      // of its space, so the next search from that node sees the hole.
      if (d_.stats.frees == frees_before + 1 && d_.stats.rcache_inserts == inserts_before) {
        if (l.hi < kDma32Pfn || was_cached32) {
          ASSERT_GT(Cached32()->pfn_lo, l.hi) << "step " << step;
        }
        if (cache == IOVA_CACHED32_AND_64) {
          ASSERT_GT(Cached()->pfn_lo, l.hi) << "step " << step;
        }
      }
    }
    if (step % 200 == 0) check_all(step);
  }
  check_all(kOps);
  std::cout << "allocs " << d_.stats.allocs << " frees " << d_.stats.frees << " failures " << failures
            << " tree failures " << d_.stats.failures << " fast_fails " << d_.stats.fast_fails << " retries "
            << d_.stats.retries << " rcache hits " << d_.stats.rcache_hits << " misses " << d_.stats.rcache_misses
            << " flushes " << d_.stats.rcache_flushes << " live " << live.size() << " visits "
            << d_.stats.nodes_visited << "\n";
  EXPECT_GT(failures, 0u);  // the spaces did fill up
  EXPECT_GT(d_.stats.fast_fails, 0u);
  if (rcache) {
    EXPECT_GT(d_.stats.rcache_hits, 0u);
    EXPECT_GT(d_.stats.rcache_misses, 0u);
  }
  EXPECT_EQ(d_.stats.nodes_visited, Visits());

  // Everything back: the tree holds only the anchor and the top is free again.
  for (const auto& [lo, l] : live) {
    if (l.fast)
      free_iova_fast(&d_, lo, l.size);
    else
      ASSERT_TRUE(free_iova(&d_, lo));
  }
  live.clear();
  iova_flush_rcaches(&d_);
  ASSERT_EQ(Nodes(d_).size(), 1u);
  EXPECT_EQ(d_.cached_node, &d_.anchor.node);
  EXPECT_EQ(d_.cached32_node, &d_.anchor.node);
  EXPECT_EQ(d_.max32_alloc_size, kDma32Pfn);
  const iova* top = alloc_iova(&d_, 1, kHigh, false);
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->pfn_lo, kHigh);
  const iova* top32 = alloc_iova(&d_, 8, kLimit32, true);
  ASSERT_NE(top32, nullptr);
  EXPECT_EQ(top32->pfn_lo, kDma32Pfn - 8);
  // The whole 32-bit space is one gap again.
  const iova* rest = alloc_iova(&d_, 4096 - 8, kLimit32, false);
  ASSERT_NE(rest, nullptr);
  EXPECT_EQ(rest->pfn_lo, kStart);
  EXPECT_EQ(CheckTree(d_), "");
}

std::string ParamName(const ::testing::TestParamInfo<IovaRandomTest::ParamType>& info) {
  const auto [cache, rcache] = info.param;
  return std::string(cache == IOVA_CACHED32_ONLY ? "Cached32Only" : "Cached32And64") +
         (rcache ? "_Rcache" : "_NoRcache");
}

INSTANTIATE_TEST_SUITE_P(Policies, IovaRandomTest,
                         ::testing::Combine(::testing::Values(IOVA_CACHED32_ONLY, IOVA_CACHED32_AND_64),
                                            ::testing::Bool()),
                         ParamName);

}  // namespace

// Tlb: hits and misses for pages and blocks of every granule, ASID/VMID/regime
// tagging, replacement order (LRU, FIFO, seeded random), micro-TLB
// configuration, and the exact scope of every TLBI command (IHI 0070 4.4).
#include "smmu/tlb.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "common/stats.h"

namespace smmu_vp::smmu {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

TlbEntry s1(uint16_t vmid, uint16_t asid, uint64_t va, unsigned size_log2 = 12,
            Granule g = Granule::k4K, bool global = false) {
  TlbEntry e;
  e.stage = StageKind::kStage1;
  e.vmid = vmid;
  e.asid = asid;
  e.global = global;
  e.granule = g;
  e.size_log2 = static_cast<uint8_t>(size_log2);
  e.level = leaf_level(g, size_log2).value_or(3);
  e.input_addr = va;
  e.output_addr = 0x80000000ull + va;
  e.perms = {true, true, false, false, true};
  return e;
}

TlbEntry s2(uint16_t vmid, uint64_t ipa, unsigned size_log2 = 12, Granule g = Granule::k4K) {
  TlbEntry e = s1(vmid, 0, ipa, size_log2, g);
  e.stage = StageKind::kStage2;
  return e;
}

TlbEntry nested(uint16_t vmid, uint16_t asid, uint64_t va, uint64_t ipa,
                unsigned size_log2 = 12, Granule g = Granule::k4K) {
  TlbEntry e = s1(vmid, asid, va, size_log2, g);
  e.stage = StageKind::kNested;
  e.ipa = ipa;
  return e;
}

TlbEntry el2(TlbRegime regime, uint16_t asid, uint64_t va, bool global = false) {
  TlbEntry e = s1(0, asid, va);
  e.regime = regime;
  e.global = global;
  return e;
}

TlbConfig cfg(unsigned entries, unsigned ways,
              TlbConfig::Replacement r = TlbConfig::kLru, uint64_t seed = 0) {
  TlbConfig c;
  c.entries = entries;
  c.ways = ways;
  c.replacement = r;
  c.seed = seed;
  return c;
}

TlbiRange range(TlbiScope scope, uint16_t vmid, uint16_t asid, uint64_t base, uint64_t size,
                Granule tg = Granule::k4K, uint8_t ttl = 0, bool e2h = false) {
  TlbiRange r;
  r.scope = scope;
  r.vmid = vmid;
  r.asid = asid;
  r.base = base;
  r.size = size;
  r.tg = tg;
  r.ttl = ttl;
  r.e2h = e2h;
  return r;
}

TEST(Tlb, RejectsBadConfig) {
  EXPECT_THROW(Tlb(cfg(0, 1)), std::invalid_argument);
  EXPECT_THROW(Tlb(cfg(8, 0)), std::invalid_argument);
  EXPECT_THROW(Tlb(cfg(10, 4)), std::invalid_argument);
  Tlb t(cfg(64, 4));
  EXPECT_EQ(t.capacity(), 64u);
  EXPECT_EQ(t.sets(), 16u);
  EXPECT_EQ(t.ways(), 4u);
}

TEST(Tlb, ConfigAggregateInitialisation) {
  const TlbConfig c{128, 8, TlbConfig::kFifo, 99};
  Tlb t(c);
  EXPECT_EQ(t.sets(), 16u);
  EXPECT_EQ(t.config().replacement, ReplacementPolicy::kFifo);
  EXPECT_EQ(t.config().seed, 99u);
  EXPECT_TRUE(t.config().index_by_context);
  EXPECT_FALSE(t.config().s2_ipa_invalidates_nested);
}

TEST(Tlb, RejectsBadEntries) {
  Tlb t(cfg(16, 4));
  TlbEntry e = s1(0, 1, 0x1000, 12, Granule::k64K);  // smaller than the granule
  EXPECT_THROW(t.insert(e), std::invalid_argument);
  e = s1(0, 1, 0x1000);
  e.level = 4;
  EXPECT_THROW(t.insert(e), std::invalid_argument);
  e = s2(1, 0x1000);
  e.regime = TlbRegime::kEl2;
  EXPECT_THROW(t.insert(e), std::invalid_argument);
  EXPECT_EQ(t.size(), 0u);
}

TEST(Tlb, LeafLevels) {
  EXPECT_EQ(leaf_level(Granule::k4K, 12), 3);
  EXPECT_EQ(leaf_level(Granule::k4K, 21), 2);
  EXPECT_EQ(leaf_level(Granule::k4K, 30), 1);
  EXPECT_EQ(leaf_level(Granule::k16K, 14), 3);
  EXPECT_EQ(leaf_level(Granule::k16K, 25), 2);
  EXPECT_EQ(leaf_level(Granule::k64K, 16), 3);
  EXPECT_EQ(leaf_level(Granule::k64K, 29), 2);
  EXPECT_FALSE(leaf_level(Granule::k4K, 16).has_value());  // contiguous 64K
  EXPECT_FALSE(leaf_level(Granule::k64K, 12).has_value());
}

struct SizeCase {
  Granule g;
  unsigned size_log2;
};

TEST(Tlb, HitAndMissForPagesAndBlocksOfEachGranule) {
  const SizeCase cases[] = {{Granule::k4K, 12},  {Granule::k4K, 21},  {Granule::k4K, 30},
                            {Granule::k16K, 14}, {Granule::k16K, 25}, {Granule::k64K, 16},
                            {Granule::k64K, 29}};
  for (const SizeCase& c : cases) {
    SCOPED_TRACE(testing::Message() << "granule " << granule_shift(c.g) << " size " << c.size_log2);
    Tlb t(cfg(64, 4));
    const uint64_t size = 1ull << c.size_log2;
    const uint64_t va = 5 * size;  // aligned
    TlbEntry e = s1(0, 3, va, c.size_log2, c.g);
    e.output_addr = 7 * size;
    t.insert(e);
    for (uint64_t off : {uint64_t{0}, size / 2 + 8, size - 1}) {
      auto hit = t.lookup(StageKind::kStage1, 0, 3, va + off);
      ASSERT_TRUE(hit.has_value());
      EXPECT_EQ(hit->pa, 7 * size + off);
      EXPECT_EQ(hit->entry.size_log2, c.size_log2);
      EXPECT_EQ(hit->entry.granule, c.g);
    }
    EXPECT_FALSE(t.lookup(StageKind::kStage1, 0, 3, va - 1).has_value());
    EXPECT_FALSE(t.lookup(StageKind::kStage1, 0, 3, va + size).has_value());
    EXPECT_EQ(t.stats().lookups, 5u);
    EXPECT_EQ(t.stats().hits, 3u);
    EXPECT_EQ(t.stats().misses, 2u);
  }
}

TEST(Tlb, MixedSizesCoexistAndSmallestMatchWins) {
  Tlb t(cfg(16, 4));
  t.insert(s1(0, 1, 0x40000000, 30));  // 1 GiB block
  t.insert(s1(0, 1, 0x40200000, 21));  // 2 MiB block inside it
  TlbEntry page = s1(0, 1, 0x40201000, 12);
  page.output_addr = 0x1234000;
  t.insert(page);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.lookup(StageKind::kStage1, 0, 1, 0x40201008)->pa, 0x1234008u);
  EXPECT_EQ(t.lookup(StageKind::kStage1, 0, 1, 0x40202000)->entry.size_log2, 21);
  EXPECT_EQ(t.lookup(StageKind::kStage1, 0, 1, 0x7FFFFFFF)->entry.size_log2, 30);
}

// lookup() remembers its last hit by page; whatever changes the entries must
// make it look again, and another context or page must not use it.
TEST(Tlb, RepeatedLookupsOfAPageSeeEveryChange) {
  Tlb t(cfg(16, 4));
  t.insert(s1(0, 1, 0x40200000, 21));  // 2 MiB block
  EXPECT_EQ(t.lookup(StageKind::kStage1, 0, 1, 0x40201008)->entry.size_log2, 21);
  EXPECT_EQ(t.lookup(StageKind::kStage1, 0, 1, 0x40201ff0)->pa, 0x80000000ull + 0x40201ff0);
  TlbEntry page = s1(0, 1, 0x40201000, 12);
  page.output_addr = 0x1234000;
  t.insert(page);  // a smaller entry on the same page now wins
  EXPECT_EQ(t.lookup(StageKind::kStage1, 0, 1, 0x40201008)->pa, 0x1234008u);
  EXPECT_FALSE(t.lookup(StageKind::kStage1, 0, 2, 0x40201008).has_value());  // other ASID
  EXPECT_EQ(t.lookup(StageKind::kStage1, 0, 1, 0x40202008)->entry.size_log2, 21);  // other page
  t.invalidate_all();
  EXPECT_FALSE(t.lookup(StageKind::kStage1, 0, 1, 0x40201008).has_value());
  EXPECT_EQ(t.stats().lookups, 6u);
  EXPECT_EQ(t.stats().hits, 4u);
}

TEST(Tlb, InsertAlignsAndReplacesSameTags) {
  Tlb t(cfg(16, 4));
  TlbEntry e = s1(0, 1, 0x201234, 21);
  e.output_addr = 0x40201234;
  t.insert(e);
  auto hit = t.peek(StageKind::kStage1, 0, 1, 0x200000);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entry.input_addr, 0x200000u);
  EXPECT_EQ(hit->entry.output_addr, 0x40200000u);

  e.output_addr = 0x80000000;
  e.perms.write = false;
  EXPECT_FALSE(t.insert(e).has_value());
  EXPECT_EQ(t.size(), 1u);
  hit = t.peek(StageKind::kStage1, 0, 1, 0x200010);
  EXPECT_EQ(hit->pa, 0x80000010u);
  EXPECT_FALSE(hit->entry.perms.write);
  EXPECT_EQ(t.stats().evictions, 0u);
  EXPECT_EQ(t.stats().inserts, 2u);
}

TEST(Tlb, GlobalEntriesMatchEveryAsidNonGlobalOnlyTheirs) {
  Tlb t(cfg(32, 4));
  t.insert(s1(0, 1, 0x1000));                                // nG, ASID 1
  t.insert(s1(0, 9, 0x2000, 12, Granule::k4K, /*global=*/true));  // global
  EXPECT_TRUE(t.lookup(StageKind::kStage1, 0, 1, 0x1000).has_value());
  EXPECT_FALSE(t.lookup(StageKind::kStage1, 0, 2, 0x1000).has_value());
  for (uint16_t asid : {0, 1, 2, 9, 0xFFFF})
    EXPECT_TRUE(t.lookup(StageKind::kStage1, 0, asid, 0x2000).has_value()) << asid;
  // Global entries are still tagged by VMID.
  EXPECT_FALSE(t.lookup(StageKind::kStage1, 1, 1, 0x2000).has_value());
}

TEST(Tlb, VmidStageAndRegimeTagging) {
  Tlb t(cfg(64, 4));
  TlbEntry a = s1(1, 5, 0x10000);
  a.output_addr = 0xA000;
  TlbEntry b = s1(2, 5, 0x10000);
  b.output_addr = 0xB000;
  t.insert(a);
  t.insert(b);
  EXPECT_EQ(t.lookup(StageKind::kStage1, 1, 5, 0x10000)->pa, 0xA000u);
  EXPECT_EQ(t.lookup(StageKind::kStage1, 2, 5, 0x10000)->pa, 0xB000u);
  EXPECT_FALSE(t.lookup(StageKind::kStage1, 3, 5, 0x10000).has_value());
  // Stage kinds do not alias.
  EXPECT_FALSE(t.lookup(StageKind::kStage2, 1, 5, 0x10000).has_value());
  EXPECT_FALSE(t.lookup(StageKind::kNested, 1, 5, 0x10000).has_value());

  // Stage 2 ignores the ASID (stored as 0) and reports the IPA.
  TlbEntry c = s2(1, 0x20000);
  c.asid = 77;
  t.insert(c);
  auto hit = t.lookup(StageKind::kStage2, 1, 1234, 0x20010);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entry.asid, 0);
  EXPECT_EQ(hit->ipa, 0x20010u);
  EXPECT_FALSE(t.lookup(StageKind::kStage2, 2, 0, 0x20010).has_value());

  // Nested: VA -> PA with the intermediate IPA.
  TlbEntry n = nested(1, 5, 0x30000, 0x9000000);
  n.output_addr = 0x7000000;
  t.insert(n);
  hit = t.lookup(StageKind::kNested, 1, 5, 0x30ABC);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->pa, 0x7000ABCu);
  EXPECT_EQ(hit->ipa, 0x9000ABCu);

  // EL2 regimes carry no VMID; EL2 (non-E2H) carries no ASID either.
  TlbEntry h = el2(TlbRegime::kEl2, 3, 0x50000);
  h.vmid = 9;
  t.insert(h);
  hit = t.lookup(StageKind::kStage1, 0, 42, 0x50000, TlbRegime::kEl2);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entry.vmid, 0);
  EXPECT_TRUE(hit->entry.global);
  EXPECT_FALSE(t.lookup(StageKind::kStage1, 0, 42, 0x50000, TlbRegime::kEl1).has_value());
  t.insert(el2(TlbRegime::kEl2E2H, 3, 0x60000));
  EXPECT_TRUE(t.lookup(StageKind::kStage1, 7, 3, 0x60000, TlbRegime::kEl2E2H).has_value());
  EXPECT_FALSE(t.lookup(StageKind::kStage1, 0, 4, 0x60000, TlbRegime::kEl2E2H).has_value());
}

// 4 sets x 2 ways (or x ways): pages whose page number is a multiple of the set
// count all go to set 0.
uint64_t set0_page(unsigned i, unsigned sets) { return uint64_t{i} * sets << 12; }

TEST(Tlb, LruEvictsLeastRecentlyUsed) {
  Tlb t(cfg(16, 4, TlbConfig::kLru));
  const unsigned sets = t.sets();
  for (unsigned i = 0; i < 4; ++i) t.insert(s1(0, 1, set0_page(i, sets)));
  // Use 0 and 1: LRU order becomes 2, 3, 0, 1.
  ASSERT_TRUE(t.lookup(StageKind::kStage1, 0, 1, set0_page(0, sets)));
  ASSERT_TRUE(t.lookup(StageKind::kStage1, 0, 1, set0_page(1, sets)));
  std::vector<uint64_t> victims;
  for (unsigned i = 4; i < 8; ++i) {
    auto ev = t.insert(s1(0, 1, set0_page(i, sets)));
    ASSERT_TRUE(ev.has_value());
    victims.push_back(ev->input_addr);
  }
  EXPECT_EQ(victims, (std::vector<uint64_t>{set0_page(2, sets), set0_page(3, sets),
                                            set0_page(0, sets), set0_page(1, sets)}));
  EXPECT_EQ(t.stats().evictions, 4u);
  EXPECT_EQ(t.size(), 4u);
}

TEST(Tlb, FifoEvictsInFillOrderRegardlessOfUse) {
  Tlb t(cfg(16, 4, TlbConfig::kFifo));
  const unsigned sets = t.sets();
  for (unsigned i = 0; i < 4; ++i) t.insert(s1(0, 1, set0_page(i, sets)));
  ASSERT_TRUE(t.lookup(StageKind::kStage1, 0, 1, set0_page(0, sets)));
  std::vector<uint64_t> victims;
  for (unsigned i = 4; i < 8; ++i)
    victims.push_back(t.insert(s1(0, 1, set0_page(i, sets)))->input_addr);
  EXPECT_EQ(victims, (std::vector<uint64_t>{set0_page(0, sets), set0_page(1, sets),
                                            set0_page(2, sets), set0_page(3, sets)}));
}

TEST(Tlb, EvictionStaysInItsSet) {
  Tlb t(cfg(8, 2));
  t.insert(s1(0, 1, 0x1000));  // set 1
  for (unsigned i = 0; i < 6; ++i) t.insert(s1(0, 1, set0_page(i, t.sets())));
  EXPECT_TRUE(t.peek(StageKind::kStage1, 0, 1, 0x1000).has_value());
  t.for_each_slot([&](unsigned set, unsigned, const TlbEntry& e) {
    EXPECT_EQ(set, t.set_of(e));
  });
}

std::vector<unsigned> random_victim_ways(uint64_t seed) {
  Tlb t(cfg(32, 8, TlbConfig::kRandom, seed));
  const unsigned sets = t.sets();
  for (unsigned i = 0; i < 8; ++i) t.insert(s1(0, 1, set0_page(i, sets)));
  std::vector<unsigned> ways;
  for (unsigned i = 8; i < 72; ++i) {
    const uint64_t va = set0_page(i, sets);
    EXPECT_TRUE(t.insert(s1(0, 1, va)).has_value());
    t.for_each_slot([&](unsigned, unsigned way, const TlbEntry& e) {
      if (e.input_addr == va) ways.push_back(way);
    });
  }
  return ways;
}

TEST(Tlb, RandomReplacementIsDeterministicFromSeed) {
  const auto a = random_victim_ways(42);
  const auto b = random_victim_ways(42);
  const auto c = random_victim_ways(43);
  ASSERT_EQ(a.size(), 64u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // It does use more than one way.
  EXPECT_GT(std::set<unsigned>(a.begin(), a.end()).size(), 4u);
}

TEST(Tlb, MicroTlbIsFullyAssociative) {
  Tlb t(cfg(8, 8, TlbConfig::kLru));
  EXPECT_EQ(t.sets(), 1u);
  // Any mix of addresses and sizes fits until it is full.
  const uint64_t vas[] = {0x0,        0x1000,     0x7000,     0x200000,
                          0x40000000, 0x12345000, 0xFFFF0000, 0x8000};
  for (uint64_t va : vas) t.insert(s1(0, 1, va, va == 0x40000000 ? 30 : va == 0x200000 ? 21 : 12));
  EXPECT_EQ(t.size(), 8u);
  EXPECT_EQ(t.stats().evictions, 0u);
  for (uint64_t va : vas) EXPECT_TRUE(t.lookup(StageKind::kStage1, 0, 1, va).has_value());
  // Touch all but 0x7000 again: it becomes the LRU victim.
  for (uint64_t va : vas)
    if (va != 0x7000) t.lookup(StageKind::kStage1, 0, 1, va);
  auto ev = t.insert(s1(0, 1, 0x99000));
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->input_addr, 0x7000u);
  // 0x0, 0x1000, 0x8000, 0x99000 and the 2 MiB block at 0x200000.
  EXPECT_EQ(t.invalidate_range(range(TlbiScope::kNhVaa, 0, 0, 0x0, 0x300000)), 5u);
  EXPECT_EQ(t.size(), 3u);
}

TEST(Tlb, StatsGoToRegistry) {
  StatsRegistry reg;
  Tlb t(cfg(4, 1), &reg, "smmu0.tlb");
  t.insert(s1(0, 1, 0x1000));
  t.lookup(StageKind::kStage1, 0, 1, 0x1000);
  t.lookup(StageKind::kStage1, 0, 1, 0x2000);
  t.insert(s1(0, 1, 0x5000));  // same set as 0x1000 with 4 sets x 1 way
  t.invalidate_all();
  EXPECT_EQ(reg.find_counter("smmu0.tlb.lookups")->value(), 2u);
  EXPECT_EQ(reg.find_counter("smmu0.tlb.hits")->value(), 1u);
  EXPECT_EQ(reg.find_counter("smmu0.tlb.misses")->value(), 1u);
  EXPECT_EQ(reg.find_counter("smmu0.tlb.inserts")->value(), 2u);
  EXPECT_EQ(reg.find_counter("smmu0.tlb.evictions")->value(), 1u);
  EXPECT_EQ(reg.find_counter("smmu0.tlb.invalidated")->value(), 1u);
  EXPECT_EQ(t.stats().invalidated, 1u);
}

// --- Invalidation scope ------------------------------------------------------

// A mixed population; each entry is identified by its output address (id GiB).
class TlbInvalidation : public testing::Test {
 protected:
  TlbInvalidation() : tlb_(make_cfg(false)) { populate(tlb_); }

  static TlbConfig make_cfg(bool nested_on_s2) {
    TlbConfig c = cfg(512, 4);
    c.s2_ipa_invalidates_nested = nested_on_s2;
    return c;
  }

  static void add(Tlb& t, unsigned id, TlbEntry e) {
    e.output_addr = uint64_t{id} * kGiB;
    ASSERT_FALSE(t.insert(e).has_value());
  }

  static void populate(Tlb& t) {
    add(t, 1, s1(1, 1, 0x40000));
    add(t, 2, s1(1, 2, 0x40000));
    add(t, 3, s1(1, 7, 0x80000, 12, Granule::k4K, /*global=*/true));
    add(t, 4, s1(1, 1, 0x200000, 21));  // 2 MiB block, level 2
    add(t, 5, s1(2, 1, 0x40000));
    add(t, 6, s2(1, 0x40000));
    add(t, 7, s2(1, 0x200000, 21));
    add(t, 8, nested(1, 1, 0x100000, 0x40000));
    add(t, 9, nested(2, 1, 0x40000, 0x40000));
    add(t, 10, el2(TlbRegime::kEl2, 0, 0x40000));
    add(t, 11, el2(TlbRegime::kEl2E2H, 1, 0x40000));
    add(t, 12, el2(TlbRegime::kEl2E2H, 1, 0x80000, /*global=*/true));
    add(t, 13, s1(1, 1, 0x400000, 16, Granule::k64K));  // 64K page
    add(t, 14, s2(2, 0x40000));
    add(t, 15, s1(1, 1, 0x800000, 14, Granule::k16K));  // 16K page
  }

  static std::set<unsigned> ids(const Tlb& t) {
    std::set<unsigned> out;
    t.for_each([&](const TlbEntry& e) { out.insert(static_cast<unsigned>(e.output_addr / kGiB)); });
    return out;
  }
  static std::set<unsigned> all_but(std::set<unsigned> removed) {
    std::set<unsigned> out;
    for (unsigned i = 1; i <= kCount; ++i)
      if (!removed.count(i)) out.insert(i);
    return out;
  }
  // Applies `op`, checks its return value and the exact survivors.
  template <typename Op>
  void expect_removes(Op op, std::set<unsigned> removed) {
    Tlb t(make_cfg(false));
    populate(t);
    ASSERT_EQ(t.size(), kCount);
    EXPECT_EQ(op(t), removed.size());
    EXPECT_EQ(ids(t), all_but(removed));
    EXPECT_EQ(t.size(), kCount - removed.size());
    EXPECT_EQ(t.stats().invalidated, removed.size());
  }

  static constexpr unsigned kCount = 15;
  Tlb tlb_;
};

TEST_F(TlbInvalidation, PopulationIsComplete) { EXPECT_EQ(ids(tlb_), all_but({})); }

TEST_F(TlbInvalidation, All) {
  expect_removes([](Tlb& t) { return t.invalidate_all(); }, all_but({}));
}

TEST_F(TlbInvalidation, NsnhAllKeepsEl2) {
  expect_removes([](Tlb& t) { return t.invalidate_nsnh_all(); },
                 {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 14, 15});
}

TEST_F(TlbInvalidation, S12VmallRemovesEveryStageOfTheVmid) {
  expect_removes([](Tlb& t) { return t.invalidate_vmid(1); }, {1, 2, 3, 4, 6, 7, 8, 13, 15});
  expect_removes([](Tlb& t) { return t.invalidate_vmid(2); }, {5, 9, 14});
}

TEST_F(TlbInvalidation, NhAllRemovesStage1AndNestedOfTheVmidIncludingGlobal) {
  expect_removes([](Tlb& t) { return t.invalidate_stage1_all_for_vmid(1); },
                 {1, 2, 3, 4, 8, 13, 15});
}

TEST_F(TlbInvalidation, NhAsidRemovesOnlyNonGlobalEntriesOfThatAsid) {
  expect_removes([](Tlb& t) { return t.invalidate_asid(1, 1); }, {1, 4, 8, 13, 15});
  expect_removes([](Tlb& t) { return t.invalidate_asid(1, 7); }, {});  // 3 is global
  expect_removes([](Tlb& t) { return t.invalidate_asid(2, 1); }, {5, 9});
}

TEST_F(TlbInvalidation, NhVaRemovesAsidAndGlobalEntriesContainingVa) {
  expect_removes([](Tlb& t) { return t.invalidate_va(1, 1, 0x40123); }, {1});
  expect_removes([](Tlb& t) { return t.invalidate_va(1, 2, 0x40000, true); }, {2});
  expect_removes([](Tlb& t) { return t.invalidate_va(1, 1, 0x80FFF); }, {3});  // global
  expect_removes([](Tlb& t) { return t.invalidate_va(1, 1, 0x3ABCDE); }, {4});  // in block
  expect_removes([](Tlb& t) { return t.invalidate_va(1, 1, 0x100000); }, {8});  // nested
  expect_removes([](Tlb& t) { return t.invalidate_va(1, 3, 0x40000); }, {});
  expect_removes([](Tlb& t) { return t.invalidate_va(1, 1, 0x41000); }, {});
}

TEST_F(TlbInvalidation, NhVaaRemovesEveryAsidOfTheVmid) {
  expect_removes([](Tlb& t) { return t.invalidate_vaa(1, 0x40FFF); }, {1, 2});
  expect_removes([](Tlb& t) { return t.invalidate_vaa(2, 0x40000); }, {5, 9});
  expect_removes([](Tlb& t) { return t.invalidate_vaa(1, 0x80000); }, {3});
}

TEST_F(TlbInvalidation, El2Commands) {
  expect_removes([](Tlb& t) { return t.invalidate_el2_all(); }, {10, 11, 12});
  expect_removes([](Tlb& t) { return t.invalidate_el2_asid(1); }, {11});
  expect_removes([](Tlb& t) { return t.invalidate_el2_va(1, 0x40000, /*e2h=*/true); }, {11});
  expect_removes([](Tlb& t) { return t.invalidate_el2_va(2, 0x40000, true); }, {});
  expect_removes([](Tlb& t) { return t.invalidate_el2_va(2, 0x80000, true); }, {12});
  expect_removes([](Tlb& t) { return t.invalidate_el2_va(5, 0x40000, /*e2h=*/false); }, {10});
  expect_removes([](Tlb& t) { return t.invalidate_el2_vaa(0x40000, true); }, {11});
  expect_removes([](Tlb& t) { return t.invalidate_el2_vaa(0x40000, false); }, {10});
}

TEST_F(TlbInvalidation, S2IpaRemovesStage2OnlyEntries) {
  // Nested entry 8 has IPA 0x40000 but is not required to go (IHI 0070 4.4.3.1).
  expect_removes([](Tlb& t) { return t.invalidate_s2_ipa(1, 0x40000); }, {6});
  expect_removes([](Tlb& t) { return t.invalidate_s2_ipa(1, 0x3FFFFF); }, {7});
  expect_removes([](Tlb& t) { return t.invalidate_s2_ipa(2, 0x40000); }, {14});
  expect_removes([](Tlb& t) { return t.invalidate_s2_ipa(1, 0x100000); }, {});
}

TEST_F(TlbInvalidation, S2IpaOverInvalidatesNestedWhenConfigured) {
  Tlb t(make_cfg(true));
  populate(t);
  EXPECT_EQ(t.invalidate_s2_ipa(1, 0x40000), 2u);
  EXPECT_EQ(ids(t), all_but({6, 8}));
  // 14 by its IPA range, 9 (nested) by its IPA.
  EXPECT_EQ(t.invalidate_range(range(TlbiScope::kS2Ipa, 2, 0, 0, 0x100000)), 2u);
  EXPECT_EQ(ids(t), all_but({6, 8, 9, 14}));
}


TEST_F(TlbInvalidation, RangeNhVa) {
  expect_removes(
      [](Tlb& t) { return t.invalidate_range(range(TlbiScope::kNhVa, 1, 1, 0, 0x100000)); },
      {1, 3});
  expect_removes(
      [](Tlb& t) { return t.invalidate_range(range(TlbiScope::kNhVa, 1, 1, 0, 0x101000)); },
      {1, 3, 8});
}

TEST_F(TlbInvalidation, RangeOverlappingPartOfABlockRemovesTheBlock) {
  // [0x3FF000, 0x401000) covers the last page of block 4 only; entry 13 at
  // 0x400000 was inserted with a 64K granule, so TG = 4K leaves it.
  expect_removes(
      [](Tlb& t) { return t.invalidate_range(range(TlbiScope::kNhVa, 1, 1, 0x3FF000, 0x2000)); },
      {4});
  // A range starting inside the block.
  expect_removes(
      [](Tlb& t) { return t.invalidate_range(range(TlbiScope::kNhVaa, 1, 0, 0x250000, 0x1000)); },
      {4});
  expect_removes(
      [](Tlb& t) {
        return t.invalidate_range(range(TlbiScope::kNhVaa, 1, 0, 0x400000, 0x10000, Granule::k64K));
      },
      {13});
}

TEST_F(TlbInvalidation, RangeHonoursTgAndTtl) {
  expect_removes(
      [](Tlb& t) {
        return t.invalidate_range(range(TlbiScope::kNhVaa, 1, 0, 0, 0x400000, Granule::k4K, 2));
      },
      {4});
  expect_removes(
      [](Tlb& t) {
        return t.invalidate_range(range(TlbiScope::kNhVaa, 1, 0, 0, 0x1000000, Granule::k4K, 3));
      },
      {1, 2, 3, 8});
  expect_removes(
      [](Tlb& t) {
        return t.invalidate_range(range(TlbiScope::kNhVaa, 1, 0, 0x40000, 0x4000, Granule::k16K));
      },
      {});
  expect_removes(
      [](Tlb& t) {
        return t.invalidate_range(
            range(TlbiScope::kNhVaa, 1, 0, 0x800000, 0x4000, Granule::k16K, 1));
      },
      {15});  // 16K TTL 1 behaves as TTL 0
}

TEST_F(TlbInvalidation, RangeOtherScopes) {
  expect_removes(
      [](Tlb& t) { return t.invalidate_range(range(TlbiScope::kS2Ipa, 1, 0, 0, 0x400000)); },
      {6, 7});
  expect_removes(
      [](Tlb& t) {
        return t.invalidate_range(
            range(TlbiScope::kEl2Va, 0, 1, 0, 0x100000, Granule::k4K, 0, /*e2h=*/true));
      },
      {11, 12});
  expect_removes(
      [](Tlb& t) {
        return t.invalidate_range(
            range(TlbiScope::kEl2Vaa, 0, 0, 0, 0x100000, Granule::k4K, 0, /*e2h=*/false));
      },
      {10});
  expect_removes(
      [](Tlb& t) { return t.invalidate_range(range(TlbiScope::kNhVa, 1, 1, 0, 0)); }, {});
}

TEST(Tlb, RangeDoesNotWrapAtTopOfAddressSpace) {
  Tlb t(cfg(16, 4));
  t.insert(s1(0, 1, 0xFFFFFFFFFFFFF000ull));
  t.insert(s1(0, 1, 0x0));
  EXPECT_EQ(t.invalidate_range(range(TlbiScope::kNhVa, 0, 1, 0xFFFFFFFFFFFFF000ull, 0x3000)), 1u);
  EXPECT_TRUE(t.peek(StageKind::kStage1, 0, 1, 0x0).has_value());
  EXPECT_THROW(t.invalidate_range(range(TlbiScope::kNhVa, 0, 1, 0, 0x1000, Granule::k4K, 4)),
               std::invalid_argument);
}

TEST(Tlb, RangeBytes) {
  EXPECT_EQ(TlbiRange::bytes(0, 0, Granule::k4K), 0x1000u);
  EXPECT_EQ(TlbiRange::bytes(1, 0, Granule::k4K), 0x2000u);
  EXPECT_EQ(TlbiRange::bytes(31, 3, Granule::k64K), 32ull * 8 * 0x10000);
  EXPECT_EQ(TlbiRange::bytes(0, 45, Granule::k16K), 1ull << (39 + 14));  // SCALE > 39 is 39
  EXPECT_THROW(TlbiRange::bytes(32, 0, Granule::k4K), std::invalid_argument);
}

// --- Indexing and probing against a brute-force reference ---------------------

TEST(Tlb, SetIndexWithoutContextIsThePageNumber) {
  TlbConfig c = cfg(64, 4);
  c.index_by_context = false;
  Tlb t(c);
  EXPECT_EQ(t.set_of(s1(3, 9, 0x5000)), 5u);
  EXPECT_EQ(t.set_of(s2(1, 0x13000)), 3u);
  EXPECT_EQ(t.set_of(s1(0, 1, 0x40000000, 30)), 1u);
}

TEST(Tlb, SetIndexWithContextKeepsConsecutivePagesInConsecutiveSets) {
  Tlb t(cfg(64, 4));
  for (uint16_t asid = 0; asid < 8; ++asid) {
    const unsigned base = t.set_of(s1(1, asid, 0x0));
    for (uint64_t page = 1; page < 40; ++page)
      EXPECT_EQ(t.set_of(s1(1, asid, page << 12)), (base + page) % t.sets());
  }
  // Global entries do not depend on the ASID they were walked with.
  EXPECT_EQ(t.set_of(s1(1, 1, 0x7000, 12, Granule::k4K, true)),
            t.set_of(s1(1, 2, 0x7000, 12, Granule::k4K, true)));
}

TEST(Tlb, PeekDoesNotTouchLruOrStats) {
  Tlb t(cfg(2, 2));
  t.insert(s1(0, 1, 0x1000));
  t.insert(s1(0, 1, 0x2000));
  EXPECT_TRUE(t.peek(StageKind::kStage1, 0, 1, 0x1000).has_value());
  EXPECT_EQ(t.stats().lookups, 0u);
  EXPECT_EQ(t.insert(s1(0, 1, 0x3000))->input_addr, 0x1000u);
}

struct RefQuery {
  StageKind stage;
  TlbRegime regime;
  uint16_t vmid;
  uint16_t asid;
};

bool ref_lookup_match(const TlbEntry& e, const RefQuery& q, uint64_t addr) {
  if (e.stage != q.stage || e.regime != q.regime || !e.contains(addr)) return false;
  if (q.regime == TlbRegime::kEl1 && e.vmid != q.vmid) return false;
  if (q.stage == StageKind::kStage2 || q.regime == TlbRegime::kEl2) return true;
  return e.global || e.asid == q.asid;
}

bool ref_scope(const TlbEntry& e, const TlbiRange& r) {
  const bool s1_el1 = e.regime == TlbRegime::kEl1 && e.stage != StageKind::kStage2;
  switch (r.scope) {
    case TlbiScope::kNhVa: return s1_el1 && e.vmid == r.vmid && (e.global || e.asid == r.asid);
    case TlbiScope::kNhVaa: return s1_el1 && e.vmid == r.vmid;
    case TlbiScope::kEl2Va:
      return r.e2h ? e.regime == TlbRegime::kEl2E2H && (e.global || e.asid == r.asid)
                   : e.regime == TlbRegime::kEl2;
    case TlbiScope::kEl2Vaa:
      return e.regime == (r.e2h ? TlbRegime::kEl2E2H : TlbRegime::kEl2);
    case TlbiScope::kS2Ipa:
      return e.regime == TlbRegime::kEl1 && e.stage == StageKind::kStage2 && e.vmid == r.vmid;
  }
  return false;
}

TlbEntry random_entry(std::mt19937_64& rng) {
  static const Granule kGranules[] = {Granule::k4K, Granule::k16K, Granule::k64K};
  const Granule g = kGranules[rng() % 3];
  const unsigned shift = granule_shift(g);
  // Page, next-level block, or a contiguous run of 16 pages.
  const unsigned sizes[] = {shift, shift, 2 * shift - 3, shift + 4};
  const unsigned size_log2 = sizes[rng() % 4];
  const StageKind stage = static_cast<StageKind>(rng() % 3);
  TlbEntry e = s1(static_cast<uint16_t>(rng() % 3), static_cast<uint16_t>(rng() % 3),
                  (rng() % 512) << 14 | (rng() & 0x3FFF), size_log2, g, rng() % 5 == 0);
  e.stage = stage;
  if (stage == StageKind::kStage1) e.regime = static_cast<TlbRegime>(rng() % 3);
  e.ipa = (rng() % 512) << 14;
  e.output_addr = rng() & 0xFFFFFFFFF000ull;
  return e;
}

// Lookups and every address-based invalidation, single-address and range,
// must give exactly what a brute-force scan gives, in TLB geometries where
// ranges wrap around the sets, with and without context indexing, with a
// non-power-of-two set count, and fully associative.
TEST(Tlb, LookupAndInvalidationMatchBruteForce) {
  struct Geometry {
    unsigned entries, ways;
    bool ctx, nested_on_s2;
  };
  const Geometry geometries[] = {{64, 4, true, false}, {64, 4, false, true}, {24, 2, true, true},
                                 {16, 16, true, false}, {256, 2, false, false}};
  std::mt19937_64 rng(7);
  for (const Geometry& geo : geometries) {
    for (int round = 0; round < 400; ++round) {
      SCOPED_TRACE(testing::Message() << "entries " << geo.entries << " ways " << geo.ways
                                      << " ctx " << geo.ctx << " round " << round);
      TlbConfig c = cfg(geo.entries, geo.ways, TlbConfig::kRandom, round);
      c.index_by_context = geo.ctx;
      c.s2_ipa_invalidates_nested = geo.nested_on_s2;
      Tlb t(c);
      for (unsigned i = 0; i < geo.entries + geo.entries / 2; ++i) t.insert(random_entry(rng));
      std::vector<TlbEntry> before;
      t.for_each([&](const TlbEntry& e) { before.push_back(e); });
      ASSERT_EQ(before.size(), t.size());

      // Lookups: hit iff some entry matches; the smallest matching size wins.
      for (int q = 0; q < 20; ++q) {
        const TlbEntry& pick = before[rng() % before.size()];
        RefQuery query{pick.stage, pick.regime, pick.vmid,
                       static_cast<uint16_t>(rng() % 2 ? pick.asid : rng() % 3)};
        const uint64_t addr = rng() % 2 ? pick.input_addr + (rng() % pick.size())
                                        : (rng() % 512) << 14 | (rng() & 0x3FFF);
        std::optional<unsigned> best;
        for (const TlbEntry& e : before)
          if (ref_lookup_match(e, query, addr) && (!best || e.size_log2 < *best))
            best = e.size_log2;
        const auto hit = t.peek(query.stage, query.vmid, query.asid, addr, query.regime);
        ASSERT_EQ(hit.has_value(), best.has_value()) << "addr " << addr;
        if (hit) {
          EXPECT_EQ(hit->entry.size_log2, *best);
          EXPECT_TRUE(ref_lookup_match(hit->entry, query, addr));
        }
      }

      // One invalidation.
      TlbiRange r;
      r.scope = static_cast<TlbiScope>(rng() % 5);
      r.vmid = static_cast<uint16_t>(rng() % 3);
      r.asid = static_cast<uint16_t>(rng() % 3);
      r.e2h = rng() % 2;
      const bool ranged = rng() % 2;
      r.base = (rng() % 600) << 12;
      r.size = ranged ? ((rng() % 0x800) + 1) << 12 : 1;
      static const Granule kGranules[] = {Granule::k4K, Granule::k16K, Granule::k64K};
      r.tg = kGranules[rng() % 3];
      r.ttl = static_cast<uint8_t>(rng() % 4);
      const uint8_t ttl = (r.tg == Granule::k16K && r.ttl == 1) ? 0 : r.ttl;
      std::vector<TlbEntry> expected_left;
      for (const TlbEntry& e : before) {
        bool gone = ref_scope(e, r) && e.overlaps(r.base, r.base + r.size - 1) &&
                    (!ranged || (e.granule == r.tg && (ttl == 0 || e.level == ttl)));
        if (r.scope == TlbiScope::kS2Ipa && geo.nested_on_s2 && e.stage == StageKind::kNested &&
            e.regime == TlbRegime::kEl1 && e.vmid == r.vmid && e.ipa <= r.base + r.size - 1 &&
            r.base <= e.ipa + (e.size() - 1))
          gone = true;
        if (!gone) expected_left.push_back(e);
      }
      size_t got = 0;
      if (ranged) {
        got = t.invalidate_range(r);
      } else {
        switch (r.scope) {
          case TlbiScope::kNhVa: got = t.invalidate_va(r.vmid, r.asid, r.base); break;
          case TlbiScope::kNhVaa: got = t.invalidate_vaa(r.vmid, r.base); break;
          case TlbiScope::kEl2Va: got = t.invalidate_el2_va(r.asid, r.base, r.e2h); break;
          case TlbiScope::kEl2Vaa: got = t.invalidate_el2_vaa(r.base, r.e2h); break;
          case TlbiScope::kS2Ipa: got = t.invalidate_s2_ipa(r.vmid, r.base); break;
        }
      }
      ASSERT_EQ(got, before.size() - expected_left.size());
      std::vector<TlbEntry> left;
      t.for_each([&](const TlbEntry& e) { left.push_back(e); });
      ASSERT_EQ(left.size(), expected_left.size());
      for (size_t i = 0; i < left.size(); ++i) {  // for_each order is stable
        EXPECT_EQ(left[i].input_addr, expected_left[i].input_addr);
        EXPECT_EQ(left[i].output_addr, expected_left[i].output_addr);
      }
    }
  }
}

TEST(Replacement, SplitMixIsDeterministic) {
  SplitMix64 a(1), b(1), c(2);
  for (int i = 0; i < 10; ++i) {
    const uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
  }
}

}  // namespace
}  // namespace smmu_vp::smmu

// The translation path end to end on the model cores: STE and CD from memory
// and from the config cache, TLB hits and misses, walks, and the event record
// of each failure, with tables built by the test's own builder.
#include "smmu/translator.h"

#include <gtest/gtest.h>

#include "fake_memory.h"
#include "table_builder.h"

namespace smmu_vp::smmu {
namespace {

constexpr uint64_t kBase = 0x8000'0000;
constexpr uint64_t kStrtab = kBase;            // 64 STEs
constexpr uint64_t kCd = kBase + 0x1'0000;
constexpr uint64_t kTables = kBase + 0x10'0000;
constexpr Ps kLatency = 50'000;

class TranslatorTest : public ::testing::Test {
 protected:
  TranslatorTest()
      : mem_(kBase, 16 << 20, kLatency),
        tables_(mem_, 1, 12, 48, 0, kTables, kTables + (4 << 20)),
        translator_(mem_, SmmuFeatures::v3_3_profile(), config(), stats_, "smmu") {
    put_ste(3, s1_ste());
    put_cd(kCd, cd(5));
    tables_.map(0x4000'0000, 0x9000'0000, 3);
    tables_.map(0x4020'0000, 0x9020'0000, 2);  // a 2 MiB block
    test::LeafBits ro;
    ro.read_only = true;
    tables_.map(0x4000'1000, 0x9000'5000, 3, ro);
  }

  // Stream 3's STE (stage 1, its CD at kCd) and a CD of `asid` over the tables.
  static DecodedSte s1_ste() {
    DecodedSte s;
    s.config = ste::kS1Trans;
    s.s1_context_ptr = kCd;
    return s;
  }
  DecodedCd cd(uint16_t asid) {
    DecodedCd c;
    c.t0sz = 16;
    c.granule = Granule::k4K;
    c.ips_bits = 48;
    c.asid = asid;
    c.ttb0 = tables_.ttb();
    return c;
  }
  static TranslatorConfig config() {
    TranslatorConfig c;
    c.walker_slots = 1;
    return c;
  }
  void put_ste(uint32_t sid, const DecodedSte& s) {
    const SteWords w = encode_ste(s);
    mem_.poke(kStrtab + sid * 64ull, w.data(), sizeof w);
  }
  void put_cd(uint64_t addr, const DecodedCd& c) {
    const CdWords w = encode_cd(c);
    mem_.poke(addr, w.data(), sizeof w);
  }
  TranslationResult translate(uint32_t sid, uint64_t va, bool write = false, Ps at = 0) {
    TranslationRequest r;
    r.sid = sid;
    r.addr = va;
    r.access.write = write;
    r.at = at;
    return translator_.translate(kStreamTable, r);
  }
  uint64_t counter(const std::string& path) {
    const Counter* c = stats_.find_counter(path);
    return c ? c->value() : 0;
  }

  const StreamTableConfig kStreamTable{kStrtab, false, 0, 6};
  StatsRegistry stats_;
  test::FakeMemory mem_;
  test::TableBuilder tables_;
  Translator translator_;
};

TEST_F(TranslatorTest, MissWalksThenHitIsFast) {
  const TranslationResult miss = translate(3, 0x4000'0123);
  ASSERT_EQ(miss.kind, TranslationResult::Kind::kTranslated);
  EXPECT_EQ(miss.pa, 0x9000'0123u);
  EXPECT_FALSE(miss.tlb_hit);
  EXPECT_EQ(miss.span, 0x1000u - 0x123u);
  // STE, CD and four descriptor reads, each one memory latency.
  EXPECT_GE(miss.done, 6 * kLatency);

  const TranslationResult hit = translate(3, 0x4000'0456, false, miss.done);
  ASSERT_EQ(hit.kind, TranslationResult::Kind::kTranslated);
  EXPECT_TRUE(hit.tlb_hit);
  EXPECT_EQ(hit.pa, 0x9000'0456u);
  EXPECT_LT(hit.done - miss.done, kLatency);  // no memory access at all
  EXPECT_EQ(counter("smmu.config_cache.ste.hits"), 1u);
  EXPECT_EQ(counter("smmu.tlb.hits"), 1u);
}

// IHI 0070 5.4 (HAD0): with it set in the CD, APTable on the walk's table
// descriptors no longer restricts the page (issue 31: it still applied).
TEST_F(TranslatorTest, Had0InTheCdDisablesApTable) {
  tables_.or_bits(0x4000'0000, 1, 1ull << 62);  // APTable[1], no writes, on the level-1 table descriptor
  EXPECT_EQ(translate(3, 0x4000'0000, /*write=*/true).event.id, EventId::kPermission);
  DecodedCd had = cd(6);
  had.had0 = true;
  put_cd(kCd, had);
  translator_.config_cache().invalidate_all();
  translator_.tlb().invalidate_all();
  translator_.walk_cache().invalidate_all();
  EXPECT_TRUE(translate(3, 0x4000'0000, /*write=*/true).ok());
}

TEST_F(TranslatorTest, BlockMappingsAreCachedWhole) {
  ASSERT_TRUE(translate(3, 0x4020'0000).ok());
  const TranslationResult r = translate(3, 0x403F'FFF0);
  EXPECT_TRUE(r.tlb_hit);
  EXPECT_EQ(r.pa, 0x903F'FFF0u);
  EXPECT_EQ(r.span, 0x10u);
}

TEST_F(TranslatorTest, UnmappedAddressGivesTranslationFaultRecord) {
  const TranslationResult r = translate(3, 0x5000'0000, /*write=*/true);
  ASSERT_EQ(r.kind, TranslationResult::Kind::kFault);
  EXPECT_EQ(r.event.id, EventId::kTranslation);
  EXPECT_EQ(r.event.sid, 3u);
  EXPECT_EQ(r.event.input_addr, 0x5000'0000u);
  EXPECT_FALSE(r.event.rnw);
  EXPECT_FALSE(r.event.s2);
  EXPECT_EQ(counter("smmu.faults.F_TRANSLATION"), 1u);
}

TEST_F(TranslatorTest, WriteToReadOnlyPageIsPermissionFaultEvenAfterAHit) {
  ASSERT_TRUE(translate(3, 0x4000'1000).ok());  // cached by a read
  const TranslationResult r = translate(3, 0x4000'1008, /*write=*/true);
  ASSERT_EQ(r.kind, TranslationResult::Kind::kFault);
  EXPECT_EQ(r.event.id, EventId::kPermission);
}

TEST_F(TranslatorTest, StreamErrors) {
  EXPECT_EQ(translate(64, 0x4000'0000).event.id, EventId::kBadStreamId);  // beyond the table
  EXPECT_EQ(translate(4, 0x4000'0000).event.id, EventId::kBadSte);        // STE.V = 0
  DecodedSte abort_ste;
  abort_ste.config = ste::kAbort;
  put_ste(7, abort_ste);
  EXPECT_EQ(translate(7, 0x4000'0000).kind, TranslationResult::Kind::kAbort);
  DecodedSte bypass_ste;
  bypass_ste.config = ste::kBypass;
  put_ste(8, bypass_ste);
  const TranslationResult b = translate(8, 0x1234'5678);
  EXPECT_EQ(b.kind, TranslationResult::Kind::kBypass);
  EXPECT_EQ(b.pa, 0x1234'5678u);
  DecodedSte bad_cd_ste;
  bad_cd_ste.config = ste::kS1Trans;
  bad_cd_ste.s1_context_ptr = kCd + 0x1000;  // all zero: CD.V = 0
  put_ste(9, bad_cd_ste);
  EXPECT_EQ(translate(9, 0x4000'0000).event.id, EventId::kBadCd);
}

TEST_F(TranslatorTest, StaleConfigIsServedUntilInvalidated) {
  ASSERT_TRUE(translate(3, 0x4000'0000).ok());
  DecodedSte abort_ste;
  abort_ste.config = ste::kAbort;
  put_ste(3, abort_ste);
  // The cached STE still translates: software must issue CFGI_STE.
  EXPECT_TRUE(translate(3, 0x4000'0000).ok());
  translator_.config_cache().invalidate_ste(3);
  EXPECT_EQ(translate(3, 0x4000'0000).kind, TranslationResult::Kind::kAbort);
}

// The decoded STE/CD is reused while the cache entry it came from is
// unchanged; an entry replaced in place (same address, other words) must be
// decoded again.
TEST_F(TranslatorTest, CachedDescriptorReplacedInPlaceIsDecodedAgain) {
  ASSERT_TRUE(translate(3, 0x4000'0000).ok());
  const CachedDescriptor* before = translator_.config_cache().lookup_ste(3);
  DecodedSte abort_ste;
  abort_ste.config = ste::kAbort;
  translator_.config_cache().insert_ste(3, encode_ste(abort_ste));
  ASSERT_EQ(translator_.config_cache().lookup_ste(3), before);  // the same entry, new words
  EXPECT_EQ(translate(3, 0x4000'0000).kind, TranslationResult::Kind::kAbort);

  // The same for the CD: another ASID in place of the cached one.
  translator_.config_cache().insert_ste(3, encode_ste(s1_ste()));
  ASSERT_TRUE(translate(3, 0x4000'0000).ok());
  translator_.config_cache().insert_cd(3, 0, encode_cd(cd(6)));
  const uint64_t misses = counter("smmu.tlb.misses");
  ASSERT_TRUE(translate(3, 0x4000'0000).ok());
  EXPECT_EQ(counter("smmu.tlb.misses"), misses + 1);  // ASID 6 has no TLB entry yet
}

TEST_F(TranslatorTest, ConcurrentWalksQueueForTheWalker) {
  // Warm the config cache so both translations only walk.
  ASSERT_TRUE(translate(3, 0x4000'0000).ok());
  translator_.tlb().invalidate_all();
  translator_.walk_cache().invalidate_all();
  const Ps at = 10'000'000;
  const TranslationResult a = translate(3, 0x4000'0000, false, at);
  const TranslationResult b = translate(3, 0x4020'0000, false, at);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.done, at + 3 * 2'000 + 4 * (kLatency + 2'000));  // lookups, then four reads
  // One walker slot: the second walk (one read below the cached level-2
  // table) starts only when the first has ended.
  EXPECT_EQ(b.done, a.done + kLatency + 2'000);
}

// A translator with micro-TLBs (`cfg`) over stream 3's one mapping,
// 0x4000'0000 -> 0x9000'0000, in memory of its own.
struct MicroTlbBench {
  explicit MicroTlbBench(const TranslatorConfig& cfg)
      : mem(kBase, 16 << 20, kLatency),
        tables(mem, 1, 12, 48, 0, kTables, kTables + (4 << 20)),
        tr(mem, SmmuFeatures::v3_3_profile(), cfg, stats, "smmu") {
    DecodedSte s;
    s.config = ste::kS1Trans;
    s.s1_context_ptr = kCd;
    const SteWords sw = encode_ste(s);
    mem.poke(kStrtab + 3 * 64, sw.data(), sizeof sw);
    DecodedCd c;
    c.t0sz = 16;
    c.ips_bits = 48;
    c.ttb0 = tables.ttb();
    const CdWords cw = encode_cd(c);
    mem.poke(kCd, cw.data(), sizeof cw);
    tables.map(0x4000'0000, 0x9000'0000, 3);
    req.sid = 3;
    req.addr = 0x4000'0000;
  }
  TranslationResult translate() { return tr.translate(st, req); }

  StatsRegistry stats;
  test::FakeMemory mem;
  test::TableBuilder tables;
  Translator tr;
  const StreamTableConfig st{kStrtab, false, 0, 6};
  TranslationRequest req;
};

TEST(TranslatorMicroTlb, HitsInTheMicroTlbSkipTheMainOne) {
  TranslatorConfig cfg;
  cfg.micro_tlb_entries = 4;
  MicroTlbBench b(cfg);
  b.req.port = 1;
  ASSERT_TRUE(b.translate().ok());  // walk; fills both TLBs
  const TranslationResult hit = b.translate();
  EXPECT_TRUE(hit.tlb_hit);
  ASSERT_NE(b.tr.micro_tlb(1), nullptr);
  EXPECT_EQ(b.tr.micro_tlb(1)->stats().hits, 1u);
  EXPECT_EQ(b.tr.tlb().stats().hits, 0u);  // the main TLB was not asked
  // Another port has its own, empty micro-TLB: the main TLB serves it.
  b.req.port = 0;
  EXPECT_TRUE(b.translate().tlb_hit);
  EXPECT_EQ(b.tr.tlb().stats().hits, 1u);
  unsigned tlbs = 0;
  b.tr.for_each_tlb([&](Tlb&) { ++tlbs; });
  EXPECT_EQ(tlbs, 3u);  // main + ports 0 and 1
}

// The micro-TLB's own cost, pinned (issue 37: charging the main TLB's for
// it survived every test): a micro-TLB hit costs the two configuration
// lookups and micro_tlb.lookup_ns, no main TLB lookup.
TEST(TranslatorMicroTlb, AHitCostsTheMicroTlbsLookupOnly) {
  TranslatorConfig cfg;
  cfg.micro_tlb_entries = 4;
  cfg.micro_tlb_lookup_ns = 7;
  cfg.tlb_lookup_ns = 11;
  cfg.config_lookup_ns = 2;
  MicroTlbBench b(cfg);
  ASSERT_TRUE(b.translate().ok());  // a walk fills both TLBs
  b.req.at = 10'000'000;
  const TranslationResult hit = b.translate();
  ASSERT_TRUE(hit.tlb_hit);
  EXPECT_EQ(hit.done - b.req.at, 2 * 2'000u + 7'000u);
}

TEST_F(TranslatorTest, DrainedByCoversTranslationsThatArrivedBefore) {
  const TranslationResult a = translate(3, 0x4000'0000, false, 1'000);  // a walk: long
  const TranslationResult b = translate(3, 0x4000'0008, false, 900'000);  // a hit, later
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(translator_.drained_by(500), 0u);            // nothing had arrived
  EXPECT_EQ(translator_.drained_by(1'000), a.done);      // the walk must finish first
  EXPECT_EQ(translator_.drained_by(2'000'000), std::max(a.done, b.done));
  translator_.retire(std::max(a.done, b.done));          // all done: nothing left to wait for
  EXPECT_EQ(translator_.drained_by(2'000'000), 0u);
}

// reset() (the fuzz harnesses reuse one Translator per process): a run after
// it behaves exactly like the first run of a new Translator, timing included.
TEST_F(TranslatorTest, ResetForgetsCachesAndReservations) {
  const TranslationResult first = translate(3, 0x4000'0123);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first.tlb_hit);
  ASSERT_TRUE(translate(3, 0x4000'0123).tlb_hit);
  EXPECT_NE(translator_.drained_by(0), 0u);
  translator_.reset();
  EXPECT_EQ(translator_.tlb().size(), 0u);
  EXPECT_EQ(translator_.walk_cache().valid_entries(), 0u);
  EXPECT_EQ(translator_.config_cache().ste_size(), 0u);
  EXPECT_EQ(translator_.config_cache().cd_size(), 0u);
  EXPECT_EQ(translator_.drained_by(~Ps{0}), 0u);
  // Time 0 again: same walk, same completion time (no slot is still reserved).
  const TranslationResult again = translate(3, 0x4000'0123);
  EXPECT_FALSE(again.tlb_hit);
  EXPECT_EQ(again.pa, first.pa);
  EXPECT_EQ(again.done, first.done);
  EXPECT_EQ(counter("smmu.translations"), 3u);  // statistics keep counting
}

TEST_F(TranslatorTest, StaleCheckCountsHitsOnRemovedMappings) {
  translator_.enable_stale_check(mem_);
  const TranslationResult miss = translate(3, 0x4000'0000);
  ASSERT_TRUE(miss.ok());
  ASSERT_TRUE(translate(3, 0x4000'0010, false, 1'000'000).tlb_hit);  // still mapped: not stale
  EXPECT_EQ(counter("smmu.stale_check.checks"), 1u);
  EXPECT_EQ(counter("smmu.stale_check.stale_hits"), 0u);
  // Software removes the mapping without invalidating the TLB.
  tables_.set_raw(0x4000'0000, 3, 0);
  const TranslationResult stale = translate(3, 0x4000'0020, false, 5'000'000);
  EXPECT_TRUE(stale.tlb_hit);  // the TLB still serves it: that is the window
  EXPECT_EQ(stale.pa, 0x9000'0020u);
  EXPECT_EQ(counter("smmu.stale_check.stale_hits"), 1u);
  const Histogram* since = stats_.find_histogram("smmu.stale_check.since_last_valid_ns");
  ASSERT_NE(since, nullptr);
  // Last seen valid at the previous hit (1 us plus lookups), stale at 5 us.
  EXPECT_NEAR(since->max(), 4000.0, 10.0);
  // After invalidation the walk faults instead, and nothing is stale.
  translator_.tlb().invalidate_all();
  EXPECT_EQ(translate(3, 0x4000'0020, false, 6'000'000).event.id, EventId::kTranslation);
  EXPECT_EQ(counter("smmu.stale_check.stale_hits"), 1u);
}

}  // namespace
}  // namespace smmu_vp::smmu

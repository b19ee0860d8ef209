// A distributed SMMU on the model cores (tbu.h): TBU hits answered without
// the TCU, misses sent over DTI, translation slots and hit-under-miss,
// invalidations reaching every TBU's TLBs, CFGI making TBUs forget streams.
#include "smmu/tbu.h"

#include <gtest/gtest.h>

#include "fake_memory.h"
#include "smmu/command_executor.h"
#include "smmu/commands.h"
#include "smmu/translator.h"
#include "table_builder.h"

namespace smmu_vp::smmu {
namespace {

constexpr uint64_t kBase = 0x8000'0000;
constexpr uint64_t kStrtab = kBase;
constexpr uint64_t kCd = kBase + 0x1'0000;
constexpr uint64_t kTables = kBase + 0x10'0000;
constexpr Ps kLatency = 50'000;  // one memory read
constexpr Ps kDti = 8'000;       // DtiTiming's default, one way
constexpr Ps kMicro = 1'000, kMain = 3'000;

class TbuTest : public ::testing::Test {
 protected:
  explicit TbuTest(unsigned slots = 16, bool hum = true)
      : mem_(kBase, 16 << 20, kLatency),
        tables_(mem_, 1, 12, 48, 0, kTables, kTables + (4 << 20)),
        translator_(mem_, SmmuFeatures::v3_3_profile(), config(slots, hum), stats_, "smmu"),
        executor_(translator_, SmmuFeatures::v3_3_profile(), &stats_) {
    DecodedSte s;
    s.config = ste::kS1Trans;
    s.s1_context_ptr = kCd;
    const SteWords sw = encode_ste(s);
    mem_.poke(kStrtab + 3 * 64, sw.data(), sizeof sw);
    mem_.poke(kStrtab + 4 * 64, sw.data(), sizeof sw);
    DecodedCd c;
    c.t0sz = 16;
    c.ips_bits = 48;
    c.asid = 5;
    c.ttb0 = tables_.ttb();
    const CdWords cw = encode_cd(c);
    mem_.poke(kCd, cw.data(), sizeof cw);
    for (uint64_t i = 0; i < 64; ++i) tables_.map(0x4000'0000 + i * 0x1000, 0x9000'0000 + i * 0x1000, 3);
  }
  static TranslatorConfig config(unsigned slots, bool hum) {
    TranslatorConfig c;
    c.distributed.tbus = {{"tbu0", {"dev0"}}, {"tbu1", {"dev1"}}};
    c.distributed.port_tbu = {0, 1};
    c.distributed.tbu.translation_slots = slots;
    c.distributed.tbu.hit_under_miss = hum;
    return c;
  }
  TranslationResult translate(unsigned port, uint64_t va, Ps at, uint32_t sid = 3) {
    TranslationRequest r;
    r.port = port;
    r.sid = sid;
    r.addr = va;
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
  CommandExecutor executor_;
};

TEST_F(TbuTest, AHitIsTheTbusAloneAMissGoesToTheTcuOverDti) {
  const TranslationResult miss = translate(0, 0x4000'0123, 0);
  ASSERT_EQ(miss.kind, TranslationResult::Kind::kTranslated);
  EXPECT_EQ(miss.pa, 0x9000'0123u);
  // The TBU's lookup, a DTI hop, the TCU (configuration, its TLB, a walk of
  // STE, CD and four descriptors), the hop back.
  EXPECT_GE(miss.done, kMain + 2 * kDti + 6 * kLatency);
  EXPECT_EQ(counter("smmu.tbu.tbu0.misses"), 1u);
  const uint64_t config_lookups = counter("smmu.config_cache.ste.hits") + counter("smmu.config_cache.ste.misses");

  const Ps at = 10'000'000;
  const TranslationResult hit = translate(0, 0x4000'0456, at);
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(hit.pa, 0x9000'0456u);
  EXPECT_EQ(hit.done, at + kMicro);  // the micro-TLB: nothing else
  EXPECT_EQ(counter("smmu.tbu.tbu0.hits"), 1u);
  EXPECT_EQ(counter("smmu.config_cache.ste.hits") + counter("smmu.config_cache.ste.misses"), config_lookups);
  EXPECT_EQ(translator_.tlb().stats().lookups, 1u);  // the TCU's TLB: the miss's lookup only

  // The other TBU has learned nothing: its first access is a miss, which
  // the TCU answers from its own TLB, without a walk.
  const TranslationResult other = translate(1, 0x4000'0456, at);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(counter("smmu.tbu.tbu1.misses"), 1u);
  EXPECT_EQ(translator_.tlb().stats().hits, 1u);
  EXPECT_LT(other.done - at, kLatency);  // no memory read
  EXPECT_GE(other.done - at, kMain + 2 * kDti);
}

TEST_F(TbuTest, ATlbiReachesEveryTbuAndACfgiMakesThemForgetTheStream) {
  ASSERT_TRUE(translate(0, 0x4000'0000, 0).ok());
  ASSERT_TRUE(translate(1, 0x4000'0000, 0).ok());
  Command tlbi;
  tlbi.opcode = Opcode::kTlbiNhVa;
  tlbi.asid = 5;
  tlbi.addr = 0x4000'0000;
  const ExecResult r = executor_.execute(tlbi);
  // The TCU's TLB, and each TBU's micro-TLB and main TLB.
  EXPECT_EQ(r.tlb_entries, 5u);
  EXPECT_EQ(r.tbu_tlb_entries, 4u);
  EXPECT_EQ(counter("smmu.cmdq.invalidated.tbu_tlb"), 4u);
  EXPECT_EQ(counter("smmu.tbu.tbu0.invalidations"), 1u);
  EXPECT_EQ(counter("smmu.tbu.tbu1.invalidations"), 1u);
  EXPECT_FALSE(translate(0, 0x4000'0000, 1'000'000).tlb_hit);  // gone from the TBU too

  ASSERT_NE(translator_.tbus()[0]->context(3, false, 0), nullptr);
  Command cfgi;
  cfgi.opcode = Opcode::kCfgiSte;
  cfgi.sid = 3;
  executor_.execute(cfgi);
  EXPECT_EQ(translator_.tbus()[0]->context(3, false, 0), nullptr);
  EXPECT_EQ(translator_.tbus()[1]->context(3, false, 0), nullptr);
}

// Two slots, both held by misses: a hit that arrives meanwhile waits for
// one (MMU-600: every transaction holds a slot until it leaves the TBU).
class TbuTwoSlots : public TbuTest {
 protected:
  TbuTwoSlots() : TbuTest(2, true) {}
};

TEST_F(TbuTwoSlots, AHitWaitsForASlotWhenMissesHoldThemAll) {
  ASSERT_TRUE(translate(0, 0x4000'0000, 0).ok());  // the stream known, page 0 cached
  const Ps at = 10'000'000;
  const TranslationResult m1 = translate(0, 0x4000'1000, at);
  const TranslationResult m2 = translate(0, 0x4000'2000, at);
  const TranslationResult hit = translate(0, 0x4000'0008, at + 1'000);
  ASSERT_TRUE(m1.ok() && m2.ok() && hit.ok());
  EXPECT_TRUE(hit.tlb_hit);
  EXPECT_EQ(hit.done, std::min(m1.done, m2.done) + kMicro);
  EXPECT_EQ(counter("smmu.tbu.tbu0.slot_waits"), 1u);
}

// Without hit-under-miss, a hit leaves after the miss before it even with
// slots to spare.
class TbuInOrder : public TbuTest {
 protected:
  TbuInOrder() : TbuTest(16, false) {}
};

TEST_F(TbuInOrder, AHitLeavesAfterTheMissBeforeIt) {
  ASSERT_TRUE(translate(0, 0x4000'0000, 0).ok());
  const Ps at = 10'000'000;
  const TranslationResult miss = translate(0, 0x4000'1000, at);
  const TranslationResult hit = translate(0, 0x4000'0008, at + 1'000);
  ASSERT_TRUE(miss.ok() && hit.ok());
  EXPECT_TRUE(hit.tlb_hit);
  EXPECT_EQ(hit.done, miss.done);
  EXPECT_EQ(counter("smmu.tbu.tbu0.slot_waits"), 0u);
}

TEST_F(TbuTwoSlots, WithHitUnderMissTheHitPassesTheMiss) {
  ASSERT_TRUE(translate(0, 0x4000'0000, 0).ok());
  const Ps at = 10'000'000;
  const TranslationResult miss = translate(0, 0x4000'1000, at);
  const TranslationResult hit = translate(0, 0x4000'0008, at + 1'000);
  EXPECT_EQ(hit.done, at + 1'000 + kMicro);
  EXPECT_LT(hit.done, miss.done);
}

}  // namespace
}  // namespace smmu_vp::smmu

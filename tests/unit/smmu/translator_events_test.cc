// Every event the translation path can raise, provoked through
// Translator::translate only, and the record each one produces decoded from
// its 32-byte layout (IHI 0070 7.3; the STE and CD of IHI 0070 5.2 and 5.4):
// configuration and fetch errors of the stream table and CD table, walk
// aborts, the four translation faults at stage 1, at stage 2 and nested (with
// S2, CLASS and the IPA), plus the paths around them: S1DSS, substream 0, TLB
// tagging by ASID and VMID, config cache reuse and `span`.
//
// All tables are real, built in a FakeMemory: STEs and CDs with the model's
// encoders, translation tables with the test's own TableBuilder.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "fake_memory.h"
#include "smmu/translator.h"
#include "table_builder.h"

namespace smmu_vp::smmu {
namespace {

using test::FakeMemory;
using test::LeafBits;
using test::TableBuilder;

constexpr Ps kLatency = 50'000;
constexpr uint64_t kKiB = 1ull << 10;
constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;

// ---- Physical memory: 64 MiB at 2 GiB.
constexpr uint64_t kBase = 0x8000'0000;
constexpr uint64_t kMemSize = 64 * kMiB;
constexpr uint64_t kStrtab = kBase;                // linear, 64 STEs (LOG2SIZE 6)
constexpr uint64_t kL1Std = kBase + 0x2000;        // two-level stream table: 16 L1 descriptors
constexpr uint64_t kL2StdA = kBase + 0x3000;       // 16 STEs (SPAN 5)
constexpr uint64_t kL2StdB = kBase + 0x3400;       // 2 STEs (SPAN 2)
constexpr uint64_t kCdArea = kBase + 0x1'0000;     // CDs and CD tables, 64 KiB
constexpr uint64_t kS1Pool = kBase + 0x10'0000;    // stage 1 tables, ASID 1 world
constexpr uint64_t kS1PoolB = kBase + 0x50'0000;   // stage 1 tables, ASID 2 world
constexpr uint64_t kS2Pool = kBase + 0x80'0000;    // stage 2 tables, VMID 7
constexpr uint64_t kS2PoolB = kBase + 0xA0'0000;   // stage 2 tables, VMID 8
// Nested: stage 1 tables and CDs at PAs [kNestPool, +2 MiB), seen through the
// IPA window [kIpaWin, +2 MiB) that stage 2 maps there with one block.
constexpr uint64_t kNestPool = kBase + 0x100'0000;
constexpr uint64_t kIpaWin = 0x10'0000'0000;       // 64 GiB, inside the 40-bit IPA space
constexpr uint64_t kNestCds = 0x1F'0000;           // offset of the CDs in the window
// Further IPA regions next to the window:
constexpr uint64_t kIpaNoRead = kIpaWin + 0x20'0000;  // 2 MiB block, S2AP read = 0
constexpr uint64_t kIpaPages = kIpaWin + 0x40'0000;   // 4 KiB pages (one level 3 table)
constexpr uint64_t kIpaHole = kIpaWin + 0x60'0000;    // not mapped at stage 2

// SL0 = 1 with S2T0SZ = 24: 40-bit IPAs from level 1 (two concatenated tables).
constexpr unsigned kS2T0sz = 24;
constexpr unsigned kS2Sl0 = 1;
constexpr unsigned kS2Start = 1;
constexpr unsigned kS2Ias = 64 - kS2T0sz;

const AccessType kRead = AccessType{false, false, false};
const AccessType kWrite = AccessType{true, false, false};
const AccessType kPrivRead = AccessType{false, false, true};
const AccessType kPrivWrite = AccessType{true, false, true};
const AccessType kExec = AccessType{false, true, false};
const AccessType kPrivExec = AccessType{false, true, true};

// What a fault record must say.
struct Want {
  EventId id = EventId::kNone;
  uint32_t sid = 0;
  bool ssv = false;
  uint32_t ssid = 0;
  // Translation-class records only:
  uint64_t addr = 0;
  AccessType acc;
  bool s2 = false;
  FaultClass cls = FaultClass::kInput;
  uint64_t ipa = 0;  // compared as IPA[51:12]

  Want& substream(uint32_t s) {
    ssv = true;
    ssid = s;
    return *this;
  }
};

Want config_event(EventId id, uint32_t sid) {
  Want w;
  w.id = id;
  w.sid = sid;
  return w;
}
Want s1_fault(EventId id, uint32_t sid, uint64_t addr, const AccessType& a = kRead) {
  Want w = config_event(id, sid);
  w.addr = addr;
  w.acc = a;
  return w;
}
Want s2_fault(EventId id, uint32_t sid, uint64_t addr, FaultClass cls, uint64_t ipa, const AccessType& a = kRead) {
  Want w = s1_fault(id, sid, addr, a);
  w.s2 = true;
  w.cls = cls;
  w.ipa = ipa;
  return w;
}

// The record as software reads it from the event queue: encoded to the
// 32-byte layout and decoded back, with ID and StreamID also checked in the
// raw dword 0.
EventRecord as_written(const TranslationResult& r) {
  const std::array<uint64_t, 4> w = r.event.encode();
  EXPECT_EQ(w[0] & 0xFF, static_cast<uint64_t>(r.event.id));
  EXPECT_EQ(w[0] >> 32, r.event.sid);
  return EventRecord::decode(w);
}

// Configuration and fetch events (C_*, F_STE_FETCH, F_CD_FETCH,
// F_STREAM_DISABLED): the stream and substream identify what was wrong.
void expect_config_event(const TranslationResult& r, const Want& want) {
  ASSERT_EQ(r.kind, TranslationResult::Kind::kFault) << "translated to 0x" << std::hex << r.pa;
  const EventRecord e = as_written(r);
  EXPECT_EQ(e.id, want.id) << "got " << event_name(e.id) << ", want " << event_name(want.id);
  EXPECT_EQ(e.sid, want.sid);
  EXPECT_EQ(e.ssv, want.ssv);
  if (want.ssv) {
    EXPECT_EQ(e.ssid, want.ssid);
  }
  EXPECT_FALSE(e.stall);
}

// Translation-class events (F_WALK_EABT, F_TRANSLATION, F_ADDR_SIZE,
// F_ACCESS, F_PERMISSION): also the input address, the transaction's
// attributes, the stage, CLASS and the IPA.
void expect_fault(const TranslationResult& r, const Want& want) {
  ASSERT_EQ(r.kind, TranslationResult::Kind::kFault) << "translated to 0x" << std::hex << r.pa;
  expect_config_event(r, want);
  const EventRecord e = as_written(r);
  EXPECT_EQ(e.input_addr, want.addr) << std::hex << e.input_addr;
  EXPECT_EQ(e.rnw, !want.acc.write);
  EXPECT_EQ(e.pnu, want.acc.privileged);
  EXPECT_EQ(e.ind, want.acc.instruction);
  EXPECT_EQ(e.s2, want.s2);
  EXPECT_EQ(static_cast<int>(e.cls), static_cast<int>(want.cls)) << "CLASS (0 CD, 1 TT, 2 IN)";
  if (want.s2) {
    EXPECT_EQ(e.ipa, want.ipa & 0x000F'FFFF'FFFF'F000ull) << std::hex << e.ipa;
    if (want.cls == FaultClass::kTranslationTable) {
      EXPECT_TRUE(e.ttrnw);
    }
  } else if (want.id != EventId::kWalkEabt) {
    EXPECT_EQ(e.ipa, 0u) << "IPA of a stage 1 fault";
  }
}

class TranslatorEvents : public ::testing::Test {
 protected:
  TranslatorEvents()
      : mem_(kBase, kMemSize, kLatency),
        s1_(mem_, 1, 12, 48, 0, kS1Pool, kS1Pool + 4 * kMiB),
        s1b_(mem_, 1, 12, 48, 0, kS1PoolB, kS1PoolB + 2 * kMiB),
        s2_(mem_, 2, 12, kS2Ias, kS2Start, kS2Pool, kS2Pool + 2 * kMiB),
        s2b_(mem_, 2, 12, kS2Ias, kS2Start, kS2PoolB, kS2PoolB + 2 * kMiB),
        n1_(mem_, 1, 12, 48, 0, kNestPool, kNestPool + kNestCds, kIpaWin - kNestPool),
        translator_(mem_, SmmuFeatures::v3_3_profile(), TranslatorConfig{}, stats_, "smmu") {
    // Stage 1 (ASID 1 world).
    LeafBits ro, priv_only, uxn, pxn, no_af;
    ro.read_only = true;
    priv_only.user = false;
    uxn.read_only = uxn.uxn = true;  // read-only, so that privileged execution is allowed
    pxn.read_only = pxn.pxn = true;
    no_af.af = false;
    s1_.map(0x4000'0000, 0x9000'0000, 3);
    s1_.map(0x4000'1000, 0x9000'1000, 3, ro);
    s1_.map(0x4000'2000, 0x9000'2000, 3, priv_only);
    s1_.map(0x4000'3000, 0x9000'3000, 3, uxn);
    s1_.map(0x4000'4000, 0x9000'4000, 3, pxn);
    s1_.map(0x4000'5000, 0x9000'5000, 3, no_af);
    s1_.map(0x4000'6000, 0x1'0000'0000, 3);  // beyond a 32-bit IPS
    s1_.map(0x4020'0000, 0x9020'0000, 2);    // 2 MiB block
    s1_.map(0x8000'0000, 0x1'4000'0000, 1);  // 1 GiB block
    // Stage 1 (ASID 2 world): the same VA elsewhere.
    s1b_.map(0x4000'0000, 0xB000'0000, 3);

    // Stage 2 (VMID 7): the nested window, data IPAs.
    LeafBits s2_noread, s2_ro, s2_noaf, s2_xn;
    s2_noread.s2_read = false;
    s2_ro.s2_write = false;
    s2_noaf.af = false;
    s2_xn.s2_xn = 2;  // execute never
    s2_.map(kIpaWin, kNestPool, 2);
    s2_.map(kIpaNoRead, kNestPool + 0x20'0000, 2, s2_noread);
    for (uint64_t off = 0; off < 4 * 0x1000; off += 0x1000) s2_.map(kIpaPages + off, kNestPool + 0x40'0000 + off, 3);
    s2_.map(0x1000'0000, 0xA000'0000, 3);
    s2_.map(0x1000'1000, 0xA000'1000, 3, s2_ro);
    s2_.map(0x1000'2000, 0xA000'2000, 3, s2_noaf);
    s2_.map(0x1000'3000, 0xA000'3000, 3, s2_xn);
    s2_.map(0x1000'4000, 0x1'0000'0000, 3);  // beyond a 32-bit S2PS
    s2_.map(0x1020'0000, 0xA020'0000, 3);
    s2_.map(0x1020'1000, 0xA020'1000, 3);
    s2_.map(0x4000'0000, 0x1'0000'0000, 1);  // 1 GiB block
    // Stage 2 (VMID 8): the same IPA elsewhere.
    s2b_.map(0x1000'0000, 0xC000'0000, 3);

    // Nested stage 1: outputs are IPAs, tables are at IPAs.
    n1_.map(0x4000'0000, 0x1000'0000, 3);
    n1_.map(0x4000'1000, 0x1000'1000, 3);       // stage 2 read-only
    n1_.map(0x4000'2000, 0x2000'0000, 3);       // IPA not mapped at stage 2
    n1_.map(0x4000'3000, 1ull << kS2Ias, 3);    // IPA beyond the stage 2 input size
    n1_.map(0x4000'4000, kIpaPages + 0x2000, 3);
    n1_.map(0x4020'0000, 0x4000'0000, 2);       // S1 2 MiB block in an S2 1 GiB block
    n1_.map(0x4040'0000, 0x1020'0000, 2);       // S1 2 MiB block over S2 4 KiB pages
    n1_.set_raw(0x6000'0000, 2, kIpaHole | 3);  // next-level table at an unmapped IPA

    // SID 1: stage 1, one CD (ASID 1).
    put_ste(1, s1_ste(kCdArea));
    put_cd(kCdArea, cd(s1_, 1));
  }

  // ---- Descriptors
  static DecodedSte s1_ste(uint64_t cd_ptr, unsigned cdmax = 0, uint8_t s1dss = ste::kTerminate,
                           uint8_t fmt = ste::kLinear) {
    DecodedSte s;
    s.config = ste::kS1Trans;
    s.s1fmt = fmt;
    s.s1_context_ptr = cd_ptr;
    s.s1_cdmax = cdmax;
    s.s1dss = s1dss;
    return s;
  }
  static DecodedSte s2_ste(const TableBuilder& b, uint16_t vmid) {
    DecodedSte s;
    s.config = ste::kS2Trans;
    s.s2_vmid = vmid;
    s.s2_t0sz = kS2T0sz;
    s.s2_sl0 = kS2Sl0;
    s.s2_granule = Granule::k4K;
    s.s2_ps_bits = 48;
    s.s2_ttb = b.ttb();
    return s;
  }
  DecodedSte nested_ste(uint64_t cd_ipa, unsigned cdmax = 0, uint8_t s1dss = ste::kTerminate,
                        uint8_t fmt = ste::kLinear) const {
    DecodedSte s = s2_ste(s2_, 7);
    const DecodedSte s1 = s1_ste(cd_ipa, cdmax, s1dss, fmt);
    s.config = ste::kNested;
    s.s1fmt = s1.s1fmt;
    s.s1_context_ptr = s1.s1_context_ptr;
    s.s1_cdmax = s1.s1_cdmax;
    s.s1dss = s1.s1dss;
    return s;
  }
  static DecodedCd cd(const TableBuilder& b, uint16_t asid) {
    DecodedCd c;
    c.t0sz = 16;
    c.granule = Granule::k4K;
    c.ips_bits = 48;
    c.asid = asid;
    c.ttb0 = b.ttb();
    return c;
  }
  void put_ste(uint32_t sid, const DecodedSte& s, bool valid = true, uint64_t table = kStrtab) {
    const SteWords w = encode_ste(s, valid);
    mem_.poke(table + sid * 64ull, w.data(), sizeof w);
  }
  void put_cd(uint64_t pa, const DecodedCd& c, bool valid = true) {
    const CdWords w = encode_cd(c, valid);
    mem_.poke(pa, w.data(), sizeof w);
  }
  // A CD of the nested window, by its IPA.
  void put_nested_cd(uint64_t ipa, const DecodedCd& c) {
    ASSERT_GE(ipa, kIpaWin);
    put_cd(ipa - kIpaWin + kNestPool, c);
  }

  // ---- Translations
  TranslationResult go(uint32_t sid, uint64_t addr, const AccessType& a = kRead) {
    return run(translator_, linear_, sid, false, 0, addr, a);
  }
  TranslationResult go_ss(uint32_t sid, uint32_t ssid, uint64_t addr, const AccessType& a = kRead) {
    return run(translator_, linear_, sid, true, ssid, addr, a);
  }
  TranslationResult run(Translator& t, const StreamTableConfig& st, uint32_t sid, bool ssv, uint32_t ssid,
                        uint64_t addr, const AccessType& a) {
    TranslationRequest r;
    r.sid = sid;
    r.ssv = ssv;
    r.ssid = ssid;
    r.addr = addr;
    r.access = a;
    r.at = now_;
    const TranslationResult res = t.translate(st, r);
    now_ = std::max(now_, res.done) + 1'000;
    return res;
  }

  uint64_t counter(const std::string& path) const {
    const Counter* c = stats_.find_counter(path);
    return c ? c->value() : 0;
  }
  // Accesses logged by the FakeMemory in [lo, lo + size).
  size_t accesses_in(uint64_t lo, uint64_t size) const {
    size_t n = 0;
    for (const auto& a : mem_.log())
      if (a.pa < lo + size && lo < a.pa + a.len) ++n;
    return n;
  }
  bool read_failed_at(uint64_t pa) const {
    for (const auto& a : mem_.log())
      if (!a.write && !a.ok && a.pa == pa) return true;
    return false;
  }

  const StreamTableConfig linear_{kStrtab, false, 0, 6};
  StatsRegistry stats_;
  FakeMemory mem_;
  TableBuilder s1_, s1b_, s2_, s2b_, n1_;
  Translator translator_;
  Ps now_ = 0;
};

void expect_translated(const TranslationResult& r, uint64_t pa) {
  ASSERT_EQ(r.kind, TranslationResult::Kind::kTranslated)
      << event_name(r.event.id) << " at 0x" << std::hex << r.event.input_addr;
  EXPECT_EQ(r.pa, pa) << std::hex << r.pa;
}

// ===========================================================================
// Stream table
// ===========================================================================
TEST_F(TranslatorEvents, BadStreamIdBeyondLinearTableReadsNothing) {
  mem_.clear_log();
  const TranslationResult r = go_ss(64, 5, 0x4000'0000);  // LOG2SIZE 6: SIDs 0..63
  expect_config_event(r, config_event(EventId::kBadStreamId, 64).substream(5));
  EXPECT_TRUE(mem_.log().empty()) << "no STE may be fetched for an out-of-range StreamID";
  expect_config_event(go(0xFFFF'FFFF, 0x4000'0000), config_event(EventId::kBadStreamId, 0xFFFF'FFFF));
  expect_translated(go(1, 0x4000'0000), 0x9000'0000);  // the table itself is fine
  EXPECT_EQ(counter("smmu.faults.C_BAD_STREAMID"), 2u);
}

TEST_F(TranslatorEvents, BadStreamIdInTwoLevelTable) {
  // SPLIT 4, LOG2SIZE 8: 16 level-1 descriptors of 16 SIDs each.
  const StreamTableConfig two{kL1Std, true, 4, 8};
  mem_.poke64(kL1Std + 1 * 8, kL2StdA | 5);  // SPAN 5: 16 STEs
  mem_.poke64(kL1Std + 2 * 8, 0);            // SPAN 0: invalid
  mem_.poke64(kL1Std + 3 * 8, kL2StdB | 2);  // SPAN 2: 2 STEs
  put_ste(3, s1_ste(kCdArea), true, kL2StdA);  // SID 0x13
  put_ste(1, s1_ste(kCdArea), true, kL2StdB);  // SID 0x31
  expect_translated(run(translator_, two, 0x13, false, 0, 0x4000'0010, kRead), 0x9000'0010);
  expect_translated(run(translator_, two, 0x31, false, 0, 0x4000'0020, kRead), 0x9000'0020);

  mem_.clear_log();
  const TranslationResult span0 = run(translator_, two, 0x23, true, 9, 0x4000'0000, kWrite);
  expect_config_event(span0, config_event(EventId::kBadStreamId, 0x23).substream(9));
  // The level-1 descriptor was read, no STE.
  ASSERT_EQ(mem_.log().size(), 1u);
  EXPECT_EQ(mem_.log()[0].pa, kL1Std + 2 * 8);

  // Beyond the span of a valid level-2 table, and beyond LOG2SIZE.
  expect_config_event(run(translator_, two, 0x33, false, 0, 0x4000'0000, kRead),
                      config_event(EventId::kBadStreamId, 0x33));
  expect_config_event(run(translator_, two, 0x100, false, 0, 0x4000'0000, kRead),
                      config_event(EventId::kBadStreamId, 0x100));
}

TEST_F(TranslatorEvents, SteFetchAbort) {
  put_ste(5, s1_ste(kCdArea));
  mem_.add_error_range(kStrtab + 5 * 64, 64);
  mem_.clear_log();
  const TranslationResult r = go_ss(5, 0, 0x4000'0000);  // SSV with SSID 0 is reported as given
  expect_config_event(r, config_event(EventId::kSteFetch, 5).substream(0));
  EXPECT_EQ(as_written(r).fetch_addr, kStrtab + 5 * 64);  // IHI 0070 7.3: the address of the fetch
  EXPECT_TRUE(read_failed_at(kStrtab + 5 * 64));
  EXPECT_EQ(accesses_in(kCdArea, 64 * kKiB), 0u);
  // Not cached: once the memory answers, the STE is fetched again.
  mem_.clear_error_ranges();
  expect_translated(go(5, 0x4000'0000), 0x9000'0000);

  // Abort on the level-1 descriptor of a two-level table.
  const StreamTableConfig two{kL1Std, true, 4, 8};
  mem_.add_error_range(kL1Std + 4 * 8, 8);
  mem_.clear_log();
  const TranslationResult l1 = run(translator_, two, 0x41, false, 0, 0x4000'0000, kRead);
  expect_config_event(l1, config_event(EventId::kSteFetch, 0x41));
  EXPECT_EQ(as_written(l1).fetch_addr, kL1Std + 4 * 8);
  EXPECT_TRUE(read_failed_at(kL1Std + 4 * 8));
}

TEST_F(TranslatorEvents, BadSteInvalidAndReservedConfig) {
  put_ste(6, s1_ste(kCdArea), /*valid=*/false);
  expect_config_event(go(6, 0x4000'0000), config_event(EventId::kBadSte, 6));
  // IHI 0070 5.2: Config 0b001..0b011 are Reserved and behave as 0b000:
  // abort, no event (this test expected C_BAD_STE before the 5.2 audit).
  for (uint8_t config : {uint8_t{1}, uint8_t{2}, uint8_t{3}}) {
    SCOPED_TRACE(::testing::Message() << "Config " << unsigned{config});
    DecodedSte s = s1_ste(kCdArea);
    s.config = config;
    put_ste(10 + config, s);
    EXPECT_EQ(go_ss(10 + config, 2, 0x4000'0000).kind, TranslationResult::Kind::kAbort);
  }
  // An invalid STE is not cached: making it valid takes effect without CFGI_STE.
  put_ste(6, s1_ste(kCdArea));
  expect_translated(go(6, 0x4000'0000), 0x9000'0000);
  // Stage 2 fields the walker cannot use: SL0 = 0 starts at level 2, which
  // cannot resolve a 40-bit IPA (19 bits, more than 16 concatenated tables).
  DecodedSte bad_sl0 = s2_ste(s2_, 7);
  bad_sl0.s2_sl0 = 0;
  put_ste(20, bad_sl0);
  expect_config_event(go(20, 0x1000'0000), config_event(EventId::kBadSte, 20));
  // Nested: the same stage 2 error is C_BAD_STE, before any CD is read.
  DecodedSte bad_nested = nested_ste(kIpaWin + kNestCds);
  bad_nested.s2_sl0 = 0;
  put_ste(21, bad_nested);
  mem_.clear_log();
  expect_config_event(go(21, 0x4000'0000), config_event(EventId::kBadSte, 21));
  EXPECT_EQ(accesses_in(kNestPool, 8 * kMiB), 0u);
}

TEST_F(TranslatorEvents, BadSteForFeaturesTheSmmuLacks) {
  // SMMUv3.0 profile: no 16K granule, 8-bit VMIDs, 8 SubstreamID bits.
  StatsRegistry stats30;
  Translator v30(mem_, SmmuFeatures::v3_0_profile(), TranslatorConfig{}, stats30, "v30");
  DecodedSte s2_16k = s2_ste(s2_, 7);
  s2_16k.s2_granule = Granule::k16K;
  s2_16k.s2_t0sz = 24;
  s2_16k.s2_sl0 = 1;  // 16K: level 2
  put_ste(22, s2_16k);
  expect_config_event(run(v30, linear_, 22, false, 0, 0x1000'0000, kRead), config_event(EventId::kBadSte, 22));
  // The same STE on an SMMU with 16K is legal (its tables are 4K, so it just faults).
  EXPECT_NE(go(22, 0x1000'0000).event.id, EventId::kBadSte);

  DecodedSte vmid16 = s2_ste(s2_, 0x100);
  put_ste(23, vmid16);
  expect_config_event(run(v30, linear_, 23, false, 0, 0x1000'0000, kRead), config_event(EventId::kBadSte, 23));
  expect_translated(go(23, 0x1000'0000), 0xA000'0000);

  put_ste(24, s1_ste(kCdArea + 0x1000, /*cdmax=*/9, ste::kSubstream0));  // 9 > SSIDSIZE 8
  expect_config_event(run(v30, linear_, 24, false, 0, 0x4000'0000, kRead), config_event(EventId::kBadSte, 24));

  // A copy of the v3.3 features without the 64K granule.
  SmmuFeatures no64k = SmmuFeatures::v3_3_profile();
  no64k.gran64k = false;
  StatsRegistry stats64;
  Translator t64(mem_, no64k, TranslatorConfig{}, stats64, "no64k");
  DecodedSte s2_64k = s2_ste(s2_, 7);
  s2_64k.s2_granule = Granule::k64K;
  s2_64k.s2_sl0 = 1;  // 64K: level 2, 40 - 29 = 11 bits
  put_ste(25, s2_64k);
  expect_config_event(run(t64, linear_, 25, false, 0, 0x1000'0000, kRead), config_event(EventId::kBadSte, 25));
  EXPECT_NE(go(25, 0x1000'0000).event.id, EventId::kBadSte);
}

// ===========================================================================
// Substreams and the CD table
// ===========================================================================
TEST_F(TranslatorEvents, BadSubstreamId) {
  // S1CDMax 0: no substreams at all, even SSID 0, even with the CD cached.
  expect_translated(go(1, 0x4000'0000), 0x9000'0000);
  expect_config_event(go_ss(1, 0, 0x4000'0000), config_event(EventId::kBadSubstreamId, 1).substream(0));
  expect_config_event(go_ss(1, 3, 0x4000'0000), config_event(EventId::kBadSubstreamId, 1).substream(3));

  // S1CDMax 2: four CDs; SSIDs 4 and up are out of range.
  put_ste(8, s1_ste(kCdArea + 0x1000, 2, ste::kSubstream0));
  for (uint32_t ssid = 0; ssid < 4; ++ssid) put_cd(kCdArea + 0x1000 + ssid * 64, cd(s1_, static_cast<uint16_t>(10 + ssid)));
  expect_translated(go_ss(8, 3, 0x4000'0000), 0x9000'0000);
  expect_config_event(go_ss(8, 4, 0x4000'0000), config_event(EventId::kBadSubstreamId, 8).substream(4));
  expect_config_event(go_ss(8, 0xF'FFFF, 0x4000'0000), config_event(EventId::kBadSubstreamId, 8).substream(0xF'FFFF));

  // Two-level CD table (4K leaves of 64 CDs), S1CDMax 8: L1[1] invalid.
  put_ste(9, s1_ste(kCdArea + 0x2000, 8, ste::kTerminate, ste::k2Level4K));
  mem_.poke64(kCdArea + 0x2000, (kCdArea + 0x3000) | 1);
  mem_.poke64(kCdArea + 0x2000 + 8, 0);
  put_cd(kCdArea + 0x3000 + 1 * 64, cd(s1_, 12));
  expect_translated(go_ss(9, 1, 0x4000'0000), 0x9000'0000);
  mem_.clear_log();
  expect_config_event(go_ss(9, 65, 0x4000'0000), config_event(EventId::kBadSubstreamId, 9).substream(65));
  EXPECT_EQ(accesses_in(kCdArea + 0x2000 + 8, 8), 1u) << "the level-1 CD descriptor was read";
  EXPECT_EQ(counter("smmu.faults.C_BAD_SUBSTREAMID"), 5u);
}

// IHI 0070 5.2 (S1DSS 0b10, Substream0): transactions without a substream
// use CD 0, and one that selects Substream 0 is terminated with
// F_STREAM_DISABLED, also once CD 0 is cached (issue 31: it translated).
TEST_F(TranslatorEvents, Substream0IsTheNoSubstreamTrafficsAlone) {
  put_ste(11, s1_ste(kCdArea + 0x7000, 2, ste::kSubstream0));
  put_cd(kCdArea + 0x7000, cd(s1_, 30));
  put_cd(kCdArea + 0x7040, cd(s1_, 31));
  expect_config_event(go_ss(11, 0, 0x4000'0000), config_event(EventId::kStreamDisabled, 11).substream(0));
  expect_translated(go(11, 0x4000'0000), 0x9000'0000);  // CD 0, now cached
  expect_config_event(go_ss(11, 0, 0x4000'0000), config_event(EventId::kStreamDisabled, 11).substream(0));
  expect_translated(go_ss(11, 1, 0x4000'0000), 0x9000'0000);
}

TEST_F(TranslatorEvents, StreamDisabledWithoutSubstreamAndS1dssTerminate) {
  put_ste(10, s1_ste(kCdArea + 0x6000, 2, ste::kTerminate));
  put_cd(kCdArea + 0x6000, cd(s1_, 20));
  put_cd(kCdArea + 0x6040, cd(s1_, 21));
  mem_.clear_log();
  expect_config_event(go(10, 0x4000'0000, kWrite), config_event(EventId::kStreamDisabled, 10));
  EXPECT_EQ(accesses_in(kCdArea, 64 * kKiB), 0u) << "no CD is read";
  expect_translated(go_ss(10, 1, 0x4000'0000), 0x9000'0000);
  // SSID 0 given explicitly is fine, and caches CD 0; a transaction without
  // an SSID must still not use it.
  expect_translated(go_ss(10, 0, 0x4000'0000), 0x9000'0000);
  expect_config_event(go(10, 0x4000'0000), config_event(EventId::kStreamDisabled, 10));
}

// IHI 0070 5.2 (S1DSS): 0b11 is Reserved and behaves as 0b00, so a
// transaction without a substream records F_STREAM_DISABLED.
TEST_F(TranslatorEvents, Ste52_ReservedS1DssTerminatesWithStreamDisabled) {
  put_ste(11, s1_ste(kCdArea + 0x6000, 2, ste::kTerminate));
  SteWords w = encode_ste(s1_ste(kCdArea + 0x6000, 2, ste::kTerminate));
  set_bits(w, 65, 64, 3);
  mem_.poke(kStrtab + 11 * 64, w.data(), sizeof w);
  put_cd(kCdArea + 0x6040, cd(s1_, 21));
  expect_config_event(go(11, 0x4000'0000), config_event(EventId::kStreamDisabled, 11));
  expect_translated(go_ss(11, 1, 0x4000'0000), 0x9000'0000);
}

// IHI 0070 5.2 (Config): a Reserved Config aborts without recording an event.
TEST_F(TranslatorEvents, Ste52_ReservedConfigAbortsWithoutEvent) {
  DecodedSte s = s1_ste(kCdArea);
  s.config = 0b011;
  put_ste(12, s);
  mem_.clear_log();
  const TranslationResult r = go(12, 0x4000'0000);
  EXPECT_EQ(r.kind, TranslationResult::Kind::kAbort);
  EXPECT_EQ(accesses_in(kCdArea, 64 * kKiB), 0u) << "no CD is read";
}

TEST_F(TranslatorEvents, CdFetchAbort) {
  put_ste(11, s1_ste(kCdArea + 0x4000));
  mem_.add_error_range(kCdArea + 0x4000, 64);
  mem_.clear_log();
  expect_config_event(go(11, 0x4000'0000), config_event(EventId::kCdFetch, 11));
  EXPECT_TRUE(read_failed_at(kCdArea + 0x4000));
  // Level-1 CD table read aborts.
  put_ste(12, s1_ste(kCdArea + 0x5000, 8, ste::kTerminate, ste::k2Level4K));
  mem_.add_error_range(kCdArea + 0x5000, 64);
  mem_.clear_log();
  expect_config_event(go_ss(12, 3, 0x4000'0000), config_event(EventId::kCdFetch, 12).substream(3));
  EXPECT_TRUE(read_failed_at(kCdArea + 0x5000));
  // Not cached either.
  mem_.clear_error_ranges();
  put_cd(kCdArea + 0x4000, cd(s1_, 30));
  expect_translated(go(11, 0x4000'0000), 0x9000'0000);
}

TEST_F(TranslatorEvents, BadCd) {
  uint32_t sid = 13;
  uint64_t at = kCdArea + 0x8000;
  auto bad = [&](const CdWords& w, const char* what) {
    SCOPED_TRACE(what);
    mem_.poke(at, w.data(), sizeof w);
    put_ste(sid, s1_ste(at));
    expect_config_event(go(sid, 0x4000'0000), config_event(EventId::kBadCd, sid));
    ++sid;
    at += 64;
  };
  bad(encode_cd(cd(s1_, 40), /*valid=*/false), "V = 0");
  DecodedCd aa32 = cd(s1_, 41);
  aa32.aa64 = false;
  bad(encode_cd(aa32), "AA64 = 0");
  CdWords tg3 = encode_cd(cd(s1_, 42));
  set_bits(tg3, 7, 6, 3);
  bad(tg3, "TG0 = 0b11 (reserved)");
  DecodedCd t0sz40 = cd(s1_, 43);
  t0sz40.t0sz = 40;
  bad(encode_cd(t0sz40), "T0SZ 40");
  // IPS 0b111 is not ILLEGAL: it behaves as 0b110 (IHI 0070 5.4); this test
  // expected C_BAD_CD for it before the 5.4 audit. CD.A = 0 is ILLEGAL with
  // IDR0.TERM_MODEL = 1 (5.4.2).
  CdWords a0 = encode_cd(cd(s1_, 44));
  set_bits(a0, 46, 46, 0);
  bad(a0, "A = 0 with TERM_MODEL 1");
  DecodedCd ttb_high = cd(s1_, 45);
  ttb_high.ips_bits = 32;
  ttb_high.ttb0 = 0x1'0000'0000;
  bad(encode_cd(ttb_high), "TTB0 beyond IPS");

  // Through a CD table: the substream is in the record.
  put_ste(30, s1_ste(kCdArea + 0x1000, 2, ste::kSubstream0));
  put_cd(kCdArea + 0x1000, cd(s1_, 10));
  put_cd(kCdArea + 0x1040, cd(s1_, 11), /*valid=*/false);
  expect_config_event(go_ss(30, 1, 0x4000'0000), config_event(EventId::kBadCd, 30).substream(1));
  // Not cached: a valid CD takes effect without CFGI_CD.
  put_cd(kCdArea + 0x1040, cd(s1_, 11));
  expect_translated(go_ss(30, 1, 0x4000'0000), 0x9000'0000);
}

TEST_F(TranslatorEvents, BadCdForGranulesTheSmmuLacks) {
  DecodedCd c16 = cd(s1_, 50);
  c16.granule = Granule::k16K;
  put_cd(kCdArea + 0x9000, c16);
  put_ste(31, s1_ste(kCdArea + 0x9000));
  StatsRegistry stats30;
  Translator v30(mem_, SmmuFeatures::v3_0_profile(), TranslatorConfig{}, stats30, "v30");
  expect_config_event(run(v30, linear_, 31, false, 0, 0x4000'0000, kRead), config_event(EventId::kBadCd, 31));
  EXPECT_NE(go(31, 0x4000'0000).event.id, EventId::kBadCd);  // legal where 16K exists

  DecodedCd c64 = cd(s1_, 51);
  c64.granule = Granule::k64K;
  put_cd(kCdArea + 0x9040, c64);
  put_ste(32, s1_ste(kCdArea + 0x9040));
  SmmuFeatures no64k = SmmuFeatures::v3_3_profile();
  no64k.gran64k = false;
  StatsRegistry stats64;
  Translator t64(mem_, no64k, TranslatorConfig{}, stats64, "no64k");
  expect_config_event(run(t64, linear_, 32, false, 0, 0x4000'0000, kRead), config_event(EventId::kBadCd, 32));
  EXPECT_NE(go(32, 0x4000'0000).event.id, EventId::kBadCd);
}

// ===========================================================================
// Stage 1 faults
// ===========================================================================
TEST_F(TranslatorEvents, WalkExternalAbortAtStage1) {
  // Everything but CLASS (see WalkExternalAbortAtStage1HasClassTT).
  auto expect_eabt = [&](const TranslationResult& r, uint64_t addr, const AccessType& a, uint64_t failed_pa) {
    ASSERT_EQ(r.kind, TranslationResult::Kind::kFault);
    const EventRecord e = as_written(r);
    EXPECT_EQ(e.id, EventId::kWalkEabt) << event_name(e.id);
    EXPECT_EQ(e.sid, 1u);
    EXPECT_FALSE(e.ssv);
    EXPECT_EQ(e.input_addr, addr);
    EXPECT_EQ(e.rnw, !a.write);
    EXPECT_EQ(e.pnu, a.privileged);
    EXPECT_EQ(e.ind, a.instruction);
    EXPECT_FALSE(e.s2);
    EXPECT_TRUE(read_failed_at(failed_pa)) << std::hex << failed_pa;
  };
  // The root table (before any walk has filled the walk cache).
  mem_.add_error_range(s1_.root_pa(), 4 * kKiB);
  expect_eabt(go(1, 0x8000'0000, kExec), 0x8000'0000, kExec, s1_.root_pa());
  mem_.clear_error_ranges();
  // A level 3 table.
  const uint64_t l3 = s1_.table_pa(0x4000'0000, 3);
  ASSERT_NE(l3, 0u);
  mem_.add_error_range(l3, 4 * kKiB);
  mem_.clear_log();
  expect_eabt(go(1, 0x4000'0010, kPrivWrite), 0x4000'0010, kPrivWrite, l3);
  // Nothing is cached: the walk is retried and succeeds once the memory answers.
  mem_.clear_error_ranges();
  expect_translated(go(1, 0x4000'0010, kPrivWrite), 0x9000'0010);
  EXPECT_EQ(counter("smmu.faults.F_WALK_EABT"), 2u);
}

// F_WALK_EABT on a stage 1 descriptor fetch: S2 = 0 and CLASS = TT (the
// aborted access was a translation table fetch; IHI 0070 7.3 F_WALK_EABT).
TEST_F(TranslatorEvents, WalkExternalAbortAtStage1HasClassTT) {
  mem_.add_error_range(s1_.table_pa(0x4000'0000, 3), 4 * kKiB);
  Want w = s1_fault(EventId::kWalkEabt, 1, 0x4000'0010);
  w.cls = FaultClass::kTranslationTable;
  expect_fault(go(1, 0x4000'0010), w);
}

TEST_F(TranslatorEvents, TranslationFaults) {
  // Unmapped, next to a mapping (level 3 entry invalid) and far away (level 1).
  expect_fault(go(1, 0x4000'7008, kWrite), s1_fault(EventId::kTranslation, 1, 0x4000'7008, kWrite));
  expect_fault(go(1, 0x1'0000'0000, kPrivExec), s1_fault(EventId::kTranslation, 1, 0x1'0000'0000, kPrivExec));
  // Beyond the 48-bit TTB0 range (T0SZ 16): nothing is read.
  mem_.clear_log();
  expect_fault(go(1, 1ull << 48), s1_fault(EventId::kTranslation, 1, 1ull << 48));
  EXPECT_EQ(accesses_in(kS1Pool, 4 * kMiB), 0u);
  // Beyond a 39-bit range (T0SZ 25).
  DecodedCd t25 = cd(s1_, 60);
  t25.t0sz = 25;
  put_cd(kCdArea + 0x9100, t25);
  put_ste(33, s1_ste(kCdArea + 0x9100));
  expect_fault(go(33, 1ull << 39), s1_fault(EventId::kTranslation, 33, 1ull << 39));
  // EPD0: TTB0 walks disabled.
  DecodedCd epd = cd(s1_, 61);
  epd.epd0 = true;
  put_cd(kCdArea + 0x9140, epd);
  put_ste(34, s1_ste(kCdArea + 0x9140));
  expect_fault(go(34, 0x4000'0000), s1_fault(EventId::kTranslation, 34, 0x4000'0000));
  // Through a substream: SSV and SSID in the record.
  put_ste(35, s1_ste(kCdArea + 0x1000, 2, ste::kSubstream0));
  put_cd(kCdArea + 0x1080, cd(s1_, 62));
  expect_fault(go_ss(35, 2, 0x4000'7000, kExec), s1_fault(EventId::kTranslation, 35, 0x4000'7000, kExec).substream(2));
  EXPECT_EQ(counter("smmu.faults.F_TRANSLATION"), 6u);
}

TEST_F(TranslatorEvents, AddressSizeFaultBeyondCdIps) {
  DecodedCd ips32 = cd(s1_, 15);
  ips32.ips_bits = 32;
  put_cd(kCdArea + 0x80, ips32);
  put_ste(15, s1_ste(kCdArea + 0x80));
  expect_fault(go(15, 0x4000'6abc, kWrite), s1_fault(EventId::kAddrSize, 15, 0x4000'6abc, kWrite));
  // The same tables with a 48-bit IPS translate it.
  expect_translated(go(1, 0x4000'6abc, kWrite), 0x1'0000'0abc);
  // Below 4 GiB the 32-bit IPS is fine.
  expect_translated(go(15, 0x4000'0abc), 0x9000'0abc);
}

TEST_F(TranslatorEvents, AccessFlagFaultUnlessAffd) {
  expect_fault(go(1, 0x4000'5008, kPrivRead), s1_fault(EventId::kAccess, 1, 0x4000'5008, kPrivRead));
  DecodedCd affd = cd(s1_, 16);
  affd.affd = true;
  put_cd(kCdArea + 0x40, affd);
  put_ste(16, s1_ste(kCdArea + 0x40));
  expect_translated(go(16, 0x4000'5008, kPrivRead), 0x9000'5008);
  // The AFFD translation is cached for ASID 16 only.
  expect_fault(go(1, 0x4000'5010), s1_fault(EventId::kAccess, 1, 0x4000'5010));
  EXPECT_TRUE(go(16, 0x4000'5010).tlb_hit);
}

TEST_F(TranslatorEvents, PermissionFaults) {
  // Write to a read-only page, privileged or not; reads are fine.
  expect_translated(go(1, 0x4000'1000), 0x9000'1000);
  expect_fault(go(1, 0x4000'1008, kWrite), s1_fault(EventId::kPermission, 1, 0x4000'1008, kWrite));
  expect_fault(go(1, 0x4000'1010, kPrivWrite), s1_fault(EventId::kPermission, 1, 0x4000'1010, kPrivWrite));
  // Unprivileged access to a privileged-only page, after a privileged access
  // cached the translation.
  expect_translated(go(1, 0x4000'2000, kPrivWrite), 0x9000'2000);
  expect_fault(go(1, 0x4000'2008, kRead), s1_fault(EventId::kPermission, 1, 0x4000'2008, kRead));
  expect_fault(go(1, 0x4000'2010, kWrite), s1_fault(EventId::kPermission, 1, 0x4000'2010, kWrite));
  // (AP[1] = 0 does not stop unprivileged execution: that is UXN's job.)
  expect_translated(go(1, 0x4000'2018, kExec), 0x9000'2018);
  // Instruction fetch from execute-never: UXN stops unprivileged fetches,
  // PXN privileged ones.
  expect_translated(go(1, 0x4000'3000, kPrivExec), 0x9000'3000);
  expect_fault(go(1, 0x4000'3004, kExec), s1_fault(EventId::kPermission, 1, 0x4000'3004, kExec));
  expect_translated(go(1, 0x4000'4000, kExec), 0x9000'4000);
  expect_fault(go(1, 0x4000'4004, kPrivExec), s1_fault(EventId::kPermission, 1, 0x4000'4004, kPrivExec));
  // A page writable unprivileged is never executable privileged.
  expect_translated(go(1, 0x4000'0000, kExec), 0x9000'0000);
  expect_fault(go(1, 0x4000'0004, kPrivExec), s1_fault(EventId::kPermission, 1, 0x4000'0004, kPrivExec));
  EXPECT_EQ(counter("smmu.faults.F_PERMISSION"), 7u);
}

// ===========================================================================
// Stage 2 only
// ===========================================================================
TEST_F(TranslatorEvents, Stage2OnlyTranslatesIpaToPa) {
  put_ste(40, s2_ste(s2_, 7));
  const TranslationResult r = go(40, 0x1000'0123, kWrite);
  expect_translated(r, 0xA000'0123);
  EXPECT_EQ(r.span, 0x1000u - 0x123);
  // 1 GiB block, at its last 8 bytes.
  const TranslationResult b = go(40, 0x7FFF'FFF8);
  expect_translated(b, 0x1'3FFF'FFF8);
  EXPECT_EQ(b.span, 8u);
  const TranslationResult hit = go(40, 0x4000'0000);
  EXPECT_TRUE(hit.tlb_hit);
  expect_translated(hit, 0x1'0000'0000);
  EXPECT_EQ(hit.span, kGiB);
}

TEST_F(TranslatorEvents, Stage2OnlyFaultsHaveS2AndClassIn) {
  put_ste(40, s2_ste(s2_, 7));
  expect_fault(go(40, 0x3000'0010, kWrite),
               s2_fault(EventId::kTranslation, 40, 0x3000'0010, FaultClass::kInput, 0x3000'0010, kWrite));
  expect_fault(go(40, 1ull << kS2Ias),
               s2_fault(EventId::kTranslation, 40, 1ull << kS2Ias, FaultClass::kInput, 1ull << kS2Ias));
  expect_fault(go(40, 0x1000'1234, kPrivWrite),
               s2_fault(EventId::kPermission, 40, 0x1000'1234, FaultClass::kInput, 0x1000'1234, kPrivWrite));
  expect_translated(go(40, 0x1000'1234), 0xA000'1234);  // S2AP read allowed
  expect_fault(go(40, 0x1000'3000, kExec),
               s2_fault(EventId::kPermission, 40, 0x1000'3000, FaultClass::kInput, 0x1000'3000, kExec));
  expect_fault(go(40, 0x1000'2010),
               s2_fault(EventId::kAccess, 40, 0x1000'2010, FaultClass::kInput, 0x1000'2010));
  // S2AFFD: no access flag fault.
  DecodedSte affd = s2_ste(s2_, 10);
  affd.s2_affd = true;
  put_ste(43, affd);
  expect_translated(go(43, 0x1000'2010), 0xA000'2010);
  // S2PS 32 bits: an output address at 4 GiB is an address size fault.
  DecodedSte ps32 = s2_ste(s2_, 9);
  ps32.s2_ps_bits = 32;
  put_ste(42, ps32);
  expect_fault(go(42, 0x1000'4008),
               s2_fault(EventId::kAddrSize, 42, 0x1000'4008, FaultClass::kInput, 0x1000'4008));
  expect_translated(go(40, 0x1000'4008), 0x1'0000'0008);
  // External abort on a stage 2 descriptor: S2 = 1, CLASS = IN.
  mem_.add_error_range(s2_.table_pa(0x1000'0000, 3), 4 * kKiB);
  const TranslationResult ea = go(42, 0x1000'0010);
  ASSERT_EQ(ea.kind, TranslationResult::Kind::kFault);
  const EventRecord e = as_written(ea);
  EXPECT_EQ(e.id, EventId::kWalkEabt);
  EXPECT_EQ(e.sid, 42u);
  EXPECT_EQ(e.input_addr, 0x1000'0010u);
  EXPECT_TRUE(e.s2);
  EXPECT_EQ(e.cls, FaultClass::kInput);
}

TEST_F(TranslatorEvents, Stage2VmidsDoNotAlias) {
  put_ste(40, s2_ste(s2_, 7));
  put_ste(41, s2_ste(s2b_, 8));
  expect_translated(go(40, 0x1000'0010), 0xA000'0010);
  const TranslationResult other = go(41, 0x1000'0010);
  EXPECT_FALSE(other.tlb_hit);
  expect_translated(other, 0xC000'0010);
  for (int round = 0; round < 2; ++round) {
    const TranslationResult a = go(40, 0x1000'0020);
    const TranslationResult b = go(41, 0x1000'0020);
    EXPECT_TRUE(a.tlb_hit && b.tlb_hit);
    expect_translated(a, 0xA000'0020);
    expect_translated(b, 0xC000'0020);
  }
  // VMID 8 has nothing at 0x1000'1000, whatever VMID 7 cached there.
  expect_translated(go(40, 0x1000'1000), 0xA000'1000);
  expect_fault(go(41, 0x1000'1000),
               s2_fault(EventId::kTranslation, 41, 0x1000'1000, FaultClass::kInput, 0x1000'1000));
}

// ===========================================================================
// Nested
// ===========================================================================
class TranslatorEventsNested : public TranslatorEvents {
 protected:
  TranslatorEventsNested() {
    put_nested_cd(kIpaWin + kNestCds, cd(n1_, 3));
    put_ste(50, nested_ste(kIpaWin + kNestCds));
  }
};

TEST_F(TranslatorEventsNested, TranslatesThroughTablesAtIpas) {
  mem_.clear_log();
  const TranslationResult r = go(50, 0x4000'0123);
  expect_translated(r, 0xA000'0123);
  EXPECT_EQ(r.span, 0x1000u - 0x123);
  // The CD pointer is an IPA: the CD was read at its PA.
  EXPECT_EQ(accesses_in(kNestPool + kNestCds, 64), 1u);
  // Every stage 1 descriptor was read at its PA in the nested pool, none at an IPA.
  for (const auto& a : mem_.log()) EXPECT_TRUE(a.ok) << std::hex << a.pa;
  EXPECT_GE(accesses_in(kNestPool, kNestCds), 4u);
  EXPECT_TRUE(go(50, 0x4000'0456).tlb_hit);
  // Stage 1 2 MiB block inside a stage 2 1 GiB block: 2 MiB entry.
  const TranslationResult blk = go(50, 0x4020'0000 + 0x12345);
  expect_translated(blk, 0x1'0000'0000 + 0x12345);
  EXPECT_EQ(blk.span, 2 * kMiB - 0x12345);
}

TEST_F(TranslatorEventsNested, CdPointerIsAnIpaAlsoForTwoLevelCdTables) {
  const uint64_t l1 = kIpaWin + kNestCds + 0x1000, l2 = kIpaWin + kNestCds + 0x2000;
  mem_.poke64(l1 - kIpaWin + kNestPool, l2 | 1);  // L2Ptr is an IPA too
  put_nested_cd(l2 + 2 * 64, cd(n1_, 4));
  put_ste(57, nested_ste(l1, 6, ste::kTerminate, ste::k2Level4K));
  mem_.clear_log();
  expect_translated(go_ss(57, 2, 0x4000'0010), 0xA000'0010);
  EXPECT_EQ(accesses_in(l1 - kIpaWin + kNestPool, 8), 1u);
  EXPECT_EQ(accesses_in(l2 + 2 * 64 - kIpaWin + kNestPool, 64), 1u);
}

TEST_F(TranslatorEventsNested, Stage2FaultOnStage1TableIsClassTT) {
  // TTB0 at an IPA that stage 2 does not map.
  DecodedCd c = cd(n1_, 5);
  c.ttb0 = kIpaHole;
  put_nested_cd(kIpaWin + kNestCds + 0x40, c);
  put_ste(51, nested_ste(kIpaWin + kNestCds + 0x40));
  expect_fault(go(51, 0x4000'0010, kWrite),
               s2_fault(EventId::kTranslation, 51, 0x4000'0010, FaultClass::kTranslationTable, kIpaHole, kWrite));
  // A level 2 table descriptor pointing at an unmapped IPA: the level 3
  // descriptor's IPA is reported.
  expect_fault(go(50, 0x6000'0010),
               s2_fault(EventId::kTranslation, 50, 0x6000'0010, FaultClass::kTranslationTable, kIpaHole));
}

TEST_F(TranslatorEventsNested, Stage2FaultOnFinalIpaIsClassIn) {
  expect_fault(go(50, 0x4000'2010),
               s2_fault(EventId::kTranslation, 50, 0x4000'2010, FaultClass::kInput, 0x2000'0010));
  expect_fault(go(50, 0x4000'1010, kWrite),
               s2_fault(EventId::kPermission, 50, 0x4000'1010, FaultClass::kInput, 0x1000'1010, kWrite));
  expect_translated(go(50, 0x4000'1010), 0xA000'1010);
  // IPA beyond the stage 2 input size: a stage 2 translation fault.
  expect_fault(go(50, 0x4000'3000),
               s2_fault(EventId::kTranslation, 50, 0x4000'3000, FaultClass::kInput, 1ull << kS2Ias));
  // Stage 1 faults under nesting stay stage 1.
  expect_fault(go(50, 0x4000'7000), s1_fault(EventId::kTranslation, 50, 0x4000'7000));
}

TEST_F(TranslatorEventsNested, Stage2FaultOnCdIsClassCd) {
  put_ste(53, nested_ste(kIpaHole + 0x40));
  expect_fault(go(53, 0x4000'0000),
               s2_fault(EventId::kTranslation, 53, 0x4000'0000, FaultClass::kCd, kIpaHole + 0x40));
  put_nested_cd(kIpaNoRead + 0x80, cd(n1_, 6));
  put_ste(54, nested_ste(kIpaNoRead + 0x80));
  expect_fault(go(54, 0x4000'0000, kWrite),
               s2_fault(EventId::kPermission, 54, 0x4000'0000, FaultClass::kCd, kIpaNoRead + 0x80, kWrite));
  // An abort reading the CD at its PA is F_CD_FETCH, not a stage 2 fault.
  put_ste(56, nested_ste(kIpaWin + kNestCds + 0xC0));
  mem_.add_error_range(kNestPool + kNestCds + 0xC0, 64);
  expect_config_event(go(56, 0x4000'0000), config_event(EventId::kCdFetch, 56));
}

// External aborts on stage 2 descriptor fetches: S2 = 1 with the CLASS of
// what the stage 2 walk was for (CD, TT or IN).
TEST_F(TranslatorEventsNested, Stage2WalkAbortForTableAndInput) {
  mem_.add_error_range(s2_.table_pa(kIpaPages, 3), 4 * kKiB);
  DecodedCd c = cd(n1_, 7);
  c.ttb0 = kIpaPages + 0x1000;
  put_nested_cd(kIpaWin + kNestCds + 0x100, c);
  put_ste(52, nested_ste(kIpaWin + kNestCds + 0x100));
  TranslationResult r = go(52, 0x4000'0000);
  ASSERT_EQ(r.kind, TranslationResult::Kind::kFault);
  EventRecord e = as_written(r);
  EXPECT_EQ(e.id, EventId::kWalkEabt);
  EXPECT_TRUE(e.s2);
  EXPECT_EQ(e.cls, FaultClass::kTranslationTable);

  r = go(50, 0x4000'4010);  // final IPA in kIpaPages
  ASSERT_EQ(r.kind, TranslationResult::Kind::kFault);
  e = as_written(r);
  EXPECT_EQ(e.id, EventId::kWalkEabt);
  EXPECT_EQ(e.input_addr, 0x4000'4010u);
  EXPECT_TRUE(e.s2);
  EXPECT_EQ(e.cls, FaultClass::kInput);
}

TEST_F(TranslatorEventsNested, Stage2WalkAbortForCdIsS2ClassCd) {
  mem_.add_error_range(s2_.table_pa(kIpaPages, 3), 4 * kKiB);
  put_ste(55, nested_ste(kIpaPages));
  const TranslationResult r = go(55, 0x4000'0000);
  ASSERT_EQ(r.kind, TranslationResult::Kind::kFault);
  const EventRecord e = as_written(r);
  EXPECT_EQ(e.id, EventId::kWalkEabt);
  EXPECT_TRUE(e.s2);
  EXPECT_EQ(static_cast<int>(e.cls), static_cast<int>(FaultClass::kCd));
}

TEST_F(TranslatorEventsNested, WalkAbortOnStage1TableHasClassTT) {
  mem_.add_error_range(n1_.table_pa(0x4000'0000, 3), 4 * kKiB);
  Want w = s1_fault(EventId::kWalkEabt, 50, 0x4000'0010);
  w.cls = FaultClass::kTranslationTable;
  expect_fault(go(50, 0x4000'0010), w);
}

TEST_F(TranslatorEventsNested, S1dssBypassIsStage2Only) {
  const uint64_t table = kIpaWin + kNestCds + 0x3000;
  put_nested_cd(table + 64, cd(n1_, 8));
  put_ste(58, nested_ste(table, 1, ste::kBypassDss));
  mem_.clear_log();
  const TranslationResult r = go(58, 0x1000'0040);  // the address is an IPA
  expect_translated(r, 0xA000'0040);
  EXPECT_EQ(accesses_in(kNestPool + kNestCds, 64 * kKiB), 0u) << "no CD is read";
  expect_fault(go(58, 0x3000'0000, kWrite),
               s2_fault(EventId::kTranslation, 58, 0x3000'0000, FaultClass::kInput, 0x3000'0000, kWrite));
  // With a substream: nested through CD 1.
  expect_translated(go_ss(58, 1, 0x4000'0040), 0xA000'0040);
  expect_fault(go_ss(58, 1, 0x4000'2000),
               s2_fault(EventId::kTranslation, 58, 0x4000'2000, FaultClass::kInput, 0x2000'0000).substream(1));
}

TEST_F(TranslatorEventsNested, SpanIsTheSmallerOfBothStages) {
  // Stage 1 2 MiB block over stage 2 4 KiB pages.
  TranslationResult r = go(50, 0x4040'0FFF);
  expect_translated(r, 0xA020'0FFF);
  EXPECT_EQ(r.span, 1u);
  r = go(50, 0x4040'1000);
  expect_translated(r, 0xA020'1000);
  EXPECT_EQ(r.span, 0x1000u);
  r = go(50, 0x4040'0800);
  EXPECT_TRUE(r.tlb_hit);
  expect_translated(r, 0xA020'0800);
  EXPECT_EQ(r.span, 0x800u);
}

// ===========================================================================
// S1DSS, substream 0, TLB tagging, config cache, span
// ===========================================================================
TEST_F(TranslatorEvents, S1dssBypassAndSubstream0) {
  // S1DSS = bypass: no SSID bypasses stage 1 without reading a CD.
  put_ste(24, s1_ste(kCdArea + 0x7000, 1, ste::kBypassDss));
  put_cd(kCdArea + 0x7040, cd(s1_, 24));
  mem_.clear_log();
  const TranslationResult byp = go(24, 0x1234'5678, kWrite);
  ASSERT_EQ(byp.kind, TranslationResult::Kind::kBypass);
  EXPECT_EQ(byp.pa, 0x1234'5678u);
  EXPECT_EQ(byp.span, ~0ull);
  EXPECT_EQ(accesses_in(kCdArea, 64 * kKiB), 0u);
  expect_translated(go_ss(24, 1, 0x4000'0010), 0x9000'0010);
  expect_fault(go_ss(24, 1, 0x4000'7000), s1_fault(EventId::kTranslation, 24, 0x4000'7000).substream(1));

  // S1DSS = substream 0: no SSID uses CD 0 (ASID 10, s1_); SSID 1 uses CD 1
  // (ASID 11, s1b_).
  put_ste(8, s1_ste(kCdArea + 0x1000, 2, ste::kSubstream0));
  put_cd(kCdArea + 0x1000, cd(s1_, 10));
  put_cd(kCdArea + 0x1040, cd(s1b_, 11));
  expect_translated(go(8, 0x4000'0010), 0x9000'0010);
  expect_translated(go_ss(8, 1, 0x4000'0010), 0xB000'0010);
  // 5.2: Substream 0 is the no-substream traffic's; selecting it terminates.
  expect_config_event(go_ss(8, 0, 0x4000'0020), config_event(EventId::kStreamDisabled, 8).substream(0));
  expect_translated(go(8, 0x4000'0030), 0x9000'0030);
  expect_fault(go(8, 0x4000'7000), s1_fault(EventId::kTranslation, 8, 0x4000'7000));
}

// IHI 0070 3.4: with stage 1 not translating, an input address beyond the
// IAS (the OAS, 48 bits here) is a stage 1 Address Size fault: for a bypass
// STE (issue 31: it went out untranslated) and before stage 2 (it was a
// stage 2 F_TRANSLATION).
TEST_F(TranslatorEvents, Addr34_InputBeyondTheIasWithStage1Bypassed) {
  DecodedSte bypass;
  bypass.config = ste::kBypass;
  put_ste(26, bypass);
  const uint64_t wide = 1ull << 48;
  Want w = s1_fault(EventId::kAddrSize, 26, wide);
  w.cls = FaultClass::kInput;
  expect_fault(go(26, wide), w);
  const TranslationResult ok = go(26, wide - 8);
  ASSERT_EQ(ok.kind, TranslationResult::Kind::kBypass);
  EXPECT_EQ(ok.pa, wide - 8);

  put_ste(27, s2_ste(s2_, 7));
  Want s2only = s1_fault(EventId::kAddrSize, 27, wide + 0x1000);
  s2only.cls = FaultClass::kInput;
  expect_fault(go(27, wide + 0x1000), s2only);
}

TEST_F(TranslatorEvents, AsidsDoNotAlias) {
  put_cd(kCdArea + 0xC0, cd(s1b_, 2));
  put_ste(17, s1_ste(kCdArea + 0xC0));
  expect_translated(go(1, 0x4000'0010), 0x9000'0010);
  const TranslationResult other = go(17, 0x4000'0010);
  EXPECT_FALSE(other.tlb_hit);
  expect_translated(other, 0xB000'0010);
  for (int round = 0; round < 2; ++round) {
    const TranslationResult a = go(1, 0x4000'0020);
    const TranslationResult b = go(17, 0x4000'0020);
    EXPECT_TRUE(a.tlb_hit && b.tlb_hit);
    expect_translated(a, 0x9000'0020);
    expect_translated(b, 0xB000'0020);
  }
  // ASID 2 has nothing at 0x4000'1000, whatever ASID 1 cached there.
  expect_translated(go(1, 0x4000'1000), 0x9000'1000);
  expect_fault(go(17, 0x4000'1000), s1_fault(EventId::kTranslation, 17, 0x4000'1000));
}

TEST_F(TranslatorEvents, ConfigCacheServesTheSecondTranslation) {
  expect_translated(go(1, 0x4000'0000), 0x9000'0000);
  EXPECT_EQ(accesses_in(kStrtab + 64, 64), 1u);
  EXPECT_EQ(accesses_in(kCdArea, 64), 1u);
  mem_.clear_log();
  const TranslationResult r = go(1, 0x4020'0010);  // a new VA: TLB miss, walk
  expect_translated(r, 0x9020'0010);
  EXPECT_FALSE(r.tlb_hit);
  EXPECT_FALSE(mem_.log().empty()) << "the walk reads descriptors";
  EXPECT_EQ(accesses_in(kStrtab, 4 * kKiB), 0u) << "no STE read";
  EXPECT_EQ(accesses_in(kCdArea, 64 * kKiB), 0u) << "no CD read";
  EXPECT_EQ(accesses_in(kS1Pool, 4 * kMiB), mem_.log().size());
  EXPECT_EQ(counter("smmu.config_cache.ste.hits"), 1u);
  EXPECT_EQ(counter("smmu.config_cache.cd.hits"), 1u);
  // Nested: neither the STE, nor the CD, nor the stage 2 walk for the CD's IPA.
  put_nested_cd(kIpaWin + kNestCds, cd(n1_, 3));
  put_ste(50, nested_ste(kIpaWin + kNestCds));
  expect_translated(go(50, 0x4000'0000), 0xA000'0000);
  mem_.clear_log();
  expect_translated(go(50, 0x4020'0000), 0x1'0000'0000);
  EXPECT_EQ(accesses_in(kStrtab, 4 * kKiB), 0u);
  EXPECT_EQ(accesses_in(kNestPool + kNestCds, 64 * kKiB), 0u);
}

TEST_F(TranslatorEvents, SpanAtBlockBoundaries) {
  TranslationResult r = go(1, 0x4000'0123);
  expect_translated(r, 0x9000'0123);
  EXPECT_EQ(r.span, 0x1000u - 0x123);
  r = go(1, 0x4020'0000);  // first byte of the 2 MiB block
  expect_translated(r, 0x9020'0000);
  EXPECT_EQ(r.span, 2 * kMiB);
  r = go(1, 0x403F'FFFF);  // last byte, from the TLB
  EXPECT_TRUE(r.tlb_hit);
  expect_translated(r, 0x903F'FFFF);
  EXPECT_EQ(r.span, 1u);
  r = go(1, 0xBFFF'F000);  // last page of the 1 GiB block
  expect_translated(r, 0x1'7FFF'F000);
  EXPECT_EQ(r.span, 0x1000u);
  r = go(1, 0x8000'0000);
  EXPECT_TRUE(r.tlb_hit);
  EXPECT_EQ(r.span, kGiB);
  // The next VA after the block is not mapped.
  expect_fault(go(1, 0x4040'0000), s1_fault(EventId::kTranslation, 1, 0x4040'0000));
}

// IHI 0070 5.5: CD.R = 0 suppresses the record of the four
// translation-related stage-1 faults (the transaction still aborts); other
// faults and configuration errors are recorded whatever R says.
TEST_F(TranslatorEvents, Cd55_RZeroSuppressesTranslationRelatedRecordsOnly) {
  DecodedCd quiet = cd(s1_, 70);
  quiet.record = false;
  put_cd(kCdArea + 0x9200, quiet);
  put_ste(60, s1_ste(kCdArea + 0x9200));
  const TranslationResult tf = go(60, 0x4000'7008, kWrite);
  expect_fault(tf, s1_fault(EventId::kTranslation, 60, 0x4000'7008, kWrite));
  EXPECT_FALSE(tf.record);
  const TranslationResult pf = go(60, 0x4000'1008, kWrite);
  expect_fault(pf, s1_fault(EventId::kPermission, 60, 0x4000'1008, kWrite));
  EXPECT_FALSE(pf.record);
  const TranslationResult af = go(60, 0x4000'5008, kPrivRead);
  expect_fault(af, s1_fault(EventId::kAccess, 60, 0x4000'5008, kPrivRead));
  EXPECT_FALSE(af.record);
  // R = 1 (the default of encode_cd, and what the drivers write): recorded.
  const TranslationResult loud = go(1, 0x4000'7008, kWrite);
  expect_fault(loud, s1_fault(EventId::kTranslation, 1, 0x4000'7008, kWrite));
  EXPECT_TRUE(loud.record);
  // An external abort on a walk is not translation-related: recorded.
  mem_.add_error_range(s1_.table_pa(0x4000'0000, 3), 4 * kKiB);
  const TranslationResult ea = go(60, 0x4000'0010);
  ASSERT_EQ(ea.kind, TranslationResult::Kind::kFault);
  EXPECT_EQ(ea.event.id, EventId::kWalkEabt);
  EXPECT_TRUE(ea.record);
  // An ILLEGAL CD with R = 0 is still C_BAD_CD, recorded.
  DecodedCd bad = quiet;
  bad.t0sz = 50;
  put_cd(kCdArea + 0x9240, bad);
  put_ste(61, s1_ste(kCdArea + 0x9240));
  const TranslationResult bc = go(61, 0x4000'0000);
  expect_config_event(bc, config_event(EventId::kBadCd, 61));
  EXPECT_TRUE(bc.record);
}

// IHI 0070 5.5: STE.S2R does the same for stage-2 faults, including one on
// the fetch of a CD through stage 2; CD.R does not touch them.
TEST_F(TranslatorEventsNested, Ste55_S2rZeroSuppressesStage2TranslationRelatedRecords) {
  DecodedSte quiet = s2_ste(s2_, 11);
  quiet.s2_record = false;
  put_ste(44, quiet);
  const TranslationResult tf = go(44, 0x3000'0010, kWrite);
  expect_fault(tf, s2_fault(EventId::kTranslation, 44, 0x3000'0010, FaultClass::kInput, 0x3000'0010, kWrite));
  EXPECT_FALSE(tf.record);
  // Nested, S2R = 0 and CD.R = 1: a stage-2 fault on the CD is unrecorded,
  // a stage-1 fault recorded.
  DecodedSte nested = nested_ste(kIpaHole + 0x40);
  nested.s2_record = false;
  put_ste(45, nested);
  const TranslationResult cdf = go(45, 0x4000'0000);
  expect_fault(cdf, s2_fault(EventId::kTranslation, 45, 0x4000'0000, FaultClass::kCd, kIpaHole + 0x40));
  EXPECT_FALSE(cdf.record);
  DecodedSte nested_ok = nested_ste(kIpaWin + kNestCds);
  nested_ok.s2_record = false;
  put_ste(46, nested_ok);
  const TranslationResult s1f = go(46, 0x4000'7000);
  expect_fault(s1f, s1_fault(EventId::kTranslation, 46, 0x4000'7000));
  EXPECT_TRUE(s1f.record);
  const TranslationResult s2f = go(46, 0x4000'2010);
  expect_fault(s2f, s2_fault(EventId::kTranslation, 46, 0x4000'2010, FaultClass::kInput, 0x2000'0010));
  EXPECT_FALSE(s2f.record);
}

}  // namespace
}  // namespace smmu_vp::smmu

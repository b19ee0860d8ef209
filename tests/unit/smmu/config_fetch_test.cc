// Locating and checking configuration in memory: linear and two-level stream
// tables, linear and two-level CD tables, and the event each failure gives.
#include <gtest/gtest.h>

#include "fake_memory.h"
#include "smmu/config_fetch.h"

namespace smmu_vp::smmu {
namespace {

constexpr uint64_t kBase = 0x8000'0000;
constexpr Ps kLatency = 50'000;

class ConfigFetchTest : public ::testing::Test {
 protected:
  ConfigFetchTest() : mem_(kBase, 1 << 22, kLatency), fetch_(mem_, SmmuCaps{}) {}

  void put_ste(uint64_t addr, const DecodedSte& s) {
    const SteWords w = encode_ste(s);
    mem_.poke(addr, w.data(), sizeof w);
  }
  void put_cd(uint64_t addr, const DecodedCd& c) {
    const CdWords w = encode_cd(c);
    mem_.poke(addr, w.data(), sizeof w);
  }
  static DecodedCd cd_with_asid(uint16_t asid) {
    DecodedCd c;
    c.t0sz = 25;
    c.ips_bits = 48;
    c.asid = asid;
    c.ttb0 = 0x8030'0000;
    return c;
  }

  test::FakeMemory mem_;
  ConfigFetcher fetch_;
};

TEST_F(ConfigFetchTest, LinearStreamTable) {
  const StreamTableConfig st{kBase, false, 0, 6};
  DecodedSte s;
  s.config = ste::kBypass;
  put_ste(kBase + 5 * 64, s);
  DecodedSte out;
  const FetchResult r = fetch_.fetch_ste(st, 5, 1000, &out);
  ASSERT_TRUE(r.ok()) << r.why;
  EXPECT_EQ(out.config, ste::kBypass);
  EXPECT_EQ(r.done, 1000 + kLatency);  // one 64-byte read
  // Beyond LOG2SIZE: no memory access at all.
  const size_t reads = mem_.log().size();
  EXPECT_EQ(fetch_.fetch_ste(st, 64, 0, &out).error, EventId::kBadStreamId);
  EXPECT_EQ(mem_.log().size(), reads);
  // An all-zero STE is invalid.
  EXPECT_EQ(fetch_.fetch_ste(st, 6, 0, &out).error, EventId::kBadSte);
}

TEST_F(ConfigFetchTest, TwoLevelStreamTable) {
  // SPLIT 8: SID[15:8] selects the level-1 descriptor.
  const StreamTableConfig st{kBase, true, 8, 16};
  const uint64_t l2 = kBase + 0x10000;
  mem_.poke64(kBase + 0x12 * 8, l2 | 4);  // SPAN 4: 8 STEs
  DecodedSte s;
  s.config = ste::kAbort;
  put_ste(l2 + 7 * 64, s);
  DecodedSte out;
  const FetchResult r = fetch_.fetch_ste(st, 0x1207, 0, &out);
  ASSERT_TRUE(r.ok()) << r.why;
  EXPECT_EQ(out.config, ste::kAbort);
  EXPECT_EQ(r.done, 2 * kLatency);  // L1 descriptor, then the STE
  EXPECT_EQ(fetch_.fetch_ste(st, 0x1208, 0, &out).error, EventId::kBadStreamId);  // beyond SPAN
  EXPECT_EQ(fetch_.fetch_ste(st, 0x1300, 0, &out).error, EventId::kBadStreamId);  // SPAN 0
  mem_.poke64(kBase + 0x14 * 8, l2 | 10);  // SPAN > SPLIT + 1
  EXPECT_EQ(fetch_.fetch_ste(st, 0x1400, 0, &out).error, EventId::kBadStreamId);
}

TEST_F(ConfigFetchTest, FetchAbortsAreReportedWithTheAddress) {
  const StreamTableConfig st{kBase, false, 0, 8};
  mem_.add_error_range(kBase + 3 * 64, 64);
  DecodedSte out;
  const FetchResult r = fetch_.fetch_ste(st, 3, 0, &out);
  EXPECT_EQ(r.error, EventId::kSteFetch);
  EXPECT_EQ(r.fetch_addr, kBase + 3 * 64);
}

TEST_F(ConfigFetchTest, SingleCdAndSubstreamRules) {
  DecodedSte s;
  s.config = ste::kS1Trans;
  s.s1_context_ptr = kBase + 0x2000;
  put_cd(kBase + 0x2000, cd_with_asid(7));
  DecodedCd cd;
  bool bypass;
  FetchResult r = fetch_.fetch_cd(s, false, 0, 0, nullptr, &cd, &bypass);
  ASSERT_TRUE(r.ok()) << r.why;
  EXPECT_EQ(cd.asid, 7u);
  // S1CDMax = 0: a substream ID is an error.
  EXPECT_EQ(fetch_.fetch_cd(s, true, 0, 0, nullptr, &cd, &bypass).error, EventId::kBadSubstreamId);
}

TEST_F(ConfigFetchTest, LinearCdTableWithSubstreams) {
  DecodedSte s;
  s.config = ste::kS1Trans;
  s.s1_context_ptr = kBase + 0x4000;
  s.s1_cdmax = 3;
  for (uint16_t i = 0; i < 8; ++i) put_cd(kBase + 0x4000 + i * 64, cd_with_asid(static_cast<uint16_t>(100 + i)));
  DecodedCd cd;
  bool bypass;
  ASSERT_TRUE(fetch_.fetch_cd(s, true, 5, 0, nullptr, &cd, &bypass).ok());
  EXPECT_EQ(cd.asid, 105u);
  EXPECT_EQ(fetch_.fetch_cd(s, true, 8, 0, nullptr, &cd, &bypass).error, EventId::kBadSubstreamId);
  // Without a substream ID, S1DSS decides.
  s.s1dss = ste::kTerminate;
  EXPECT_EQ(fetch_.fetch_cd(s, false, 0, 0, nullptr, &cd, &bypass).error, EventId::kStreamDisabled);
  s.s1dss = ste::kBypassDss;
  ASSERT_TRUE(fetch_.fetch_cd(s, false, 0, 0, nullptr, &cd, &bypass).ok());
  EXPECT_TRUE(bypass);
  s.s1dss = ste::kSubstream0;
  ASSERT_TRUE(fetch_.fetch_cd(s, false, 0, 0, nullptr, &cd, &bypass).ok());
  EXPECT_FALSE(bypass);
  EXPECT_EQ(cd.asid, 100u);
}

TEST_F(ConfigFetchTest, TwoLevelCdTable) {
  DecodedSte s;
  s.config = ste::kS1Trans;
  s.s1fmt = ste::k2Level4K;  // 64 CDs per level-2 table
  s.s1_context_ptr = kBase + 0x8000;
  s.s1_cdmax = 10;
  const uint64_t l2 = kBase + 0x20000;
  mem_.poke64(kBase + 0x8000 + 2 * 8, l2 | 1);  // SSIDs 128..191
  put_cd(l2 + 9 * 64, cd_with_asid(0x99));
  DecodedCd cd;
  bool bypass;
  const FetchResult r = fetch_.fetch_cd(s, true, 128 + 9, 0, nullptr, &cd, &bypass);
  ASSERT_TRUE(r.ok()) << r.why;
  EXPECT_EQ(cd.asid, 0x99u);
  EXPECT_EQ(r.done, 2 * kLatency);
  EXPECT_EQ(fetch_.fetch_cd(s, true, 200, 0, nullptr, &cd, &bypass).error, EventId::kBadSubstreamId);  // L1 invalid
  mem_.add_error_range(l2 + 10 * 64, 64);
  EXPECT_EQ(fetch_.fetch_cd(s, true, 128 + 10, 0, nullptr, &cd, &bypass).error, EventId::kCdFetch);
}

TEST_F(ConfigFetchTest, NestedCdPointersGoThroughStageTwo) {
  DecodedSte s;
  s.config = ste::kNested;
  s.s1_context_ptr = 0x1000;  // an IPA
  s.s2_granule = Granule::k4K;
  s.s2_t0sz = 24;
  s.s2_ps_bits = 48;
  put_cd(kBase + 0x6000, cd_with_asid(3));
  unsigned calls = 0;
  auto s2 = [&](uint64_t ipa, uint64_t* pa, Ps* t, EventId* e) {
    ++calls;
    *t += 1000;
    if (ipa == 0x1000) {
      *pa = kBase + 0x6000;
      return true;
    }
    *e = EventId::kTranslation;
    return false;
  };
  DecodedCd cd;
  bool bypass;
  const FetchResult r = fetch_.fetch_cd(s, false, 0, 0, s2, &cd, &bypass);
  ASSERT_TRUE(r.ok()) << r.why;
  EXPECT_EQ(cd.asid, 3u);
  EXPECT_EQ(calls, 1u);
  EXPECT_EQ(r.done, 1000 + kLatency);
  s.s1_context_ptr = 0x2000;
  EXPECT_EQ(fetch_.fetch_cd(s, false, 0, 0, s2, &cd, &bypass).error, EventId::kTranslation);
}

}  // namespace
}  // namespace smmu_vp::smmu

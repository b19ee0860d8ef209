// STE and CD decoding: field positions (IHI 0070 5.2, 5.4) and every reason
// a descriptor is refused with C_BAD_STE / C_BAD_CD.
#include <gtest/gtest.h>

#include "smmu/descriptors.h"

namespace smmu_vp::smmu {
namespace {

DecodedSte s1_ste() {
  DecodedSte s;
  s.config = ste::kS1Trans;
  s.s1_context_ptr = 0x8123'4000;
  s.s1_cdmax = 4;
  s.s1dss = ste::kSubstream0;
  return s;
}

DecodedSte s2_ste() {
  DecodedSte s;
  s.config = ste::kS2Trans;
  s.s2_vmid = 0x42;
  s.s2_t0sz = 24;
  s.s2_sl0 = 1;
  s.s2_granule = Granule::k4K;
  s.s2_ps_bits = 44;
  s.s2_ttb = 0x9000'0000;
  return s;
}

TEST(Descriptors, BitsHelperMatchesSpecNumbering) {
  SteWords w{};
  set_bits(w, 143, 128, 0xBEEF);  // S2VMID lives in dword 2, bits 15:0
  EXPECT_EQ(w[2], 0xBEEFu);
  EXPECT_EQ(bits(w, 143, 128), 0xBEEFu);
  set_bits(w, 63, 59, 0x1F);
  EXPECT_EQ(w[0] >> 59, 0x1Fu);
}

TEST(Descriptors, SteRoundTripsStage1AndStage2) {
  const SmmuCaps caps;
  DecodedSte out;
  ASSERT_TRUE(decode_ste(encode_ste(s1_ste()), caps, &out).ok());
  EXPECT_EQ(out.config, ste::kS1Trans);
  EXPECT_EQ(out.s1_context_ptr, 0x8123'4000u);
  EXPECT_EQ(out.s1_cdmax, 4u);
  EXPECT_EQ(out.s1dss, ste::kSubstream0);
  ASSERT_TRUE(decode_ste(encode_ste(s2_ste()), caps, &out).ok());
  EXPECT_TRUE(out.stage2());
  EXPECT_FALSE(out.stage1());
  EXPECT_EQ(out.s2_vmid, 0x42u);
  EXPECT_EQ(out.s2_t0sz, 24u);
  EXPECT_EQ(out.s2_sl0, 1u);
  EXPECT_EQ(out.s2_ps_bits, 44u);
  EXPECT_EQ(out.s2_ttb, 0x9000'0000u);
}

TEST(Descriptors, SteFieldPositions) {
  // Written by hand from IHI 0070 5.2, independent of encode_ste.
  SteWords w{};
  w[0] = 1 | (0b101ull << 1) | (0x4000ull) | (3ull << 59);  // V, Config=S1, S1ContextPtr, S1CDMax=3
  w[1] = 0b10;                                              // S1DSS = substream 0
  DecodedSte out;
  ASSERT_TRUE(decode_ste(w, SmmuCaps{}, &out).ok());
  EXPECT_EQ(out.s1_context_ptr, 0x4000u);
  EXPECT_EQ(out.s1_cdmax, 3u);
  EXPECT_EQ(out.s1dss, ste::kSubstream0);
}

TEST(Descriptors, IllegalStesAreBadSte) {
  SmmuCaps caps;
  DecodedSte out;
  SteWords w = encode_ste(s1_ste(), /*valid=*/false);
  EXPECT_EQ(decode_ste(w, caps, &out).error, EventId::kBadSte);  // V = 0

  for (unsigned cfg : {1u, 2u, 3u}) {
    w = encode_ste(s1_ste());
    set_bits(w, 3, 1, cfg);
    EXPECT_EQ(decode_ste(w, caps, &out).error, EventId::kBadSte) << "Config " << cfg;
  }
  w = encode_ste(s1_ste());
  set_bits(w, 5, 4, 3);  // S1Fmt reserved
  EXPECT_EQ(decode_ste(w, caps, &out).error, EventId::kBadSte);

  SmmuCaps no_cd2l = caps;
  no_cd2l.cd2l = false;
  DecodedSte two_level = s1_ste();
  two_level.s1fmt = ste::k2Level4K;
  EXPECT_EQ(decode_ste(encode_ste(two_level), no_cd2l, &out).error, EventId::kBadSte);

  SmmuCaps small_ssid = caps;
  small_ssid.ssid_bits = 3;
  EXPECT_EQ(decode_ste(encode_ste(s1_ste()), small_ssid, &out).error, EventId::kBadSte);  // CDMax 4 > 3

  SmmuCaps no_s1 = caps;
  no_s1.s1 = false;
  EXPECT_EQ(decode_ste(encode_ste(s1_ste()), no_s1, &out).error, EventId::kBadSte);
  SmmuCaps no_s2 = caps;
  no_s2.s2 = false;
  EXPECT_EQ(decode_ste(encode_ste(s2_ste()), no_s2, &out).error, EventId::kBadSte);

  w = encode_ste(s2_ste());
  set_bits(w, 175, 174, 3);  // S2TG reserved
  EXPECT_EQ(decode_ste(w, caps, &out).error, EventId::kBadSte);
  SmmuCaps no16k = caps;
  no16k.gran16k = false;
  DecodedSte s16 = s2_ste();
  s16.s2_granule = Granule::k16K;
  EXPECT_EQ(decode_ste(encode_ste(s16), no16k, &out).error, EventId::kBadSte);
  w = encode_ste(s2_ste());
  set_bits(w, 179, 179, 0);  // S2AA64 = 0
  EXPECT_EQ(decode_ste(w, caps, &out).error, EventId::kBadSte);
  DecodedSte bad_t0sz = s2_ste();
  bad_t0sz.s2_t0sz = 40;
  EXPECT_EQ(decode_ste(encode_ste(bad_t0sz), caps, &out).error, EventId::kBadSte);
  SmmuCaps vmid8 = caps;
  vmid8.vmid16 = false;
  DecodedSte wide_vmid = s2_ste();
  wide_vmid.s2_vmid = 0x1FF;
  EXPECT_EQ(decode_ste(encode_ste(wide_vmid), vmid8, &out).error, EventId::kBadSte);
}

TEST(Descriptors, AbortAndBypassNeedNoStageFields) {
  DecodedSte s;
  s.config = ste::kBypass;
  DecodedSte out;
  SmmuCaps none;
  none.s1 = none.s2 = false;
  EXPECT_TRUE(decode_ste(encode_ste(s), none, &out).ok());
  s.config = ste::kAbort;
  EXPECT_TRUE(decode_ste(encode_ste(s), none, &out).ok());
  EXPECT_EQ(out.config, ste::kAbort);
}

TEST(Descriptors, Stage2OutputSizeIsCappedAtOas) {
  SmmuCaps caps;
  caps.oas_bits = 40;
  DecodedSte s = s2_ste();
  s.s2_ttb = 0x1000;
  DecodedSte out;
  ASSERT_TRUE(decode_ste(encode_ste(s), caps, &out).ok());
  EXPECT_EQ(out.s2_ps_bits, 40u);
}

DecodedCd good_cd() {
  DecodedCd c;
  c.t0sz = 25;
  c.granule = Granule::k64K;
  c.ips_bits = 48;
  c.asid = 0x1234;
  c.ttb0 = 0x8800'0000;
  c.mair = 0x44'FF'04;
  return c;
}

TEST(Descriptors, CdRoundTripsAndFieldPositions) {
  DecodedCd out;
  const CdWords w = encode_cd(good_cd());
  ASSERT_TRUE(decode_cd(w, SmmuCaps{}, &out).ok());
  EXPECT_EQ(out.t0sz, 25u);
  EXPECT_EQ(out.granule, Granule::k64K);
  EXPECT_EQ(out.asid, 0x1234u);
  EXPECT_EQ(out.ttb0, 0x8800'0000u);
  EXPECT_EQ(out.mair, 0x44'FF'04u);
  // By hand from IHI 0070 5.4: TG0 = 01 is 64K, ASID in [63:48], TTB0 in dword 1.
  EXPECT_EQ((w[0] >> 6) & 3, 1u);
  EXPECT_EQ(w[0] >> 48, 0x1234u);
  EXPECT_EQ(w[0] & 0x3F, 25u);
  EXPECT_TRUE((w[0] >> 31) & 1);
  EXPECT_EQ(w[1] & ~0xFull, 0x8800'0000u);
}

TEST(Descriptors, IllegalCdsAreBadCd) {
  SmmuCaps caps;
  DecodedCd out;
  EXPECT_EQ(decode_cd(encode_cd(good_cd(), false), caps, &out).error, EventId::kBadCd);
  DecodedCd aa32 = good_cd();
  aa32.aa64 = false;
  EXPECT_EQ(decode_cd(encode_cd(aa32), caps, &out).error, EventId::kBadCd);
  for (unsigned t0sz : {0u, 15u, 40u, 63u}) {
    DecodedCd c = good_cd();
    c.t0sz = t0sz;
    EXPECT_EQ(decode_cd(encode_cd(c), caps, &out).error, EventId::kBadCd) << t0sz;
  }
  CdWords w = encode_cd(good_cd());
  set_bits(w, 7, 6, 3);  // TG0 reserved
  EXPECT_EQ(decode_cd(w, caps, &out).error, EventId::kBadCd);
  w = encode_cd(good_cd());
  set_bits(w, 34, 32, 7);  // IPS reserved
  EXPECT_EQ(decode_cd(w, caps, &out).error, EventId::kBadCd);
  SmmuCaps asid8 = caps;
  asid8.asid16 = false;
  EXPECT_EQ(decode_cd(encode_cd(good_cd()), asid8, &out).error, EventId::kBadCd);
  SmmuCaps no64k = caps;
  no64k.gran64k = false;
  EXPECT_EQ(decode_cd(encode_cd(good_cd()), no64k, &out).error, EventId::kBadCd);
}

TEST(Descriptors, CdWithTtb0DisabledSkipsWalkChecks) {
  DecodedCd c = good_cd();
  c.epd0 = true;
  c.t0sz = 0;  // would be illegal if TTB0 were used
  DecodedCd out;
  ASSERT_TRUE(decode_cd(encode_cd(c), SmmuCaps{}, &out).ok());
  EXPECT_TRUE(out.epd0);
}

TEST(Descriptors, LevelOneDescriptors) {
  const L1Std s = decode_l1_std(0x8000'1000ull | 5);
  EXPECT_EQ(s.span, 5u);
  EXPECT_EQ(s.l2ptr, 0x8000'1000u);
  const L1Cd c = decode_l1_cd(0x8000'3000ull | 1);
  EXPECT_TRUE(c.valid);
  EXPECT_EQ(c.l2ptr, 0x8000'3000u);
  EXPECT_FALSE(decode_l1_cd(0x8000'3000ull).valid);
}

TEST(Descriptors, GranuleAndAddressSizeEncodings) {
  EXPECT_EQ(decode_tg(0), Granule::k4K);
  EXPECT_EQ(decode_tg(1), Granule::k64K);
  EXPECT_EQ(decode_tg(2), Granule::k16K);
  EXPECT_FALSE(decode_tg(3).has_value());
  for (Granule g : {Granule::k4K, Granule::k16K, Granule::k64K}) EXPECT_EQ(decode_tg(encode_tg(g)), g);
  const unsigned expected[] = {32, 36, 40, 42, 44, 48, 52};
  for (unsigned e = 0; e < 7; ++e) {
    EXPECT_EQ(decode_pa_bits(e), expected[e]);
    EXPECT_EQ(encode_pa_bits(expected[e]), e);
  }
  EXPECT_EQ(decode_pa_bits(7), 0u);
  EXPECT_STREQ(event_name(EventId::kBadSte), "C_BAD_STE");
}

}  // namespace
}  // namespace smmu_vp::smmu

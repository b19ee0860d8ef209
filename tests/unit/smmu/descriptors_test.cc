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

  // Config 0b001..0b011 and S1Fmt 0b11 are not ILLEGAL but behave as
  // another value (IHI 0070 5.2): see Ste52_ReservedConfigBehavesAsAbort and
  // Ste52_ReservedS1FmtBehavesAsLinear below.

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

// IHI 0070 5.2 (S2R, bit 186), 5.4 (R, bit 45): decoded, by hand.
TEST(Descriptors, RecordFlagsAtTheirPositions) {
  SteWords s = encode_ste(s2_ste());
  DecodedSte ste;
  ASSERT_TRUE(decode_ste(s, SmmuCaps{}, &ste).ok());
  EXPECT_TRUE(ste.s2_record);
  EXPECT_EQ((s[2] >> 58) & 1, 1u);
  s[2] &= ~(1ull << 58);
  ASSERT_TRUE(decode_ste(s, SmmuCaps{}, &ste).ok());
  EXPECT_FALSE(ste.s2_record);
  CdWords c = encode_cd(good_cd());
  DecodedCd cd;
  ASSERT_TRUE(decode_cd(c, SmmuCaps{}, &cd).ok());
  EXPECT_TRUE(cd.record);
  EXPECT_EQ((c[0] >> 45) & 1, 1u);
  c[0] &= ~(1ull << 45);
  ASSERT_TRUE(decode_cd(c, SmmuCaps{}, &cd).ok());
  EXPECT_FALSE(cd.record);
}

// IHI 0070 5.4 (HAD0, bit 65): decoded where IDR3.HAD says the SMMU has it,
// IGNORED where it does not (issue 31: never decoded).
TEST(Descriptors, Cd54_Had0AtBit65OnlyWithIdr3Had) {
  DecodedCd in = good_cd();
  in.had0 = true;
  const CdWords w = encode_cd(in);
  EXPECT_EQ((w[1] >> 1) & 1, 1u);
  DecodedCd cd;
  ASSERT_TRUE(decode_cd(w, SmmuCaps{}, &cd).ok());
  EXPECT_TRUE(cd.had0);
  SmmuCaps no_had;
  no_had.had = false;
  ASSERT_TRUE(decode_cd(w, no_had, &cd).ok());
  EXPECT_FALSE(cd.had0);
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
  // IPS 0b111 is Reserved and behaves as 0b110 (IHI 0070 5.4): see
  // Cd54_ReservedIpsBehavesAsLargest.
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

// ---- IHI 0070 5.2 / 5.4 audit: one test per condition; the section is in
// the name. Each ILLEGAL condition is checked on a descriptor that is legal
// without it.

SteWords s1_words() { return encode_ste(s1_ste()); }
SteWords s2_words() { return encode_ste(s2_ste()); }
DecodedSte nested_ste() {
  DecodedSte s = s2_ste();
  s.config = ste::kNested;
  s.s1_context_ptr = 0x8123'4000;
  s.s1_cdmax = 4;
  s.s1dss = ste::kSubstream0;
  return s;
}

TEST(Descriptors, Ste52_InvalidIsBadSte) {
  DecodedSte out;
  EXPECT_EQ(decode_ste(encode_ste(s1_ste(), false), SmmuCaps{}, &out).error, EventId::kBadSte);
}

TEST(Descriptors, Ste52_ReservedConfigBehavesAsAbort) {
  // Config 0b0xx: Reserved, behaves as 0b000 (abort, no event), not ILLEGAL.
  for (unsigned cfg : {1u, 2u, 3u}) {
    SteWords w = s1_words();
    set_bits(w, 3, 1, cfg);
    set_bits(w, 63, 59, 31);  // junk in fields an abort STE does not use
    DecodedSte out;
    ASSERT_TRUE(decode_ste(w, SmmuCaps{}, &out).ok()) << "Config " << cfg;
    EXPECT_EQ(out.config, ste::kAbort) << "Config " << cfg;
  }
}

TEST(Descriptors, Ste52_Stage1WithoutS1pIsBadSte) {
  SmmuCaps caps;
  caps.s1 = false;
  DecodedSte out;
  EXPECT_EQ(decode_ste(s1_words(), caps, &out).error, EventId::kBadSte);
  EXPECT_EQ(decode_ste(encode_ste(nested_ste()), caps, &out).error, EventId::kBadSte);
}

TEST(Descriptors, Ste52_Stage2WithoutS2pIsBadSte) {
  SmmuCaps caps;
  caps.s2 = false;
  DecodedSte out;
  EXPECT_EQ(decode_ste(s2_words(), caps, &out).error, EventId::kBadSte);
  EXPECT_EQ(decode_ste(encode_ste(nested_ste()), caps, &out).error, EventId::kBadSte);
}

TEST(Descriptors, Ste52_ReservedStrwIsBadSteWithHyp) {
  // STRW 0bx1 is Reserved, ILLEGAL when STRW is used (stage 1 only, Hyp).
  for (unsigned strw : {1u, 3u}) {
    DecodedSte s = s1_ste();
    s.strw = strw;
    DecodedSte out;
    EXPECT_EQ(decode_ste(encode_ste(s), SmmuCaps{}, &out).error, EventId::kBadSte) << strw;
  }
  DecodedSte el2 = s1_ste();
  el2.strw = 2;
  DecodedSte out;
  ASSERT_TRUE(decode_ste(encode_ste(el2), SmmuCaps{}, &out).ok());
  EXPECT_EQ(out.strw, 2u);
}

TEST(Descriptors, Ste52_StrwIgnoredWithoutHypOrWithStage2) {
  DecodedSte s = s1_ste();
  s.strw = 3;
  SmmuCaps no_hyp;
  no_hyp.hyp = false;
  DecodedSte out;
  ASSERT_TRUE(decode_ste(encode_ste(s), no_hyp, &out).ok());  // RES0 without Hyp
  EXPECT_EQ(out.strw, 0u);
  DecodedSte n = nested_ste();
  n.strw = 3;
  ASSERT_TRUE(decode_ste(encode_ste(n), SmmuCaps{}, &out).ok());  // IGNORED with stage 2
  EXPECT_EQ(out.strw, 0u);
}

TEST(Descriptors, Ste52_S1CdMaxAboveSsidSizeIsBadSte) {
  SmmuCaps caps;
  caps.ssid_bits = 3;
  DecodedSte out;
  EXPECT_EQ(decode_ste(s1_words(), caps, &out).error, EventId::kBadSte);  // S1CDMax 4 > 3
  caps.ssid_bits = 4;
  EXPECT_TRUE(decode_ste(s1_words(), caps, &out).ok());
}

TEST(Descriptors, Ste52_S1CdMaxIgnoredWithoutSubstreams) {
  // IDR1.SSIDSIZE == 0: S1CDMax (and S1Fmt, S1DSS) are IGNORED.
  SmmuCaps caps;
  caps.ssid_bits = 0;
  caps.cd2l = false;
  DecodedSte s = s1_ste();
  s.s1fmt = ste::k2Level4K;
  DecodedSte out;
  ASSERT_TRUE(decode_ste(encode_ste(s), caps, &out).ok());
  EXPECT_EQ(out.s1_cdmax, 0u);
  EXPECT_EQ(out.s1fmt, ste::kLinear);
}

TEST(Descriptors, Ste52_TwoLevelCdTableWithoutCd2lIsBadSte) {
  SmmuCaps caps;
  caps.cd2l = false;
  for (uint8_t fmt : {ste::k2Level4K, ste::k2Level64K}) {
    DecodedSte s = s1_ste();
    s.s1fmt = fmt;
    DecodedSte out;
    EXPECT_EQ(decode_ste(encode_ste(s), caps, &out).error, EventId::kBadSte) << int{fmt};
  }
}

TEST(Descriptors, Ste52_S1FmtIgnoredWithoutSubstreams) {
  // S1CDMax == 0: S1Fmt is IGNORED (one CD), so no CD2L check either.
  SmmuCaps caps;
  caps.cd2l = false;
  DecodedSte s = s1_ste();
  s.s1_cdmax = 0;
  s.s1fmt = ste::k2Level64K;
  DecodedSte out;
  ASSERT_TRUE(decode_ste(encode_ste(s), caps, &out).ok());
  EXPECT_EQ(out.s1fmt, ste::kLinear);
}

TEST(Descriptors, Ste52_ReservedS1FmtBehavesAsLinear) {
  SteWords w = s1_words();
  set_bits(w, 5, 4, 3);
  SmmuCaps caps;
  caps.cd2l = false;  // 0b11 is not a 2-level format: legal without CD2L
  DecodedSte out;
  ASSERT_TRUE(decode_ste(w, caps, &out).ok());
  EXPECT_EQ(out.s1fmt, ste::kLinear);
}

TEST(Descriptors, Ste52_ReservedS1DssBehavesAsTerminate) {
  SteWords w = s1_words();
  set_bits(w, 65, 64, 3);
  DecodedSte out;
  ASSERT_TRUE(decode_ste(w, SmmuCaps{}, &out).ok());
  EXPECT_EQ(out.s1dss, ste::kTerminate);
}

TEST(Descriptors, Ste52_S1StallDisableIsBadSteWithoutStallModel00) {
  DecodedSte s = s1_ste();
  s.s1_stall_disable = true;
  DecodedSte out;
  for (unsigned model : {0b01u, 0b10u}) {
    SmmuCaps caps;
    caps.stall_model = model;
    EXPECT_EQ(decode_ste(encode_ste(s), caps, &out).error, EventId::kBadSte) << model;
  }
  SmmuCaps both;
  both.stall_model = 0b00;
  EXPECT_TRUE(decode_ste(encode_ste(s), both, &out).ok());
  // IGNORED without stage 1.
  SteWords w = s2_words();
  set_bits(w, 91, 91, 1);
  EXPECT_TRUE(decode_ste(w, SmmuCaps{}, &out).ok());
}

// IHI 0070 5.2 (EATS, [93:92]): decoded only with IDR0.ATS and a
// translating Config; 0b10 (split stage) is ILLEGAL with NS1ATS = 1, 0b11
// (DPT) is Reserved without IDR3.DPT and behaves as 0b00.
TEST(Descriptors, Ste52_EatsNeedsAtsAndSplitStageIsBadSte) {
  SmmuCaps ats;
  ats.ats = true;
  DecodedSte out;
  auto with_eats = [](SteWords w, unsigned eats) {
    set_bits(w, 93, 92, eats);
    return w;
  };
  ASSERT_TRUE(decode_ste(with_eats(s1_words(), 1), ats, &out).ok());
  EXPECT_EQ(out.eats, ste::kEatsFull);
  ASSERT_TRUE(decode_ste(with_eats(s2_words(), 1), ats, &out).ok());
  EXPECT_EQ(out.eats, ste::kEatsFull);
  ASSERT_TRUE(decode_ste(with_eats(s1_words(), 3), ats, &out).ok());
  EXPECT_EQ(out.eats, ste::kEatsOff);
  EXPECT_EQ(decode_ste(with_eats(s1_words(), 2), ats, &out).error, EventId::kBadSte);
  // IGNORED without IDR0.ATS: even the ILLEGAL value decodes, as off.
  ASSERT_TRUE(decode_ste(with_eats(s1_words(), 2), SmmuCaps{}, &out).ok());
  EXPECT_EQ(out.eats, ste::kEatsOff);
  ASSERT_TRUE(decode_ste(with_eats(s1_words(), 1), SmmuCaps{}, &out).ok());
  EXPECT_EQ(out.eats, ste::kEatsOff);
  // IGNORED with Config[1:0] == 0b00 (bypass).
  DecodedSte bypass;
  bypass.config = ste::kBypass;
  ASSERT_TRUE(decode_ste(with_eats(encode_ste(bypass), 2), ats, &out).ok());
  EXPECT_EQ(out.eats, ste::kEatsOff);
  // encode_ste writes the field where decode_ste reads it.
  DecodedSte s = s1_ste();
  s.eats = ste::kEatsFull;
  EXPECT_EQ(bits(encode_ste(s), 93, 92), 1u);
}

TEST(Descriptors, Ste52_S1ContextPtrBeyondOasIsBadSte) {
  SmmuCaps caps;
  caps.oas_bits = 40;
  DecodedSte s = s1_ste();
  s.s1_context_ptr = 1ull << 40;
  DecodedSte out;
  EXPECT_EQ(decode_ste(encode_ste(s), caps, &out).error, EventId::kBadSte);
}

TEST(Descriptors, Ste52_S2VmidHighBitsWithoutVmid16IsBadSte) {
  SmmuCaps caps;
  caps.vmid16 = false;
  DecodedSte s = s2_ste();
  s.s2_vmid = 0x1FF;
  DecodedSte out;
  EXPECT_EQ(decode_ste(encode_ste(s), caps, &out).error, EventId::kBadSte);
  // Stage 1 only, NS-EL1, stage 2 implemented: S2VMID tags the translations
  // and is checked too.
  DecodedSte s1 = s1_ste();
  s1.s2_vmid = 0x1FF;
  EXPECT_EQ(decode_ste(encode_ste(s1), caps, &out).error, EventId::kBadSte);
}

TEST(Descriptors, Ste52_S2VmidTagsStage1OnlyAndIsIgnoredOtherwise) {
  DecodedSte s1 = s1_ste();
  s1.s2_vmid = 0x1FF;
  DecodedSte out;
  ASSERT_TRUE(decode_ste(encode_ste(s1), SmmuCaps{}, &out).ok());
  EXPECT_EQ(out.s2_vmid, 0x1FFu);
  // IGNORED: StreamWorld EL2 (STRW 0b10), or no stage 2 implemented.
  s1.strw = 2;
  SmmuCaps vmid8;
  vmid8.vmid16 = false;
  ASSERT_TRUE(decode_ste(encode_ste(s1), vmid8, &out).ok());
  EXPECT_EQ(out.s2_vmid, 0u);
  s1.strw = 0;
  SmmuCaps no_s2 = vmid8;
  no_s2.s2 = false;
  ASSERT_TRUE(decode_ste(encode_ste(s1), no_s2, &out).ok());
  EXPECT_EQ(out.s2_vmid, 0u);
}

TEST(Descriptors, Ste52_S2Aa64ZeroIsBadSteWithoutAArch32Tables) {
  SteWords w = s2_words();
  set_bits(w, 179, 179, 0);
  DecodedSte out;
  EXPECT_EQ(decode_ste(w, SmmuCaps{}, &out).error, EventId::kBadSte);
}

TEST(Descriptors, Ste52_S2TgReservedOrUnsupportedIsBadSte) {
  SteWords w = s2_words();
  set_bits(w, 175, 174, 3);
  DecodedSte out;
  EXPECT_EQ(decode_ste(w, SmmuCaps{}, &out).error, EventId::kBadSte);
  SmmuCaps no16k;
  no16k.gran16k = false;
  DecodedSte s = s2_ste();
  s.s2_granule = Granule::k16K;
  EXPECT_EQ(decode_ste(encode_ste(s), no16k, &out).error, EventId::kBadSte);
}

TEST(Descriptors, Ste52_S2SWithStallModel01IsBadSte) {
  SteWords w = s2_words();
  set_bits(w, 185, 185, 1);
  DecodedSte out;
  EXPECT_EQ(decode_ste(w, SmmuCaps{}, &out).error, EventId::kBadSte);
  SmmuCaps both;
  both.stall_model = 0b00;
  EXPECT_TRUE(decode_ste(w, both, &out).ok());
  SmmuCaps forced;
  forced.stall_model = 0b10;
  EXPECT_EQ(decode_ste(s2_words(), forced, &out).error, EventId::kBadSte);  // S2S 0 with stalls forced
}

TEST(Descriptors, Ste52_S2HaHdWithoutHttuIsBadSte) {
  DecodedSte out;
  for (unsigned bit : {183u, 184u}) {  // S2HD, S2HA
    SteWords w = s2_words();
    set_bits(w, bit, bit, 1);
    EXPECT_EQ(decode_ste(w, SmmuCaps{}, &out).error, EventId::kBadSte) << bit;
  }
  SmmuCaps af_only;
  af_only.httu = 0b01;
  SteWords ha = s2_words();
  set_bits(ha, 184, 184, 1);
  EXPECT_TRUE(decode_ste(ha, af_only, &out).ok());
  SteWords hd = s2_words();
  set_bits(hd, 183, 183, 1);
  EXPECT_EQ(decode_ste(hd, af_only, &out).error, EventId::kBadSte);
}

TEST(Descriptors, Ste52_S2EndiUnsupportedEndiannessIsBadSte) {
  SteWords w = s2_words();
  set_bits(w, 180, 180, 1);  // big-endian walks on a little-endian-only SMMU
  DecodedSte out;
  EXPECT_EQ(decode_ste(w, SmmuCaps{}, &out).error, EventId::kBadSte);
  SmmuCaps mixed;
  mixed.ttendian = 0b00;
  EXPECT_TRUE(decode_ste(w, mixed, &out).ok());
}

TEST(Descriptors, Ste52_ReservedS2PsBehavesAsLargest) {
  SteWords w = s2_words();
  set_bits(w, 178, 176, 7);
  SmmuCaps caps;
  caps.oas_bits = 52;
  DecodedSte out;
  ASSERT_TRUE(decode_ste(w, caps, &out).ok());
  EXPECT_EQ(out.s2_ps_bits, 52u);  // 0b111 behaves as 0b110 from SMMUv3.1
  caps.arch_minor = 0;
  caps.oas_bits = 48;
  for (unsigned enc : {6u, 7u}) {
    set_bits(w, 178, 176, enc);
    ASSERT_TRUE(decode_ste(w, caps, &out).ok()) << enc;
    EXPECT_EQ(out.s2_ps_bits, 48u) << enc;  // SMMUv3.0: behave as 0b101
  }
}

TEST(Descriptors, Ste52_S2T0szOutOfRangeIsBadSte) {
  DecodedSte out;
  for (unsigned t0sz : {15u, 40u}) {
    DecodedSte s = s2_ste();
    s.s2_t0sz = t0sz;
    EXPECT_EQ(decode_ste(encode_ste(s), SmmuCaps{}, &out).error, EventId::kBadSte) << t0sz;
  }
}

TEST(Descriptors, Ste52_S2TtbBeyondOasIsBadSte) {
  SmmuCaps caps;
  caps.oas_bits = 40;
  DecodedSte s = s2_ste();
  s.s2_ttb = 1ull << 40;
  DecodedSte out;
  EXPECT_EQ(decode_ste(encode_ste(s), caps, &out).error, EventId::kBadSte);
}

TEST(Descriptors, Cd54_InvalidIsBadCd) {
  DecodedCd out;
  EXPECT_EQ(decode_cd(encode_cd(good_cd(), false), SmmuCaps{}, &out).error, EventId::kBadCd);
}

TEST(Descriptors, Cd54_StallWithS1StalldOrStallModel01IsBadCd) {
  CdWords w = encode_cd(good_cd());
  set_bits(w, 44, 44, 1);  // CD.S
  DecodedCd out;
  EXPECT_EQ(decode_cd(w, SmmuCaps{}, &out).error, EventId::kBadCd);  // STALL_MODEL 0b01
  SmmuCaps both;
  both.stall_model = 0b00;
  EXPECT_TRUE(decode_cd(w, both, &out).ok());
  EXPECT_EQ(decode_cd(w, both, &out, /*ste_s1stalld=*/true).error, EventId::kBadCd);
  SmmuCaps forced;
  forced.stall_model = 0b10;
  EXPECT_EQ(decode_cd(encode_cd(good_cd()), forced, &out).error, EventId::kBadCd);  // S 0 with stalls forced
}

TEST(Descriptors, Cd54_AbortBitClearWithTermModel1IsBadCd) {
  CdWords w = encode_cd(good_cd());
  set_bits(w, 46, 46, 0);  // CD.A
  DecodedCd out;
  EXPECT_EQ(decode_cd(w, SmmuCaps{}, &out).error, EventId::kBadCd);
  SmmuCaps raz_wi;
  raz_wi.term_model = false;
  EXPECT_TRUE(decode_cd(w, raz_wi, &out).ok());
}

TEST(Descriptors, Cd54_EndiUnsupportedEndiannessIsBadCd) {
  CdWords w = encode_cd(good_cd());
  set_bits(w, 15, 15, 1);
  DecodedCd out;
  EXPECT_EQ(decode_cd(w, SmmuCaps{}, &out).error, EventId::kBadCd);
  // IGNORED when both EPD0 and EPD1 are 1.
  set_bits(w, 14, 14, 1);
  EXPECT_TRUE(decode_cd(w, SmmuCaps{}, &out).ok());
}

TEST(Descriptors, Cd54_HaHdWithoutHttuIsBadCd) {
  DecodedCd out;
  for (unsigned bit : {42u, 43u}) {  // HD, HA
    CdWords w = encode_cd(good_cd());
    set_bits(w, bit, bit, 1);
    EXPECT_EQ(decode_cd(w, SmmuCaps{}, &out).error, EventId::kBadCd) << bit;
  }
  SmmuCaps af_only;
  af_only.httu = 0b01;
  CdWords hd = encode_cd(good_cd());
  set_bits(hd, 42, 42, 1);
  EXPECT_EQ(decode_cd(hd, af_only, &out).error, EventId::kBadCd);
}

TEST(Descriptors, Cd54_Aa64ZeroIsBadCdWithoutAArch32Tables) {
  DecodedCd c = good_cd();
  c.aa64 = false;
  DecodedCd out;
  EXPECT_EQ(decode_cd(encode_cd(c), SmmuCaps{}, &out).error, EventId::kBadCd);
}

TEST(Descriptors, Cd54_T0szOutOfRangeIsBadCd) {
  DecodedCd out;
  for (unsigned t0sz : {0u, 15u, 40u, 63u}) {
    DecodedCd c = good_cd();
    c.t0sz = t0sz;
    EXPECT_EQ(decode_cd(encode_cd(c), SmmuCaps{}, &out).error, EventId::kBadCd) << t0sz;
  }
}

TEST(Descriptors, Cd54_Tg0ReservedOrUnsupportedIsBadCd) {
  CdWords w = encode_cd(good_cd());
  set_bits(w, 7, 6, 3);
  DecodedCd out;
  EXPECT_EQ(decode_cd(w, SmmuCaps{}, &out).error, EventId::kBadCd);
  SmmuCaps no64k;
  no64k.gran64k = false;
  EXPECT_EQ(decode_cd(encode_cd(good_cd()), no64k, &out).error, EventId::kBadCd);
}

TEST(Descriptors, Cd54_Ttb1ChecksApplyWhenEpd1IsZero) {
  CdWords w = encode_cd(good_cd());
  set_bits(w, 30, 30, 0);  // EPD1 = 0: T1SZ/TG1/TTB1 are used
  set_bits(w, 21, 16, 25);
  set_bits(w, 23, 22, 2);  // TG1 4K
  DecodedCd out;
  EXPECT_TRUE(decode_cd(w, SmmuCaps{}, &out).ok());
  CdWords tg1 = w;
  set_bits(tg1, 23, 22, 0);  // Reserved
  EXPECT_EQ(decode_cd(tg1, SmmuCaps{}, &out).error, EventId::kBadCd);
  CdWords t1sz = w;
  set_bits(t1sz, 21, 16, 40);
  EXPECT_EQ(decode_cd(t1sz, SmmuCaps{}, &out).error, EventId::kBadCd);
  CdWords ttb1 = w;
  set_bits(ttb1, 179, 132, (1ull << 48) >> 4);  // TTB1 = 2^48, beyond the 48-bit IPS
  EXPECT_EQ(decode_cd(ttb1, SmmuCaps{}, &out).error, EventId::kBadCd);
}

TEST(Descriptors, Cd54_ReservedIpsBehavesAsLargest) {
  CdWords w = encode_cd(good_cd());
  set_bits(w, 34, 32, 7);
  SmmuCaps caps;
  caps.oas_bits = 52;
  DecodedCd out;
  ASSERT_TRUE(decode_cd(w, caps, &out).ok());
  EXPECT_EQ(out.ips_bits, 52u);
  caps.oas_bits = 44;
  ASSERT_TRUE(decode_cd(w, caps, &out).ok());
  EXPECT_EQ(out.ips_bits, 44u);  // capped at the OAS
  caps.arch_minor = 0;
  caps.oas_bits = 48;
  set_bits(w, 34, 32, 6);
  ASSERT_TRUE(decode_cd(w, caps, &out).ok());
  EXPECT_EQ(out.ips_bits, 48u);  // SMMUv3.0: 0b110 behaves as 0b101
}

TEST(Descriptors, Cd54_AsidHighBitsWithoutAsid16IsBadCd) {
  SmmuCaps caps;
  caps.asid16 = false;
  DecodedCd out;
  EXPECT_EQ(decode_cd(encode_cd(good_cd()), caps, &out).error, EventId::kBadCd);
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

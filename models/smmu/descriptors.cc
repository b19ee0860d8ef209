#include "smmu/descriptors.h"

namespace smmu_vp::smmu {

const char* event_name(EventId id) {
  switch (id) {
    case EventId::kNone: return "none";
    case EventId::kUut: return "F_UUT";
    case EventId::kBadStreamId: return "C_BAD_STREAMID";
    case EventId::kSteFetch: return "F_STE_FETCH";
    case EventId::kBadSte: return "C_BAD_STE";
    case EventId::kBadAtsTreq: return "F_BAD_ATS_TREQ";
    case EventId::kStreamDisabled: return "F_STREAM_DISABLED";
    case EventId::kTranslForbidden: return "F_TRANSL_FORBIDDEN";
    case EventId::kBadSubstreamId: return "C_BAD_SUBSTREAMID";
    case EventId::kCdFetch: return "F_CD_FETCH";
    case EventId::kBadCd: return "C_BAD_CD";
    case EventId::kWalkEabt: return "F_WALK_EABT";
    case EventId::kTranslation: return "F_TRANSLATION";
    case EventId::kAddrSize: return "F_ADDR_SIZE";
    case EventId::kAccess: return "F_ACCESS";
    case EventId::kPermission: return "F_PERMISSION";
    case EventId::kTlbConflict: return "F_TLB_CONFLICT";
    case EventId::kCfgConflict: return "F_CFG_CONFLICT";
    case EventId::kPageRequest: return "E_PAGE_REQUEST";
  }
  return "unknown";
}

std::optional<Granule> decode_tg(unsigned tg) {
  switch (tg) {
    case 0: return Granule::k4K;
    case 1: return Granule::k64K;
    case 2: return Granule::k16K;
    default: return std::nullopt;
  }
}

unsigned encode_tg(Granule g) {
  switch (g) {
    case Granule::k4K: return 0;
    case Granule::k64K: return 1;
    case Granule::k16K: return 2;
  }
  return 0;
}

unsigned decode_pa_bits(unsigned enc) {
  static const unsigned kBits[] = {32, 36, 40, 42, 44, 48, 52};
  return enc < 7 ? kBits[enc] : 0;
}

unsigned decode_ps_field(unsigned enc, unsigned arch_minor) {
  if (enc >= 6 && arch_minor == 0) return 48;  // 0b110, 0b111 behave as 0b101
  if (enc == 7) return 52;                     // 0b111 behaves as 0b110
  return decode_pa_bits(enc);
}

unsigned encode_pa_bits(unsigned bits) {
  static const unsigned kBits[] = {32, 36, 40, 42, 44, 48, 52};
  for (unsigned i = 0; i < 7; ++i)
    if (kBits[i] >= bits) return i;
  return 6;
}

namespace {

bool granule_supported(Granule g, const SmmuCaps& caps) {
  switch (g) {
    case Granule::k4K: return caps.gran4k;
    case Granule::k16K: return caps.gran16k;
    case Granule::k64K: return caps.gran64k;
  }
  return false;
}

DecodeResult bad(EventId id, std::string why) { return {id, std::move(why)}; }

// T0SZ limits for an AArch64 regime without 52-bit addressing (Arm ARM D8.1):
// at least 16 (48-bit input), at most 39 (25-bit input).
constexpr unsigned kMinT0sz = 16;
constexpr unsigned kMaxT0sz = 39;

}  // namespace

// IHI 0070 5.2: field positions of the STE; 5.2.2 (SteIllegal): which STEs
// are ILLEGAL. Only the Non-secure stream table exists here, and D128, DPT,
// MPAM, PBHA, split-stage ATS and the stage-2 permission extensions are
// outside this SMMU's feature set (its ID registers do not advertise them),
// so their checks never apply: S2S2PIE/S2POE/S2HWU*, VMSPtr are IGNORED or
// RES0. EATS is decoded only with IDR0.ATS.
DecodeResult decode_ste(const SteWords& w, const SmmuCaps& caps, DecodedSte* out) {
  DecodedSte s;
  if (!bits(w, 0, 0)) return bad(EventId::kBadSte, "STE.V is 0");
  s.config = static_cast<uint8_t>(bits(w, 3, 1));
  // IHI 0070 5.2 (Config): 0b001..0b011 are Reserved and behave as 0b000:
  // abort, no event. Nothing else of the STE is looked at.
  if ((s.config & 0b100) == 0) {
    s.config = ste::kAbort;
    *out = s;
    return {};
  }
  if (s.stage1() && !caps.s1) return bad(EventId::kBadSte, "stage 1 requested but IDR0.S1P is 0");
  if (s.stage2() && !caps.s2) return bad(EventId::kBadSte, "stage 2 requested but IDR0.S2P is 0");
  if (s.config == ste::kBypass) {
    *out = s;
    return {};
  }

  // IHI 0070 5.2 (STRW): used only with stage 1 alone and IDR0.Hyp (RES0
  // without Hyp, IGNORED with stage 2); then 0bx1 is Reserved, ILLEGAL.
  const bool strw_used = caps.s1 && caps.hyp && s.config == ste::kS1Trans;
  if (strw_used) {
    s.strw = static_cast<unsigned>(bits(w, 95, 94));
    if (s.strw & 1) return bad(EventId::kBadSte, "STE.STRW " + std::to_string(s.strw) + " is reserved (ILLEGAL)");
  }

  // IHI 0070 5.2 (EATS): IGNORED without IDR0.ATS, and with Config[1:0] ==
  // 0b00 (abort and bypass returned above). 0b10, split-stage ATS, is
  // ILLEGAL unless Config is nested and IDR0.NS1ATS is 0; the model always
  // advertises NS1ATS = 1 with both stages, so it is ILLEGAL here. 0b11 asks
  // for DPT, which is Reserved without IDR3.DPT and behaves as 0b00.
  if (caps.ats) {
    const auto eats = static_cast<uint8_t>(bits(w, 93, 92));
    if (eats == ste::kEatsSplit)
      return bad(EventId::kBadSte, "STE.EATS 0b10 (split-stage ATS) but IDR0.NS1ATS is 1 (ILLEGAL)");
    s.eats = eats == ste::kEatsFull ? ste::kEatsFull : ste::kEatsOff;
  }

  if (s.stage1()) {
    // IHI 0070 5.2 (S1CDMax): IGNORED when IDR1.SSIDSIZE is 0; otherwise
    // 0..SSIDSIZE, other values ILLEGAL.
    if (caps.ssid_bits != 0) s.s1_cdmax = static_cast<unsigned>(bits(w, 63, 59));
    if (s.s1_cdmax > caps.ssid_bits)
      return bad(EventId::kBadSte, "STE.S1CDMax " + std::to_string(s.s1_cdmax) + " exceeds IDR1.SSIDSIZE");
    // IHI 0070 5.2 (S1Fmt, S1DSS): IGNORED without substreams (S1CDMax 0).
    if (s.s1_cdmax != 0) {
      s.s1fmt = static_cast<uint8_t>(bits(w, 5, 4));
      // S1Fmt 0b11 is Reserved and behaves as 0b00 (linear).
      if (s.s1fmt == 3) s.s1fmt = ste::kLinear;
      // With substreams, a 2-level CD table without IDR0.CD2L is ILLEGAL.
      if (s.s1fmt != ste::kLinear && !caps.cd2l)
        return bad(EventId::kBadSte, "two-level CD table but IDR0.CD2L is 0");
      s.s1dss = static_cast<uint8_t>(bits(w, 65, 64));
      // S1DSS 0b11 is Reserved and behaves as 0b00 (terminate).
      if (s.s1dss == 3) s.s1dss = ste::kTerminate;
    }
    s.s1_context_ptr = bits(w, 51, 6) << 6;
    s.s1_stall_disable = bits(w, 91, 91);
    // IHI 0070 5.2 (S1STALLD): with stage 1 and IDR0.STALL_MODEL != 0b00, 1
    // is ILLEGAL (stalls are not supported, or not configurable).
    if (s.s1_stall_disable && caps.stall_model != 0b00)
      return bad(EventId::kBadSte, "STE.S1STALLD is 1 but IDR0.STALL_MODEL is not 0b00");
    // IHI 0070 5.2 (S1ContextPtr): a PA within the OAS, or with stage 2 an
    // IPA within the IAS (= OAS: no AArch32 tables, 3.4).
    if (caps.oas_bits < 64 && (s.s1_context_ptr >> caps.oas_bits) != 0)
      return bad(EventId::kBadSte, "STE.S1ContextPtr beyond the output address size");
  }

  // IHI 0070 5.2 (S2VMID): a Non-secure STE's translations are tagged with
  // S2VMID when stage 2 is implemented and the StreamWorld is NS-EL1, with
  // stage 2 enabled or stage 1 alone; otherwise the field is IGNORED.
  const bool vmid_used = caps.s2 && (s.stage2() || s.strw == 0);
  if (vmid_used) {
    s.s2_vmid = static_cast<uint16_t>(bits(w, 143, 128));
    // With 8-bit VMIDs, S2VMID[15:8] != 0 is ILLEGAL unless IGNORED.
    if (!caps.vmid16 && (s.s2_vmid >> 8) != 0) return bad(EventId::kBadSte, "STE.S2VMID[15:8] set without VMID16");
  }

  if (s.stage2()) {
    s.s2_t0sz = static_cast<unsigned>(bits(w, 165, 160));
    s.s2_sl0 = static_cast<unsigned>(bits(w, 167, 166));
    const auto g = decode_tg(static_cast<unsigned>(bits(w, 175, 174)));
    s.s2_ps_bits = decode_ps_field(static_cast<unsigned>(bits(w, 178, 176)), caps.arch_minor);
    const bool aa64 = bits(w, 179, 179);
    const bool endi = bits(w, 180, 180);
    s.s2_affd = bits(w, 181, 181);
    s.s2_ptw = bits(w, 182, 182);
    const bool s2hd = bits(w, 183, 183), s2ha = bits(w, 184, 184), s2s = bits(w, 185, 185);
    s.s2_record = bits(w, 186, 186);
    s.s2_ttb = bits(w, 243, 196) << 4;
    // IHI 0070 5.2 (S2AA64): VMSAv8-32 LPAE without IDR0.TTF AArch32 is ILLEGAL.
    if (!aa64) return bad(EventId::kBadSte, "STE.S2AA64 is 0: AArch32 stage-2 tables are not supported");
    // IHI 0070 5.2 (S2TG): an unsupported granule or the Reserved 0b11 is ILLEGAL.
    if (!g || !granule_supported(*g, caps)) return bad(EventId::kBadSte, "STE.S2TG selects an unsupported granule");
    s.s2_granule = *g;
    // IHI 0070 5.2 (S2S): 1 with STALL_MODEL 0b01 is ILLEGAL; 0 with 0b10 too.
    if (s2s && caps.stall_model == 0b01) return bad(EventId::kBadSte, "STE.S2S is 1 but IDR0.STALL_MODEL is 0b01");
    if (!s2s && caps.stall_model == 0b10) return bad(EventId::kBadSte, "STE.S2S is 0 but IDR0.STALL_MODEL is 0b10");
    s.s2_stall = s2s;
    // IHI 0070 5.2 (S2HA, S2HD): HA with HTTU 0b00, HD with HTTU 0b0x, ILLEGAL.
    if ((s2ha || s2hd) && caps.httu == 0b00) return bad(EventId::kBadSte, "STE.S2HA/S2HD set but IDR0.HTTU is 0b00");
    if (s2hd && caps.httu == 0b01) return bad(EventId::kBadSte, "STE.S2HD set but IDR0.HTTU is 0b01");
    // IHI 0070 5.2 (S2ENDI): an endianness IDR0.TTENDIAN lacks is ILLEGAL.
    if ((endi && caps.ttendian == 0b10) || (!endi && caps.ttendian == 0b11))
      return bad(EventId::kBadSte, "STE.S2ENDI selects an endianness IDR0.TTENDIAN does not support");
    // IHI 0070 5.2 (S2PS): the effective size is capped at the OAS.
    if (s.s2_ps_bits > caps.oas_bits) s.s2_ps_bits = caps.oas_bits;
    // IHI 0070 5.2 (S2T0SZ), 5.2.2 STES2T0SZInvalid: out of range is ILLEGAL
    // (from SMMUv3.1; CONSTRAINED UNPREDICTABLE in 3.0, where ILLEGAL is one
    // of the permitted behaviours). SL0 consistency and S2TTB against the
    // effective S2PS are checked by PageTableWalker::check (translator).
    if (s.s2_t0sz < kMinT0sz || s.s2_t0sz > kMaxT0sz)
      return bad(EventId::kBadSte, "STE.S2T0SZ " + std::to_string(s.s2_t0sz) + " out of range");
    if (caps.oas_bits < 64 && (s.s2_ttb >> caps.oas_bits) != 0)
      return bad(EventId::kBadSte, "STE.S2TTB beyond the output address size");
  }
  *out = s;
  return {};
}

namespace {

// CD.TG1 encoding (IHI 0070 5.4): 0b01 16K, 0b10 4K, 0b11 64K; 0b00 Reserved.
std::optional<Granule> decode_tg1(unsigned tg) {
  switch (tg) {
    case 1: return Granule::k16K;
    case 2: return Granule::k4K;
    case 3: return Granule::k64K;
    default: return std::nullopt;
  }
}

}  // namespace

// IHI 0070 5.4: field positions of the CD; 5.4.2 (CdIllegal): which CDs are
// ILLEGAL. The StreamWorld is taken as NS-EL1 (EL2 StreamWorlds are not
// modelled), so EPD0/EPD1 and ASID are always used.
DecodeResult decode_cd(const CdWords& w, const SmmuCaps& caps, DecodedCd* out, bool ste_s1stalld) {
  DecodedCd c;
  if (!bits(w, 31, 31)) return bad(EventId::kBadCd, "CD.V is 0");
  c.aa64 = bits(w, 41, 41);
  if (!c.aa64) return bad(EventId::kBadCd, "CD.AA64 is 0: AArch32 tables are not supported");
  c.t0sz = static_cast<unsigned>(bits(w, 5, 0));
  const auto g = decode_tg(static_cast<unsigned>(bits(w, 7, 6)));
  c.epd0 = bits(w, 14, 14);
  const bool endi = bits(w, 15, 15);
  const bool epd1 = bits(w, 30, 30);
  c.ips_bits = decode_ps_field(static_cast<unsigned>(bits(w, 34, 32)), caps.arch_minor);
  c.affd = bits(w, 35, 35);
  const bool hd = bits(w, 42, 42), ha = bits(w, 43, 43);
  const bool stall = bits(w, 44, 44), abort = bits(w, 46, 46);
  c.record = bits(w, 45, 45);
  c.had0 = caps.had && bits(w, 65, 65);  // IHI 0070 5.4: IGNORED when IDR3.HAD is 0
  c.asid = static_cast<uint16_t>(bits(w, 63, 48));
  c.ttb0 = bits(w, 115, 68) << 4;
  c.mair = w[3];
  // IHI 0070 5.4 (S), 5.2 (S1STALLD): stalls enabled in a CD under an STE
  // that disables them are ILLEGAL; so is S = 1 with STALL_MODEL 0b01 and
  // S = 0 with STALL_MODEL 0b10 (5.4.2).
  if (stall && ste_s1stalld) return bad(EventId::kBadCd, "CD.S is 1 under STE.S1STALLD = 1");
  if (stall && caps.stall_model == 0b01) return bad(EventId::kBadCd, "CD.S is 1 but IDR0.STALL_MODEL is 0b01");
  if (!stall && caps.stall_model == 0b10) return bad(EventId::kBadCd, "CD.S is 0 but IDR0.STALL_MODEL is 0b10");
  c.stall = stall;
  // IHI 0070 5.4.2, 5.5: with IDR0.TERM_MODEL = 1, CD.A = 0 is ILLEGAL
  // (terminated transactions cannot complete with RAZ/WI).
  if (caps.term_model && !abort) return bad(EventId::kBadCd, "CD.A is 0 but IDR0.TERM_MODEL is 1");
  // IHI 0070 5.4 (ENDI): unless both EPDx are 1, an endianness that
  // IDR0.TTENDIAN lacks is ILLEGAL.
  if ((!c.epd0 || !epd1) && ((endi && caps.ttendian == 0b10) || (!endi && caps.ttendian == 0b11)))
    return bad(EventId::kBadCd, "CD.ENDI selects an endianness IDR0.TTENDIAN does not support");
  // IHI 0070 5.4 (HA, HD): HA with HTTU 0b00, HD with HTTU 0b0x, ILLEGAL.
  if ((ha || hd) && caps.httu == 0b00) return bad(EventId::kBadCd, "CD.HA/HD set but IDR0.HTTU is 0b00");
  if (hd && caps.httu == 0b01) return bad(EventId::kBadCd, "CD.HD set but IDR0.HTTU is 0b01");
  // IHI 0070 5.4 (T0SZ, TG0): IGNORED with EPD0 = 1; otherwise an
  // unsupported or Reserved TG0, or T0SZ out of range, is ILLEGAL. TTB0
  // against the effective IPS: PageTableWalker::check (translator).
  if (!c.epd0) {
    if (!g || !granule_supported(*g, caps)) return bad(EventId::kBadCd, "CD.TG0 selects an unsupported granule");
    if (c.t0sz < kMinT0sz || c.t0sz > kMaxT0sz)
      return bad(EventId::kBadCd, "CD.T0SZ " + std::to_string(c.t0sz) + " out of range");
  }
  c.granule = g.value_or(Granule::k4K);
  // IHI 0070 5.4 (IPS): the effective IPS is capped by the OAS.
  if (c.ips_bits > caps.oas_bits) c.ips_bits = caps.oas_bits;
  // IHI 0070 5.4 (T1SZ, TG1, TTB1): with EPD1 = 0 the same checks apply to
  // TTB1 (its walks are not modelled, but its legality is).
  if (!epd1) {
    const auto g1 = decode_tg1(static_cast<unsigned>(bits(w, 23, 22)));
    const unsigned t1sz = static_cast<unsigned>(bits(w, 21, 16));
    const uint64_t ttb1 = bits(w, 179, 132) << 4;
    if (!g1 || !granule_supported(*g1, caps)) return bad(EventId::kBadCd, "CD.TG1 selects an unsupported granule");
    if (t1sz < kMinT0sz || t1sz > kMaxT0sz)
      return bad(EventId::kBadCd, "CD.T1SZ " + std::to_string(t1sz) + " out of range");
    if ((ttb1 >> c.ips_bits) != 0) return bad(EventId::kBadCd, "CD.TTB1 beyond the effective IPS");
  }
  // IHI 0070 5.4 (ASID): with 8-bit ASIDs, ASID[15:8] != 0 is ILLEGAL.
  if (!caps.asid16 && (c.asid >> 8) != 0) return bad(EventId::kBadCd, "CD.ASID[15:8] set without ASID16");
  *out = c;
  return {};
}

L1Std decode_l1_std(uint64_t w) { return {static_cast<unsigned>(w & 0x1F), w & 0x000FFFFFFFFFFFC0ull}; }

L1Cd decode_l1_cd(uint64_t w) { return {(w & 1) != 0, w & 0x000FFFFFFFFFF000ull}; }

SteWords encode_ste(const DecodedSte& s, bool valid) {
  SteWords w{};
  set_bits(w, 0, 0, valid);
  set_bits(w, 3, 1, s.config);
  set_bits(w, 5, 4, s.s1fmt);
  set_bits(w, 51, 6, s.s1_context_ptr >> 6);
  set_bits(w, 63, 59, s.s1_cdmax);
  set_bits(w, 65, 64, s.s1dss);
  set_bits(w, 91, 91, s.s1_stall_disable);
  set_bits(w, 93, 92, s.eats);
  set_bits(w, 95, 94, s.strw);
  set_bits(w, 143, 128, s.s2_vmid);
  set_bits(w, 165, 160, s.s2_t0sz);
  set_bits(w, 167, 166, s.s2_sl0);
  set_bits(w, 175, 174, encode_tg(s.s2_granule));
  set_bits(w, 178, 176, encode_pa_bits(s.s2_ps_bits ? s.s2_ps_bits : 48));
  set_bits(w, 179, 179, 1);  // S2AA64
  set_bits(w, 181, 181, s.s2_affd);
  set_bits(w, 182, 182, s.s2_ptw);
  set_bits(w, 185, 185, s.s2_stall);
  set_bits(w, 186, 186, s.s2_record);
  set_bits(w, 243, 196, s.s2_ttb >> 4);
  return w;
}

CdWords encode_cd(const DecodedCd& c, bool valid) {
  CdWords w{};
  set_bits(w, 5, 0, c.t0sz);
  set_bits(w, 7, 6, encode_tg(c.granule));
  set_bits(w, 14, 14, c.epd0);
  set_bits(w, 30, 30, 1);  // EPD1: TTB1 is not used
  set_bits(w, 31, 31, valid);
  set_bits(w, 34, 32, encode_pa_bits(c.ips_bits ? c.ips_bits : 48));
  set_bits(w, 35, 35, c.affd);
  set_bits(w, 41, 41, c.aa64);
  set_bits(w, 44, 44, c.stall);
  set_bits(w, 45, 45, c.record);
  set_bits(w, 46, 46, 1);  // A: terminated transactions abort (required with TERM_MODEL = 1)
  set_bits(w, 63, 48, c.asid);
  set_bits(w, 65, 65, c.had0);
  set_bits(w, 115, 68, c.ttb0 >> 4);
  w[3] = c.mair;
  return w;
}

}  // namespace smmu_vp::smmu

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

// IHI 0070 5.2: field positions of the STE.
DecodeResult decode_ste(const SteWords& w, const SmmuCaps& caps, DecodedSte* out) {
  DecodedSte s;
  if (!bits(w, 0, 0)) return bad(EventId::kBadSte, "STE.V is 0");
  s.config = static_cast<uint8_t>(bits(w, 3, 1));
  switch (s.config) {
    case ste::kAbort: case ste::kBypass: case ste::kS1Trans: case ste::kS2Trans: case ste::kNested: break;
    default: return bad(EventId::kBadSte, "STE.Config " + std::to_string(s.config) + " is reserved");
  }
  if (s.stage1() && !caps.s1) return bad(EventId::kBadSte, "stage 1 requested but IDR0.S1P is 0");
  if (s.stage2() && !caps.s2) return bad(EventId::kBadSte, "stage 2 requested but IDR0.S2P is 0");

  if (s.stage1()) {
    s.s1fmt = static_cast<uint8_t>(bits(w, 5, 4));
    s.s1_context_ptr = bits(w, 51, 6) << 6;
    s.s1_cdmax = static_cast<unsigned>(bits(w, 63, 59));
    s.s1dss = static_cast<uint8_t>(bits(w, 65, 64));
    s.s1_stall_disable = bits(w, 91, 91);
    s.strw = static_cast<unsigned>(bits(w, 95, 94));
    if (s.s1fmt > ste::k2Level64K) return bad(EventId::kBadSte, "STE.S1Fmt 3 is reserved");
    if (s.s1fmt != ste::kLinear && !caps.cd2l) return bad(EventId::kBadSte, "two-level CD table but IDR0.CD2L is 0");
    if (s.s1_cdmax > caps.ssid_bits)
      return bad(EventId::kBadSte, "STE.S1CDMax " + std::to_string(s.s1_cdmax) + " exceeds IDR1.SSIDSIZE");
    if (s.s1_cdmax != 0 && s.s1dss > ste::kSubstream0) return bad(EventId::kBadSte, "STE.S1DSS 3 is reserved");
    if (caps.oas_bits < 64 && (s.s1_context_ptr >> caps.oas_bits) != 0)
      return bad(EventId::kBadSte, "STE.S1ContextPtr beyond the output address size");
  }
  if (s.stage2()) {
    s.s2_vmid = static_cast<uint16_t>(bits(w, 143, 128));
    s.s2_t0sz = static_cast<unsigned>(bits(w, 165, 160));
    s.s2_sl0 = static_cast<unsigned>(bits(w, 167, 166));
    const auto g = decode_tg(static_cast<unsigned>(bits(w, 175, 174)));
    s.s2_ps_bits = decode_pa_bits(static_cast<unsigned>(bits(w, 178, 176)));
    const bool aa64 = bits(w, 179, 179);
    s.s2_affd = bits(w, 181, 181);
    s.s2_ptw = bits(w, 182, 182);
    s.s2_ttb = bits(w, 243, 196) << 4;
    if (!g || !granule_supported(*g, caps)) return bad(EventId::kBadSte, "STE.S2TG selects an unsupported granule");
    s.s2_granule = *g;
    if (!aa64) return bad(EventId::kBadSte, "STE.S2AA64 is 0: AArch32 stage-2 tables are not supported");
    if (s.s2_ps_bits == 0) return bad(EventId::kBadSte, "STE.S2PS is reserved");
    if (s.s2_ps_bits > caps.oas_bits) s.s2_ps_bits = caps.oas_bits;  // capped, IHI 0070 5.2 (S2PS)
    if (s.s2_t0sz < kMinT0sz || s.s2_t0sz > kMaxT0sz)
      return bad(EventId::kBadSte, "STE.S2T0SZ " + std::to_string(s.s2_t0sz) + " out of range");
    if (!caps.vmid16 && (s.s2_vmid >> 8) != 0) return bad(EventId::kBadSte, "STE.S2VMID[15:8] set without VMID16");
    if (caps.oas_bits < 64 && (s.s2_ttb >> caps.oas_bits) != 0)
      return bad(EventId::kBadSte, "STE.S2TTB beyond the output address size");
  }
  *out = s;
  return {};
}

// IHI 0070 5.4: field positions of the CD.
DecodeResult decode_cd(const CdWords& w, const SmmuCaps& caps, DecodedCd* out) {
  DecodedCd c;
  if (!bits(w, 31, 31)) return bad(EventId::kBadCd, "CD.V is 0");
  c.aa64 = bits(w, 41, 41);
  if (!c.aa64) return bad(EventId::kBadCd, "CD.AA64 is 0: AArch32 tables are not supported");
  c.t0sz = static_cast<unsigned>(bits(w, 5, 0));
  const auto g = decode_tg(static_cast<unsigned>(bits(w, 7, 6)));
  c.epd0 = bits(w, 14, 14);
  c.ips_bits = decode_pa_bits(static_cast<unsigned>(bits(w, 34, 32)));
  c.affd = bits(w, 35, 35);
  c.asid = static_cast<uint16_t>(bits(w, 63, 48));
  c.ttb0 = bits(w, 115, 68) << 4;
  c.mair = w[3];
  if (!c.epd0) {
    if (!g || !granule_supported(*g, caps)) return bad(EventId::kBadCd, "CD.TG0 selects an unsupported granule");
    if (c.t0sz < kMinT0sz || c.t0sz > kMaxT0sz)
      return bad(EventId::kBadCd, "CD.T0SZ " + std::to_string(c.t0sz) + " out of range");
  }
  c.granule = g.value_or(Granule::k4K);
  if (c.ips_bits == 0) return bad(EventId::kBadCd, "CD.IPS is reserved");
  if (c.ips_bits > caps.oas_bits) c.ips_bits = caps.oas_bits;  // effective IPS is capped by OAS
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
  set_bits(w, 95, 94, s.strw);
  set_bits(w, 143, 128, s.s2_vmid);
  set_bits(w, 165, 160, s.s2_t0sz);
  set_bits(w, 167, 166, s.s2_sl0);
  set_bits(w, 175, 174, encode_tg(s.s2_granule));
  set_bits(w, 178, 176, encode_pa_bits(s.s2_ps_bits ? s.s2_ps_bits : 48));
  set_bits(w, 179, 179, 1);  // S2AA64
  set_bits(w, 181, 181, s.s2_affd);
  set_bits(w, 182, 182, s.s2_ptw);
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
  set_bits(w, 63, 48, c.asid);
  set_bits(w, 115, 68, c.ttb0 >> 4);
  w[3] = c.mair;
  return w;
}

}  // namespace smmu_vp::smmu

// Stream table entries, context descriptors and the level-1 descriptors of
// two-level tables: their layout (declared once, with the IHI 0070 section),
// and decoders that check them the way the SMMU must before using them.
// A descriptor that is not valid or not legal for this SMMU is reported with
// the event the specification assigns (C_BAD_STE, C_BAD_CD, ...).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "smmu/translation_types.h"

namespace smmu_vp::smmu {

// Bits [hi:lo] of a little-endian array of 64-bit words (spec bit numbering
// across the whole descriptor, as the specification writes it).
template <size_t N>
constexpr uint64_t bits(const std::array<uint64_t, N>& d, unsigned hi, unsigned lo) {
  const unsigned w = lo / 64, shift = lo % 64, width = hi - lo + 1;
  const uint64_t v = d[w] >> shift;
  const uint64_t mask = width == 64 ? ~0ull : (1ull << width) - 1;
  return v & mask;  // fields used here never straddle two words
}

template <size_t N>
constexpr void set_bits(std::array<uint64_t, N>& d, unsigned hi, unsigned lo, uint64_t value) {
  const unsigned w = lo / 64, shift = lo % 64, width = hi - lo + 1;
  const uint64_t mask = (width == 64 ? ~0ull : (1ull << width) - 1) << shift;
  d[w] = (d[w] & ~mask) | ((value << shift) & mask);
}

// Event IDs of configuration errors and fetch aborts (IHI 0070 7.3).
enum class EventId : uint8_t {
  kNone = 0,
  kUut = 0x01,
  kBadStreamId = 0x02,     // C_BAD_STREAMID
  kSteFetch = 0x03,        // F_STE_FETCH
  kBadSte = 0x04,          // C_BAD_STE
  kBadAtsTreq = 0x05,
  kStreamDisabled = 0x06,  // F_STREAM_DISABLED
  kTranslForbidden = 0x07, // F_TRANSL_FORBIDDEN
  kBadSubstreamId = 0x08,  // C_BAD_SUBSTREAMID
  kCdFetch = 0x09,         // F_CD_FETCH
  kBadCd = 0x0A,           // C_BAD_CD
  kWalkEabt = 0x0B,        // F_WALK_EABT
  kTranslation = 0x10,     // F_TRANSLATION
  kAddrSize = 0x11,        // F_ADDR_SIZE
  kAccess = 0x12,          // F_ACCESS
  kPermission = 0x13,      // F_PERMISSION
  kTlbConflict = 0x20,
  kCfgConflict = 0x21,
  kPageRequest = 0x24,
};

const char* event_name(EventId id);

// ---- Stream table entry: 64 bytes (IHI 0070 5.2).
using SteWords = std::array<uint64_t, 8>;

namespace ste {
constexpr unsigned kBytes = 64;
// Config[3:1] (IHI 0070 5.2, STE.Config)
enum Config : uint8_t { kAbort = 0b000, kBypass = 0b100, kS1Trans = 0b101, kS2Trans = 0b110, kNested = 0b111 };
// S1Fmt[5:4]: CD table format
enum S1Fmt : uint8_t { kLinear = 0, k2Level4K = 1, k2Level64K = 2 };
// S1DSS[65:64]: what a transaction without a substream ID uses
enum S1Dss : uint8_t { kTerminate = 0, kBypassDss = 1, kSubstream0 = 2 };
// EATS[93:92]: whether the stream may use ATS (IHI 0070 5.2, 3.9.1).
enum Eats : uint8_t { kEatsOff = 0, kEatsFull = 1, kEatsSplit = 2, kEatsDpt = 3 };
}  // namespace ste

struct SmmuCaps;  // below

struct DecodedSte {
  uint8_t config = ste::kAbort;
  // stage 1
  uint8_t s1fmt = 0;
  uint64_t s1_context_ptr = 0;  // [51:6]
  unsigned s1_cdmax = 0;        // log2 of the number of CDs; 0 = one CD, no substreams
  uint8_t s1dss = 0;
  bool s1_stall_disable = false;
  unsigned strw = 0;
  uint8_t eats = ste::kEatsOff;  // effective: kEatsOff or kEatsFull (decode_ste)
  // stage 2
  uint16_t s2_vmid = 0;
  unsigned s2_t0sz = 0;
  unsigned s2_sl0 = 0;
  Granule s2_granule = Granule::k4K;
  unsigned s2_ps_bits = 0;      // S2PS decoded to bits
  bool s2_affd = false;
  bool s2_ptw = false;
  bool s2_record = true;        // S2R: record stage-2 translation-related faults (IHI 0070 5.5)
  bool s2_stall = false;        // S2S: stage-2 faults stall (IHI 0070 5.2, 3.12.2)
  uint64_t s2_ttb = 0;

  bool stage1() const { return config == ste::kS1Trans || config == ste::kNested; }
  bool stage2() const { return config == ste::kS2Trans || config == ste::kNested; }
};

// What of the SMMU's features decoding depends on (a subset of IDR0/1/5 and
// AIDR). The defaults are the fields the model always advertises
// (SmmuFeatures): STALL_MODEL = 0b01, HTTU = 0b00, TTENDIAN = little,
// TERM_MODEL = 1.
struct SmmuCaps {
  bool s1 = true, s2 = true;
  bool cd2l = true;
  bool asid16 = true, vmid16 = true;
  bool hyp = true;               // IDR0.Hyp: STE.STRW is used only with Hyp
  unsigned stall_model = 0b01;   // IDR0.STALL_MODEL: 0b00 both, 0b01 no stall, 0b10 stall forced
  unsigned httu = 0b00;          // IDR0.HTTU: 0b00 none, 0b01 access flag, 0b1x access flag and dirty
  unsigned ttendian = 0b10;      // IDR0.TTENDIAN: 0b00 mixed, 0b10 little, 0b11 big
  bool term_model = true;        // IDR0.TERM_MODEL: 1 = CD.A must be 1
  unsigned arch_minor = 3;       // AIDR.ArchMinorRev: reserved PS/IPS encodings depend on it
  unsigned ssid_bits = 20;
  unsigned oas_bits = 48;
  bool gran4k = true, gran16k = true, gran64k = true;
  bool had = true;               // IDR3.HAD: CD.HAD0/HAD1 are IGNORED without it
  bool ats = false;              // IDR0.ATS: STE.EATS is IGNORED without it
};

struct DecodeResult {
  EventId error = EventId::kNone;  // kNone: usable
  std::string why;                 // for logs and tests
  bool ok() const { return error == EventId::kNone; }
};

// IHI 0070 5.2.2 (SteIllegal): STE.V = 0, ILLEGAL encodings and fields that
// ask for a feature this SMMU lacks are C_BAD_STE. Reserved encodings that
// the text says "behave as" another value decode as that value (Config 0b0xx
// as abort, S1Fmt 0b11 as linear, S1DSS 0b11 as terminate, S2PS 0b111 as the
// largest size). Fields the text says are IGNORED in the STE's configuration
// decode as their neutral value (S1CDMax 0 without substreams, STRW 0b00
// when unused, S2VMID 0 when no VMID tags the translations).
DecodeResult decode_ste(const SteWords& w, const SmmuCaps& caps, DecodedSte* out);

// ---- Context descriptor: 64 bytes (IHI 0070 5.4).
using CdWords = std::array<uint64_t, 8>;

struct DecodedCd {
  unsigned t0sz = 0;
  Granule granule = Granule::k4K;
  bool epd0 = false;            // TTB0 walks disabled: translation fault
  unsigned ips_bits = 0;        // IPS decoded, capped at the SMMU's OAS
  bool affd = false;
  bool aa64 = true;
  bool record = true;           // R: record stage-1 translation-related faults (IHI 0070 5.5)
  bool stall = false;           // S: stage-1 faults stall (IHI 0070 5.4, 3.12.2)
  bool had0 = false;            // HAD0: APTable/UXNTable/PXNTable ignored on TTB0's walks (IHI 0070 5.4)
  uint16_t asid = 0;
  uint64_t ttb0 = 0;
  uint64_t mair = 0;
};

// IHI 0070 5.4.2 (CdIllegal): CD.V = 0 and ILLEGAL CDs are C_BAD_CD.
// `ste_s1stalld` is STE.S1STALLD of the STE the CD was reached from (a CD
// that enables stalls under it is ILLEGAL).
DecodeResult decode_cd(const CdWords& w, const SmmuCaps& caps, DecodedCd* out, bool ste_s1stalld = false);

// ---- Level-1 descriptors of two-level tables.
// Stream table L1 (IHI 0070 5.1.2): SPAN[4:0], L2Ptr[51:6]; 8 bytes.
struct L1Std {
  unsigned span = 0;  // 0: invalid; else the L2 table holds 2^(span-1) STEs
  uint64_t l2ptr = 0;
};
L1Std decode_l1_std(uint64_t w);

// CD table L1 (IHI 0070 5.4.2): V 0, L2Ptr[51:12]; 8 bytes.
struct L1Cd {
  bool valid = false;
  uint64_t l2ptr = 0;
};
L1Cd decode_l1_cd(uint64_t w);

// Encoding helpers, for drivers written in C++ (tests, conformance) that build tables.
SteWords encode_ste(const DecodedSte& s, bool valid = true);
CdWords encode_cd(const DecodedCd& c, bool valid = true);

// TG0/S2TG encoding (00 4K, 01 64K, 10 16K) to Granule; nullopt for 11.
std::optional<Granule> decode_tg(unsigned tg);
unsigned encode_tg(Granule g);
// IPS/PS/OAS encoding (0..6 = 32/36/40/42/44/48/52 bits); 0 for reserved.
unsigned decode_pa_bits(unsigned enc);
// STE.S2PS / CD.IPS as an SMMUv3.<arch_minor> reads them (IHI 0070 5.2 S2PS,
// 5.4 IPS): in SMMUv3.0, 0b110 and 0b111 are Reserved and behave as 0b101
// (48 bits); in SMMUv3.1 to 3.3, 0b111 is Reserved and behaves as 0b110 (52).
unsigned decode_ps_field(unsigned enc, unsigned arch_minor);
unsigned encode_pa_bits(unsigned bits);

}  // namespace smmu_vp::smmu

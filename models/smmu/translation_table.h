// AArch64 VMSAv8-64 translation tables as the SMMU walks them (Arm ARM D8,
// "VMSAv8-64 translation table format"; IHI 0070 uses the same format through
// CD.AA64 = 1 and STE.S2AA64 = 1): descriptor bit fields as named constants,
// small decoding helpers, and the geometry of each translation granule.
//
// Scope: 4K, 16K and 64K granules with input and output addresses of at most
// 48 bits. 52-bit addressing (FEAT_LPA, FEAT_LPA2 / CD.DS, STE.S2DS) and the
// 128-bit descriptors of VMSAv9-128 are not modelled, so the blocks that only
// exist with them (4K level 0, 16K level 1, 64K level 1) are invalid here, and
// descriptor bits [15:12] of a 64K descriptor (OA[51:48] with FEAT_LPA) are
// ignored.
#pragma once

#include <cstdint>

#include "smmu/translation_types.h"

namespace smmu_vp::smmu::tt {

// ---------------------------------------------------------------------------
// Descriptor encodings (bits [1:0])
// ---------------------------------------------------------------------------
constexpr uint64_t kValid = 1ull << 0;      // 0: invalid descriptor (any level)
constexpr uint64_t kTableOrPage = 1ull << 1;  // levels 0-2: 1 table, 0 block; level 3: 1 page, 0 reserved

// ---------------------------------------------------------------------------
// Stage 1 table descriptors: attributes for the next levels (hierarchical
// controls, Arm ARM "Hierarchical control of data access permissions" and
// "... of instruction fetching"). Ignored when CD.HAD0 = 1; all RES0/ignored
// in stage 2 table descriptors.
// ---------------------------------------------------------------------------
constexpr unsigned kPxnTableBit = 59;
constexpr unsigned kUxnTableBit = 60;  // XNTable in single-privilege regimes
constexpr unsigned kApTable0Bit = 61;  // 1: no unprivileged (EL0) access below
constexpr unsigned kApTable1Bit = 62;  // 1: no write access below
constexpr unsigned kNsTableBit = 63;   // Secure state only; not modelled

// ---------------------------------------------------------------------------
// Stage 1 block and page descriptors
// ---------------------------------------------------------------------------
constexpr unsigned kAttrIndxShift = 2;  // [4:2] index into MAIR
constexpr uint64_t kAttrIndxMask = 0x7;
constexpr unsigned kNsBit = 5;          // Secure state only; reported, not used
constexpr unsigned kAp1Bit = 6;         // AP[1]: 1 = unprivileged (EL0) access allowed
constexpr unsigned kAp2Bit = 7;         // AP[2]: 1 = read-only
constexpr unsigned kShShift = 8;        // [9:8] shareability
constexpr uint64_t kShMask = 0x3;
constexpr unsigned kAfBit = 10;         // access flag
constexpr unsigned kNgBit = 11;         // not global: entry is ASID-tagged
constexpr unsigned kDbmBit = 51;        // dirty bit modifier (HTTU; not modelled)
constexpr unsigned kContiguousBit = 52;  // contiguous hint
constexpr unsigned kPxnBit = 53;        // privileged execute-never
constexpr unsigned kUxnBit = 54;        // unprivileged execute-never (XN in single-privilege regimes)

// ---------------------------------------------------------------------------
// Stage 2 block and page descriptors
// ---------------------------------------------------------------------------
constexpr unsigned kS2MemAttrShift = 2;  // [5:2] MemAttr (without FWB)
constexpr uint64_t kS2MemAttrMask = 0xF;
constexpr unsigned kS2ApReadBit = 6;     // S2AP[0]: read allowed
constexpr unsigned kS2ApWriteBit = 7;    // S2AP[1]: write allowed
constexpr unsigned kS2ShShift = 8;       // [9:8]
constexpr unsigned kS2XnShift = 53;      // XN[1:0] at [54:53] (FEAT_XNX, SMMU_IDR3.XNX)
constexpr uint64_t kS2XnMask = 0x3;

constexpr inline bool bit(uint64_t d, unsigned n) { return ((d >> n) & 1u) != 0; }

// ---------------------------------------------------------------------------
// Granule geometry
// ---------------------------------------------------------------------------
constexpr unsigned kMaxAddressBits = 48;  // input and output addresses modelled
constexpr unsigned kMinT0sz = 16;         // 64 - 48; no 52-bit VAs

// Input-address bits resolved by one full table: granule_shift - 3
// (512, 2048 or 8192 eight-byte entries).
inline unsigned stride(Granule g) { return granule_shift(g) - 3; }

// Lowest input-address bit resolved at `level` (0..3); a block or page at
// that level maps 2^level_shift bytes. 4K: 39/30/21/12, 16K: 47/36/25/14,
// 64K: 55(unused)/42/29/16.
inline unsigned level_shift(Granule g, unsigned level) {
  return granule_shift(g) + (3 - level) * stride(g);
}
inline uint64_t level_size(Granule g, unsigned level) { return 1ull << level_shift(g, level); }

// Initial lookup level of a stage 1 walk (and of a stage 2 walk without
// concatenation) for an input address size `ias`: the smallest number of
// levels that resolve ias - granule_shift bits, counted back from level 3.
// 4K: ias 40..48 -> 0, 31..39 -> 1, 22..30 -> 2, <= 21 -> 3.
// 16K: ias 48 -> 0 (one bit), 37..47 -> 1, 26..36 -> 2, <= 25 -> 3.
// 64K: ias 43..48 -> 1, 30..42 -> 2, <= 29 -> 3.
inline unsigned s1_start_level(Granule g, unsigned ias) {
  const unsigned s = stride(g);
  const unsigned levels = (ias - granule_shift(g) + s - 1) / s;
  return 4 - levels;
}

// Number of input-address bits the table at `level` resolves, for an input
// size `ias` and a walk starting at `start_level`: the full stride below the
// initial level; at the initial level whatever is left (fewer bits at stage
// 1, up to stride + 4 bits, i.e. 16 concatenated tables, at stage 2).
inline unsigned level_bits(Granule g, unsigned ias, unsigned start_level, unsigned level) {
  return level == start_level ? ias - level_shift(g, level) : stride(g);
}

// Index of the descriptor for input address `ia` in the table at `level`.
inline uint64_t table_index(Granule g, unsigned ias, unsigned start_level, unsigned level, uint64_t ia) {
  const unsigned bits = level_bits(g, ias, start_level, level);
  return (ia >> level_shift(g, level)) & ((1ull << bits) - 1);
}

// Size in bytes of the initial table (its required alignment as well: the
// SMMU treats TTB bits below it as zero, IHI 0070 5.4 CD.TTB0, 5.2 STE.S2TTB).
inline uint64_t start_table_bytes(Granule g, unsigned ias, unsigned start_level) {
  return 8ull << level_bits(g, ias, start_level, start_level);
}

// Levels at which a block descriptor is allowed with at most 48-bit output
// addresses: 4K L1 (1 GiB) and L2 (2 MiB); 16K L2 (32 MiB); 64K L2 (512 MiB).
// Elsewhere bits[1:0] = 01 is treated as invalid (Translation fault), which
// includes level 3, where 01 is the reserved encoding.
inline bool block_allowed(Granule g, unsigned level) {
  switch (g) {
    case Granule::k4K: return level == 1 || level == 2;
    case Granule::k16K: return level == 2;
    case Granule::k64K: return level == 2;
  }
  return false;
}

// Largest T0SZ accepted (IHI 0070 5.4 CD.T0SZ / 5.2 STE.S2T0SZ with
// SMMU_IDR3.STT = 1; without STT the maximum is 39, which the CD/STE decoder
// enforces).
inline unsigned max_t0sz(Granule g) { return g == Granule::k64K ? 47 : 48; }

// Stage 2 initial lookup level from VTCR_EL2.SL0 semantics (STE.S2SL0,
// IHI 0070 5.2): 4K: 0 -> L2, 1 -> L1, 2 -> L0, 3 -> L3 (FEAT_TTST);
// 16K and 64K: 0 -> L3, 1 -> L2, 2 -> L1; 16K 3 -> L0 needs DS, 64K 3 is
// reserved. Starting at 4K L0 or 64K L1 needs a PA size of at least 44 bits,
// 16K L1 at least 42 (the Arm ARM's S2InvalidSL rule, with the SMMU OAS as
// PAMax). Returns false for an invalid encoding.
inline bool s2_start_level(Granule g, unsigned sl0, unsigned pa_max_bits, unsigned* level) {
  if (sl0 > 3) return false;
  switch (g) {
    case Granule::k4K:
      if (sl0 == 3) { *level = 3; return true; }
      if (sl0 == 2 && pa_max_bits < 44) return false;
      *level = 2 - sl0;
      return true;
    case Granule::k16K:
      if (sl0 == 3) return false;  // level 0 only with DS (52-bit)
      if (sl0 == 2 && pa_max_bits < 42) return false;
      *level = 3 - sl0;
      return true;
    case Granule::k64K:
      if (sl0 == 3) return false;
      if (sl0 == 2 && pa_max_bits < 44) return false;
      *level = 3 - sl0;
      return true;
  }
  return false;
}

// A stage 2 initial level is consistent with the input size when the initial
// table resolves between 1 bit and stride + 4 bits (at most 16 concatenated
// tables); otherwise the STE is ILLEGAL (IHI 0070 5.2 STE.S2SL0/S2T0SZ).
inline bool s2_start_level_consistent(Granule g, unsigned ias, unsigned start_level) {
  const unsigned lowest = level_shift(g, start_level);  // bits below the initial level
  return ias >= lowest + 1 && ias <= lowest + stride(g) + 4;
}

// ---------------------------------------------------------------------------
// Descriptor decoding
// ---------------------------------------------------------------------------
enum class DescKind : uint8_t { kInvalid, kTable, kBlock, kPage, kReserved };

// Encoding only; whether a block is allowed at this level is block_allowed().
inline DescKind classify(uint64_t d, unsigned level) {
  if (!bit(d, 0)) return DescKind::kInvalid;
  if (level == 3) return bit(d, 1) ? DescKind::kPage : DescKind::kReserved;
  return bit(d, 1) ? DescKind::kTable : DescKind::kBlock;
}

// Mask of address bits [47:lo].
constexpr inline uint64_t addr_mask(unsigned lo) {
  return ((1ull << kMaxAddressBits) - 1) & ~((1ull << lo) - 1);
}

// Next-level table address of a table descriptor: bits [47:granule_shift].
inline uint64_t table_address(uint64_t d, Granule g) { return d & addr_mask(granule_shift(g)); }

// Output address of a block or page descriptor at `level`: bits
// [47:level_shift]; lower descriptor bits in that range are RES0 and ignored.
inline uint64_t output_address(uint64_t d, Granule g, unsigned level) {
  return d & addr_mask(level_shift(g, level));
}

inline unsigned attr_indx(uint64_t d) { return static_cast<unsigned>((d >> kAttrIndxShift) & kAttrIndxMask); }
inline unsigned shareability(uint64_t d) { return static_cast<unsigned>((d >> kShShift) & kShMask); }
inline unsigned s2_mem_attr(uint64_t d) { return static_cast<unsigned>((d >> kS2MemAttrShift) & kS2MemAttrMask); }
inline unsigned s2_xn(uint64_t d) { return static_cast<unsigned>((d >> kS2XnShift) & kS2XnMask); }
inline bool af(uint64_t d) { return bit(d, kAfBit); }
inline bool not_global(uint64_t d) { return bit(d, kNgBit); }
inline bool contiguous(uint64_t d) { return bit(d, kContiguousBit); }

// Stage 2 MemAttr[3:2] == 00 is Device memory (without FEAT_S2FWB).
inline bool s2_is_device(uint64_t d) { return ((d >> (kS2MemAttrShift + 2)) & 0x3) == 0; }

// Hierarchical attributes gathered from stage 1 table descriptors, as one
// byte (OR of every table descriptor on the path; a set bit only restricts).
constexpr uint8_t kTablePxn = 1u << 0;
constexpr uint8_t kTableUxn = 1u << 1;
constexpr uint8_t kTableNoUnpriv = 1u << 2;  // APTable[0]
constexpr uint8_t kTableReadOnly = 1u << 3;  // APTable[1]

inline uint8_t table_attrs(uint64_t d) {
  uint8_t a = 0;
  if (bit(d, kPxnTableBit)) a |= kTablePxn;
  if (bit(d, kUxnTableBit)) a |= kTableUxn;
  if (bit(d, kApTable0Bit)) a |= kTableNoUnpriv;
  if (bit(d, kApTable1Bit)) a |= kTableReadOnly;
  return a;
}

}  // namespace smmu_vp::smmu::tt

// What a concrete SMMU implements: the features it advertises in its ID
// registers (IHI 0070 6.3.1-6.3.8, 6.3.45) and the implementation choices the
// specification leaves open. The register file and the translation, command
// and event models all read their configuration from one SmmuFeatures.
//
// Features the models do not implement (HTTU, BTM, VATOS,
// AArch32 tables, mixed-endian walks, DS/D128, split-stage ATS) are either
// absent from the struct, and always advertised as 0, or rejected by
// validate().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace smmu_vp::smmu {

struct SmmuFeatures {
  std::string name;  // profile name, for logs and results

  // AIDR.ArchMinorRev (IHI 0070 6.3.8): 0 = SMMUv3.0 ... 3 = SMMUv3.3.
  unsigned arch_minor = 3;
  // IIDR (6.3.7): ProductID/Variant/Revision/Implementer, IMPLEMENTATION
  // DEFINED. 0 is no known implementer, so that software applies no errata.
  uint32_t iidr = 0;

  // ---- IDR0 (6.3.1)
  bool stage1 = true;            // S1P
  bool stage2 = true;            // S2P
  bool two_level_strtab = true;  // ST_LEVEL = 0b01 (2-level in addition to linear)
  bool two_level_cd = true;      // CD2L
  bool hyp = true;               // Hyp: EL2 / EL2-E2H stage 1 contexts
  bool asid16 = true;
  bool vmid16 = true;
  bool msi = true;
  bool sev = true;               // WFE wake-up events (CMD_SYNC SIG_SEV)
  bool cohacc = true;            // IO-coherent table walks, structure and queue accesses
  // ATS (3.9.1): translation requests, translated transactions, ATC_INV.
  // Split-stage ATS is not modelled, so NS1ATS is 1 whenever it is not RES0
  // (ATS with both stages).
  bool ats = false;
  bool pri = false;              // PRI (chapter 8): the PRI queue and CMD_PRI_RESP; needs ATS
  // TERM_MODEL: 1 = a terminated transaction always aborts (CD.A must be 1).
  bool term_abort_only = true;
  // STALL_MODEL (3.12.2): 0b00 stall and terminate, 0b01 terminate only (no
  // stalls), 0b10 stall forced (CD.S and STE.S2S must be 1).
  unsigned stall_model = 0b01;
  // TTENDIAN; only little-endian walks are modelled.
  uint32_t ttendian = 0b10;
  // Always advertised: TTF = 0b10 (VMSAv8-64 only), HTTU = 0, BTM = 0,
  // ATOS = VATOS = 0, DORMHINT = 0, VMW = 0.

  // ---- IDR1 (6.3.2)
  bool attr_types_ovr = false;  // ATTR_TYPES_OVR
  bool attr_perms_ovr = false;  // ATTR_PERMS_OVR
  unsigned cmdqs = 19;          // log2 of the largest command queue, <= 19
  unsigned eventqs = 19;        // log2 of the largest event queue, <= 19
  unsigned priqs = 0;           // log2 of the largest PRI queue, <= 19
  unsigned ssidsize = 20;       // SubstreamID bits, 0..20
  unsigned sidsize = 16;        // StreamID bits, 0..32
  // Always advertised: TABLES_PRESET = QUEUES_PRESET = REL = 0.

  // ECMDQ (IDR1.ECMDQ, SMMUv3.3) and its geometry (IDR6, 6.3.45):
  // 2^ecmdq_log2_pages command queue control pages of 2^ecmdq_log2_queues
  // queues each; each log2 is at most 8.
  bool ecmdq = false;
  unsigned ecmdq_log2_pages = 0;
  unsigned ecmdq_log2_queues = 0;

  // ---- IDR3 (6.3.4)
  bool ril = true;      // range invalidation and TTL hints (mandatory from v3.2)
  bool had = true;      // hierarchical attribute disables (mandatory with S1 from v3.1)
  bool xnx = true;      // stage-2 EL0/EL1 execute-never (mandatory with S2 from v3.1)
  bool fwb = true;      // stage-2 control of attributes (1 from v3.2)
  bool e0pd = true;     // 1 from v3.3
  bool ptwnnc = true;   // 1 from v3.3 when S2P
  unsigned bbml = 1;    // break-before-make level, 1 or 2 from v3.2

  // ---- IDR5 (6.3.6)
  bool gran4k = true;
  bool gran16k = true;
  bool gran64k = true;
  unsigned oas_bits = 48;  // 32, 36, 40, 42, 44, 48 or 52
  unsigned stall_max = 0;  // STALL_MAX: stalled transactions at once (with stalls, at least 1)
  uint32_t vax = 0;        // 0: 48-bit VAs, 1: 52-bit VAs (needs 64K granule)
  // Always advertised: DS = 0, D128 = 0.

  // ---- Implementation choices
  // GBPA.ABORT at reset (IHI 0070 6.3.14: IMPLEMENTATION DEFINED); 1 is a
  // default-deny SMMU.
  bool gbpa_abort_at_reset = false;
  // Page-0 offsets 0xA8/0xAC alias EVENTQ_PROD/CONS of page 1 (6.2.1: an
  // optional alias, otherwise RAZ/WI).
  bool page0_queue_aliases = true;

  // ---- ID register values.
  uint32_t idr0() const;
  uint32_t idr1() const;
  uint32_t idr2() const;  // 0: no VATOS page
  uint32_t idr3() const;
  uint32_t idr4() const;  // IMPLEMENTATION DEFINED: 0
  uint32_t idr5() const;
  uint32_t idr6() const;  // RES0 without ECMDQ
  uint32_t aidr() const;

  // Problems that make this an SMMU the specification does not allow, or one
  // the models cannot be: one message per problem, empty when valid.
  std::vector<std::string> validate() const;

  // ECMDQ geometry.
  unsigned ecmdq_pages() const { return ecmdq ? 1u << ecmdq_log2_pages : 0u; }
  unsigned ecmdq_queues_per_page() const { return ecmdq ? 1u << ecmdq_log2_queues : 0u; }
  // Bytes of register space from page 0: pages 0 and 1, then the command
  // queue control pages.
  uint64_t register_space_size() const;

  // The two named configurations.
  // v3.0: a minimal SMMUv3.0: stage 1 and 2 without Hyp, linear and 2-level
  // stream tables, 4K and 64K granules, 48-bit OAS, no RIL, no MSI, no SEV,
  // not coherent, no ECMDQ, 8-bit VMIDs, 16 StreamID and 8 SubstreamID bits,
  // 2^10-entry queues.
  static SmmuFeatures v3_0_profile();
  // v3.3: stage 1 and 2 with Hyp, RIL, MSI, SEV, coherent, 2-level stream
  // and CD tables, all three granules, 48-bit OAS, 16-bit ASIDs and VMIDs,
  // 16 StreamID and 20 SubstreamID bits, 2^19-entry queues and ECMDQ with
  // 2^1 control pages of 2^2 queues.
  static SmmuFeatures v3_3_profile();
};

// OAS (IHI 0070 6.3.6) between bits and the IDR5.OAS encoding: 32/36/40/42/
// 44/48/52 bits <-> 0..6 (56 bits, 0b111, needs D128 and is not modelled).
std::optional<uint32_t> oas_encoding(unsigned bits);
std::optional<unsigned> oas_bits_from_encoding(uint32_t encoding);

// "v3.0", "v3.3".
const std::vector<std::string>& profile_names();
std::optional<SmmuFeatures> profile_by_name(const std::string& name);

}  // namespace smmu_vp::smmu

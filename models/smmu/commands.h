// SMMUv3 commands (IHI 0070 chapter 4): the 16-byte command layout, decoding
// with every check that makes a command CERROR_ILL on a given SMMU, encoders
// for tests and for drivers written in C++, and the Linux driver's way of
// splitting a range invalidation into range TLBI commands.
//
// A command is two little-endian doublewords; field positions are written as
// the specification writes them, bits [127:0] across both words (4.1.1).
//
// Decoding (decode_command) raises CERROR_ILL (4.1.3) for:
//   - a Reserved opcode, including opcodes of features this SMMU does not
//     have (CFGI_VMS_PIDM without MPAM, the Secure-only and EL3 commands on
//     the Non-secure queue, DPTI_* without DPT, no IMPLEMENTATION DEFINED
//     commands);
//   - a command of a feature the SMMU lacks: stage 1 commands and CFGI_CD*
//     without S1P (4.4.2, 4.3.3, 4.3.4), stage 2 commands without S2P
//     (4.4.3.1, 4.4.3.2), TLBI_EL2_* without Hyp (4.4.2), ATC_INV without ATS
//     (4.5.1), PRI_RESP without PRI (4.5.2), RESUME and STALL_TERM without a
//     stall model (4.7.1, 4.7.2: STALL_MODEL is always 0b01 here);
//   - SSec == 1: this is the Non-secure queue (4.1.6);
//   - the Reserved encodings CMD_SYNC.CS == 0b11 (4.7.3), PRI_RESP.Resp ==
//     0b11 (4.5.2), and a range TLBI with TG != 0 and NUM == SCALE == TTL ==
//     0, where TTL == 1 with a 16K TG counts as 0 because IDR5.DS == 0
//     (4.4.1.1);
//   - with DecodeOptions::reject_nonzero_res0 (the default), any non-zero
//     RES0 bit (4.1.5 lets an implementation either detect these as malformed
//     or ignore them). That includes TG/TTL/NUM/SCALE when IDR3.RIL == 0 and
//     NUM/SCALE/TTL when TG == 0 (4.4.1.1), TTL128 (no D128) and SCALE[5]
//     (no DS). Without it those fields are ignored: the command is decoded as
//     if they were zero, so a TLBI with TG set on an SMMU without RIL is a
//     single-address TLBI.
// Deliberately not CERROR_ILL, as the specification says:
//   - a non-zero VMID in CMD_TLBI_NH_* on an SMMU without stage 2 (4.4.2: "not
//     required to check"; the executor then matches VMID 0), and non-zero
//     upper ASID/VMID bits without ASID16/VMID16 (4.4: the command is "not
//     required to affect TLB entries"; it is decoded as given and matches
//     nothing);
//   - out-of-range StreamIDs and SubstreamIDs (4.1.7: CONSTRAINED
//     UNPREDICTABLE, here acting on the value given, which nothing can be
//     cached under);
//   - CMD_SYNC with SIG_SEV on an SMMU without SEV (decoded as SIG_NONE) or
//     SIG_IRQ without MSIs (MSIAddress and MSIData are IGNORED and decoded as
//     0), 4.7.3; MSH == 0b01 (Reserved, treated as 0b00, decoded as 0b00).
//
// Address fields: VAs are Address[63:12] (bits [127:76]); IPAs and PAs are
// Address[55:12] ([119:76]; MSIAddress [55:2] is [119:66]) whose bits [55:52]
// are RES0 in SMMUv3.1 to 3.3 and [55:48] in SMMUv3.0 (4.1.6). MSIAddress is
// truncated to the OAS (4.7.3).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "smmu/ats.h"
#include "smmu/features.h"
#include "smmu/translation_types.h"

namespace smmu_vp::smmu {

// One command as it sits in the queue: doubleword 0 (bits [63:0]) and
// doubleword 1 (bits [127:64]).
using CommandWords = std::array<uint64_t, 2>;

// The opcodes of the Non-secure programming interface (4.1.1).
enum class Opcode : uint8_t {
  kPrefetchConfig = 0x01,
  kPrefetchAddr = 0x02,
  kCfgiSte = 0x03,
  kCfgiSteRange = 0x04,  // Range == 31 is CMD_CFGI_ALL (4.3.6)
  kCfgiCd = 0x05,
  kCfgiCdAll = 0x06,
  kTlbiNhAll = 0x10,
  kTlbiNhAsid = 0x11,
  kTlbiNhVa = 0x12,
  kTlbiNhVaa = 0x13,
  kTlbiEl2All = 0x20,
  kTlbiEl2Asid = 0x21,
  kTlbiEl2Va = 0x22,
  kTlbiEl2Vaa = 0x23,
  kTlbiS12Vmall = 0x28,
  kTlbiS2Ipa = 0x2A,
  kTlbiNsnhAll = 0x30,
  kAtcInv = 0x40,
  kPriResp = 0x41,
  kResume = 0x44,
  kStallTerm = 0x45,
  kCmdSync = 0x46,
};

// Every Opcode, in numerical order.
const std::vector<Opcode>& all_opcodes();
// "CMD_TLBI_NH_VA" etc.; "CMD_UNKNOWN" for a value outside the enum.
const char* opcode_name(Opcode op);
// The Opcode of an opcode byte, if it is one of the enum.
std::optional<Opcode> opcode_from_byte(uint8_t byte);

// CMD_SYNC.CS, ComplSignal (4.7.3). 0b11 is Reserved (CERROR_ILL).
enum class SyncCs : uint8_t { kNone = 0, kIrq = 1, kSev = 2 };

// Field positions, bits [hi:lo] of the 128-bit command.
struct CommandField {
  unsigned hi;
  unsigned lo;
};

namespace cmd {
inline constexpr CommandField kOpcode{7, 0};
inline constexpr CommandField kSsec{10, 10};    // 4.1.6; must be 0 on the Non-secure queue
inline constexpr CommandField kSsv{11, 11};     // PREFETCH_*, ATC_INV, PRI_RESP
inline constexpr CommandField kSsid{31, 12};    // PREFETCH_*, CFGI_CD, ATC_INV, PRI_RESP
inline constexpr CommandField kSid{63, 32};     // PREFETCH_*, CFGI_*, ATC_INV, PRI_RESP, RESUME, STALL_TERM
inline constexpr CommandField kLeaf{64, 64};    // CFGI_STE, CFGI_CD, TLBI by address
inline constexpr CommandField kRange{68, 64};   // CFGI_STE_RANGE (4.3.2)
// TLBI (4.4.1, 4.4.2, 4.4.3).
inline constexpr CommandField kNum{16, 12};
inline constexpr CommandField kScale{24, 20};   // bit 25 is SCALE[5] with IDR5.DS == 1 only
inline constexpr CommandField kScaleDs{25, 25};
inline constexpr CommandField kVmid{47, 32};
inline constexpr CommandField kAsid{63, 48};
inline constexpr CommandField kTtl128{71, 71};  // RES0 without 128-bit descriptors
inline constexpr CommandField kTtl{73, 72};
inline constexpr CommandField kTg{75, 74};
inline constexpr CommandField kVa{127, 76};     // VA[63:12]
inline constexpr CommandField kPa{119, 76};     // IPA/PA[55:12]
// PREFETCH_ADDR (4.2.2): Size; its Stride and NS fields (in bits [75:69])
// are neither decoded nor checked, the model does not prefetch.
inline constexpr CommandField kPrefetchSize{68, 64};
// ATC_INV (4.5.1).
inline constexpr CommandField kAtcGlobal{9, 9};
inline constexpr CommandField kAtcSize{69, 64};
// PRI_RESP (4.5.2).
inline constexpr CommandField kPriPrgIndex{72, 64};
inline constexpr CommandField kPriResp{77, 76};
// RESUME (4.7.1).
inline constexpr CommandField kResumeAc{12, 12};  // 1: retry, 0: terminate
inline constexpr CommandField kResumeAb{13, 13};  // terminate with abort
inline constexpr CommandField kResumeStag{79, 64};
// CMD_SYNC (4.7.3).
inline constexpr CommandField kSyncCs{13, 12};
inline constexpr CommandField kSyncMsh{23, 22};
inline constexpr CommandField kSyncMsiAttr{27, 24};
inline constexpr CommandField kSyncMsiData{63, 32};
inline constexpr CommandField kSyncMsiAddr{119, 66};  // MSIAddress[55:2]
}  // namespace cmd

// TG (4.4.1.1): 0 none (no range, no TTL hint), 1 4K, 2 16K, 3 64K.
std::optional<Granule> tg_granule(unsigned tg);
unsigned tg_encoding(Granule g);

// A decoded command. Only the fields of its opcode are meaningful; the others
// are zero.
// ATC_INV's Size that invalidates every translation of the (sub)stream (4.5.1).
inline constexpr uint8_t kAtcInvSizeAll = AtsDevice::Invalidation::kSizeAll;

struct Command {
  Opcode opcode = Opcode::kCmdSync;

  // Stream and substream.
  uint32_t sid = 0;
  uint32_t ssid = 0;
  bool ssv = false;   // PREFETCH_*, ATC_INV, PRI_RESP
  bool leaf = false;  // CFGI_STE, CFGI_CD, TLBI by address
  uint8_t range = 0;  // CFGI_STE_RANGE: an aligned block of 2^(range + 1) StreamIDs

  // TLBI.
  uint16_t asid = 0;
  uint16_t vmid = 0;
  uint64_t addr = 0;  // byte address, bits [11:0] zero: VA, IPA (S2_IPA), ATC_INV/PREFETCH_ADDR address
  uint8_t num = 0;    // range: (NUM + 1) * 2^SCALE granules
  uint8_t scale = 0;
  uint8_t tg = 0;     // 0: not a range TLBI
  uint8_t ttl = 0;    // level hint (as encoded; see TlbiRange for 16K)

  // ATC_INV, PREFETCH_ADDR.
  uint8_t size = 0;     // ATC_INV: 4 KiB * 2^size; PREFETCH_ADDR: 2^size strides
  bool global = false;  // ATC_INV

  // CMD_SYNC.
  SyncCs cs = SyncCs::kNone;
  uint8_t msh = 0;
  uint8_t msi_attr = 0;
  uint32_t msi_data = 0;
  uint64_t msi_addr = 0;  // byte address, bits [1:0] zero

  // RESUME.
  uint16_t stag = 0;
  bool resume_retry = false;  // Ac
  bool resume_abort = false;  // Ab

  // PRI_RESP.
  uint16_t prg_index = 0;
  uint8_t pri_resp = 0;

  CommandWords raw{};  // as read from the queue (decode) or as encoded

  bool is_cfgi_all() const { return opcode == Opcode::kCfgiSteRange && range == 31; }
  // TLBI with TG != 0 (4.4.1.1).
  bool is_range() const { return tg != 0; }
  // Bytes a range TLBI covers from addr: (NUM + 1) * 2^SCALE * granule; 0
  // when not a range TLBI.
  uint64_t range_bytes() const;
};

// "CMD_CFGI_ALL" for CFGI_STE_RANGE with Range 31, else opcode_name().
const char* command_name(const Command& c);

struct DecodeOptions {
  // IHI 0070 4.1.5: detect non-zero RES0 bits as a malformed command
  // (CERROR_ILL); false: ignore them.
  bool reject_nonzero_res0 = true;
};

// What decode_command gives: the command, or why it is CERROR_ILL.
// (Not called DecodeResult: descriptors.h has one for STEs and CDs.)
struct CommandDecode {
  Command command;       // decoded fields; raw is always set
  uint32_t error = 0;    // CMDQ_CONS.ERR encoding (reg::cerror): 0 none, 1 CERROR_ILL
  std::string reason;    // for CERROR_ILL: what is wrong, with the IHI 0070 section
  uint8_t opcode_byte = 0;
  bool ok() const { return error == 0; }
};

CommandDecode decode_command(const CommandWords& words, const SmmuFeatures& features,
                             const DecodeOptions& options = {});

// ---- Encoders. They place each field as given (truncated to its width) and
// check nothing, so that tests can build illegal commands too.
CommandWords encode_command(const Command& c);  // the fields of c.opcode

CommandWords cmd_prefetch_config(uint32_t sid, bool ssv = false, uint32_t ssid = 0);
CommandWords cmd_prefetch_addr(uint32_t sid, uint64_t addr, unsigned size, bool ssv = false, uint32_t ssid = 0);
CommandWords cmd_cfgi_ste(uint32_t sid, bool leaf);
CommandWords cmd_cfgi_ste_range(uint32_t sid, unsigned range);
CommandWords cmd_cfgi_all();
CommandWords cmd_cfgi_cd(uint32_t sid, uint32_t ssid, bool leaf);
CommandWords cmd_cfgi_cd_all(uint32_t sid);
CommandWords cmd_tlbi_nh_all(uint16_t vmid);
CommandWords cmd_tlbi_nh_asid(uint16_t asid, uint16_t vmid);
CommandWords cmd_tlbi_nh_va(uint16_t asid, uint16_t vmid, uint64_t va, bool leaf, unsigned num = 0,
                            unsigned scale = 0, unsigned tg = 0, unsigned ttl = 0);
CommandWords cmd_tlbi_nh_vaa(uint16_t vmid, uint64_t va, bool leaf, unsigned num = 0, unsigned scale = 0,
                             unsigned tg = 0, unsigned ttl = 0);
CommandWords cmd_tlbi_el2_all();
CommandWords cmd_tlbi_el2_asid(uint16_t asid);
CommandWords cmd_tlbi_el2_va(uint16_t asid, uint64_t va, bool leaf, unsigned num = 0, unsigned scale = 0,
                             unsigned tg = 0, unsigned ttl = 0);
CommandWords cmd_tlbi_el2_vaa(uint64_t va, bool leaf, unsigned num = 0, unsigned scale = 0, unsigned tg = 0,
                              unsigned ttl = 0);
CommandWords cmd_tlbi_s12_vmall(uint16_t vmid);
CommandWords cmd_tlbi_s2_ipa(uint16_t vmid, uint64_t ipa, bool leaf, unsigned num = 0, unsigned scale = 0,
                             unsigned tg = 0, unsigned ttl = 0);
CommandWords cmd_tlbi_nsnh_all();
CommandWords cmd_atc_inv(uint32_t sid, uint64_t addr, unsigned size, bool ssv = false, uint32_t ssid = 0,
                         bool global = false);
CommandWords cmd_pri_resp(uint32_t sid, uint16_t prg_index, unsigned resp, bool ssv = false, uint32_t ssid = 0);
CommandWords cmd_resume(uint32_t sid, uint16_t stag, bool retry, bool abort);
CommandWords cmd_stall_term(uint32_t sid);
CommandWords cmd_sync(SyncCs cs, uint64_t msi_addr = 0, uint32_t msi_data = 0, unsigned msh = 0,
                      unsigned msi_attr = 0);

// ---- The Linux arm-smmu-v3 driver's range invalidation
// (__arm_smmu_tlb_inv_range in drivers/iommu/arm/arm-smmu-v3), written from
// a description of the algorithm, not from its code: the commands it issues
// to invalidate [iova, iova + size) of leaf entries of `granule` bytes (the
// page or block size being unmapped) in a domain whose smallest page size is
// `tg`.
//   With RIL: TG = tg; for leaf invalidations TTL = 4 - (log2(granule) - 3) /
//   (log2(tg) - 3), the level of a `granule`-sized leaf; for non-leaf ones
//   TTL = 0 and, when (pages & 31) == 1, one page is added to the range so
//   that no command has NUM = SCALE = TTL = 0. Then, while pages remain:
//   SCALE = the lowest set bit of the page count, n = (pages >> SCALE) & 31,
//   NUM = n - 1, and n << SCALE pages are covered and subtracted.
//   Without RIL: one single-address TLBI per `granule`.
// `opcode` is kTlbiNhVa (stage 1 domains, the default), kTlbiEl2Va (E2H) or
// kTlbiS2Ipa (stage 2 domains; asid unused). size and iova must be multiples
// of the granule, and the page count below 2^32 (SCALE is 5 bits; the driver
// uses an ASID-wide invalidation for such ranges). The driver then ends each
// batch of 64 commands with a CMD_SYNC; that is the caller's business.
std::vector<Command> linux_range_tlbi(uint16_t asid, uint16_t vmid, uint64_t iova, uint64_t size,
                                      uint64_t granule, bool leaf, bool ril, Granule tg = Granule::k4K,
                                      Opcode opcode = Opcode::kTlbiNhVa);

}  // namespace smmu_vp::smmu

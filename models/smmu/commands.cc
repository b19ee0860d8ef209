#include "smmu/commands.h"

#include <initializer_list>

#include "smmu/descriptors.h"
#include "smmu/registers.h"

namespace smmu_vp::smmu {

namespace {

uint64_t get(const CommandWords& w, CommandField f) { return bits(w, f.hi, f.lo); }
void put(CommandWords& w, CommandField f, uint64_t v) { set_bits(w, f.hi, f.lo, v); }

CommandWords mask_of(std::initializer_list<CommandField> fields) {
  CommandWords m{};
  for (const CommandField& f : fields) put(m, f, ~0ull);
  return m;
}

struct OpcodeInfo {
  Opcode op;
  const char* name;
};

constexpr OpcodeInfo kOpcodes[] = {
    {Opcode::kPrefetchConfig, "CMD_PREFETCH_CONFIG"},
    {Opcode::kPrefetchAddr, "CMD_PREFETCH_ADDR"},
    {Opcode::kCfgiSte, "CMD_CFGI_STE"},
    {Opcode::kCfgiSteRange, "CMD_CFGI_STE_RANGE"},
    {Opcode::kCfgiCd, "CMD_CFGI_CD"},
    {Opcode::kCfgiCdAll, "CMD_CFGI_CD_ALL"},
    {Opcode::kTlbiNhAll, "CMD_TLBI_NH_ALL"},
    {Opcode::kTlbiNhAsid, "CMD_TLBI_NH_ASID"},
    {Opcode::kTlbiNhVa, "CMD_TLBI_NH_VA"},
    {Opcode::kTlbiNhVaa, "CMD_TLBI_NH_VAA"},
    {Opcode::kTlbiEl2All, "CMD_TLBI_EL2_ALL"},
    {Opcode::kTlbiEl2Asid, "CMD_TLBI_EL2_ASID"},
    {Opcode::kTlbiEl2Va, "CMD_TLBI_EL2_VA"},
    {Opcode::kTlbiEl2Vaa, "CMD_TLBI_EL2_VAA"},
    {Opcode::kTlbiS12Vmall, "CMD_TLBI_S12_VMALL"},
    {Opcode::kTlbiS2Ipa, "CMD_TLBI_S2_IPA"},
    {Opcode::kTlbiNsnhAll, "CMD_TLBI_NSNH_ALL"},
    {Opcode::kAtcInv, "CMD_ATC_INV"},
    {Opcode::kPriResp, "CMD_PRI_RESP"},
    {Opcode::kResume, "CMD_RESUME"},
    {Opcode::kStallTerm, "CMD_STALL_TERM"},
    {Opcode::kCmdSync, "CMD_SYNC"},
};

// Opcodes of 4.1.1 that are not in Opcode: why each is CERROR_ILL here.
const char* other_opcode_reason(uint8_t byte) {
  switch (byte) {
    case 0x07: return "CMD_CFGI_VMS_PIDM without MPAM (SMMU_IDR3.MPAM == 0) is CERROR_ILL (IHI 0070 4.3.5)";
    case 0x18: return "CMD_TLBI_EL3_ALL is valid only on the Secure Command queue (IHI 0070 4.4.2.5)";
    case 0x1A: return "CMD_TLBI_EL3_VA is valid only on the Secure Command queue (IHI 0070 4.4.2.6)";
    case 0x50: return "CMD_TLBI_S_EL2_ALL is CERROR_ILL on the Non-secure Command queue (IHI 0070 4.4.2.11)";
    case 0x51: return "CMD_TLBI_S_EL2_ASID is CERROR_ILL on the Non-secure Command queue (IHI 0070 4.4.2.14)";
    case 0x52: return "CMD_TLBI_S_EL2_VA is CERROR_ILL on the Non-secure Command queue (IHI 0070 4.4.2.12)";
    case 0x53: return "CMD_TLBI_S_EL2_VAA is CERROR_ILL on the Non-secure Command queue (IHI 0070 4.4.2.13)";
    case 0x58: return "CMD_TLBI_S_S12_VMALL is CERROR_ILL on the Non-secure Command queue (IHI 0070 4.4.3.4)";
    case 0x5A: return "CMD_TLBI_S_S2_IPA is CERROR_ILL on the Non-secure Command queue (IHI 0070 4.4.3.3)";
    case 0x60: return "CMD_TLBI_SNH_ALL is CERROR_ILL on the Non-secure Command queue (IHI 0070 4.4.4.2)";
    case 0x70: return "CMD_DPTI_ALL without DPT (SMMU_IDR3.DPT == 0) is CERROR_ILL (IHI 0070 4.6.1)";
    case 0x73: return "CMD_DPTI_PA without DPT (SMMU_IDR3.DPT == 0) is CERROR_ILL (IHI 0070 4.6.2)";
    default: break;
  }
  if (byte >= 0x80 && byte <= 0x8F)
    return "IMPLEMENTATION DEFINED opcode; this SMMU defines none, so it is Reserved (IHI 0070 4.1.1, 4.1.3)";
  return "Reserved opcode (IHI 0070 4.1.1, 4.1.3)";
}

bool is_tlbi_by_address(Opcode op) {
  return op == Opcode::kTlbiNhVa || op == Opcode::kTlbiNhVaa || op == Opcode::kTlbiEl2Va ||
         op == Opcode::kTlbiEl2Vaa || op == Opcode::kTlbiS2Ipa;
}

// Highest implemented bit of a PA/IPA field (4.1.6): Address[55:52] are RES0
// in SMMUv3.1 to 3.3, Address[55:48] in SMMUv3.0.
unsigned pa_top_bit(const SmmuFeatures& f) { return f.arch_minor == 0 ? 47 : 51; }

// The bits of a command of `op` that hold fields; every other bit is RES0.
CommandWords defined_bits_of(Opcode op, unsigned pa_top) {
  using namespace cmd;
  // IPA[pa_top:12] sits at [pa_top + 64:76]; MSIAddress[pa_top:2] at [pa_top + 64:66].
  const CommandField ipa{pa_top + 64, 76};
  const CommandField msi_addr{pa_top + 64, 66};
  switch (op) {
    case Opcode::kPrefetchConfig: return mask_of({kOpcode, kSsec, kSsv, kSsid, kSid});
    // Bits [75:69] hold Stride and NS (4.2.2); they are not checked.
    case Opcode::kPrefetchAddr: return mask_of({kOpcode, kSsec, kSsv, kSsid, kSid, {75, 64}, kVa});
    case Opcode::kCfgiSte: return mask_of({kOpcode, kSsec, kSid, kLeaf});
    case Opcode::kCfgiSteRange: return mask_of({kOpcode, kSsec, kSid, kRange});
    case Opcode::kCfgiCd: return mask_of({kOpcode, kSsec, kSsid, kSid, kLeaf});
    case Opcode::kCfgiCdAll: return mask_of({kOpcode, kSsec, kSid});
    case Opcode::kTlbiNhAll: return mask_of({kOpcode, kVmid});
    case Opcode::kTlbiNhAsid: return mask_of({kOpcode, kVmid, kAsid});
    case Opcode::kTlbiNhVa: return mask_of({kOpcode, kNum, kScale, kVmid, kAsid, kLeaf, kTtl, kTg, kVa});
    case Opcode::kTlbiNhVaa: return mask_of({kOpcode, kNum, kScale, kVmid, kLeaf, kTtl, kTg, kVa});
    case Opcode::kTlbiEl2All: return mask_of({kOpcode});
    case Opcode::kTlbiEl2Asid: return mask_of({kOpcode, kAsid});
    case Opcode::kTlbiEl2Va: return mask_of({kOpcode, kNum, kScale, kAsid, kLeaf, kTtl, kTg, kVa});
    case Opcode::kTlbiEl2Vaa: return mask_of({kOpcode, kNum, kScale, kLeaf, kTtl, kTg, kVa});
    case Opcode::kTlbiS12Vmall: return mask_of({kOpcode, kVmid});
    case Opcode::kTlbiS2Ipa: return mask_of({kOpcode, kNum, kScale, kVmid, kLeaf, kTtl, kTg, ipa});
    case Opcode::kTlbiNsnhAll: return mask_of({kOpcode});
    case Opcode::kAtcInv: return mask_of({kOpcode, kSsv, kAtcGlobal, kSsid, kSid, kAtcSize, kVa});
    case Opcode::kPriResp: return mask_of({kOpcode, kSsv, kSsid, kSid, kPriPrgIndex, kPriResp});
    case Opcode::kResume: return mask_of({kOpcode, kSsec, kResumeAc, kResumeAb, kSid, kResumeStag});
    case Opcode::kStallTerm: return mask_of({kOpcode, kSsec, kSid});
    case Opcode::kCmdSync: return mask_of({kOpcode, kSyncCs, kSyncMsh, kSyncMsiAttr, kSyncMsiData, msi_addr});
  }
  return mask_of({kOpcode});
}

// defined_bits_of for every opcode byte, per PA size (47 or 51: the only
// thing of the features it depends on), built once: a decode reads it.
const CommandWords& defined_bits(Opcode op, const SmmuFeatures& f) {
  using Table = std::array<CommandWords, 256>;
  auto build = [](unsigned pa_top) {
    Table t{};
    for (const OpcodeInfo& o : kOpcodes) t[static_cast<uint8_t>(o.op)] = defined_bits_of(o.op, pa_top);
    return t;
  };
  static const Table pa48 = build(47), pa52 = build(51);
  return (pa_top_bit(f) == 47 ? pa48 : pa52)[static_cast<uint8_t>(op)];
}

bool has_ssec(Opcode op) {
  switch (op) {
    case Opcode::kPrefetchConfig:
    case Opcode::kPrefetchAddr:
    case Opcode::kCfgiSte:
    case Opcode::kCfgiSteRange:
    case Opcode::kCfgiCd:
    case Opcode::kCfgiCdAll:
    case Opcode::kResume:
    case Opcode::kStallTerm: return true;
    default: return false;
  }
}

// Why a command of `op` is CERROR_ILL on an SMMU with `f` whatever its
// fields, or nullptr.
const char* missing_feature(Opcode op, const SmmuFeatures& f) {
  switch (op) {
    case Opcode::kCfgiCd:
    case Opcode::kCfgiCdAll:
      if (!f.stage1)
        return "raises CERROR_ILL on an SMMU without stage 1 (SMMU_IDR0.S1P == 0; IHI 0070 4.3.3, 4.3.4)";
      return nullptr;
    case Opcode::kTlbiNhAll:
    case Opcode::kTlbiNhAsid:
    case Opcode::kTlbiNhVa:
    case Opcode::kTlbiNhVaa:
      if (!f.stage1) return "is CERROR_ILL on an SMMU without stage 1 (SMMU_IDR0.S1P == 0; IHI 0070 4.4.2)";
      return nullptr;
    case Opcode::kTlbiEl2All:
    case Opcode::kTlbiEl2Asid:
    case Opcode::kTlbiEl2Va:
    case Opcode::kTlbiEl2Vaa:
      if (!f.stage1) return "is CERROR_ILL on an SMMU without stage 1 (SMMU_IDR0.S1P == 0; IHI 0070 4.4.2)";
      if (!f.hyp) return "is CERROR_ILL when SMMU_IDR0.Hyp == 0 (IHI 0070 4.4.2, 4.4.2.7-4.4.2.10)";
      return nullptr;
    case Opcode::kTlbiS2Ipa:
      if (!f.stage2) return "raises CERROR_ILL on an SMMU without stage 2 (SMMU_IDR0.S2P == 0; IHI 0070 4.4.3.1)";
      return nullptr;
    case Opcode::kTlbiS12Vmall:
      if (!f.stage2) return "raises CERROR_ILL on an SMMU without stage 2 (SMMU_IDR0.S2P == 0; IHI 0070 4.4.3.2)";
      return nullptr;
    case Opcode::kAtcInv:
      if (!f.ats) return "is ILLEGAL when SMMU_IDR0.ATS == 0 (IHI 0070 4.5.1)";
      return nullptr;
    case Opcode::kPriResp:
      if (!f.pri) return "is ILLEGAL when SMMU_IDR0.PRI == 0 (IHI 0070 4.5.2)";
      return nullptr;
    case Opcode::kResume:
      if (f.stall_model == 0b01)
        return "raises CERROR_ILL: the Stall model is not supported (SMMU_IDR0.STALL_MODEL == 0b01; IHI 0070 4.7.1)";
      return nullptr;
    case Opcode::kStallTerm:
      if (f.stall_model == 0b01)
        return "raises CERROR_ILL: the Stall model is not supported (SMMU_IDR0.STALL_MODEL == 0b01; IHI 0070 4.7.2)";
      return nullptr;
    default: return nullptr;
  }
}

std::string hex(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 0xF]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

// Lowest set bit number of the 128-bit value, which must be non-zero.
unsigned lowest_bit(const CommandWords& w) {
  return w[0] ? static_cast<unsigned>(__builtin_ctzll(w[0])) : 64u + static_cast<unsigned>(__builtin_ctzll(w[1]));
}

std::string res0_reason(Opcode op, unsigned bit) {
  std::string what = "RES0 bit " + std::to_string(bit) + " is set";
  if (is_tlbi_by_address(op) && bit == cmd::kScaleDs.lo)
    what = "SCALE[5] (bit 25) is set but RES0 without SMMU_IDR5.DS";
  if (is_tlbi_by_address(op) && bit == cmd::kTtl128.lo)
    what = "TTL128 (bit 71) is set but RES0 without 128-bit descriptors";
  if ((op == Opcode::kTlbiS2Ipa || op == Opcode::kCmdSync) && bit >= 112 && bit <= 119)
    what += " (an address bit above the implemented range, RES0 by IHI 0070 4.1.6)";
  return what + ": detected as a malformed command (IHI 0070 4.1.5)";
}

CommandDecode illegal(CommandDecode d, const std::string& reason) {
  d.error = reg::cerror::kIll;
  d.reason = reason;
  return d;
}

}  // namespace

const std::vector<Opcode>& all_opcodes() {
  static const std::vector<Opcode> v = [] {
    std::vector<Opcode> r;
    for (const OpcodeInfo& i : kOpcodes) r.push_back(i.op);
    return r;
  }();
  return v;
}

const char* opcode_name(Opcode op) {
  for (const OpcodeInfo& i : kOpcodes)
    if (i.op == op) return i.name;
  return "CMD_UNKNOWN";
}

std::optional<Opcode> opcode_from_byte(uint8_t byte) {
  for (const OpcodeInfo& i : kOpcodes)
    if (static_cast<uint8_t>(i.op) == byte) return i.op;
  return std::nullopt;
}

const char* command_name(const Command& c) { return c.is_cfgi_all() ? "CMD_CFGI_ALL" : opcode_name(c.opcode); }

std::optional<Granule> tg_granule(unsigned tg) {
  switch (tg) {
    case 1: return Granule::k4K;
    case 2: return Granule::k16K;
    case 3: return Granule::k64K;
    default: return std::nullopt;
  }
}

unsigned tg_encoding(Granule g) {
  switch (g) {
    case Granule::k4K: return 1;
    case Granule::k16K: return 2;
    case Granule::k64K: return 3;
  }
  return 0;
}

uint64_t Command::range_bytes() const {
  const std::optional<Granule> g = tg_granule(tg);
  if (!g) return 0;
  // (NUM + 1) * 2^SCALE * granule (IHI 0070 4.4.1.1); at most 2^52 bytes.
  return (uint64_t{num} + 1) << (scale + granule_shift(*g));
}

// IHI 0070 4.1.3: what makes a command CERROR_ILL; see the header for the
// whole list and for what is deliberately accepted.
CommandDecode decode_command(const CommandWords& words, const SmmuFeatures& f, const DecodeOptions& opts) {
  CommandDecode d;
  d.command.raw = words;
  d.opcode_byte = static_cast<uint8_t>(get(words, cmd::kOpcode));
  const std::optional<Opcode> known = opcode_from_byte(d.opcode_byte);
  if (!known) return illegal(d, "opcode " + hex(d.opcode_byte) + ": " + other_opcode_reason(d.opcode_byte));
  const Opcode op = *known;
  Command& c = d.command;
  c.opcode = op;
  // The opcode's name leads every reason; made a string only on these paths.
  auto illegal_op = [&](const std::string& why) { return illegal(d, opcode_name(op) + why); };

  if (const char* why = missing_feature(op, f)) return illegal_op(std::string(" ") + why);
  // 4.1.6: SSec == 1 on the Non-secure Command queue is ILLEGAL, whether or
  // not Secure state is supported.
  if (has_ssec(op) && get(words, cmd::kSsec))
    return illegal_op(": SSec == 1 on the Non-secure Command queue (IHI 0070 4.1.6)");

  CommandWords w = words;  // the fields to decode: RES0 bits cleared when ignored
  if (is_tlbi_by_address(op)) {
    const bool range_fields = get(w, cmd::kNum) || get(w, cmd::kScale) || get(w, cmd::kTg) || get(w, cmd::kTtl);
    // 4.4.1.1: NUM, SCALE, TG and TTL are RES0 when SMMU_IDR3.RIL == 0.
    if (!f.ril && range_fields) {
      if (opts.reject_nonzero_res0)
        return illegal_op(": TG/TTL/NUM/SCALE are RES0 when SMMU_IDR3.RIL == 0 (IHI 0070 4.4.1.1); "
                          "detected as a malformed command (IHI 0070 4.1.5)");
      for (CommandField fld : {cmd::kNum, cmd::kScale, cmd::kTg, cmd::kTtl}) put(w, fld, 0);
    }
    // 4.4.1.1: NUM, SCALE and TTL are RES0 when TG == 0.
    if (f.ril && get(w, cmd::kTg) == 0 && (get(w, cmd::kNum) || get(w, cmd::kScale) || get(w, cmd::kTtl))) {
      if (opts.reject_nonzero_res0)
        return illegal_op(": NUM/SCALE/TTL are RES0 when TG == 0 (IHI 0070 4.4.1.1); detected as a "
                          "malformed command (IHI 0070 4.1.5)");
      for (CommandField fld : {cmd::kNum, cmd::kScale, cmd::kTtl}) put(w, fld, 0);
    }
  }
  const CommandWords& defined = defined_bits(op, f);
  const CommandWords res0{w[0] & ~defined[0], w[1] & ~defined[1]};
  if (res0[0] || res0[1]) {
    if (opts.reject_nonzero_res0) return illegal_op(": " + res0_reason(op, lowest_bit(res0)));
    w = {w[0] & defined[0], w[1] & defined[1]};
  }

  switch (op) {
    case Opcode::kPrefetchConfig:
    case Opcode::kPrefetchAddr:
      c.sid = static_cast<uint32_t>(get(w, cmd::kSid));
      c.ssv = get(w, cmd::kSsv);
      c.ssid = static_cast<uint32_t>(get(w, cmd::kSsid));
      if (op == Opcode::kPrefetchAddr) {
        c.size = static_cast<uint8_t>(get(w, cmd::kPrefetchSize));
        c.addr = get(w, cmd::kVa) << 12;
      }
      break;
    case Opcode::kCfgiSte:
    case Opcode::kCfgiCd:
      c.sid = static_cast<uint32_t>(get(w, cmd::kSid));
      c.leaf = get(w, cmd::kLeaf);
      if (op == Opcode::kCfgiCd) c.ssid = static_cast<uint32_t>(get(w, cmd::kSsid));
      break;
    case Opcode::kCfgiSteRange:
      c.sid = static_cast<uint32_t>(get(w, cmd::kSid));
      c.range = static_cast<uint8_t>(get(w, cmd::kRange));
      break;
    case Opcode::kCfgiCdAll:
    case Opcode::kStallTerm:
      c.sid = static_cast<uint32_t>(get(w, cmd::kSid));
      break;
    case Opcode::kTlbiNhAll:
    case Opcode::kTlbiS12Vmall:
      c.vmid = static_cast<uint16_t>(get(w, cmd::kVmid));
      break;
    case Opcode::kTlbiNhAsid:
      c.vmid = static_cast<uint16_t>(get(w, cmd::kVmid));
      c.asid = static_cast<uint16_t>(get(w, cmd::kAsid));
      break;
    case Opcode::kTlbiEl2Asid:
      c.asid = static_cast<uint16_t>(get(w, cmd::kAsid));
      break;
    case Opcode::kTlbiNhVa:
    case Opcode::kTlbiNhVaa:
    case Opcode::kTlbiEl2Va:
    case Opcode::kTlbiEl2Vaa:
    case Opcode::kTlbiS2Ipa:
      if (op == Opcode::kTlbiNhVa || op == Opcode::kTlbiNhVaa || op == Opcode::kTlbiS2Ipa)
        c.vmid = static_cast<uint16_t>(get(w, cmd::kVmid));
      if (op == Opcode::kTlbiNhVa || op == Opcode::kTlbiEl2Va) c.asid = static_cast<uint16_t>(get(w, cmd::kAsid));
      c.leaf = get(w, cmd::kLeaf);
      c.num = static_cast<uint8_t>(get(w, cmd::kNum));
      c.scale = static_cast<uint8_t>(get(w, cmd::kScale));
      c.tg = static_cast<uint8_t>(get(w, cmd::kTg));
      c.ttl = static_cast<uint8_t>(get(w, cmd::kTtl));
      c.addr = (op == Opcode::kTlbiS2Ipa ? get(w, CommandField{pa_top_bit(f) + 64, 76}) : get(w, cmd::kVa)) << 12;
      break;
    case Opcode::kTlbiEl2All:
    case Opcode::kTlbiNsnhAll:
      break;
    case Opcode::kAtcInv:
      c.sid = static_cast<uint32_t>(get(w, cmd::kSid));
      c.ssv = get(w, cmd::kSsv);
      c.ssid = static_cast<uint32_t>(get(w, cmd::kSsid));
      c.global = get(w, cmd::kAtcGlobal);
      c.size = static_cast<uint8_t>(get(w, cmd::kAtcSize));
      c.addr = get(w, cmd::kVa) << 12;
      break;
    case Opcode::kPriResp:
      c.sid = static_cast<uint32_t>(get(w, cmd::kSid));
      c.ssv = get(w, cmd::kSsv);
      c.ssid = static_cast<uint32_t>(get(w, cmd::kSsid));
      c.prg_index = static_cast<uint16_t>(get(w, cmd::kPriPrgIndex));
      c.pri_resp = static_cast<uint8_t>(get(w, cmd::kPriResp));
      break;
    case Opcode::kResume:
      c.sid = static_cast<uint32_t>(get(w, cmd::kSid));
      c.stag = static_cast<uint16_t>(get(w, cmd::kResumeStag));
      c.resume_retry = get(w, cmd::kResumeAc);
      c.resume_abort = get(w, cmd::kResumeAb);
      break;
    case Opcode::kCmdSync: {
      const uint64_t cs = get(w, cmd::kSyncCs);
      // 4.7.3: CS == 0b11 is Reserved and causes CERROR_ILL.
      if (cs == 3) return illegal_op(": CS == 0b11 is Reserved (IHI 0070 4.7.3)");
      c.cs = static_cast<SyncCs>(cs);
      c.msh = static_cast<uint8_t>(get(w, cmd::kSyncMsh));
      c.msi_attr = static_cast<uint8_t>(get(w, cmd::kSyncMsiAttr));
      c.msi_data = static_cast<uint32_t>(get(w, cmd::kSyncMsiData));
      c.msi_addr = get(w, cmd::kSyncMsiAddr) << 2;
      // 4.7.3: SIG_SEV without SMMU_IDR0.SEV is SIG_NONE; MSIAddress, MSIData
      // and MSIWriteAttributes are IGNORED with SIG_NONE, and with SIG_IRQ on
      // an SMMU without MSIs; MSH 0b01 is Reserved, treated as 0b00;
      // MSIAddress is truncated to the OAS.
      if (c.cs == SyncCs::kSev && !f.sev) c.cs = SyncCs::kNone;
      if (c.cs != SyncCs::kIrq || !f.msi) {
        c.msh = 0;
        c.msi_attr = 0;
        c.msi_data = 0;
        c.msi_addr = 0;
      }
      if (c.msh == 1) c.msh = 0;
      if (f.oas_bits < 64) c.msi_addr &= (1ull << f.oas_bits) - 1;
      break;
    }
  }

  if (is_tlbi_by_address(op) && c.tg != 0) {
    // 4.4.1.1: NUM == SCALE == 0 with TTL == 0 is Reserved (CERROR_ILL); with
    // SMMU_IDR5.DS == 0 (always here), TTL == 0b01 with a 16K TG is treated
    // as TTL == 0b00, so it is Reserved too.
    const bool ttl_zero = c.ttl == 0 || (c.tg == 2 && c.ttl == 1);
    if (c.num == 0 && c.scale == 0 && ttl_zero)
      return illegal_op(std::string(c.ttl == 0 ? ": TG != 0 with NUM == SCALE == 0 and TTL == 0 is Reserved"
                                               : ": TG == 16K with TTL == 0b01 (treated as 0b00 without "
                                                 "SMMU_IDR5.DS) and NUM == SCALE == 0 is Reserved") +
                        " (IHI 0070 4.4.1.1)");
  }
  // 4.5.1: a Size above 52 is CONSTRAINED UNPREDICTABLE, CERROR_ILL being
  // one permitted behaviour; the model takes it.
  if (op == Opcode::kAtcInv && c.size > kAtcInvSizeAll)
    return illegal_op(": Size > 52 (CONSTRAINED UNPREDICTABLE, CERROR_ILL taken; IHI 0070 4.5.1)");
  if (op == Opcode::kPriResp && c.pri_resp == 3)
    return illegal_op(": Resp == 0b11 is Reserved, ILLEGAL (IHI 0070 4.5.2)");
  return d;
}

// ---- Encoders

CommandWords encode_command(const Command& c) {
  CommandWords w{};
  put(w, cmd::kOpcode, static_cast<uint8_t>(c.opcode));
  auto tlbi_range = [&] {
    put(w, cmd::kLeaf, c.leaf);
    put(w, cmd::kNum, c.num);
    put(w, cmd::kScale, c.scale);
    put(w, cmd::kTg, c.tg);
    put(w, cmd::kTtl, c.ttl);
  };
  switch (c.opcode) {
    case Opcode::kPrefetchConfig:
    case Opcode::kPrefetchAddr:
      put(w, cmd::kSid, c.sid);
      put(w, cmd::kSsv, c.ssv);
      put(w, cmd::kSsid, c.ssid);
      if (c.opcode == Opcode::kPrefetchAddr) {
        put(w, cmd::kPrefetchSize, c.size);
        put(w, cmd::kVa, c.addr >> 12);
      }
      break;
    case Opcode::kCfgiSte:
    case Opcode::kCfgiCd:
      put(w, cmd::kSid, c.sid);
      put(w, cmd::kLeaf, c.leaf);
      if (c.opcode == Opcode::kCfgiCd) put(w, cmd::kSsid, c.ssid);
      break;
    case Opcode::kCfgiSteRange:
      put(w, cmd::kSid, c.sid);
      put(w, cmd::kRange, c.range);
      break;
    case Opcode::kCfgiCdAll:
    case Opcode::kStallTerm:
      put(w, cmd::kSid, c.sid);
      break;
    case Opcode::kTlbiNhAll:
    case Opcode::kTlbiS12Vmall:
      put(w, cmd::kVmid, c.vmid);
      break;
    case Opcode::kTlbiNhAsid:
      put(w, cmd::kVmid, c.vmid);
      put(w, cmd::kAsid, c.asid);
      break;
    case Opcode::kTlbiEl2Asid:
      put(w, cmd::kAsid, c.asid);
      break;
    case Opcode::kTlbiNhVa:
      put(w, cmd::kAsid, c.asid);
      [[fallthrough]];
    case Opcode::kTlbiNhVaa:
      put(w, cmd::kVmid, c.vmid);
      put(w, cmd::kVa, c.addr >> 12);
      tlbi_range();
      break;
    case Opcode::kTlbiEl2Va:
      put(w, cmd::kAsid, c.asid);
      [[fallthrough]];
    case Opcode::kTlbiEl2Vaa:
      put(w, cmd::kVa, c.addr >> 12);
      tlbi_range();
      break;
    case Opcode::kTlbiS2Ipa:
      put(w, cmd::kVmid, c.vmid);
      put(w, cmd::kPa, c.addr >> 12);
      tlbi_range();
      break;
    case Opcode::kTlbiEl2All:
    case Opcode::kTlbiNsnhAll:
      break;
    case Opcode::kAtcInv:
      put(w, cmd::kSid, c.sid);
      put(w, cmd::kSsv, c.ssv);
      put(w, cmd::kSsid, c.ssid);
      put(w, cmd::kAtcGlobal, c.global);
      put(w, cmd::kAtcSize, c.size);
      put(w, cmd::kVa, c.addr >> 12);
      break;
    case Opcode::kPriResp:
      put(w, cmd::kSid, c.sid);
      put(w, cmd::kSsv, c.ssv);
      put(w, cmd::kSsid, c.ssid);
      put(w, cmd::kPriPrgIndex, c.prg_index);
      put(w, cmd::kPriResp, c.pri_resp);
      break;
    case Opcode::kResume:
      put(w, cmd::kSid, c.sid);
      put(w, cmd::kResumeStag, c.stag);
      put(w, cmd::kResumeAc, c.resume_retry);
      put(w, cmd::kResumeAb, c.resume_abort);
      break;
    case Opcode::kCmdSync:
      put(w, cmd::kSyncCs, static_cast<uint8_t>(c.cs));
      put(w, cmd::kSyncMsh, c.msh);
      put(w, cmd::kSyncMsiAttr, c.msi_attr);
      put(w, cmd::kSyncMsiData, c.msi_data);
      put(w, cmd::kSyncMsiAddr, c.msi_addr >> 2);
      break;
  }
  return w;
}

namespace {

Command with(Opcode op) {
  Command c;
  c.opcode = op;
  return c;
}

Command tlbi(Opcode op, uint16_t asid, uint16_t vmid, uint64_t addr, bool leaf, unsigned num, unsigned scale,
             unsigned tg, unsigned ttl) {
  Command c = with(op);
  c.asid = asid;
  c.vmid = vmid;
  c.addr = addr;
  c.leaf = leaf;
  c.num = static_cast<uint8_t>(num);
  c.scale = static_cast<uint8_t>(scale);
  c.tg = static_cast<uint8_t>(tg);
  c.ttl = static_cast<uint8_t>(ttl);
  return c;
}

}  // namespace

CommandWords cmd_prefetch_config(uint32_t sid, bool ssv, uint32_t ssid) {
  Command c = with(Opcode::kPrefetchConfig);
  c.sid = sid;
  c.ssv = ssv;
  c.ssid = ssid;
  return encode_command(c);
}

CommandWords cmd_prefetch_addr(uint32_t sid, uint64_t addr, unsigned size, bool ssv, uint32_t ssid) {
  Command c = with(Opcode::kPrefetchAddr);
  c.sid = sid;
  c.addr = addr;
  c.size = static_cast<uint8_t>(size);
  c.ssv = ssv;
  c.ssid = ssid;
  return encode_command(c);
}

CommandWords cmd_cfgi_ste(uint32_t sid, bool leaf) {
  Command c = with(Opcode::kCfgiSte);
  c.sid = sid;
  c.leaf = leaf;
  return encode_command(c);
}

CommandWords cmd_cfgi_ste_range(uint32_t sid, unsigned range) {
  Command c = with(Opcode::kCfgiSteRange);
  c.sid = sid;
  c.range = static_cast<uint8_t>(range);
  return encode_command(c);
}

CommandWords cmd_cfgi_all() { return cmd_cfgi_ste_range(0, 31); }

CommandWords cmd_cfgi_cd(uint32_t sid, uint32_t ssid, bool leaf) {
  Command c = with(Opcode::kCfgiCd);
  c.sid = sid;
  c.ssid = ssid;
  c.leaf = leaf;
  return encode_command(c);
}

CommandWords cmd_cfgi_cd_all(uint32_t sid) {
  Command c = with(Opcode::kCfgiCdAll);
  c.sid = sid;
  return encode_command(c);
}

CommandWords cmd_tlbi_nh_all(uint16_t vmid) {
  Command c = with(Opcode::kTlbiNhAll);
  c.vmid = vmid;
  return encode_command(c);
}

CommandWords cmd_tlbi_nh_asid(uint16_t asid, uint16_t vmid) {
  Command c = with(Opcode::kTlbiNhAsid);
  c.asid = asid;
  c.vmid = vmid;
  return encode_command(c);
}

CommandWords cmd_tlbi_nh_va(uint16_t asid, uint16_t vmid, uint64_t va, bool leaf, unsigned num, unsigned scale,
                            unsigned tg, unsigned ttl) {
  return encode_command(tlbi(Opcode::kTlbiNhVa, asid, vmid, va, leaf, num, scale, tg, ttl));
}

CommandWords cmd_tlbi_nh_vaa(uint16_t vmid, uint64_t va, bool leaf, unsigned num, unsigned scale, unsigned tg,
                             unsigned ttl) {
  return encode_command(tlbi(Opcode::kTlbiNhVaa, 0, vmid, va, leaf, num, scale, tg, ttl));
}

CommandWords cmd_tlbi_el2_all() { return encode_command(with(Opcode::kTlbiEl2All)); }

CommandWords cmd_tlbi_el2_asid(uint16_t asid) {
  Command c = with(Opcode::kTlbiEl2Asid);
  c.asid = asid;
  return encode_command(c);
}

CommandWords cmd_tlbi_el2_va(uint16_t asid, uint64_t va, bool leaf, unsigned num, unsigned scale, unsigned tg,
                             unsigned ttl) {
  return encode_command(tlbi(Opcode::kTlbiEl2Va, asid, 0, va, leaf, num, scale, tg, ttl));
}

CommandWords cmd_tlbi_el2_vaa(uint64_t va, bool leaf, unsigned num, unsigned scale, unsigned tg, unsigned ttl) {
  return encode_command(tlbi(Opcode::kTlbiEl2Vaa, 0, 0, va, leaf, num, scale, tg, ttl));
}

CommandWords cmd_tlbi_s12_vmall(uint16_t vmid) {
  Command c = with(Opcode::kTlbiS12Vmall);
  c.vmid = vmid;
  return encode_command(c);
}

CommandWords cmd_tlbi_s2_ipa(uint16_t vmid, uint64_t ipa, bool leaf, unsigned num, unsigned scale, unsigned tg,
                             unsigned ttl) {
  return encode_command(tlbi(Opcode::kTlbiS2Ipa, 0, vmid, ipa, leaf, num, scale, tg, ttl));
}

CommandWords cmd_tlbi_nsnh_all() { return encode_command(with(Opcode::kTlbiNsnhAll)); }

CommandWords cmd_atc_inv(uint32_t sid, uint64_t addr, unsigned size, bool ssv, uint32_t ssid, bool global) {
  Command c = with(Opcode::kAtcInv);
  c.sid = sid;
  c.addr = addr;
  c.size = static_cast<uint8_t>(size);
  c.ssv = ssv;
  c.ssid = ssid;
  c.global = global;
  return encode_command(c);
}

CommandWords cmd_pri_resp(uint32_t sid, uint16_t prg_index, unsigned resp, bool ssv, uint32_t ssid) {
  Command c = with(Opcode::kPriResp);
  c.sid = sid;
  c.prg_index = prg_index;
  c.pri_resp = static_cast<uint8_t>(resp);
  c.ssv = ssv;
  c.ssid = ssid;
  return encode_command(c);
}

CommandWords cmd_resume(uint32_t sid, uint16_t stag, bool retry, bool abort) {
  Command c = with(Opcode::kResume);
  c.sid = sid;
  c.stag = stag;
  c.resume_retry = retry;
  c.resume_abort = abort;
  return encode_command(c);
}

CommandWords cmd_stall_term(uint32_t sid) {
  Command c = with(Opcode::kStallTerm);
  c.sid = sid;
  return encode_command(c);
}

CommandWords cmd_sync(SyncCs cs, uint64_t msi_addr, uint32_t msi_data, unsigned msh, unsigned msi_attr) {
  Command c = with(Opcode::kCmdSync);
  c.cs = cs;
  c.msi_addr = msi_addr;
  c.msi_data = msi_data;
  c.msh = static_cast<uint8_t>(msh);
  c.msi_attr = static_cast<uint8_t>(msi_attr);
  return encode_command(c);
}

// ---- Linux range splitting (see the header).

std::vector<Command> linux_range_tlbi(uint16_t asid, uint16_t vmid, uint64_t iova, uint64_t size, uint64_t granule,
                                      bool leaf, bool ril, Granule tg, Opcode opcode) {
  std::vector<Command> out;
  if (size == 0 || granule == 0) return out;
  Command base = with(opcode);
  base.asid = (opcode == Opcode::kTlbiNhVa || opcode == Opcode::kTlbiEl2Va) ? asid : 0;
  base.vmid = (opcode == Opcode::kTlbiEl2Va) ? 0 : vmid;
  base.leaf = leaf;
  const uint64_t end = iova + size;

  if (!ril) {
    // One single-address TLBI per granule.
    for (uint64_t a = iova; a < end; a += granule) {
      Command c = base;
      c.addr = a;
      c.raw = encode_command(c);
      out.push_back(c);
    }
    return out;
  }

  const unsigned tg_shift = granule_shift(tg);
  uint64_t pages = size >> tg_shift;
  base.tg = static_cast<uint8_t>(tg_encoding(tg));
  if (leaf) {
    // The level of a granule-sized leaf: 4 - (log2(granule) - 3) / (log2(tg) - 3).
    const unsigned granule_log2 = 63u - static_cast<unsigned>(__builtin_clzll(granule));
    base.ttl = static_cast<uint8_t>(4 - (granule_log2 - 3) / (tg_shift - 3));
  } else if ((pages & 31) == 1) {
    // Non-leaf (TTL = 0): a lone trailing page would need the Reserved
    // NUM = SCALE = TTL = 0; cover one page more instead.
    ++pages;
  }
  uint64_t a = iova;
  while (pages != 0) {
    const unsigned scale = static_cast<unsigned>(__builtin_ctzll(pages));
    const uint64_t n = (pages >> scale) & 31;
    Command c = base;
    c.addr = a;
    c.num = static_cast<uint8_t>(n - 1);
    c.scale = static_cast<uint8_t>(scale);
    c.raw = encode_command(c);
    out.push_back(c);
    a += n << (scale + tg_shift);
    pages -= n << scale;
  }
  return out;
}

}  // namespace smmu_vp::smmu

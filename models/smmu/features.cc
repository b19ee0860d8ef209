#include "smmu/features.h"

#include <array>
#include <utility>

#include "smmu/registers.h"

namespace smmu_vp::smmu {

namespace {

// IHI 0070 6.3.6, IDR5.OAS encodings 0b000..0b110.
constexpr std::array<unsigned, 7> kOasBits = {32, 36, 40, 42, 44, 48, 52};

uint32_t put(const Field& f, uint64_t v) { return static_cast<uint32_t>(f.place(v)); }
uint32_t put(const Field& f, bool v) { return static_cast<uint32_t>(f.place(v ? 1 : 0)); }

}  // namespace

std::optional<uint32_t> oas_encoding(unsigned bits) {
  for (uint32_t i = 0; i < kOasBits.size(); ++i)
    if (kOasBits[i] == bits) return i;
  return std::nullopt;
}

std::optional<unsigned> oas_bits_from_encoding(uint32_t encoding) {
  if (encoding >= kOasBits.size()) return std::nullopt;
  return kOasBits[encoding];
}

// IHI 0070 6.3.1
uint32_t SmmuFeatures::idr0() const {
  using namespace reg::idr0;
  return put(kStLevel, uint64_t{two_level_strtab ? kStLevelTwoLevel : kStLevelLinear}) |
         put(kTermModel, term_abort_only) | put(kStallModel, uint64_t{stall_model}) |
         put(kTtEndian, uint64_t{ttendian}) | put(kCd2l, two_level_cd) | put(kVmid16, vmid16) | put(kPri, pri) |
         put(kSev, sev) | put(kMsi, msi) | put(kAsid16, asid16) | put(kAts, ats) | put(kHyp, hyp) |
         put(kCohAcc, cohacc) | put(kTtf, uint64_t{kTtfAArch64}) | put(kS1p, stage1) | put(kS2p, stage2) |
         put(kNs1Ats, ats && stage1 && stage2);
}

// IHI 0070 6.3.2
uint32_t SmmuFeatures::idr1() const {
  using namespace reg::idr1;
  return put(kEcmdq, ecmdq) | put(kAttrTypesOvr, attr_types_ovr) | put(kAttrPermsOvr, attr_perms_ovr) |
         put(kCmdqs, uint64_t{cmdqs}) | put(kEventqs, uint64_t{eventqs}) | put(kPriqs, uint64_t{priqs}) |
         put(kSsidSize, uint64_t{ssidsize}) | put(kSidSize, uint64_t{sidsize});
}

uint32_t SmmuFeatures::idr2() const { return 0; }

// IHI 0070 6.3.4
uint32_t SmmuFeatures::idr3() const {
  using namespace reg::idr3;
  return put(kPtwnnc, ptwnnc) | put(kE0pd, e0pd) | put(kBbml, uint64_t{bbml}) | put(kRil, ril) | put(kFwb, fwb) |
         put(kXnx, xnx) | put(kHad, had);
}

uint32_t SmmuFeatures::idr4() const { return 0; }

// IHI 0070 6.3.6
uint32_t SmmuFeatures::idr5() const {
  using namespace reg::idr5;
  const uint32_t oas = oas_encoding(oas_bits).value_or(0);
  return put(kStallMax, uint64_t{stall_model == reg::idr0::kStallModelNoStall ? 0u : stall_max}) |
         put(kVax, uint64_t{vax}) | put(kGran64K, gran64k) | put(kGran16K, gran16k) | put(kGran4K, gran4k) |
         put(kOas, uint64_t{oas});
}

// IHI 0070 6.3.45: RES0 unless IDR1.ECMDQ.
uint32_t SmmuFeatures::idr6() const {
  if (!ecmdq) return 0;
  using namespace reg::idr6;
  return put(kCmdqControlPageLog2NumP, uint64_t{ecmdq_log2_pages}) |
         put(kCmdqControlPageLog2NumQ, uint64_t{ecmdq_log2_queues});
}

// IHI 0070 6.3.8: ArchMajorRev 0 is SMMUv3.x.
uint32_t SmmuFeatures::aidr() const { return put(reg::aidr::kArchMinorRev, uint64_t{arch_minor}); }

uint64_t SmmuFeatures::register_space_size() const {
  return reg::kEcmdqPagesOffset + uint64_t{ecmdq_pages()} * reg::kPageSize;
}

std::vector<std::string> SmmuFeatures::validate() const {
  std::vector<std::string> e;
  auto err = [&e](std::string s) { e.push_back(std::move(s)); };
  const std::string v = "SMMUv3." + std::to_string(arch_minor);

  if (arch_minor > 3) err("arch_minor " + std::to_string(arch_minor) + ": only SMMUv3.0 to SMMUv3.3 are modelled");

  // IDR0 (IHI 0070 6.3.1)
  if (!stage1 && !stage2) err("neither stage 1 nor stage 2 translation (IDR0.S1P, S2P)");
  if (hyp && !(stage1 && stage2)) err("hyp needs both stages (IDR0.Hyp is RES0 when S1P or S2P is 0, 6.3.1)");
  if (arch_minor >= 2 && stage1 && stage2 && !hyp) err(v + " with both stages must support Hyp (6.3.1)");
  if (pri && !ats) err("PRI needs ATS (IDR0.PRI is RES0 when ATS is 0, 6.3.1)");
  if (stall_model > reg::idr0::kStallModelForced)
    err("stall_model " + std::to_string(stall_model) + " is reserved (0b00, 0b01 or 0b10, 6.3.1)");
  if (stall_model != reg::idr0::kStallModelNoStall && (stall_max == 0 || stall_max > 0xFFFF))
    err("stall_max " + std::to_string(stall_max) + ": an SMMU that stalls holds 1 to 65535 stalled transactions (IDR5.STALL_MAX, 6.3.6)");
  if (ttendian != reg::idr0::kTtEndianLittle)
    err("ttendian " + std::to_string(ttendian) + ": only little-endian table walks are modelled (0b10)");

  // IDR1 (6.3.2)
  auto queue = [&](const char* what, unsigned log2) {
    if (log2 > reg::kMaxQueueLog2Size)
      err(std::string(what) + " " + std::to_string(log2) + " exceeds the maximum of 19 (6.3.2)");
  };
  queue("cmdqs", cmdqs);
  queue("eventqs", eventqs);
  queue("priqs", priqs);
  if (sidsize > 32) err("sidsize " + std::to_string(sidsize) + " exceeds 32 (6.3.2)");
  if (ssidsize > 20) err("ssidsize " + std::to_string(ssidsize) + " exceeds 20 (6.3.2)");
  if (sidsize >= 7 && !two_level_strtab)
    err("sidsize " + std::to_string(sidsize) +
        " needs 2-level stream tables (SIDSIZE >= 7 needs ST_LEVEL != 0, 6.3.2)");
  if (ecmdq) {
    if (arch_minor < 3) err("ECMDQ is an SMMUv3.3 feature, not " + v);
    if (!cohacc) err("ECMDQ needs coherent access (IDR1.ECMDQ needs IDR0.COHACC, 6.3.2)");
    if (!msi) err("ECMDQ needs MSI (IDR1.ECMDQ needs IDR0.MSI, 6.3.2)");
    if (ecmdq_log2_pages > reg::idr6::kMaxLog2)
      err("ecmdq_log2_pages " + std::to_string(ecmdq_log2_pages) + " exceeds 8 (6.3.45)");
    if (ecmdq_log2_queues > reg::idr6::kMaxLog2)
      err("ecmdq_log2_queues " + std::to_string(ecmdq_log2_queues) + " exceeds 8 (6.3.45)");
  }

  // IDR3 (6.3.4)
  if (ril && arch_minor < 2) err("RIL is not part of " + v + " (from SMMUv3.2)");
  if (!ril && arch_minor >= 2) err(v + " must support RIL (6.3.4)");
  if (had && !stage1) err("HAD needs stage 1 (6.3.4)");
  if (!had && stage1 && arch_minor >= 1) err(v + " with stage 1 must support HAD (6.3.4)");
  if (xnx && arch_minor == 0) err("XNX is RES0 in SMMUv3.0 (6.3.4)");
  if (!xnx && stage2 && arch_minor >= 1) err(v + " with stage 2 must support XNX (6.3.4)");
  if (fwb && arch_minor < 2) err("FWB is not part of " + v + " (from SMMUv3.2)");
  if (fwb && !stage2) err("FWB needs stage 2 (6.3.4)");
  if (!fwb && arch_minor >= 2 && stage2) err(v + " must support FWB (6.3.4)");
  if (!e0pd && arch_minor >= 3) err(v + " must support E0PD (6.3.4)");
  if (ptwnnc && !stage2) err("PTWNNC is RES0 without stage 2 (6.3.4)");
  if (!ptwnnc && stage2 && arch_minor >= 3) err(v + " with stage 2 must have PTWNNC (6.3.4)");
  if (bbml > 2) err("bbml " + std::to_string(bbml) + " is reserved (0..2, 6.3.4)");
  if (bbml != 0 && arch_minor < 2) err("BBML is not part of " + v + " (from SMMUv3.2)");
  if (bbml == 0 && arch_minor >= 2) err(v + " must have BBML 1 or 2 (6.3.4)");

  // IDR5 (6.3.6)
  if (!gran4k && !gran16k && !gran64k) err("no translation granule (IDR5.GRAN4K/16K/64K)");
  if (!oas_encoding(oas_bits)) {
    err("oas_bits " + std::to_string(oas_bits) + " is not one of 32, 36, 40, 42, 44, 48, 52 (6.3.6)");
  } else if (oas_bits == 52) {
    if (arch_minor == 0) err("52-bit OAS is reserved in SMMUv3.0 (6.3.6)");
    if (!gran64k) err("52-bit OAS needs the 64K granule (DS and D128 are not modelled, 6.3.6)");
    // Advertising it would make legal CDs and STEs (IPS/PS 52, 52-bit TTBs,
    // OA[51:48] in 64K descriptors) that the walker refuses.
    err("52-bit OAS is not modelled: the walker handles output addresses up to 48 bits");
  }
  if (vax > reg::idr5::kVax52) {
    err("vax " + std::to_string(vax) + ": 56-bit VAs need D128, not modelled (6.3.6)");
  } else if (vax == reg::idr5::kVax52) {
    if (arch_minor == 0) err("VAX is RES0 in SMMUv3.0 (6.3.6)");
    if (!gran64k) err("52-bit VAs need the 64K granule (DS is not modelled, 6.3.6)");
    // With VAX, T0SZ 12..15 (64K granule) is legal (IHI 0070 5.4); the walker stops at 16.
    err("52-bit VAs are not modelled: the walker handles input addresses up to 48 bits");
  }
  return e;
}

SmmuFeatures SmmuFeatures::v3_0_profile() {
  SmmuFeatures f;
  f.name = "v3.0";
  f.arch_minor = 0;
  f.stage1 = true;
  f.stage2 = true;
  f.two_level_strtab = true;
  f.two_level_cd = true;
  f.hyp = false;
  f.asid16 = true;
  f.vmid16 = false;
  f.msi = false;
  f.sev = false;
  f.cohacc = false;
  f.cmdqs = 10;
  f.eventqs = 10;
  f.priqs = 0;
  f.ssidsize = 8;
  f.sidsize = 16;
  f.ecmdq = false;
  f.ecmdq_log2_pages = 0;
  f.ecmdq_log2_queues = 0;
  f.ril = false;
  f.had = false;
  f.xnx = false;
  f.fwb = false;
  f.e0pd = false;
  f.ptwnnc = false;
  f.bbml = 0;
  f.gran4k = true;
  f.gran16k = false;
  f.gran64k = true;
  f.oas_bits = 48;
  f.vax = 0;
  return f;
}

SmmuFeatures SmmuFeatures::v3_3_profile() {
  SmmuFeatures f;  // the defaults describe this profile
  f.name = "v3.3";
  f.arch_minor = 3;
  f.ecmdq = true;
  f.ecmdq_log2_pages = 1;
  f.ecmdq_log2_queues = 2;
  return f;
}

const std::vector<std::string>& profile_names() {
  static const std::vector<std::string> names = {"v3.0", "v3.3"};
  return names;
}

std::optional<SmmuFeatures> profile_by_name(const std::string& name) {
  if (name == "v3.0") return SmmuFeatures::v3_0_profile();
  if (name == "v3.3") return SmmuFeatures::v3_3_profile();
  return std::nullopt;
}

}  // namespace smmu_vp::smmu

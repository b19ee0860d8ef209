// SmmuFeatures: the named profiles, the ID register values computed from a
// feature set (decoded field by field with the register map's Field helpers),
// OAS encodings and the validation of inconsistent feature sets.
#include "smmu/features.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "smmu/registers.h"

namespace smmu_vp::smmu {
namespace {

bool has_error(const std::vector<std::string>& errors, const std::string& part) {
  for (const std::string& e : errors)
    if (e.find(part) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& errors) {
  std::string s;
  for (const std::string& e : errors) s += e + "\n";
  return s;
}

// Every ID register field against the feature struct it is computed from.
void expect_id_registers_match(const SmmuFeatures& f) {
  SCOPED_TRACE(f.name);
  using namespace reg;
  const uint32_t idr0 = f.idr0();
  EXPECT_EQ(idr0::kS1p.get(idr0), f.stage1);
  EXPECT_EQ(idr0::kS2p.get(idr0), f.stage2);
  EXPECT_EQ(idr0::kTtf.get(idr0), idr0::kTtfAArch64);
  EXPECT_EQ(idr0::kCohAcc.get(idr0), f.cohacc);
  EXPECT_EQ(idr0::kBtm.get(idr0), 0u);
  EXPECT_EQ(idr0::kHttu.get(idr0), 0u);
  EXPECT_EQ(idr0::kDormHint.get(idr0), 0u);
  EXPECT_EQ(idr0::kHyp.get(idr0), f.hyp);
  EXPECT_EQ(idr0::kAts.get(idr0), 0u);
  EXPECT_EQ(idr0::kNs1Ats.get(idr0), 0u);
  EXPECT_EQ(idr0::kAsid16.get(idr0), f.asid16);
  EXPECT_EQ(idr0::kMsi.get(idr0), f.msi);
  EXPECT_EQ(idr0::kSev.get(idr0), f.sev);
  EXPECT_EQ(idr0::kAtos.get(idr0), 0u);
  EXPECT_EQ(idr0::kPri.get(idr0), 0u);
  EXPECT_EQ(idr0::kVmw.get(idr0), 0u);
  EXPECT_EQ(idr0::kVmid16.get(idr0), f.vmid16);
  EXPECT_EQ(idr0::kCd2l.get(idr0), f.two_level_cd);
  EXPECT_EQ(idr0::kVatos.get(idr0), 0u);
  EXPECT_EQ(idr0::kTtEndian.get(idr0), idr0::kTtEndianLittle);
  EXPECT_EQ(idr0::kAtsRecErr.get(idr0), 0u);
  EXPECT_EQ(idr0::kStallModel.get(idr0), idr0::kStallModelNoStall);
  EXPECT_EQ(idr0::kTermModel.get(idr0), f.term_abort_only);
  EXPECT_EQ(idr0::kStLevel.get(idr0), f.two_level_strtab ? idr0::kStLevelTwoLevel : idr0::kStLevelLinear);
  EXPECT_EQ(idr0::kRmeImpl.get(idr0), 0u);
  EXPECT_EQ(idr0 & 0xA0000000u, 0u) << "RES0 bits 31 and 29";

  const uint32_t idr1 = f.idr1();
  EXPECT_EQ(idr1::kEcmdq.get(idr1), f.ecmdq);
  EXPECT_EQ(idr1::kTablesPreset.get(idr1), 0u);
  EXPECT_EQ(idr1::kQueuesPreset.get(idr1), 0u);
  EXPECT_EQ(idr1::kRel.get(idr1), 0u);
  EXPECT_EQ(idr1::kAttrTypesOvr.get(idr1), f.attr_types_ovr);
  EXPECT_EQ(idr1::kAttrPermsOvr.get(idr1), f.attr_perms_ovr);
  EXPECT_EQ(idr1::kCmdqs.get(idr1), f.cmdqs);
  EXPECT_EQ(idr1::kEventqs.get(idr1), f.eventqs);
  EXPECT_EQ(idr1::kPriqs.get(idr1), f.priqs);
  EXPECT_EQ(idr1::kSsidSize.get(idr1), f.ssidsize);
  EXPECT_EQ(idr1::kSidSize.get(idr1), f.sidsize);

  EXPECT_EQ(f.idr2(), 0u);
  EXPECT_EQ(f.idr4(), 0u);

  const uint32_t idr3 = f.idr3();
  EXPECT_EQ(idr3::kRil.get(idr3), f.ril);
  EXPECT_EQ(idr3::kHad.get(idr3), f.had);
  EXPECT_EQ(idr3::kXnx.get(idr3), f.xnx);
  EXPECT_EQ(idr3::kFwb.get(idr3), f.fwb);
  EXPECT_EQ(idr3::kE0pd.get(idr3), f.e0pd);
  EXPECT_EQ(idr3::kPtwnnc.get(idr3), f.ptwnnc);
  EXPECT_EQ(idr3::kBbml.get(idr3), f.bbml);
  const uint32_t idr3_known = idr3::kRil.mask32() | idr3::kHad.mask32() | idr3::kXnx.mask32() |
                              idr3::kFwb.mask32() | idr3::kE0pd.mask32() | idr3::kPtwnnc.mask32() |
                              idr3::kBbml.mask32();
  EXPECT_EQ(idr3 & ~idr3_known, 0u) << "no other IDR3 feature is advertised";

  const uint32_t idr5 = f.idr5();
  EXPECT_EQ(idr5::kGran4K.get(idr5), f.gran4k);
  EXPECT_EQ(idr5::kGran16K.get(idr5), f.gran16k);
  EXPECT_EQ(idr5::kGran64K.get(idr5), f.gran64k);
  EXPECT_EQ(oas_bits_from_encoding(static_cast<uint32_t>(idr5::kOas.get(idr5))), f.oas_bits);
  EXPECT_EQ(idr5::kVax.get(idr5), f.vax);
  EXPECT_EQ(idr5::kDs.get(idr5), 0u);
  EXPECT_EQ(idr5::kD128.get(idr5), 0u);
  EXPECT_EQ(idr5::kStallMax.get(idr5), 0u);

  const uint32_t idr6 = f.idr6();
  if (f.ecmdq) {
    EXPECT_EQ(idr6::kCmdqControlPageLog2NumP.get(idr6), f.ecmdq_log2_pages);
    EXPECT_EQ(idr6::kCmdqControlPageLog2NumQ.get(idr6), f.ecmdq_log2_queues);
    EXPECT_EQ(idr6 & ~(idr6::kCmdqControlPageLog2NumP.mask32() | idr6::kCmdqControlPageLog2NumQ.mask32()), 0u);
  } else {
    EXPECT_EQ(idr6, 0u) << "IDR6 is RES0 without ECMDQ";
  }

  EXPECT_EQ(aidr::kArchMajorRev.get(f.aidr()), 0u);
  EXPECT_EQ(aidr::kArchMinorRev.get(f.aidr()), f.arch_minor);
}

TEST(SmmuFeatures, ProfilesAreValid) {
  for (const std::string& name : profile_names()) {
    const std::optional<SmmuFeatures> f = profile_by_name(name);
    ASSERT_TRUE(f.has_value()) << name;
    EXPECT_EQ(f->name, name);
    EXPECT_TRUE(f->validate().empty()) << name << ":\n" << joined(f->validate());
  }
  EXPECT_FALSE(profile_by_name("v3.1").has_value());
  EXPECT_FALSE(profile_by_name("").has_value());
}

TEST(SmmuFeatures, V30ProfileIsMinimal) {
  const SmmuFeatures f = SmmuFeatures::v3_0_profile();
  EXPECT_EQ(f.arch_minor, 0u);
  EXPECT_FALSE(f.ril);
  EXPECT_FALSE(f.msi);
  EXPECT_FALSE(f.sev);
  EXPECT_FALSE(f.cohacc);
  EXPECT_FALSE(f.ecmdq);
  EXPECT_TRUE(f.two_level_strtab);  // linear and 2-level
  EXPECT_EQ(f.register_space_size(), 0x20000u);
  expect_id_registers_match(f);
}

TEST(SmmuFeatures, V33Profile) {
  const SmmuFeatures f = SmmuFeatures::v3_3_profile();
  EXPECT_EQ(f.arch_minor, 3u);
  EXPECT_TRUE(f.ril);
  EXPECT_TRUE(f.msi);
  EXPECT_TRUE(f.sev);
  EXPECT_TRUE(f.cohacc);
  EXPECT_TRUE(f.two_level_strtab);
  EXPECT_TRUE(f.two_level_cd);
  EXPECT_TRUE(f.ecmdq);
  EXPECT_EQ(f.ecmdq_pages(), 2u);
  EXPECT_EQ(f.ecmdq_queues_per_page(), 4u);
  // Pages 0 and 1, then two command queue control pages.
  EXPECT_EQ(f.register_space_size(), 0x40000u);
  expect_id_registers_match(f);
}

TEST(SmmuFeatures, IdRegistersFollowEachFeature) {
  SmmuFeatures f = SmmuFeatures::v3_3_profile();
  f.stage2 = false;
  f.hyp = false;
  f.xnx = false;
  f.fwb = false;
  f.ptwnnc = false;
  f.vmid16 = false;
  f.gran16k = false;
  f.oas_bits = 40;
  f.sidsize = 6;
  f.two_level_strtab = false;
  f.ssidsize = 0;
  f.two_level_cd = false;
  f.cmdqs = 8;
  f.eventqs = 7;
  f.ecmdq_log2_pages = 8;
  f.ecmdq_log2_queues = 0;
  f.term_abort_only = false;
  f.attr_types_ovr = true;
  f.bbml = 2;
  ASSERT_TRUE(f.validate().empty()) << joined(f.validate());
  expect_id_registers_match(f);
  EXPECT_EQ(reg::idr5::kOas.get(f.idr5()), 2u);  // 40 bits
}

// IHI 0070 6.3.1: IDR0.ATS advertises ATS; NS1ATS = 1 says split-stage ATS
// is not supported, and is RES0 unless ATS, S1P and S2P are all 1.
TEST(SmmuFeatures, AtsAdvertisesNoSplitStage) {
  SmmuFeatures f = SmmuFeatures::v3_3_profile();
  f.ats = true;
  ASSERT_TRUE(f.validate().empty()) << joined(f.validate());
  EXPECT_EQ(reg::idr0::kAts.get(f.idr0()), 1u);
  EXPECT_EQ(reg::idr0::kNs1Ats.get(f.idr0()), 1u);
  f.stage2 = false;
  f.hyp = false;
  f.xnx = false;
  f.fwb = false;
  f.ptwnnc = false;
  ASSERT_TRUE(f.validate().empty()) << joined(f.validate());
  EXPECT_EQ(reg::idr0::kAts.get(f.idr0()), 1u);
  EXPECT_EQ(reg::idr0::kNs1Ats.get(f.idr0()), 0u);
  f.ats = false;
  f.pri = true;
  EXPECT_NE(joined(f.validate()).find("PRI needs ATS"), std::string::npos);
}

TEST(SmmuFeatures, OasEncodings) {
  const unsigned bits[] = {32, 36, 40, 42, 44, 48, 52};
  for (uint32_t enc = 0; enc < 7; ++enc) {
    EXPECT_EQ(oas_encoding(bits[enc]), enc);
    EXPECT_EQ(oas_bits_from_encoding(enc), bits[enc]);
  }
  EXPECT_FALSE(oas_encoding(56).has_value());  // needs D128
  EXPECT_FALSE(oas_encoding(50).has_value());
  EXPECT_FALSE(oas_encoding(0).has_value());
  EXPECT_FALSE(oas_bits_from_encoding(7).has_value());
}

struct BadCase {
  const char* what;
  void (*change)(SmmuFeatures&);
  const char* error_part;
};

TEST(SmmuFeatures, ValidationReportsEachProblem) {
  const BadCase cases[] = {
      {"ECMDQ without COHACC", [](SmmuFeatures& f) { f.cohacc = false; }, "COHACC"},
      {"ECMDQ without MSI", [](SmmuFeatures& f) { f.msi = false; }, "MSI"},
      {"ECMDQ before v3.3",
       [](SmmuFeatures& f) {
         f.arch_minor = 2;
         f.e0pd = false;
       },
       "ECMDQ is an SMMUv3.3 feature"},
      {"too many control pages", [](SmmuFeatures& f) { f.ecmdq_log2_pages = 9; }, "ecmdq_log2_pages"},
      {"too many queues per page", [](SmmuFeatures& f) { f.ecmdq_log2_queues = 9; }, "ecmdq_log2_queues"},
      {"CMDQS > 19", [](SmmuFeatures& f) { f.cmdqs = 20; }, "cmdqs 20"},
      {"EVENTQS > 19", [](SmmuFeatures& f) { f.eventqs = 31; }, "eventqs 31"},
      {"PRIQS > 19", [](SmmuFeatures& f) { f.priqs = 20; }, "priqs 20"},
      {"unsupported OAS", [](SmmuFeatures& f) { f.oas_bits = 50; }, "oas_bits 50"},
      {"56-bit OAS", [](SmmuFeatures& f) { f.oas_bits = 56; }, "oas_bits 56"},
      {"52-bit OAS without 64K", [](SmmuFeatures& f) {
         f.oas_bits = 52;
         f.gran64k = false;
       },
       "52-bit OAS needs the 64K granule"},
      {"SSIDSIZE > 20", [](SmmuFeatures& f) { f.ssidsize = 21; }, "ssidsize 21"},
      {"SIDSIZE > 32", [](SmmuFeatures& f) { f.sidsize = 33; }, "sidsize 33"},
      {"large SIDSIZE with a linear table only", [](SmmuFeatures& f) {
         f.sidsize = 7;
         f.two_level_strtab = false;
       },
       "needs 2-level stream tables"},
      {"no granule", [](SmmuFeatures& f) {
         f.gran4k = false;
         f.gran16k = false;
         f.gran64k = false;
       },
       "no translation granule"},
      {"no stage", [](SmmuFeatures& f) {
         f.stage1 = false;
         f.stage2 = false;
       },
       "neither stage"},
      {"Hyp without stage 2", [](SmmuFeatures& f) { f.stage2 = false; }, "hyp needs both stages"},
      {"v3.2+ without Hyp", [](SmmuFeatures& f) { f.hyp = false; }, "must support Hyp"},
      {"v3.2+ without RIL", [](SmmuFeatures& f) { f.ril = false; }, "must support RIL"},
      {"v3.3 without E0PD", [](SmmuFeatures& f) { f.e0pd = false; }, "must support E0PD"},
      {"v3.2+ without BBML", [](SmmuFeatures& f) { f.bbml = 0; }, "BBML 1 or 2"},
      {"reserved BBML", [](SmmuFeatures& f) { f.bbml = 3; }, "bbml 3"},
      {"PRI without ATS", [](SmmuFeatures& f) { f.pri = true; }, "PRI needs ATS"},
      {"mixed-endian walks", [](SmmuFeatures& f) { f.ttendian = reg::idr0::kTtEndianMixed; }, "little-endian"},
      {"56-bit VAs", [](SmmuFeatures& f) { f.vax = 2; }, "vax 2"},
      {"52-bit VAs without 64K", [](SmmuFeatures& f) {
         f.vax = 1;
         f.gran64k = false;
       },
       "52-bit VAs need the 64K granule"},
      {"v3.4", [](SmmuFeatures& f) { f.arch_minor = 4; }, "only SMMUv3.0 to SMMUv3.3"},
      // Legal in the architecture, refused because the walker stops at 48 bits.
      {"52-bit OAS", [](SmmuFeatures& f) { f.oas_bits = 52; }, "52-bit OAS is not modelled"},
      {"52-bit VAs", [](SmmuFeatures& f) { f.vax = 1; }, "52-bit VAs are not modelled"},
  };
  for (const BadCase& c : cases) {
    SmmuFeatures f = SmmuFeatures::v3_3_profile();
    c.change(f);
    const std::vector<std::string> errors = f.validate();
    EXPECT_TRUE(has_error(errors, c.error_part)) << c.what << ", got:\n" << joined(errors);
  }
}

TEST(SmmuFeatures, ValidationOfV30Rules) {
  const BadCase cases[] = {
      {"RIL in v3.0", [](SmmuFeatures& f) { f.ril = true; }, "RIL is not part of SMMUv3.0"},
      {"52-bit OAS in v3.0", [](SmmuFeatures& f) { f.oas_bits = 52; }, "reserved in SMMUv3.0"},
      {"XNX in v3.0", [](SmmuFeatures& f) { f.xnx = true; }, "XNX is RES0"},
      {"VAX in v3.0", [](SmmuFeatures& f) { f.vax = 1; }, "VAX is RES0"},
      {"BBML in v3.0", [](SmmuFeatures& f) { f.bbml = 1; }, "BBML is not part of SMMUv3.0"},
      {"ECMDQ in v3.0", [](SmmuFeatures& f) {
         f.ecmdq = true;
         f.ecmdq_log2_pages = 1;
       },
       "ECMDQ is an SMMUv3.3 feature"},
  };
  for (const BadCase& c : cases) {
    SmmuFeatures f = SmmuFeatures::v3_0_profile();
    c.change(f);
    EXPECT_TRUE(has_error(f.validate(), c.error_part)) << c.what << ", got:\n" << joined(f.validate());
  }
  // ECMDQ in the v3.0 profile also lacks COHACC and MSI: every problem is listed.
  SmmuFeatures f = SmmuFeatures::v3_0_profile();
  f.ecmdq = true;
  const std::vector<std::string> errors = f.validate();
  EXPECT_TRUE(has_error(errors, "COHACC"));
  EXPECT_TRUE(has_error(errors, "MSI"));
  EXPECT_GE(errors.size(), 3u);
}

TEST(SmmuFeatures, SmallLinearOnlySmmuIsValid) {
  SmmuFeatures f = SmmuFeatures::v3_0_profile();
  f.sidsize = 6;  // up to 6 StreamID bits need no 2-level table
  f.two_level_strtab = false;
  EXPECT_TRUE(f.validate().empty()) << joined(f.validate());
  EXPECT_EQ(reg::idr0::kStLevel.get(f.idr0()), reg::idr0::kStLevelLinear);
}

}  // namespace
}  // namespace smmu_vp::smmu

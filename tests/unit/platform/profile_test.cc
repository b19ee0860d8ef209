// Machine profiles (config/profile.h): extends, provenance entries and the
// check that every timing value has one; the shipped profiles pass it.
#include "config/profile.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "config/run_config.h"

namespace smmu_vp::config {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A scratch directory of profile files for one test.
class ProfileFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("smmu-vp-profile-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const json& j) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << j.dump(2);
    return p.string();
  }
  // A profile of the shipped base with `extra` merged into its document.
  json child(const json& extra) {
    json j = {{"extends", std::string(SMMU_VP_SOURCE_DIR) + "/platform/platforms/base.json"},
              {"profile", {{"name", "t"}, {"title", "test"}, {"machine", "none"}}}};
    j.merge_patch(extra);
    return j;
  }
  template <typename Fn>
  static std::string error_of(Fn fn) {
    try {
      fn();
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  }
  fs::path dir_;
};

TEST_F(ProfileFiles, ChildValuesAndProvenanceWinOverWhatTheyExtend) {
  const std::string f = write("c.json", child({{"cpu", {{"frequency_mhz", 2600}}},
                                              {"provenance", {{"cpu.frequency_mhz", {{"kind", "source"}, {"quote", "2.6 GHz"}, {"address", "https://example.org"}}}}}}));
  const Profile p = load_profile(f);
  EXPECT_TRUE(p.is_profile);
  EXPECT_EQ(p.name, "t");
  ASSERT_EQ(p.chain.size(), 2u);
  EXPECT_EQ(p.chain[0], f);
  EXPECT_EQ(p.platform["cpu"]["frequency_mhz"], 2600);
  EXPECT_EQ(p.platform["cpu"]["count"], 4) << "inherited from base.json";
  EXPECT_EQ(p.provenance.at("cpu.frequency_mhz").kind, "source");
  EXPECT_EQ(p.provenance.at("cpu.frequency_mhz").file, f);
  EXPECT_EQ(p.provenance.at("cpu.atomic_cycles").kind, "guess") << "inherited from base.json";
  EXPECT_NO_THROW(check_provenance(p));
}

TEST_F(ProfileFiles, AValueWithoutProvenanceNamesTheFileAndKey) {
  // base.json's own content without one of its entries.
  json own = json::parse(std::ifstream(std::string(SMMU_VP_SOURCE_DIR) + "/platform/platforms/base.json"));
  own["provenance"].erase("smmu.cmdq.sync_ns");
  const std::string f = write("own.json", own);
  const std::string e = error_of([&] { check_provenance(load_profile(f)); });
  EXPECT_NE(e.find(f + ": provenance.smmu.cmdq.sync_ns"), std::string::npos) << e;
  EXPECT_NE(e.find("no provenance"), std::string::npos) << e;
}

TEST_F(ProfileFiles, ADeviceOfAnotherTypeNeedsItsOwnEntries) {
  json own = json::parse(std::ifstream(std::string(SMMU_VP_SOURCE_DIR) + "/platform/platforms/base.json"));
  own["provenance"].erase("device_types.nvme.read_latency_us");
  own["provenance"]["devices.nvme0.read_latency_us"] = {{"kind", "guess"}, {"reasoning", "drive 0 only"}};
  const std::string f = write("own.json", own);
  const std::string e = error_of([&] { check_provenance(load_profile(f)); });
  EXPECT_NE(e.find("provenance.devices.nvme1.read_latency_us"), std::string::npos) << e;
}

TEST_F(ProfileFiles, EntriesNeedWhatTheirKindRequires) {
  auto err = [&](const json& entry) {
    const std::string f = write("c.json", child({{"provenance", {{"cpu.frequency_mhz", entry}}}}));
    return error_of([&] { load_profile(f); });
  };
  EXPECT_NE(err({{"kind", "source"}, {"quote", "x"}}).find("needs \"address\""), std::string::npos);
  EXPECT_NE(err({{"kind", "fitted"}, {"residual", "1 %"}}).find("needs \"to\""), std::string::npos);
  EXPECT_NE(err({{"kind", "fitted"}, {"to", {"a"}}}).find("needs \"residual\""), std::string::npos);
  EXPECT_NE(err({{"kind", "guess"}}).find("needs \"reasoning\""), std::string::npos);
  EXPECT_NE(err({{"kind", "measured"}}).find("unknown kind"), std::string::npos);
  EXPECT_NE(err("2.6 GHz").find("provenance.cpu.frequency_mhz"), std::string::npos);
}

TEST_F(ProfileFiles, AProvenanceKeyThatNamesNoParameterIsAnError) {
  const std::string f = write("c.json", child({{"provenance", {{"cpu.frequncy_mhz", {{"kind", "guess"}, {"reasoning", "typo"}}}}}}));
  const std::string e = error_of([&] { check_provenance(load_profile(f)); });
  EXPECT_NE(e.find("provenance.cpu.frequncy_mhz"), std::string::npos) << e;
  EXPECT_NE(e.find("names no parameter"), std::string::npos) << e;
}

TEST_F(ProfileFiles, ACycleOfExtendsIsAnError) {
  const std::string a = write("a.json", {{"extends", "b.json"}});
  write("b.json", {{"extends", "a.json"}});
  EXPECT_NE(error_of([&] { load_profile(a); }).find("a cycle"), std::string::npos);
}

TEST_F(ProfileFiles, AnUnknownProfileNamesTheKnownOnes) {
  const std::string e = error_of([] { find_profile("no_such_machine"); });
  EXPECT_NE(e.find("unknown profile"), std::string::npos) << e;
  EXPECT_NE(e.find("base"), std::string::npos) << e;
}

TEST_F(ProfileFiles, AScenarioNamesAProfileAndTheSummaryKnowsWhatItChanged) {
  const std::string f = write("s.json", {{"platform", "base"},
                                         {"set", {{"platform.smmu.cmdq.sync_ns", 99}}},
                                         {"scenario", {{"name", "s"}}}});
  const RunConfig rc = load_run_config(f, {"platform.cpu.count=2"}, {});
  EXPECT_EQ(rc.origin.profile, "base");
  EXPECT_EQ(rc.origin.set_by_scenario, std::vector<std::string>{"smmu.cmdq.sync_ns"});
  EXPECT_EQ(rc.origin.set_by_command_line, std::vector<std::string>{"cpu.count"});
  EXPECT_EQ(rc.smmu.cmdq.sync_ns, 99.0);
}

TEST_F(ProfileFiles, SetPlatformRunsTheScenarioOnAnotherProfile) {
  const std::string f = write("s.json", {{"platform", "base"},
                                         {"set", {{"platform.cpu.count", 2}}},
                                         {"scenario", {{"name", "s"}}}});
  const RunConfig rc = load_run_config(f, {"platform=kunpeng920"}, {});
  EXPECT_EQ(rc.origin.profile, "kunpeng920");
  EXPECT_EQ(rc.cpu.frequency_mhz, 2600.0);
  EXPECT_EQ(rc.cpu.count, 2u) << "the scenario's own set still applies";
  EXPECT_EQ(rc.origin.set_by_command_line, std::vector<std::string>{"platform"});
  EXPECT_NE(error_of([&] { load_run_config(f, {"platform=no_such_machine"}, {}); }).find("unknown profile"),
            std::string::npos);
}

TEST(ShippedProfiles, EveryTimingValueOfEveryProfileHasProvenance) {
  ASSERT_FALSE(profile_names().empty());
  for (const auto& name : profile_names()) {
    SCOPED_TRACE(name);
    const Profile p = load_profile(find_profile(name));
    EXPECT_TRUE(p.is_profile) << name << " has no \"profile\" block";
    EXPECT_NO_THROW(check_provenance(p));
    for (const auto& row : provenance_rows(p, resolved_platform(p))) EXPECT_NE(row.provenance, nullptr) << row.key;
  }
}

}  // namespace
}  // namespace smmu_vp::config

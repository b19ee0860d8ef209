// Several SMMU instances (docs/smmu.md, "Several SMMU instances") run as a
// user runs them: each device translates through the SMMU that names it,
// each instance reports on its own, and a domain shared by devices behind two
// SMMUs sends every invalidation to both, serially or overlapped.
#include "cli_support.h"

namespace cli_test {
namespace {

// fio on `drives` drives of the base profile, strict, one job per drive;
// nvme1 and up (to `behind`) sit behind a second SMMU.
std::string scenario(const fs::path& dir, unsigned drives, const std::string& behind, unsigned bs, unsigned depth) {
  nlohmann::json cores = nlohmann::json::array();
  for (unsigned c = 0; c < drives; ++c) cores.push_back(c);
  const nlohmann::json doc = {
      {"platform", "base"},
      {"set", {{"platform.smmus", nlohmann::json::parse(R"([{"name": "smmu1", "base": "0x09100000", "eventq_irq": 67,
                                                          "gerror_irq": 68, "sync_irq": 69, "masters": )" + behind + "}]")}}},
      {"scenario",
       {{"name", "two_smmus"},
        {"apps", {{{"app", "fio"}, {"cores", cores},
                   {"params", {{"drives", drives}, {"bs", bs}, {"iodepth", depth}, {"rw", 2}, {"unmap", 0},
                               {"warmup_us", 200}, {"runtime_us", 1000}}}}}},
        {"stop", {{"max_time_us", 100000}}}}}};
  return write_file(dir, "two_smmus.json", doc.dump(2));
}

nlohmann::json run(const std::string& file, const fs::path& out, const std::string& set = "", std::string* summary = nullptr) {
  const Cmd r = sh("run " + file + " --out " + out.string() + set);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  if (summary) *summary = r.out;
  return read_json(out / "stats.json");
}

uint64_t tlbis(const nlohmann::json& smmu) { return smmu["cmdq"]["executed"].value("CMD_TLBI_NH_VA", uint64_t{0}); }

TEST(CliSmmus, EachDeviceTranslatesThroughItsOwnSmmu) {
  const fs::path d = temp_dir("smmus");
  const std::string file = scenario(d, 4, R"(["nvme2", "nvme3"])", 65536, 8);
  std::string summary;
  const nlohmann::json two = run(file, d / "two", "", &summary);
  const nlohmann::json one = run(file, d / "one", " --set 'platform.smmus=[]'");
  for (const char* name : {"smmu", "smmu1"}) {
    const nlohmann::json& s = two[name];
    EXPECT_GT(s["tlb"]["lookups"].get<uint64_t>(), 0u) << name;
    EXPECT_GT(s["ptw"]["walks"]["s1"].get<uint64_t>(), 0u) << name;
    EXPECT_GT(tlbis(s), 0u) << name;
    EXPECT_NE(summary.find(std::string("\n") + name + "\n  transactions"), std::string::npos) << summary;
  }
  // Two drives each: the work of one SMMU, shared out.
  EXPECT_EQ(two["smmu"]["transactions"].get<uint64_t>() + two["smmu1"]["transactions"].get<uint64_t>(),
            one["smmu"]["transactions"].get<uint64_t>());
  EXPECT_FALSE(one.contains("smmu1"));
  EXPECT_TRUE(two["run"]["resource_use"].contains("smmu1 walkers"));
  // Strict unmaps of four jobs meet in one command queue, or two.
  EXPECT_LT(two["sw"]["fio"]["smmu_cmdq_ps"].get<double>(), one["sw"]["fio"]["smmu_cmdq_ps"].get<double>());
  fs::remove_all(d);
}

// One domain for both drives (fio domain=1): every invalidation reaches both
// SMMUs. Overlapped, the core waits for the slower of the two SMMUs, not for
// one after the other.
TEST(CliSmmus, ASharedDomainInvalidatesOnEverySmmu) {
  const fs::path d = temp_dir("smmus-shared");
  const std::string file = scenario(d, 2, R"(["nvme1"])", 524288, 1);
  const std::string shared = " --set scenario.apps.0.params.domain=1 --set scenario.apps.0.params.fanout=";
  const nlohmann::json serial = run(file, d / "serial", shared + "0");
  const nlohmann::json overlap = run(file, d / "overlap", shared + "1");
  const nlohmann::json apart = run(file, d / "apart");
  for (const nlohmann::json* r : {&serial, &overlap}) {
    // nvme0's admin commands unmap before nvme1 joins the domain: a few
    // invalidations reach the first SMMU only.
    const uint64_t first = tlbis((*r)["smmu"]), second = tlbis((*r)["smmu1"]);
    EXPECT_GT(second, 0u);
    EXPECT_LE(second, first);
    EXPECT_GE(second, first - 8);
  }
  EXPECT_EQ(tlbis(serial["smmu"]), tlbis(overlap["smmu"]));
  // Per-drive domains: each SMMU invalidates only its own drive's pages.
  EXPECT_LT(tlbis(apart["smmu1"]), tlbis(serial["smmu1"]) * 2 / 3);
  EXPECT_LT(overlap["sw"]["fio"]["smmu_cmdq_ps"].get<double>(), serial["sw"]["fio"]["smmu_cmdq_ps"].get<double>());
  fs::remove_all(d);
}

TEST(CliSmmus, RecordingATraceNeedsOneSmmu) {
  const fs::path d = temp_dir("smmus-trace");
  const std::string file = scenario(d, 2, R"(["nvme1"])", 65536, 1);
  const Cmd r = sh("run " + file + " --out " + (d / "out").string() + " --record-trace " + (d / "t.trace").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("2 SMMU instances"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(d / "t.trace"));
  fs::remove_all(d);
}

}  // namespace
}  // namespace cli_test

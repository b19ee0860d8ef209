// ATS, PRI and stalls run as a user runs them (docs/smmu.md and
// docs/devices.md, "ATS"; docs/results.md): a NIC with an ATC behind an
// SMMU with IDR0.ATS, and I/O page faults served through PRI or stalls. The NIC translates through
// Translation Requests and sends its DMA translated; the driver enables
// STE.EATS and follows every strict unmap with an ATC invalidation the SMMU
// sends to the NIC; nothing of it exists without ATS.
#include "cli_support.h"

namespace cli_test {
namespace {

const std::string kAts = std::string(SMMU_VP_SOURCE_DIR) + "/platform/scenarios/nic_ats_sweep.json";

nlohmann::json run(const fs::path& out, const std::string& set, std::string* summary = nullptr) {
  const Cmd r = sh("run " + kAts + " --out " + out.string() + (set.empty() ? "" : " --set " + set));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  if (summary) *summary = r.out;
  return read_json(out / "stats.json");
}

uint64_t n(const nlohmann::json& j) { return j.get<uint64_t>(); }

TEST(CliAts, TheNicTranslatesThroughItsAtcAndEveryStrictUnmapInvalidatesIt) {
  const fs::path d = temp_dir("ats");
  std::string summary;
  const nlohmann::json ats = run(d / "ats", "", &summary);
  const nlohmann::json off = run(d / "off", "platform.devices.nic0.atc.entries=0");
  const nlohmann::json& s = ats["smmu"]["ats"];
  const nlohmann::json& atc = ats["nic0"]["atc"];
  // Translation Requests went to the SMMU, which walked for them, and each
  // success filled the ATC, which then served most accesses.
  ASSERT_GT(n(s["translation_requests"]), 0u);
  EXPECT_EQ(n(s["success"]), n(s["translation_requests"]));
  EXPECT_EQ(n(atc["fills"]), n(s["success"]));
  EXPECT_GT(n(ats["smmu"]["ptw"]["walks"]["s1"]), 0u);
  EXPECT_GT(n(atc["hits"]), n(atc["lookups"]) / 2);
  // Every DMA access went out translated, none untranslated through the TLB
  // but the Translation Requests' own lookups.
  EXPECT_EQ(n(s["translated"]), n(atc["lookups"]));
  EXPECT_EQ(n(s["translated_aborted"]), 0u);
  EXPECT_EQ(n(ats["smmu"]["tlb"]["lookups"]), n(s["translation_requests"]));
  // Strict: one ATC invalidation per unmap, each answered.
  EXPECT_EQ(n(s["atc_invalidations"]), n(ats["smmu"]["cmdq"]["executed"]["CMD_ATC_INV"]));
  EXPECT_EQ(n(atc["invalidations"]), n(s["atc_invalidations"]));
  EXPECT_EQ(n(s["atc_inv_timeouts"]), 0u);
  EXPECT_EQ(n(ats["sw"]["net_rx"]["drops_dma_fault"]), 0u);
  EXPECT_NE(summary.find("ATS enabled (STE.EATS)"), std::string::npos) << summary;
  // Without an ATC the NIC's accesses go through the SMMU's TLB as before.
  EXPECT_FALSE(off["nic0"].contains("atc"));
  EXPECT_EQ(n(off["smmu"]["ats"]["translation_requests"]), 0u);
  EXPECT_GT(n(off["smmu"]["tlb"]["lookups"]), n(ats["smmu"]["tlb"]["lookups"]));
  fs::remove_all(d);
}

// An NVMe drive with an ATC goes the same way: its queue and data accesses
// go out translated, each unmap sends an ATC invalidation, no I/O fails.
TEST(CliAts, AnNvmeDriveUsesItsAtcToo) {
  const fs::path d = temp_dir("ats-nvme");
  const std::string fio = std::string(SMMU_VP_SOURCE_DIR) + "/platform/scenarios/seed001_fio_4nvme.json";
  const Cmd r = sh("run " + fio + " --out " + d.string() +
                   " --set platform.smmu.features.ats=true --set platform.devices.nvme0.atc.entries=64");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json s = read_json(d / "stats.json");
  EXPECT_GT(n(s["nvme0"]["atc"]["fills"]), 0u);
  EXPECT_GT(n(s["nvme0"]["atc"]["hits"]), 0u);
  EXPECT_EQ(n(s["smmu"]["ats"]["translated"]), n(s["nvme0"]["atc"]["lookups"]));
  EXPECT_EQ(n(s["nvme0"]["atc"]["invalidations"]), n(s["smmu"]["ats"]["atc_invalidations"]));
  EXPECT_GT(n(s["smmu"]["ats"]["atc_invalidations"]), 0u);
  EXPECT_FALSE(s["nvme1"].contains("atc"));
  EXPECT_NE(r.out.find("nvme0: ATC "), std::string::npos) << r.out;
  EXPECT_EQ(n(s["nvme0"]["data_transfer_errors"]), 0u);
  EXPECT_EQ(n(s["smmu"]["faults"]["total"]), 0u);
  EXPECT_GT(n(s["nvme0"]["reads"]), 0u);
  fs::remove_all(d);
}

// PRI end to end (iopf_sweep): the DMA engine's copies fault on the pages
// the app left unmapped, each fault goes through the PRI queue to the app's
// handler, which maps the page and answers; every copy's data arrives.
TEST(CliAts, PageFaultsAreServedThroughThePriQueue) {
  const fs::path d = temp_dir("iopf");
  const std::string iopf = std::string(SMMU_VP_SOURCE_DIR) + "/platform/scenarios/iopf_sweep.json";
  const Cmd r = sh("run " + iopf + " --out " + d.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json s = read_json(d / "stats.json");
  const nlohmann::json& app = s["sw"]["iopf_bench"];
  const uint64_t faults = n(app["faults"]);
  EXPECT_EQ(faults, 8u * n(app["faulting_pages"]));  // every copy faults the same pages
  EXPECT_GT(faults, 0u);
  EXPECT_EQ(n(app["faults_failed"]), 0u);
  EXPECT_FALSE(app.contains("data_errors"));
  EXPECT_EQ(n(s["smmu"]["ats"]["page_requests_queued"]), faults);
  EXPECT_EQ(n(s["smmu"]["ats"]["prg_responses"]), faults);
  EXPECT_EQ(n(s["dma0"]["atc"]["page_requests"]), faults);
  EXPECT_EQ(n(s["dma0"]["atc"]["page_faults_failed"]), 0u);
  EXPECT_EQ(n(s["smmu"]["faults"]["total"]), 0u);  // no access went untranslated into a hole
  fs::remove_all(d);
  // Without PRI at the SMMU the configuration is refused.
  const Cmd bad = sh("run " + iopf + " --out " + d.string() + " --set platform.smmu.features.pri=false");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("/platform/devices/dma0/atc/pri"), std::string::npos) << bad.out;
  fs::remove_all(d);
}

// The same faults through the stall model: the engine (no ATC) stalls in
// the SMMU on each unmapped page, the event queue's handler maps it and
// resumes the write with CMD_RESUME.
TEST(CliAts, PageFaultsAreServedThroughStalls) {
  const fs::path d = temp_dir("iopf-stall");
  const std::string iopf = std::string(SMMU_VP_SOURCE_DIR) + "/platform/scenarios/iopf_sweep.json";
  const Cmd r = sh("run " + iopf + " --out " + d.string() +
                   " --set scenario.apps.0.params.mode=stall --set platform.devices.dma0.atc.entries=0"
                   " --set platform.devices.dma0.atc.pri=false --set platform.smmu.features.stall_model=0"
                   " --set platform.smmu.features.stall_max=64");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json s = read_json(d / "stats.json");
  const nlohmann::json& app = s["sw"]["iopf_bench"];
  const uint64_t faults = n(app["faults"]);
  EXPECT_EQ(faults, 8u * n(app["faulting_pages"]));
  EXPECT_EQ(n(app["smmu_stall_events"]), faults);
  EXPECT_EQ(n(s["smmu"]["stalls"]["stalled"]), faults);
  EXPECT_FALSE(s["smmu"]["stalls"].contains("terminated"));
  EXPECT_EQ(n(s["smmu"]["faults"]["F_TRANSLATION"]), faults);  // each stalled once, then translated
  EXPECT_FALSE(app.contains("data_errors"));
  fs::remove_all(d);
}

TEST(CliAts, AnAtcBehindAnSmmuWithoutAtsIsAConfigurationError) {
  const fs::path d = temp_dir("ats-bad");
  const Cmd r = sh("run " + kAts + " --out " + d.string() + " --set platform.smmu.features.ats=false");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("/platform/devices/nic0/atc/entries"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("set /platform/smmu/features/ats to true"), std::string::npos) << r.out;
  fs::remove_all(d);
}

}  // namespace
}  // namespace cli_test

// Device apps side by side on one SMMU (issue 36): each translates and moves
// data together as it does alone. Two apps' domains once shared an ASID
// (the NIC's 1 and fio's first drive's 1), and the SMMU's TLB gave each the
// other's translations: the NIC took bad descriptors and received nothing,
// while the run completed.
#include "cli_support.h"

namespace cli_test {
namespace {

struct App {
  std::string name;            // as the app is called
  nlohmann::json entry;        // its scenario.apps entry
  std::vector<unsigned> sids;  // the streams it drives
  std::string key = name;      // where its results are (sw.<key>): another instance of an app has its own
};

std::string fmt_hex(unsigned v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%x", v);
  return b;
}

std::vector<unsigned> cores(unsigned first, unsigned n) {
  std::vector<unsigned> v;
  for (unsigned i = 0; i < n; ++i) v.push_back(first + i);
  return v;
}

App nic(unsigned first_core, unsigned index = 0, unsigned n = 16) {
  App a{"net_rx",
        {{"app", "net_rx"}, {"cores", cores(first_core, n)},
         {"params", {{"unmap", "strict"}, {"sync", "msi"}, {"warmup_us", 2000}, {"duration_us", 500}, {"nic", index}}}},
        {32 + index}};
  if (index) {  // the second NIC's net_rx is the app's second instance
    a.key = "net_rx_1";
    a.entry["name"] = a.key;
  }
  return a;
}
// A second 100 Gbit/s NIC beside the base profile's nic0: its own registers,
// StreamID 33 and interrupt lines.
const nlohmann::json kNic1 = {{"type", "nic"}, {"base", "0x10180000"}, {"stream_id", 33}, {"irq", 180}, {"queues", 16},
                              {"link_gbps", 100}};
App nvme(unsigned first_core, unsigned jobs, unsigned drives = 4) {
  std::vector<unsigned> sids;
  for (unsigned d = 0; d < drives; ++d) sids.push_back(48 + d);
  return {"fio",
          {{"app", "fio"}, {"cores", cores(first_core, jobs)},
           {"params", {{"drives", drives}, {"unmap", "strict"}, {"sync", "msi"}, {"warmup_us", 500}, {"runtime_us", 500}}}},
          sids};
}
App camera(unsigned core) {
  return {"camera", {{"app", "camera"}, {"cores", {core}}, {"params", {{"duration_us", 70000}, {"buffers", 4}}}}, {64}};
}

nlohmann::json run(const fs::path& dir, const std::string& label, const std::vector<App>& apps,
                   const nlohmann::json& set = nlohmann::json::object()) {
  unsigned n = 0;
  nlohmann::json entries = nlohmann::json::array();
  for (const App& a : apps) {
    entries.push_back(a.entry);
    for (unsigned c : a.entry["cores"]) n = std::max(n, c + 1);
  }
  const nlohmann::json doc = {
      {"platform", std::string(SMMU_VP_SOURCE_DIR) + "/platform/platforms/base.json"},
      {"set", {{"platform.cpu.count", n}, {"platform.devices.nic1", kNic1}}},
      {"scenario", {{"name", label}, {"apps", entries}, {"stop", {{"max_time_us", 200000}}}}}};
  nlohmann::json with = doc;
  // Drives nvme4-7 beside the base profile's four (their lines assigned by the platform).
  for (unsigned d = 4; d < 8; ++d)
    with["set"]["platform.devices.nvme" + std::to_string(d)] = {
        {"type", "nvme"}, {"base", fmt_hex(0x10240000u + (d - 4) * 0x10000u)}, {"stream_id", 48 + d}};
  with["set"].update(set);
  const std::string file = write_file(dir, label + ".json", with.dump());
  const Cmd r = sh("run " + file + " --quiet --strict --out " + (dir / label).string());
  EXPECT_EQ(r.exit_code, 0) << label << ":\n" << r.out;
  return read_json(dir / label / "stats.json");
}

// What an app moved, in its own terms.
double moved(const App& a, const nlohmann::json& stats) {
  const nlohmann::json& sw = stats["sw"][a.key];
  if (a.name == "net_rx") return sw["gbps"].get<double>();
  if (a.name == "fio") return sw["iops"].get<double>();
  return sw["frames_captured"].get<double>();
}

// `set`: platform changes for both runs (a resource the pair would share
// and that would bound it, made large enough not to).
void together_as_alone(const std::string& label, const std::vector<App>& apps,
                       const nlohmann::json& set = nlohmann::json::object()) {
  const fs::path d = temp_dir("mix-" + label);
  const nlohmann::json both = run(d, "both", apps, set);
  EXPECT_EQ(both["smmu"]["faults"]["total"].get<uint64_t>(), 0u) << label;
  for (const App& a : apps) {
    App alone = a;
    // Alone on cores from 0, with as many.
    const size_t n = a.entry["cores"].size();
    alone.entry["cores"] = cores(0, static_cast<unsigned>(n));
    alone.entry.erase("name");  // alone, it is the app's only instance
    alone.key = a.name;
    const nlohmann::json solo = run(d, "alone-" + a.key, {alone}, set);
    const double want = moved(alone, solo), got = moved(a, both);
    EXPECT_GT(want, 0) << label << ": " << a.name << " moves nothing even alone";
    EXPECT_GE(got, 0.95 * want) << label << ": " << a.name << " moved " << got << " beside the other, " << want << " alone";
    for (unsigned sid : a.sids)
      EXPECT_GT(both["smmu"]["tlb"]["by_sid"][std::to_string(sid)]["lookups"].get<uint64_t>(), 0u)
          << label << ": stream " << sid << " of " << a.name << " was not translated";
  }
  fs::remove_all(d);
}

// scenario.window: both apps measure the same interval, and an app still
// setting up when it opens says so.
TEST(CliMix, OneWindowForEveryApp) {
  const fs::path d = temp_dir("mix-window");
  auto doc = [&](double warmup_us) {
    nlohmann::json apps = nlohmann::json::array({nic(0).entry, nvme(16, 8).entry});
    return nlohmann::json{
        {"platform", std::string(SMMU_VP_SOURCE_DIR) + "/platform/platforms/base.json"},
        {"set", {{"platform.cpu.count", 24}}},
        {"scenario",
         {{"apps", apps}, {"window", {{"warmup_us", warmup_us}, {"duration_us", 500}}}, {"stop", {{"max_time_us", 100000}}}}}};
  };
  const std::string file = write_file(d, "w.json", doc(10000).dump());
  const Cmd r = sh("run " + file + " --out " + (d / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json s = read_json(d / "out" / "stats.json");
  EXPECT_EQ(s["run"]["window_ns"], nlohmann::json::array({10000000.0, 10500000.0}));
  EXPECT_NE(r.out.find("over 0.500 ms on 16 core(s)"), std::string::npos) << r.out;  // net_rx over the scenario's window
  EXPECT_NE(r.out.find("over 0.500 ms, 8 job(s)"), std::string::npos) << r.out;      // fio over the same
  EXPECT_GT(s["sw"]["net_rx"]["gbps"].get<double>(), 0);
  EXPECT_GT(s["sw"]["fio"]["iops"].get<double>(), 0);
  EXPECT_EQ(r.out.find("before the app was ready"), std::string::npos) << r.out;

  // Opened before the NIC's rings are filled: it says so.
  const std::string early = write_file(d, "early.json", doc(100).dump());
  const Cmd e = sh("run " + early + " --out " + (d / "early").string());
  EXPECT_EQ(e.exit_code, 0) << e.out;
  EXPECT_NE(e.out.find("net_rx: the scenario's window opened at 100 us, before the app was ready"), std::string::npos)
      << e.out;

  // A window past the time limit is refused, named.
  nlohmann::json late = doc(10000);
  late["scenario"]["stop"]["max_time_us"] = 5000;
  const Cmd bad = sh("run " + write_file(d, "bad.json", late.dump()) + " --out " + (d / "bad").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("/scenario/window"), std::string::npos) << bad.out;
  fs::remove_all(d);
}

TEST(CliMix, NicBesideFourNvmeDrives) { together_as_alone("nic-nvme", {nic(0), nvme(16, 8)}); }
TEST(CliMix, NicBesideTheCamera) { together_as_alone("nic-camera", {nic(0), camera(16)}); }
TEST(CliMix, NvmeBesideTheCamera) { together_as_alone("nvme-camera", {nvme(0, 4), camera(4)}); }
TEST(CliMix, NicBesideEightNvmeDrives) { together_as_alone("nic-8nvme", {nic(0), nvme(16, 8, 8)}); }
// Two instances of one app, each driving its own NIC with its own queues,
// domain and results (sw.net_rx, sw.net_rx_1). What the two share must not
// bound them: lazy (in strict mode one command queue serves both) and four
// times the base profile's DRAM bandwidth (two 100 Gbit/s NICs fill 85 % of
// its 25.6 GB/s, and the cores wait on the queueing).
TEST(CliMix, TwoNicsEachWithItsOwnNetRx) {
  App a = nic(0, 0, 8), b = nic(8, 1, 8);
  for (App* x : {&a, &b}) x->entry["params"]["unmap"] = "lazy";
  together_as_alone("nic-nic", {a, b}, {{"platform.dram.bandwidth_gbps", 102.4}});
}

}  // namespace
}  // namespace cli_test

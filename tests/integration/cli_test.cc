// The smmu-vp command line as a user runs it: exit codes, error messages,
// determinism, firmware loading, result files.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

struct Cmd {
  int exit_code;
  std::string out;  // stdout and stderr together
};

Cmd sh(const std::string& args) {
  const std::string cmd = std::string(SMMU_VP_CLI) + " " + args + " 2>&1";
  Cmd r{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("smmu-vp-cli-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

std::string write_file(const fs::path& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir / name) << text;
  return (dir / name).string();
}

const std::string kDefault = std::string(SMMU_VP_SOURCE_DIR) + "/platform/scenarios/default.json";

TEST(Cli, VersionAndHelp) {
  const Cmd v = sh("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("smmu-vp "), std::string::npos);
  EXPECT_EQ(v.out.find("Copyright"), std::string::npos) << "SystemC banner leaked: " << v.out;
  const Cmd h = sh("run --help");
  EXPECT_EQ(h.exit_code, 0);
  for (const char* opt : {"--set", "--out", "--trace", "--log-level", "--seed", "--firmware"})
    EXPECT_NE(h.out.find(opt), std::string::npos) << opt;
}

TEST(Cli, DefaultScenarioIsDeterministic) {
  const fs::path a = temp_dir("det-a"), b = temp_dir("det-b");
  ASSERT_EQ(sh("run " + kDefault + " --quiet --out " + a.string()).exit_code, 0);
  ASSERT_EQ(sh("run " + kDefault + " --quiet --out " + b.string()).exit_code, 0);
  nlohmann::json ja = read_json(a / "stats.json"), jb = read_json(b / "stats.json");
  ASSERT_TRUE(ja.contains("wallclock"));
  ja.erase("wallclock");
  jb.erase("wallclock");
  EXPECT_EQ(ja, jb);
  EXPECT_EQ(ja["run"]["status"], "completed");
  // A different seed is a different run of the same, valid, scenario.
  const fs::path c = temp_dir("det-c");
  ASSERT_EQ(sh("run " + kDefault + " --quiet --seed 99 --out " + c.string()).exit_code, 0);
  EXPECT_EQ(read_json(c / "stats.json")["run"]["seed"], 99);
}

TEST(Cli, SummaryAndResultFiles) {
  const fs::path d = temp_dir("files");
  const Cmd r = sh("run " + kDefault + " --quiet --trace --out " + d.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* s : {"status    completed", "dram:", "dma0:", "dma_copy.completion_latency_ns", "lock_wait_ns"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  const nlohmann::json stats = read_json(d / "stats.json");
  EXPECT_GT(stats["dram"]["bytes_read"].get<uint64_t>(), 0u);
  EXPECT_EQ(stats["dma0"]["transfer_latency_ns"]["count"], 128);
  const nlohmann::json cfg = read_json(d / "config.json");
  EXPECT_EQ(cfg["platform"]["dram"]["base"], 0x80000000ull);  // defaults and strings resolved
  const nlohmann::json trace = read_json(d / "trace.json");
  bool cpu_span = false, dma_span = false, irq = false;
  for (const auto& e : trace["traceEvents"]) {
    const std::string name = e.value("name", "");
    if (e["ph"] == "X" && name == "dma_copy") cpu_span = true;
    if (e["ph"] == "X" && name == "transfer") dma_span = true;
    if (e["ph"] == "i" && name.rfind("wired irq", 0) == 0) irq = true;
  }
  EXPECT_TRUE(cpu_span && dma_span && irq);
}

TEST(Cli, BadConfigNamesThePathAndExitsTwo) {
  const fs::path d = temp_dir("bad");
  const std::string unknown = write_file(d, "unknown.json",
      R"({"platform": "../../platform/platforms/base.json", "scenario": {"stopp": {}}})");
  std::string text = R"({"platform": {"dram": {"read_latency_ns": -5}}, "scenario": {}})";
  const std::string negative = write_file(d, "negative.json", text);
  const std::string overlap = write_file(d, "overlap.json",
      R"({"platform": {"devices": {"dma0": {"type": "dma", "base": "0x80001000", "irq": 32}}}, "scenario": {}})");
  const std::string broken = write_file(d, "broken.json", "{ not json");

  Cmd r = sh("run " + negative + " --out " + (d / "o").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("/platform/dram/read_latency_ns"), std::string::npos) << r.out;
  r = sh("run " + overlap + " --out " + (d / "o").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("overlaps"), std::string::npos) << r.out;
  r = sh("run " + broken + " --out " + (d / "o").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("not valid JSON"), std::string::npos) << r.out;
  r = sh("run " + unknown + " --out " + (d / "o").string());
  EXPECT_EQ(r.exit_code, 2);
  r = sh("run " + kDefault + " --set platform.cpu.count=0 --out " + (d / "o").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("/platform/cpu/count"), std::string::npos) << r.out;
  r = sh("run " + kDefault + " --set nonsense --out " + (d / "o").string());
  EXPECT_EQ(r.exit_code, 2);
  r = sh("run " + (d / "missing.json").string());
  EXPECT_EQ(r.exit_code, 2);
  // Nothing was run, so nothing was written.
  EXPECT_FALSE(fs::exists(d / "o" / "stats.json"));
}

TEST(Cli, FirmwareRunsOnEveryFreeCore) {
  const fs::path d = temp_dir("fw");
  const std::string scen = write_file(d, "fw.json", std::string(R"({"platform": ")") + SMMU_VP_SOURCE_DIR +
      R"(/platform/platforms/base.json", "scenario": {"apps": [{"app": "hello_firmware", "cores": [0, 1, 2, 3],
         "params": {"cores_expected": 4, "bytes": 8192}}]}})");
  const Cmd r = sh("run " + scen + " --quiet --firmware " + HELLO_FIRMWARE + " --out " + d.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json stats = read_json(d / "stats.json");
  EXPECT_EQ(stats["sw"]["hello_firmware"]["checked_in"], 4);
  EXPECT_EQ(stats["dma0"]["bytes"], 8192);

  // Without a scenario placing it, the firmware takes every core.
  const Cmd all = sh("run " + std::string(SMMU_VP_SOURCE_DIR) + "/platform/scenarios/firmware.json --quiet --firmware " +
                     HELLO_FIRMWARE + " --out " + (d / "all").string());
  ASSERT_EQ(all.exit_code, 0) << all.out;
  EXPECT_EQ(read_json(d / "all" / "stats.json")["sw"]["hello_firmware"]["checked_in"], 4);
}

TEST(Cli, SmmuConformanceFirmwarePasses) {
  const fs::path d = temp_dir("conformance");
  const Cmd r = sh("run " + std::string(SMMU_VP_SOURCE_DIR) + "/platform/scenarios/firmware.json --quiet --firmware " +
                   SMMU_CONFORMANCE_FIRMWARE + " --out " + d.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json stats = read_json(d / "stats.json");
  EXPECT_EQ(stats["sw"]["smmu_conformance"]["checks_passed"], 11);
  EXPECT_FALSE(stats["sw"]["smmu_conformance"].contains("checks_failed"));
  EXPECT_EQ(stats["smmu"]["faults"]["F_TRANSLATION"], 1);
  EXPECT_EQ(stats["smmu"]["faults"]["F_PERMISSION"], 1);
  EXPECT_EQ(stats["smmu"]["faults"]["C_BAD_STE"], 1);
}

TEST(Cli, BadFirmwareIsRejected) {
  const fs::path d = temp_dir("badfw");
  const std::string not_elf = write_file(d, "not_elf.so", "hello");
  Cmd r = sh("run " + kDefault + " --firmware " + not_elf);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("cannot load"), std::string::npos) << r.out;
  r = sh("run " + kDefault + " --firmware " + NO_ENTRY_FIRMWARE);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("smmu_vp_firmware"), std::string::npos) << r.out;
}

TEST(Cli, ConfigReferenceMatchesTheDocs) {
  const Cmd r = sh("config-reference");
  ASSERT_EQ(r.exit_code, 0);
  std::ifstream in(std::string(SMMU_VP_SOURCE_DIR) + "/docs/config.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string begin = "<!-- BEGIN GENERATED REFERENCE -->\n", end = "<!-- END GENERATED REFERENCE -->";
  const auto b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  EXPECT_EQ(doc.substr(b + begin.size(), e - b - begin.size()), r.out)
      << "docs/config.md is stale: run `make docs` to regenerate its reference section";
}

}  // namespace

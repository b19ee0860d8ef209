// A distributed SMMU run as a user runs it (docs/smmu.md, "Distributed
// SMMU"): the same scenario with and without TBUs. Translations go through
// the TBUs, every invalidation reaches each of them and costs the DTI round,
// and the summary says so.
#include "cli_support.h"

namespace cli_test {
namespace {

const std::string kFio = std::string(SMMU_VP_SOURCE_DIR) + "/platform/scenarios/seed001_fio_4nvme.json";
const std::string kFourTbus =
    R"('platform.smmu.tbus=[{"name":"t0","masters":["nvme0"]},{"name":"t1","masters":["nvme1"]},)"
    R"({"name":"t2","masters":["nvme2"]},{"name":"t3","masters":["nvme3","nic0","dma0","camera0"]}]')";

nlohmann::json run(const fs::path& out, const std::string& set, std::string* summary = nullptr) {
  const Cmd r = sh("run " + kFio + " --out " + out.string() + (set.empty() ? "" : " --set " + set));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  if (summary) *summary = r.out;
  return read_json(out / "stats.json");
}

TEST(CliTbu, TranslationsAndInvalidationsGoThroughEveryTbu) {
  const fs::path d = temp_dir("tbu");
  std::string summary;
  const nlohmann::json mono = run(d / "mono", "");
  const nlohmann::json dist = run(d / "dist", kFourTbus, &summary);
  const nlohmann::json& tbus = dist["smmu"]["tbu"];
  ASSERT_EQ(tbus.size(), 4u);
  const nlohmann::json& executed = dist["smmu"]["cmdq"]["executed"];
  uint64_t invalidations = 0;
  for (const auto& [op, n] : executed.items())
    if (op.rfind("CMD_TLBI_", 0) == 0 || op.rfind("CMD_CFGI_", 0) == 0) invalidations += n.get<uint64_t>();
  ASSERT_GT(invalidations, 0u);
  uint64_t translations = 0;
  for (const auto& [name, t] : tbus.items()) {
    translations += t["translations"].get<uint64_t>();
    EXPECT_EQ(t["invalidations"].get<uint64_t>(), invalidations) << name;  // a broadcast: every TBU, every one
    EXPECT_GT(t["syncs"].get<uint64_t>(), 0u) << name;
  }
  EXPECT_EQ(translations, dist["smmu"]["translations"].get<uint64_t>());
  EXPECT_GT(tbus["t0"]["hits"].get<uint64_t>(), 0u);
  EXPECT_GT(tbus["t0"]["misses"].get<uint64_t>(), 0u);
  // The monolithic run has none of it.
  EXPECT_FALSE(mono["smmu"].contains("tbu"));
  // Each invalidation now holds its lane for four messages and the last
  // acknowledgement (4 x 1 ns + 2 x 8 ns): over every command, at least
  // that share of 20 ns more on average.
  const double commands = dist["smmu"]["cmdq"]["command_latency_ns"]["count"].get<double>();
  EXPECT_GE(dist["smmu"]["cmdq"]["command_latency_ns"]["mean"].get<double>(),
            mono["smmu"]["cmdq"]["command_latency_ns"]["mean"].get<double>() + 20.0 * invalidations / commands - 1e-9);
  EXPECT_NE(summary.find("4 TBUs: "), std::string::npos) << summary;
  EXPECT_NE(summary.find("bound\n  cores of fio"), std::string::npos) << summary;
  fs::remove_all(d);
}

TEST(CliTbu, ADeviceBehindNoTbuIsAConfigurationError) {
  const fs::path d = temp_dir("tbu-bad");
  const Cmd r = sh("run " + kFio + " --out " + d.string() +
                   R"( --set 'platform.smmu.tbus=[{"name":"t0","masters":["nvme0"]}]')");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("/platform/smmu/tbus"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("is behind no TBU"), std::string::npos) << r.out;
  fs::remove_all(d);
}

// The server scenario's architect's table, cut to the rows that show each
// bound: the drives bound passthrough, a monolithic SMMU's 16 translation
// slots bound lazy, and strict cores spend most of their time in the
// command queue. The bound column names each.
TEST(CliServer, NvmeGen5SweepNamesWhatBoundsEachPolicy) {
  const fs::path d = temp_dir("server-nvme");
  const std::string scenario = std::string(SMMU_VP_SOURCE_DIR) + "/platform/scenarios/server_nvme_gen5.json";
  nlohmann::json doc = read_json(scenario);
  doc["platform"] = std::string(SMMU_VP_SOURCE_DIR) + "/platform/platforms/neoverse_v2_server.json";
  auto& axes = doc["sweep"]["axes"];
  axes[1]["values"].erase("mono 64 slots");
  axes[1]["values"].erase("1");
  axes[1]["values"].erase("10");
  axes[2]["values"].erase("64");
  axes[0]["values"].erase("strict ecmdq");
  const std::string file = write_file(d, "server.json", doc.dump());
  const Cmd r = sh("sweep " + file + " --jobs 2 --out " + (d / "out").string(), false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("bound"), std::string::npos) << r.out;
  auto row_ends_with = [&](const std::vector<std::string>& start, const std::string& bound) {
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      const std::vector<std::string> w = words(line);
      if (w.size() >= start.size() && std::equal(start.begin(), start.end(), w.begin()))
        return line.find(bound) != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(row_ends_with({"passthrough", "4"}, "media slots")) << r.out;
  EXPECT_TRUE(row_ends_with({"lazy", "mono"}, "smmu translation slots")) << r.out;
  EXPECT_TRUE(row_ends_with({"strict", "4"}, "cores of fio 100.0 %")) << r.out;
  const nlohmann::json strict = read_json(d / "out" / "strict__4__2048" / "stats.json");
  EXPECT_GT(strict["run"]["resource_use"]["smmu command queue (cores of fio in it)"].get<double>(), 0.5);
  EXPECT_GT(strict["sw"]["fio"]["smmu_cmdq_ps"].get<double>(), 0);
  fs::remove_all(d);
}

// Cores at server counts: the platform takes up to 256, and cores beyond 64
// contend for the command queue as the first 64 do (their cache lines move
// between them: CoreSet).
TEST(CliServer, TwoHundredFiftySixCores) {
  const fs::path d = temp_dir("cores256");
  std::string cores;
  for (unsigned c = 192; c < 256; ++c) cores += (c > 192 ? "," : "") + std::to_string(c);
  const std::string file = write_file(
      d, "s.json",
      std::string(R"({"platform": ")") + SMMU_VP_SOURCE_DIR + R"(/platform/platforms/base.json",
        "set": {"platform.cpu.count": 256},
        "scenario": {"apps": [{"app": "smmu_stress", "cores": [)" + cores + R"(], "params": {"iterations": 5, "leader_cpu": 192}}]}})");
  const Cmd r = sh("run " + file + " --quiet --strict --out " + (d / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json s = read_json(d / "out" / "stats.json");
  EXPECT_EQ(s["sw"]["smmu_stress"]["invalidations"].get<uint64_t>(), 64u * 5);
  EXPECT_GT(s["cpus"]["cpu255"]["cacheline_transfers"].get<uint64_t>(), 0u);
  EXPECT_EQ(s["cpus"]["cpu0"]["busy_ns"].get<double>(), 0.0);
  fs::remove_all(d);
}

}  // namespace
}  // namespace cli_test

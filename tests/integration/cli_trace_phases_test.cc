// Phases of a trace from the command line (docs/traces.md, "Phases"): trace
// stats per phase, and a replay's results per phase in stats.json and the
// summary, following the phases' content.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

using namespace cli_test;

namespace {

// `n` buffers of `pages` 4 KiB pages from t_ns on: map, one 64-byte access to
// every page, unmap; 10 us apart.
std::string buffers(uint64_t& t_ns, unsigned n, unsigned pages) {
  std::string s;
  for (unsigned i = 0; i < n; ++i, t_ns += 10000) {
    const uint64_t iova = 0x100000 + i * 0x10000ull, size = pages * 4096ull;
    s += std::to_string(t_ns) + " map cpu=0 dev=d0 sid=1 dir=from_device iova=" + std::to_string(iova) +
         " pa=" + std::to_string(0x80000000ull + iova) + " size=" + std::to_string(size) + "\n";
    for (unsigned p = 0; p < pages; ++p)
      s += std::to_string(t_ns + 100 + p) + " access dev=d0 sid=1 rw=w iova=" + std::to_string(iova + p * 4096ull) +
           " size=64\n";
    s += std::to_string(t_ns + 5000) + " unmap cpu=0 dev=d0 sid=1 dir=from_device iova=" + std::to_string(iova) +
         " size=" + std::to_string(size) + "\n";
  }
  return s;
}

// Phase "a" with `a_bufs` buffers of `a_pages` pages, then phase "b".
std::string two_phases(unsigned a_bufs, unsigned a_pages, unsigned b_bufs, unsigned b_pages, bool markers = true) {
  uint64_t t = 1000;
  std::string s = "smmu-vp-trace 1 ns\n";
  if (markers) s += "1000 mark task=sh text=phase%20a\n";
  s += buffers(t, a_bufs, a_pages);
  if (markers) s += std::to_string(t) + " mark task=sh text=phase%20b\n";
  s += buffers(t, b_bufs, b_pages);
  return s;
}

std::string replay_scenario(const fs::path& dir, const std::string& trace) {
  return write_file(dir, "replay.json", std::string(R"({"platform": ")") + SMMU_VP_SOURCE_DIR +
      R"(/platform/platforms/base.json",
    "set": {"platform.devices.player0": {"type": "trace_player", "base": "0x10400000", "stream_id": 96, "irq": 0,
                                         "trace": ")" + trace + R"("}},
    "scenario": {"name": "replay", "apps": [{"app": "trace_replay", "cores": [0], "params": {"timing": 1}}],
                 "stop": {"max_time_us": 200000}}})");
}

// stats.json of a replay of `text`.
nlohmann::json replay(const fs::path& d, const std::string& name, const std::string& text, std::string* out = nullptr) {
  const std::string trace = write_file(d, name + ".trace", text);
  const Cmd r = sh("run " + replay_scenario(d, trace) + " --out " + (d / name).string());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  if (out) *out = r.out;
  return read_json(d / name / "stats.json");
}

uint64_t num(const nlohmann::json& phase, const std::string& key) { return phase.at(key).get<uint64_t>(); }

}  // namespace

TEST(CliTracePhases, StatsReportsEachPhase) {
  const fs::path d = temp_dir("phases-stats");
  const std::string trace = write_file(d, "t.trace",
                                       "smmu-vp-trace 1 ns\n"
                                       "10 map iova=0x1000 size=4096\n"
                                       "20 mark text=phase%20warm%20up\n"
                                       "30 map iova=0x2000 size=8192\n"
                                       "35 mark text=just%20a%20note\n"
                                       "40 unmap iova=0x2000 size=8192\n"
                                       "1000000050 mark text=phase%20steady\n"
                                       "1000000060 map_sg iova=0x10000 size=65536\n");
  const Cmd c = sh("trace stats " + trace);
  ASSERT_EQ(c.exit_code, 0) << c.out;
  EXPECT_NE(c.out.find("phases (3;"), std::string::npos) << c.out;
  // name, marker line, start, span, records, bytes mapped, unmapped
  EXPECT_TRUE(has_row(c.out, {"(before", "first", "phase)", "-", "0.000000010", "0.000000000", "1", "4096", "0"})) << c.out;
  EXPECT_TRUE(has_row(c.out, {"warm", "up", "3", "0.000000020", "0.000000020", "3", "8192", "8192"})) << c.out;
  EXPECT_TRUE(has_row(c.out, {"steady", "7", "1.000000050", "0.000000010", "1", "65536", "0"})) << c.out;
  EXPECT_TRUE(has_row(c.out, {"warm", "up:", "map", "1,", "unmap", "1,", "mark", "1"})) << c.out;
  EXPECT_TRUE(has_row(c.out, {"steady:", "map_sg", "1"})) << c.out;
  EXPECT_TRUE(has_row(c.out, {"mark", "3"})) << c.out;  // every marker is a record

  // No phase marker: no phase table.
  const std::string plain = write_file(d, "p.trace", "smmu-vp-trace 1 ns\n10 mark text=hello\n20 map iova=0x1000 size=4096\n");
  const Cmd p = sh("trace stats " + plain);
  ASSERT_EQ(p.exit_code, 0) << p.out;
  EXPECT_EQ(p.out.find("  phases ("), std::string::npos) << p.out;

  // A malformed marker names the file and line.
  const std::string bad = write_file(d, "b.trace", "smmu-vp-trace 1 ns\n10 mark text=a%zz\n");
  const Cmd b = sh("trace stats " + bad);
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.out.find("b.trace:2: field 'text': bad percent escape"), std::string::npos) << b.out;
  fs::remove_all(d);
}

// The replay reports per phase what each phase did: moving the content from
// one phase to the other moves the numbers with it.
TEST(CliTracePhases, ReplayReportsEachPhaseAndFollowsItsContent) {
  const fs::path d = temp_dir("phases-replay");
  std::string out;
  const nlohmann::json st = replay(d, "ab", two_phases(20, 1, 10, 16), &out);
  const nlohmann::json& ph = st.at("player0").at("phases");
  ASSERT_EQ(ph.size(), 3u);
  EXPECT_EQ(ph[0].at("name"), "(before first phase)");
  EXPECT_EQ(num(ph[0], "records"), 0u);
  EXPECT_EQ(num(ph[0], "calls"), 0u);
  EXPECT_EQ(ph[1].at("name"), "a");
  EXPECT_EQ(num(ph[1], "calls"), 40u);
  EXPECT_EQ(num(ph[1].at("map_ns"), "count"), 20u);
  EXPECT_EQ(num(ph[1].at("unmap_ns"), "count"), 20u);
  EXPECT_EQ(num(ph[1], "accesses"), 20u);
  EXPECT_EQ(num(ph[1], "tlb_lookups"), 20u);
  EXPECT_EQ(ph[2].at("name"), "b");
  EXPECT_EQ(num(ph[2], "calls"), 20u);
  EXPECT_EQ(num(ph[2].at("map_ns"), "count"), 10u);
  EXPECT_EQ(num(ph[2], "accesses"), 160u);
  EXPECT_EQ(num(ph[2], "tlb_lookups"), 160u);
  EXPECT_EQ(num(ph[1], "trace_start_ns"), 0u);
  EXPECT_EQ(num(ph[2], "trace_start_ns"), 200000u);
  // The windows follow each other, and the TLB's lookups are all in one.
  EXPECT_GT(ph[2].at("replay_start_ns").get<double>(), ph[1].at("replay_start_ns").get<double>());
  EXPECT_DOUBLE_EQ(ph[1].at("replay_start_ns").get<double>() + ph[1].at("replay_window_ns").get<double>(),
                   ph[2].at("replay_start_ns").get<double>());
  EXPECT_EQ(num(ph[1], "tlb_lookups") + num(ph[2], "tlb_lookups"), u64(st, {"smmu", "tlb", "lookups"}));
  // The same in the registry's form, by index.
  EXPECT_EQ(u64(st, {"sw", "trace_replay", "phase", "1", "calls"}), 40u);
  EXPECT_EQ(u64(st, {"player0", "phase", "2", "accesses"}), 160u);
  // The summary's tables: the leading phase held nothing and is left out.
  EXPECT_TRUE(has_row(out, {"a", "40", "20", "20"})) << out;
  EXPECT_TRUE(has_row(out, {"b", "20", "160", "160"})) << out;
  EXPECT_TRUE(has_row(out, {"b", "map", "10"})) << out;
  EXPECT_TRUE(has_row(out, {"a", "unmap", "20"})) << out;
  EXPECT_EQ(out.find("(before first phase)"), std::string::npos) << out;

  // The big buffers in phase a and the small ones in b: the numbers move.
  const nlohmann::json sw = replay(d, "ba", two_phases(10, 16, 20, 1));
  const nlohmann::json& ph2 = sw.at("player0").at("phases");
  ASSERT_EQ(ph2.size(), 3u);
  EXPECT_EQ(num(ph2[1], "calls"), 20u);
  EXPECT_EQ(num(ph2[1], "accesses"), 160u);
  EXPECT_EQ(num(ph2[1], "tlb_lookups"), 160u);
  EXPECT_EQ(num(ph2[2], "calls"), 40u);
  EXPECT_EQ(num(ph2[2], "accesses"), 20u);
  EXPECT_EQ(num(ph2[2], "tlb_lookups"), 20u);
  fs::remove_all(d);
}

// Without phase markers a replay's results keep their shape: no per-phase
// stats anywhere (the shipped runs' goldens do not move).
TEST(CliTracePhases, ReplayWithoutPhasesHasNoPerPhaseResults) {
  const fs::path d = temp_dir("phases-none");
  std::string out;
  const nlohmann::json st = replay(d, "plain", two_phases(20, 1, 10, 16, false), &out);
  EXPECT_FALSE(st.at("player0").contains("phases"));
  EXPECT_FALSE(st.at("player0").contains("phase"));
  EXPECT_FALSE(st.at("sw").at("trace_replay").contains("phase"));
  EXPECT_EQ(u64(st, {"sw", "trace_replay", "calls"}), 60u);
  EXPECT_EQ(out.find("per phase"), std::string::npos) << out;
  fs::remove_all(d);
}

// The Linux 6.12 capture replayed as fast as it goes on two cores: its six
// phases, each with the calls the capture made in it.
TEST(CliTracePhases, Linux612CaptureReplaysPerPhase) {
  const fs::path d = temp_dir("phases-612");
  const fs::path trace = d / "k.trace";
  ASSERT_EQ(sh("trace import " + std::string(SMMU_VP_SOURCE_DIR) + "/traces/samples/ftrace_linux-6.12_strict.txt.gz -o " +
               trace.string() + " --quiet")
                .exit_code,
            0);
  const Cmd r = sh("run " + kScenarios + "trace_replay.json --set platform.devices.player0.trace=" + trace.string() +
                   " --set 'scenario.apps.0.cores=[0,1]' --set scenario.apps.0.params.timing=1 --out " +
                   (d / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json st = read_json(d / "out" / "stats.json");
  const nlohmann::json& ph = st.at("player0").at("phases");
  ASSERT_EQ(ph.size(), 7u);
  const std::vector<std::string> names = {"(before first phase)", "nvme-read-4k", "nvme-read-128k", "blk-write-64k",
                                          "blk-read-4k", "net-ping", "end"};
  // DMA-API calls (maps and unmaps; the iommu_map/unmap under them are implied).
  const std::vector<uint64_t> calls = {360, 1024, 128, 1152, 2048, 164, 0};
  uint64_t lookups = 0, accesses = 0;
  for (size_t i = 0; i < ph.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(ph[i].at("name"), names[i]);
    EXPECT_EQ(num(ph[i], "calls"), calls[i]);
    lookups += num(ph[i], "tlb_lookups");
    accesses += num(ph[i], "accesses");
  }
  EXPECT_EQ(num(ph[1].at("map_ns"), "count"), 512u);
  EXPECT_EQ(num(ph[2].at("map_sg_ns"), "count"), 64u);
  EXPECT_FALSE(ph[2].contains("map_ns"));
  EXPECT_EQ(accesses, u64(st, {"player0", "accesses"}));
  EXPECT_EQ(lookups, u64(st, {"smmu", "tlb", "lookups"}));
  // Each phase's synthesized accesses are translated in its own window.
  for (size_t i = 1; i < 6; ++i) EXPECT_EQ(num(ph[i], "tlb_lookups"), num(ph[i], "accesses")) << names[i];
  fs::remove_all(d);
}

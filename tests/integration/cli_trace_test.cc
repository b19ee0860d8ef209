// The trace workflow from the command line (docs/traces.md): importing Linux
// ftrace, recording a run, replaying a trace on the platform.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "dmatrace/dma_trace.h"

using namespace cli_test;

// `smmu-vp trace import` / `trace stats` (traces/README.md, "Importing Linux ftrace").
namespace {

const std::string kFtraceSample = std::string(SMMU_VP_SOURCE_DIR) + "/traces/samples/ftrace_nvme_fio.txt";

std::vector<smmu_vp::dmatrace::Record> read_trace(const fs::path& p) {
  smmu_vp::dmatrace::TraceReader r(p.string());
  std::vector<smmu_vp::dmatrace::Record> v;
  smmu_vp::dmatrace::Record rec;
  while (r.next(rec)) v.push_back(rec);
  return v;
}

}  // namespace

TEST(Cli, TraceImportSample) {
  const fs::path d = temp_dir("trace-import");
  const fs::path out = d / "nvme.trace";
  const Cmd c = sh("trace import " + kFtraceSample + " -o " + out.string() + " --quiet");
  ASSERT_EQ(c.exit_code, 0) << c.out;
  for (const char* s : {"records written", "dma_map_page", "dma_unmap_sg", "0000:01:00.0", "0000:02:00.0", "lines/s"})
    EXPECT_NE(c.out.find(s), std::string::npos) << s << "\n" << c.out;
  EXPECT_TRUE(has_row(c.out, {"lines", "400"})) << c.out;
  EXPECT_TRUE(has_row(c.out, {"records", "written", "388"})) << c.out;
  EXPECT_TRUE(has_row(c.out, {"dma_map_sg", "24"})) << c.out;
  EXPECT_TRUE(has_row(c.out, {"0000:02:00.0", "2"})) << c.out;
  const auto recs = read_trace(out);
  ASSERT_EQ(recs.size(), 388u);
  EXPECT_EQ(recs.front().dev, "0000:01:00.0");
  EXPECT_EQ(recs.front().sid, 1u);
  EXPECT_FALSE(fs::exists(d / "nvme.trace.tmp"));
}

// A 6.1-era capture: iommu:map/unmap name no device. The import recovers
// the domain (the device attached before the maps takes it) and says how,
// in its summary and in the trace, where `trace stats` finds it.
TEST(Cli, TraceImportRecoversTheDomainsOfIommuEvents) {
  const fs::path d = temp_dir("trace-recover");
  const fs::path out = d / "old.trace";
  const Cmd c = sh("trace import " + std::string(SMMU_VP_SOURCE_DIR) + "/traces/samples/ftrace_iommu_old.txt -o " +
                   out.string() + " --quiet");
  ASSERT_EQ(c.exit_code, 0) << c.out;
  EXPECT_NE(c.out.find("domain recovery: 32 iommu maps without a device assigned to 1 domains"), std::string::npos)
      << c.out;
  for (const auto& r : read_trace(out)) {
    if (r.op == smmu_vp::dmatrace::Op::kIommuMap) { EXPECT_EQ(r.dev, "0000:03:00.0"); }
  }
  const Cmd st = sh("trace stats " + out.string());
  EXPECT_NE(st.out.find("domain recovery: 32 iommu maps"), std::string::npos) << st.out;
  const Cmd flat = sh("trace import " + std::string(SMMU_VP_SOURCE_DIR) + "/traces/samples/ftrace_iommu_old.txt -o " +
                      out.string() + " --quiet --no-recover-domains");
  ASSERT_EQ(flat.exit_code, 0) << flat.out;
  EXPECT_EQ(flat.out.find("domain recovery"), std::string::npos) << flat.out;
  for (const auto& r : read_trace(out)) {
    if (r.op == smmu_vp::dmatrace::Op::kIommuMap) { EXPECT_EQ(r.sid, 0u); }
  }
}

TEST(Cli, TraceImportDeviceSids) {
  const fs::path d = temp_dir("trace-sids");
  const fs::path out = d / "nvme.trace.gz";
  const Cmd c = sh("trace import " + kFtraceSample + " -o " + out.string() +
                   " --sid 4 --device-sid 0000:02:00.0=9 --device-sid=0000:01:00.0=0x10 --quiet");
  ASSERT_EQ(c.exit_code, 0) << c.out;
  EXPECT_TRUE(has_row(c.out, {"0000:02:00.0", "9", "(--device-sid)"})) << c.out;
  for (const auto& r : read_trace(out)) EXPECT_EQ(r.sid, r.dev == "0000:02:00.0" ? 9u : 16u) << r.dev;
  const Cmd bad = sh("trace import " + kFtraceSample + " -o " + out.string() + " --device-sid 0000:02:00.0");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("NAME=SID"), std::string::npos) << bad.out;
  const Cmd big = sh("trace import " + kFtraceSample + " -o " + out.string() + " --device-sid nic=4294967296");
  EXPECT_EQ(big.exit_code, 2) << big.out;
}

TEST(Cli, TraceImportMalformedInputExitsTwoNamingTheLine) {
  const fs::path d = temp_dir("trace-bad");
  const std::string in = write_file(d, "bad.txt",
                                    "# tracer: nop\n"
                                    "  fio-1 [000] ..... 1.000001: dma_unmap_page: nvme0 dir=TO_DEVICE dma_addr=1000 size=64 attrs=\n"
                                    "  fio-1 [000] ..... 1.000002: dma_unmap_page: nvme0 dir=TO_DEVICE dma_addr=2000 size=6x4 attrs=\n");
  const fs::path out = d / "out.trace";
  const Cmd c = sh("trace import " + in + " -o " + out.string());
  EXPECT_EQ(c.exit_code, 2) << c.out;
  EXPECT_NE(c.out.find("bad.txt:3"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("field 'size'"), std::string::npos) << c.out;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(d / "out.trace.tmp"));

  const Cmd skip = sh("trace import " + in + " -o " + out.string() + " --skip-malformed --quiet");
  ASSERT_EQ(skip.exit_code, 0) << skip.out;
  EXPECT_TRUE(has_row(skip.out, {"malformed", "skipped", "1"})) << skip.out;
  EXPECT_EQ(read_trace(out).size(), 1u);

  const Cmd missing = sh("trace import " + (d / "nope.txt").string() + " -o " + out.string());
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_NE(missing.out.find("nope.txt"), std::string::npos) << missing.out;
  const Cmd unwritable = sh("trace import " + in + " -o " + (d / "no" / "dir" / "x.trace").string() + " --skip-malformed");
  EXPECT_EQ(unwritable.exit_code, 2) << unwritable.out;
  const Cmd same = sh("trace import " + out.string() + " -o " + out.string());
  EXPECT_EQ(same.exit_code, 2) << same.out;
  EXPECT_EQ(sh("trace").exit_code, 2);
}

TEST(Cli, TraceStats) {
  const fs::path d = temp_dir("trace-stats");
  const fs::path out = d / "nvme.trace";
  ASSERT_EQ(sh("trace import " + kFtraceSample + " -o " + out.string() + " --quiet").exit_code, 0);
  const Cmd c = sh("trace stats " + out.string());
  ASSERT_EQ(c.exit_code, 0) << c.out;
  EXPECT_NE(c.out.find("388 records"), std::string::npos) << c.out;
  EXPECT_TRUE(has_row(c.out, {"map_sg", "24", std::to_string(24 * 65536)})) << c.out;
  EXPECT_TRUE(has_row(c.out, {"sync_for_cpu", "70"})) << c.out;
  EXPECT_TRUE(has_row(c.out, {"1", "168", "0000:01:00.0"})) << c.out;
  EXPECT_TRUE(has_row(c.out, {"2", "220", "0000:02:00.0"})) << c.out;
  EXPECT_NE(c.out.find("span 0.00"), std::string::npos) << c.out;

  const std::string bad = write_file(d, "bad.trace", "smmu-vp-trace 1 ns\n10 map iova=0x1000 size=4096\n20 map iova=0x2000 size=lots\n");
  const Cmd b = sh("trace stats " + bad);
  EXPECT_EQ(b.exit_code, 2) << b.out;
  EXPECT_NE(b.out.find("bad.trace:3"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("size"), std::string::npos) << b.out;
  EXPECT_EQ(sh("trace stats " + (d / "nope.trace").string()).exit_code, 2);
}

// ---- Recording and replay.

namespace {

// A scenario replaying `trace` with trace_replay on `cores` and the given
// app parameters (JSON members, e.g. R"("unmap": 1)").
// `profile` and `extra_set` (entries of the "set" block, each followed by a
// comma) name the machine, which should be the recording's for a replay
// that must issue the same commands in the same order.
std::string replay_scenario(const fs::path& dir, const std::string& trace, const std::string& cores,
                            const std::string& params, const std::string& profile = "base.json",
                            const std::string& extra_set = "") {
  return write_file(dir, "replay.json", std::string(R"({"platform": ")") + SMMU_VP_SOURCE_DIR +
      "/platform/platforms/" + profile + R"(",
    "set": {)" + extra_set + R"("platform.devices.player0": {"type": "trace_player", "base": "0x10400000", "stream_id": 96, "irq": 0,
                                         "trace": ")" + trace + R"("}},
    "scenario": {"name": "replay", "apps": [{"app": "trace_replay", "cores": )" + cores + R"(, "params": {)" +
      params + R"(}}], "stop": {"max_time_us": 200000}}})");
}

// What a replay must reproduce, in order: the SMMU commands and the
// translated accesses (their times and the device names aside).
std::vector<std::string> commands_and_accesses(const fs::path& trace) {
  std::vector<std::string> v;
  for (auto r : read_trace(trace)) {
    if (r.op != smmu_vp::dmatrace::Op::kCommand && r.op != smmu_vp::dmatrace::Op::kAccess) continue;
    r.time_ns = 0;
    r.dev.clear();
    v.push_back(smmu_vp::dmatrace::format_record(r));
  }
  return v;
}

// One NIC receive queue on one core, strict, the v5.3 policies: a few
// hundred frames mapped and unmapped one by one, on the scenario's machine
// (one core of the Kunpeng 920 profile), which a replay of it uses too.
const std::string kNicOneCore = kScenarios + "seed001_iova_1g.json --set scenario.apps.0.params.live_iovas=0" +
                                " --set scenario.apps.0.params.warmup_us=1000 --set scenario.apps.0.params.duration_us=2000";
const std::string kNicOneCoreParams =
    R"("unmap": 0, "cmdq": 0, "sync": 0, "iova_cache": 0, "rcache": 0, "dma32_first": 0)";


// A record far in the future: its scaled time once overflowed, wrapped round
// to the present, and was replayed at once (issue 31). It now waits, and the
// run ends at its time limit, incomplete.
TEST(CliTrace, ARecordFarInTheFutureWaitsInsteadOfWrappingRound) {
  const fs::path d = temp_dir("far-future");
  const std::string trace = write_file(d, "far.trace",
                                       "smmu-vp-trace 1 ns\n"
                                       "1000 map cpu=0 dev=nvme0 sid=48 dir=to_device iova=0xfffff000 pa=0x9000b000 size=4096\n"
                                       "185000000000001000 unmap cpu=0 dev=nvme0 sid=48 dir=to_device iova=0xfffff000 size=4096\n");
  const std::string scen = replay_scenario(d, trace, "[0]", R"("timing": 0)");
  const Cmd r = sh("run " + scen + " --quiet --out " + (d / "out").string());
  EXPECT_EQ(r.exit_code, 4) << r.out;  // the time limit, 200 ms: the unmap is not due before it
  const nlohmann::json st = read_json(d / "out" / "stats.json");
  EXPECT_EQ(st["run"]["status"], "time-limit") << st["run"].dump();
  fs::remove_all(d);
}

}  // namespace

TEST(CliTrace, RecordedRunReplaysToTheSameCommandsAndTranslations) {
  const fs::path d = temp_dir("trace-roundtrip");
  const Cmd rec = sh("run " + kNicOneCore + " --quiet --out " + (d / "rec").string() + " --record-trace " +
                     (d / "nic.trace.gz").string());
  ASSERT_EQ(rec.exit_code, 0) << rec.out;
  EXPECT_NE(rec.out.find("records in"), std::string::npos) << rec.out;
  const auto original = read_trace(d / "nic.trace.gz");
  size_t maps = 0, unmaps = 0, accesses = 0;
  for (const auto& r : original) {
    maps += r.op == smmu_vp::dmatrace::Op::kMap;
    unmaps += r.op == smmu_vp::dmatrace::Op::kUnmap;
    accesses += r.op == smmu_vp::dmatrace::Op::kAccess;
  }
  EXPECT_GT(maps, 200u);
  EXPECT_GT(unmaps, 200u);
  EXPECT_GT(accesses, maps);
  // Recording changes nothing in the run.
  ASSERT_EQ(sh("run " + kNicOneCore + " --quiet --out " + (d / "plain").string()).exit_code, 0);
  nlohmann::json recorded = read_json(d / "rec" / "stats.json"), plain = read_json(d / "plain" / "stats.json");
  recorded.erase("wallclock");
  plain.erase("wallclock");
  EXPECT_EQ(recorded, plain);

  const std::string scenario = replay_scenario(d, (d / "nic.trace.gz").string(), "[0]", kNicOneCoreParams,
                                               "kunpeng920.json", R"("platform.cpu.count": 1, )");
  const Cmd rep = sh("run " + scenario + " --quiet --out " + (d / "rep").string() + " --record-trace " +
                     (d / "replayed.trace").string());
  ASSERT_EQ(rep.exit_code, 0) << rep.out;
  const auto want = commands_and_accesses(d / "nic.trace.gz");
  const auto got = commands_and_accesses(d / "replayed.trace");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "record " << i;

  // The replay translated every access, through the same StreamID.
  const nlohmann::json st = read_json(d / "rep" / "stats.json");
  EXPECT_EQ(u64(st, {"player0", "accesses"}), accesses);
  EXPECT_EQ(u64(st, {"smmu", "tlb", "by_sid", "32", "lookups"}), accesses);
  EXPECT_GT(u64(st, {"smmu", "ptw", "walks", "s1"}), 0u);
  EXPECT_EQ(u64(st, {"player0", "access_errors"}), 0u);
  EXPECT_EQ(st["sw"]["trace_replay"]["map_ns"]["count"].get<uint64_t>(), maps);
}

TEST(CliTrace, ReplayIsDeterministic) {
  const fs::path d = temp_dir("trace-determinism");
  const std::string trace = std::string(SMMU_VP_SOURCE_DIR) + "/traces/samples/nvme_fio_4k.trace.gz";
  const std::string scenario = replay_scenario(d, trace, "[0, 1]", R"("unmap": 1)");
  ASSERT_EQ(sh("run " + scenario + " --quiet --out " + (d / "a").string()).exit_code, 0);
  ASSERT_EQ(sh("run " + scenario + " --quiet --out " + (d / "b").string()).exit_code, 0);
  nlohmann::json a = read_json(d / "a" / "stats.json"), b = read_json(d / "b" / "stats.json");
  a.erase("wallclock");
  b.erase("wallclock");
  EXPECT_EQ(a, b);
  // Lazy mode: the flush queue's windows are closed and reported.
  EXPECT_GT(a["sw"]["trace_replay"]["lazy_window_mean_ns"].get<double>(), 0.0);
  EXPECT_GT(u64(a, {"sw", "trace_replay", "calls"}), 1000u);
}

TEST(CliTrace, ShippedReplaySweepComparesTlbSizesAndPolicies) {
  auto at = sweep_stats("trace_replay", "", {"policy", "tlb"});
  ASSERT_EQ(at.size(), 6u);
  const char* policies[] = {"strict-v5.3", "strict-v5.4", "lazy-v5.4"};
  for (const auto& [point, st] : at) {
    EXPECT_GT(u64(st, {"player0", "accesses"}), 10000u) << point;
    EXPECT_EQ(u64(st, {"smmu", "tlb", "by_sid", "32", "lookups"}), u64(st, {"player0", "accesses"})) << point;
    EXPECT_EQ(u64(st, {"player0", "access_errors"}), 0u) << point;
    EXPECT_EQ(u64(st, {"sw", "trace_replay", "skipped_unmatched"}), 0u) << point;
  }
  auto p50 = [&](const std::string& point, const char* stat) {
    return at.at(point)["sw"]["trace_replay"][stat]["p50"].get<double>();
  };
  for (const char* p : policies) {
    // The same accesses miss more in the smaller TLB, and wait for it.
    const std::string small = std::string(p) + "/16", big = std::string(p) + "/256";
    EXPECT_GT(u64(at.at(small), {"smmu", "ptw", "walks", "s1"}), u64(at.at(big), {"smmu", "ptw", "walks", "s1"})) << p;
    EXPECT_GT(at.at(small)["player0"]["access_latency_ns"]["p50"].get<double>(),
              at.at(big)["player0"]["access_latency_ns"]["p50"].get<double>()) << p;
  }
  // Unmap: the spinlock queue (v5.3) costs more than the lock-free one, and
  // lazy mode issues no invalidation per unmap.
  EXPECT_GT(p50("strict-v5.3/256", "unmap_ns"), 1.5 * p50("strict-v5.4/256", "unmap_ns"));
  EXPECT_GT(p50("strict-v5.4/256", "unmap_ns"), 3 * p50("lazy-v5.4/256", "unmap_ns"));
  EXPECT_GT(u64(at.at("strict-v5.4/256"), {"smmu", "cmdq", "syncs"}),
            100 * u64(at.at("lazy-v5.4/256"), {"smmu", "cmdq", "syncs"}));
  EXPECT_GT(at.at("lazy-v5.4/256")["sw"]["trace_replay"]["lazy_window_mean_ns"].get<double>(), 0.0);
}

TEST(CliTrace, ImportedFtraceReplaysThroughTheSmmu) {
  const fs::path d = temp_dir("trace-ftrace-replay");
  const fs::path trace = d / "fio.trace";
  ASSERT_EQ(sh("trace import " + kFtraceSample + " -o " + trace.string() + " --quiet").exit_code, 0);
  const Cmd r = sh("run " + replay_scenario(d, trace.string(), "[0, 1, 2, 3]", R"("timing": 1)") + " --quiet --out " +
                   (d / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json st = read_json(d / "out" / "stats.json");
  const nlohmann::json& sw = st.at("sw").at("trace_replay");
  EXPECT_EQ(u64(st, {"sw", "trace_replay", "streams"}), 2u);
  EXPECT_EQ(sw.at("map_sg_ns").at("count").get<uint64_t>(), 24u);
  EXPECT_EQ(sw.at("unmap_sg_ns").at("count").get<uint64_t>(), 24u);
  EXPECT_EQ(sw.at("map_ns").at("count").get<uint64_t>(), 100u);
  // The NIC's syncs are of page-pool buffers mapped before the capture:
  // counted and skipped.
  EXPECT_EQ(u64(st, {"sw", "trace_replay", "skipped_unmatched"}), 140u);
  EXPECT_EQ(u64(st, {"player0", "load_unmatched"}), 140u);
  // Each DMA-API map went into the page tables and was invalidated again.
  EXPECT_GT(u64(st, {"smmu", "cmdq", "syncs"}), 100u);
  EXPECT_EQ(u64(st, {"sw", "trace_replay", "iovas_allocated"}), 124u);
  // ftrace saw no device access: they are made up from the DMA-API calls
  // (issue 32), every mapped byte once, and the SMMU translates each of them.
  EXPECT_GT(u64(st, {"player0", "load_accesses_synthesized"}), 400u);
  EXPECT_EQ(u64(st, {"player0", "accesses"}), u64(st, {"player0", "load_accesses_synthesized"}));
  EXPECT_EQ(u64(st, {"player0", "access_errors"}), 0u);
  EXPECT_EQ(u64(st, {"player0", "bytes"}), 1858760u);  // trace stats: bytes mapped
  EXPECT_EQ(u64(st, {"smmu", "tlb", "lookups"}), u64(st, {"player0", "accesses"}));
  EXPECT_GT(u64(st, {"smmu", "tlb", "by_sid", "1", "lookups"}), 0u);
  EXPECT_GT(u64(st, {"smmu", "tlb", "by_sid", "2", "lookups"}), 0u);
  EXPECT_NE(r.out.find("device accesses synthesized from the DMA-API calls"), std::string::npos) << r.out;
}

// Without synthesis an imported trace replays the CPU side only.
TEST(CliTrace, ImportedFtraceWithoutSynthesisLeavesTheTranslationSideIdle) {
  const fs::path d = temp_dir("trace-ftrace-nosynth");
  const fs::path trace = d / "fio.trace";
  ASSERT_EQ(sh("trace import " + kFtraceSample + " -o " + trace.string() + " --quiet").exit_code, 0);
  const Cmd r = sh("run " + replay_scenario(d, trace.string(), "[0]", R"("timing": 1)") +
                   " --quiet --set platform.devices.player0.synthesize=off --out " + (d / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json st = read_json(d / "out" / "stats.json");
  EXPECT_EQ(u64(st, {"player0", "accesses"}), 0u);
  EXPECT_EQ(u64(st, {"smmu", "tlb", "lookups"}), 0u);
  EXPECT_GT(u64(st, {"smmu", "cmdq", "syncs"}), 100u);
}

TEST(CliTrace, BrokenTraceIsCountedAndTheReplayGoesOn) {
  const fs::path d = temp_dir("trace-broken");
  const std::string trace = write_file(d, "broken.trace",
                                       "smmu-vp-trace 1 ns\n"
                                       "# an unmap of what was never mapped, two maps over each other, an access to nothing\n"
                                       "100 unmap cpu=0 sid=7 dir=to_device iova=0x5000 size=4096\n"
                                       "200 map cpu=0 sid=7 dir=to_device iova=0x10000 pa=0x80001000 size=8192\n"
                                       "300 map cpu=0 sid=7 dir=to_device iova=0x11000 pa=0x80004000 size=4096\n"
                                       "400 access sid=7 rw=r iova=0x11000 size=64\n"
                                       "450 access sid=7 rw=r iova=0x900000 size=64\n"
                                       "500 unmap cpu=0 sid=7 dir=to_device iova=0x11000 size=4096\n");
  const Cmd r = sh("run " + replay_scenario(d, trace, "[0]", "") + " --out " + (d / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("never mapped"), std::string::npos) << r.out;   // the app's warning
  EXPECT_NE(r.out.find("trace problems"), std::string::npos) << r.out;  // the summary's device line
  const nlohmann::json st = read_json(d / "out" / "stats.json");
  EXPECT_EQ(u64(st, {"player0", "load_unmatched"}), 1u);
  EXPECT_EQ(u64(st, {"player0", "load_overlapping"}), 1u);
  EXPECT_EQ(u64(st, {"player0", "load_accesses_unmapped"}), 1u);
  EXPECT_EQ(u64(st, {"player0", "accesses"}), 1u);
  EXPECT_EQ(u64(st, {"sw", "trace_replay", "skipped_unmatched"}), 1u);
  EXPECT_EQ(st["sw"]["trace_replay"]["map_ns"]["count"].get<uint64_t>(), 2u);
}

TEST(CliTrace, BadTraceArgumentsExitTwo) {
  const fs::path d = temp_dir("trace-bad-args");
  const Cmd rec = sh("run " + (kScenarios + "dma_copy.json") + " --quiet --out " + (d / "o").string() + " --record-trace " +
                     (d / "no" / "such" / "dir.trace").string());
  EXPECT_EQ(rec.exit_code, 2) << rec.out;
  EXPECT_NE(rec.out.find("--record-trace"), std::string::npos) << rec.out;
  const Cmd missing = sh("run " + replay_scenario(d, (d / "missing.trace").string(), "[0]", "") + " --quiet --out " +
                         (d / "o").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_NE(missing.out.find("missing.trace"), std::string::npos) << missing.out;
  const std::string bad = write_file(d, "bad.trace", "smmu-vp-trace 1 ns\n10 map iova=0x1000\n");
  const Cmd malformed = sh("run " + replay_scenario(d, bad, "[0]", "") + " --quiet --out " + (d / "o").string());
  EXPECT_EQ(malformed.exit_code, 2) << malformed.out;
  EXPECT_NE(malformed.out.find("bad.trace:2"), std::string::npos) << malformed.out;
}

TEST(CliTrace, ReplayParametersAreChecked) {
  const fs::path d = temp_dir("trace-params");
  const std::string trace = std::string(SMMU_VP_SOURCE_DIR) + "/traces/samples/nvme_fio_4k.trace.gz";
  const Cmd timing = sh("run " + replay_scenario(d, trace, "[0]", R"("timing": 2)") + " --quiet --out " + (d / "o").string());
  EXPECT_EQ(timing.exit_code, 2) << timing.out;
  EXPECT_NE(timing.out.find("timing"), std::string::npos) << timing.out;
  const Cmd named = sh("run " + replay_scenario(d, trace, "[0]", R"("timing": "asap", "placement": "one_core")") +
                       " --quiet --out " + (d / "o").string());
  EXPECT_EQ(named.exit_code, 0) << named.out;
  const Cmd pool = sh("run " + replay_scenario(d, trace, "[0]", R"("pool_mb": 0)") + " --quiet --out " + (d / "o").string());
  EXPECT_EQ(pool.exit_code, 3) << pool.out;
  EXPECT_NE(pool.out.find("pool_mb must be at least 1"), std::string::npos) << pool.out;
}

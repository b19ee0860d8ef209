// Real kernel captures (traces/samples/ftrace_linux-*.txt.gz, made by
// scripts/capture-kernel-traces.sh: Debian's arm64 kernels under QEMU with an
// SMMUv3, an NVMe drive, a virtio-blk disk and a virtio-net NIC) imported and
// replayed on the platform (docs/traces.md, "Real captures").
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "dmatrace/dma_trace.h"

using namespace cli_test;
using smmu_vp::dmatrace::Op;

namespace {

struct Replayed {
  std::map<Op, uint64_t> records;  // of the imported trace, by op
  nlohmann::json stats;
  std::string summary;
};

// Imports a capture and replays it with the shipped replay scenario, at the
// capture's own times, long enough for all of it (the captures span 2-4 s).
Replayed import_and_replay(const std::string& capture) {
  const fs::path d = temp_dir("real-" + capture);
  const fs::path trace = d / "capture.trace";
  const Cmd imp = sh("trace import " + std::string(SMMU_VP_SOURCE_DIR) + "/traces/samples/" + capture +
                     ".txt.gz -o " + trace.string() + " --quiet");
  EXPECT_EQ(imp.exit_code, 0) << imp.out;
  Replayed r;
  smmu_vp::dmatrace::TraceReader in(trace.string());
  for (smmu_vp::dmatrace::Record rec; in.next(rec);) ++r.records[rec.op];
  const Cmd run = sh("run " + std::string(SMMU_VP_SOURCE_DIR) +
                     "/platform/scenarios/trace_replay.json --set platform.devices.player0.trace=" + trace.string() +
                     " --set scenario.stop.max_time_us=5000000 --quiet --out " + (d / "out").string());
  EXPECT_EQ(run.exit_code, 0) << run.out;
  r.stats = read_json(d / "out" / "stats.json");
  r.summary = run.out;
  fs::remove_all(d);
  return r;
}

// What every capture must give: all of it replayed at its times, each
// device's accesses translated under its own StreamID, nothing failed.
void expect_clean_translated_replay(const Replayed& r, const std::string& capture) {
  SCOPED_TRACE(capture);
  const nlohmann::json& st = r.stats;
  EXPECT_EQ(st["run"]["status"], "completed");
  EXPECT_EQ(u64(st, {"player0", "access_errors"}), 0u);
  EXPECT_EQ(u64(st, {"player0", "load_overlapping"}), 0u);
  EXPECT_EQ(u64(st, {"sw", "trace_replay", "map_failures"}), 0u);
  EXPECT_EQ(u64(st, {"sw", "trace_replay", "skipped_failed"}), 0u);
  EXPECT_GT(u64(st, {"player0", "load_accesses_synthesized"}), 4000u);
  EXPECT_EQ(u64(st, {"player0", "accesses"}), u64(st, {"player0", "load_accesses_synthesized"}));
  EXPECT_EQ(u64(st, {"smmu", "tlb", "lookups"}), u64(st, {"player0", "accesses"}));
  // The NVMe drive, the virtio-blk disk and the NIC: three StreamIDs translated.
  int translated = 0;
  for (const auto& [sid, tlb] : st["smmu"]["tlb"]["by_sid"].items())
    if (tlb.contains("lookups") && tlb["lookups"].get<double>() > 100) ++translated;
  EXPECT_EQ(translated, 3) << st["smmu"]["tlb"]["by_sid"].dump();
  // The summary says so per StreamID.
  EXPECT_NE(r.summary.find("TLB by StreamID: "), std::string::npos) << r.summary;
}

}  // namespace

// Linux 6.1 logs iommu:map/unmap only: the import recovers each device's
// domain, and the replay then maps no range twice and fails no map (with
// one StreamID, the devices' IOVA spaces, all starting below 4 GiB, collide).
TEST(CliRealCapture, IommuOnlyCapturesReplayWithoutDeviceConfusion) {
  for (const char* capture : {"ftrace_linux-6.1_strict", "ftrace_linux-6.1_lazy"}) {
    const Replayed r = import_and_replay(capture);
    expect_clean_translated_replay(r, capture);
    // Replayed at the trace's own IOVAs through the IOMMU API.
    EXPECT_EQ(r.stats["sw"]["trace_replay"]["iommu_map_ns"]["count"].get<uint64_t>(), r.records.at(Op::kIommuMap))
        << capture;
    EXPECT_EQ(r.stats["sw"]["trace_replay"]["iommu_unmap_ns"]["count"].get<uint64_t>(),
              r.records.at(Op::kIommuUnmap))
        << capture;
  }
}

// Linux 6.12 also logs the DMA-API calls with their devices: those are
// replayed through sw/'s DMA layer, and its iommu events are that layer's
// own work (implied, not replayed again).
TEST(CliRealCapture, DmaEraCapturesReplayTheirDmaApiCalls) {
  for (const char* capture : {"ftrace_linux-6.12_strict", "ftrace_linux-6.12_lazy"}) {
    const Replayed r = import_and_replay(capture);
    expect_clean_translated_replay(r, capture);
    const nlohmann::json& sw = r.stats["sw"]["trace_replay"];
    EXPECT_EQ(sw["map_ns"]["count"].get<uint64_t>(), r.records.at(Op::kMap)) << capture;
    EXPECT_EQ(sw["unmap_ns"]["count"].get<uint64_t>(), r.records.at(Op::kUnmap)) << capture;
    EXPECT_EQ(sw["map_sg_ns"]["count"].get<uint64_t>(), r.records.at(Op::kMapSg)) << capture;
    EXPECT_EQ(u64(r.stats, {"sw", "trace_replay", "iommu_calls_implied"}),
              r.records.at(Op::kIommuMap) + r.records.at(Op::kIommuUnmap))
        << capture;
    EXPECT_FALSE(sw.contains("iommu_map_ns")) << capture;
  }
}

// Lazy mode on a capture's idle gaps: the flush queue's 10 ms timer fires
// inside a gap as Linux's does, so no unmapped buffer stays reachable for a
// whole gap (before, one 170 ms gap gave a 181 ms window).
TEST(CliRealCapture, LazyWindowEndsWithTheFlushTimerInIdleGaps) {
  const fs::path d = temp_dir("real-lazy-window");
  const Cmd run = sh("run " + std::string(SMMU_VP_SOURCE_DIR) +
                     "/platform/scenarios/linux_capture_study.json --set scenario.apps.0.params.unmap=1 --quiet --out " +
                     (d / "out").string());
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const nlohmann::json st = read_json(d / "out" / "stats.json");
  const double max_ms = st["sw"]["trace_replay"]["lazy_window_max_ns"].get<double>() / 1e6;
  EXPECT_GE(max_ms, 9.9);   // the timer's 10 ms, less a flush started early by a full ring at most
  EXPECT_LE(max_ms, 10.5);  // plus the 0.1 ms poll step and the flush itself
  EXPECT_GT(u64(st, {"sw", "trace_replay", "fq_flushes"}), 50u);
  fs::remove_all(d);
}

// linux_capture_study.json replays traces/samples/linux-6.12_strict.trace.gz,
// the 6.12 strict capture imported once (docs/studies.md): it must be what
// the importer makes of the capture today, record for record.
TEST(CliRealCapture, StudyTraceIsTheCurrentImportOfItsCapture) {
  const fs::path d = temp_dir("real-study-trace");
  const fs::path fresh = d / "fresh.trace";
  const std::string samples = std::string(SMMU_VP_SOURCE_DIR) + "/traces/samples/";
  ASSERT_EQ(sh("trace import " + samples + "ftrace_linux-6.12_strict.txt.gz -o " + fresh.string() + " --quiet").exit_code,
            0);
  smmu_vp::dmatrace::TraceReader a(samples + "linux-6.12_strict.trace.gz"), b(fresh.string());
  smmu_vp::dmatrace::Record ra, rb;
  uint64_t n = 0;
  for (bool more_a = a.next(ra), more_b = b.next(rb);; more_a = a.next(ra), more_b = b.next(rb), ++n) {
    ASSERT_EQ(more_a, more_b) << "record " << n << ": one file ends first; regenerate with the command in "
                              << "docs/studies.md";
    if (!more_a) break;
    ASSERT_EQ(smmu_vp::dmatrace::format_record(ra), smmu_vp::dmatrace::format_record(rb)) << "record " << n;
  }
  EXPECT_GT(n, 10000u);
  fs::remove_all(d);
}

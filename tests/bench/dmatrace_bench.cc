// Benchmarks of the smmu-vp-trace library (platform/dmatrace/dma_trace.h):
// host wall-clock cost of writing and reading trace files. They run on core
// 0's thread like the rest of smmu-vp-bench (its main is in hal_bench.cc) but
// touch no simulated hardware.
//
//   BM_TraceWrite/<N>       TraceWriter, N records to a plain file; items = records
//   BM_TraceWriteGzip/<N>   the same to a .gz file (gzip level 6)
//   BM_TraceRead/<N>        TraceReader over a plain file of N records (written
//                           before the timing); items = record lines
//   BM_TraceReadGzip/<N>    the same over the gzip file
//   BM_FormatRecord         format_record of one record into a reused string
//   BM_ParseRecord          parse_record of one line into a reused Record
//
// The records mix the ops a NIC-like driver produces: map with a direction,
// unmap, device accesses, map_sg with three segments. Files go to the
// system's temporary directory and are removed afterwards.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dmatrace/dma_trace.h"

namespace {

using smmu_vp::dmatrace::Dir;
using smmu_vp::dmatrace::Op;
using smmu_vp::dmatrace::Record;
using smmu_vp::dmatrace::TraceReader;
using smmu_vp::dmatrace::TraceWriter;

// The i-th record of the benchmark's trace (about 70 bytes a line).
Record bench_record(uint64_t i) {
  Record r;
  r.time_ns = 1000 + i * 250;
  r.iova = 0xfff00000 + ((i % 1024) << 12);
  r.size = 4096;
  r.sid = 1;
  r.dev = "nic0";
  switch (i % 4) {
    case 0:
      r.op = Op::kMap;
      r.cpu = static_cast<int32_t>(i % 2);
      r.dir = Dir::kFromDevice;
      r.pa = 0x80000000 + (i << 12);
      break;
    case 1:
      r.op = Op::kAccess;
      r.write = true;
      r.size = 1514;
      break;
    case 2:
      r.op = Op::kUnmap;
      r.cpu = static_cast<int32_t>(i % 2);
      r.dir = Dir::kFromDevice;
      break;
    default:
      r.op = Op::kMapSg;
      r.cpu = 1;
      r.dir = Dir::kToDevice;
      r.size = 12288;
      r.segs = {{0x80010000, 4096}, {0x80030000, 4096}, {0x80050000, 4096}};
      break;
  }
  return r;
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          ("smmu-vp-bench-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

void write_file(const std::string& path, uint64_t n) {
  TraceWriter w(path);
  for (uint64_t i = 0; i < n; ++i) w.write(bench_record(i));
  w.close();
}

void trace_write(benchmark::State& state, const char* name) {
  const auto n = static_cast<uint64_t>(state.range(0));
  const std::string path = temp_path(name);
  std::vector<Record> recs;
  for (uint64_t i = 0; i < n; ++i) recs.push_back(bench_record(i));
  for (auto _ : state) {
    TraceWriter w(path);
    for (const Record& r : recs) w.write(r);
    w.close();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
  state.counters["file_MB"] = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  std::filesystem::remove(path);
}

void trace_read(benchmark::State& state, const char* name) {
  const auto n = static_cast<uint64_t>(state.range(0));
  const std::string path = temp_path(name);
  write_file(path, n);
  uint64_t checksum = 0;
  for (auto _ : state) {
    TraceReader reader(path);
    Record r;
    uint64_t count = 0;
    while (reader.next(r)) {
      checksum += r.iova;
      ++count;
    }
    if (count != n) {
      state.SkipWithError("read back a different number of records");
      break;
    }
  }
  benchmark::DoNotOptimize(checksum);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * std::filesystem::file_size(path)));
  std::filesystem::remove(path);
}

void BM_TraceWrite(benchmark::State& state) { trace_write(state, "write.trace"); }
void BM_TraceWriteGzip(benchmark::State& state) { trace_write(state, "write.trace.gz"); }
void BM_TraceRead(benchmark::State& state) { trace_read(state, "read.trace"); }
void BM_TraceReadGzip(benchmark::State& state) { trace_read(state, "read.trace.gz"); }

void BM_FormatRecord(benchmark::State& state) {
  const Record r = bench_record(3);  // map_sg, the longest line
  std::string line;
  for (auto _ : state) {
    line.clear();
    smmu_vp::dmatrace::format_record(r, line);
    benchmark::DoNotOptimize(line.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void BM_ParseRecord(benchmark::State& state) {
  const std::string line = smmu_vp::dmatrace::format_record(bench_record(0));
  Record r;
  for (auto _ : state) {
    smmu_vp::dmatrace::parse_record(line, 1.0, r);
    benchmark::DoNotOptimize(r.iova);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

constexpr int64_t kRecords = 200000;

}  // namespace

BENCHMARK(BM_TraceWrite)->Arg(kRecords)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TraceWriteGzip)->Arg(kRecords)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TraceRead)->Arg(kRecords)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TraceReadGzip)->Arg(kRecords)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FormatRecord)->UseRealTime();
BENCHMARK(BM_ParseRecord)->UseRealTime();

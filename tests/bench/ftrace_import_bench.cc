// The Linux ftrace importer's throughput, in ftrace lines per second
// (items_per_second): parse_line alone over text in memory, and import_ftrace
// from a file to a file (reading, parsing, writing our format). The text is
// a capture like traces/samples/ftrace_nvme_fio.txt, scaled up: NVMe 4 KiB
// map/unmap pairs, 64 KiB scatter-gather maps of 16 pages, a NIC's transmit
// maps and receive syncs, a few iommu:map/unmap lines and other events.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "dmatrace/ftrace_import.h"

namespace {

using smmu_vp::dmatrace::FtraceImporter;
using smmu_vp::dmatrace::ImportOptions;
using smmu_vp::dmatrace::Record;

constexpr int kLines = 200000;

std::string prefix(std::mt19937_64& rng, uint64_t& t_us) {
  static const char* const kTasks[] = {"fio-2811", "fio-2812", "<idle>-0", "iperf3-2907", "ksoftirqd/3-34"};
  static const char* const kFlags[] = {".....", "d.h1.", "..s1.", "...1."};
  t_us += 1 + rng() % 20;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%23s [%03u] %s %5llu.%06llu: ", kTasks[rng() % 5], static_cast<unsigned>(rng() % 4),
                kFlags[rng() % 4], static_cast<unsigned long long>(t_us / 1000000),
                static_cast<unsigned long long>(t_us % 1000000));
  return buf;
}

// ~kLines lines of /sys/kernel/tracing/trace text.
const std::string& ftrace_text() {
  static const std::string text = [] {
    std::mt19937_64 rng(1);
    std::string s = "# tracer: nop\n#\n#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n";
    uint64_t t = 1523417305;
    char buf[512];
    for (int n = 3; n < kLines;) {
      const unsigned kind = static_cast<unsigned>(rng() % 100);
      const uint64_t iova = 0xfff00000 - (rng() % 4096) * 0x1000;
      const uint64_t pa = (0x100000 + rng() % 0x380000) << 12;
      std::string l = prefix(rng, t);
      if (kind < 30) {
        std::snprintf(buf, sizeof buf,
                      "dma_map_page: 0000:01:00.0 dir=FROM_DEVICE dma_addr=%llx size=4096 phys_addr=%llx attrs=\n",
                      static_cast<unsigned long long>(iova), static_cast<unsigned long long>(pa));
      } else if (kind < 60) {
        std::snprintf(buf, sizeof buf, "dma_unmap_page: 0000:01:00.0 dir=FROM_DEVICE dma_addr=%llx size=4096 attrs=\n",
                      static_cast<unsigned long long>(iova));
      } else if (kind < 75) {
        std::snprintf(buf, sizeof buf, "dma_sync_single_for_cpu: 0000:02:00.0 dir=FROM_DEVICE dma_addr=%llx size=1536\n",
                      static_cast<unsigned long long>(iova + 0x40));
      } else if (kind < 82) {
        std::snprintf(buf, sizeof buf,
                      "dma_map_page: 0000:02:00.0 dir=TO_DEVICE dma_addr=%llx size=1514 phys_addr=%llx attrs=\n",
                      static_cast<unsigned long long>(iova), static_cast<unsigned long long>(pa + 0x2c2));
      } else if (kind < 85) {
        std::string phys;
        for (int i = 0; i < 16; ++i)
          phys += (i ? ",0x" : "0x") + [&] {
            char h[24];
            std::snprintf(h, sizeof h, "%llx", static_cast<unsigned long long>(pa + 0x1000ull * i));
            return std::string(h);
          }();
        std::snprintf(buf, sizeof buf,
                      "dma_map_sg: 0000:01:00.0 dir=TO_DEVICE dma_addrs={0x%llx} sizes={0x10000} phys_addrs={%s} attrs=\n",
                      static_cast<unsigned long long>(iova & ~0xffffull), phys.c_str());
        l += buf;
        std::snprintf(buf, sizeof buf, "dma_unmap_sg: 0000:01:00.0 dir=TO_DEVICE phys_addrs={%s} attrs=\n", phys.c_str());
        l += prefix(rng, t);
        ++n;
      } else if (kind < 92) {
        std::snprintf(buf, sizeof buf,
                      "map: IOMMU: iova=0x%016llx - 0x%016llx paddr=0x%016llx size=4096\n",
                      static_cast<unsigned long long>(iova), static_cast<unsigned long long>(iova + 0x1000),
                      static_cast<unsigned long long>(pa));
      } else if (kind < 97) {
        std::snprintf(buf, sizeof buf,
                      "unmap: IOMMU: iova=0x%016llx - 0x%016llx size=4096 unmapped_size=4096\n",
                      static_cast<unsigned long long>(iova), static_cast<unsigned long long>(iova + 0x1000));
      } else {
        std::snprintf(buf, sizeof buf,
                      "sched_switch: prev_comm=fio prev_pid=2811 prev_prio=120 prev_state=S ==> next_comm=swapper/1 "
                      "next_pid=0 next_prio=120\n");
      }
      l += buf;
      s += l;
      ++n;
    }
    return s;
  }();
  return text;
}

void BM_FtraceParseLine(benchmark::State& state) {
  const std::string& text = ftrace_text();
  std::vector<std::pair<const char*, size_t>> lines;
  for (size_t p = 0; p < text.size();) {
    const size_t nl = text.find('\n', p);
    lines.emplace_back(text.data() + p, nl - p);
    p = nl + 1;
  }
  for (auto _ : state) {
    FtraceImporter imp;
    Record r;
    uint64_t n = 0, got = 0;
    for (const auto& [p, len] : lines) got += imp.parse_line(p, len, ++n, r);
    benchmark::DoNotOptimize(got);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * lines.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_FtraceParseLine)->Unit(benchmark::kMillisecond)->UseRealTime();

// Arg 0: plain output, 1: gzip output.
void BM_FtraceImportFile(benchmark::State& state) {
  namespace fs = std::filesystem;
  const std::string& text = ftrace_text();
  const fs::path dir = fs::temp_directory_path() / ("smmu-vp-ftrace-bench-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string in = (dir / "in.txt").string();
  const std::string out = (dir / (state.range(0) ? "out.trace.gz" : "out.trace")).string();
  std::ofstream(in, std::ios::binary) << text;
  uint64_t lines = 0;
  for (auto _ : state) lines += smmu_vp::dmatrace::import_ftrace(in, out, ImportOptions{}).lines;
  state.SetItemsProcessed(static_cast<int64_t>(lines));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  fs::remove_all(dir);
}
BENCHMARK(BM_FtraceImportFile)->ArgName("gz")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// The real captures of traces/samples (docs/traces.md, "Real captures"),
// gzip read as shipped: arg 0 is Linux 6.1's (iommu events only, every map
// and unmap through domain recovery), arg 1 Linux 6.12's (with dma: events).
void BM_FtraceImportRealCapture(benchmark::State& state) {
  namespace fs = std::filesystem;
  const std::string in = std::string(SMMU_VP_SOURCE_DIR) + "/traces/samples/ftrace_linux-" +
                         (state.range(0) ? "6.12" : "6.1") + "_strict.txt.gz";
  const fs::path dir = fs::temp_directory_path() / ("smmu-vp-ftrace-bench-real-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "out.trace").string();
  uint64_t lines = 0;
  for (auto _ : state) lines += smmu_vp::dmatrace::import_ftrace(in, out, ImportOptions{}).lines;
  state.SetItemsProcessed(static_cast<int64_t>(lines));
  fs::remove_all(dir);
}
BENCHMARK(BM_FtraceImportRealCapture)->ArgName("linux_6_12")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

// smmu-vp-bench: host wall-clock cost of the simulation's basic operations.
//
//   BM_HalRead64_Dram / BM_HalWrite64_Dram   one timed HAL access to DRAM
//   BM_HalRead32_Mmio                        one HAL read of the DMA engine's ID register
//   BM_DmaPoll/<KiB>/<burst bytes>           one DMA copy through the driver, polling
//                                            STATUS; items = bursts
//   BM_DmaIrq/<KiB>/<burst bytes>            the same, the core sleeping in WFI until
//                                            the completion interrupt (no polling)
//   BM_TlmHop_Bare                           simple_initiator_socket -> simple_target_socket
//                                            whose b_transport only sets TLM_OK_RESPONSE
//   BM_TlmHop_RouterDram                     one b_transport through the platform's
//                                            Router to DRAM, without the HAL
//
// Counters next to the wall time ("Time", per iteration):
//   sim_ns        simulated time per iteration (for the hops: the latency the
//                 transaction is annotated with on an idle DRAM bus)
//   bursts        bursts per DMA transfer;  wall_ns/burst, sim_ns/burst
//   mmio/xfer     MMIO accesses the core made per DMA transfer (programming,
//                 polls, acknowledgement)
//
// SystemC elaborates once per process, so everything lives in one platform:
// sc_main builds it from the inline configuration below with a single app on
// core 0 whose main function runs the benchmarks, so they execute on the
// simulated core's thread, where the HAL works. The bare-hop modules are
// elaborated next to the platform. Burst sizes other than the configured
// devices' (64, 256, 1024, 4096 bytes) are not available.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "common/sim_time.h"
#include "common/tlm_time.h"
#include "config/run_config.h"
#include "cpu/cpu_cluster.h"
#include "dma/dma_registers.h"
#include "drivers/dma/dma_engine.h"
#include "hal/hal.h"
#include "platform.h"

namespace {

// SystemC prints its banner on stdout unless this is set before it starts;
// a static initialiser runs before SystemC's main().
const bool kQuietSystemC = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;

using smmu_vp::CpuCore;
using smmu_vp::Ps;

// The platform of platform/platforms/base.json, with one DMA engine per burst
// size benchmarked (dma0 is base.json's, 256-byte bursts) and a deep stack
// for the core threads: Google Benchmark runs on core 0's.
constexpr const char* kConfig = R"json({
  "platform": {
    "cpu": { "count": 4, "frequency_mhz": 2000, "stack_kib": 8192 },
    "dram": {
      "base": "0x80000000",
      "size": "1GiB",
      "read_latency_ns": 80,
      "write_latency_ns": 60,
      "bandwidth_gbps": 25.6,
      "dma_region": { "offset": "256MiB", "size": "256MiB" }
    },
    "interconnect": { "latency_ns": 2 },
    "intc": { "base": "0x08000000", "lines": 256 },
    "devices": {
      "dma0":      { "type": "dma", "base": "0x10000000", "stream_id": 16, "irq": 32,
                     "channels": 2, "burst_bytes": 256,  "max_outstanding": 8 },
      "dma_b64":   { "type": "dma", "base": "0x10010000", "stream_id": 17, "irq": 34,
                     "channels": 2, "burst_bytes": 64,   "max_outstanding": 8 },
      "dma_b1024": { "type": "dma", "base": "0x10020000", "stream_id": 18, "irq": 36,
                     "channels": 2, "burst_bytes": 1024, "max_outstanding": 8 },
      "dma_b4096": { "type": "dma", "base": "0x10030000", "stream_id": 19, "irq": 38,
                     "channels": 2, "burst_bytes": 4096, "max_outstanding": 8 }
    }
  },
  "scenario": {
    "name": "bench",
    "description": "Google Benchmark suite running on core 0",
    "apps": [ { "app": "bench", "cores": [0] } ],
    "stop": { "max_time_us": 1e12 }
  }
})json";

smmu_vp::Platform* g_platform = nullptr;

// ---- bare TLM hop: initiator -> target, nothing in between

struct BareTarget : sc_core::sc_module {
  tlm_utils::simple_target_socket<BareTarget> socket;
  explicit BareTarget(sc_core::sc_module_name n) : sc_module(n), socket("socket") {
    socket.register_b_transport(this, &BareTarget::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time&) {
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

// An initiator with no process of its own: the benchmarks call through its
// socket from core 0's thread (b_transport that never waits may be called
// from any process).
struct Initiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Initiator> socket;
  explicit Initiator(sc_core::sc_module_name n) : sc_module(n), socket("socket") {}
};

Initiator* g_bare = nullptr;
Initiator* g_router_probe = nullptr;

CpuCore& core() { return *CpuCore::current(); }

double ps_to_ns_d(Ps ps) { return smmu_vp::ps_to_ns(ps); }

// A DRAM address well below the DMA region, untouched by the DMA benchmarks.
phys_addr_t dram_scratch() { return hal_dram().base + 0x100000; }

// ---- (a) timed HAL accesses

void BM_HalRead64_Dram(benchmark::State& state) {
  const phys_addr_t pa = dram_scratch();
  const Ps t0 = core().now();
  for (auto _ : state) benchmark::DoNotOptimize(hal_read64(pa));
  const Ps t1 = core().now();
  state.counters["sim_ns"] = benchmark::Counter(ps_to_ns_d(t1 - t0), benchmark::Counter::kAvgIterations);
}

void BM_HalWrite64_Dram(benchmark::State& state) {
  const phys_addr_t pa = dram_scratch() + 64;
  uint64_t v = 0;
  const Ps t0 = core().now();
  for (auto _ : state) hal_write64(pa, ++v);
  const Ps t1 = core().now();
  state.counters["sim_ns"] = benchmark::Counter(ps_to_ns_d(t1 - t0), benchmark::Counter::kAvgIterations);
}

void BM_HalRead32_Mmio(benchmark::State& state) {
  hal_device_info dev{};
  if (hal_device_find("dma0", &dev) != 0) {
    state.SkipWithError("no device dma0");
    return;
  }
  const phys_addr_t pa = dev.base + DMA_REG_ID;
  if (hal_read32(pa) != DMA_ID_VALUE) {
    state.SkipWithError("dma0 ID register mismatch");
    return;
  }
  const Ps t0 = core().now();
  for (auto _ : state) benchmark::DoNotOptimize(hal_read32(pa));
  const Ps t1 = core().now();
  state.counters["sim_ns"] = benchmark::Counter(ps_to_ns_d(t1 - t0), benchmark::Counter::kAvgIterations);
}

// ---- (b) DMA transfers through the driver

volatile uint32_t g_dma_done = 0;

void on_dma_done(unsigned, void* ctx) { hal_store32(static_cast<volatile uint32_t*>(ctx), 1); }

uint64_t core_mmio_accesses() {
  const smmu_vp::Counter* c =
      g_platform->stats().find_counter(std::string(core().name()) + ".mmio_accesses");
  return c ? c->value() : 0;
}

void dma_transfer(benchmark::State& state, enum dma_completion how) {
  const uint32_t len = static_cast<uint32_t>(state.range(0)) * 1024u;
  const uint32_t burst = static_cast<uint32_t>(state.range(1));
  const std::string dev = burst == 256 ? "dma0" : "dma_b" + std::to_string(burst);
  struct dma_engine dma {};
  if (dma_engine_probe(&dma, dev.c_str()) != 0 || dma.burst_bytes != burst) {
    state.SkipWithError(("no DMA engine with " + std::to_string(burst) + "-byte bursts (" + dev + ")").c_str());
    return;
  }
  const unsigned ch = 0;
  phys_addr_t src_pa = 0, dst_pa = 0;
  auto* src = static_cast<uint8_t*>(hal_dma_alloc(len, 4096, &src_pa));
  auto* dst = static_cast<uint8_t*>(hal_dma_alloc(len, 4096, &dst_pa));
  if (!src || !dst ||
      (how == DMA_COMPLETE_IRQ &&
       hal_irq_register(dma_engine_channel_irq(&dma, ch), on_dma_done, const_cast<uint32_t*>(&g_dma_done)) != 0)) {
    state.SkipWithError(!src || !dst ? "hal_dma_alloc failed" : "cannot register the DMA completion interrupt");
    hal_dma_free(src);
    hal_dma_free(dst);
    return;
  }
  for (uint32_t i = 0; i < len; ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
  const uint64_t bursts_per_xfer = (len + burst - 1) / burst;

  const uint64_t mmio0 = core_mmio_accesses();
  const Ps t0 = hal_now_ps();
  const auto w0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (how == DMA_COMPLETE_IRQ) hal_store32(&g_dma_done, 0);
    dma_engine_start(&dma, ch, src_pa, dst_pa, len, how);
    if (how == DMA_COMPLETE_POLL) {
      dma_engine_wait_poll(&dma, ch);
    } else {
      while (!hal_load32(&g_dma_done)) hal_wfi();
    }
    if (dma_engine_ack(&dma, ch) != DMA_ERR_NONE) {
      state.SkipWithError("DMA transfer ended with an error");
      break;
    }
  }
  const auto w1 = std::chrono::steady_clock::now();
  const Ps t1 = hal_now_ps();
  const uint64_t mmio1 = core_mmio_accesses();

  if (how == DMA_COMPLETE_IRQ) hal_irq_unregister(dma_engine_channel_irq(&dma, ch));
  if (state.iterations() > 0 && std::memcmp(src, dst, len) != 0) state.SkipWithError("destination differs from source");
  hal_dma_free(src);
  hal_dma_free(dst);

  const double iters = static_cast<double>(state.iterations());
  const double bursts = iters * static_cast<double>(bursts_per_xfer);
  state.SetItemsProcessed(static_cast<int64_t>(bursts));
  state.SetBytesProcessed(static_cast<int64_t>(iters * len));
  if (bursts == 0) return;
  const double wall_ns = std::chrono::duration<double, std::nano>(w1 - w0).count();
  state.counters["bursts"] = static_cast<double>(bursts_per_xfer);
  state.counters["wall_ns/burst"] = wall_ns / bursts;
  state.counters["sim_ns/burst"] = ps_to_ns_d(t1 - t0) / bursts;
  state.counters["sim_ns"] = ps_to_ns_d(t1 - t0) / iters;
  state.counters["mmio/xfer"] = static_cast<double>(mmio1 - mmio0) / iters;
}

void BM_DmaPoll(benchmark::State& state) { dma_transfer(state, DMA_COMPLETE_POLL); }
void BM_DmaIrq(benchmark::State& state) { dma_transfer(state, DMA_COMPLETE_IRQ); }

// ---- (c) TLM-2.0 hops

void BM_TlmHop_Bare(benchmark::State& state) {
  tlm::tlm_generic_payload t;
  uint64_t data = 0;
  t.set_command(tlm::TLM_READ_COMMAND);
  t.set_address(0);
  t.set_data_ptr(reinterpret_cast<unsigned char*>(&data));
  t.set_data_length(8);
  t.set_streaming_width(8);
  for (auto _ : state) {
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    g_bare->socket->b_transport(t, delay);
    benchmark::DoNotOptimize(t.get_response_status());
  }
  if (!t.is_response_ok()) state.SkipWithError("bare target did not answer TLM_OK_RESPONSE");
}

void BM_TlmHop_RouterDram(benchmark::State& state) {
  const uint64_t addr = dram_scratch() + 128;
  tlm::tlm_generic_payload t;
  uint64_t data = 0;
  t.set_data_ptr(reinterpret_cast<unsigned char*>(&data));
  t.set_data_length(8);
  t.set_streaming_width(8);
  auto issue = [&](sc_core::sc_time& delay) {
    t.set_command(tlm::TLM_READ_COMMAND);
    t.set_address(addr);
    t.set_byte_enable_ptr(nullptr);
    t.set_dmi_allowed(false);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    g_router_probe->socket->b_transport(t, delay);
  };
  // The latency annotated on an idle DRAM bus: issued at core 0's local time,
  // after every access it has made so far.
  const Ps now = smmu_vp::now_ps();
  const Ps local = core().now() - now;
  sc_core::sc_time delay = smmu_vp::ps_to_sc(local);
  issue(delay);
  const double unloaded_ns = ps_to_ns_d(smmu_vp::sc_to_ps(delay) - local);
  if (!t.is_response_ok()) {
    state.SkipWithError("router -> DRAM read failed");
    return;
  }
  // Every access below is issued at the same simulated instant (nothing
  // waits), so they queue on the DRAM bus model; that reservation is drained
  // afterwards so that later benchmarks find the bus idle.
  for (auto _ : state) {
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    issue(d);
    benchmark::DoNotOptimize(data);
  }
  const Ps busy_until = g_platform->dram().core().bus().last_end();
  if (busy_until > core().now()) hal_delay_ns((busy_until - core().now()) / smmu_vp::kPsPerNs + 1);
  (void)hal_now_ps();  // synchronise: simulated time passes the reservation
  if (!t.is_response_ok()) state.SkipWithError("router -> DRAM read failed");
  state.counters["sim_ns"] = unloaded_ns;
}

BENCHMARK(BM_HalRead64_Dram)->UseRealTime();
BENCHMARK(BM_HalWrite64_Dram)->UseRealTime();
BENCHMARK(BM_HalRead32_Mmio)->UseRealTime();
BENCHMARK(BM_DmaPoll)
    ->ArgNames({"KiB", "burst"})
    ->Args({64, 64})
    ->Args({64, 256})
    ->Args({64, 1024})
    ->Args({64, 4096})
    ->Args({4, 256})
    ->Args({1024, 256})
    ->UseRealTime();
BENCHMARK(BM_DmaIrq)->ArgNames({"KiB", "burst"})->Args({64, 64})->Args({64, 256})->Args({64, 4096})->UseRealTime();
BENCHMARK(BM_TlmHop_Bare)->UseRealTime();
BENCHMARK(BM_TlmHop_RouterDram)->UseRealTime();

int bench_main(void) {
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}

const hal_param_decl kNoParams[] = {{nullptr, 0, nullptr}};
const hal_app kBenchApp = {"bench", "Google Benchmark suite (tests/bench/hal_bench.cc)", bench_main, kNoParams};

}  // namespace

// SystemC's own main() calls sc_main with the command line.
int sc_main(int argc, char** argv) {
  (void)kQuietSystemC;
  // sc_stop() ends the run; SystemC need not announce it.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  auto log = std::make_shared<spdlog::logger>("smmu-vp-bench", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  log->set_pattern("[%^%l%$] %v");
  log->set_level(spdlog::level::warn);

  try {
    BareTarget bare_target("bench_bare_target");
    Initiator bare("bench_bare_initiator");
    bare.socket.bind(bare_target.socket);
    g_bare = &bare;

    const smmu_vp::config::RunConfig cfg =
        smmu_vp::config::build_run_config(nlohmann::json::parse(kConfig), ".", {}, {&kBenchApp});
    smmu_vp::Platform platform(cfg, nullptr, log);
    g_platform = &platform;
    Initiator probe("bench_router_probe");
    probe.socket.bind(platform.router().upstream);
    g_router_probe = &probe;

    const smmu_vp::RunResult r = platform.run();
    g_platform = nullptr;
    benchmark::Shutdown();
    if (r.status != smmu_vp::RunResult::Status::kCompleted) {
      std::cerr << "smmu-vp-bench: run ended " << smmu_vp::RunResult::status_name(r.status) << ": " << r.message << "\n";
      return r.exit_code();
    }
  } catch (const std::exception& e) {
    std::cerr << "smmu-vp-bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

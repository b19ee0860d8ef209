// smmu-vp-bench: host wall-clock cost of the simulation's basic operations.
//
//   BM_HalRead64_Dram / BM_HalWrite64_Dram   one timed HAL access to DRAM
//   BM_HalRead32_Mmio                        one HAL read of the DMA engine's ID register
//   BM_DmaPoll/<KiB>/<burst bytes>           one DMA copy through the driver, polling
//                                            STATUS; items = bursts
//   BM_DmaIrq/<KiB>/<burst bytes>            the same, the core sleeping in WFI until
//                                            the completion interrupt (no polling)
//   BM_SystemCWait                           a bare sc_core::wait(1 ns) on core 0's thread:
//                                            the floor of one synchronisation (the
//                                            kernel's timed queue and a thread switch)
//   BM_TlmHop_Bare                           simple_initiator_socket -> simple_target_socket
//                                            whose b_transport only sets TLM_OK_RESPONSE
//   BM_TlmHop_RouterDram                     one b_transport through the platform's
//                                            Router to DRAM, without the HAL
//   BM_SmmuAccess_Untranslated               one 64-byte DMA-master read through the SMMU
//                                            with SMMUEN = 0 (GBPA bypass) to DRAM
//   BM_SmmuAccess_TlbHit                     the same read, SMMUEN = 1, stage 1, its
//                                            translation in the TLB
//   BM_SmmuAccess_Walk4Level                 the same read, SMMUEN = 1, missing the TLB
//                                            and the walk cache: a 4-level walk (4K
//                                            granule, T0SZ 16) every access
//   BM_SmmuCmdq_TlbiVaSync/<N>               core 0 submits N TLBI_NH_VA (ASID 1, leaf,
//                                            distinct VAs) and one CMD_SYNC (SIG_NONE)
//                                            to the SMMU's command queue (2^8 entries)
//                                            and polls CMDQ_CONS until it reaches PROD;
//                                            items = commands (N + 1 per batch)
//   BM_SmmuCmdq_TlbiVaSyncConsPoll/<N>/<run> the same, CMDQ_CONS polled with hal_read_poll32
//                                            (poll_sleep on) in runs of <run> reads, GERROR
//                                            checked between runs: 16 as the driver's CONS
//                                            waits (SMMU_ERR_POLL_INTERVAL), 0 for one poll
//                                            until CONS reaches PROD with a timeout of 2^20
//                                            reads, GERROR read only then, as Linux's
//                                            queue_poll (readl_relaxed until consumed or
//                                            ARM_SMMU_POLL_TIMEOUT_US)
//   BM_SmmuCmdq_TlbiVaSyncMsiLoop/<N>        the same with an MSI CMD_SYNC writing its
//                                            sequence number to a DRAM word, polled as the
//                                            driver's MSI wait did: hal_load32 and
//                                            hal_cpu_relax until it changes
//   BM_SmmuCmdq_TlbiVaSyncMsiPoll/<N>        the same polled with hal_poll32 (HAL_POLL_NE,
//                                            poll_sleep on):
//                                            the same simulated time (sim_ns/cmd), one
//                                            synchronisation per change instead of per poll
//
// Counters next to the wall time ("Time", per iteration):
//   sim_ns        simulated time per iteration (for the hops: the latency the
//                 transaction is annotated with on an idle DRAM bus)
//   bursts        bursts per DMA transfer;  wall_ns/burst, sim_ns/burst
//   mmio/xfer     MMIO accesses the core made per DMA transfer (programming,
//                 polls, acknowledgement)
//   ptw_reads     (SMMU accesses) page-table descriptors read per access
//   sim_ns/cmd    (command queue) simulated time per command, submission to
//                 CONS reaching PROD, from hal_now_ns
//   allocs        (SMMU accesses, command queue) C++ heap allocations per
//                 access or per command, counted by the program's own
//                 operator new (alloc_counter.cc); 0 in steady state is the goal
//
// The SMMU accesses come from a bench-only master ("bench_smmu_probe", bound to
// smmu.upstream next to the DMA engines' ports) that tags its payload with
// StreamID 1 and calls b_transport from core 0's thread. Before the translated
// ones, core 0 programs the SMMU through the HAL as a driver would (stream
// table, CD, 4K-granule page tables in DMA memory, CR0 handshake; see
// tests/integration/smmu_test.cc) and turns SMMUEN off again afterwards, so the
// DMA benchmarks always see GBPA bypass. The TLB-hit accesses all use one page.
// The walk accesses cycle through 511 pages, one under each level-0 entry, so
// that no level's table address is shared between two of them: with the LRU
// TLB (256 entries) and walk cache (64) smaller than that, every access misses
// both and reads 4 descriptors (checked with the SMMU's counters; the
// benchmark fails otherwise). The timed accesses are issued at one simulated
// instant and queue on the SMMU's slots and the DRAM bus, as the router hop's
// do (walks in batches: see kWalkBatch); their sim_ns is the latency of one
// access issued on idle hardware.
//
// SystemC elaborates once per process, so everything lives in one platform:
// sc_main builds it from the inline configuration below with a single app on
// core 0 whose main function runs the benchmarks, so they execute on the
// simulated core's thread, where the HAL works. The bare-hop modules are
// elaborated next to the platform. Burst sizes other than the configured
// devices' (64, 256, 1024, 4096 bytes) are not available.
#include <algorithm>
#include <chrono>
#include <cstdint>
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

#include "alloc_counter.h"
#include "common/sim_time.h"
#include "common/stream_id_extension.h"
#include "common/tlm_time.h"
#include "config/run_config.h"
#include "cpu/cpu_cluster.h"
#include "dma/dma_registers.h"
#include "drivers/dma/dma_engine.h"
#include "hal/hal.h"
#include "platform.h"
#include "smmu/commands.h"
#include "smmu/descriptors.h"
#include "smmu/registers.h"

namespace {

// SystemC prints its banner on stdout unless this is set before it starts;
// a static initialiser runs before SystemC's main().
const bool kQuietSystemC = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;

using smmu_vp::CpuCore;
using smmu_vp::Ps;

// The platform of platform/platforms/base.json (SMMU included: the DMA
// engines' bursts pass through it, bypassed while SMMUEN = 0), with one DMA
// engine per burst size benchmarked (dma0 is base.json's, 256-byte bursts) and
// a deep stack for the core threads: Google Benchmark runs on core 0's.
// Polls sleep (platform.cpu.poll_sleep) so that MsiPoll and ConsPoll measure
// the sleeping of hal_poll32 and hal_read_poll32; nothing else here polls
// with them.
constexpr const char* kConfig = R"json({
  "platform": {
    "cpu": { "count": 4, "frequency_mhz": 2000, "stack_kib": 8192, "poll_sleep": true },
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
    "smmu": { "base": "0x09000000", "profile": "v3.3", "eventq_irq": 64, "gerror_irq": 65, "sync_irq": 66 },
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
    "stop": { "max_time_us": 5e9 }
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
Initiator* g_smmu_probe = nullptr;

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

// The reference for BM_HalRead32_Mmio: what a synchronisation costs with
// nothing but the SystemC kernel in it (the core's local time is synced
// first, so that the waits below start from a clean quantum).
void BM_SystemCWait(benchmark::State& state) {
  core().sync();
  const sc_core::sc_time one_ns(1, sc_core::SC_NS);
  for (auto _ : state) sc_core::wait(one_ns);
  state.counters["sim_ns"] = 1.0;
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

// ---- (d) DMA-master accesses through the SMMU

namespace reg = smmu_vp::smmu::reg;

constexpr uint32_t kProbeSid = 1;           // no DMA engine's
constexpr unsigned kWalkPages = 511;        // one per level-0 entry; the last is the TLB-hit page's
constexpr unsigned kAccessBytes = 64;       // one cache line
// The timed accesses are issued at one simulated instant and queue in
// simulated time; what they reserve (Resource) is kept as busy intervals,
// which make every later reservation slower as they accumulate, so the
// benchmarks keep them few. Bypassed and TLB-hit accesses: their 64-byte reads
// keep the DRAM bus busy back to back (8-byte ones would leave it idle between
// groups of translations) and the translations fill the SMMU's translation
// slots back to back, so each timeline stays one interval however many are
// queued. Walks: their descriptor reads are spread over the walk latency and
// leave about 5 bus intervals per access, so they go in batches of
// kWalkBatch; between batches, outside the timing, core 0 lets simulated time
// pass the batch and the DRAM model forgets its bus intervals. Each batch
// leaves one interval on each of the translator's translation and walker
// slots, which it never forgets.
constexpr uint64_t kWalkBatch = 1u << 16;

// Mapped page i, under level-0 entry i, the lower indices spread so that the
// pages fall in different TLB sets: the walk benchmark's access n reads
// through page n % kWalkPages, the TLB-hit benchmark's through page kWalkPages,
// which shares no table with them.
uint64_t walk_iova(unsigned i) {
  return (uint64_t{i} << 39) | (uint64_t{(i * 7) & 511} << 30) | (uint64_t{(i * 13) & 511} << 21) |
         (uint64_t{(i * 29) & 511} << 12);
}

struct SmmuSetup {
  bool done = false;
  std::string error;          // non-empty: cannot benchmark
  phys_addr_t regs = 0;       // SMMU register page 0
  phys_addr_t data_pa = 0;    // the 4 KiB page every access reads (at +0x80)
};
SmmuSetup g_smmu;

void smmu_cr0(uint32_t v) {
  hal_write32(g_smmu.regs + reg::kCr0, v);
  while (hal_read32(g_smmu.regs + reg::kCr0Ack) != v) hal_cpu_relax();
}

// Stream table (64 STEs, linear), the probe's STE (stage 1) and CD (4K
// granule, T0SZ 16, ASID 1) and 4 levels of tables for each page, every leaf
// mapping data_pa; SMMUEN stays 0. Done once, by core 0 through the HAL.
const std::string& smmu_setup() {
  SmmuSetup& s = g_smmu;
  if (s.done) return s.error;
  s.done = true;
  s.regs = hal_smmu().base;
  if (hal_smmu().size == 0) return s.error = "the platform has no SMMU";
  if (!g_smmu_probe) return s.error = "no master bound to smmu.upstream";

  phys_addr_t strtab = 0, cd_pa = 0, tables = 0;
  auto* ste_mem = static_cast<uint64_t*>(hal_dma_alloc(64 * 64, 4096, &strtab));
  auto* cd_mem = static_cast<uint64_t*>(hal_dma_alloc(64, 64, &cd_pa));
  // Level 0, then levels 1, 2, 3 for each page.
  const unsigned n_pages = kWalkPages + 1;
  const unsigned n_tables = 1 + 3 * n_pages;
  auto* tbl = static_cast<uint64_t*>(hal_dma_alloc(size_t{n_tables} * 4096, 4096, &tables));
  if (!ste_mem || !cd_mem || !tbl || !hal_dma_alloc(4096, 4096, &s.data_pa)) return s.error = "hal_dma_alloc failed";
  std::memset(ste_mem, 0, 64 * 64);
  std::memset(tbl, 0, size_t{n_tables} * 4096);
  auto table_pa = [&](unsigned t) { return tables + uint64_t{t} * 4096; };
  auto entry = [&](unsigned t, unsigned idx) -> uint64_t& { return tbl[size_t{t} * 512 + idx]; };
  for (unsigned i = 0; i < n_pages; ++i) {
    const uint64_t va = walk_iova(i);
    const unsigned l1 = 1 + 3 * i, l2 = l1 + 1, l3 = l1 + 2;
    entry(0, (va >> 39) & 511) = table_pa(l1) | 3;  // table descriptors
    entry(l1, (va >> 30) & 511) = table_pa(l2) | 3;
    entry(l2, (va >> 21) & 511) = table_pa(l3) | 3;
    // Page: AF, inner shareable, AttrIndx 0, AP[1] (EL0 access) so any access passes.
    entry(l3, (va >> 12) & 511) = s.data_pa | 3 | (1u << 10) | (3u << 8) | (1u << 6);
  }

  smmu_vp::smmu::DecodedCd cd;
  cd.t0sz = 16;
  cd.granule = smmu_vp::smmu::Granule::k4K;
  cd.ips_bits = 48;
  cd.asid = 1;
  cd.ttb0 = table_pa(0);
  const smmu_vp::smmu::CdWords cdw = smmu_vp::smmu::encode_cd(cd);
  std::memcpy(cd_mem, cdw.data(), sizeof cdw);
  smmu_vp::smmu::DecodedSte ste;
  ste.config = smmu_vp::smmu::ste::kS1Trans;
  ste.s1_context_ptr = cd_pa;
  const smmu_vp::smmu::SteWords stw = smmu_vp::smmu::encode_ste(ste);
  std::memcpy(ste_mem + kProbeSid * 8, stw.data(), sizeof stw);
  hal_barrier(HAL_BARRIER_DSB);

  smmu_cr0(0);
  hal_write64(s.regs + reg::kStrtabBase, strtab);
  hal_write32(s.regs + reg::kStrtabBaseCfg, reg::strtab_base_cfg::kLog2Size.place(6));
  return s.error;
}

// The probe's read of kAccessBytes at `addr`, issued `delay` after the
// current simulated time; `delay` comes back as the completion time.
class SmmuMaster {
 public:
  SmmuMaster() {
    t_.set_data_ptr(data_);
    t_.set_data_length(kAccessBytes);
    t_.set_streaming_width(kAccessBytes);
    t_.set_extension(new smmu_vp::StreamIdExtension(kProbeSid, 0, false));  // owned by t_
  }
  bool read(uint64_t addr, sc_core::sc_time& delay) {
    t_.set_command(tlm::TLM_READ_COMMAND);
    t_.set_address(addr);
    t_.set_byte_enable_ptr(nullptr);
    t_.set_dmi_allowed(false);
    t_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    g_smmu_probe->socket->b_transport(t_, delay);
    benchmark::DoNotOptimize(data_);
    return t_.is_response_ok();
  }
  // Issued at core 0's local time on idle hardware (after every access so far
  // has completed): the latency, in ns.
  double unloaded_ns(uint64_t addr, bool* ok) {
    const Ps local = core().now() - smmu_vp::now_ps();
    sc_core::sc_time delay = smmu_vp::ps_to_sc(local);
    *ok = read(addr, delay);
    return ps_to_d(smmu_vp::sc_to_ps(delay) - local);
  }

 private:
  static double ps_to_d(Ps ps) { return smmu_vp::ps_to_ns(ps); }
  tlm::tlm_generic_payload t_;
  unsigned char data_[kAccessBytes] = {};
};

// Lets simulated time pass `until` (and the DRAM bus's last reservation).
void sync_past(Ps until) {
  until = std::max(until, g_platform->dram().core().bus().last_end());
  if (until > core().now()) hal_delay_ns((until - core().now()) / smmu_vp::kPsPerNs + 1);
  (void)hal_now_ps();  // synchronise: simulated time passes the reservations
}

// sync_past, then 64 reads of DRAM through the router probe: the DRAM model
// forgets its past bus reservations on one access in 64, and that is better
// done here, outside the timing, than on the next timed access.
void settle(Ps until) {
  sync_past(until);
  tlm::tlm_generic_payload t;
  uint64_t data = 0;
  t.set_command(tlm::TLM_READ_COMMAND);
  t.set_address(dram_scratch() + 128);
  t.set_data_ptr(reinterpret_cast<unsigned char*>(&data));
  t.set_data_length(8);
  t.set_streaming_width(8);
  for (int i = 0; i < 64; ++i) {
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    g_router_probe->socket->b_transport(t, d);
  }
  sync_past(core().now());
}

uint64_t smmu_counter(const char* leaf) {
  const smmu_vp::Counter* c = g_platform->stats().find_counter(std::string("smmu.") + leaf);
  return c ? c->value() : 0;
}

struct SmmuCounters {
  uint64_t wc_hits, ptw_reads[4], bypass;
  static SmmuCounters read() {
    SmmuCounters c{};
    c.wc_hits = smmu_counter("walk_cache.hits");
    for (int l = 0; l < 4; ++l) c.ptw_reads[l] = smmu_counter(("ptw.reads.s1.l" + std::to_string(l)).c_str());
    c.bypass = smmu_counter("bypass_transactions");
    return c;
  }
  uint64_t reads() const { return ptw_reads[0] + ptw_reads[1] + ptw_reads[2] + ptw_reads[3]; }
};

enum class SmmuCase { kUntranslated, kTlbHit, kWalk4Level };

void smmu_access(benchmark::State& state, SmmuCase which) {
  if (const std::string& e = smmu_setup(); !e.empty()) {
    state.SkipWithError(e.c_str());
    return;
  }
  const bool translate = which != SmmuCase::kUntranslated;
  smmu_cr0(translate ? reg::cr0::kSmmuEn.mask32() : 0);
  const uint64_t offset = 0x80;
  const uint64_t hit_addr = translate ? walk_iova(kWalkPages) + offset : g_smmu.data_pa + offset;
  auto addr_of = [&](uint64_t i) {
    return which == SmmuCase::kWalk4Level ? walk_iova(static_cast<unsigned>(i % kWalkPages)) + offset : hit_addr;
  };
  // Where the walk benchmark goes on from between runs of this function: its
  // cycle must not restart at pages the caches may still hold.
  static uint64_t next_walk = 0;
  uint64_t i = which == SmmuCase::kWalk4Level ? next_walk : 0;

  SmmuMaster m;
  bool ok = true;
  if (which == SmmuCase::kTlbHit) {
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ok = m.read(hit_addr, d);  // fills the TLB (and the config cache)
    sync_past(smmu_vp::now_ps() + smmu_vp::sc_to_ps(d));
  }
  const SmmuCounters c0 = SmmuCounters::read();
  bool probe_ok = false;
  const double unloaded_ns = m.unloaded_ns(addr_of(i++), &probe_ok);
  ok = ok && probe_ok;
  settle(core().now());

  const uint64_t batch = which == SmmuCase::kWalk4Level ? kWalkBatch : UINT64_MAX;
  uint64_t n = 0;
  Ps batch_start = smmu_vp::now_ps();
  sc_core::sc_time batch_end = sc_core::SC_ZERO_TIME;  // latest completion, from batch_start
  const uint64_t allocs0 = smmu_vp::bench::heap_allocations();
  for (auto _ : state) {
    if (++n == batch) {
      state.PauseTiming();
      settle(batch_start + smmu_vp::sc_to_ps(batch_end));
      batch_start = smmu_vp::now_ps();
      batch_end = sc_core::SC_ZERO_TIME;
      n = 0;
      state.ResumeTiming();
    }
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ok &= m.read(addr_of(i++), d);
    if (d > batch_end) batch_end = d;
  }
  const uint64_t allocs = smmu_vp::bench::heap_allocations() - allocs0;
  const SmmuCounters c1 = SmmuCounters::read();
  if (which == SmmuCase::kWalk4Level) next_walk = i;
  settle(batch_start + smmu_vp::sc_to_ps(batch_end));
  if (translate) smmu_cr0(0);

  const uint64_t accesses = state.iterations() + 1;  // with the unloaded one
  const uint64_t reads = c1.reads() - c0.reads();
  if (!ok) {
    state.SkipWithError("an access through the SMMU failed");
  } else if (which == SmmuCase::kUntranslated && c1.bypass - c0.bypass != accesses) {
    state.SkipWithError("not every access was bypassed by the SMMU");
  } else if (translate && c1.bypass != c0.bypass) {
    state.SkipWithError("an access was not translated");
  } else if (which == SmmuCase::kTlbHit && reads != 0) {
    state.SkipWithError("not every access hit the TLB");
  } else if (which == SmmuCase::kWalk4Level) {
    bool four = c1.wc_hits == c0.wc_hits;
    for (int l = 0; l < 4; ++l) four = four && c1.ptw_reads[l] - c0.ptw_reads[l] == accesses;
    if (!four) state.SkipWithError("not every access missed the TLB and walk cache and walked 4 levels");
  }
  state.counters["sim_ns"] = unloaded_ns;
  state.counters["ptw_reads"] = static_cast<double>(reads) / static_cast<double>(accesses);
  state.counters["allocs"] = static_cast<double>(allocs) / static_cast<double>(state.iterations());
}

void BM_SmmuAccess_Untranslated(benchmark::State& state) { smmu_access(state, SmmuCase::kUntranslated); }
void BM_SmmuAccess_TlbHit(benchmark::State& state) { smmu_access(state, SmmuCase::kTlbHit); }
void BM_SmmuAccess_Walk4Level(benchmark::State& state) { smmu_access(state, SmmuCase::kWalk4Level); }

// ---- (e) the SMMU's command queue

constexpr unsigned kCmdqLog2 = 8;  // 2^8 commands: the largest batch (63 + SYNC) fits

// The command queue, in DMA memory; allocated once, (re)programmed with
// PROD = CONS = 0 and enabled (CMDQEN only) at the start of each run of the
// benchmark, disabled again at its end so that the access benchmarks find
// CR0 as smmu_cr0 leaves it.
uint64_t* g_cmdq = nullptr;
phys_addr_t g_cmdq_pa = 0;

// How a batch's CMD_SYNC is waited for.
enum class SyncWait { kCons, kConsPoll, kMsiLoop, kMsiPoll };
volatile uint32_t* g_msi_word = nullptr;
phys_addr_t g_msi_word_pa = 0;

struct ConsTarget {
  uint32_t mask, prod;
};
bool cons_reached(uint32_t cons, const void* arg) {
  const auto* t = static_cast<const ConsTarget*>(arg);
  return (cons & t->mask) == t->prod;
}

// Waits until the MSI word differs from `old`, as the loop or as hal_poll32.
uint32_t wait_msi(SyncWait how, uint32_t old) {
  if (how == SyncWait::kMsiPoll) return hal_poll32(g_msi_word, ~0u, old, HAL_POLL_NE, 0, nullptr);
  uint32_t v;
  while ((v = hal_load32(g_msi_word)) == old) hal_cpu_relax();
  return v;
}

void cmdq_batches(benchmark::State& state, SyncWait how, unsigned run = 0) {
  if (const std::string& e = smmu_setup(); !e.empty()) {
    state.SkipWithError(e.c_str());
    return;
  }
  if (!g_cmdq) g_cmdq = static_cast<uint64_t*>(hal_dma_alloc(16u << kCmdqLog2, 4096, &g_cmdq_pa));
  if (!g_msi_word) g_msi_word = static_cast<volatile uint32_t*>(hal_dma_alloc(64, 64, &g_msi_word_pa));
  if (!g_cmdq || !g_msi_word) {
    state.SkipWithError("hal_dma_alloc failed");
    return;
  }
  const phys_addr_t regs = g_smmu.regs;
  const unsigned n_tlbi = static_cast<unsigned>(state.range(0));
  const uint32_t slot_mask = (1u << kCmdqLog2) - 1;
  const uint32_t idx_mask = (2u << kCmdqLog2) - 1;  // index and wrap bit
  smmu_cr0(0);
  hal_write64(regs + reg::kCmdqBase, g_cmdq_pa | reg::queue_base::kLog2Size.place(kCmdqLog2));
  hal_write32(regs + reg::kCmdqProd, 0);
  hal_write32(regs + reg::kCmdqCons, 0);
  smmu_cr0(reg::cr0::kCmdqEn.mask32());

  const uint64_t tlbi0 = smmu_counter("cmdq.executed.CMD_TLBI_NH_VA");
  const uint64_t sync0 = smmu_counter("cmdq.syncs");
  const bool msi = how == SyncWait::kMsiLoop || how == SyncWait::kMsiPoll;
  uint32_t seq = hal_load32(g_msi_word);
  uint32_t prod = 0;
  uint64_t va = 0x4000'0000;
  bool ok = true;
  auto put = [&](const smmu_vp::smmu::CommandWords& c) {
    uint64_t* slot = g_cmdq + 2 * (prod & slot_mask);
    slot[0] = c[0];
    slot[1] = c[1];
    prod = (prod + 1) & idx_mask;
  };
  const uint64_t t0 = hal_now_ns();
  const uint64_t allocs0 = smmu_vp::bench::heap_allocations();
  for (auto _ : state) {
    for (unsigned i = 0; i < n_tlbi; ++i) {
      put(smmu_vp::smmu::cmd_tlbi_nh_va(1, 0, va, true));
      va += 4096;
    }
    if (msi) put(smmu_vp::smmu::cmd_sync(smmu_vp::smmu::SyncCs::kIrq, g_msi_word_pa, ++seq));
    else put(smmu_vp::smmu::cmd_sync(smmu_vp::smmu::SyncCs::kNone));
    hal_barrier(HAL_BARRIER_DSB);
    hal_write32(regs + reg::kCmdqProd, prod);
    if (msi) {
      for (uint32_t v = hal_load32(g_msi_word); v != seq;) {
        hal_cpu_relax();
        v = wait_msi(how, v);
      }
      continue;
    }
    if (how == SyncWait::kConsPoll) {
      const ConsTarget target{idx_mask, prod};
      const unsigned reads = run ? run : 1u << 20;
      while (!cons_reached(hal_read_poll32(regs + reg::kCmdqCons, cons_reached, &target, reads, nullptr), &target)) {
        const uint32_t active = hal_read32(regs + reg::kGerror) ^ hal_read32(regs + reg::kGerrorn);
        if (active & reg::gerror::kCmdqErr.mask32()) {
          ok = false;
          break;
        }
      }
      if (!ok) break;
      continue;
    }
    while ((hal_read32(regs + reg::kCmdqCons) & idx_mask) != prod) {
      const uint32_t active = hal_read32(regs + reg::kGerror) ^ hal_read32(regs + reg::kGerrorn);
      if (active & reg::gerror::kCmdqErr.mask32()) {
        ok = false;
        break;
      }
      hal_cpu_relax();
    }
    if (!ok) break;
  }
  const uint64_t allocs = smmu_vp::bench::heap_allocations() - allocs0;
  const uint64_t t1 = hal_now_ns();
  smmu_cr0(0);

  const uint64_t iters = state.iterations();
  const uint64_t cmds = iters * (n_tlbi + 1);
  if (!ok) {
    state.SkipWithError("the command queue stopped on an error");
    return;
  }
  if (smmu_counter("cmdq.executed.CMD_TLBI_NH_VA") - tlbi0 != iters * n_tlbi ||
      smmu_counter("cmdq.syncs") - sync0 != iters) {
    state.SkipWithError("the SMMU did not execute every command submitted");
    return;
  }
  state.SetItemsProcessed(static_cast<int64_t>(cmds));
  if (cmds == 0) return;
  state.counters["sim_ns/cmd"] = static_cast<double>(t1 - t0) / static_cast<double>(cmds);
  state.counters["allocs"] = static_cast<double>(allocs) / static_cast<double>(cmds);
}

void BM_SmmuCmdq_TlbiVaSync(benchmark::State& state) { cmdq_batches(state, SyncWait::kCons); }
void BM_SmmuCmdq_TlbiVaSyncConsPoll(benchmark::State& state) {
  cmdq_batches(state, SyncWait::kConsPoll, static_cast<unsigned>(state.range(1)));
}
void BM_SmmuCmdq_TlbiVaSyncMsiLoop(benchmark::State& state) { cmdq_batches(state, SyncWait::kMsiLoop); }
void BM_SmmuCmdq_TlbiVaSyncMsiPoll(benchmark::State& state) { cmdq_batches(state, SyncWait::kMsiPoll); }

BENCHMARK(BM_HalRead64_Dram)->UseRealTime();
BENCHMARK(BM_HalWrite64_Dram)->UseRealTime();
BENCHMARK(BM_HalRead32_Mmio)->UseRealTime();
BENCHMARK(BM_SystemCWait)->UseRealTime();
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
BENCHMARK(BM_SmmuAccess_Untranslated)->UseRealTime();
BENCHMARK(BM_SmmuAccess_TlbHit)->UseRealTime();
BENCHMARK(BM_SmmuAccess_Walk4Level)->UseRealTime();
BENCHMARK(BM_SmmuCmdq_TlbiVaSync)->ArgName("N")->Arg(1)->Arg(15)->Arg(63)->UseRealTime();
BENCHMARK(BM_SmmuCmdq_TlbiVaSyncConsPoll)
    ->ArgNames({"N", "run"})
    ->ArgsProduct({{1, 15, 63}, {16, 0}})
    ->UseRealTime();
BENCHMARK(BM_SmmuCmdq_TlbiVaSyncMsiLoop)->ArgName("N")->Arg(1)->Arg(15)->Arg(63)->UseRealTime();
BENCHMARK(BM_SmmuCmdq_TlbiVaSyncMsiPoll)->ArgName("N")->Arg(1)->Arg(15)->Arg(63)->UseRealTime();

int bench_main(void) {
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}

const hal_param_decl kNoParams[] = {{nullptr, 0, nullptr, 0, nullptr}};
const hal_app kBenchApp = {"bench", "Google Benchmark suite (tests/bench/hal_bench.cc)", bench_main, kNoParams};

}  // namespace

// SystemC's own main() calls sc_main with the command line.
int sc_main(int argc, char** argv) {
  (void)kQuietSystemC;
  smmu_vp::use_ranked_time();  // before any sc_time is made (common/tlm_time.h)
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

    // SMMU_VP_BENCH_TBUS=1: the same platform with a distributed SMMU (one
    // TBU before every master, the bench's probe included), so that the
    // BM_SmmuAccess_* rows time a TBU's path (docs/performance.md).
    std::vector<std::string> sets;
    if (const char* tbus = std::getenv("SMMU_VP_BENCH_TBUS"); tbus && std::string(tbus) == "1")
      sets.push_back(R"(platform.smmu.tbus=[{"name":"t0","masters":["dma0","dma_b64","dma_b1024","dma_b4096"]}])");
    const smmu_vp::config::RunConfig cfg =
        smmu_vp::config::build_run_config(nlohmann::json::parse(kConfig), ".", sets, {&kBenchApp});
    smmu_vp::Platform platform(cfg, nullptr, log);
    g_platform = &platform;
    Initiator probe("bench_router_probe");
    probe.socket.bind(platform.router().upstream);
    g_router_probe = &probe;
    // A DMA master of the bench's own, next to the engines' ports.
    std::unique_ptr<Initiator> smmu_probe;
    if (platform.smmu()) {
      smmu_probe = std::make_unique<Initiator>("bench_smmu_probe");
      smmu_probe->socket.bind(platform.smmu()->upstream);
      g_smmu_probe = smmu_probe.get();
    }

    const smmu_vp::RunResult r = platform.run();
    g_platform = nullptr;
    g_smmu_probe = nullptr;
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

// The seed-001 and seed-004 microbenchmarks (iova_bench, swiotlb_bench) on
// the platform with small parameters: each runs to completion and its stats
// move in the direction the seed's optimisation predicts. Only simulated
// quantities are checked (node visits, slot scans, simulated rates).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "invariants.h"
#include "platform_fixture.h"

namespace smmu_vp::test {
namespace {

double value(const TestRun& t, const std::string& path) {
  const double* v = t.stats().find_value(path);
  EXPECT_NE(v, nullptr) << "no stat " << path;
  return v ? *v : 0.0;
}

constexpr uint64_t kLive = 512;

nlohmann::json iova_app(unsigned rcache) {
  return {{"app", "iova_bench"},
          {"cores", {0}},
          {"params", {{"live", kLive}, {"pairs", 200}, {"inflight", 8}, {"iova_cache_policy", 2}, {"rcache", rcache}}}};
}

TEST(IommuBench, IovaCachedNodePerSpaceVisitsFarFewerNodes) {
  const TestRun t = run(scenario({iova_app(0)}), {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  const double before = value(t, "sw.iova_bench.cached32_only.nodes_per_alloc");
  const double after = value(t, "sw.iova_bench.cached32_and_64.nodes_per_alloc");
  // Before 2017 every 64-bit search starts at the top and steps over each
  // live IOVA; with its own cached node it starts next to the last insert.
  EXPECT_GE(before, static_cast<double>(kLive));
  EXPECT_LT(after, 16.0);
  EXPECT_GT(before, 30.0 * after);
  // The walk is charged simulated time, so the pair rate follows it.
  EXPECT_GT(value(t, "sw.iova_bench.cached32_and_64.allocs_per_s"),
            10.0 * value(t, "sw.iova_bench.cached32_only.allocs_per_s"));
  EXPECT_DOUBLE_EQ(value(t, "sw.iova_bench.cached32_only.seed_mbps"), 6.48);
  EXPECT_DOUBLE_EQ(value(t, "sw.iova_bench.cached32_and_64.seed_mbps"), 933.0);
  const Histogram* pair_ns = t.histogram("sw.iova_bench.cached32_only.pair_ns");
  ASSERT_NE(pair_ns, nullptr);
  EXPECT_EQ(pair_ns->count(), 200u);
}

// Cold tree walks (hal_cost_walk, platform.cpu.*cache*): in the steady state
// the tree holds kLive + 8 in flight + the anchor = 521 nodes of 64 bytes;
// with 8 KiB of private cache and nothing shared, each cached32_only
// allocation walks them all and takes 521 - 128 = 393 from memory, at least
// 39.3 us at 100 ns, where the flat steps cost about 16 us. The cached
// node's short walks fit and stay cheap. (The exact charge per walk:
// Timing.ColdWalkChargesWhatTheCachesCannotHold.)
TEST(IommuBench, IovaColdWalkChargesTheWholeTreeBeforeTheCachedNode) {
  const TestRun t =
      run(scenario({iova_app(0)}), {}, {"platform.cpu.private_cache_kib=8", "platform.cpu.memory_load_ns=100"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GT(value(t, "sw.iova_bench.cached32_only.ns_per_pair"), 393 * 100.0);
  EXPECT_LT(value(t, "sw.iova_bench.cached32_and_64.ns_per_pair"), 2000.0);
}

TEST(IommuBench, IovaRcacheKeepsTheSteadyStateOffTheTree) {
  const TestRun t = run(scenario({iova_app(1)}), {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  // Only the first `inflight` allocations miss the empty magazines.
  EXPECT_LT(value(t, "sw.iova_bench.cached32_only.nodes_per_alloc"), static_cast<double>(kLive) / 4);
  EXPECT_GT(value(t, "sw.iova_bench.cached32_only.rcache_hits"), 150.0);
  EXPECT_EQ(value(t, "sw.iova_bench.cached32_and_64.nodes_per_free"), 0.0);
}

// Long enough for pool-first's shared areas to fragment (its slot scans grow
// over the first thousands of maps).
constexpr unsigned kSwiotlbIterations = 1000;

nlohmann::json swiotlb_app(std::vector<unsigned> cores) {
  return {{"app", "swiotlb_bench"},
          {"cores", cores},
          {"params",
           {{"iterations", kSwiotlbIterations},
            {"map_bytes", 4096},
            {"queue_depth", 96},
            {"cores", cores.size()},
            {"search", 2}}}};
}

TEST(IommuBench, SwiotlbAreaFirstScansLessWhenCoresShareThePools) {
  const TestRun t = run(scenario({swiotlb_app({0, 1, 2, 3})}), {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(value(t, "sw.swiotlb_bench.pool_first.map_failures"), 0.0);
  EXPECT_EQ(value(t, "sw.swiotlb_bench.area_first.map_failures"), 0.0);
  // Each core's own area in pool 0 is full: pool-first moves on into the
  // other cores' areas of pool 0, area-first into its own area of pool 1.
  const double pf_slots = value(t, "sw.swiotlb_bench.pool_first.slots_per_map");
  const double af_slots = value(t, "sw.swiotlb_bench.area_first.slots_per_map");
  EXPECT_GT(pf_slots, 2.0 * af_slots);
  EXPECT_GT(value(t, "sw.swiotlb_bench.pool_first.areas_per_map"),
            value(t, "sw.swiotlb_bench.area_first.areas_per_map"));
  EXPECT_GT(value(t, "sw.swiotlb_bench.area_first.pools"), 1.0);
  EXPECT_GT(value(t, "sw.swiotlb_bench.gain_pct"), 0.0);
  EXPECT_DOUBLE_EQ(value(t, "sw.swiotlb_bench.seed_gain_pct"), 23.6);
  const Histogram* map_ns = t.histogram("sw.swiotlb_bench.area_first.map_ns");
  ASSERT_NE(map_ns, nullptr);
  EXPECT_EQ(map_ns->count(), 4u * kSwiotlbIterations);
}

TEST(IommuBench, SwiotlbOneCoreSeesTheSameBucketsInEitherOrder) {
  // One mapping core tries the same (pool, area) pairs in both orders, only
  // relabelled, so the searches cost the same (docs/results.md).
  const TestRun t = run(scenario({swiotlb_app({0})}), {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_DOUBLE_EQ(value(t, "sw.swiotlb_bench.pool_first.slots_per_map"),
                   value(t, "sw.swiotlb_bench.area_first.slots_per_map"));
  EXPECT_DOUBLE_EQ(value(t, "sw.swiotlb_bench.pool_first.maps_per_s"),
                   value(t, "sw.swiotlb_bench.area_first.maps_per_s"));
  EXPECT_DOUBLE_EQ(value(t, "sw.swiotlb_bench.seed_gain_pct"), 25.4);
  // Maps and unmaps on one core: no area lock ever changes hands.
  EXPECT_EQ(value(t, "sw.swiotlb_bench.pool_first.lock_handoffs_per_map"), 0.0);
  EXPECT_EQ(value(t, "sw.swiotlb_bench.area_first.lock_handoffs_per_map"), 0.0);
}

// irq_core: every unmap runs on another core than the map, as a virtio
// completion interrupt on another vCPU runs it. One job with 1.5 pools in
// flight (seed 004's one-job cases on the x86 VM profile).
nlohmann::json swiotlb_irq_app(unsigned mappers, unsigned queue_depth) {
  std::vector<unsigned> cores;
  for (unsigned c = 0; c <= mappers; ++c) cores.push_back(c);
  return {{"app", "swiotlb_bench"},
          {"cores", cores},
          {"params",
           {{"iterations", kSwiotlbIterations},
            {"map_bytes", 4096},
            {"queue_depth", queue_depth},
            {"cores", mappers},
            {"irq_core", mappers},
            {"search", 2}}}};
}

TEST(IommuBench, SwiotlbIrqCoreTakesTheAreaLocksFromASecondCore) {
  nlohmann::json s = scenario({swiotlb_irq_app(1, 384)});
  s["platform"]["cpu"]["count"] = 2;
  const TestRun t = run(s, {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(value(t, "sw.swiotlb_bench.pool_first.map_failures"), 0.0);
  // Each map takes its area's lock from the core that unmapped there last,
  // and each unmap takes it back: about two hand-offs per I/O.
  EXPECT_GT(value(t, "sw.swiotlb_bench.pool_first.lock_handoffs_per_map"), 1.5);
  EXPECT_GT(value(t, "sw.swiotlb_bench.area_first.lock_handoffs_per_map"), 1.5);
  // Every mapping was unmapped (the pools end empty and are destroyed), and
  // the queue needs a second pool.
  EXPECT_EQ(value(t, "sw.swiotlb_bench.area_first.pools"), 2.0);
  // The hand-offs are the same in both orders, and so is the one mapping
  // CPU's search: the gain stays near zero (docs/results.md).
  EXPECT_LT(std::abs(value(t, "sw.swiotlb_bench.gain_pct")), 0.5);
  const Histogram* map_ns = t.histogram("sw.swiotlb_bench.pool_first.map_ns");
  ASSERT_NE(map_ns, nullptr);
  EXPECT_EQ(map_ns->count(), kSwiotlbIterations);
}

TEST(IommuBench, SwiotlbIrqCoreFourJobsStillGainFromAreaFirst) {
  nlohmann::json s = scenario({swiotlb_irq_app(4, 96)});
  s["platform"]["cpu"]["count"] = 5;
  const TestRun t = run(s, {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  // Pool-first sends a job whose area of pool 0 is full into the other jobs'
  // areas of pool 0, which their unmaps (on the irq core) hold last too.
  EXPECT_GT(value(t, "sw.swiotlb_bench.pool_first.areas_per_map"),
            value(t, "sw.swiotlb_bench.area_first.areas_per_map"));
  EXPECT_GT(value(t, "sw.swiotlb_bench.pool_first.lock_handoffs_per_map"),
            value(t, "sw.swiotlb_bench.area_first.lock_handoffs_per_map"));
  EXPECT_GT(value(t, "sw.swiotlb_bench.gain_pct"), 0.0);
  EXPECT_DOUBLE_EQ(value(t, "sw.swiotlb_bench.seed_gain_pct"), 23.6);
}

// The shipped scenario files, scaled down: they load, and each table's
// stats come out.
TestRun run_shipped(const std::string& file, const std::vector<std::string>& overrides) {
  TestRun t;
  auto cfg = config::load_run_config(SMMU_VP_SOURCE_DIR "/platform/scenarios/" + file, overrides, with_builtin({}));
  auto log = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  t.platform = std::make_unique<Platform>(cfg, nullptr, log);
  t.result = t.platform->run();
  return t;
}

TEST(IommuBench, ShippedSeed001ScenarioRuns) {
  const TestRun t = run_shipped("seed001_iova.json", {"scenario.apps.0.params.live=256", "scenario.apps.0.params.pairs=50"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GT(value(t, "sw.iova_bench.cached32_only.mbps"), 0.0);
  EXPECT_GT(value(t, "sw.iova_bench.cached32_and_64.mbps"), value(t, "sw.iova_bench.cached32_only.mbps"));
}

TEST(IommuBench, ShippedSeed004ScenarioRuns) {
  const TestRun t = run_shipped("seed004_swiotlb.json", {"scenario.apps.0.params.iterations=200"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GT(value(t, "sw.swiotlb_bench.pool_first.maps_per_s"), 0.0);
  EXPECT_GT(value(t, "sw.swiotlb_bench.area_first.maps_per_s"), 0.0);
  EXPECT_DOUBLE_EQ(value(t, "sw.swiotlb_bench.seed_gain_pct"), 23.6);
}


// dma_map_bench (Linux's dma_map_benchmark): every unmap in strict mode is a
// TLBI and a CMD_SYNC through the command queue, shared by the app's cores.
TEST(IommuBench, DmaMapBenchIssuesATlbiAndASyncPerUnmap) {
  nlohmann::json s = scenario({{{"app", "dma_map_bench"}, {"cores", {0, 1, 2, 3}}, {"params", {{"runtime_us", 50}, {"warmup_us", 5}}}}});
  s["platform"]["cpu"]["line_queueing"] = true;
  const TestRun t = run(s, {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  const Histogram* unmaps = t.histogram("sw.dma_map_bench.unmap_ns");
  ASSERT_TRUE(unmaps);
  EXPECT_GT(unmaps->count(), 40u);
  // Each map+unmap (warm-up and window) issues a TLBI and a SYNC; the bring-up adds a few commands.
  const double syncs = value(t, "sw.dma_map_bench.smmu_syncs");
  EXPECT_GE(syncs, static_cast<double>(unmaps->count()));
  EXPECT_GE(value(t, "sw.dma_map_bench.smmu_commands"), 2 * syncs - 8);
  EXPECT_EQ(t.counter("smmu.cmdq.syncs"), static_cast<uint64_t>(syncs));
  const double per_cpu = value(t, "sw.dma_map_bench.map_unmap_per_s_per_cpu");
  EXPECT_NEAR(value(t, "sw.dma_map_bench.map_unmap_per_s_total"), 4 * per_cpu, 1.0);
  // The cores share the queue's words: lines moved between them.
  EXPECT_GT(t.counter("cpus.cpu1.cacheline_transfers"), 0u);
  // The window's halves (the steady-state check, invariants.h) hold every
  // map+unmap of the window, 4 KiB each, and on four cores agree.
  const double first = static_cast<double>(t.counter("sw.dma_map_bench.window_bytes_first_half"));
  const double second = static_cast<double>(t.counter("sw.dma_map_bench.window_bytes_second_half"));
  EXPECT_NEAR(first + second, 4 * per_cpu * 50e-6 * 4096, 1.0);
  EXPECT_GT(first, 0.0);
  EXPECT_NEAR(second, first, 0.1 * first);
  // The default queue claims with cmpxchg: at least one attempt per claim.
  EXPECT_GE(value(t, "sw.dma_map_bench.cmdq_claim_attempts_per_claim"), 1.0);
}

// batch: a core maps that many buffers, copying copy_bytes after each map,
// then unmaps them all (the harness of John Garry's LKML tables). Every
// round begun in the window is counted whole, and the copies take the time
// the cost table gives them: 4096 bytes are 64 x memcpy_64b, 12 cycles each
// on the base profile at 2 GHz, 384 ns beside each map and unmap.
TEST(IommuBench, DmaMapBenchBatchMapsThenUnmapsWithACopyAfterEachMap) {
  constexpr double kWindowNs = 400000, kCopyNs = 64 * 12 / 2.0;
  nlohmann::json s = scenario({{{"app", "dma_map_bench"},
                                {"cores", {0}},
                                {"params", {{"runtime_us", 400}, {"warmup_us", 5}, {"batch", 8}, {"copy_bytes", 4096}}}}});
  const TestRun t = run(s, {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  const Histogram* maps = t.histogram("sw.dma_map_bench.map_ns");
  const Histogram* unmaps = t.histogram("sw.dma_map_bench.unmap_ns");
  ASSERT_TRUE(maps && unmaps);
  EXPECT_EQ(maps->count(), unmaps->count());
  EXPECT_EQ(maps->count() % 8, 0u) << "whole rounds of 8";
  EXPECT_GT(maps->count(), 80u);
  const uint64_t bytes =
      t.counter("sw.dma_map_bench.window_bytes_first_half") + t.counter("sw.dma_map_bench.window_bytes_second_half");
  EXPECT_EQ(bytes, maps->count() * 4096);
  // The window's time beside the maps and unmaps, per map+unmap: the copy
  // and the loop (the last round may run past the window by a few ops).
  const double ops = static_cast<double>(maps->count());
  const double beside = (kWindowNs - ops * (maps->mean() + unmaps->mean())) / ops;
  EXPECT_GT(beside, kCopyNs - 60.0);
  EXPECT_LT(beside, kCopyNs + 150.0);
}

TEST(IommuBench, DmaMapBenchRefusesABatchBeyondItsBuffers) {
  nlohmann::json s = scenario({{{"app", "dma_map_bench"}, {"cores", {0}}, {"params", {{"runtime_us", 10}, {"batch", 1025}}}}});
  const TestRun t = run(s, {});
  EXPECT_EQ(t.result.status, RunResult::Status::kAppFailed);
}

// A window that opens before the contended cmpxchg queue has settled is
// named as not a steady state: 64 cores of the Kunpeng profile with the
// scenario's old 20 us warm-up (its 3 ms warm-up passes the check).
TEST(IommuBench, DmaMapBenchNamesATransientWindow) {
  std::string list;
  for (int c = 0; c < 64; ++c) list += (c ? "," : "") + std::to_string(c);
  const TestRun t = run_shipped("lkml_cmdq_map_unmap.json", {"platform.cpu.count=64", "scenario.apps.0.cores=[" + list + "]",
                                                             "scenario.apps.0.params.warmup_us=20"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  const auto warnings = steady_state_warnings(t.stats());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("sw.dma_map_bench"), std::string::npos) << warnings[0];
}

// On the Kunpeng 920 profile a line serves one transfer at a time, so 32
// cores claiming slots with v5.4's cmpxchg all queue for the queue's index
// word: the run names that line among what bounded it. Garry's fetch-add
// claim takes the line once per insertion and leaves it far from full. (One
// run per test: one elaboration per process.) The scenario's own 3 ms
// warm-up and 2 ms window: in a 400 us one the first core can begin no round
// at all behind the convoy of a first-come-first-served line, and then no
// attempt rate is reported.
TestRun contended_queue(const std::string& cmdq, const std::string& line_retry_ns = "") {
  std::string list;
  for (int c = 0; c < 32; ++c) list += (c ? "," : "") + std::to_string(c);
  std::vector<std::string> set = {"platform.cpu.count=32", "scenario.apps.0.cores=[" + list + "]",
                                  "scenario.apps.0.params.cmdq=" + cmdq};
  if (!line_retry_ns.empty()) set.push_back("platform.cpu.line_retry_ns=" + line_retry_ns);
  return run_shipped("lkml_cmdq_map_unmap.json", set);
}

bool names_bound(const nlohmann::json& bound, const std::string& prefix) {
  for (const auto& b : bound)
    if (b.get<std::string>().rfind(prefix, 0) == 0) return true;
  return false;
}

// The profile grants the contended line in no fixed order
// (cpu.line_retry_ns): the retried cores get it after a random delay, and a
// claim fails a few times, as on the machine (8.1 per claim at 32 CPUs).
TEST(IommuBench, TheContendedCmpxchgQueueIsBoundByItsIndexLine) {
  const TestRun t = contended_queue("lockfree");
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GT(t.value("cpus.lines.smmu_cmdq_llq.transfers"), 0.0);
  EXPECT_GT(t.value("cpus.lines.smmu_cmdq_llq.busy_share_in_window"), 0.99);
  const nlohmann::json bound = t.platform->results_json(t.result)["run"]["bound"];
  ASSERT_TRUE(bound.is_array() && !bound.empty());
  EXPECT_TRUE(names_bound(bound, "cache line smmu_cmdq_llq ")) << bound.dump();
  EXPECT_GT(t.counter("cpus.cpu0.line_retried_grants"), 0u);
  const double attempts = t.value("sw.dma_map_bench.cmdq_claim_attempts_per_claim");
  EXPECT_GT(attempts, 4.0);
  EXPECT_LT(attempts, 12.0);
}

// The same line served first come, first served (line_retry_ns 0): every
// claim waits through failed attempts of most of the other cores, a convoy
// the line bounds alone.
TEST(IommuBench, AFirstComeFirstServedLineMakesTheCmpxchgQueueAConvoy) {
  const TestRun t = contended_queue("lockfree", "0");
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GT(t.value("cpus.lines.smmu_cmdq_llq.busy_share_in_window"), 0.99);
  const nlohmann::json bound = t.platform->results_json(t.result)["run"]["bound"];
  ASSERT_TRUE(bound.is_array() && !bound.empty());
  EXPECT_EQ(bound[0].get<std::string>().rfind("cache line smmu_cmdq_llq ", 0), 0u) << bound.dump();
  EXPECT_EQ(t.counter("cpus.cpu0.line_retried_grants"), 0u);
  EXPECT_GT(t.value("sw.dma_map_bench.cmdq_claim_attempts_per_claim"), 16.0);
}

TEST(IommuBench, TheFetchAddQueueLeavesItsIndexLineFarFromFull) {
  const TestRun t = contended_queue("lockfree_add");
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GT(t.value("cpus.lines.smmu_cmdq_llq.transfers"), 0.0);
  EXPECT_LT(t.value("cpus.lines.smmu_cmdq_llq.busy_share_in_window"), 0.5);
  // No cmpxchg claims: no attempt rate.
  EXPECT_TRUE(std::isnan(t.value("sw.dma_map_bench.cmdq_claim_attempts_per_claim")));
}
}  // namespace
}  // namespace smmu_vp::test

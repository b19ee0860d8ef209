/*
 * The profiles' micro-benchmarks on QEMU (a functional check, not a timing
 * one: QEMU's cores and SMMU are not timed): cacheline_pingpong hands the
 * line back and forth, cmd_sync_latency completes every CMD_SYNC it issues,
 * dma_map_bench maps and unmaps through the DMA API on two cores with a
 * TLBI and a SYNC per unmap, and rbtree_walk walks a 1 MiB tree in key order
 * (every key once, about two steps a node). The same sw/apps code the
 * simulator runs.
 */
#include "apps/smmu_policy_params.h"
#include "drivers/smmu/smmu_hw.h"
#include "hal/hal.h"
#include "qv_port.h"

extern const struct hal_app app_cacheline_pingpong;
extern const struct hal_app app_cmd_sync_latency;
extern const struct hal_app app_dma_map_bench;
extern const struct hal_app app_rbtree_walk;

static void check_pingpong(void) {
  const struct qv_param p[] = {{"round_trips", 2000}};
  const int ret = qv_run_app(&app_cacheline_pingpong, 0x3u, p, 1);
  double one_way = 0;
  const bool got = qv_stat_value("one_way_ns", &one_way);
  qv_check(ret == 0 && got && one_way > 0, "cacheline_pingpong on cores 0 and 1: 2000 round trips, %.0f ns one way",
           one_way);
}

static void check_sync_latency(void) {
  const struct qv_param p[] = {{"iterations", 100}, {"gap_ns", 0}};
  const int ret = qv_run_app(&app_cmd_sync_latency, 0x1u, p, 2);
  double syncs = 0, mean = 0;
  qv_stat_value("sync_ns", &syncs);
  qv_stat_value("sync_mean_ns", &mean);
  const phys_addr_t b = hal_smmu().base;
  const bool no_error = ((hal_read32(b + SMMU_GERROR) ^ hal_read32(b + SMMU_GERRORN)) & SMMU_GERROR_CMDQ_ERR) == 0;
  qv_check(ret == 0 && (uint64_t)syncs == 100 && mean > 0 && no_error,
           "cmd_sync_latency: %.0f lone CMD_SYNCs completed, mean %.0f ns", syncs, mean);
}

static void check_dma_map_bench(void) {
  const struct qv_param p[] = {{"runtime_us", 2000}, {"warmup_us", 100}};
  const int ret = qv_run_app(&app_dma_map_bench, 0x3u, p, 2);
  double unmaps = 0, syncs = 0, cmds = 0, rate = 0;
  qv_stat_value("unmap_ns", &unmaps);
  qv_stat_value("smmu_syncs", &syncs);
  qv_stat_value("smmu_commands", &cmds);
  qv_stat_value("map_unmap_per_s_per_cpu", &rate);
  qv_check(ret == 0 && unmaps > 0 && syncs >= unmaps && cmds >= 2 * unmaps && rate > 0,
           "dma_map_bench on %u core(s): %.0f map+unmaps in the window, %.0f commands, %.0f SYNCs, %.0f per CPU per s",
           qv_cpus_online() > 1 ? 2u : 1u, unmaps, cmds, syncs, rate);
}

static void check_rbtree_walk(void) {
  const struct qv_param p[] = {{"nodes", 16384}, {"ref_nodes", 2048}, {"walks", 2}};
  const int ret = qv_run_app(&app_rbtree_walk, 0x1u, p, 3);
  double steps = 0, ns = 0;
  qv_stat_value("steps_per_node", &steps);
  qv_stat_value("ns_per_node", &ns);
  /* 2N - 1 steps per walk: a walk that missed or repeated a node fails the
   * app itself (its key sum). */
  qv_check(ret == 0 && steps > 1.999 && steps < 2.0 && ns > 0,
           "rbtree_walk: 16384 nodes in key order, %.4f steps and %.1f ns per node", steps, ns);
}

void qv_check_micro(void) {
  if (qv_cpus_online() > 1) check_pingpong();
  check_sync_latency();
  check_dma_map_bench();
  check_rbtree_walk();
}

/*
 * cmd_sync_latency: one core issues a lone CMD_SYNC on an empty command
 * queue through the driver and waits for it, `iterations` times: the latency
 * a caller sees from the insertion to the completion, the micro-figure Barry
 * Song measured on the Hi1620 (docs/figures.json, lkml_cmd_sync_local).
 * Reports sync_ns (a histogram) and its mean as sync_mean_ns.
 */
#include "apps/app_instance.h"
#include "apps/smmu_policy_params.h"
#include "drivers/smmu/arm_smmu.h"
#include "hal/hal.h"

static struct smmu_device smmu;

static int sync_latency_main(void) {
  if (!app_single_instance("cmd_sync_latency")) return 1;
  const uint64_t iterations = hal_param("iterations");
  if (iterations == 0 || hal_app_cores() != 1) {
    hal_log(HAL_LOG_ERROR, "cmd_sync_latency: runs on one core, with iterations > 0");
    return 1;
  }
  if (smmu_probe(&smmu, hal_smmu().base) != 0 || smmu_reset(&smmu) != 0) {
    hal_log(HAL_LOG_ERROR, "cmd_sync_latency: no SMMU to drive");
    return 1;
  }
  smmu_set_policy(&smmu, smmu_policy_from_params());
  uint64_t sum = 0;
  for (uint64_t i = 0; i < iterations; i++) {
    const uint64_t t0 = hal_now_ns();
    if (smmu_cmdq_issue(&smmu, 0, 0, true) != 0) {
      hal_log(HAL_LOG_ERROR, "cmd_sync_latency: a CMD_SYNC failed");
      return 2;
    }
    const uint64_t ns = hal_now_ns() - t0;
    hal_stat_sample("sync_ns", ns);
    sum += ns;
    /* A pause, so that every SYNC finds the queue empty. */
    hal_delay_ns(hal_param("gap_ns"));
  }
  hal_stat_set("sync_mean_ns", (double)sum / (double)iterations);
  hal_log(HAL_LOG_INFO, "cmd_sync_latency: %llu CMD_SYNCs on an empty queue, mean %.1f ns",
          (unsigned long long)iterations, (double)sum / (double)iterations);
  return 0;
}

static const struct hal_param_decl sync_latency_params[] = {
    SMMU_POLICY_PARAMS,
    {"iterations", 100, "CMD_SYNCs issued, one at a time.", 0, 0},
    {"gap_ns", 1000, "Pause after each completion, ns.", 0, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_cmd_sync_latency = {
    "cmd_sync_latency",
    "One core issues a lone CMD_SYNC on an empty command queue and waits for it: the latency the caller sees.",
    sync_latency_main, sync_latency_params};

/*
 * smmu_stress: every core repeatedly invalidates a range and waits for the
 * CMD_SYNC, as strict unmap does, through the arm-smmu-v3 driver with the
 * policies the parameters select. Reports invalidations per simulated second
 * (per core and in total), the latency of each TLBI + SYNC as the caller
 * sees it, the commands and SYNCs issued and the share of SYNCs elided.
 * Core 0 (the lowest core of the app) brings the SMMU up first.
 */
#include "apps/app_instance.h"
#include "apps/smmu_policy_params.h"
#include "drivers/smmu/arm_smmu.h"
#include "hal/hal.h"
#include "lib/compiler.h"

static struct smmu_device smmu;
/* The cores' rendezvous, on one cache line of its own. */
static SW_CACHELINE_ALIGNED struct {
  volatile uint32_t smmu_ready;
  volatile uint32_t cores_done;
} shared;

/* "invalidations_per_s_cpu<N>" */
static const char *per_cpu_name(unsigned cpu) {
  static char names[SMMU_MAX_CPUS][32];
  static const char prefix[] = "invalidations_per_s_cpu";
  char *n = names[cpu % SMMU_MAX_CPUS];
  unsigned i = 0;
  for (; prefix[i]; i++) n[i] = prefix[i];
  if (cpu >= 10) n[i++] = (char)('0' + cpu / 10 % 10);
  n[i++] = (char)('0' + cpu % 10);
  n[i] = 0;
  return n;
}

static int stress_main(void) {
  if (!app_single_instance("smmu_stress")) return 1;
  const unsigned cpu = hal_cpu_id();
  const uint64_t iterations = hal_param("iterations");
  const uint64_t pages = hal_param("pages");
  const unsigned leader = (unsigned)hal_param("leader_cpu");
  if (pages == 0 || iterations == 0 || leader >= hal_cpu_count()) {
    hal_log(HAL_LOG_ERROR, "smmu_stress: pages and iterations must be positive and leader_cpu (%u) a core of the "
            "platform (it has %u)", leader, hal_cpu_count());
    return 1;
  }
  if (cpu == leader) {
    if (smmu_probe(&smmu, hal_smmu().base) != 0 || smmu_reset(&smmu) != 0) {
      hal_log(HAL_LOG_ERROR, "smmu_stress: no SMMU to drive");
      return 1;
    }
    const struct smmu_policy got = smmu_set_policy(&smmu, smmu_policy_from_params());
    hal_stat_set("policy_cmdq", got.cmdq);
    hal_stat_set("policy_sync", got.sync);
    hal_stat_set("policy_tlbi", got.tlbi);
    hal_stat_set("policy_elide", got.elide_back_to_back_sync);
    hal_store32(&shared.smmu_ready, 1);
  }
  /* The leader must be one of this app's cores: give up rather than spin
   * to the time limit when it is not. */
  const uint64_t give_up = hal_now_ns() + 10000000ull;
  while (!hal_load32(&shared.smmu_ready)) {
    if (hal_now_ns() > give_up) {
      hal_log(HAL_LOG_ERROR, "smmu_stress: leader_cpu %u never brought the SMMU up: is it one of this app's cores?",
              leader);
      return 1;
    }
    hal_cpu_relax();
  }

  const uint64_t t0 = hal_now_ns();
  for (uint64_t i = 0; i < iterations; i++) {
    const uint64_t start = hal_now_ns();
    /* Each core its own IOVA window, like per-CPU DMA buffers. */
    const uint64_t iova = 0x40000000ull + ((uint64_t)cpu << 32) + (i % 64) * pages * 4096;
    if (smmu_tlbi_range(&smmu, 1, iova, pages * 4096) != 0) return 2;
    hal_stat_sample("invalidation_ns", hal_now_ns() - start);
    hal_stat_add("invalidations", 1);
  }
  const uint64_t elapsed = hal_now_ns() - t0;
  hal_stat_sample("core_elapsed_ns", elapsed);
  if (elapsed) hal_stat_set(per_cpu_name(cpu), (double)iterations * 1e9 / (double)elapsed);
  /* The last core to finish reports the totals: every core's invalidations
   * over the time this slowest core took. */
  const uint32_t done = hal_fetch_add32(&shared.cores_done, 1) + 1;
  hal_stat_set("commands", (double)smmu.stats.commands);
  hal_stat_set("syncs", (double)smmu.stats.syncs);
  hal_stat_set("syncs_elided", (double)smmu.stats.syncs_elided);
  const uint64_t wanted = smmu.stats.syncs + smmu.stats.syncs_elided;
  if (wanted) hal_stat_set("syncs_elided_share", (double)smmu.stats.syncs_elided / (double)wanted);
  hal_stat_set("cmdq_full_waits", (double)smmu.stats.cmdq_full_waits);
  if (elapsed) hal_stat_set("invalidations_per_s_total", (double)done * (double)iterations * 1e9 / (double)elapsed);
  return 0;
}

static const struct hal_param_decl stress_params[] = {
    {"iterations", 200, "Invalidations per core.", 0, 0},
    {"pages", 1, "4 KiB pages per invalidated range.", 0, 0},
    SMMU_POLICY_PARAMS,
    {"leader_cpu", 0, "The core that brings the SMMU up.", 0, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_smmu_stress = {"smmu_stress",
                                        "Every core invalidates a range and waits for the SYNC, through the SMMU driver.",
                                        stress_main, stress_params};

/*
 * map_bench: iommu_map_sg and iommu_unmap latency for scatter lists of
 * 4 KiB pages (4K .. 32M), the measurement of seeds 000 and 002, with two
 * policies side by side in one run and the published figures beside:
 *   experiment 0 (seed 000): walk_flush_policy va vs asid, map_sg per element;
 *   experiment 1 (seed 002): map_sg_policy per_element vs batched.
 * The list's pages are physically scattered (every other page) so nothing
 * merges into blocks, as with page-by-page allocated camera buffers. The
 * pages are never accessed by a device, so they need not be allocated. Each
 * size is mapped at a 1 GiB-aligned IOVA, so 2M and larger lists cover whole
 * level-2 tables, whose removal is the "partial walk" flush of seed 000.
 */
#include "apps/app_instance.h"
#include "apps/smmu_policy_params.h"
#include "drivers/smmu/arm_smmu.h"
#include "hal/hal.h"
#include "iommu/iommu.h"
#include "lib/compiler.h"

#define BENCH_SIZES 8u
#define MAX_PAGES (32u << 8) /* 32 MiB of 4 KiB pages */

static const uint64_t sizes[BENCH_SIZES] = {4u << 10, 64u << 10, 1u << 20, 2u << 20,
                                            12u << 20, 16u << 20, 24u << 20, 32u << 20};
static const char *const size_names[BENCH_SIZES] = {"4K", "64K", "1M", "2M", "12M", "16M", "24M", "32M"};

/* Published figures in us (seed 000: SM8150, before/after the ASID-wide walk
 * flush; seed 002: before/after map_sg batching; 0: not published). */
static const double seed000_map[2][BENCH_SIZES] = {
    {2.067, 9.598, 148.890, 305.864, 1793.604, 2386.848, 3563.296, 4747.171},
    {1.723, 9.880, 155.364, 303.906, 1786.557, 2391.890, 3570.895, 4755.234}};
static const double seed000_unmap[2][BENCH_SIZES] = {
    {1.854, 8.802, 130.718, 67.291, 390.838, 518.187, 775.989, 1033.364},
    {1.765, 8.869, 135.223, 5.385, 21.250, 27.437, 39.937, 51.797}};
static const double seed002_map[2][BENCH_SIZES] = {
    {0.624, 9.468, 122.557, 239.807, 1435.979, 0, 2884.968, 3832.979},
    {3.645, 4.198, 11.010, 17.125, 82.416, 0, 158.677, 210.468}};

static struct iommu_sg sg[MAX_PAGES];
static struct smmu_device smmu;
static SW_CACHELINE_ALIGNED struct iommu_domain domain;
static SW_CACHELINE_ALIGNED volatile uint32_t started;

struct result {
  double map_us[BENCH_SIZES], unmap_us[BENCH_SIZES];
};

static void build_list(unsigned nents, phys_addr_t base) {
  for (unsigned i = 0; i < nents; i++) {
    sg[i].pa = base + 2ull * i * 4096;
    sg[i].len = 4096;
  }
}

static int measure(const struct iommu_domain_policy *pol, uint16_t asid, uint32_t sid, unsigned reps,
                   struct result *out) {
  if (iommu_domain_init(&domain, &smmu, asid, 4096, pol) != 0 || iommu_attach_device(&domain, sid) != 0) return -1;
  const phys_addr_t base = hal_dram().base + (hal_dram().size >> 2);
  for (unsigned s = 0; s < BENCH_SIZES; s++) {
    const unsigned nents = (unsigned)(sizes[s] / 4096);
    const uint64_t iova = (uint64_t)(s + 1) << 30;
    build_list(nents, base);
    uint64_t map_ns = 0, unmap_ns = 0;
    for (unsigned r = 0; r < reps; r++) {
      const uint64_t t0 = hal_now_ns();
      if (iommu_map_sg(&domain, iova, sg, nents, IOMMU_READ | IOMMU_WRITE) != sizes[s]) return -2;
      const uint64_t t1 = hal_now_ns();
      if (iommu_unmap(&domain, iova, sizes[s]) != sizes[s]) return -3;
      const uint64_t t2 = hal_now_ns();
      map_ns += t1 - t0;
      unmap_ns += t2 - t1;
    }
    out->map_us[s] = (double)map_ns / reps / 1000.0;
    out->unmap_us[s] = (double)unmap_ns / reps / 1000.0;
  }
  iommu_detach_device(&domain, sid);
  iommu_domain_destroy(&domain);
  return 0;
}

static void publish(const char *what, const char *policy, const struct result *r) {
  char name[64];
  for (unsigned s = 0; s < BENCH_SIZES; s++) {
    /* "<what>_us_<policy>_<size>", e.g. map_us_va_32M */
    unsigned n = 0;
    for (const char *p = what; *p; p++) name[n++] = *p;
    for (const char *p = "_us_"; *p; p++) name[n++] = *p;
    for (const char *p = policy; *p; p++) name[n++] = *p;
    name[n++] = '_';
    for (const char *p = size_names[s]; *p; p++) name[n++] = *p;
    name[n] = 0;
    hal_stat_set(name, what[0] == 'm' ? r->map_us[s] : r->unmap_us[s]);
  }
}

static double ratio(double before, double after) { return after > 0 ? before / after : 0; }

static void log_seed000(const struct result r[2]) {
  hal_log(HAL_LOG_INFO, "map_bench (seed 000): walk_flush_policy va -> asid, map_sg per element; latency in us");
  hal_log(HAL_LOG_INFO, "%-5s %10s %10s %10s %10s %8s | %10s %10s %10s %10s %8s", "size", "map va", "map asid",
          "unmap va", "unmap asid", "ratio", "seed map", "seed map'", "seed unmap", "seed unmp'", "ratio");
  for (unsigned s = 0; s < BENCH_SIZES; s++)
    hal_log(HAL_LOG_INFO, "%-5s %10.3f %10.3f %10.3f %10.3f %8.2f | %10.3f %10.3f %10.3f %10.3f %8.2f", size_names[s],
            r[0].map_us[s], r[1].map_us[s], r[0].unmap_us[s], r[1].unmap_us[s],
            ratio(r[0].unmap_us[s], r[1].unmap_us[s]), seed000_map[0][s], seed000_map[1][s], seed000_unmap[0][s],
            seed000_unmap[1][s], ratio(seed000_unmap[0][s], seed000_unmap[1][s]));
}

static void log_seed002(const struct result r[2]) {
  hal_log(HAL_LOG_INFO, "map_bench (seed 002): map_sg_policy per_element -> batched; iommu_map_sg latency in us");
  hal_log(HAL_LOG_INFO, "%-5s %12s %10s %8s | %12s %10s %8s", "size", "per_element", "batched", "ratio",
          "seed before", "seed after", "ratio");
  for (unsigned s = 0; s < BENCH_SIZES; s++)
    hal_log(HAL_LOG_INFO, "%-5s %12.3f %10.3f %8.2f | %12.3f %10.3f %8.2f", size_names[s], r[0].map_us[s],
            r[1].map_us[s], ratio(r[0].map_us[s], r[1].map_us[s]), seed002_map[0][s], seed002_map[1][s],
            ratio(seed002_map[0][s], seed002_map[1][s]));
}

static int map_bench_main(void) {
  if (!app_single_instance("map_bench")) return 1;
  if (hal_fetch_add32(&started, 1) != 0) return 0; /* one core measures */
  const uint64_t experiment = hal_param("experiment");
  const unsigned reps = (unsigned)hal_param("reps");
  struct hal_device_info dev;
  if (experiment > 1 || reps == 0) {
    hal_log(HAL_LOG_ERROR, "map_bench: experiment must be 0 or 1 and reps positive");
    return 1;
  }
  if (hal_device_find("dma0", &dev) != 0 || smmu_probe(&smmu, hal_smmu().base) != 0 || smmu_reset(&smmu) != 0) {
    hal_log(HAL_LOG_ERROR, "map_bench: needs an SMMU and the dma0 device");
    return 1;
  }
  smmu_set_policy(&smmu, smmu_policy_from_params());
  struct iommu_domain_policy pol[2];
  for (unsigned p = 0; p < 2; p++) {
    pol[p].non_coherent_walk = hal_param("coherent") == 0;
    pol[p].sync_each_page = false;
    pol[p].sync_always = hal_param("iotlb_sync") == 1;
    pol[p].walk_flush = experiment == 0 && p == 1 ? IOMMU_WALK_FLUSH_ASID : IOMMU_WALK_FLUSH_VA;
    /* Seed 000's kernel still mapped a list element by element. */
    pol[p].map_sg = experiment == 1 && p == 1 ? IOMMU_MAP_SG_BATCHED : IOMMU_MAP_SG_PER_ELEMENT;
  }
  struct result r[2];
  for (unsigned p = 0; p < 2; p++) {
    const int err = measure(&pol[p], (uint16_t)(p + 1), dev.stream_id, reps, &r[p]);
    if (err) {
      hal_log(HAL_LOG_ERROR, "map_bench: mapping failed (%d)", err);
      return 2;
    }
  }
  static const char *const names[2][2] = {{"va", "asid"}, {"per_element", "batched"}};
  for (unsigned p = 0; p < 2; p++) {
    publish("map", names[experiment][p], &r[p]);
    publish("unmap", names[experiment][p], &r[p]);
  }
  if (experiment == 0) log_seed000(r);
  else log_seed002(r);
  return 0;
}

static const struct hal_param_decl map_bench_params[] = {
    {"experiment", 0, "0: seed 000 (walk flush va vs asid); 1: seed 002 (map_sg per_element vs batched).", 1, 0},
    {"reps", 1, "Map + unmap rounds per size (the mean is reported).", 0, 0},
    {"coherent", 0, "1: the SMMU's table walks snoop CPU caches (no cache maintenance on PTE writes).", 1, 0},
    {"iotlb_sync", 0, "0: iotlb_sync syncs what was gathered (arm-smmu-v3); 1: always, as the SMMUv2 driver's TLBSYNC (arm-smmu.c, seed 000's MMU-500): a lone CMD_SYNC when nothing was gathered.", 1, "when_gathered,always"},
    SMMU_POLICY_PARAMS,
    {0, 0, 0, 0, 0},
};

const struct hal_app app_map_bench = {"map_bench",
                                      "iommu_map_sg / iommu_unmap latency for 4K..32M scatter lists, two policies "
                                      "side by side (seeds 000 and 002).",
                                      map_bench_main, map_bench_params};

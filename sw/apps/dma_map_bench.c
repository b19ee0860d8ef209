/*
 * dma_map_bench: Linux's dma_map_benchmark (kernel/dma/map_benchmark.c,
 * tools/testing/selftests/dma/dma_map_benchmark.c) on the modelled cores:
 * every core of the app maps a buffer of `granule` pages and unmaps it, in a
 * loop, through one device's DMA domain, for a measured window after a
 * warm-up. With `batch` > 1 a core maps that many buffers (copying
 * `copy_bytes` after each map) before it unmaps them all, as the harness
 * John Garry posted on LKML did (16 Jul 2020: 50 maps of 4 KiB, each
 * followed by a 4 KiB memcpy, then the 50 unmaps; threads pinned to CPUs
 * 0..N-1). This is the load of the public micro-figures of the command
 * queue under contention (map+unmaps per CPU per second on 8 to 64 CPUs,
 * docs/figures.json "micro_figures"); in strict mode every unmap is a TLBI
 * and a CMD_SYNC through the driver's command queue.
 *
 * Reports map_unmap_per_s_per_cpu (the unit of those figures),
 * map_unmap_per_s_total, the latency of each map and each unmap (map_ns,
 * unmap_ns histograms), the bytes mapped and unmapped in each half of the
 * window (for the steady-state check, platform/invariants.h) and the DMA
 * layer's and SMMU's counters.
 */
#include "apps/app_instance.h"
#include "apps/app_window.h"
#include "apps/iommu_setup.h"
#include "hal/hal.h"
#include "lib/compiler.h"

static SW_CACHELINE_ALIGNED struct app_dma dma;
/* The cores' rendezvous and totals, on one cache line of their own. */
static SW_CACHELINE_ALIGNED struct {
  volatile uint32_t setup_state; /* 0 coming up, 1 up, 2 failed */
  volatile uint32_t started, reported, warned_empty;
  volatile uint64_t window_start, window_end, ops_in_window;
} shared;

/* The device the benchmark maps for: the one named by `device` (an index
 * into the platform's devices), like map_benchmark's dummy device. */
static int attach_device(void) {
  struct hal_device_info info;
  if (hal_device_get((unsigned)hal_param("device"), &info) != 0) {
    hal_log(HAL_LOG_ERROR, "dma_map_bench: the platform has no device %u (it has %u)", (unsigned)hal_param("device"),
            hal_device_count());
    return -1;
  }
  if (iommu_setup_attach_device(&dma, "dma_map_bench", &info, 1, 0) != 0) return -1;
  if (!dma.translated) hal_log(HAL_LOG_WARN, "dma_map_bench: %s is not translated: maps only return addresses", info.name);
  return 0;
}

#define MAX_BATCH 1024

/* One round: maps `n` buffers of `size` bytes at pa[0..n) (copying
 * `copy_bytes` after each), then unmaps them in the same order; false when
 * a map failed. */
static bool map_unmap_round(const phys_addr_t *pa, unsigned n, size_t size, enum dma_data_direction dir,
                            uint64_t trans_ns, uint64_t copy_bytes, bool in_window) {
  struct dma_dev *dev = app_dma_dev(&dma);
  uint64_t iova[MAX_BATCH];
  for (unsigned i = 0; i < n; i++) {
    const uint64_t t0 = hal_now_ns();
    iova[i] = dev ? dma_map_single(dev, pa[i], size, dir) : pa[i];
    if (iova[i] == DMA_MAPPING_ERROR) return false;
    if (in_window) hal_stat_sample("map_ns", hal_now_ns() - t0);
    if (copy_bytes) hal_cost("memcpy_64b", (copy_bytes + 63) / 64);
  }
  /* map_benchmark's dma_trans_ns: the time a real device would use the buffers. */
  if (trans_ns) hal_delay_ns(trans_ns);
  for (unsigned i = 0; i < n; i++) {
    const uint64_t t2 = hal_now_ns();
    if (dev) dma_unmap_single(dev, iova[i], size, dir);
    if (in_window) hal_stat_sample("unmap_ns", hal_now_ns() - t2);
  }
  return true;
}

/* `first` and `second`: this core's map+unmaps begun in each half of the
 * window. A contended queue can take milliseconds to settle into its steady
 * state; halves that differ say the window measured a transient. */
static void report(uint64_t first, uint64_t second, size_t size, uint64_t window_ns) {
  hal_fetch_add64(&shared.ops_in_window, first + second);
  hal_stat_add("window_bytes_first_half", first * size);
  hal_stat_add("window_bytes_second_half", second * size);
  if (hal_fetch_add32(&shared.reported, 1) + 1 != hal_app_cores()) return;
  const double seconds = (double)window_ns / 1e9;
  const double total = (double)hal_load64(&shared.ops_in_window) / seconds;
  hal_stat_set("map_unmap_per_s_total", total);
  hal_stat_set("map_unmap_per_s_per_cpu", total / hal_app_cores());
  hal_stat_set("cpus", hal_app_cores());
  iommu_setup_report(&dma);
  hal_log(HAL_LOG_INFO, "dma_map_bench: %u CPUs, granule %u pages: %.0f map+unmaps per CPU per second (%.3f M/s in all)",
          hal_app_cores(), (unsigned)hal_param("granule"), total / hal_app_cores(), total / 1e6);
}

/* The cmpxchg queue's attempts per slot claim inside the window, as John
 * Garry counted them on the Kunpeng 920 (LKML, 16 Jul 2020): read by the
 * first core where its window opens and closes, so the warm-up's transient
 * stays out. Nothing under another queue. */
struct claims {
  uint64_t claims, attempts;
};
static struct claims claims_so_far(void) {
  struct claims c;
  iommu_setup_cmdq_claims(&c.claims, &c.attempts);
  return c;
}
static void report_claim_attempts(struct claims from) {
  const struct claims to = claims_so_far();
  if (to.claims <= from.claims) return;
  hal_stat_set("cmdq_claim_attempts_per_claim",
               (double)(to.attempts - from.attempts) / (double)(to.claims - from.claims));
}

static int bench_main(void) {
  if (!app_single_instance("dma_map_bench")) return 1;
  const uint64_t granule = hal_param("granule");
  const uint64_t batch = hal_param("batch");
  if (granule == 0 || granule > 1024 || hal_param("runtime_us") == 0 || batch == 0 || batch > MAX_BATCH) {
    hal_log(HAL_LOG_ERROR, "dma_map_bench: granule must be 1..1024 pages, batch 1..%u maps and runtime_us positive",
            MAX_BATCH);
    return 1;
  }
  if (hal_app_rank() == 0) {
    hal_store32(&shared.setup_state, attach_device() == 0 ? 1 : 2);
    hal_sev();
  }
  uint32_t st;
  while ((st = hal_load32(&shared.setup_state)) == 0) hal_wfe();
  if (st == 2) return 1;

  const size_t size = (size_t)granule * 4096;
  phys_addr_t pa[MAX_BATCH];
  for (unsigned i = 0; i < batch; i++)
    if (!hal_dma_alloc(size, 4096, &pa[i])) {
      hal_log(HAL_LOG_ERROR, "dma_map_bench: no memory for %u buffers of %zu bytes", (unsigned)batch, size);
      return 1;
    }
  hal_fetch_add32(&shared.started, 1);
  hal_sev();
  while (hal_load32(&shared.started) < hal_app_cores()) hal_wfe();
  if (hal_app_rank() == 0) {
    uint64_t start, end;
    app_window_open("dma_map_bench", hal_param("warmup_us") * 1000, hal_param("runtime_us") * 1000, &start, &end);
    hal_store64(&shared.window_end, end);
    hal_store64(&shared.window_start, start);
    hal_sev();
  }
  while (!hal_load64(&shared.window_start)) hal_wfe();
  const uint64_t start = shared.window_start, end = shared.window_end;
  const enum dma_data_direction dir = (enum dma_data_direction)hal_param("dir");
  const uint64_t trans_ns = hal_param("dma_trans_ns"), copy_bytes = hal_param("copy_bytes");
  const uint64_t mid = start + (end - start) / 2;
  uint64_t first = 0, second = 0;
  struct claims in_window_from = {0, 0};
  for (;;) {
    const uint64_t now = hal_now_ns();
    if (now >= end) break;
    const bool in_window = now >= start;
    if (in_window && first + second == 0 && hal_app_rank() == 0) in_window_from = claims_so_far();
    if (!map_unmap_round(pa, (unsigned)batch, size, dir, trans_ns, copy_bytes, in_window)) {
      hal_log(HAL_LOG_ERROR, "dma_map_bench: a map of %zu bytes failed", size);
      return 1;
    }
    if (!in_window) continue;
    if (now < mid) first += batch;
    else second += batch;
  }
  if (hal_app_rank() == 0 && first + second > 0) report_claim_attempts(in_window_from);
  /* A round is counted when it begins in the window: one longer than the
   * window leaves nothing to count. */
  if (first + second == 0 && hal_fetch_add32(&shared.warned_empty, 1) == 0)
    hal_log(HAL_LOG_WARN, "dma_map_bench: a core began no round of %u maps in the window; lengthen runtime_us",
            (unsigned)batch);
  report(first, second, size, end - start);
  return 0;
}

static const struct hal_param_decl bench_params[] = {
    IOMMU_SETUP_PARAMS,
    {"device", 0, "The device whose stream the buffers are mapped for: an index into the platform's devices.", 0, 0},
    {"granule", 1, "4 KiB pages per map (map_benchmark's granule).", 0, 0},
    {"dir", 0, "DMA direction: 0 bidirectional, 1 to the device, 2 from the device (map_benchmark's dma_dir).", 2,
     "bidirectional,to_device,from_device"},
    {"dma_trans_ns", 0, "Time between a map and its unmap, as if a device used the buffer (map_benchmark's dma_trans_ns).", 0, 0},
    {"batch", 1,
     "Buffers a core maps before it unmaps them, 1..1024: 1 maps and unmaps one at a time (map_benchmark's loop); 50 is "
     "the harness of John Garry's LKML tables (16 Jul 2020).",
     0, 0},
    {"copy_bytes", 0, "Bytes a core copies after each map, charged as the cost table's memcpy_64b (that harness copies 4096).",
     0, 0},
    {"runtime_us", 200, "Measured time after the warm-up, us.", 0, 0},
    {"warmup_us", 20, "Map+unmaps before the measured window, us.", 0, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_dma_map_bench = {
    "dma_map_bench",
    "Linux's dma_map_benchmark: every core maps and unmaps a buffer in a loop through one device's DMA domain; "
    "map+unmaps per CPU per second, map and unmap latency.",
    bench_main, bench_params};

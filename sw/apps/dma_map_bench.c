/*
 * dma_map_bench: Linux's dma_map_benchmark (kernel/dma/map_benchmark.c,
 * tools/testing/selftests/dma/dma_map_benchmark.c) on the modelled cores:
 * every core of the app maps a buffer of `granule` pages and unmaps it, in a
 * loop, through one device's DMA domain, for a measured window after a
 * warm-up. This is the load of the public micro-figures of the command
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

static struct app_dma dma;
static volatile uint32_t setup_state; /* 0 coming up, 1 up, 2 failed */
static volatile uint32_t started;
static volatile uint32_t reported;
static volatile uint64_t window_start, window_end;
static volatile uint64_t ops_in_window;

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

/* One map and its unmap of `size` bytes at `pa`; false when the map failed. */
static bool map_unmap(phys_addr_t pa, size_t size, enum dma_data_direction dir, uint64_t trans_ns, bool in_window) {
  struct dma_dev *dev = app_dma_dev(&dma);
  const uint64_t t0 = hal_now_ns();
  const uint64_t iova = dev ? dma_map_single(dev, pa, size, dir) : pa;
  if (iova == DMA_MAPPING_ERROR) return false;
  const uint64_t t1 = hal_now_ns();
  /* map_benchmark's dma_trans_ns: the time a real device would use the buffer. */
  if (trans_ns) hal_delay_ns(trans_ns);
  const uint64_t t2 = hal_now_ns();
  if (dev) dma_unmap_single(dev, iova, size, dir);
  if (in_window) {
    hal_stat_sample("map_ns", t1 - t0);
    hal_stat_sample("unmap_ns", hal_now_ns() - t2);
  }
  return true;
}

/* `first` and `second`: this core's map+unmaps begun in each half of the
 * window. A contended queue can take milliseconds to settle into its steady
 * state; halves that differ say the window measured a transient. */
static void report(uint64_t first, uint64_t second, size_t size, uint64_t window_ns) {
  hal_fetch_add64(&ops_in_window, first + second);
  hal_stat_add("window_bytes_first_half", first * size);
  hal_stat_add("window_bytes_second_half", second * size);
  if (hal_fetch_add32(&reported, 1) + 1 != hal_app_cores()) return;
  const double seconds = (double)window_ns / 1e9;
  const double total = (double)hal_load64(&ops_in_window) / seconds;
  hal_stat_set("map_unmap_per_s_total", total);
  hal_stat_set("map_unmap_per_s_per_cpu", total / hal_app_cores());
  hal_stat_set("cpus", hal_app_cores());
  iommu_setup_report(&dma);
  hal_log(HAL_LOG_INFO, "dma_map_bench: %u CPUs, granule %u pages: %.0f map+unmaps per CPU per second (%.3f M/s in all)",
          hal_app_cores(), (unsigned)hal_param("granule"), total / hal_app_cores(), total / 1e6);
}

static int bench_main(void) {
  if (!app_single_instance("dma_map_bench")) return 1;
  const uint64_t granule = hal_param("granule");
  if (granule == 0 || granule > 1024 || hal_param("runtime_us") == 0) {
    hal_log(HAL_LOG_ERROR, "dma_map_bench: granule must be 1..1024 pages and runtime_us positive");
    return 1;
  }
  if (hal_app_rank() == 0) {
    hal_store32(&setup_state, attach_device() == 0 ? 1 : 2);
    hal_sev();
  }
  uint32_t st;
  while ((st = hal_load32(&setup_state)) == 0) hal_wfe();
  if (st == 2) return 1;

  const size_t size = (size_t)granule * 4096;
  phys_addr_t pa;
  if (!hal_dma_alloc(size, 4096, &pa)) {
    hal_log(HAL_LOG_ERROR, "dma_map_bench: no memory for a %zu-byte buffer", size);
    return 1;
  }
  hal_fetch_add32(&started, 1);
  hal_sev();
  while (hal_load32(&started) < hal_app_cores()) hal_wfe();
  if (hal_app_rank() == 0) {
    uint64_t start, end;
    app_window_open("dma_map_bench", hal_param("warmup_us") * 1000, hal_param("runtime_us") * 1000, &start, &end);
    hal_store64(&window_end, end);
    hal_store64(&window_start, start);
    hal_sev();
  }
  while (!hal_load64(&window_start)) hal_wfe();
  const uint64_t start = window_start, end = window_end;
  const enum dma_data_direction dir = (enum dma_data_direction)hal_param("dir");
  const uint64_t trans_ns = hal_param("dma_trans_ns");
  const uint64_t mid = start + (end - start) / 2;
  uint64_t first = 0, second = 0;
  for (;;) {
    const uint64_t now = hal_now_ns();
    if (now >= end) break;
    const bool in_window = now >= start;
    if (!map_unmap(pa, size, dir, trans_ns, in_window)) {
      hal_log(HAL_LOG_ERROR, "dma_map_bench: a map of %zu bytes failed", size);
      return 1;
    }
    if (!in_window) continue;
    if (now < mid) first++;
    else second++;
  }
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
    {"runtime_us", 200, "Measured time after the warm-up, us.", 0, 0},
    {"warmup_us", 20, "Map+unmaps before the measured window, us.", 0, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_dma_map_bench = {
    "dma_map_bench",
    "Linux's dma_map_benchmark: every core maps and unmaps a buffer in a loop through one device's DMA domain; "
    "map+unmaps per CPU per second, map and unmap latency.",
    bench_main, bench_params};

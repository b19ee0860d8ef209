/*
 * swiotlb_bench: the bounce-buffer figure of seed 004 (area-first search:
 * +25.4% at 4 KiB, +25.7% at 64 KiB, +23.6% with 4 jobs).
 *
 * Every core streams I/O through swiotlb, as a block driver on a forced
 * bounce setup does: it maps a buffer (copying the data in for a write),
 * lets the device work for device_ns, then unmaps its oldest mapping
 * (copying the data out for a read), so that queue_depth mappings stay in
 * flight. Writes and reads alternate (the seed's read-write mix); each
 * bounces its bytes once, charged as memcpy_64b. The pools are small like
 * the seed's swiotlb=512,4,force (1 MiB, 4 areas) and, with `dynamic`, grow
 * one pool at a time as Linux's dynamic swiotlb does, so once a core's area
 * in pool 0 is full its searches go on to other areas or pools, in the
 * order the search policy says.
 *
 * search 2 runs pool-first, then area-first, each on fresh pools after the
 * same warm-up (queues filled, pools grown), and reports the gain as the
 * seed does: the relative difference of the I/O rate. Runs on cores
 * 0..cores-1 (cores 0: every core of the platform). Stats go under
 * sw.swiotlb_bench.<search>.<name>, plus gain_pct and, for the three cases
 * the seed measured, seed_gain_pct.
 *
 * irq_core k (> 0) moves every unmap to core k, as a completion interrupt
 * routed to another CPU does: in a VM with a virtio disk the unmap of a
 * request's buffers runs in the virtqueue's interrupt handler (Linux
 * drivers/block/virtio_blk.c: virtblk_done -> blk_mq_complete_request ->
 * virtblk_request_done -> virtblk_unmap_data), on the vCPU that took the
 * interrupt, since blk-mq completes locally on a CPU that shares a cache with
 * the submitter (block/blk-mq.c, blk_mq_complete_need_ipi: "same CPU or cache
 * domain?  Complete locally"). A mapping core then hands its oldest mapping
 * to core k instead of unmapping it, and maps a new one only once core k has
 * unmapped enough that at most queue_depth + 1 stay live, as fio submits
 * only after reaping a completion. Core k maps nothing and is not counted in
 * the rate.
 */
#include "apps/app_instance.h"
#include "hal/hal.h"
#include "iommu/swiotlb.h"
#include "lib/compiler.h"
#include "lib/string.h"

#define SEARCH_BOTH 2u
#define MAX_CORES 64u

struct bench_config {
  unsigned cores;
  unsigned irq_core; /* 0: each core unmaps its own mappings */
  uint64_t iterations, map_bytes, queue_depth, device_ns;
  struct swiotlb_config swiotlb;
};

/* One core's stream: a buffer to bounce and a FIFO of live mappings. Entries
 * [head, head + count) of the ring are live. With an irq core, entries before
 * `completed` have been handed to it, and it has unmapped those before
 * `unmapped` (both counted from the stream's start, written with HAL atomics:
 * the hand-off is real shared memory between the two cores). */
struct stream {
  uint8_t *orig;
  phys_addr_t orig_pa;
  phys_addr_t *tlb; /* queue_depth + 1 entries: a new map comes before the oldest unmap */
  uint8_t *dir;
  uint64_t head, count, slots;
  uint64_t maps, failures;
  volatile uint64_t completed, unmapped;
  volatile uint32_t drained; /* with an irq core: all of this search's mappings unmapped */
};

struct search_result {
  bool ran;
  double maps_per_s, mib_per_s, slots_per_map, areas_per_map;
  uint64_t pools, transient_pools, failures;
};

/* Lives in a static: its locks are HAL atomics shared by the cores. */
static SW_CACHELINE_ALIGNED struct swiotlb_mem mem;
/* The cores' barrier and setup flag, on one cache line of their own. */
static SW_CACHELINE_ALIGNED struct {
  volatile uint32_t barrier_count, barrier_gen;
  volatile uint32_t setup_failed;
} shared;
static uint64_t elapsed_ns[MAX_CORES];
/* Each mapping core's stream (on its stack), for collect() and the irq core. */
static struct stream *streams[MAX_CORES];
static uint64_t failures[MAX_CORES];
static struct swiotlb_stats stats_start, stats_end;
static struct search_result results[2];

static const char *search_name(unsigned search) {
  return search == SWIOTLB_POOL_FIRST ? "pool_first" : "area_first";
}

/* "<search>.<name>" for hal_stat_set, which copies the name: one buffer
 * serves all. */
static const char *stat_name(unsigned search, const char *name) {
  static char buf[96];
  const char *prefix = search_name(search);
  size_t n = 0;
  for (size_t i = 0; prefix[i] && n < sizeof buf - 2; i++) buf[n++] = prefix[i];
  buf[n++] = '.';
  for (size_t i = 0; name[i] && n < sizeof buf - 1; i++) buf[n++] = name[i];
  buf[n] = 0;
  return buf;
}

/* Sense-reversing barrier over the app's cores. The last core to arrive runs
 * `last` before anyone leaves, so snapshots taken there see no core's work
 * of the next step. */
static void barrier(unsigned n, void (*last)(void)) {
  const uint32_t gen = hal_load32(&shared.barrier_gen);
  if (hal_fetch_add32(&shared.barrier_count, 1) + 1 == n) {
    if (last != NULL)
      last();
    hal_store32(&shared.barrier_count, 0);
    hal_fetch_add32(&shared.barrier_gen, 1);
    hal_sev();
    return;
  }
  while (hal_load32(&shared.barrier_gen) == gen) hal_wfe();
}

static void snapshot_start(void) {
  stats_start = mem.stats;
  swiotlb_area_lock_handoffs_clear(&mem);
}

/* Also publishes the area locks' hand-offs between CPUs (in maps and unmaps;
 * with an irq core the snapshot comes after the drain) per timed map. */
static void snapshot_end(void) {
  stats_end = mem.stats;
  /* The sum of the cores' own rates, as fio adds up its jobs' bandwidths:
   * read here, while every core waits in the barrier and its stream (on its
   * stack) still exists. */
  struct search_result *r = &results[mem.search];
  r->maps_per_s = 0.0;
  for (unsigned i = 0; i < MAX_CORES; i++)
    if (streams[i] != NULL && elapsed_ns[i] != 0)
      r->maps_per_s += (double)streams[i]->maps * 1e9 / (double)elapsed_ns[i];
  const uint64_t maps = stats_end.maps - stats_start.maps;
  hal_stat_set(stat_name(mem.search, "lock_handoffs_per_map"),
               maps ? (double)swiotlb_area_lock_handoffs(&mem) / (double)maps : 0);
}

static bool read_config(struct bench_config *c) {
  const uint64_t cores = hal_param("cores");
  const uint64_t pools = hal_param("pools");
  c->cores = cores != 0 ? (unsigned)cores : hal_cpu_count();
  c->irq_core = (unsigned)hal_param("irq_core");
  c->iterations = hal_param("iterations");
  c->map_bytes = hal_param("map_bytes");
  c->queue_depth = hal_param("queue_depth");
  c->device_ns = hal_param("device_ns");
  swiotlb_default_config(&c->swiotlb);
  c->swiotlb.pool_size = hal_param("pool_kib") * 1024;
  c->swiotlb.extra_pools = pools > 0 ? (unsigned)(pools - 1) : 0;
  c->swiotlb.nareas = (unsigned)hal_param("areas");
  c->swiotlb.dynamic = hal_param("dynamic") != 0;
  c->swiotlb.queued_locks = hal_param("spinlock") != 0;
  if (c->cores == 0 || c->cores > MAX_CORES || c->cores > hal_cpu_count() || pools == 0 ||
      c->iterations == 0 || c->queue_depth == 0 || c->map_bytes == 0 || c->map_bytes > SWIOTLB_MAX_ALLOC ||
      c->swiotlb.pool_size == 0 || c->swiotlb.nareas == 0) {
    hal_log(HAL_LOG_ERROR, "swiotlb_bench: need 1..%u cores within the platform, 1..%u-byte maps, and positive "
            "pools, pool_kib, areas, iterations, queue_depth", MAX_CORES, SWIOTLB_MAX_ALLOC);
    return false;
  }
  if (c->irq_core != 0 && (c->irq_core < c->cores || c->irq_core >= hal_cpu_count())) {
    hal_log(HAL_LOG_ERROR, "swiotlb_bench: irq_core %u must be a core of the platform outside the mapping cores 0..%u",
            c->irq_core, c->cores - 1);
    return false;
  }
  return true;
}

/* Cores taking part in the barriers: the mapping cores and the irq core. */
static unsigned participants(const struct bench_config *c) { return c->cores + (c->irq_core != 0); }

static bool stream_init(struct stream *s, const struct bench_config *c) {
  phys_addr_t pa;
  sw_memset(s, 0, sizeof(*s));
  s->slots = c->queue_depth + 1;
  s->orig = hal_dma_alloc(c->map_bytes, 4096, &s->orig_pa);
  s->tlb = hal_dma_alloc(s->slots * sizeof(phys_addr_t), 64, &pa);
  s->dir = hal_dma_alloc(s->slots, 64, &pa);
  return s->orig != NULL && s->tlb != NULL && s->dir != NULL;
}

static void stream_free(struct stream *s) {
  if (s->orig != NULL) hal_dma_free(s->orig);
  if (s->tlb != NULL) hal_dma_free(s->tlb);
  if (s->dir != NULL) hal_dma_free(s->dir);
}

/* Maps the next I/O: even ones are writes (bounced in now), odd ones reads
 * (bounced out at unmap). A failed map drops the I/O and is counted. */
static void stream_map(struct stream *s, const struct bench_config *c, uint64_t seq, const char *map_ns) {
  const enum swiotlb_dir dir = (seq & 1) ? SWIOTLB_DMA_FROM_DEVICE : SWIOTLB_DMA_TO_DEVICE;
  const uint64_t start = hal_now_ns();
  const phys_addr_t tlb = swiotlb_tbl_map_single(&mem, s->orig_pa, c->map_bytes, 0, 0, dir);
  if (map_ns != NULL)
    hal_stat_sample(map_ns, hal_now_ns() - start);
  if (tlb == SWIOTLB_MAP_ERROR) {
    s->failures++;
    return;
  }
  const uint64_t at = (s->head + s->count) % s->slots;
  s->tlb[at] = tlb;
  s->dir[at] = (uint8_t)dir;
  s->count++;
  s->maps++;
}

static void stream_unmap_oldest(struct stream *s, const struct bench_config *c) {
  if (s->count == 0)
    return;
  (void)swiotlb_tbl_unmap_single(&mem, s->tlb[s->head], c->map_bytes, (enum swiotlb_dir)s->dir[s->head]);
  s->head = (s->head + 1) % s->slots;
  s->count--;
}

/* With an irq core: the oldest mapping's I/O is complete; core irq_core will
 * unmap it. The ring entry stays in use until it has. Every entry leaves the
 * ring through here, so head is always `completed` modulo the ring's size. */
static void stream_complete_oldest(struct stream *s) {
  if (s->count == 0)
    return;
  s->head = (s->head + 1) % s->slots;
  s->count--;
  hal_store64(&s->completed, hal_load64(&s->completed) + 1);
  hal_sev();
}

/* With an irq core: wait until it has unmapped all but `live` of this
 * stream's mappings (those handed to it and those not yet complete). */
static void stream_wait_unmapped(struct stream *s, uint64_t live) {
  for (;;) {
    const uint64_t pending = hal_load64(&s->completed) - hal_load64(&s->unmapped);
    if (pending + s->count <= live)
      return;
    hal_wfe();
  }
}

/* The irq core: unmaps what the streams hand it, oldest first per stream,
 * until every mapping core has drained its stream. */
static void irq_core_run(const struct bench_config *c) {
  for (;;) {
    bool any = false;
    for (unsigned i = 0; i < c->cores; i++) {
      struct stream *s = streams[i];
      const uint64_t completed = hal_load64(&s->completed);
      uint64_t unmapped = hal_load64(&s->unmapped);
      while (unmapped < completed) {
        /* Entries leave the ring in order, so the n-th handed over sits at
         * n modulo the ring's size. */
        const uint64_t at = unmapped % s->slots;
        (void)swiotlb_tbl_unmap_single(&mem, s->tlb[at], c->map_bytes, (enum swiotlb_dir)s->dir[at]);
        hal_store64(&s->unmapped, ++unmapped);
        any = true;
      }
    }
    if (any) {
      hal_sev();
      continue;
    }
    unsigned drained = 0;
    for (unsigned i = 0; i < c->cores; i++)
      drained += hal_load32(&streams[i]->drained);
    if (drained == c->cores)
      return;
    hal_wfe();
  }
}

/* The timed loop of one core: map, device work, unmap the oldest. */
static uint64_t stream_run(struct stream *s, const struct bench_config *c, unsigned search) {
  /* Literals: the platform tells histograms apart by the name's address. */
  const char *map_ns = search == SWIOTLB_POOL_FIRST ? "pool_first.map_ns" : "area_first.map_ns";
  const uint64_t t0 = hal_now_ns();
  for (uint64_t i = 0; i < c->iterations; i++) {
    if (c->irq_core != 0)
      stream_wait_unmapped(s, c->queue_depth);
    stream_map(s, c, c->queue_depth + i, map_ns);
    hal_delay_ns(c->device_ns);
    if (s->count > c->queue_depth) {
      if (c->irq_core != 0)
        stream_complete_oldest(s);
      else
        stream_unmap_oldest(s, c);
    }
  }
  return hal_now_ns() - t0;
}

static void collect(unsigned search, const struct bench_config *c) {
  struct search_result *r = &results[search];
  uint64_t failed = 0;
  /* r->maps_per_s was summed by snapshot_end. */
  for (unsigned i = 0; i < c->cores; i++) failed += failures[i];
  const uint64_t searched = stats_end.maps - stats_start.maps;
  r->ran = true;
  r->mib_per_s = r->maps_per_s * (double)c->map_bytes / (1024.0 * 1024.0);
  r->slots_per_map = searched ? (double)(stats_end.slots_scanned - stats_start.slots_scanned) / (double)searched : 0;
  r->areas_per_map = searched ? (double)(stats_end.areas_tried - stats_start.areas_tried) / (double)searched : 0;
  r->pools = mem.npools;
  r->transient_pools = stats_end.transient_pools - stats_start.transient_pools;
  r->failures = failed;

  hal_stat_set(stat_name(search, "maps_per_s"), r->maps_per_s);
  hal_stat_set(stat_name(search, "mib_per_s"), r->mib_per_s);
  hal_stat_set(stat_name(search, "slots_per_map"), r->slots_per_map);
  hal_stat_set(stat_name(search, "areas_per_map"), r->areas_per_map);
  hal_stat_set(stat_name(search, "pools"), (double)r->pools);
  hal_stat_set(stat_name(search, "transient_pools"), (double)r->transient_pools);
  hal_stat_set(stat_name(search, "map_failures"), (double)r->failures);
}

/* One search policy on fresh pools: set up, warm up, time, drain. */
static int run_search(unsigned rank, const struct bench_config *c, unsigned search, struct stream *s) {
  const unsigned n = participants(c);
  if (rank == 0) {
    struct swiotlb_config cfg = c->swiotlb;
    cfg.search = (enum swiotlb_search)search;
    hal_store32(&shared.setup_failed, swiotlb_init(&mem, &cfg) != 0);
  }
  barrier(n, NULL);
  if (hal_load32(&shared.setup_failed))
    return 1;
  if (s == NULL) {
    /* The irq core: nothing to map; it unmaps from the start of the timed
     * loop until every stream is drained. */
    barrier(n, snapshot_start);
    irq_core_run(c);
    barrier(n, snapshot_end);
    barrier(n, NULL);
    return 0;
  }

  /* Warm-up: fill the queue (and let dynamic pools grow) untimed. */
  s->maps = s->failures = 0;
  for (uint64_t i = 0; i < c->queue_depth; i++) stream_map(s, c, i, NULL);
  s->maps = s->failures = 0;
  hal_store32(&s->drained, 0);
  barrier(n, snapshot_start);

  elapsed_ns[rank] = stream_run(s, c, search);
  hal_stat_sample(search == SWIOTLB_POOL_FIRST ? "pool_first.core_elapsed_ns" : "area_first.core_elapsed_ns",
                  elapsed_ns[rank]);
  failures[rank] = s->failures;
  if (c->irq_core != 0) {
    /* Every mapping left goes to the irq core, which stops once all
     * streams are drained; the snapshot after it sees the same maps. */
    while (s->count > 0) stream_complete_oldest(s);
    stream_wait_unmapped(s, 0);
    hal_store32(&s->drained, 1);
    hal_sev();
  }
  barrier(n, snapshot_end);

  while (s->count > 0) stream_unmap_oldest(s, c);
  barrier(n, NULL);
  if (rank == 0) {
    collect(search, c);
    swiotlb_destroy(&mem);
  }
  return 0;
}

/* The seed's published gains (x86 VM, QEMU virtio SATA on a RAM-backed
 * disk) for the three cases it measured; false for any other case. */
static bool seed_gain_pct(unsigned cores, uint64_t map_bytes, double *pct) {
  if (cores == 1 && map_bytes == 4096)
    *pct = 25.4; /* "small" */
  else if (cores == 1 && map_bytes == 65536)
    *pct = 25.7; /* "big" */
  else if (cores == 4 && map_bytes == 4096)
    *pct = 23.6; /* "4way" */
  else
    return false;
  return true;
}

static void report(const struct bench_config *c) {
  const struct search_result *pf = &results[SWIOTLB_POOL_FIRST];
  const struct search_result *af = &results[SWIOTLB_AREA_FIRST];
  double seed = 0.0;
  const bool has_seed = seed_gain_pct(c->cores, c->map_bytes, &seed);

  hal_log(HAL_LOG_INFO,
          "swiotlb_bench (seed 004): %u core(s), %llu-byte maps, %llu in flight per core, device %llu ns, "
          "pools of %llu KiB x %u areas (%u at start, %s), unmaps on %s",
          c->cores, (unsigned long long)c->map_bytes, (unsigned long long)c->queue_depth,
          (unsigned long long)c->device_ns, (unsigned long long)(c->swiotlb.pool_size / 1024), c->swiotlb.nareas,
          c->swiotlb.extra_pools + 1, c->swiotlb.dynamic ? "dynamic" : "fixed",
          c->irq_core != 0 ? "the irq core" : "the mapping cores");
  for (unsigned s = SWIOTLB_POOL_FIRST; s <= SWIOTLB_AREA_FIRST; s++) {
    const struct search_result *r = &results[s];
    if (r->ran)
      hal_log(HAL_LOG_INFO, "%-10s %12.0f maps/s %9.1f MiB/s %8.2f slots/map %6.2f areas/map %3llu pools %llu failed",
              search_name(s), r->maps_per_s, r->mib_per_s, r->slots_per_map, r->areas_per_map,
              (unsigned long long)r->pools, (unsigned long long)r->failures);
  }
  if (!pf->ran || !af->ran || pf->maps_per_s <= 0.0)
    return;
  const double gain = 100.0 * (af->maps_per_s - pf->maps_per_s) / pf->maps_per_s;
  hal_stat_set("gain_pct", gain);
  if (has_seed) {
    hal_stat_set("seed_gain_pct", seed);
    hal_log(HAL_LOG_INFO, "area_first gain %+.1f%% (seed %+.1f%%)", gain, seed);
  } else {
    hal_log(HAL_LOG_INFO, "area_first gain %+.1f%% (the seed has no figure for this case)", gain);
  }
}

static int swiotlb_bench_main(void) {
  if (!app_single_instance("swiotlb_bench")) return 1;
  struct bench_config c;
  SW_CACHELINE_ALIGNED struct stream s; /* shared with the irq core */
  const unsigned rank = hal_cpu_id();
  const uint64_t which = hal_param("search");
  int rc = 0;

  if (!read_config(&c))
    return 1;
  const bool irq = c.irq_core != 0 && rank == c.irq_core;
  if ((rank >= c.cores && !irq) || which > SEARCH_BOTH) {
    hal_log(HAL_LOG_ERROR, "swiotlb_bench: runs on cores 0..%u and irq_core (cpu%u given it); search must be 0, 1 or 2",
            c.cores - 1, rank);
    return 1;
  }
  if (!irq) {
    if (!stream_init(&s, &c)) {
      hal_log(HAL_LOG_ERROR, "swiotlb_bench: no memory for cpu%u's buffers", rank);
      return 1;
    }
    streams[rank] = &s;
  }
  for (unsigned search = SWIOTLB_POOL_FIRST; search <= SWIOTLB_AREA_FIRST && rc == 0; search++) {
    if (which == SEARCH_BOTH || which == search)
      rc = run_search(rank, &c, search, irq ? NULL : &s);
  }
  if (rc == 0 && rank == 0)
    report(&c);
  if (!irq)
    stream_free(&s);
  return rc;
}

static const struct hal_param_decl swiotlb_bench_params[] = {
    {"iterations", 20000, "Timed maps per core (after the warm-up that fills the queue).", 0, 0},
    {"map_bytes", 4096, "Bytes per mapping (at most 256 KiB).", 0, 0},
    {"queue_depth", 96, "Mappings each core keeps in flight.", 0, 0},
    {"device_ns", 1000, "Device work between a map and the unmap of the oldest mapping, ns.", 0, 0},
    {"pool_kib", 1024, "Size of each pool, KiB (the seed's swiotlb=512: 512 slots of 2 KiB).", 0, 0},
    {"pools", 1, "Pools made at start (the default pool and pools-1 more).", 0, 0},
    {"areas", 4, "Areas per pool (the seed's swiotlb=512,4); rounded to a power of two the pool can hold.", 0, 0},
    {"dynamic", 1, "1: add a pool when every pool is full (transient pool meanwhile), as dynamic swiotlb.", 0, 0},
    {"search", 2, "0 pool_first (before seed 004), 1 area_first (seed 004), 2 both in sequence.", 0, 0},
    {"cores", 0, "Cores running the app, which must be cores 0..cores-1 (0: every core of the platform).", 0, 0},
    {"spinlock", 0, "The bounce buffers' locks (the pool list's, each area's): 0 ticket; 1 queued, Linux's qspinlock (x86 since 4.2, arm64 since 4.18).", 1, "ticket,queued"},
    {"irq_core", 0, "0: each core unmaps its own mappings. k: core k (outside 0..cores-1, and given the app) runs every "
     "unmap, as the completion interrupt of a virtio disk does on another vCPU (Linux virtio_blk.c virtblk_done -> "
     "blk_mq_complete_request -> virtblk_unmap_data, completed where the interrupt arrived: blk-mq.c "
     "blk_mq_complete_need_ipi); a core maps again once at most queue_depth of its mappings are live.", 0, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_swiotlb_bench = {"swiotlb_bench",
                                          "Bounce-buffer map/unmap streams on small swiotlb pools, pool-first vs area-first (seed 004).",
                                          swiotlb_bench_main, swiotlb_bench_params};

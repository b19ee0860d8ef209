/*
 * iova_bench: the IOVA figure of seed 001 (6.48 -> 933 Mbit/s once 64-bit
 * allocations got their own cached node).
 *
 * A device with a 64-bit DMA mask first takes `live` long-lived IOVAs and
 * keeps them (the buffers of deep rings), then maps and unmaps packet
 * buffers in a steady state: each pair allocates one IOVA and frees the
 * oldest of `inflight` in flight. Allocations go straight to the full
 * dma_bits space, as for a device without the PCI 32-bit-first workaround,
 * which is where the seed's walk happened. With only the 32-bit cached node
 * (IOVA_CACHED32_ONLY, Linux before 2017) each allocation starts at the top
 * of the tree and steps down through every live IOVA to the first hole; with
 * a cached node per space (IOVA_CACHED32_AND_64) it starts where the last
 * one went in.
 *
 * The rcache is off by default: with it, this steady state never reaches the
 * tree (a free lands in the CPU's magazine and the next allocation takes it
 * back), so neither policy walks anything and the seed's slow path cannot
 * show. The seed's "before" figure exists only because its allocations
 * reached the tree.
 *
 * Throughput conversion: one IOVA per received packet of packet_bytes, so
 * Mbit/s = pairs per simulated second * packet_bytes * 8 / 1e6. That is the
 * rate the allocator alone would let a NIC reach; everything else a packet
 * costs is left out.
 *
 * Runs on one core. iova_cache_policy 2 runs both policies in sequence, each
 * on a fresh domain, and logs a table with the seed's figures beside the
 * measured ones. Stats go under sw.iova_bench.<policy>.<name>.
 */
#include "apps/app_instance.h"
#include "hal/hal.h"
#include "iommu/iova.h"
#include "lib/compiler.h"
#include "lib/string.h"

#define GRANULE 4096u
#define POLICY_BOTH 2u

/* Seed 001's iperf figures on the NIC, Mbit/s. */
#define SEED_MBPS_CACHED32_ONLY 6.48
#define SEED_MBPS_CACHED32_AND_64 933.0

struct bench_config {
  uint64_t live, pairs, inflight, size_pages, limit_pfn, packet_bytes;
  bool rcache;
};

struct policy_result {
  bool ran;
  double allocs_per_s, ns_per_pair, nodes_per_alloc, nodes_per_free, mbps;
};

/* The tree links to the domain's anchor, so the domain must not move. */
static SW_CACHELINE_ALIGNED struct iova_domain domain;
static SW_CACHELINE_ALIGNED volatile uint32_t started;

static const char *policy_name(unsigned policy) {
  return policy == IOVA_CACHED32_ONLY ? "cached32_only" : "cached32_and_64";
}

static double seed_mbps(unsigned policy) {
  return policy == IOVA_CACHED32_ONLY ? SEED_MBPS_CACHED32_ONLY : SEED_MBPS_CACHED32_AND_64;
}

/* "<policy>.<name>" for hal_stat_set, which copies the name: one buffer
 * serves all. */
static const char *stat_name(unsigned policy, const char *name) {
  static char buf[96];
  const char *prefix = policy_name(policy);
  size_t n = 0;
  for (size_t i = 0; prefix[i] && n < sizeof buf - 2; i++) buf[n++] = prefix[i];
  buf[n++] = '.';
  for (size_t i = 0; name[i] && n < sizeof buf - 1; i++) buf[n++] = name[i];
  buf[n] = 0;
  return buf;
}

static bool read_config(struct bench_config *c) {
  const uint64_t dma_bits = hal_param("dma_bits");
  c->live = hal_param("live");
  c->pairs = hal_param("pairs");
  c->inflight = hal_param("inflight");
  c->size_pages = hal_param("size_pages");
  c->packet_bytes = hal_param("packet_bytes");
  c->rcache = hal_param("rcache") != 0;
  if (dma_bits < 33 || dma_bits > 52 || c->pairs == 0 || c->inflight == 0 || c->size_pages == 0) {
    hal_log(HAL_LOG_ERROR, "iova_bench: need 33 <= dma_bits <= 52 and positive pairs, inflight, size_pages");
    return false;
  }
  /* Above 4 GiB, so every request is a 64-bit one. */
  c->limit_pfn = ((uint64_t)1 << (dma_bits - 12)) - 1;
  return true;
}

static bool alloc_n(const struct bench_config *c, uint64_t *pfns, uint64_t n) {
  for (uint64_t i = 0; i < n; i++) {
    const uint64_t pfn = alloc_iova_fast(&domain, c->size_pages, c->limit_pfn, true);
    if (pfn == 0)
      return false;
    if (pfns != NULL)
      pfns[i] = pfn;
  }
  return true;
}

/* The timed steady state: allocate one, free the oldest in flight. */
static bool steady_state(unsigned policy, const struct bench_config *c, uint64_t *ring,
                         struct policy_result *r) {
  /* Literals: the platform tells histograms apart by the name's address. */
  const char *pair_ns = policy == IOVA_CACHED32_ONLY ? "cached32_only.pair_ns" : "cached32_and_64.pair_ns";
  uint64_t alloc_visits = 0, free_visits = 0;

  const uint64_t t0 = hal_now_ns();
  for (uint64_t i = 0; i < c->pairs; i++) {
    const uint64_t start = hal_now_ns();
    const uint64_t v0 = domain.stats.nodes_visited;
    const uint64_t pfn = alloc_iova_fast(&domain, c->size_pages, c->limit_pfn, true);
    const uint64_t v1 = domain.stats.nodes_visited;
    if (pfn == 0)
      return false;
    free_iova_fast(&domain, ring[i % c->inflight], c->size_pages);
    ring[i % c->inflight] = pfn;
    alloc_visits += v1 - v0;
    free_visits += domain.stats.nodes_visited - v1;
    hal_stat_sample(pair_ns, hal_now_ns() - start);
  }
  const uint64_t elapsed = hal_now_ns() - t0;
  r->ns_per_pair = (double)elapsed / (double)c->pairs;
  r->allocs_per_s = elapsed ? (double)c->pairs * 1e9 / (double)elapsed : 0.0;
  r->nodes_per_alloc = (double)alloc_visits / (double)c->pairs;
  r->nodes_per_free = (double)free_visits / (double)c->pairs;
  r->mbps = r->allocs_per_s * (double)c->packet_bytes * 8.0 / 1e6;
  return true;
}

static void publish(unsigned policy, const struct policy_result *r, uint64_t populate_ns) {
  hal_stat_set(stat_name(policy, "allocs_per_s"), r->allocs_per_s);
  hal_stat_set(stat_name(policy, "ns_per_pair"), r->ns_per_pair);
  hal_stat_set(stat_name(policy, "nodes_per_alloc"), r->nodes_per_alloc);
  hal_stat_set(stat_name(policy, "nodes_per_free"), r->nodes_per_free);
  hal_stat_set(stat_name(policy, "mbps"), r->mbps);
  hal_stat_set(stat_name(policy, "seed_mbps"), seed_mbps(policy));
  hal_stat_set(stat_name(policy, "ratio"), r->mbps / seed_mbps(policy));
  hal_stat_set(stat_name(policy, "populate_ms"), (double)populate_ns / 1e6);
  hal_stat_set(stat_name(policy, "rcache_hits"), (double)domain.stats.rcache_hits);
}

static int run_policy(unsigned policy, const struct bench_config *c, struct policy_result *r) {
  const struct iova_policy p = {(enum iova_cache_policy)policy, c->rcache, false};
  phys_addr_t pa;
  int rc = 0;

  if (init_iova_domain(&domain, GRANULE, 1, &p) != 0) {
    hal_log(HAL_LOG_ERROR, "iova_bench: cannot set up the IOVA domain");
    return 1;
  }
  uint64_t *ring = hal_dma_alloc(c->inflight * sizeof(uint64_t), 64, &pa);
  const uint64_t t0 = hal_now_ns();
  if (ring == NULL || !alloc_n(c, NULL, c->live) || !alloc_n(c, ring, c->inflight)) {
    hal_log(HAL_LOG_ERROR, "iova_bench: out of memory or IOVA space for %llu live IOVAs",
            (unsigned long long)(c->live + c->inflight));
    rc = 1;
  }
  const uint64_t populate_ns = hal_now_ns() - t0;
  if (rc == 0 && !steady_state(policy, c, ring, r)) {
    hal_log(HAL_LOG_ERROR, "iova_bench: an allocation failed in the steady state");
    rc = 1;
  }
  if (rc == 0) {
    r->ran = true;
    publish(policy, r, populate_ns);
  }
  /* Every node lives in the domain's slab: this frees the live set too. */
  put_iova_domain(&domain);
  if (ring != NULL)
    hal_dma_free(ring);
  return rc;
}

static void log_table(const struct bench_config *c, const struct policy_result *results) {
  hal_log(HAL_LOG_INFO,
          "iova_bench (seed 001): %llu live 64-bit IOVAs, %llu alloc+free pairs of %llu page(s), %llu in flight, "
          "rcache %s; Mbit/s = pairs/s x %llu B x 8",
          (unsigned long long)c->live, (unsigned long long)c->pairs, (unsigned long long)c->size_pages,
          (unsigned long long)c->inflight, c->rcache ? "on" : "off", (unsigned long long)c->packet_bytes);
  hal_log(HAL_LOG_INFO, "%-16s %12s %11s %12s %11s %12s %12s %9s", "policy", "allocs/s", "ns/pair", "nodes/alloc",
          "nodes/free", "Mbit/s", "seed Mbit/s", "ratio");
  for (unsigned p = IOVA_CACHED32_ONLY; p <= IOVA_CACHED32_AND_64; p++) {
    const struct policy_result *r = &results[p];
    if (!r->ran)
      continue;
    hal_log(HAL_LOG_INFO, "%-16s %12.0f %11.1f %12.1f %11.1f %12.2f %12.2f %9.2f", policy_name(p), r->allocs_per_s,
            r->ns_per_pair, r->nodes_per_alloc, r->nodes_per_free, r->mbps, seed_mbps(p), r->mbps / seed_mbps(p));
  }
}

static int iova_bench_main(void) {
  if (!app_single_instance("iova_bench")) return 1;
  struct bench_config c;
  struct policy_result results[2];
  const uint64_t which = hal_param("iova_cache_policy");

  /* One allocator, one core: any other core given this app has nothing to do. */
  if (hal_fetch_add32(&started, 1) != 0) {
    hal_log(HAL_LOG_WARN, "iova_bench runs on one core; cpu%u stays idle", hal_cpu_id());
    return 0;
  }
  if (!read_config(&c))
    return 1;
  if (which > POLICY_BOTH) {
    hal_log(HAL_LOG_ERROR, "iova_bench: iova_cache_policy must be 0, 1 or 2");
    return 1;
  }
  sw_memset(results, 0, sizeof results);
  for (unsigned p = IOVA_CACHED32_ONLY; p <= IOVA_CACHED32_AND_64; p++) {
    if (which != POLICY_BOTH && which != p)
      continue;
    if (run_policy(p, &c, &results[p]) != 0)
      return 2;
  }
  log_table(&c, results);
  return 0;
}

static const struct hal_param_decl iova_bench_params[] = {
    {"live", 32768, "Long-lived 64-bit IOVAs allocated first and held (deep rings' buffers).", 0, 0},
    {"pairs", 2000, "Timed steady-state alloc+free pairs.", 0, 0},
    {"inflight", 32, "IOVAs of the steady state in flight: each pair frees the one allocated this many pairs earlier.", 0, 0},
    {"size_pages", 1, "4 KiB pages per IOVA (a 1500-byte packet buffer takes one).", 0, 0},
    {"packet_bytes", 1500, "Bytes per packet for the Mbit/s conversion (one IOVA per packet).", 0, 0},
    {"dma_bits", 48, "Device DMA mask width; allocations use the whole space (33 to 52).", 0, 0},
    {"iova_cache_policy", 2, "0 cached32_only (before 2017), 1 cached32_and_64 (since), 2 both in sequence.", 0, 0},
    {"rcache", 0, "1: per-CPU range caches in front of the tree (hide the walk in this steady state).", 0, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_iova_bench = {"iova_bench",
                                       "IOVA alloc+free pairs with many live 64-bit IOVAs, per cached-node policy (seed 001).",
                                       iova_bench_main, iova_bench_params};

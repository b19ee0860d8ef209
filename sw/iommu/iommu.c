/*
 * IOMMU core on the arm-smmu-v3 driver and io-pgtable-arm. See iommu.h and
 * docs/dma-mapping.md.
 *
 * Cost annotations: the page-table code charges its own work (descriptor
 * writes, table allocations, cache cleaning); this layer charges the calls
 * Linux makes between the layers. Every hop Linux takes through a function
 * pointer costs one "indirect_call"; each helper function it enters on the
 * way costs one "function_call" (counts in pgtable_frames and at each call
 * site). The driver's command queue charges its own MMIO and atomics.
 */
#include "iommu/iommu.h"

#include "lib/compiler.h"
#include "lib/string.h"

/* Input address bits of a domain: Linux gives stage-1 DMA domains the
 * 48-bit VA space of a 4-level (4K) table. */
#define IOMMU_IAS 48u

/* ---- Cost annotations. */

static void charge_indirect(struct iommu_domain *dom, uint64_t n) {
  hal_cost_id(dom->cost_indirect, n);
  dom->stats.indirect_calls += n;
}

static void charge_calls(struct iommu_domain *dom, uint64_t n) {
  hal_cost_id(dom->cost_call, n);
  dom->stats.function_calls += n;
}

/* Entering the driver's map or unmap op costs more than the call: the
 * arm-smmu op of the seeds' era takes a runtime-PM reference and the
 * page-table lock with interrupts saved, and drops both on the way out. */
static void charge_driver_op(struct iommu_domain *dom) {
  hal_cost_id(dom->cost_driver_op, 1);
  dom->stats.driver_ops++;
}

/* Frames io-pgtable-arm enters for one map_pages or unmap_pages call: its
 * entry point and the leaf helper (descriptor building or clearing), plus one
 * recursive step per table level from the initial one down to the level whose
 * block size is pgsize. */
static uint64_t pgtable_frames(const struct iommu_domain *dom, size_t pgsize) {
  const struct io_pgtable *p = &dom->pgt;
  const unsigned leaf_level = 3u - (sw_ilog2_u64(pgsize) - p->pg_shift) / p->bits_per_level;
  return 2u + (leaf_level >= p->start_level ? leaf_level - p->start_level + 1u : 1u);
}

/* ---- Invalidation through the driver, counted per domain, sent to every
 * SMMU a stream of the domain sits behind. Linux keeps one such list per
 * domain since the arm_smmu_invs rework (commit 587bb3e56a2c,
 * "iommu/arm-smmu-v3: Add arm_smmu_invs based arm_smmu_domain_inv_range()"),
 * sorted so that each SMMU's commands go out as one batch with its sync. */

static void count_tlbi_result(struct iommu_domain *dom, int err) {
  if (err) dom->stats.tlbi_errors++;
}

/* What one invalidation removes. */
enum inv_kind {
  INV_CONTEXT, /* every translation of the ASID */
  INV_LEAVES,  /* leaves of pgsize bytes in [iova, iova + size), by the SMMU's TLBI policy */
  INV_WALK,    /* a removed table: one non-leaf TLBI per pgsize bytes */
  INV_SYNC,    /* nothing: a CMD_SYNC alone (iotlb_sync with sync_always) */
};
struct inv {
  enum inv_kind kind;
  uint64_t iova, size, pgsize;
};

/* The invalidation's commands on one SMMU, with their CMD_SYNC or without. */
static int inv_on(struct iommu_domain *dom, struct smmu_device *s, const struct inv *r, bool sync) {
  uint64_t *tlbis = &dom->stats.tlbi_commands;
  switch (r->kind) {
    case INV_CONTEXT:
      (*tlbis)++;
      return sync ? smmu_tlbi_asid(s, dom->asid) : smmu_tlbi_asid_nosync(s, dom->asid);
    case INV_LEAVES:
      /* The driver's range and threshold encodings are for 4 KiB tables (TG =
       * 4K); a 16K or 64K domain gets one TLBI per leaf, which the SMMU
       * matches whatever the granule. */
      if (dom->pgt.cfg.granule == IO_PGTABLE_SZ_4K)
        return sync ? smmu_tlbi_range_pgsize(s, dom->asid, r->iova, r->size, r->pgsize, true, tlbis)
                    : smmu_tlbi_range_pgsize_nosync(s, dom->asid, r->iova, r->size, r->pgsize, true, tlbis);
      return sync ? smmu_tlbi_va_each(s, dom->asid, r->iova, r->size, r->pgsize, true, tlbis)
                  : smmu_tlbi_va_each_nosync(s, dom->asid, r->iova, r->size, r->pgsize, true, tlbis);
    case INV_WALK:
      return sync ? smmu_tlbi_va_each(s, dom->asid, r->iova, r->size, r->pgsize, false, tlbis)
                  : smmu_tlbi_va_each_nosync(s, dom->asid, r->iova, r->size, r->pgsize, false, tlbis);
    case INV_SYNC:
      return sync ? smmu_sync(s) : 0;
  }
  return -1;
}

/* ---- ATS: the streams whose endpoints cache translations (iommu_enable_ats).
 * Kept apart from struct iommu_domain, whose layout the simulated caches see:
 * runs without ATS look at nothing but the count. */
static struct ats_stream {
  const struct iommu_domain *dom;
  struct smmu_device *smmu;
  uint32_t sid;
} ats_streams[IOMMU_MAX_ATS_STREAMS];
static unsigned n_ats_streams;

/* After the TLBIs' SYNC (Linux's arm_smmu_atc_inv_domain): a CMD_ATC_INV to
 * each ATS endpoint of the domain over the range (size 0: everything), then
 * a CMD_SYNC on each SMMU that got one. */
static int atc_invalidate(const struct iommu_domain *dom, uint64_t iova, uint64_t size) {
  int err = 0;
  struct smmu_device *synced[IOMMU_DOMAIN_MAX_SMMUS];
  unsigned n_synced = 0;
  for (unsigned i = 0; i < n_ats_streams; i++) {
    const struct ats_stream *a = &ats_streams[i];
    if (a->dom != dom) continue;
    err |= smmu_atc_inv(a->smmu, a->sid, iova, size, false);
    bool seen = false;
    for (unsigned j = 0; j < n_synced; j++) seen = seen || synced[j] == a->smmu;
    if (!seen && n_synced < IOMMU_DOMAIN_MAX_SMMUS) synced[n_synced++] = a->smmu;
  }
  for (unsigned j = 0; j < n_synced; j++) err |= smmu_sync(synced[j]);
  return err;
}

static int atc_invalidate_for(const struct iommu_domain *dom, const struct inv *r) {
  if (n_ats_streams == 0) return 0;
  switch (r->kind) {
    case INV_CONTEXT: return atc_invalidate(dom, 0, 0);
    case INV_LEAVES:
    case INV_WALK: return r->size ? atc_invalidate(dom, r->iova, r->size) : 0;
    case INV_SYNC: return 0;
  }
  return 0;
}

/* On every SMMU of the domain, by the fan-out policy: one after another, each
 * waited for (Linux); or the commands to all of them first, then each one's
 * CMD_SYNC, so that the SMMUs work on them at once. Then the ATS endpoints'
 * ATCs. */
static void invalidate(struct iommu_domain *dom, const struct inv *r) {
  int err = 0;
  if (dom->n_smmus <= 1 || dom->policy.fanout == IOMMU_FANOUT_SERIAL) {
    for (unsigned i = 0; i < dom->n_smmus; i++) err |= inv_on(dom, dom->smmus[i], r, true);
  } else {
    for (unsigned i = 0; i < dom->n_smmus; i++) err |= inv_on(dom, dom->smmus[i], r, false);
    for (unsigned i = 0; i < dom->n_smmus; i++) err |= smmu_sync(dom->smmus[i]);
  }
  err |= atc_invalidate_for(dom, r);
  count_tlbi_result(dom, err);
}

static void invalidate_context(struct iommu_domain *dom) {
  dom->stats.flush_alls++;
  const struct inv r = {INV_CONTEXT, 0, 0, 0};
  invalidate(dom, &r);
}

/* ---- Flush ops: what io-pgtable calls back into the driver. Each is reached
 * through io-pgtable's function pointer, hence the indirect call. */

static void flush_op_tlb_flush_all(void *cookie) {
  struct iommu_domain *dom = (struct iommu_domain *)cookie;
  charge_indirect(dom, 1);
  invalidate_context(dom);
}

/* A whole table left the tree: the SMMU may hold partial walks through it
 * (walk cache) as well as leaves, and the table page is about to be freed,
 * so the invalidation is synchronous and not leaf-only. */
static void flush_op_tlb_flush_walk(uint64_t iova, size_t size, size_t granule, void *cookie) {
  struct iommu_domain *dom = (struct iommu_domain *)cookie;
  charge_indirect(dom, 1);
  dom->stats.walk_flushes++;
  if (dom->policy.walk_flush == IOMMU_WALK_FLUSH_ASID) {
    invalidate_context(dom);
    return;
  }
  const struct inv r = {INV_WALK, iova, size, granule};
  invalidate(dom, &r);
}

/* A leaf left the tree: remember it for the next sync. A leaf of another size
 * than those gathered, or one that would stretch the range over IOVAs never
 * unmapped, is not merged: the gathered range is synced first (the rule of
 * Linux's gather helper, iommu_iotlb_gather_add_page in v6.1
 * include/linux/iommu.h). */
static void flush_op_tlb_add_page(struct iommu_iotlb_gather *gather, uint64_t iova, size_t granule, void *cookie) {
  struct iommu_domain *dom = (struct iommu_domain *)cookie;
  charge_indirect(dom, 1);
  charge_calls(dom, 1); /* the driver's page invalidation helper */
  if ((gather->pgsize && gather->pgsize != granule) || iommu_iotlb_gather_is_disjoint(gather, iova, granule)) {
    dom->stats.gather_syncs++;
    iommu_iotlb_sync(dom, gather);
  }
  gather->pgsize = granule;
  iommu_iotlb_gather_add_range(gather, iova, granule);
  dom->stats.pages_gathered++;
}

static const struct iommu_flush_ops iommu_flush_ops_smmu = {
    flush_op_tlb_flush_all,
    flush_op_tlb_flush_walk,
    flush_op_tlb_add_page,
};

void iommu_iotlb_sync(struct iommu_domain *dom, struct iommu_iotlb_gather *gather) {
  charge_indirect(dom, 1); /* core -> driver iotlb_sync */
  const bool queued = gather->queued;
  if (gather->pgsize && !iommu_iotlb_gather_empty(gather)) {
    dom->stats.iotlb_syncs++;
    const struct inv r = {INV_LEAVES, gather->start, gather->end - gather->start + 1, gather->pgsize};
    invalidate(dom, &r);
  } else if (dom->policy.sync_always) {
    dom->stats.iotlb_syncs++;
    const struct inv r = {INV_SYNC, 0, 0, 0};
    invalidate(dom, &r);
  }
  iommu_iotlb_gather_init(gather);
  gather->queued = queued;
}

void iommu_flush_iotlb_all(struct iommu_domain *dom) {
  charge_indirect(dom, 1); /* core -> driver flush_iotlb_all */
  invalidate_context(dom);
}

/* ---- Domain set-up. */

int iommu_domain_init(struct iommu_domain *dom, struct smmu_device *smmu, uint16_t asid, size_t granule,
                      const struct iommu_domain_policy *policy) {
  if (!dom || !smmu) return -IOMMU_EINVAL;
  sw_memset(dom, 0, sizeof(*dom));
  dom->smmu = smmu;
  dom->smmus[0] = smmu;
  dom->n_smmus = 1;
  dom->asid = asid;
  if (policy) dom->policy = *policy;
  dom->cost_indirect = hal_cost_lookup("indirect_call");
  dom->cost_call = hal_cost_lookup("function_call");
  dom->cost_driver_op = hal_cost_lookup("iommu_driver_op");

  struct io_pgtable_cfg cfg;
  sw_memset(&cfg, 0, sizeof(cfg));
  cfg.granule = granule;
  cfg.ias = IOMMU_IAS;
  cfg.oas = SW_MAX(32u, SW_MIN(smmu->feat.oas_bits, 48u));
  cfg.coherent_walk = !dom->policy.non_coherent_walk;
  cfg.tlb = &iommu_flush_ops_smmu;
  cfg.cookie = dom;
  const int ret = io_pgtable_init(&dom->pgt, &cfg);
  if (ret) return ret;

  dom->pgsize_bitmap = cfg.pgsize_bitmap;
  dom->min_pgsize = dom->pgsize_bitmap & (~dom->pgsize_bitmap + 1);
  dom->s1.ttb = cfg.s1.ttbr;
  dom->s1.t0sz = cfg.s1.t0sz;
  dom->s1.tg0 = cfg.s1.tg0;
  dom->s1.ips = cfg.s1.ips;
  dom->s1.irgn0 = cfg.s1.irgn0;
  dom->s1.orgn0 = cfg.s1.orgn0;
  dom->s1.sh0 = cfg.s1.sh0;
  dom->s1.mair = cfg.s1.mair;
  return 0;
}

void iommu_domain_destroy(struct iommu_domain *dom) {
  if (!dom) return;
  /* Its ATS streams go with it (each was detached first, which forgot it). */
  for (unsigned i = 0; i < n_ats_streams;)
    if (ats_streams[i].dom == dom) ats_streams[i] = ats_streams[--n_ats_streams];
    else i++;
  io_pgtable_destroy(&dom->pgt);
}

/* Domain changes go into a recorded trace (hal_dma_trace). */
static void trace_domain(uint64_t traced, uint32_t op, const struct iommu_domain *dom, uint32_t sid) {
  if (!traced) return;
  struct hal_dma_call t = {traced, op, sid, 3 /* DMA_NONE */, dom->asid, 0, 0, 0, 0, 0, 0, 0};
  hal_dma_trace(&t);
}

int iommu_attach_device(struct iommu_domain *dom, uint32_t sid) { return iommu_attach_device_on(dom, dom->smmu, sid); }

/* The domain's invalidations go to `smmu` from now on: added once. */
static int add_smmu(struct iommu_domain *dom, struct smmu_device *smmu) {
  for (unsigned i = 0; i < dom->n_smmus; i++)
    if (dom->smmus[i] == smmu) return 0;
  if (dom->n_smmus == IOMMU_DOMAIN_MAX_SMMUS) return -IOMMU_ENOMEM;
  dom->smmus[dom->n_smmus++] = smmu;
  return 0;
}

int iommu_attach_device_on(struct iommu_domain *dom, struct smmu_device *smmu, uint32_t sid) {
  const uint64_t traced = hal_dma_trace_begin();
  charge_indirect(dom, 1); /* core -> driver attach_dev */
  if (!smmu) return -IOMMU_EINVAL;
  const int err = add_smmu(dom, smmu);
  if (err) return err;
  if (smmu_attach_s1_cfg(smmu, sid, dom->asid, &dom->s1)) return -IOMMU_EIO;
  trace_domain(traced, HAL_DMA_TRACE_ATTACH, dom, sid);
  return 0;
}

static struct ats_stream *find_ats_stream(const struct smmu_device *smmu, uint32_t sid) {
  for (unsigned i = 0; i < n_ats_streams; i++)
    if (ats_streams[i].smmu == smmu && ats_streams[i].sid == sid) return &ats_streams[i];
  return 0;
}

int iommu_enable_ats(struct iommu_domain *dom, struct smmu_device *smmu, uint32_t sid) {
  if (!dom || !smmu || !smmu->feat.ats) return -IOMMU_EINVAL;
  struct ats_stream *a = find_ats_stream(smmu, sid);
  if (!a && n_ats_streams == IOMMU_MAX_ATS_STREAMS) return -IOMMU_ENOMEM;
  if (smmu_set_eats(smmu, sid, true)) return -IOMMU_EIO;
  if (!a) a = &ats_streams[n_ats_streams++];
  *a = (struct ats_stream){dom, smmu, sid};
  return 0;
}

/* After the stream's STE stopped translating (so the endpoint can get no new
 * translation): the endpoint forgets every one it holds, and the stream
 * leaves the list. Linux's arm_smmu_disable_ats first turns ATS off in the
 * endpoint, which the model has no configuration space for. */
static int forget_ats_stream(struct smmu_device *smmu, uint32_t sid) {
  struct ats_stream *a = find_ats_stream(smmu, sid);
  if (!a) return 0;
  const int err = smmu_atc_inv(smmu, sid, 0, 0, true);
  *a = ats_streams[--n_ats_streams];
  return err;
}

int iommu_detach_device(struct iommu_domain *dom, uint32_t sid) { return iommu_detach_device_on(dom, dom->smmu, sid); }

int iommu_detach_device_on(struct iommu_domain *dom, struct smmu_device *smmu, uint32_t sid) {
  const uint64_t traced = hal_dma_trace_begin();
  charge_indirect(dom, 1);
  if (!smmu || smmu_detach(smmu, sid) || forget_ats_stream(smmu, sid)) return -IOMMU_EIO;
  trace_domain(traced, HAL_DMA_TRACE_DETACH, dom, sid);
  return 0;
}

/* ---- Page sizes. */

/* Bits [n:0] set. */
static uint64_t mask_through(unsigned n) { return n >= 63 ? ~0ull : (2ull << n) - 1; }

size_t iommu_pgsize(const struct iommu_domain *dom, uint64_t iova, phys_addr_t pa, size_t size, size_t *count) {
  const uint64_t aligned_to = iova | pa;
  /* Sizes no larger than what is left, and to which both addresses are aligned. */
  uint64_t sizes = dom->pgsize_bitmap & mask_through(sw_ilog2_u64(size));
  if (aligned_to) sizes &= mask_through((unsigned)__builtin_ctzll(aligned_to));
  if (!sizes) {
    *count = 0;
    return 0;
  }
  const unsigned shift = sw_ilog2_u64(sizes);
  uint64_t run = size;
  /* If the next larger size becomes usable further on (iova and pa share its
   * alignment offset), stop this run where that happens so the rest can use
   * it. */
  const uint64_t larger = dom->pgsize_bitmap & ~mask_through(shift);
  if (larger) {
    const uint64_t next = larger & (~larger + 1);
    if (((iova ^ pa) & (next - 1)) == 0) {
      const uint64_t to_boundary = next - (aligned_to & (next - 1));
      if (to_boundary + next <= size) run = to_boundary;
    }
  }
  *count = (size_t)(run >> shift);
  return (size_t)1 << shift;
}

/* ---- Map. */

static int pgtable_map_pages(struct iommu_domain *dom, uint64_t iova, phys_addr_t pa, size_t pgsize, size_t count,
                             unsigned prot, size_t *mapped) {
  charge_calls(dom, pgtable_frames(dom, pgsize));
  dom->stats.map_pages_calls++;
  return io_pgtable_map_pages(&dom->pgt, iova, pa, pgsize, count, prot, mapped);
}

/* Maps a run chunk by chunk: each chunk takes the largest page size allowed
 * and as many pages as one map_pages call will take (it stops at the end of
 * a leaf table). `hops` indirect calls are charged per chunk: 2 when the
 * chunk goes core -> driver -> io-pgtable, 0 when the page-table code loops
 * itself. *mapped grows by what was mapped, also on failure. */
static int map_chunks(struct iommu_domain *dom, uint64_t iova, phys_addr_t pa, size_t size, unsigned prot,
                      unsigned hops, size_t *mapped) {
  while (size) {
    size_t count = 0;
    const size_t pgsize = iommu_pgsize(dom, iova, pa, size, &count);
    charge_calls(dom, 1);
    if (!pgsize || !count) return -IOMMU_EINVAL;
    charge_indirect(dom, hops);
    if (hops) charge_driver_op(dom);
    size_t done = 0;
    const int ret = pgtable_map_pages(dom, iova, pa, pgsize, count, prot, &done);
    *mapped += done;
    if (ret) return ret;
    if (!done) return -IOMMU_EINVAL;
    iova += done;
    pa += done;
    size -= done;
  }
  return 0;
}

static bool aligned_to_min_page(const struct iommu_domain *dom, uint64_t a, uint64_t b, uint64_t c) {
  return ((a | b | c) & (dom->min_pgsize - 1)) == 0;
}

/* Linux's __iommu_map: checks, then the whole chain for every chunk. */
static int map_one_call_chain(struct iommu_domain *dom, uint64_t iova, phys_addr_t pa, size_t size, unsigned prot,
                              size_t *mapped) {
  charge_calls(dom, 1);
  if (!size || !aligned_to_min_page(dom, iova, pa, size)) return -IOMMU_EINVAL;
  return map_chunks(dom, iova, pa, size, prot, 2, mapped);
}

int iommu_map(struct iommu_domain *dom, uint64_t iova, phys_addr_t pa, size_t size, unsigned prot) {
  charge_calls(dom, 1);
  dom->stats.maps++;
  size_t mapped = 0;
  const int ret = map_one_call_chain(dom, iova, pa, size, prot, &mapped);
  if (ret) {
    /* As Linux, leave nothing of a failed map behind. */
    if (mapped) iommu_unmap(dom, iova, mapped);
    return ret;
  }
  dom->stats.bytes_mapped += size;
  return 0;
}

/* ---- Unmap. */

/* Linux's __iommu_unmap: chunks chosen as for map (iova standing in for pa),
 * each through core -> driver -> io-pgtable, until done or a chunk unmaps
 * nothing (a hole, or part of a larger block). */
static size_t unmap_chunks(struct iommu_domain *dom, uint64_t iova, size_t size,
                           struct iommu_iotlb_gather *gather) {
  charge_calls(dom, 1);
  dom->stats.unmaps++;
  if (!size || !aligned_to_min_page(dom, iova, 0, size)) return 0;
  size_t unmapped = 0;
  while (unmapped < size) {
    size_t count = 0;
    const size_t pgsize = iommu_pgsize(dom, iova, iova, size - unmapped, &count);
    charge_calls(dom, 1);
    if (!pgsize || !count) break;
    if (dom->policy.sync_each_page) count = 1; /* one ops->unmap call per page, as 4.13 */
    charge_indirect(dom, 2);
    charge_driver_op(dom);
    charge_calls(dom, pgtable_frames(dom, pgsize));
    dom->stats.unmap_pages_calls++;
    const size_t done = io_pgtable_unmap_pages(&dom->pgt, iova, pgsize, count, gather);
    if (!done) break;
    if (dom->policy.sync_each_page && !gather->queued) iommu_iotlb_sync(dom, gather);
    iova += done;
    unmapped += done;
  }
  dom->stats.bytes_unmapped += unmapped;
  return unmapped;
}

size_t iommu_unmap_fast(struct iommu_domain *dom, uint64_t iova, size_t size, struct iommu_iotlb_gather *gather) {
  return unmap_chunks(dom, iova, size, gather);
}

size_t iommu_unmap(struct iommu_domain *dom, uint64_t iova, size_t size) {
  charge_calls(dom, 1);
  struct iommu_iotlb_gather gather;
  iommu_iotlb_gather_init(&gather);
  const size_t unmapped = unmap_chunks(dom, iova, size, &gather);
  iommu_iotlb_sync(dom, &gather);
  return unmapped;
}

/* ---- Scatter-gather lists. */

static phys_addr_t sg_first_page(const struct iommu_domain *dom, const struct iommu_sg *sg) {
  return sg->pa & ~(dom->min_pgsize - 1);
}

size_t iommu_sg_span(const struct iommu_domain *dom, const struct iommu_sg *sg) {
  if (!sg->len) return 0;
  const uint64_t end = SW_ALIGN_UP(sg->pa + sg->len, dom->min_pgsize);
  return (size_t)(end - sg_first_page(dom, sg));
}

/* Baseline: every element is a map call of its own, through the whole chain. */
static int map_sg_per_element(struct iommu_domain *dom, uint64_t iova, const struct iommu_sg *sg, unsigned nents,
                              unsigned prot, size_t *mapped) {
  for (unsigned i = 0; i < nents; i++) {
    const size_t span = iommu_sg_span(dom, &sg[i]);
    if (!span) continue;
    const int ret = map_one_call_chain(dom, iova + *mapped, sg_first_page(dom, &sg[i]), span, prot, mapped);
    if (ret) return ret;
  }
  return 0;
}

/* Seed 002: one descent into the driver and the page-table code for the
 * whole list; there, one pass merges elements that continue each other
 * physically (they always do in IOVA) and maps each run pgcount pages at a
 * time, calling map_pages directly. */
static int map_sg_batched(struct iommu_domain *dom, uint64_t iova, const struct iommu_sg *sg, unsigned nents,
                          unsigned prot, size_t *mapped) {
  charge_indirect(dom, 2); /* core -> driver map_sg, driver -> io-pgtable map_sg */
  charge_driver_op(dom);
  unsigned i = 0;
  while (i < nents) {
    const phys_addr_t run_pa = sg_first_page(dom, &sg[i]);
    size_t run_len = iommu_sg_span(dom, &sg[i]);
    for (i++; i < nents && (!sg[i].len || sg_first_page(dom, &sg[i]) == run_pa + run_len); i++)
      run_len += iommu_sg_span(dom, &sg[i]);
    if (!run_len) continue;
    dom->stats.sg_runs++;
    const int ret = map_chunks(dom, iova + *mapped, run_pa, run_len, prot, 0, mapped);
    if (ret) return ret;
  }
  return 0;
}

size_t iommu_map_sg(struct iommu_domain *dom, uint64_t iova, const struct iommu_sg *sg, unsigned nents,
                    unsigned prot) {
  charge_calls(dom, 1);
  dom->stats.map_sgs++;
  if (!sg || !nents || (iova & (dom->min_pgsize - 1))) return 0;
  size_t mapped = 0;
  const int ret = dom->policy.map_sg == IOMMU_MAP_SG_BATCHED ? map_sg_batched(dom, iova, sg, nents, prot, &mapped)
                                                             : map_sg_per_element(dom, iova, sg, nents, prot, &mapped);
  if (ret) {
    if (mapped) iommu_unmap(dom, iova, mapped);
    return 0;
  }
  dom->stats.bytes_mapped += mapped;
  return mapped;
}

phys_addr_t iommu_iova_to_phys(struct iommu_domain *dom, uint64_t iova) {
  charge_indirect(dom, 2); /* core -> driver -> io-pgtable */
  return io_pgtable_iova_to_phys(&dom->pgt, iova);
}

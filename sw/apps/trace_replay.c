/*
 * trace_replay: replays a DMA/IOMMU trace (docs/traces.md) on the platform.
 * The trace player device (models/trace_player/) holds the trace; this app
 *  - loads the trace's image into DRAM and brings the SMMU up with the
 *    policies its parameters select, one DMA domain per StreamID;
 *  - replays the DMA-API calls of the trace through sw/'s DMA-mapping layer
 *    on its cores (a call goes to the core given by `placement`), at their
 *    trace times (scaled) or as fast as possible;
 *  - publishes each mapping's replayed address in the slot table, from which
 *    the player issues the trace's device accesses through the SMMU;
 *  - unmaps a buffer only once the accesses the trace made before the unmap
 *    have completed.
 * Buffers: the trace's physical addresses are placed in a pool of `pool_mb`
 * (page number modulo the pool, offset in the page kept), so alignment and
 * bounce decisions are the trace's.
 *
 * Stats (sw.trace_replay.*): map_ns, unmap_ns, map_sg_ns, unmap_sg_ns,
 * sync_ns, iommu_map_ns, iommu_unmap_ns (per-call latency), calls, lag_ns
 * (timed mode: how late a call started after its trace time), the problems
 * (skipped_unmatched, map_failures, waits_for_device, ...), and the SMMU and
 * domain counters of iommu_setup_report. A trace with phase markers
 * (TP_IMAGE_HAS_PHASES) also gets them per phase: phase.N.calls and
 * phase.N.<op>_ns for each record's phase N; the first core to begin a phase
 * tells the player (PHASE), which opens that phase's window of its counters.
 */
#include "apps/app_instance.h"
#include "apps/iommu_setup.h"
#include "hal/hal.h"
#include "iommu/dma_iommu.h"
#include "lib/compiler.h"
#include "lib/string.h"
#include "trace_player/trace_player_regs.h"

#define MAX_STREAMS 32u
#define MAX_SEGS 1024u
#define MAX_CORES 64u
#define POLL_NS 200u

enum { TIMING_TIMED = 0, TIMING_ASAP = 1 };
enum { PLACE_TRACE_CPU = 0, PLACE_ONE_CORE = 1 };

struct stream {
  uint32_t sid;
  struct app_dma dma;
};

/* Set up once by the first core (state below), read by all. */
static SW_CACHELINE_ALIGNED struct {
  phys_addr_t regs;
  const struct tp_image_header *hdr;
  const struct tp_record *recs;
  const struct tp_segment *segs;
  volatile struct tp_slot *slots;
  uint32_t *slot_rec; /* the record that opens each slot */
  phys_addr_t pool_pa;
  uint64_t pool_pages;
  uint64_t t0_ns;
  uint64_t scale_pct;
  unsigned timing, placement;
  unsigned nstreams;
  struct stream streams[MAX_STREAMS];
} rp;

/* The cores' rendezvous, on one cache line of its own. */
static SW_CACHELINE_ALIGNED struct {
  volatile uint32_t setup_state; /* 0 not begun, 1 in progress, 2 ready, 3 failed */
  volatile uint32_t phase_begun; /* the latest phase some core has begun */
  volatile uint32_t cores_done;
} shared;

/* Per core: scatter lists and the addresses map_sg returns. */
static struct iommu_sg sg_buf[MAX_CORES][MAX_SEGS];
static uint64_t addr_buf[MAX_CORES][MAX_SEGS];
/* Per core: the phase of the call at hand, and the name of a per-phase stat. */
static uint32_t core_phase[MAX_CORES];
static char phase_stat[MAX_CORES][48];

/* ---- Set-up (one core). */

static int find_player(phys_addr_t *regs) {
  struct hal_device_info d;
  for (unsigned i = 0; hal_device_get(i, &d) == 0; i++) {
    if (sw_strcmp(d.type, "trace_player") != 0) continue;
    *regs = d.base;
    return hal_read32(d.base + TP_REG_ID) == TP_ID_VALUE ? 0 : -1;
  }
  return -1;
}

static int load_image(void) {
  const uint64_t bytes = hal_read64(rp.regs + TP_REG_IMAGE_BYTES);
  phys_addr_t pa;
  void *img = hal_dma_alloc((size_t)bytes, 64, &pa);
  if (!img) {
    hal_log(HAL_LOG_ERROR, "trace_replay: no DMA memory for the %llu-byte trace image", (unsigned long long)bytes);
    return -1;
  }
  hal_write64(rp.regs + TP_REG_IMAGE_BASE, pa);
  hal_write32(rp.regs + TP_REG_CTRL, TP_CTRL_LOAD);
  if (!(hal_read32(rp.regs + TP_REG_STATUS) & TP_STATUS_LOADED)) {
    hal_log(HAL_LOG_ERROR, "trace_replay: the trace player could not load its image");
    return -1;
  }
  rp.hdr = (const struct tp_image_header *)img;
  if (rp.hdr->magic != TP_IMAGE_MAGIC || rp.hdr->version != TP_VERSION_VALUE) {
    hal_log(HAL_LOG_ERROR, "trace_replay: the trace image has magic %#x version %u", rp.hdr->magic, rp.hdr->version);
    return -1;
  }
  rp.recs = (const struct tp_record *)(rp.hdr + 1);
  rp.segs = (const struct tp_segment *)(rp.recs + rp.hdr->records);
  phys_addr_t slots_pa;
  rp.slots = (volatile struct tp_slot *)hal_dma_alloc(sizeof(struct tp_slot) * (rp.hdr->slots + 1u), 64, &slots_pa);
  if (!rp.slots) {
    hal_log(HAL_LOG_ERROR, "trace_replay: no DMA memory for %u slots", rp.hdr->slots);
    return -1;
  }
  hal_write64(rp.regs + TP_REG_REMAP_BASE, slots_pa);
  rp.slot_rec = (uint32_t *)hal_dma_alloc(sizeof(uint32_t) * (rp.hdr->slots + 1u), 64, &slots_pa);
  if (!rp.slot_rec) {
    hal_log(HAL_LOG_ERROR, "trace_replay: no DMA memory for %u slots", rp.hdr->slots);
    return -1;
  }
  for (uint32_t i = 0; i < rp.hdr->records; i++) {
    const struct tp_record *r = &rp.recs[i];
    const bool opens = r->op == TP_OP_MAP || r->op == TP_OP_MAP_SG || r->op == TP_OP_ALLOC || r->op == TP_OP_IOMMU_MAP;
    if (opens && r->slot < rp.hdr->slots) rp.slot_rec[r->slot] = i;
  }
  if (rp.hdr->unmatched || rp.hdr->overlapping)
    hal_log(HAL_LOG_WARN,
            "trace_replay: the trace unmaps or syncs %u time(s) what it never mapped and maps %u time(s) over a "
            "live mapping; those calls are counted and skipped (sw.trace_replay.skipped_unmatched)",
            rp.hdr->unmatched, rp.hdr->overlapping);
  return 0;
}

static struct stream *stream_of(uint32_t sid) {
  for (unsigned i = 0; i < rp.nstreams; i++)
    if (rp.streams[i].sid == sid) return &rp.streams[i];
  return 0;
}

static bool asid_taken(uint32_t asid) {
  for (unsigned i = 0; i < rp.nstreams; i++)
    if (rp.streams[i].dma.domain.asid == asid) return true;
  return false;
}

/* One domain per StreamID the trace names, with the ASID its attach record
 * gives when that is free, else the next free one. */
static int attach_streams(void) {
  uint32_t next_asid = 1;
  for (uint32_t i = 0; i < rp.hdr->records; i++) {
    const struct tp_record *r = &rp.recs[i];
    if (r->op == TP_OP_COMMAND || r->op == TP_OP_FAULT || stream_of(r->sid)) continue;
    if (rp.nstreams == MAX_STREAMS) {
      hal_log(HAL_LOG_ERROR, "trace_replay: the trace has more than %u StreamIDs", MAX_STREAMS);
      return -1;
    }
    uint32_t asid = r->op == TP_OP_ATTACH ? r->aux : 0;
    if (asid == 0 || asid > 0xffff || asid_taken(asid)) {
      while (asid_taken(next_asid)) next_asid++;
      asid = next_asid++;
    }
    struct stream *s = &rp.streams[rp.nstreams++];
    s->sid = r->sid;
    if (iommu_setup_attach(&s->dma, "trace_replay", r->sid, (uint16_t)asid, 0) != 0) return -1;
  }
  return 0;
}

static int set_up(void) {
  if (find_player(&rp.regs) != 0) {
    hal_log(HAL_LOG_ERROR, "trace_replay: needs a device of type trace_player (docs/traces.md)");
    return -1;
  }
  if (load_image() != 0) return -1;
  rp.pool_pages = (hal_param("pool_mb") << 20) >> 12;
  if (!rp.pool_pages) {
    hal_log(HAL_LOG_ERROR, "trace_replay: pool_mb must be at least 1");
    return -1;
  }
  if (!hal_dma_alloc((size_t)(rp.pool_pages << 12), 1u << 21, &rp.pool_pa)) {
    hal_log(HAL_LOG_ERROR, "trace_replay: no DMA memory for a %llu MiB buffer pool (pool_mb)",
            (unsigned long long)hal_param("pool_mb"));
    return -1;
  }
  rp.timing = (unsigned)hal_param("timing");
  rp.placement = (unsigned)hal_param("placement");
  rp.scale_pct = hal_param("time_scale_pct");
  if (attach_streams() != 0) return -1;
  hal_write32(rp.regs + TP_REG_MODE, rp.timing == TIMING_ASAP ? TP_MODE_ASAP : TP_MODE_TIMED);
  hal_write32(rp.regs + TP_REG_TIME_SCALE, (uint32_t)rp.scale_pct);
  hal_write32(rp.regs + TP_REG_CTRL, TP_CTRL_START);
  rp.t0_ns = hal_now_ns();
  hal_stat_set("records", rp.hdr->records);
  hal_stat_set("streams", rp.nstreams);
  return 0;
}

/* ---- Replaying one call. */

/* Where the trace's buffer [pa, pa + size) lives in the pool. */
static int pool_addr(uint64_t pa, uint64_t size, uint32_t salt, phys_addr_t *out) {
  const uint64_t off = pa == TP_NO_ADDR ? 0 : (pa & 4095u);
  const uint64_t pages = (off + size + 4095u) >> 12;
  if (pages > rp.pool_pages) return -1;
  const uint64_t page = pa == TP_NO_ADDR ? salt : pa >> 12;
  *out = rp.pool_pa + ((page % (rp.pool_pages - pages + 1)) << 12) + off;
  return 0;
}

static enum dma_data_direction dir_of(const struct tp_record *r) {
  return r->dir <= DMA_FROM_DEVICE ? (enum dma_data_direction)r->dir : DMA_BIDIRECTIONAL;
}

static void publish(uint32_t slot, uint64_t iova, uint64_t state) {
  rp.slots[slot].iova = iova;
  /* Plain accesses: the table is replay bookkeeping, not the workload's
   * memory traffic (trace_player_regs.h). */
  const uint64_t was = rp.slots[slot].state;
  rp.slots[slot].state = state;
  if (was == TP_SLOT_WAITING) hal_write32(rp.regs + TP_REG_MAP_DOORBELL, slot);
}

/* The slot's replayed address, once whichever core maps it has; false for a
 * map that failed. */
static bool slot_iova(uint32_t slot, uint64_t *iova) {
  uint64_t st;
  while ((st = rp.slots[slot].state) == TP_SLOT_PENDING || st == TP_SLOT_WAITING) hal_delay_ns(POLL_NS);
  *iova = rp.slots[slot].iova;
  return st != TP_SLOT_FAILED;
}

/* An unmap waits for the device accesses the trace made before it. */
static void wait_accesses(uint32_t n) {
  if (!n || hal_read64(rp.regs + TP_REG_ACCESSES_DONE) >= n) return;
  hal_stat_add("waits_for_device", 1);
  const uint64_t t = hal_now_ns();
  while (hal_read64(rp.regs + TP_REG_ACCESSES_DONE) < n) hal_delay_ns(POLL_NS);
  hal_stat_sample("wait_for_device_ns", hal_now_ns() - t);
}

/* "phase.<N>.<stat>" in the core's buffer. */
static const char *phase_stat_name(unsigned rank, const char *stat) {
  char *o = phase_stat[rank];
  const char *end = o + sizeof phase_stat[rank] - 1;
  char digits[10];
  unsigned nd = 0;
  uint32_t n = core_phase[rank];
  do {
    digits[nd++] = (char)('0' + n % 10u);
    n /= 10u;
  } while (n);
  for (const char *p = "phase."; *p && o < end;) *o++ = *p++;
  while (nd && o < end) *o++ = digits[--nd];
  if (o < end) *o++ = '.';
  for (const char *p = stat; *p && o < end;) *o++ = *p++;
  *o = 0;
  return phase_stat[rank];
}

static bool has_phases(void) { return (rp.hdr->flags & TP_IMAGE_HAS_PHASES) != 0; }

/* A call's latency, and under phases its phase's too. The core's rank is
 * that of the running core (hal_app_rank). */
static void timed(const char *stat, uint64_t t0) {
  const uint64_t ns = hal_now_ns() - t0;
  hal_stat_sample(stat, ns);
  if (has_phases()) hal_stat_sample(phase_stat_name(hal_app_rank(), stat), ns);
}

/* Where each core is (phases traces only): the phase it has begun, so every
 * phase before it is done on that core; NO_PHASE_LEFT once it is through. */
#define NO_PHASE_LEFT 0xffffffffu
static SW_CACHELINE_ALIGNED volatile uint32_t core_at[MAX_CORES];

/* The call `r` begins: in asap mode a core begins a phase only once every
 * core is through the phases before it (the trace's phases came one after
 * another; timed mode keeps their order by time), and the first core to
 * begin a phase tells the player. */
static void begin_phase(const struct tp_record *r, unsigned rank, unsigned cores) {
  if (!has_phases() || r->phase <= core_phase[rank]) return;
  core_phase[rank] = r->phase;
  if (rp.timing == TIMING_ASAP) {
    hal_store32(&core_at[rank], r->phase);
    for (unsigned c = 0; c < cores; c++)
      while (hal_load32(&core_at[c]) < r->phase) hal_delay_ns(POLL_NS);
  }
  uint32_t was = hal_load32(&shared.phase_begun);
  while (was < r->phase) {
    const uint32_t seen = hal_cmpxchg32(&shared.phase_begun, was, r->phase);
    if (seen == was) {
      hal_write32(rp.regs + TP_REG_PHASE, r->phase);
      return;
    }
    was = seen;
  }
}

static void replay_map(struct stream *s, const struct tp_record *r) {
  phys_addr_t pa;
  if (pool_addr(r->pa, r->size, r->slot, &pa) != 0) {
    hal_stat_add("skipped_too_large", 1);
    publish(r->slot, 0, TP_SLOT_FAILED);
    return;
  }
  struct dma_dev *dev = app_dma_dev(&s->dma);
  const enum dma_data_direction dir = r->op == TP_OP_ALLOC ? DMA_BIDIRECTIONAL : dir_of(r);
  const uint64_t t0 = hal_now_ns();
  const uint64_t addr = dev ? dma_map_page(dev, pa, (size_t)r->size, dir) : pa;
  timed(r->op == TP_OP_ALLOC ? "alloc_ns" : "map_ns", t0);
  if (addr == DMA_MAPPING_ERROR) {
    hal_stat_add("map_failures", 1);
    publish(r->slot, 0, TP_SLOT_FAILED);
    return;
  }
  publish(r->slot, addr, TP_SLOT_MAPPED);
}

static void replay_unmap(struct stream *s, const struct tp_record *r) {
  uint64_t iova;
  if (!slot_iova(r->slot, &iova)) {
    hal_stat_add("skipped_failed", 1);
    return;
  }
  wait_accesses(r->aux);
  struct dma_dev *dev = app_dma_dev(&s->dma);
  const uint64_t t0 = hal_now_ns();
  if (dev) dma_unmap_page(dev, iova + r->offset, (size_t)r->size, dir_of(r));
  timed(r->op == TP_OP_FREE ? "free_ns" : "unmap_ns", t0);
  rp.slots[r->slot].state = TP_SLOT_UNMAPPED;
}

/* The record's list in the pool (or one element of its size when the trace
 * gives no list); returns the number of elements, 0 when it cannot. */
static unsigned build_sg(const struct tp_record *r, struct iommu_sg *sg) {
  if (r->nsegs > MAX_SEGS) return 0;
  if (!r->nsegs) {
    phys_addr_t pa;
    if (pool_addr(r->pa, r->size, r->slot, &pa) != 0) return 0;
    sg[0].pa = pa;
    sg[0].len = (size_t)r->size;
    return 1;
  }
  for (unsigned i = 0; i < r->nsegs; i++) {
    const struct tp_segment *seg = &rp.segs[r->aux + i];
    phys_addr_t pa;
    if (pool_addr(seg->pa, seg->len, r->slot + i, &pa) != 0) return 0;
    sg[i].pa = pa;
    sg[i].len = (size_t)seg->len;
  }
  return r->nsegs;
}

static void replay_map_sg(struct stream *s, const struct tp_record *r, unsigned rank) {
  struct iommu_sg *sg = sg_buf[rank];
  const unsigned n = build_sg(r, sg);
  if (!n) {
    hal_stat_add("skipped_too_large", 1);
    publish(r->slot, 0, TP_SLOT_FAILED);
    return;
  }
  struct dma_dev *dev = app_dma_dev(&s->dma);
  const uint64_t t0 = hal_now_ns();
  const int mapped = dev ? dma_map_sg(dev, sg, n, dir_of(r), addr_buf[rank]) : (int)n;
  timed("map_sg_ns", t0);
  if (mapped <= 0) {
    hal_stat_add("map_failures", 1);
    publish(r->slot, 0, TP_SLOT_FAILED);
    return;
  }
  /* The slot is the first element's address, as the trace gives it. */
  publish(r->slot, dev ? addr_buf[rank][0] : sg[0].pa, TP_SLOT_MAPPED);
}

/* An unmap_sg unmaps the list its slot's map_sg mapped (the trace's
 * unmap_sg carries no list of its own). */
static void replay_unmap_sg(struct stream *s, const struct tp_record *r, unsigned rank) {
  uint64_t iova;
  if (!slot_iova(r->slot, &iova)) {
    hal_stat_add("skipped_failed", 1);
    return;
  }
  wait_accesses(r->aux);
  const struct tp_record *map = &rp.recs[rp.slot_rec[r->slot]];
  struct iommu_sg *sg = sg_buf[rank];
  const unsigned n = build_sg(map, sg);
  struct dma_dev *dev = app_dma_dev(&s->dma);
  if (n && dev) {
    addr_buf[rank][0] = iova;
    const uint64_t t0 = hal_now_ns();
    dma_unmap_sg(dev, sg, n, dir_of(r), addr_buf[rank]);
    timed("unmap_sg_ns", t0);
  }
  rp.slots[r->slot].state = TP_SLOT_UNMAPPED;
}

static void replay_sync(struct stream *s, const struct tp_record *r) {
  uint64_t iova;
  if (!slot_iova(r->slot, &iova)) {
    hal_stat_add("skipped_failed", 1);
    return;
  }
  struct dma_dev *dev = app_dma_dev(&s->dma);
  const uint64_t t0 = hal_now_ns();
  if (dev && r->op == TP_OP_SYNC_FOR_CPU) dma_sync_single_for_cpu(dev, iova + r->offset, (size_t)r->size, dir_of(r));
  else if (dev) dma_sync_single_for_device(dev, iova + r->offset, (size_t)r->size, dir_of(r));
  timed("sync_ns", t0);
}

/* IOMMU-API calls map at the trace's own address. */
static void replay_iommu_map(struct stream *s, const struct tp_record *r) {
  phys_addr_t pa;
  if (!s->dma.translated || pool_addr(r->pa, r->size, r->slot, &pa) != 0) {
    hal_stat_add(s->dma.translated ? "skipped_too_large" : "skipped_not_translated", 1);
    publish(r->slot, 0, TP_SLOT_FAILED);
    return;
  }
  const uint64_t t0 = hal_now_ns();
  const int err = iommu_map(&s->dma.domain, r->iova & ~4095ull, pa & ~4095ull,
                            (size_t)(((r->iova & 4095u) + r->size + 4095u) & ~4095ull), IOMMU_READ | IOMMU_WRITE);
  timed("iommu_map_ns", t0);
  if (err) {
    hal_stat_add("map_failures", 1);
    publish(r->slot, 0, TP_SLOT_FAILED);
    return;
  }
  publish(r->slot, r->iova, TP_SLOT_MAPPED);
}

static void replay_iommu_unmap(struct stream *s, const struct tp_record *r) {
  uint64_t iova;
  if (!slot_iova(r->slot, &iova) || !s->dma.translated) {
    hal_stat_add("skipped_failed", 1);
    return;
  }
  wait_accesses(r->aux);
  const uint64_t t0 = hal_now_ns();
  const uint64_t at = r->iova & ~4095ull;
  iommu_unmap(&s->dma.domain, at, (size_t)(((r->iova & 4095u) + r->size + 4095u) & ~4095ull));
  timed("iommu_unmap_ns", t0);
  rp.slots[r->slot].state = TP_SLOT_UNMAPPED;
}

static bool is_call(uint8_t op) {
  return op <= TP_OP_IOMMU_UNMAP;
}

static void replay_call(const struct tp_record *r, unsigned rank) {
  struct stream *s = stream_of(r->sid);
  if (!s) return; /* attach_streams gave every StreamID a stream */
  if (r->slot == TP_NO_SLOT) {
    /* Under DMA-API maps, IOMMU-API calls are the DMA API's own (Linux's
     * dma-iommu calls iommu_map): the DMA-API records replay them. */
    const bool implied = (r->op == TP_OP_IOMMU_MAP || r->op == TP_OP_IOMMU_UNMAP) &&
                         (rp.hdr->flags & TP_IMAGE_HAS_DMA_API);
    hal_stat_add(implied ? "iommu_calls_implied" : "skipped_unmatched", 1);
    return;
  }
  switch (r->op) {
    case TP_OP_MAP:
    case TP_OP_ALLOC: replay_map(s, r); break;
    case TP_OP_UNMAP:
    case TP_OP_FREE: replay_unmap(s, r); break;
    case TP_OP_MAP_SG: replay_map_sg(s, r, rank); break;
    case TP_OP_UNMAP_SG: replay_unmap_sg(s, r, rank); break;
    case TP_OP_SYNC_FOR_CPU:
    case TP_OP_SYNC_FOR_DEVICE: replay_sync(s, r); break;
    case TP_OP_IOMMU_MAP: replay_iommu_map(s, r); break;
    case TP_OP_IOMMU_UNMAP: replay_iommu_unmap(s, r); break;
    default: break;
  }
  hal_stat_add("calls", 1);
  if (has_phases()) hal_stat_add(phase_stat_name(rank, "calls"), 1);
}

static unsigned core_of(const struct tp_record *r, unsigned cores) {
  if (rp.placement == PLACE_ONE_CORE || r->cpu < 0) return 0;
  return (unsigned)r->cpu % cores;
}

/* How often an idle core looks at a pending flush queue's timer. */
#define FQ_POLL_NS 100000u

/* Timed mode: sleeps until the record's (scaled) trace time. */
static void wait_for_time(const struct tp_record *r) {
  if (rp.timing != TIMING_TIMED) return;
  /* t0 + time x scale / 100, split so that it cannot overflow; saturated far
   * beyond any run (the run then ends at its time limit). A record 1.85e17 ns
   * in once wrapped round to "now" and was replayed at once. */
  const uint64_t never = UINT64_MAX / 2000u; /* still fits in ps, doubled */
  const uint64_t q = r->time_ns / 100u, rem = r->time_ns % 100u;
  const uint64_t due = rp.scale_pct && q > (never - rp.t0_ns) / rp.scale_pct
                           ? never
                           : rp.t0_ns + q * rp.scale_pct + rem * rp.scale_pct / 100u;
  uint64_t now = hal_now_ns();
  if (now < due) {
    /* The lazy flush timer's deadline may pass meanwhile (dma_iommu.h): while
     * a flush is pending the wait wakes every FQ_POLL_NS to run it, as
     * Linux's timer fires in an idle gap; else one idle gap of 170 ms left
     * unmapped buffers reachable for all of it instead of the timer's 10. */
    for (;;) {
      bool pending = false;
      for (unsigned i = 0; i < rp.nstreams; i++) {
        struct app_dma *d = &rp.streams[i].dma;
        if (!d->translated) continue;
        dma_flush_queue_timer_poll(&d->dev);
        if (dma_flush_queue_pending(&d->cookie)) pending = true;
      }
      now = hal_now_ns();
      if (now >= due) break;
      hal_delay_ns(pending && due - now > FQ_POLL_NS ? FQ_POLL_NS : due - now);
      if (!pending) break;
    }
  } else {
    hal_stat_sample("lag_ns", now - due);
  }
}

/* Lazy mode: the flush queue's timer still fires after the last call (its
 * flushes close the security windows the stats report). */
static void drain_flush_queues(void) {
  for (unsigned i = 0; i < rp.nstreams; i++) {
    struct app_dma *d = &rp.streams[i].dma;
    if (!d->translated) continue;
    while (dma_flush_queue_pending(&d->cookie)) {
      if (!dma_flush_queue_timer_poll(&d->dev)) hal_delay_ns(FQ_POLL_NS);
    }
  }
}

static void report(void) {
  const uint64_t span = hal_now_ns() - rp.t0_ns;
  drain_flush_queues();
  hal_stat_set("replay_ns", (double)span);
  hal_stat_set("accesses_done", (double)hal_read64(rp.regs + TP_REG_ACCESSES_DONE));
  hal_stat_set("access_errors", (double)hal_read64(rp.regs + TP_REG_ACCESS_ERRORS));
  const struct app_dma *dmas[MAX_STREAMS];
  for (unsigned i = 0; i < rp.nstreams; i++) dmas[i] = &rp.streams[i].dma;
  iommu_setup_report_sum(dmas, rp.nstreams);
  hal_log(HAL_LOG_INFO, "trace_replay: %u records, %u StreamID(s), replayed in %.3f ms (trace: %.3f ms)",
          rp.hdr->records, rp.nstreams, (double)span / 1e6, (double)rp.hdr->duration_ns / 1e6);
}

static int trace_replay_main(void) {
  if (!app_single_instance("trace_replay")) return 1;
  const unsigned rank = hal_app_rank(), cores = hal_app_cores();
  if (cores > MAX_CORES) {
    if (rank == 0) hal_log(HAL_LOG_ERROR, "trace_replay: at most %u cores", MAX_CORES);
    return 1;
  }
  if (hal_cmpxchg32(&shared.setup_state, 0, 1) == 0) {
    const int err = set_up();
    hal_store32(&shared.setup_state, err ? 3 : 2);
    hal_sev();
  }
  uint32_t st;
  while ((st = hal_load32(&shared.setup_state)) == 1) hal_wfe();
  if (st != 2) return 1;

  for (uint32_t i = 0; i < rp.hdr->records; i++) {
    const struct tp_record *r = &rp.recs[i];
    if (!is_call(r->op) || core_of(r, cores) != rank) continue;
    wait_for_time(r);
    begin_phase(r, rank, cores);
    replay_call(r, rank);
  }
  if (has_phases()) hal_store32(&core_at[rank], NO_PHASE_LEFT);

  /* The last core to finish waits for the device and reports. */
  if (hal_fetch_add32(&shared.cores_done, 1) + 1 != cores) return 0;
  while (!(hal_read32(rp.regs + TP_REG_STATUS) & TP_STATUS_DONE)) hal_delay_ns(1000);
  report();
  return 0;
}

static const struct hal_param_decl trace_replay_params[] = {
    IOMMU_SETUP_PARAMS,
    {"timing", TIMING_TIMED, "0: each call and access at its trace time (times time_scale_pct / 100); 1: as soon as what it depends on is done.", 1, "timed,asap"},
    {"time_scale_pct", 100, "Timed mode: percent of the trace's time gaps (50 replays twice as fast).", 100000, 0},
    {"placement", PLACE_TRACE_CPU, "Which core makes a call: 0 the trace's CPU modulo the app's cores, 1 the app's first core.", 1, "trace_cpu,one_core"},
    {"pool_mb", 64, "MiB of DRAM in which the trace's buffers are placed (page number modulo the pool).", 1024, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_trace_replay = {"trace_replay",
                                         "Replays a DMA/IOMMU trace held by a trace_player device: its DMA-API calls on "
                                         "the cores, its device accesses through the SMMU (docs/traces.md)",
                                         trace_replay_main, trace_replay_params};

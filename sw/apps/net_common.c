#include "apps/net_common.h"

#include "drivers/dma_map.h"

#include "apps/app_window.h"
#include "apps/iommu_setup.h"
#include "lib/compiler.h"
#include "lib/string.h"

/* One set of state per instance of the app (hal_app_instance): two net_rx
 * apps drive two NICs, each with its own domain, queues and results. */
enum { SETUP_PENDING = 0, SETUP_OK = 1, SETUP_FAILED = 2 };
/* The fields' order and alignment are those the separate globals this
 * replaced had in memory: the cores' cache-line model keys on addresses, and
 * the single-NIC scenarios' results must not move (CONTRIBUTING.md, "Golden
 * results"). */
struct net_instance {
  bool drops_snapped;
  volatile uint64_t window_end_ns, window_start_ns;
  _Alignas(32) uint64_t drops_at_start[3]; /* NIC drop counters at the start of the window (rank 0 reads them) */
  volatile uint64_t sum_idle_ns, sum_packets, sum_bytes;
  volatile uint32_t cores_reported;
  volatile uint32_t queues_failed;
  volatile uint32_t queues_open;
  volatile uint32_t setup_state;
  struct nic_dev nic;
  struct app_dma nic_dma;
};
static SW_CACHELINE_ALIGNED struct net_instance instances[NET_MAX_INSTANCES];

/* The running core's instance; net_bring_up refuses one past the last. */
static struct net_instance *inst(void) { return &instances[hal_app_instance() % NET_MAX_INSTANCES]; }

static const uint32_t drop_regs[3] = {NIC_STAT_RX_NO_BUFFER, NIC_STAT_RX_FIFO_OVERFLOW, NIC_STAT_RX_DMA_FAULT};
static const char *const drop_names[3] = {"drops_no_buffer", "drops_fifo_overflow", "drops_dma_fault"};
static const char *const unmap_names[3] = {"strict", "lazy", "passthrough"};

struct nic_dev *net_nic(void) { return &inst()->nic; }

uint32_t net_payload_bytes(uint32_t frame_bytes) {
  return frame_bytes > NET_HEADER_BYTES ? frame_bytes - NET_HEADER_BYTES : 0;
}

/* What the declared maxima cannot say (the configuration enforces those):
 * a bad value is an error, never a silent fallback. */
static bool params_valid(const char *app) {
  const uint64_t ring = hal_param("ring");
  if (ring < 2 || ring > NIC_RING_MAX || (ring & (ring - 1)) || hal_param("budget") == 0 ||
      hal_param("duration_us") == 0) {
    hal_log(HAL_LOG_ERROR, "%s: ring must be a power of two in 2..%u, budget and duration_us positive", app,
            NIC_RING_MAX);
    return false;
  }
  if (hal_app_cores() > NIC_MAX_QUEUES) {
    hal_log(HAL_LOG_ERROR, "%s: at most %u cores (one queue each)", app, NIC_MAX_QUEUES);
    return false;
  }
  return true;
}

/* The NIC's stream: a DMA domain with the chosen unmap policy, or bypass,
 * and the live IOVAs the scenario asks for. */
static int attach_stream(const char *app, const struct hal_device_info *info, struct dma_dev **out) {
  struct net_instance *in = inst();
  if (iommu_setup_attach_device(&in->nic_dma, app, info, 1, NULL) != 0) return -1;
  *out = app_dma_dev(&in->nic_dma);
  if (!*out) return 0;
  /* Live IOVAs, one tree node each, just below the top of the space where
   * 64-bit allocations start their search. */
  const uint64_t live = hal_param("live_iovas");
  const uint64_t top_pfn = (DMA_BIT_MASK(48) >> 12) - 1;
  for (uint64_t i = 0; i < live; i++)
    if (!reserve_iova(&in->nic_dma.cookie.iovad, top_pfn - i, top_pfn - i)) {
      hal_log(HAL_LOG_ERROR, "%s: cannot hold %llu live IOVAs", app, (unsigned long long)live);
      return -1;
    }
  return 0;
}

static int leader_setup(const char *app) {
  struct net_instance *in = inst();
  if (!params_valid(app)) return -1;
  char name[8] = "nic0";
  name[3] = (char)('0' + hal_param("nic"));
  struct hal_device_info info;
  if (hal_device_find(name, &info) != 0) {
    hal_log(HAL_LOG_ERROR, "%s: the platform has no device %s", app, name);
    return -1;
  }
  struct dma_dev *dev;
  if (attach_stream(app, &info, &dev) != 0) return -1;
  struct nic_config cfg;
  nic_config_default(&cfg);
  cfg.rx_ring_size = cfg.tx_ring_size = (uint32_t)hal_param("ring");
  cfg.buffers = (enum nic_buffer_policy)hal_param("buffers");
  if (hal_param("unmap_latency")) drv_dma_time_unmaps = true;
  cfg.irq_mode = hal_param("msi") ? NIC_IRQ_MSI : NIC_IRQ_WIRED;
  cfg.coal_frames = (uint32_t)hal_param("coal_frames");
  cfg.coal_usecs = (uint32_t)hal_param("coal_usecs");
  cfg.rx_page_bytes = (uint32_t)hal_param("page_bytes");
  if (nic_probe(&in->nic, name, dev, &cfg, hal_app_cores()) != 0) return -1;
  /* ndo_open: every queue's rings and buffers, on this core. */
  for (unsigned q = 0; q < in->nic.nqueues; q++)
    if (nic_queue_setup(&in->nic, q) != 0) return -1;
  nic_set_stack_hold(&in->nic, hal_param("stack_hold_ns"), hal_param("stack_hold") != 0);
  hal_log(HAL_LOG_INFO, "%s: %s at %u Mbit/s, %u queue(s) of %u, %s unmap, %s buffers, cmdq %llu sync %llu tlbi %llu",
          app, name, in->nic.link_mbps, in->nic.nqueues, in->nic.hw_queues, unmap_names[hal_param("unmap")],
          cfg.buffers == NIC_BUFFERS_PAGE_POOL    ? "page-pool"
          : cfg.buffers == NIC_BUFFERS_PAGE_REUSE ? "page-reuse"
                                                  : "per-packet",
          (unsigned long long)hal_param("cmdq"),
          (unsigned long long)hal_param("sync"), (unsigned long long)hal_param("tlbi"));
  return 0;
}

int net_bring_up(struct net_core *me, const char *app) {
  if (hal_app_instance() >= NET_MAX_INSTANCES) {
    hal_log(HAL_LOG_ERROR, "%s: at most %u instances of the app in one scenario", app, NET_MAX_INSTANCES);
    return 1;
  }
  struct net_instance *in = inst();
  sw_memset(me, 0, sizeof *me);
  me->rank = hal_app_rank();
  if (me->rank == 0) {
    hal_store32(&in->setup_state, leader_setup(app) == 0 ? SETUP_OK : SETUP_FAILED);
    hal_sev();
  }
  uint32_t st;
  while ((st = hal_load32(&in->setup_state)) == SETUP_PENDING) hal_wfe();
  if (st == SETUP_FAILED) return 1;
  /* Each core starts its own queue, so that its interrupt comes here. */
  const int rc = nic_queue_start(&in->nic, me->rank);
  if (rc != 0) hal_fetch_add32(&in->queues_failed, 1);
  hal_fetch_add32(&in->queues_open, 1);
  hal_sev();
  me->q = &in->nic.q[me->rank];
  return rc != 0;
}

int net_start(struct net_core *me, bool rx) {
  struct net_instance *in = inst();
  while (hal_load32(&in->queues_open) < hal_app_cores()) hal_wfe();
  if (hal_load32(&in->queues_failed)) return 1;
  if (me->rank == 0) {
    uint64_t start, end;
    app_window_open(rx ? "net_rx" : "net_tx", hal_param("warmup_us") * 1000, hal_param("duration_us") * 1000, &start,
                    &end);
    hal_store64(&in->window_end_ns, end);
    hal_store64(&in->window_start_ns, start);
    nic_set_enabled(&in->nic, rx, !rx);
    hal_sev();
  }
  while (!hal_load64(&in->window_start_ns)) hal_wfe();
  me->window_start_ns = in->window_start_ns;
  me->window_end_ns = in->window_end_ns;
  return 0;
}

void net_window_tick(struct net_core *me, uint64_t now_ns) {
  struct net_instance *in = inst();
  if (me->rank == 0 && !in->drops_snapped && now_ns >= me->window_start_ns) {
    for (unsigned i = 0; i < 3; i++) in->drops_at_start[i] = nic_read_stat(&in->nic, drop_regs[i]);
    in->drops_snapped = true;
  }
}

void net_housekeeping(void) {
  struct net_instance *in = inst();
  if (in->nic_dma.translated && in->nic_dma.cookie.policy.unmap == DMA_UNMAP_LAZY) dma_flush_queue_timer_poll(&in->nic_dma.dev);
}

void net_stop(struct net_core *me) {
  struct net_instance *in = inst();
  if (me->rank != 0) return;
  nic_set_enabled(&in->nic, false, false);
  hal_sev();
}

void net_idle(struct net_core *me) { me->idle_ns += app_wfe_in_window(me->window_start_ns, me->window_end_ns); }

static void report_totals(const char *app, bool rx, uint64_t window_ns) {
  struct net_instance *in = inst();
  const double seconds = (double)window_ns / 1e9;
  const double gbps = (double)in->sum_bytes * 8.0 / (double)window_ns;
  const double busy_cores = app_busy_cores(hal_app_cores(), window_ns, in->sum_idle_ns);
  hal_stat_set("gbps", gbps);
  hal_stat_set("mpps", (double)in->sum_packets / seconds / 1e6);
  hal_stat_set("busy_cores", busy_cores);
  hal_stat_set("cpu_utilisation", busy_cores / hal_app_cores());
  hal_stat_set("gbps_per_busy_core", busy_cores > 0 ? gbps / busy_cores : 0.0);
  uint64_t drops[3] = {0, 0, 0};
  if (rx)
    for (unsigned i = 0; i < 3; i++) {
      drops[i] = nic_read_stat(&in->nic, drop_regs[i]) - in->drops_at_start[i];
      hal_stat_set(drop_names[i], (double)drops[i]);
    }
  if (rx && in->nic.cfg.buffers == NIC_BUFFERS_PAGE_REUSE) {
    uint64_t reuses = 0, unmaps = 0;
    for (unsigned q = 0; q < in->nic.nqueues; q++) {
      reuses += nic_page_reuse_of(&in->nic.q[q].rx)->reuses;
      unmaps += nic_page_reuse_of(&in->nic.q[q].rx)->unmaps;
    }
    hal_stat_set("rx_page_reuses", (double)reuses);
    hal_stat_set("rx_page_unmaps", (double)unmaps);
  }
  iommu_setup_report(&in->nic_dma);
  hal_log(HAL_LOG_INFO,
          "%s: %.2f Gbit/s payload, %.3f Mpps over %.3f ms on %u core(s); CPU %.1f%% (%.2f busy cores, %.2f Gbit/s "
          "per busy core); drops: %llu no buffer, %llu FIFO overflow, %llu DMA fault",
          app, gbps, (double)in->sum_packets / seconds / 1e6, (double)window_ns / 1e6, hal_app_cores(),
          100.0 * busy_cores / hal_app_cores(), busy_cores, busy_cores > 0 ? gbps / busy_cores : 0.0,
          (unsigned long long)drops[0], (unsigned long long)drops[1], (unsigned long long)drops[2]);
}

void net_report(struct net_core *me, const char *app, bool rx) {
  struct net_instance *in = inst();
  const uint64_t window_ns = me->window_end_ns - me->window_start_ns;
  hal_fetch_add64(&in->sum_bytes, me->bytes);
  hal_fetch_add64(&in->sum_packets, me->packets);
  hal_fetch_add64(&in->sum_idle_ns, me->idle_ns);
  if (hal_fetch_add32(&in->cores_reported, 1) + 1 == hal_app_cores()) report_totals(app, rx, window_ns);
}

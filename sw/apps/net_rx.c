/*
 * net_rx: an iperf server on the NIC. One RX queue per core of the app, a
 * NAPI loop per core (interrupt, poll up to the budget, re-arm), each frame
 * unmapped (or recycled, page pool), charged the stack's cost and its copy
 * to the user, and checked against the generator's pattern. The NIC's
 * generator offers the configured load (platform.devices.nicN).
 *
 * Goodput counts the frames the stack gets inside the window (after the
 * warm-up), as iperf counts what it reads, but on each queue never more than
 * arrived on the wire inside the window: a stack that drains a backlog from
 * the warm-up would otherwise report more than the wire carried.
 * Reports (sw.net_rx.*): payload Gbit/s and Mpps in the window, drops by
 * cause, wire-to-stack latency, CPU utilisation per core and Gbit/s per
 * busy core, the IOMMU work (commands, SYNCs, IOVAs, lazy flushes and the
 * lazy security window). Returns 2 when a frame arrived corrupted.
 */
#include "apps/net_common.h"
#include "lib/string.h"

#define FLOWS_TRACKED 4096u

struct rx_ctx {
  struct net_core *me;
  uint64_t stack_cycles;
  bool copy, check;
  int cost_memcpy;
  /* Payload taken (at any time) that arrived inside the window. */
  uint64_t arrived_bytes, arrived_packets;
};

/* After the window, how long the NIC may still be writing frames that
 * arrived inside it (wire to descriptor write-back) before the ring is
 * looked at: an allowance, well above the shipped scenarios' p99. */
#define ARRIVAL_SETTLE_NS 50000u

/* Per instance and flow: the next sequence number expected (flows stay on
 * one queue, so one core touches each entry). */
static uint32_t next_seq[NET_MAX_INSTANCES][FLOWS_TRACKED];
static bool flow_seen[NET_MAX_INSTANCES][FLOWS_TRACKED];

static void check_frame(const uint8_t *frame, uint32_t len) {
  struct nic_frame_hdr h;
  if (len < NIC_FRAME_PAYLOAD_OFFSET || frame[12] != (NIC_FRAME_ETHERTYPE >> 8) ||
      frame[13] != (NIC_FRAME_ETHERTYPE & 0xFF)) {
    hal_stat_add("frames_corrupt", 1);
    return;
  }
  sw_memcpy(&h, frame + NIC_FRAME_HDR_OFFSET, sizeof h);
  if (!nic_frame_payload_ok(frame, len, h.flow, h.seq)) {
    hal_stat_add("frames_corrupt", 1);
    return;
  }
  if (h.flow < FLOWS_TRACKED) {
    /* A gap is a drop; going back is a reordering the NIC must not do. */
    const unsigned i = hal_app_instance() % NET_MAX_INSTANCES;
    if (flow_seen[i][h.flow] && h.seq < next_seq[i][h.flow]) hal_stat_add("frames_out_of_order", 1);
    flow_seen[i][h.flow] = true;
    next_seq[i][h.flow] = h.seq + 1;
  }
}

static void deliver(void *ctx, const uint8_t *frame, uint32_t len, uint64_t wire_ns) {
  struct rx_ctx *c = (struct rx_ctx *)ctx;
  const uint32_t payload = net_payload_bytes(len);
  hal_cycles(c->stack_cycles);
  if (c->copy) hal_cost_id(c->cost_memcpy, (payload + 63) / 64);
  if (c->check) check_frame(frame, len);
  /* What the stack gets inside the window counts, as iperf counts what it
   * reads: the warm-up must be long enough for the rings and the IOVA
   * caches to reach their steady state. */
  const uint64_t now = hal_now_ns();
  if (now >= c->me->window_start_ns && now < c->me->window_end_ns) {
    c->me->bytes += payload;
    c->me->packets++;
    hal_stat_sample("latency_ns", now - wire_ns);
    /* The window's two halves, for the steady-state check (invariants.h). */
    const uint64_t mid = c->me->window_start_ns + (c->me->window_end_ns - c->me->window_start_ns) / 2;
    hal_stat_add(now < mid ? "window_bytes_first_half" : "window_bytes_second_half", payload);
  }
  if (wire_ns >= c->me->window_start_ns && wire_ns < c->me->window_end_ns) {
    c->arrived_bytes += payload;
    c->arrived_packets++;
  }
}

/* The queue's goodput bounded by what arrived inside the window: taken
 * inside it, or still in the ring once the NIC has written back what was in
 * flight. More taken than arrived means a backlog from before the window
 * drained; the queue then counts what arrived, and says so. */
static void bound_by_arrivals(struct net_core *me, struct rx_ctx *c) {
  hal_delay_ns(ARRIVAL_SETTLE_NS);
  uint64_t pending = 0;
  const unsigned frames = nic_rx_pending_in(me->q, me->window_start_ns, me->window_end_ns, &pending);
  const uint64_t arrived = c->arrived_bytes + pending - (uint64_t)frames * NET_HEADER_BYTES;
  hal_stat_add("arrived_bytes", arrived);
  if (me->bytes <= arrived) return;
  const uint64_t taken = me->bytes;
  /* A frame or two either side of the window is the steady state's noise;
   * more than 1 % is a backlog that drained. Either way the bound holds. */
  const bool drained = taken - arrived > arrived / 100;
  me->bytes = arrived;
  me->packets = c->arrived_packets + frames;
  if (!drained) return;
  hal_stat_add("backlog_drained_queues", 1);
  hal_log(HAL_LOG_WARN,
          "net_rx: queue %u took %llu payload bytes in the window but only %llu arrived in it: a backlog from "
          "before the window drained, so it counts what arrived (a longer warmup_us reaches the steady state)",
          me->rank, (unsigned long long)taken, (unsigned long long)arrived);
}

static int net_rx_main(void) {
  struct net_core me;
  if (net_bring_up(&me, "net_rx") != 0 || net_start(&me, true) != 0) return 1;
  struct rx_ctx ctx = {&me, hal_param("stack_cycles"), hal_param("copy") != 0, hal_param("check") != 0,
                       hal_cost_lookup("memcpy_64b"), 0, 0};
  const unsigned budget = (unsigned)hal_param("budget");
  uint64_t now;
  while ((now = hal_now_ns()) < me.window_end_ns) {
    net_window_tick(&me, now);
    net_housekeeping();
    nic_napi_poll(me.q, budget, deliver, &ctx, me.window_end_ns);
    if (!hal_load32(&me.q->napi_scheduled)) net_idle(&me);
  }
  bound_by_arrivals(&me, &ctx);
  net_stop(&me);
  net_report(&me, "net_rx", true);
  return 0;
}

static const struct hal_param_decl net_rx_params[] = {
    NET_COMMON_PARAMS,
    {"stack_cycles", 600, "CPU cycles the network stack spends per received frame (IP, TCP, socket), beside the copy.", 0, 0},
    {"copy", 1, "1: charge the copy of each payload to the user (memcpy_64b per 64 bytes).", 1, 0},
    {"check", 1, "1: check every frame against the generator's pattern and its flow's sequence (host time only).", 1, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_net_rx = {"net_rx",
                                   "iperf-server-style receive on the NIC: one queue and NAPI loop per core, "
                                   "through the DMA API (strict, lazy or passthrough).",
                                   net_rx_main, net_rx_params};

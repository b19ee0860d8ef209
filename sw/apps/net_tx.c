/*
 * net_tx: an iperf client on the NIC (seed 003 measured "iperf send"). One
 * TX queue per core; each core builds frames (the stack's cost and the copy
 * from the user), maps and posts them, rings the doorbell once per batch
 * (xmit_more), and reclaims sent frames (unmapping each) when the TX
 * completion interrupt comes or the ring runs full. The NIC drains the
 * rings at line rate.
 *
 * Reports (sw.net_tx.*) as net_rx does, for frames whose completion came
 * inside the window.
 */
#include "apps/net_common.h"

static int net_tx_main(void) {
  struct net_core me;
  if (net_bring_up(&me, "net_tx") != 0) return 1;
  struct nic_queue *q = me.q;
  const uint32_t frame = (uint32_t)hal_param("frame_bytes");
  if (frame < 60 || frame > net_nic()->max_frame) {
    hal_log(HAL_LOG_ERROR, "net_tx: frame_bytes %u outside 60..%u (the NIC's largest frame)", frame,
            net_nic()->max_frame);
    return 1;
  }
  /* One 2 KiB frame buffer per TX slot: a slot's buffer is free again once
   * its completion is reclaimed. */
  phys_addr_t bufs_pa;
  uint8_t *bufs = (uint8_t *)hal_dma_alloc((size_t)q->tx.size * 2048, 4096, &bufs_pa);
  if (!bufs) {
    hal_log(HAL_LOG_ERROR, "net_tx: out of DMA memory for frame buffers");
    return 1;
  }
  if (net_start(&me, false) != 0) return 1;
  const uint64_t stack_cycles = hal_param("stack_cycles");
  const bool copy = hal_param("copy") != 0;
  const int cost_memcpy = hal_cost_lookup("memcpy_64b");
  const unsigned budget = (unsigned)hal_param("budget");
  const uint32_t payload = net_payload_bytes(frame);
  uint64_t sent_at_start = 0, now;
  bool started = false;
  while ((now = hal_now_ns()) < me.window_end_ns) {
    if (!started && now >= me.window_start_ns) {
      sent_at_start = q->stats.tx_packets;
      started = true;
    }
    net_window_tick(&me, now);
    net_housekeeping();
    nic_tx_clean(q, budget);
    /* Send up to a budget of frames, one doorbell for the batch. */
    unsigned posted = 0;
    while (posted < budget && nic_tx_free(q) > 0) {
      const uint32_t slot = q->tx.next_to_use;
      hal_cycles(stack_cycles);
      if (copy) hal_cost_id(cost_memcpy, (payload + 63) / 64);
      if (nic_tx_post(q, bufs_pa + (phys_addr_t)slot * 2048, frame) != 0) break;
      posted++;
    }
    if (posted) nic_tx_kick(q);
    else if (!hal_load32(&q->napi_scheduled)) net_idle(&me); /* ring full: wait for completions */
    if (hal_load32(&q->napi_scheduled)) {
      hal_store32(&q->napi_scheduled, 0);
      nic_tx_clean(q, q->tx.size);
      nic_irq_rearm(q);
    }
  }
  me.packets = q->stats.tx_packets - sent_at_start;
  me.bytes = me.packets * payload;
  net_stop(&me);
  net_report(&me, "net_tx", false);
  return 0;
}

static const struct hal_param_decl net_tx_params[] = {
    NET_COMMON_PARAMS,
    {"frame_bytes", 1514, "Frame size without FCS (1514: a 1448-byte TCP payload).", 0, 0},
    {"stack_cycles", 600, "CPU cycles the network stack spends per sent frame (socket, TCP, IP), beside the copy.", 0, 0},
    {"copy", 1, "1: charge the copy of each payload from the user (memcpy_64b per 64 bytes).", 1, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_net_tx = {"net_tx",
                                   "iperf-client-style send on the NIC: one queue per core, a mapping per frame "
                                   "through the DMA API (strict, lazy or passthrough).",
                                   net_tx_main, net_tx_params};

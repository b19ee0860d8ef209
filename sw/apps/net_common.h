/*
 * What net_rx and net_tx share: bringing up the SMMU, the NIC's DMA domain
 * and the driver from the app's parameters, one queue per core, and the
 * end-of-run report (throughput, CPU time, drops, the IOMMU's share).
 *
 * Parameters both apps declare (NET_COMMON_PARAMS):
 *   unmap 0 strict, 1 lazy, 2 passthrough (the NIC's stream in bypass);
 *   cmdq / sync / tlbi / elide: the SMMU driver's policies (smmu_stress);
 *   gather_when_queued, iova_cache: the DMA layer's (docs/dma-mapping.md);
 *   buffers 0 map per packet, 1 page pool; budget, ring, coal_frames,
 *   coal_usecs, msi; duration_us and warmup_us: the measured window.
 */
#ifndef SMMU_VP_SW_APPS_NET_COMMON_H
#define SMMU_VP_SW_APPS_NET_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "apps/iommu_setup.h"
#include "drivers/nic/nic.h"
#include "hal/hal.h"

#define NET_COMMON_PARAMS                                                                                        \
  IOMMU_SETUP_PARAMS,                                                                                            \
      {"duration_us", 2000, "Measured time, after the warm-up, in us of simulated time.", 0, 0},                       \
      {"warmup_us", 3000, "Traffic before the measured window, us: rings, IOVA caches and flush queues reach their steady state.", 0, 0}, \
      {"buffers", 0, "RX buffers: 0 map and unmap every packet, 1 page pool (mapped once, recycled), 2 page reuse (hns3: a page of buffers, replaced when the stack still holds one as the slot wraps).", 2, "per_packet,page_pool,page_reuse"}, \
      {"page_bytes", 4096, "Page reuse: the page each RX slot maps and cuts into 2 KiB buffers (4096: two; 65536: 32).", 65536, 0}, \
      {"stack_hold_ns", 100000, "Page reuse: how long the stack holds a received buffer before freeing it (a named guess: the socket queue's delay); the mean when drawn.", 1000000000, 0}, \
      {"stack_hold", 0, "Page reuse: 0 fixed, every buffer held stack_hold_ns; 1 exponential, each hold drawn with that mean (deterministic per seed).", 1, "fixed,exponential"}, \
      {"budget", 64, "NAPI budget: frames per poll before the CPU is given back.", 0, 0},                               \
      {"ring", 1024, "Descriptors per RX and TX ring (a power of two).", 0, 0},                                         \
      {"coal_frames", 64, "Interrupt moderation: completions per interrupt (ethtool rx-frames; 0 off).", 0, 0},         \
      {"coal_usecs", 8, "Interrupt moderation: us after the first completion (ethtool rx-usecs; 0 off).", 0, 0},        \
      {"msi", 1, "1: per-queue MSI through the SMMU; 0: wired interrupt lines.", 1, 0},                                 \
      {"nic", 0, "Which NIC: the device named nic<N>.", 9, 0},                                                         \
      {"live_iovas", 0, "IOVAs held live for the whole run (other devices' long-lived buffers), one page each, at the top of the space.", 1048576, 0}, \
      {"unmap_latency", 0, "1: sample each RX buffer unmap's latency (stats unmap_ns); reading the clock synchronises the core, so a run with it may differ slightly.", 1, 0}

/* Instances of net_rx and of net_tx one scenario may run (scenario.apps
 * entries naming the app), each driving its own NIC (param nic). */
#define NET_MAX_INSTANCES 4

struct net_core {
  unsigned rank;           /* queue index */
  struct nic_queue *q;
  uint64_t window_start_ns, window_end_ns;
  uint64_t idle_ns;        /* asleep in WFE inside the window */
  uint64_t bytes, packets; /* payload delivered or sent inside the window */
};

/* The whole bring-up, run by every core of the app: rank 0 probes, attaches,
 * configures and sets up every queue (rings and RX buffers, as ndo_open);
 * every core then starts its own queue (interrupt routed to it, unmasked).
 * 0 or non-zero. */
int net_bring_up(struct net_core *me, const char *app);
struct nic_dev *net_nic(void);
/* Every core, after net_bring_up: waits for every queue to be started; rank 0
 * then turns the wire on (RX for net_rx, TX for net_tx) and sets the window
 * (warm-up, then duration) every core measures. 0, or non-zero when a
 * queue failed to start. */
int net_start(struct net_core *me, bool rx);
/* Call with the time now and then: rank 0 snapshots the drop counters when
 * the window opens. */
void net_window_tick(struct net_core *me, uint64_t now_ns);
/* Lazy mode's flush timer (Linux runs it from a timer interrupt; here the
 * idle loop polls its deadline). */
void net_housekeeping(void);
/* Rank 0 at the end of the window: the wire off, everyone woken. */
void net_stop(struct net_core *me);
/* Sleeps until an interrupt or event, counting the sleep inside the window. */
void net_idle(struct net_core *me);
/* Per-core figures into stats, then (last core) the totals and the table. */
void net_report(struct net_core *me, const char *app, bool rx);
/* TCP/IP payload of an Ethernet frame (iperf's goodput): frame minus the
 * Ethernet, IPv4 and TCP-with-timestamps headers. */
uint32_t net_payload_bytes(uint32_t frame_bytes);
#define NET_HEADER_BYTES 66u

#endif

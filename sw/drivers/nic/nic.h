/*
 * Driver for the multi-queue NIC (register block and descriptors:
 * models/nic/nic_regs.h; docs/devices.md, docs/driver.md "NIC driver").
 *
 * The shape of a Linux Ethernet driver, reduced to what moves packets:
 *  - probe: find the device, check its ID, allocate each queue's descriptor
 *    rings (coherent memory: mapped once for the device's lifetime) and map
 *    the interrupt doorbell so that MSIs pass the IOMMU (Linux maps the MSI
 *    page into the domain the same way, iommu_dma_prepare_msi);
 *  - queue set-up (one core, as ndo_open): rings programmed, RX ring filled
 *    with buffers, moderation set; then each queue is started on the core
 *    that will serve it, which routes its interrupt there and unmasks it;
 *  - NAPI per core: the interrupt handler only schedules the poll; the poll
 *    cleans TX completions and receives up to a budget, and re-arms the
 *    queue's interrupt when it ran out of work (nic_napi_poll).
 *
 * DMA addresses come from the DMA API on `dma` (the domain's strict or lazy
 * unmap policy applies); without one (no SMMU, or the stream in bypass) the
 * device sees physical addresses, as with Linux's dma-direct.
 *
 * RX buffer policies:
 *  - NIC_BUFFERS_MAP_PER_PACKET: every received buffer is unmapped before the
 *    stack sees it and a buffer is mapped again to refill the slot (drivers
 *    before page_pool; what seed 001 measured);
 *  - NIC_BUFFERS_PAGE_POOL: buffers are mapped once and recycled mapped
 *    (Linux's page_pool with DMA mapping): the IOMMU is out of the per-packet
 *    path;
 *  - NIC_BUFFERS_PAGE_REUSE: each slot owns a page, mapped whole, cut into
 *    buffers the slot posts in turn; the page is unmapped and replaced only
 *    when the slot comes back to its first buffer while the stack still
 *    holds one of the others (hns3_nic_reuse_page, Linux v5.4, the driver of
 *    seed 001's 100G NIC; nic_rx.c).
 * TX always maps each frame at transmit and unmaps it at completion.
 */
#ifndef SMMU_VP_SW_DRIVERS_NIC_H
#define SMMU_VP_SW_DRIVERS_NIC_H

#include <stdbool.h>
#include <stdint.h>

#include "hal/hal.h"
#include "iommu/dma_iommu.h"
#include "nic/nic_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NIC_MAX_QUEUES 64u

enum nic_buffer_policy {
  NIC_BUFFERS_MAP_PER_PACKET = 0,
  NIC_BUFFERS_PAGE_POOL = 1,
  NIC_BUFFERS_PAGE_REUSE = 2,
};

/* Page reuse: at most this many buffers per page (64 KiB of 2 KiB). */
#define NIC_PAGE_MAX_BUFS 32u

enum nic_irq_mode {
  NIC_IRQ_MSI = 0,   /* per-queue MSI (MSI-X style), the default */
  NIC_IRQ_WIRED = 1, /* wired line irq + q */
};

struct nic_config {
  uint32_t rx_ring_size; /* descriptors, a power of two */
  uint32_t tx_ring_size;
  uint32_t rx_buf_bytes; /* RX buffer, at least the NIC's largest frame */
  enum nic_buffer_policy buffers;
  enum nic_irq_mode irq_mode;
  uint32_t coal_frames;  /* ethtool rx-frames: completions per interrupt (0: off) */
  uint32_t coal_usecs;   /* ethtool rx-usecs (0: off) */
  uint32_t rx_page_bytes; /* page reuse: each slot's page, a power of two, 2 to 32 buffers */
};

/* Defaults: 1024-entry rings, 2 KiB buffers, map per packet, MSI, an
 * interrupt per 64 completions or 8 us; for page reuse 4 KiB pages. */
void nic_config_default(struct nic_config *cfg);

struct nic_buf {
  phys_addr_t pa;  /* the buffer */
  uint64_t dma;    /* its device address while mapped */
  uint32_t len;    /* mapped length */
  bool mapped;
  uint16_t offset; /* page reuse: the buffer posted, from pa and dma (fits the padding) */
};

struct nic_ring {
  struct nic_desc *desc; /* CPU view of the descriptors */
  phys_addr_t desc_pa;
  uint64_t desc_dma;     /* device address of the ring */
  uint32_t size;
  uint32_t next_to_use;   /* next slot the driver posts (the tail it writes) */
  uint32_t next_to_clean; /* next slot the NIC completes */
  struct nic_buf *bufs;   /* one per slot */
};

/* Page reuse's state of an RX ring. It lives behind the ring's nic_buf
 * array, allocated only under that policy, so that the other policies'
 * memory layout (which the simulated caches see) stays as it was. */
struct nic_page_reuse {
  uint64_t reuses;        /* buffers reposted from their page */
  uint64_t unmaps;        /* pages unmapped and replaced */
  uint64_t stack_hold_ns; /* how long the stack holds a buffer it was given (the mean, if drawn) */
  uint64_t hold_drawn;    /* 1: each hold drawn from an exponential distribution of that mean */
  /* Followed by, per slot, NIC_PAGE_MAX_BUFS times: when the stack lets go
   * of each buffer of the slot's page (nic_page_held_until). */
};
struct nic_page_reuse *nic_page_reuse_of(const struct nic_ring *rx);
/* Page reuse: the stack frees each received buffer `ns` after it got it
 * (NIC_STACK_HOLD_NS until told): what page_count would show the driver.
 * After nic_queue_setup. */
#define NIC_STACK_HOLD_NS 100000u
struct nic_dev;
void nic_set_stack_hold(struct nic_dev *nic, uint64_t ns, bool exponential);
uint64_t *nic_page_held_until(const struct nic_ring *rx, uint32_t slot);

struct nic_queue_stats {
  uint64_t rx_packets, rx_bytes;
  uint64_t rx_errors;          /* descriptors written back with an error (dropped frames) */
  uint64_t rx_refill_failures; /* buffers that could not be mapped */
  uint64_t tx_packets, tx_bytes, tx_errors;
  uint64_t tx_map_failures;
  uint64_t irqs;               /* handler runs */
  uint64_t polls;              /* nic_napi_poll rounds */
  uint64_t budget_exhausted;   /* rounds that used the whole budget */
};

struct nic_dev;

struct nic_queue {
  struct nic_dev *nic;
  unsigned index;
  unsigned irq; /* line (MSI data in MSI mode) */
  unsigned cpu; /* the core that opened it */
  struct nic_ring rx, tx;
  volatile uint32_t napi_scheduled; /* set by the interrupt handler */
  struct nic_queue_stats stats;
};

struct nic_dev {
  struct hal_device_info info;
  struct dma_dev *dma; /* NULL: physical device addresses */
  struct nic_config cfg;
  unsigned hw_queues;  /* QUEUES register */
  unsigned nqueues;    /* queues the driver uses */
  uint32_t max_frame;  /* MAX_FRAME register */
  uint32_t link_mbps;
  uint64_t msi_dma;    /* interrupt doorbell as the NIC addresses it */
  struct nic_queue q[NIC_MAX_QUEUES];
  int cost_call, cost_indirect, cost_desc_miss;
};

/* Finds device `name`, checks its ID and that it has `nqueues` queues,
 * allocates every ring and maps the MSI doorbell. dma may be NULL. On one
 * core, before any queue is opened. 0, or -1 with the reason logged. */
int nic_probe(struct nic_dev *nic, const char *name, struct dma_dev *dma, const struct nic_config *cfg,
              unsigned nqueues);
/* Programs queue `qi` (rings, vector, moderation), enables it and fills its
 * RX ring, with its interrupt still masked: what ndo_open does for every
 * queue on one CPU. 0 or -1 with the reason logged. */
int nic_queue_setup(struct nic_dev *nic, unsigned qi);
/* On the core that will serve queue `qi`: routes its interrupt there (IRQ
 * affinity) and unmasks it. 0 or -1. */
int nic_queue_start(struct nic_dev *nic, unsigned qi);
/* Both, on the calling core. */
int nic_queue_open(struct nic_dev *nic, unsigned qi);
/* Sets CTRL: wire RX and/or TX on or off. */
void nic_set_enabled(struct nic_dev *nic, bool rx, bool tx);
/* Disables queue `qi` and releases its buffers (unmapping what is mapped). */
void nic_queue_close(struct nic_dev *nic, unsigned qi);

/* RX: receives up to `budget` completed frames, each handed to `deliver`
 * after its buffer is released to the CPU (unmapped, or synced for a page
 * pool buffer), then refills the ring and rings the doorbell once. Frames
 * the NIC dropped on a descriptor (DMA fault, too small) are counted and
 * their slots refilled. Returns the descriptors consumed. */
typedef void (*nic_rx_deliver_t)(void *ctx, const uint8_t *frame, uint32_t len, uint64_t wire_ns);
unsigned nic_rx_poll(struct nic_queue *q, unsigned budget, nic_rx_deliver_t deliver, void *ctx);
/* Posts buffers in every free RX slot; returns how many (doorbell included). */
unsigned nic_rx_refill(struct nic_queue *q);
/* A measurement, not a driver step (no time is charged): the frames the NIC
 * has completed on the queue that the driver has not taken yet, whose wire
 * time is in [from_ns, to_ns); returns how many and adds their bytes to
 * *bytes. An app counts with it what arrived in a window but was still in
 * the ring when the window closed. */
unsigned nic_rx_pending_in(const struct nic_queue *q, uint64_t from_ns, uint64_t to_ns, uint64_t *bytes);

/* TX: slots free for nic_tx_post. */
uint32_t nic_tx_free(const struct nic_queue *q);
/* Maps [pa, pa + len) and posts it as one frame; the doorbell waits for
 * nic_tx_kick (xmit_more). 0, -1 when the ring is full, -2 when the map failed. */
int nic_tx_post(struct nic_queue *q, phys_addr_t pa, uint32_t len);
void nic_tx_kick(struct nic_queue *q);
/* Reclaims up to `budget` sent frames, unmapping each. Returns how many. */
unsigned nic_tx_clean(struct nic_queue *q, unsigned budget);

/* NAPI: the interrupt handler marks the queue scheduled; this runs one
 * scheduled poll: TX clean and RX up to `budget`, repeated while the budget
 * is used up, then re-arms the queue's interrupt. Returns the frames
 * received, or 0 at once when the queue was not scheduled. */
unsigned nic_napi_poll(struct nic_queue *q, unsigned budget, nic_rx_deliver_t deliver, void *ctx,
                       uint64_t until_ns);
/* Unmasks the queue's interrupt (IRQ_MASK = 0). */
void nic_irq_rearm(struct nic_queue *q);

/* A 64-bit statistics register (NIC_STAT_*). */
uint64_t nic_read_stat(const struct nic_dev *nic, uint32_t reg);

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_SW_DRIVERS_NIC_H */

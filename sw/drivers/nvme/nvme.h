/*
 * Driver for the NVMe controller (register and queue formats:
 * models/nvme/nvme_regs.h; docs/devices.md#nvme, docs/storage.md).
 *
 * After Linux's drivers/nvme/host/pci.c, reduced to what moves blocks:
 *  - bring-up in the specification's order (NVMe 2.0 3.5.1): disable and
 *    wait for CSTS.RDY = 0, admin queues (AQA, ASQ, ACQ), enable and wait for
 *    RDY = 1, Identify controller and namespace, Set Features Number of
 *    Queues, then an I/O completion and submission queue pair per core, each
 *    CQ with its own MSI vector routed to that core;
 *  - I/O: a request's pages are mapped with dma_map_sg (or are physical
 *    without an IOMMU), turned into PRP1/PRP2 and, past two pages, a PRP
 *    list from a per-command list page mapped once; the SQ tail doorbell is
 *    written per submission;
 *  - completion by interrupt (the handler only marks the queue) or by
 *    polling (Linux's io_poll); each completion unmaps its request through
 *    the domain's strict or lazy policy and calls the request's callback.
 * Queues and their PRP list pages are coherent memory, allocated and mapped
 * once. One core uses an I/O queue; the admin queue is used at bring-up.
 */
#ifndef SMMU_VP_SW_DRIVERS_NVME_H
#define SMMU_VP_SW_DRIVERS_NVME_H

#include <stdbool.h>
#include <stdint.h>

#include "hal/hal.h"
#include "iommu/dma_iommu.h"
#include "nvme/nvme_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NVME_MAX_IO_QUEUES 32u
#define NVME_ADMIN_DEPTH 32u
#define NVME_PAGE 4096u
/* Pages one request may span (a PRP list of one page, no chaining). */
#define NVME_MAX_REQUEST_PAGES (NVME_PAGE / 8u)

struct nvme_request;
typedef void (*nvme_done_t)(struct nvme_request *rq);

struct nvme_request {
  /* Filled by the caller. */
  uint8_t opcode;            /* NVME_CMD_READ, _WRITE or _FLUSH */
  uint64_t slba;             /* first logical block */
  uint32_t blocks;           /* logical blocks (0 for flush) */
  const struct iommu_sg *sg; /* the buffer's pages, physically scattered */
  unsigned nents;
  nvme_done_t done;
  void *ctx;
  /* Filled by the driver. */
  uint16_t status;           /* CQE status field (phase bit cleared); 0: success */
  uint64_t submit_ns, complete_ns;
  uint64_t dma[NVME_MAX_REQUEST_PAGES]; /* device address of each element */
};

struct nvme_queue_stats {
  uint64_t submitted, completed, errors, map_failures, irqs, full;
};

struct nvme_ctrl;

struct nvme_queue {
  struct nvme_ctrl *ctrl;
  uint16_t qid, depth;
  struct nvme_sqe *sq;
  struct nvme_cqe *cq;
  uint64_t sq_dma, cq_dma;
  uint16_t sq_tail, cq_head;
  uint16_t cq_phase;           /* the phase tag of entries not yet consumed */
  unsigned vector, irq, cpu;
  volatile uint32_t irq_pending;
  uint16_t inflight;
  struct nvme_request **owner; /* by command identifier */
  uint16_t *free_cids;         /* stack of free identifiers */
  uint16_t nfree;
  uint64_t *prp_lists;         /* CPU view: one PRP list page per identifier */
  uint64_t prp_lists_dma;
  struct nvme_queue_stats stats;
};

struct nvme_ctrl {
  struct hal_device_info info;
  struct dma_dev *dma;         /* NULL: physical device addresses */
  uint64_t cap;
  unsigned dstrd;
  uint32_t mdts_bytes;         /* 0: no limit */
  uint32_t lba_bytes;
  uint64_t nsze;               /* namespace 1's size in logical blocks */
  char model[41];
  uint64_t msi_dma;            /* the interrupt doorbell as the drive addresses it */
  bool poll;                   /* completions by polling: no vectors for I/O queues */
  struct nvme_queue admin;
  struct nvme_queue io[NVME_MAX_IO_QUEUES];
  unsigned nr_io;
  int cost_call, cost_indirect, cost_cqe_miss;
};

/* Brings controller `name` up with `nr_io` I/O queue pairs (the queues are
 * created here, on this core; nvme_queue_start routes each one's interrupt).
 * dma may be NULL. `poll`: I/O completions without interrupts. 0, or -1 with
 * the reason logged. */
int nvme_probe(struct nvme_ctrl *ctrl, const char *name, struct dma_dev *dma, unsigned nr_io, unsigned depth,
               bool poll);
/* On the core that will use I/O queue `i`: its interrupt comes here. */
int nvme_queue_start(struct nvme_ctrl *ctrl, unsigned i);
/* Maps the request's pages, builds its PRPs and submits it. 0; -1 when the
 * queue is full; -2 when the mapping failed (counted). */
int nvme_submit(struct nvme_queue *q, struct nvme_request *rq);
/* Consumes every posted completion (unmap, callback), then writes the CQ
 * head doorbell once. Returns how many. */
unsigned nvme_process_cq(struct nvme_queue *q);
/* Disables the controller (CC.EN = 0) and waits for it. */
void nvme_disable(struct nvme_ctrl *ctrl);

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_SW_DRIVERS_NVME_H */

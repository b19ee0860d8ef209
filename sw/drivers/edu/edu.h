/*
 * Driver for QEMU's "edu" PCI device (-device edu), the DMA master the
 * qemu-virt port uses to send DMA through QEMU's SMMUv3. Register facts
 * from QEMU's hw/misc/edu.c (QEMU 7.2), BAR0:
 *   0x00 identification, 0x010000ed (major 1, minor 0)
 *   0x04 liveness check: reads back the bitwise NOT of what was written
 *   0x80 DMA source, 0x88 DMA destination, 0x90 DMA count (32/64-bit access)
 *   0x98 DMA command: bit 0 start (clears when done), bit 1 direction
 *        (0: memory -> edu buffer, 1: edu buffer -> memory), bit 2 raise an
 *        interrupt when done
 * The device's side of a transfer is its 4 KiB buffer at device address
 * 0x40000; the memory side is a DMA address the device clamps to 28 bits
 * (its dma_mask), which goes through the IOMMU. A transfer starts about
 * 100 ms of virtual time after the start bit (a timer in the model). The
 * model never reports a DMA error: a transfer the IOMMU refuses completes
 * like any other, so faults show only in the data and the SMMU's events.
 */
#ifndef SMMU_VP_SW_DRIVERS_EDU_H
#define SMMU_VP_SW_DRIVERS_EDU_H

#include <stdbool.h>
#include <stdint.h>

#include "hal/hal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EDU_ID_VALUE 0x010000EDu
#define EDU_BUF_ADDR 0x40000u
#define EDU_BUF_SIZE 4096u
/* Highest DMA address the device emits. */
#define EDU_DMA_MASK ((1ull << 28) - 1)

struct edu_device {
  phys_addr_t base;
  uint32_t stream_id;
  uint32_t irq;
};

/* Finds the device `name` in the platform description and checks that it
 * answers as an edu (identification and liveness registers). 0 or -1. */
int edu_probe(struct edu_device *edu, const char *name);
/* Copies `len` bytes from DMA address `dma_src` into the device's buffer at
 * offset `buf_off`, and waits. 0, or -1 for a bad range or a timeout. */
int edu_dma_to_device(const struct edu_device *edu, uint64_t dma_src, uint32_t buf_off, uint32_t len,
                      uint64_t timeout_ns);
/* Copies `len` bytes of the device's buffer at `buf_off` to DMA address
 * `dma_dst`, and waits. 0, or -1 for a bad range or a timeout. */
int edu_dma_from_device(const struct edu_device *edu, uint32_t buf_off, uint64_t dma_dst, uint32_t len,
                        uint64_t timeout_ns);
/* A transfer is running (DMA command bit 0). */
bool edu_dma_busy(const struct edu_device *edu);

#ifdef __cplusplus
}
#endif

#endif

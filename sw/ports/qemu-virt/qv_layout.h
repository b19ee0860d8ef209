/* Constants shared by the boot code (start.S), the linker script and the C
 * side of the qemu-virt HAL port. */
#ifndef SMMU_VP_QV_LAYOUT_H
#define SMMU_VP_QV_LAYOUT_H

/* Cores the port can start (virt with GICv2 has at most 8). */
#define QV_MAX_CPUS 8
/* Stack of each core. */
#define QV_STACK_SIZE 0x10000
/* struct qv_frame: x0..x30, ELR, SPSR, padded to 16 bytes. */
#define QV_FRAME_SIZE 272

/* virt's memory map (hw/arm/virt.c; checked with -machine dumpdtb). */
#define QV_RAM_BASE 0x40000000ull
#define QV_UART_BASE 0x09000000ull
#define QV_SMMU_BASE 0x09050000ull
#define QV_SMMU_SIZE 0x20000ull
#define QV_GICV2M_BASE 0x08020000ull
/* PCIe with highmem=off: ECAM for buses 0..15, 32-bit MMIO window. */
#define QV_PCIE_ECAM_BASE 0x3f000000ull
#define QV_PCIE_ECAM_BUSES 16u
#define QV_PCIE_MMIO_BASE 0x10000000ull
#define QV_PCIE_MMIO_SIZE 0x2eff0000ull
/* INTx of PCI slot s, pin p (1 = INTA) reach GIC SPI 3 + (s + p - 1) % 4
 * (virt's interrupt-map); GIC INTIDs of SPIs start at 32. */
#define QV_PCIE_SPI_BASE 3u

#endif

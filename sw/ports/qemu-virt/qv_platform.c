/*
 * The platform description of the qemu-virt port (hal_device_*): what a
 * bootloader would do for the PCI devices on virt's PCIe host bridge
 * (ECAM, PCI Express Base 4.0 7.2.2): enumerate bus 0, size each memory
 * BAR and place it in the 32-bit MMIO window (PCI Local Bus 3.0 6.2.5.1),
 * enable memory decoding and bus mastering (Command register, 6.2.2), and
 * describe the devices sw/ has drivers for. A device's StreamID is its
 * requester ID, bus << 8 | device << 3 | function: virt's device tree maps
 * RIDs 1:1 to SMMU StreamIDs (iommu-map = <0 &smmu 0 0x10000>).
 */
#include "qv_port.h"

#include "lib/string.h"

#define PCI_VENDOR_ID 0x00u
#define PCI_COMMAND 0x04u
#define PCI_COMMAND_MEMORY (1u << 1)
#define PCI_COMMAND_MASTER (1u << 2)
#define PCI_HEADER_TYPE 0x0Eu
#define PCI_BAR0 0x10u
#define PCI_INTERRUPT_PIN 0x3Du
#define PCI_BAR_IO 1u
#define PCI_BAR_TYPE_64 (2u << 1)
#define PCI_BAR_MEM_MASK 0xFFFFFFF0u

/* QEMU's "edu" device (PCI_VENDOR_ID_QEMU, device 0x11e8). */
#define EDU_VENDOR 0x1234u
#define EDU_DEVICE 0x11E8u

#define MAX_DEVICES 8

struct qv_device {
  char name[16];
  struct hal_device_info info;
};
static struct qv_device devices[MAX_DEVICES];
static unsigned n_devices;
static phys_addr_t mmio_next = QV_PCIE_MMIO_BASE;

static phys_addr_t cfg(unsigned bus, unsigned dev, unsigned fn, unsigned reg) {
  return QV_PCIE_ECAM_BASE + ((phys_addr_t)bus << 20) + ((phys_addr_t)dev << 15) + ((phys_addr_t)fn << 12) + reg;
}

/* Sizes and places memory BAR `bar`; returns its address (0: none or no
 * room) and the index of the next BAR in *next. */
static phys_addr_t assign_bar(unsigned bus, unsigned dev, unsigned fn, unsigned bar, unsigned *next, uint64_t *size) {
  const phys_addr_t reg = cfg(bus, dev, fn, PCI_BAR0 + 4 * bar);
  const uint32_t orig = hal_read32(reg);
  *next = bar + 1;
  *size = 0;
  if (orig & PCI_BAR_IO) return 0;
  const bool is64 = (orig & (3u << 1)) == PCI_BAR_TYPE_64;
  if (is64) *next = bar + 2;
  hal_write32(reg, 0xFFFFFFFFu);
  const uint32_t mask = hal_read32(reg) & PCI_BAR_MEM_MASK;
  hal_write32(reg, orig);
  if (!mask) return 0; /* the device has no BAR at this index */
  *size = (uint64_t)(~mask) + 1;
  const phys_addr_t addr = (mmio_next + *size - 1) & ~(*size - 1); /* naturally aligned */
  if (addr + *size > QV_PCIE_MMIO_BASE + QV_PCIE_MMIO_SIZE) return 0;
  mmio_next = addr + *size;
  hal_write32(reg, (uint32_t)addr | (orig & ~PCI_BAR_MEM_MASK));
  if (is64) hal_write32(reg + 4, 0);
  return addr;
}

static void add_edu(unsigned bus, unsigned dev, unsigned fn) {
  unsigned next;
  uint64_t size;
  const phys_addr_t bar0 = assign_bar(bus, dev, fn, 0, &next, &size);
  if (!bar0 || n_devices == MAX_DEVICES) {
    hal_log(HAL_LOG_ERROR, "pci %02x:%02x.%x: edu without room for its BAR0", bus, dev, fn);
    return;
  }
  const uint32_t cmd = hal_read32(cfg(bus, dev, fn, PCI_COMMAND)) & 0xFFFFu;
  hal_write32(cfg(bus, dev, fn, PCI_COMMAND), cmd | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
  const unsigned pin = hal_read8(cfg(bus, dev, fn, PCI_INTERRUPT_PIN));
  struct qv_device *d = &devices[n_devices];
  qv_snprintf(d->name, sizeof d->name, "edu%u", n_devices);
  d->info.name = d->name;
  d->info.type = "edu";
  d->info.base = bar0;
  d->info.size = size;
  d->info.stream_id = (bus << 8) | (dev << 3) | fn;
  d->info.irq = pin ? 32u + QV_PCIE_SPI_BASE + (dev + pin - 1) % 4 : 0;
  d->info.smmu = 0;
  d->info.ats = 0; /* the edu device has no ATC */
  n_devices++;
  hal_log(HAL_LOG_INFO, "pci %02x:%02x.%x: edu, BAR0 0x%llx (%llu KiB), StreamID 0x%x, INTx GIC %u", bus, dev, fn,
          (unsigned long long)bar0, (unsigned long long)(size >> 10), d->info.stream_id, d->info.irq);
}

void qv_platform_init(void) {
  /* Bus 0 only: virt puts -device PCI devices there unless told otherwise,
   * and there are no bridges to walk. */
  for (unsigned dev = 0; dev < 32; dev++) {
    const uint32_t id0 = hal_read32(cfg(0, dev, 0, PCI_VENDOR_ID));
    if ((id0 & 0xFFFFu) == 0xFFFFu) continue;
    const bool multi = (hal_read8(cfg(0, dev, 0, PCI_HEADER_TYPE)) & 0x80u) != 0;
    for (unsigned fn = 0; fn < (multi ? 8u : 1u); fn++) {
      const uint32_t id = hal_read32(cfg(0, dev, fn, PCI_VENDOR_ID));
      if ((id & 0xFFFFu) == 0xFFFFu) continue;
      const unsigned htype = hal_read8(cfg(0, dev, fn, PCI_HEADER_TYPE)) & 0x7Fu;
      hal_log(HAL_LOG_INFO, "pci 00:%02x.%x: %04x:%04x header type %u", dev, fn, id & 0xFFFFu, id >> 16, htype);
      if (htype == 0 && (id & 0xFFFFu) == EDU_VENDOR && (id >> 16) == EDU_DEVICE) add_edu(0, dev, fn);
    }
  }
}

unsigned hal_device_count(void) { return n_devices; }

int hal_device_get(unsigned index, struct hal_device_info *out) {
  if (index >= n_devices) return -1;
  *out = devices[index].info;
  return 0;
}

int hal_device_find(const char *name, struct hal_device_info *out) {
  for (unsigned i = 0; i < n_devices; i++)
    if (sw_strcmp(devices[i].name, name) == 0) return hal_device_get(i, out);
  return -1;
}

// A small test driver for the SMMU, in C++ on the HAL: what the integration
// tests need to bring it up and talk to it through registers and memory, as
// the bare-metal driver will (in C, later).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "hal/hal.h"
#include "smmu/descriptors.h"
#include "smmu/registers.h"

namespace smmu_vp::test {

namespace reg = smmu::reg;

inline void wait_ack(uint64_t ack_reg, uint32_t want, phys_addr_t smmu) {
  while (hal_read32(smmu + ack_reg) != want) hal_cpu_relax();
}

// A 4 KiB-granule, 48-bit stage-1 table (levels 0..3) mapping `pages` pages
// from `iova` to `pa`, built like a driver would in DMA memory. *leaf, if
// given, receives the level-3 table (to change mappings later).
inline uint64_t build_tables(uint64_t iova, uint64_t pa, unsigned pages, uint64_t** leaf = nullptr) {
  phys_addr_t tables[4];
  uint64_t* va[4];
  for (int l = 0; l < 4; ++l) va[l] = static_cast<uint64_t*>(hal_dma_alloc(4096, 4096, &tables[l]));
  for (int l = 0; l < 3; ++l) va[l][(iova >> (39 - 9 * l)) & 511] = tables[l + 1] | 3;  // table descriptors
  for (unsigned i = 0; i < pages; ++i) {
    const uint64_t page = iova + i * 4096ull;
    // Page: nG (ASID-tagged, as Linux maps for devices), AF, inner
    // shareable, AttrIndx 0, AP[1] (EL0 access) so any access passes.
    va[3][(page >> 12) & 511] = (pa + i * 4096ull) | 3 | (1u << 11) | (1u << 10) | (3u << 8) | (1u << 6);
  }
  if (leaf) *leaf = va[3];
  return tables[0];
}

struct BringUp {
  uint64_t ttb = 0;           // stage-1 tables of dma0's CD (ASID 1)
  unsigned evtq_log2 = 4;     // event queue of 2^n records
  unsigned msi_line = 0;      // event queue MSI to this line; 0: wired line 64
  hal_irq_handler_t eventq_handler = nullptr;
  unsigned cmdq_log2 = 0;     // command queue of 2^n commands; 0: none
};

// What bring_up leaves for the test.
struct SmmuSetup {
  phys_addr_t smmu = 0;
  uint64_t* evtq = nullptr;  // the event queue's records
  uint32_t sid = 0;          // dma0's StreamID
  uint64_t* cmdq = nullptr;  // the command queue's slots
  unsigned cmdq_log2 = 0;
  uint32_t cmdq_prod = 0;    // software's copy of CMDQ_PROD
};

// Bring-up in the Linux order (IHI 0070 3.11; arm-smmu-v3.c
// arm_smmu_device_reset): a linear stream table whose STE for dma0 translates
// stage 1, the command queue, the event queue and its interrupt, then SMMUEN.
inline bool bring_up(const BringUp& b, SmmuSetup* out) {
  const phys_addr_t smmu = hal_smmu().base;
  struct hal_device_info dev;
  if (!smmu || hal_device_find("dma0", &dev) != 0) return false;
  phys_addr_t strtab, cd_pa, evtq, cmdq = 0;
  auto* ste_mem = static_cast<uint64_t*>(hal_dma_alloc(64 * 64, 4096, &strtab));
  auto* cd_mem = static_cast<uint64_t*>(hal_dma_alloc(64, 64, &cd_pa));
  out->evtq = static_cast<uint64_t*>(hal_dma_alloc(32u << b.evtq_log2, 4096, &evtq));
  if (b.cmdq_log2) out->cmdq = static_cast<uint64_t*>(hal_dma_alloc(16u << b.cmdq_log2, 4096, &cmdq));
  out->cmdq_log2 = b.cmdq_log2;
  out->smmu = smmu;
  out->sid = dev.stream_id;

  smmu::DecodedCd cd;
  cd.t0sz = 16;
  cd.granule = smmu::Granule::k4K;
  cd.ips_bits = 48;
  cd.asid = 1;
  cd.ttb0 = b.ttb;
  const smmu::CdWords cdw = smmu::encode_cd(cd);
  std::memcpy(cd_mem, cdw.data(), sizeof cdw);
  smmu::DecodedSte ste;
  ste.config = smmu::ste::kS1Trans;
  ste.s1_context_ptr = cd_pa;
  const smmu::SteWords stw = smmu::encode_ste(ste);
  std::memcpy(ste_mem + dev.stream_id * 8, stw.data(), sizeof stw);
  hal_barrier(HAL_BARRIER_DSB);

  hal_write32(smmu + reg::kCr0, 0);
  wait_ack(reg::kCr0Ack, 0, smmu);
  hal_write64(smmu + reg::kStrtabBase, strtab);
  hal_write32(smmu + reg::kStrtabBaseCfg, reg::strtab_base_cfg::kLog2Size.place(6));
  uint32_t cr0 = 0;
  if (b.cmdq_log2) {
    hal_write64(smmu + reg::kCmdqBase, cmdq | reg::queue_base::kLog2Size.place(b.cmdq_log2));
    hal_write32(smmu + reg::kCmdqProd, 0);
    hal_write32(smmu + reg::kCmdqCons, 0);
    cr0 |= reg::cr0::kCmdqEn.mask32();
    hal_write32(smmu + reg::kCr0, cr0);
    wait_ack(reg::kCr0Ack, cr0, smmu);
  }
  hal_write64(smmu + reg::kEventqBase, evtq | reg::queue_base::kLog2Size.place(b.evtq_log2));
  hal_write32(smmu + reg::kEventqProd, 0);
  hal_write32(smmu + reg::kEventqCons, 0);
  if (b.msi_line) {
    hal_write64(smmu + reg::kEventqIrqCfg0, hal_msi_doorbell());
    hal_write32(smmu + reg::kEventqIrqCfg1, b.msi_line);
  }
  cr0 |= reg::cr0::kEventqEn.mask32();
  hal_write32(smmu + reg::kCr0, cr0);
  wait_ack(reg::kCr0Ack, cr0, smmu);
  if (b.eventq_handler) {
    if (hal_irq_register(b.msi_line ? b.msi_line : 64, b.eventq_handler, nullptr) != 0) return false;
    hal_write32(smmu + reg::kIrqCtrl, reg::irq_ctrl::kEventqIrqEn.mask32());
    wait_ack(reg::kIrqCtrlAck, reg::irq_ctrl::kEventqIrqEn.mask32(), smmu);
  }
  cr0 |= reg::cr0::kSmmuEn.mask32();
  hal_write32(smmu + reg::kCr0, cr0);
  wait_ack(reg::kCr0Ack, cr0, smmu);
  return true;
}

// Brought up with empty translation tables and a command queue of
// 2^cmdq_log2 entries, for tests that only issue commands.
inline bool bring_up_for_commands(unsigned cmdq_log2, SmmuSetup* out) {
  phys_addr_t root;
  if (!hal_dma_alloc(4096, 4096, &root)) return false;
  BringUp b;
  b.ttb = root;
  b.cmdq_log2 = cmdq_log2;
  return bring_up(b, out);
}

// Writes a command at the software PROD and publishes it.
inline void submit(SmmuSetup& s, const std::array<uint64_t, 2>& cmd) {
  const uint32_t mask = (1u << s.cmdq_log2) - 1;
  uint64_t* slot = s.cmdq + 2 * (s.cmdq_prod & mask);
  slot[0] = cmd[0];
  slot[1] = cmd[1];
  s.cmdq_prod = (s.cmdq_prod + 1) & ((2u << s.cmdq_log2) - 1);
  hal_barrier(HAL_BARRIER_DSB);
  hal_write32(s.smmu + reg::kCmdqProd, s.cmdq_prod);
}

// Polls CMDQ_CONS until it reaches the software PROD; false if the queue
// stopped on an error first (CONS.ERR means something only while
// GERROR.CMDQ_ERR is active, IHI 0070 6.3.28).
inline bool wait_consumed(const SmmuSetup& s) {
  const uint32_t mask = (2u << s.cmdq_log2) - 1;
  for (;;) {
    if ((hal_read32(s.smmu + reg::kCmdqCons) & mask) == s.cmdq_prod) return true;
    const uint32_t active = hal_read32(s.smmu + reg::kGerror) ^ hal_read32(s.smmu + reg::kGerrorn);
    if (active & reg::gerror::kCmdqErr.mask32()) return false;
    hal_cpu_relax();
  }
}

}  // namespace smmu_vp::test

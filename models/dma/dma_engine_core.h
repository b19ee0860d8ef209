// Register file of the generic DMA engine, without SystemC: decodes register
// reads and writes and says when a channel is told to start.
#pragma once

#include <cstdint>
#include <vector>

#include "dma/dma_registers.h"

namespace smmu_vp {

struct DmaChannelState {
  uint64_t src = 0, dst = 0;
  uint32_t len = 0;
  uint32_t sid = 0;
  uint32_t ssid = 0;
  uint32_t ctrl = 0;  // IRQ_EN / MSI_EN (GO is not stored)
  uint32_t status = 0;
  uint32_t msi_data = 0;
  uint64_t msi_addr = 0;
  uint32_t bytes_done = 0;
};

class DmaEngineCore {
 public:
  DmaEngineCore(unsigned channels, uint32_t burst_bytes, uint32_t stream_id);

  static uint64_t register_block_size(unsigned channels) {
    return DMA_CH_BASE + static_cast<uint64_t>(channels) * DMA_CH_STRIDE;
  }

  enum class Access { kOk, kBadAddress, kBadSize };
  // 32- or 64-bit aligned accesses. A write of CTRL.GO to an idle channel
  // marks it busy and reports it in *started (-1 otherwise).
  Access read(uint64_t offset, unsigned len, uint64_t* value) const;
  Access write(uint64_t offset, unsigned len, uint64_t value, int* started);

  DmaChannelState& channel(unsigned ch) { return ch_[ch]; }
  unsigned channels() const { return static_cast<unsigned>(ch_.size()); }
  uint64_t go_while_busy() const { return go_while_busy_; }

  // Completion of a started transfer.
  void complete(unsigned ch, uint32_t err, uint32_t bytes_done);

 private:
  uint32_t read32(uint64_t offset, bool* ok) const;
  void write32(uint64_t offset, uint32_t v, bool* ok, int* started);

  std::vector<DmaChannelState> ch_;
  uint32_t burst_;
  uint64_t go_while_busy_ = 0;
};

}  // namespace smmu_vp

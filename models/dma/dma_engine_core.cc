#include "dma/dma_engine_core.h"

namespace smmu_vp {

DmaEngineCore::DmaEngineCore(unsigned channels, uint32_t burst_bytes, uint32_t stream_id)
    : ch_(channels), burst_(burst_bytes) {
  for (auto& c : ch_) c.sid = stream_id;
}

uint32_t DmaEngineCore::read32(uint64_t off, bool* ok) const {
  *ok = true;
  switch (off) {
    case DMA_REG_ID: return DMA_ID_VALUE;
    case DMA_REG_CHANNELS: return channels();
    case DMA_REG_BURST: return burst_;
    default: break;
  }
  if (off < DMA_CH_BASE || off >= register_block_size(channels())) {
    *ok = off < DMA_CH_BASE;  // unassigned global registers read as zero
    return 0;
  }
  const DmaChannelState& c = ch_[(off - DMA_CH_BASE) / DMA_CH_STRIDE];
  switch ((off - DMA_CH_BASE) % DMA_CH_STRIDE) {
    case DMA_CH_SRC_LO: return static_cast<uint32_t>(c.src);
    case DMA_CH_SRC_HI: return static_cast<uint32_t>(c.src >> 32);
    case DMA_CH_DST_LO: return static_cast<uint32_t>(c.dst);
    case DMA_CH_DST_HI: return static_cast<uint32_t>(c.dst >> 32);
    case DMA_CH_LEN: return c.len;
    case DMA_CH_SID: return c.sid;
    case DMA_CH_SSID: return c.ssid;
    case DMA_CH_CTRL: return c.ctrl;
    case DMA_CH_STATUS: return c.status;
    case DMA_CH_MSI_DATA: return c.msi_data;
    case DMA_CH_MSI_ADDR_LO: return static_cast<uint32_t>(c.msi_addr);
    case DMA_CH_MSI_ADDR_HI: return static_cast<uint32_t>(c.msi_addr >> 32);
    case DMA_CH_BYTES_DONE: return c.bytes_done;
    default: return 0;  // reserved: RAZ/WI
  }
}

void DmaEngineCore::write32(uint64_t off, uint32_t v, bool* ok, int* started) {
  *ok = true;
  if (off < DMA_CH_BASE) return;  // global registers are read-only
  if (off >= register_block_size(channels())) {
    *ok = false;
    return;
  }
  const unsigned idx = static_cast<unsigned>((off - DMA_CH_BASE) / DMA_CH_STRIDE);
  DmaChannelState& c = ch_[idx];
  auto set_lo = [](uint64_t& r, uint32_t x) { r = (r & ~0xFFFFFFFFull) | x; };
  auto set_hi = [](uint64_t& r, uint32_t x) { r = (r & 0xFFFFFFFFull) | (static_cast<uint64_t>(x) << 32); };
  switch ((off - DMA_CH_BASE) % DMA_CH_STRIDE) {
    case DMA_CH_SRC_LO: set_lo(c.src, v); break;
    case DMA_CH_SRC_HI: set_hi(c.src, v); break;
    case DMA_CH_DST_LO: set_lo(c.dst, v); break;
    case DMA_CH_DST_HI: set_hi(c.dst, v); break;
    case DMA_CH_LEN: c.len = v; break;
    case DMA_CH_SID: c.sid = v; break;
    case DMA_CH_SSID: c.ssid = v & (DMA_SSID_SSV | DMA_SSID_MASK); break;
    case DMA_CH_CTRL:
      c.ctrl = v & (DMA_CTRL_IRQ_EN | DMA_CTRL_MSI_EN);
      if (v & DMA_CTRL_GO) {
        if (c.status & DMA_STATUS_BUSY) {
          ++go_while_busy_;
        } else {
          c.status = DMA_STATUS_BUSY;  // a new transfer clears DONE and ERROR
          c.bytes_done = 0;
          *started = static_cast<int>(idx);
        }
      }
      break;
    case DMA_CH_STATUS:
      if (v & DMA_STATUS_DONE) c.status &= ~DMA_STATUS_DONE;
      if (v & DMA_STATUS_ERROR) c.status &= ~(DMA_STATUS_ERROR | DMA_STATUS_ERR_MASK);
      break;
    case DMA_CH_MSI_DATA: c.msi_data = v; break;
    case DMA_CH_MSI_ADDR_LO: set_lo(c.msi_addr, v); break;
    case DMA_CH_MSI_ADDR_HI: set_hi(c.msi_addr, v); break;
    default: break;  // read-only or reserved
  }
}

DmaEngineCore::Access DmaEngineCore::read(uint64_t offset, unsigned len, uint64_t* value) const {
  if ((len != 4 && len != 8) || offset % len) return Access::kBadSize;
  bool ok;
  uint64_t v = read32(offset, &ok);
  if (!ok) return Access::kBadAddress;
  if (len == 8) {
    v |= static_cast<uint64_t>(read32(offset + 4, &ok)) << 32;
    if (!ok) return Access::kBadAddress;
  }
  *value = v;
  return Access::kOk;
}

DmaEngineCore::Access DmaEngineCore::write(uint64_t offset, unsigned len, uint64_t value, int* started) {
  *started = -1;
  if ((len != 4 && len != 8) || offset % len) return Access::kBadSize;
  bool ok;
  write32(offset, static_cast<uint32_t>(value), &ok, started);
  if (!ok) return Access::kBadAddress;
  if (len == 8) {
    write32(offset + 4, static_cast<uint32_t>(value >> 32), &ok, started);
    if (!ok) return Access::kBadAddress;
  }
  return Access::kOk;
}

void DmaEngineCore::complete(unsigned ch, uint32_t err, uint32_t bytes_done) {
  DmaChannelState& c = ch_[ch];
  c.bytes_done = bytes_done;
  c.status = DMA_STATUS_DONE;
  if (err != DMA_ERR_NONE) c.status |= DMA_STATUS_ERROR | (err << DMA_STATUS_ERR_SHIFT);
}

}  // namespace smmu_vp

#include "camera/camera_core.h"

#include <algorithm>
#include <cmath>

namespace smmu_vp {

namespace {
void set_lo(uint64_t& r, uint32_t x) { r = (r & ~0xFFFFFFFFull) | x; }
void set_hi(uint64_t& r, uint32_t x) { r = (r & 0xFFFFFFFFull) | (static_cast<uint64_t>(x) << 32); }
bool is_stat(uint64_t off) { return off >= CAM_STAT_FRAMES_CAPTURED && off < CAM_STAT_PROG_ERRORS + 8; }
}  // namespace

CameraCore::CameraCore(const Params& p)
    : p_(p),
      frame_ps_(1e12 / p.fps),
      line_ps_(1e12 / (p.fps * static_cast<double>(p.height + p.vblank_lines))) {}

uint32_t CameraCore::fps_milli() const { return static_cast<uint32_t>(std::llround(p_.fps * 1000.0)); }

Ps CameraCore::frame_offset(uint64_t n) const {
  return static_cast<Ps>(std::llround(static_cast<double>(n) * frame_ps_));
}

Ps CameraCore::line_offset(uint32_t y) const {
  return static_cast<Ps>(std::llround(static_cast<double>(y + 1) * line_ps_));
}

CameraCore::Access CameraCore::read(uint64_t off, unsigned len, uint64_t* value) {
  if (off >= register_block_size()) return Access::kBadAddress;
  if ((len != 4 && len != 8) || off % len) return Access::kBadSize;
  if (len == 8 && !is_stat(off)) return Access::kBadSize;  // 32-bit registers
  bool ok = true;
  uint64_t v = read32(off, &ok);
  if (len == 8) v |= static_cast<uint64_t>(read32(off + 4, &ok)) << 32;
  *value = v;
  return ok ? Access::kOk : Access::kBadAddress;
}

CameraCore::Access CameraCore::write(uint64_t off, unsigned len, uint64_t value, Effects* fx) {
  if (off >= register_block_size()) return Access::kBadAddress;
  if (len != 4 || off % 4) return Access::kBadSize;  // the statistics are read-only
  bool ok = true;
  write32(off, static_cast<uint32_t>(value), &ok, fx);
  return ok ? Access::kOk : Access::kBadAddress;
}

uint32_t CameraCore::read32(uint64_t off, bool* ok) {
  if (is_stat(off)) {
    const uint64_t s = stats_[(off - CAM_STAT_FRAMES_CAPTURED) / 8];
    return static_cast<uint32_t>(off % 8 ? s >> 32 : s);
  }
  switch (off) {
    case CAM_REG_ID: return CAM_ID_VALUE;
    case CAM_REG_CTRL: return ctrl_;
    case CAM_REG_STATUS: return streaming_ ? CAM_STATUS_STREAMING : 0u;
    case CAM_REG_ERR_STATUS: return err_status_;
    case CAM_REG_WIDTH: return p_.width;
    case CAM_REG_HEIGHT: return p_.height;
    case CAM_REG_BPP: return p_.bytes_per_pixel;
    case CAM_REG_FPS_MILLI: return fps_milli();
    case CAM_REG_LINE_BYTES: return line_bytes();
    case CAM_REG_FRAME_BYTES: return frame_bytes();
    case CAM_REG_BUF_ADDR_LO: return static_cast<uint32_t>(buf_addr_);
    case CAM_REG_BUF_ADDR_HI: return static_cast<uint32_t>(buf_addr_ >> 32);
    case CAM_REG_BUF_LEN: return buf_len_;
    case CAM_REG_BUF_ID: return 0;  // write-only
    case CAM_REG_QUEUE_LEVEL: return static_cast<uint32_t>(bufs_.size());
    case CAM_REG_QUEUE_DEPTH: return p_.queue_depth;
    case CAM_REG_DONE_POP: {
      if (done_.empty()) return CAM_DONE_EMPTY;
      last_pop_ = done_.front();
      done_.pop_front();
      return last_pop_.id | last_pop_.status;
    }
    case CAM_REG_DONE_COUNT: return static_cast<uint32_t>(done_.size());
    case CAM_REG_DONE_SEQ: return static_cast<uint32_t>(last_pop_.seq);
    case CAM_REG_DONE_TIME_LO: return static_cast<uint32_t>(last_pop_.time_ns);
    case CAM_REG_DONE_TIME_HI: return static_cast<uint32_t>(last_pop_.time_ns >> 32);
    case CAM_REG_MSI_ADDR_LO: return static_cast<uint32_t>(msi_addr_);
    case CAM_REG_MSI_ADDR_HI: return static_cast<uint32_t>(msi_addr_ >> 32);
    case CAM_REG_MSI_DATA: return msi_data_;
    default: *ok = false; return 0;
  }
}

void CameraCore::write32(uint64_t off, uint32_t v, bool* ok, Effects* fx) {
  if (is_stat(off)) return;  // read-only
  switch (off) {
    case CAM_REG_CTRL: {
      const uint32_t was = ctrl_;
      ctrl_ = v & (CAM_CTRL_EN | CAM_CTRL_IRQ_EN | CAM_CTRL_MSI_EN);
      if (!(was & CAM_CTRL_EN) && (ctrl_ & CAM_CTRL_EN)) fx->started = true;
      return;
    }
    case CAM_REG_ERR_STATUS: err_status_ &= ~v; return;
    case CAM_REG_BUF_ADDR_LO: set_lo(buf_addr_, v); return;
    case CAM_REG_BUF_ADDR_HI: set_hi(buf_addr_, v); return;
    case CAM_REG_BUF_LEN: buf_len_ = v; return;
    case CAM_REG_BUF_ID: push_buffer(v); return;
    case CAM_REG_MSI_ADDR_LO: set_lo(msi_addr_, v); return;
    case CAM_REG_MSI_ADDR_HI: set_hi(msi_addr_, v); return;
    case CAM_REG_MSI_DATA: msi_data_ = v; return;
    // Read-only registers ignore writes (DONE_POP pops on reads only).
    case CAM_REG_ID: case CAM_REG_STATUS: case CAM_REG_WIDTH: case CAM_REG_HEIGHT: case CAM_REG_BPP:
    case CAM_REG_FPS_MILLI: case CAM_REG_LINE_BYTES: case CAM_REG_FRAME_BYTES: case CAM_REG_QUEUE_LEVEL:
    case CAM_REG_QUEUE_DEPTH: case CAM_REG_DONE_POP: case CAM_REG_DONE_COUNT: case CAM_REG_DONE_SEQ:
    case CAM_REG_DONE_TIME_LO: case CAM_REG_DONE_TIME_HI:
      return;
    default: *ok = false; return;
  }
}

void CameraCore::push_buffer(uint32_t id) {
  uint32_t err = 0;
  if (bufs_.size() >= p_.queue_depth) err |= CAM_ERR_QUEUE_FULL;
  if (buf_len_ < frame_bytes()) err |= CAM_ERR_BUF_TOO_SMALL;
  if (buf_addr_ % 64) err |= CAM_ERR_BUF_ALIGN;
  if (err) {
    // Not used: one programming error per refused buffer, every reason latched.
    err_status_ |= err;
    count(CamStat::kProgErrors);
    return;
  }
  bufs_.push_back({buf_addr_, buf_len_, static_cast<uint16_t>(CAM_DONE_ID(id))});
}

CamFrame CameraCore::start_frame(Ps at) {
  CamFrame f;
  f.seq = next_seq_++;
  f.start = at;
  f.first_line = at + line_offset(0);
  f.done_at = at;
  if (bufs_.empty()) {
    count(CamStat::kFramesDropped);
    return f;
  }
  f.has_buffer = true;
  f.buf = bufs_.front();
  bufs_.pop_front();
  return f;
}

void CameraCore::line_lost(CamFrame& f) {
  count(CamStat::kLinesLost);
  f.status |= CAM_DONE_CORRUPTED;
}

void CameraCore::line_fault(CamFrame& f) {
  count(CamStat::kDmaFaults);
  err_status_ |= CAM_ERR_DMA;
  f.status |= CAM_DONE_CORRUPTED | CAM_DONE_DMA_FAULT;
}

bool CameraCore::line_resolved(CamFrame& f, Ps at) {
  ++f.lines_done;
  f.done_at = std::max(f.done_at, at);
  return f.lines_done == p_.height;
}

void CameraCore::complete_frame(const CamFrame& f) {
  count(CamStat::kFramesCaptured);
  if (f.status & CAM_DONE_CORRUPTED) count(CamStat::kFramesCorrupted);
  done_.push_back({f.buf.id, f.status, f.seq, f.first_line / kPsPerNs});
}

}  // namespace smmu_vp

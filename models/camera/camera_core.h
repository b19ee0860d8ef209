// Register file, buffer and done queues, frame bookkeeping and sensor timing
// of the camera, without SystemC: decodes register accesses (layout in
// camera_regs.h), checks and queues the buffers the driver gives, hands the
// oldest to each frame, keeps a frame's status while its lines are written or
// lost, and queues it as done. The SystemC module (camera.h) produces the
// lines, moves the data, keeps the time and raises the interrupt.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>

#include "camera/camera_regs.h"
#include "common/sim_time.h"

namespace smmu_vp {

// A buffer the driver queued.
struct CamBuffer {
  uint64_t addr = 0;
  uint32_t len = 0;
  uint16_t id = 0;  // BUF_ID's low 16 bits (CAM_DONE_ID)
};

// A captured buffer waiting for DONE_POP.
struct CamDone {
  uint16_t id = 0;
  uint32_t status = 0;  // CAM_DONE_CORRUPTED | CAM_DONE_DMA_FAULT
  uint64_t seq = 0;     // frame sequence number
  uint64_t time_ns = 0; // when its first line was produced
};

// A frame from its start until its last line is written or lost.
struct CamFrame {
  uint64_t seq = 0;
  bool has_buffer = false;  // false: dropped at its start
  CamBuffer buf;
  Ps start = 0;             // frame start
  Ps first_line = 0;        // line 0 produced
  uint32_t status = 0;      // CAM_DONE_* bits
  uint32_t lines_done = 0;  // lines written or lost
  Ps done_at = 0;           // the latest of their times
};

// Indexes of the 64-bit statistics registers (CAM_STAT_*), in register order.
enum class CamStat : unsigned {
  kFramesCaptured, kFramesDropped, kFramesCorrupted, kLinesLost, kDmaFaults, kProgErrors, kCount
};

class CameraCore {
 public:
  struct Params {
    uint32_t width = 1920;
    uint32_t height = 1080;
    uint32_t bytes_per_pixel = 2;
    double fps = 30.0;
    uint32_t vblank_lines = 45;
    uint32_t queue_depth = 8;
  };
  explicit CameraCore(const Params& p);

  static uint64_t register_block_size() { return CAM_REG_BLOCK_SIZE; }

  enum class Access { kOk, kBadAddress, kBadSize };
  // What a register write set in motion.
  struct Effects {
    bool started = false;  // CTRL.EN went 0 -> 1
  };
  // 32-bit accesses to the registers of camera_regs.h; 64-bit (or 32-bit)
  // reads of the statistics. Anything else is refused. Reading DONE_POP pops.
  Access read(uint64_t offset, unsigned len, uint64_t* value);
  Access write(uint64_t offset, unsigned len, uint64_t value, Effects* fx);

  // ---- Geometry and timing.
  uint32_t width() const { return p_.width; }
  uint32_t height() const { return p_.height; }
  uint32_t line_bytes() const { return p_.width * p_.bytes_per_pixel; }
  uint32_t frame_bytes() const { return line_bytes() * p_.height; }
  uint32_t fps_milli() const;
  // Frame n of a stream starts at its start + frame_offset(n) (1 / fps
  // apart); line y of a frame is produced line_offset(y) = (y + 1) line times
  // after the frame's start, a line time being 1 / (fps x (height + vblank)).
  Ps frame_offset(uint64_t n) const;
  Ps line_offset(uint32_t y) const;
  Ps line_time() const { return line_offset(0); }

  // ---- Control.
  uint32_t ctrl() const { return ctrl_; }
  bool enabled() const { return (ctrl_ & CAM_CTRL_EN) != 0; }
  bool msi_enabled() const { return (ctrl_ & CAM_CTRL_MSI_EN) != 0; }
  bool irq_enabled() const { return (ctrl_ & CAM_CTRL_IRQ_EN) != 0; }
  void set_streaming(bool on) { streaming_ = on; }
  bool streaming() const { return streaming_; }
  uint32_t err_status() const { return err_status_; }
  uint64_t msi_addr() const { return msi_addr_; }
  uint32_t msi_data() const { return msi_data_; }

  // ---- Queues.
  size_t queued() const { return bufs_.size(); }
  size_t done_count() const { return done_.size(); }

  // ---- Frames.
  // A frame starts at `at`: it gets the next sequence number and the oldest
  // queued buffer, or is dropped (counted) when none is queued.
  CamFrame start_frame(Ps at);
  // Line lost: the FIFO was full when it was produced.
  void line_lost(CamFrame& f);
  // A write of one of its lines was aborted.
  void line_fault(CamFrame& f);
  // One more of its lines written or lost at `at`; true when that was its last.
  bool line_resolved(CamFrame& f, Ps at);
  // The frame's buffer goes to the done queue (counted as captured, and as
  // corrupted when it is).
  void complete_frame(const CamFrame& f);
  // An MSI write was aborted.
  void msi_error() { err_status_ |= CAM_ERR_MSI; }

  void count(CamStat s, uint64_t n = 1) { stats_[static_cast<unsigned>(s)] += n; }
  uint64_t stat(CamStat s) const { return stats_[static_cast<unsigned>(s)]; }

 private:
  uint32_t read32(uint64_t offset, bool* ok);
  void write32(uint64_t offset, uint32_t v, bool* ok, Effects* fx);
  void push_buffer(uint32_t id);

  Params p_;
  double frame_ps_, line_ps_;
  uint32_t ctrl_ = 0;
  bool streaming_ = false;
  uint32_t err_status_ = 0;
  uint64_t buf_addr_ = 0;  // staged by BUF_ADDR_LO/HI and BUF_LEN, pushed by BUF_ID
  uint32_t buf_len_ = 0;
  std::deque<CamBuffer> bufs_;
  std::deque<CamDone> done_;
  CamDone last_pop_;
  uint64_t next_seq_ = 0;
  uint64_t msi_addr_ = 0;
  uint32_t msi_data_ = 0;
  std::array<uint64_t, static_cast<unsigned>(CamStat::kCount)> stats_{};
};

}  // namespace smmu_vp

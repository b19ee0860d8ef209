// Camera (docs/devices.md#camera): an image sensor streaming frames into the
// on-chip line FIFO and the capture DMA writing them into buffers the driver
// queues (camera_regs.h), through its master port (the SMMU, with its
// StreamID).
//
// Three processes, as the hardware has three independent engines:
//  - sensor: while CTRL.EN is set, frame n starts n frame times after the
//    stream started; at its start it takes the oldest queued buffer or is
//    dropped. Each of its lines is produced one line time after the one
//    before and enters the line FIFO if there is room, else it is lost (the
//    frame is corrupted). Frames start on time whatever the DMA does;
//    clearing CTRL.EN stops the stream at the next frame start.
//  - capture DMA: drains the FIFO in order, writing each line in bursts of
//    burst_bytes (never across a 4 KiB page) with up to outstanding_writes in
//    flight; a line leaves the FIFO when its last burst completes. An aborted
//    burst ends that line's write (counted; the frame is corrupted).
//  - completion: once every line of a frame is written or lost, in frame
//    order, its buffer goes to the done queue and the frame-done interrupt is
//    raised (MSI through the master port, or the wired line).
// A line costs LINE_BYTES / burst_bytes TLM transactions.
#pragma once

#include <deque>
#include <map>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "camera/camera_core.h"
#include "common/invalid_config.h"
#include "common/irq_sink.h"
#include "common/stats.h"
#include "common/tlm_time.h"
#include "common/trace.h"

namespace smmu_vp {

// Defaults: a 1080p30 sensor with 16-bit pixels (YUV 4:2:2) and the usual
// 1125-line total of 1080p timing (SMPTE 274M: 45 blanking lines).
struct CameraConfig {
  uint32_t width = 1920;            // pixels per line
  uint32_t height = 1080;           // lines per frame
  uint32_t bytes_per_pixel = 2;
  double fps = 30.0;                // frames per second
  uint32_t vblank_lines = 45;       // blanking lines per frame (no data)
  uint32_t line_fifo_lines = 4;     // lines the on-chip FIFO holds
  uint32_t burst_bytes = 256;       // DMA write burst
  unsigned outstanding_writes = 8;  // DMA writes in flight
  uint32_t queue_depth = 8;         // buffer-queue entries
  double reg_latency_ns = 50.0;     // register access
  uint32_t stream_id = 0;
  unsigned irq = 0;                 // wired frame-done line

  // The largest line FIFO a camera may have: line_fifo_lines x width x
  // bytes_per_pixel of on-chip memory (and as much host memory).
  static constexpr uint64_t kMaxFifoBytes = 64ull << 20;
  // Throws InvalidConfig naming the first field the model cannot be built
  // with (the module's constructor calls it).
  void validate() const;
};

class Camera : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Camera> regs;
  tlm_utils::simple_initiator_socket<Camera> mem;

  SC_HAS_PROCESS(Camera);
  Camera(sc_core::sc_module_name name, const CameraConfig& cfg, IrqSink* irq, StatsRegistry& stats,
         TraceSink* trace);

  static uint64_t register_block_size() { return CameraCore::register_block_size(); }
  CameraCore& core() { return core_; }
  const CameraConfig& config() const { return cfg_; }
  // End-of-run figures (the statistics registers, frame rate captured) into the stats registry.
  void finalize();

 private:
  // A line in the FIFO: produced, then written by the DMA (leave known).
  struct FifoLine {
    uint64_t seq;
    uint32_t y;
    Ps produced;
  };

  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void sensor_thread();
  void dma_thread();
  void done_thread();

  // Line y of frame seq produced at `at`: into the FIFO, or lost.
  void produce(uint64_t seq, uint32_t y, Ps at);
  // Writes the line at the FIFO's head (not yet written), from `start`.
  void write_line(const FifoLine& l, Ps start);
  // One more line of frame seq written or lost at `at`; completes frames in order.
  void resolve(uint64_t seq, Ps at);
  // One timed transaction through the master port, issued at `at`.
  Ps dma(tlm::tlm_generic_payload& trans, uint64_t addr, void* data, unsigned len, Ps at, bool* ok);
  void raise(Ps at);
  void begin_frame_slice(const CamFrame& f);
  void end_frame_slice(const CamFrame& f);

  CameraConfig cfg_;
  CameraCore core_;
  IrqSink* irq_;
  TraceSink* trace_;
  // Frames' slices: a frame may start before the previous one is done, so
  // each goes on the first row (track) with no frame in progress.
  struct FrameSlice {
    TraceSink::SliceId id;
    size_t row;
  };
  std::map<uint64_t, FrameSlice> frame_slices_;  // by seq, frames in progress
  std::vector<bool> row_busy_;
  StatsRegistry& stats_;
  tlm::tlm_generic_payload line_trans_, msi_trans_;  // each carries the StreamID extension
  sc_core::sc_event start_, dma_kick_, done_kick_;
  // The same-time order (common/tlm_time.h) of the threads' timed waits and start_'s timed notification.
  TimeRank sensor_rank_, dma_rank_, done_rank_, start_rank_;
  std::map<uint64_t, CamFrame> frames_;  // started with a buffer, not yet complete, by sequence number
  // The line FIFO: lines_[0 .. written_) are written and leave at leave_[i];
  // the rest wait for the DMA.
  std::deque<FifoLine> lines_;
  std::deque<Ps> leave_;
  size_t written_ = 0;
  Ps dma_free_ = 0;      // the DMA engine issued its previous line's last burst
  Ps last_leave_ = 0;    // lines leave in order
  std::vector<Ps> slots_;
  std::vector<uint8_t> line_buf_;
  std::deque<CamFrame> done_;  // complete, waiting for their time
  Ps last_done_ = 0;
  Ps first_start_ = 0, last_capture_ = 0;
  bool started_once_ = false;

  Counter& irqs_;
  Counter& msi_errors_;
  Histogram& fifo_lines_;
  Histogram& line_latency_;
};

}  // namespace smmu_vp

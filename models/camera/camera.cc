#include "camera/camera.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/payload.h"
#include "common/stream_id_extension.h"
#include "common/tlm_time.h"

namespace smmu_vp {

namespace {
constexpr uint64_t kPageBytes = 4096;

// The slot that frees first.
Ps& earliest(std::vector<Ps>& slots) { return *std::min_element(slots.begin(), slots.end()); }
// A thread's timed wait at its rank (common/tlm_time.h).
void wait_until(Ps at, const TimeRank& rank) {
  if (at > now_ps()) sc_core::wait(rank.until(at));
}

CameraCore::Params core_params(const CameraConfig& c) {
  CameraCore::Params p;
  p.width = c.width;
  p.height = c.height;
  p.bytes_per_pixel = c.bytes_per_pixel;
  p.fps = c.fps;
  p.vblank_lines = c.vblank_lines;
  p.queue_depth = c.queue_depth;
  return p;
}
}  // namespace

Camera::Camera(sc_core::sc_module_name name, const CameraConfig& cfg, IrqSink* irq, StatsRegistry& stats,
               TraceSink* trace)
    : sc_module(validated_name(name, cfg)),
      regs("regs"),
      mem("mem"),
      cfg_(cfg),
      core_(core_params(cfg)),
      irq_(irq),
      trace_(trace),
      stats_(stats),
      slots_(cfg.outstanding_writes, 0),
      line_buf_(core_.line_bytes()),
      irqs_(stats.counter(std::string(basename()) + ".irqs")),
      msi_errors_(stats.counter(std::string(basename()) + ".msi_errors")),
      fifo_lines_(stats.histogram(std::string(basename()) + ".line_fifo_lines", "lines", 1.0)),
      line_latency_(stats.histogram(std::string(basename()) + ".line_write_latency_ns", "ns", 1000.0)) {
  regs.register_b_transport(this, &Camera::b_transport);
  line_trans_.set_extension(new StreamIdExtension(cfg.stream_id, 0, false));  // owned by the payload
  msi_trans_.set_extension(new StreamIdExtension(cfg.stream_id, 0, false));
  SC_THREAD(sensor_thread);
  SC_THREAD(dma_thread);
  SC_THREAD(done_thread);
}

void Camera::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  delay += ps_to_sc(ns_to_ps(cfg_.reg_latency_ns));
  const unsigned len = trans.get_data_length();
  if (trans.get_byte_enable_ptr() || trans.get_streaming_width() < len || len > 8) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  CameraCore::Access a = CameraCore::Access::kOk;
  uint64_t v = 0;
  if (trans.is_read()) {
    a = core_.read(trans.get_address(), len, &v);
    if (a == CameraCore::Access::kOk) std::memcpy(trans.get_data_ptr(), &v, len);
  } else if (trans.is_write()) {
    std::memcpy(&v, trans.get_data_ptr(), len);
    CameraCore::Effects fx;
    a = core_.write(trans.get_address(), len, v, &fx);
    if (fx.started) start_.notify(start_rank_.after(delay));  // the stream starts when the write lands
  }
  switch (a) {
    case CameraCore::Access::kOk: trans.set_response_status(tlm::TLM_OK_RESPONSE); break;
    case CameraCore::Access::kBadAddress: trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE); break;
    case CameraCore::Access::kBadSize: trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE); break;
  }
}

Ps Camera::dma(tlm::tlm_generic_payload& trans, uint64_t addr, void* data, unsigned len, Ps at, bool* ok) {
  prepare_access(trans, true, addr, data, len);
  const Ps now = now_ps();
  sc_core::sc_time delay = ps_to_sc(at > now ? at - now : 0);
  mem->b_transport(trans, delay);
  *ok = trans.is_response_ok();
  return now_ps() + sc_to_ps(delay);  // the time at return: a stalled translation waits
}

// ---- Sensor

void Camera::sensor_thread() {
  for (;;) {
    while (!core_.enabled()) sc_core::wait(start_);
    core_.set_streaming(true);
    const Ps t0 = now_ps();
    if (!started_once_) first_start_ = t0;
    started_once_ = true;
    for (uint64_t n = 0;; ++n) {
      const Ps s = t0 + core_.frame_offset(n);
      wait_until(s, sensor_rank_);
      if (!core_.enabled()) break;  // stops at a frame boundary
      const CamFrame f = core_.start_frame(s);
      if (!f.has_buffer) {
        if (trace_) trace_->instant(basename(), "frame dropped", s, {{"seq", f.seq}});
        continue;
      }
      const uint64_t seq = f.seq;
      frames_.emplace(seq, f);
      if (trace_) begin_frame_slice(f);
      for (uint32_t y = 0; y < core_.height(); ++y) {
        const Ps p = s + core_.line_offset(y);
        wait_until(p, sensor_rank_);
        produce(seq, y, p);
      }
    }
    core_.set_streaming(false);
  }
}

void Camera::produce(uint64_t seq, uint32_t y, Ps at) {
  // What the DMA has written by now has left the FIFO.
  while (written_ > 0 && leave_.front() <= at) {
    lines_.pop_front();
    leave_.pop_front();
    --written_;
  }
  fifo_lines_.record(lines_.size());
  if (lines_.size() >= cfg_.line_fifo_lines) {
    core_.line_lost(frames_.at(seq));
    resolve(seq, at);
    return;
  }
  lines_.push_back({seq, y, at});
  dma_kick_.notify(sc_core::SC_ZERO_TIME);
}

// ---- Capture DMA

void Camera::dma_thread() {
  for (;;) {
    while (written_ == lines_.size()) sc_core::wait(dma_kick_);
    // In order: the oldest line not written yet, once the engine has issued
    // the previous one. The sensor only removes written lines, so it stays
    // the same line while the engine waits.
    const FifoLine l = lines_[written_];
    const Ps start = std::max(l.produced, dma_free_);
    wait_until(start, dma_rank_);
    write_line(l, start);
  }
}

void Camera::write_line(const FifoLine& l, Ps start) {
  CamFrame& f = frames_.at(l.seq);  // not complete while this line is unwritten
  const uint32_t bytes = core_.line_bytes();
  for (uint32_t x = 0; x < bytes; ++x) line_buf_[x] = cam_pattern_byte(static_cast<uint32_t>(l.seq), l.y, x);
  const uint64_t base = f.buf.addr + static_cast<uint64_t>(l.y) * bytes;
  Ps issue = start, leave = start;
  bool ok = true;
  for (uint32_t off = 0; off < bytes;) {
    // A burst never crosses a 4 KiB page (the SMMU's translation granule).
    const uint64_t a = base + off;
    const uint32_t n = static_cast<uint32_t>(
        std::min<uint64_t>({cfg_.burst_bytes, bytes - off, kPageBytes - (a & (kPageBytes - 1))}));
    Ps& slot = earliest(slots_);
    issue = std::max(issue, slot);
    const Ps done = dma(line_trans_, a, line_buf_.data() + off, n, issue, &ok);
    slot = done;
    leave = std::max(leave, done);
    if (!ok) break;  // aborted by the SMMU: the rest of the line is not written
    off += n;
  }
  dma_free_ = issue;
  leave = std::max(leave, last_leave_);  // the FIFO empties in order
  last_leave_ = leave;
  leave_.push_back(leave);
  ++written_;
  if (!ok) core_.line_fault(f);
  line_latency_.record(leave - l.produced);
  resolve(l.seq, leave);
}

// ---- Frame completion

void Camera::resolve(uint64_t seq, Ps at) {
  core_.line_resolved(frames_.at(seq), at);
  // Frames complete in order, each once all its lines are written or lost.
  while (!frames_.empty() && frames_.begin()->second.lines_done == core_.height()) {
    CamFrame g = frames_.begin()->second;
    frames_.erase(frames_.begin());
    g.done_at = std::max(g.done_at, last_done_);
    last_done_ = g.done_at;
    done_.push_back(g);
    done_kick_.notify(sc_core::SC_ZERO_TIME);
  }
}

void Camera::done_thread() {
  for (;;) {
    while (done_.empty()) sc_core::wait(done_kick_);
    wait_until(done_.front().done_at, done_rank_);
    const CamFrame f = done_.front();
    done_.pop_front();
    core_.complete_frame(f);
    last_capture_ = std::max(last_capture_, f.start + core_.frame_offset(1));  // the end of its frame period
    if (trace_) end_frame_slice(f);
    raise(f.done_at);
  }
}

void Camera::begin_frame_slice(const CamFrame& f) {
  const size_t row = static_cast<size_t>(std::find(row_busy_.begin(), row_busy_.end(), false) - row_busy_.begin());
  if (row == row_busy_.size()) row_busy_.push_back(true);
  else row_busy_[row] = true;
  const std::string track = row == 0 ? std::string(basename()) : std::string(basename()) + "." + std::to_string(row);
  frame_slices_[f.seq] = {trace_->begin(track, "frame " + std::to_string(f.seq), f.start,
                                        {{"seq", f.seq}, {"id", f.buf.id}}),
                          row};
}

void Camera::end_frame_slice(const CamFrame& f) {
  auto it = frame_slices_.find(f.seq);
  if (it == frame_slices_.end()) return;
  trace_->end(it->second.id, f.done_at, {{"status", f.status}});
  row_busy_[it->second.row] = false;
  frame_slices_.erase(it);
}

void Camera::raise(Ps at) {
  if (core_.msi_enabled()) {
    irqs_.add();
    uint32_t data = core_.msi_data();
    bool ok = true;
    dma(msi_trans_, core_.msi_addr(), &data, sizeof data, at, &ok);
    if (!ok) {
      msi_errors_.add();
      core_.msi_error();
    }
  } else if (core_.irq_enabled()) {
    irqs_.add();
    if (irq_) irq_->raise_line(cfg_.irq);
  }
}

void Camera::finalize() {
  const std::string p = std::string(basename()) + ".";
  static const char* const names[] = {"frames_captured", "frames_dropped", "frames_corrupted",
                                      "lines_lost",      "dma_faults",     "prog_errors"};
  static_assert(sizeof names / sizeof names[0] == static_cast<unsigned>(CamStat::kCount), "one name per statistic");
  for (unsigned i = 0; i < static_cast<unsigned>(CamStat::kCount); ++i) {
    Counter& c = stats_.counter(p + names[i]);
    c.add(core_.stat(static_cast<CamStat>(i)) - c.value());
  }
  // Frames captured per second, from the first frame's start to the end of the
  // last captured frame's period: fps when none is dropped.
  const uint64_t captured = core_.stat(CamStat::kFramesCaptured);
  if (captured && last_capture_ > first_start_)
    stats_.value(p + "fps_captured") = static_cast<double>(captured) * 1e12 / static_cast<double>(last_capture_ - first_start_);
}

void CameraConfig::validate() const {
  check::at_least_one(width, "width");
  check::at_least_one(height, "height");
  check::at_least_one(bytes_per_pixel, "bytes_per_pixel");
  check::rate(fps, "fps");
  check::at_least_one(line_fifo_lines, "line_fifo_lines");
  const uint64_t line = uint64_t{width} * bytes_per_pixel, fifo = line * line_fifo_lines;
  check::require(fifo <= kMaxFifoBytes, "line_fifo_lines",
                 std::to_string(line_fifo_lines) + " lines of " + std::to_string(line) + " bytes need " +
                     std::to_string(fifo) + " bytes of FIFO, more than the " + std::to_string(kMaxFifoBytes >> 20) +
                     " MiB an on-chip FIFO can have");
  check::require(burst_bytes >= 1 && burst_bytes <= 4096 && (burst_bytes & (burst_bytes - 1)) == 0, "burst_bytes",
                 "must be a power of two of at most 4096, not " + std::to_string(burst_bytes));
  check::at_least_one(outstanding_writes, "outstanding_writes");
  check::at_least_one(queue_depth, "queue_depth");
  check::time(reg_latency_ns, "reg_latency_ns");
}

}  // namespace smmu_vp

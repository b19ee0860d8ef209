#include "devices/camera_device.h"

#include <fmt/format.h>

#include "config/params.h"
#include "util/human.h"

namespace smmu_vp {

namespace {

const config::ParamTable<CameraConfig>& camera_params() {
  static const config::ParamTable<CameraConfig> t = [] {
    config::ParamTable<CameraConfig> p;
    using C = CameraConfig;
    p.add("width", &C::width, 1, 16384, "pixels", "Pixels per line (WIDTH).");
    p.add("height", &C::height, 1, 16384, "lines", "Lines per frame (HEIGHT); a buffer holds height x width x bytes_per_pixel bytes (FRAME_BYTES).");
    p.add("bytes_per_pixel", &C::bytes_per_pixel, 1, 8, "bytes", "Bytes per pixel (BPP): 2 for YUV 4:2:2 or RAW10/12 unpacked, 3 for RGB888.");
    p.add("fps", &C::fps, 0.001, 1000, "frames/s", "Frame rate: frame n of a stream starts n / fps after CTRL.EN was set.");
    p.add("vblank_lines", &C::vblank_lines, 0, 65535, "lines", "Vertical blanking lines per frame (no data): a line time is 1 / (fps x (height + vblank_lines)).");
    p.add("line_fifo_lines", &C::line_fifo_lines, 1, 1024, "lines", "Lines the on-chip FIFO between the sensor and the capture DMA holds; a line produced while it is full is lost (lines_lost) and its frame corrupted.");
    p.add("burst_bytes", &C::burst_bytes, 64, 4096, "bytes", "Largest DMA write, a power of two; a burst never crosses a 4 KiB page.");
    p.add("outstanding_writes", &C::outstanding_writes, 1, 1024, "transactions", "DMA writes in flight; when they are slow to complete, the line FIFO fills.");
    p.add("queue_depth", &C::queue_depth, 1, 1024, "buffers", "Entries of the buffer queue (QUEUE_DEPTH); a buffer queued onto a full queue is refused.");
    p.add("reg_latency_ns", &C::reg_latency_ns, 0, 1e6, "ns", "Register access latency.");
    return p;
  }();
  return t;
}

std::string camera_summary(const DeviceConfig& d, const StatsRegistry& s) {
  const std::string p = d.name + ".";
  const uint64_t captured = s.counter_value(p + "frames_captured"), dropped = s.counter_value(p + "frames_dropped");
  // A camera that never streamed says nothing.
  if (!captured && !dropped) return "";
  const double* fps = s.find_value(p + "fps_captured");
  std::string out = fmt::format(
      "  {}: {} frames captured ({:.2f} fps), {} dropped (no buffer), {} corrupted; {} lines lost, {} interrupts\n",
      d.name, captured, fps ? *fps : 0.0, dropped, s.counter_value(p + "frames_corrupted"),
      s.counter_value(p + "lines_lost"), s.counter_value(p + "irqs"));
  if (const Histogram* h = s.find_histogram(p + "line_write_latency_ns"); h && h->count())
    out += fmt::format("  {}: line write latency (produced to written) p50 {} p99 {} max {}; FIFO max {:.0f} lines\n",
                       d.name, human_ns(h->percentile(50)), human_ns(h->percentile(99)), human_ns(h->max()),
                       s.find_histogram(p + "line_fifo_lines") ? s.find_histogram(p + "line_fifo_lines")->max() : 0.0);
  const uint64_t faults = s.counter_value(p + "dma_faults"), prog = s.counter_value(p + "prog_errors"),
                 msi = s.counter_value(p + "msi_errors");
  if (faults || prog || msi)
    out += fmt::format("  {}: ERRORS: {} aborted line writes, {} refused buffers, {} failed MSIs (ERR_STATUS, "
                       "docs/devices.md#camera)\n",
                       d.name, faults, prog, msi);
  return out;
}

DeviceType camera_device_type() {
  DeviceType t;
  t.type = "camera";
  t.help = "Camera: an image sensor streaming frames through a line FIFO to a capture DMA that fills buffers from a "
           "queue (registers, queues and timing in docs/devices.md).";
  t.irq_help = "Wired frame-done interrupt (CTRL.IRQ_EN without CTRL.MSI_EN).";
  t.fields = camera_params().fields();
  t.layout = [](DeviceConfig& d) {
    d.size = Camera::register_block_size();
    d.irq_lines = 1;
    validate_device_config(d, camera_config(d));
  };
  t.create = [](const DeviceConfig& d, DeviceEnv& env) -> std::unique_ptr<PlatformDevice> {
    return std::make_unique<ModuleDevice<Camera>>(d.name.c_str(), camera_config(d), env.irq, env.stats, env.trace);
  };
  t.summary = camera_summary;
  return t;
}

}  // namespace

CameraConfig camera_config(const DeviceConfig& d) {
  CameraConfig c;
  camera_params().read(d.params, c);
  c.stream_id = d.stream_id;
  c.irq = d.irq;
  return c;
}

REGISTER_DEVICE_TYPE(camera_device_type);

}  // namespace smmu_vp

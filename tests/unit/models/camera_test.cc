// The camera's SystemC module against a plain memory and a host thread that
// plays the driver: line timing and frame completion, the captured bytes,
// dropped frames, FIFO overflow under slow writes, aborted writes, MSI,
// stopping at a frame boundary, bad programming.
// Each test elaborates its own modules: one test per process (ctest).
#include <gtest/gtest.h>

#include "bench_memory.h"

#include <cstring>
#include <functional>
#include <vector>

#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "camera/camera.h"
#include "common/payload.h"
#include "common/tlm_time.h"

namespace smmu_vp {
namespace {

constexpr uint64_t kMemBase = 0x8000'0000;
constexpr uint64_t kMemSize = 1 << 20;
constexpr uint64_t kMsiAddr = kMemBase + kMemSize - 64;

struct Memory : test::BenchMemory {
  explicit Memory(sc_core::sc_module_name n) : test::BenchMemory(n, kMemBase, kMemSize) {}
};

using Irqs = test::BenchIrqs;

double now_ns() { return sc_core::sc_time_stamp().to_seconds() * 1e9; }

// Plays the driver: register accesses through a socket, memory directly.
struct Host : test::BenchHost<Host> {
  using BenchHost::BenchHost;
  tlm::tlm_response_status try_access(bool write, uint64_t off, uint64_t* v, unsigned len) {
    return access_status(write, off, v, len);
  }
  uint64_t stat(uint64_t off) { return access(false, off, 0, 8); }
  void queue(uint64_t addr, uint32_t len, uint32_t id) {
    wr(CAM_REG_BUF_ADDR_LO, static_cast<uint32_t>(addr));
    wr(CAM_REG_BUF_ADDR_HI, static_cast<uint32_t>(addr >> 32));
    wr(CAM_REG_BUF_LEN, len);
    wr(CAM_REG_BUF_ID, id);
  }
};

struct Bench {
  Memory mem{"mem"};
  Irqs irqs;
  StatsRegistry stats;
  CameraConfig cfg;
  std::unique_ptr<Camera> cam;
  Host host{"host"};

  Bench() {
    // 64 x 16 pixels of 2 bytes at 1000 fps with 4 blanking lines: 128-byte
    // lines, 2 KiB frames, 1 ms frames, 50 us lines.
    cfg.width = 64;
    cfg.height = 16;
    cfg.fps = 1000.0;
    cfg.vblank_lines = 4;
    cfg.irq = 33;
  }
  void build() {
    cam = std::make_unique<Camera>("cam0", cfg, &irqs, stats, nullptr);
    cam->mem.bind(mem.socket);
    host.socket.bind(cam->regs);
  }
  uint64_t stat(CamStat s) { return cam->core().stat(s); }
  double frame_ns() const { return 1e9 / cfg.fps; }
  double line_ns() const { return frame_ns() / (cfg.height + cfg.vblank_lines); }
  uint32_t line_bytes() const { return cfg.width * cfg.bytes_per_pixel; }
  uint32_t frame_bytes() const { return line_bytes() * cfg.height; }
  // Lines of the buffer at addr that do not hold frame seq's pattern.
  unsigned bad_lines(uint64_t addr, uint32_t seq) {
    unsigned bad = 0;
    for (uint32_t y = 0; y < cfg.height; ++y)
      for (uint32_t x = 0; x < line_bytes(); ++x)
        if (*mem.at(addr + static_cast<uint64_t>(y) * line_bytes() + x) != cam_pattern_byte(seq, y, x)) {
          ++bad;
          break;
        }
    return bad;
  }
};

TEST(CameraModel, FrameCompletesOneFrameOfLinesAfterItsStart) {
  Bench b;
  b.build();
  const uint64_t buf = kMemBase + 0x1000;
  double t0 = 0, popped = 0;
  uint32_t pop = 0, seq = 99;
  uint64_t first_line_ns = 0;
  b.host.body = [&](Host& h) {
    EXPECT_EQ(h.rd(CAM_REG_ID), CAM_ID_VALUE);
    EXPECT_EQ(h.rd(CAM_REG_LINE_BYTES), 128u);
    EXPECT_EQ(h.rd(CAM_REG_FPS_MILLI), 1'000'000u);
    h.queue(buf, b.frame_bytes(), 42);
    h.wr(CAM_REG_CTRL, CAM_CTRL_EN | CAM_CTRL_IRQ_EN);
    t0 = now_ns();  // the write has landed: frame 0 starts now
    // The sensor starts at this picosecond too, but after the host's wait in
    // the same-time order (common/tlm_time.h): read STATUS once it has.
    sc_core::wait(1, sc_core::SC_PS);
    EXPECT_EQ(h.rd(CAM_REG_STATUS), CAM_STATUS_STREAMING);
    while (b.irqs.lines.empty()) sc_core::wait(1, sc_core::SC_US);
    popped = now_ns();
    EXPECT_EQ(h.rd(CAM_REG_DONE_COUNT), 1u);
    pop = h.rd(CAM_REG_DONE_POP);
    seq = h.rd(CAM_REG_DONE_SEQ);
    first_line_ns = h.rd(CAM_REG_DONE_TIME_LO) | static_cast<uint64_t>(h.rd(CAM_REG_DONE_TIME_HI)) << 32;
    EXPECT_EQ(h.rd(CAM_REG_DONE_POP), CAM_DONE_EMPTY);
    h.wr(CAM_REG_CTRL, 0);
  };
  sc_core::sc_start(3, sc_core::SC_MS);
  ASSERT_EQ(b.irqs.lines.size(), 1u);
  EXPECT_EQ(b.irqs.lines[0], 33u);
  EXPECT_EQ(pop, 42u);
  EXPECT_EQ(seq, 0u);
  // Line 0 is produced one line time after the frame starts (ns resolution).
  EXPECT_NEAR(static_cast<double>(first_line_ns), t0 + b.line_ns(), 1.0);
  // The last line is produced height line times after the start and written
  // with one burst of 128 bytes (50 ns of memory): done right after.
  const double last_line = t0 + b.cfg.height * b.line_ns();
  EXPECT_GE(b.irqs.times_ns[0], last_line);
  EXPECT_LE(b.irqs.times_ns[0], last_line + 100.0);
  EXPECT_LT(b.irqs.times_ns[0], t0 + b.frame_ns());
  EXPECT_GT(popped, b.irqs.times_ns[0]);
  EXPECT_EQ(b.stat(CamStat::kFramesCaptured), 1u);
  // CTRL.EN was cleared before the next frame start: no frame dropped.
  EXPECT_EQ(b.stat(CamStat::kFramesDropped), 0u);
  EXPECT_EQ(b.bad_lines(buf, 0), 0u);
  const Histogram* lat = b.stats.find_histogram("cam0.line_write_latency_ns");
  ASSERT_NE(lat, nullptr);
  EXPECT_EQ(lat->count(), 16u);
  EXPECT_NEAR(lat->max(), 50.0, 1.0);
  const Histogram* fifo = b.stats.find_histogram("cam0.line_fifo_lines");
  ASSERT_NE(fifo, nullptr);
  EXPECT_EQ(fifo->count(), 16u);
  EXPECT_EQ(fifo->max(), 0.0);  // each line written long before the next
}

TEST(CameraModel, CapturedFramesHoldThePatternInPageSafeBursts) {
  Bench b;
  b.cfg.width = 1000;  // 3000-byte lines: lines straddle pages
  b.cfg.bytes_per_pixel = 3;
  b.cfg.height = 12;
  b.cfg.burst_bytes = 512;
  b.build();
  const uint32_t frame = b.frame_bytes();
  const uint64_t bufs[3] = {kMemBase + 0x40, kMemBase + 0x10000 + 0xFC0, kMemBase + 0x20000 + 0x800};
  std::vector<uint32_t> pops, seqs;
  b.host.body = [&](Host& h) {
    for (uint32_t i = 0; i < 3; ++i) h.queue(bufs[i], frame, 100 + i);
    EXPECT_EQ(h.rd(CAM_REG_QUEUE_LEVEL), 3u);
    h.wr(CAM_REG_CTRL, CAM_CTRL_EN);
    sc_core::wait(3.5, sc_core::SC_MS);
    h.wr(CAM_REG_CTRL, 0);
    while (h.rd(CAM_REG_DONE_COUNT)) {
      pops.push_back(h.rd(CAM_REG_DONE_POP));
      seqs.push_back(h.rd(CAM_REG_DONE_SEQ));
    }
  };
  sc_core::sc_start(5, sc_core::SC_MS);
  ASSERT_EQ(pops.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(pops[i], 100 + i);
    EXPECT_EQ(seqs[i], i);
    EXPECT_EQ(b.bad_lines(bufs[i], i), 0u) << i;
  }
  EXPECT_EQ(b.mem.reads, 0u);  // the capture DMA only writes
  EXPECT_EQ(b.mem.page_crossings, 0u);
  EXPECT_LE(b.mem.largest, 512u);
  EXPECT_GE(b.mem.writes, 3u * 12u * (3000u / 512u + 1u));
  EXPECT_TRUE(b.irqs.lines.empty());  // neither IRQ_EN nor MSI_EN
  EXPECT_EQ(b.stat(CamStat::kFramesCaptured), 3u);
  EXPECT_EQ(b.stat(CamStat::kFramesDropped), 1u);  // frame 3 found the queue empty
  EXPECT_EQ(b.stat(CamStat::kFramesCorrupted) + b.stat(CamStat::kLinesLost) + b.stat(CamStat::kDmaFaults), 0u);
  b.cam->finalize();
  const double* fps = b.stats.find_value("cam0.fps_captured");
  ASSERT_NE(fps, nullptr);
  EXPECT_NEAR(*fps, 1000.0, 1.0);  // three frames in three frame periods
}

TEST(CameraModel, NoBufferQueuedDropsTheFrameWithoutAnInterrupt) {
  Bench b;
  b.build();
  uint32_t level = 9, pop = 0, seq = 0;
  b.host.body = [&](Host& h) {
    h.wr(CAM_REG_CTRL, CAM_CTRL_EN | CAM_CTRL_IRQ_EN);
    sc_core::wait(2.5, sc_core::SC_MS);  // frames 0, 1, 2 dropped
    EXPECT_EQ(h.stat(CAM_STAT_FRAMES_DROPPED), 3u);
    EXPECT_TRUE(b.irqs.lines.empty());
    EXPECT_EQ(h.rd(CAM_REG_DONE_POP), CAM_DONE_EMPTY);
    h.queue(kMemBase, b.frame_bytes(), 7);
    level = h.rd(CAM_REG_QUEUE_LEVEL);
    while (b.irqs.lines.empty()) sc_core::wait(10, sc_core::SC_US);
    pop = h.rd(CAM_REG_DONE_POP);
    seq = h.rd(CAM_REG_DONE_SEQ);
    h.wr(CAM_REG_CTRL, 0);
  };
  sc_core::sc_start(6, sc_core::SC_MS);
  EXPECT_EQ(level, 1u);
  EXPECT_EQ(pop, 7u);
  EXPECT_EQ(seq, 3u);  // the gap shows the three drops
  EXPECT_EQ(b.bad_lines(kMemBase, 3), 0u);
  EXPECT_EQ(b.irqs.lines.size(), 1u);
  b.cam->finalize();
  EXPECT_EQ(b.stats.find_counter("cam0.frames_dropped")->value(), b.stat(CamStat::kFramesDropped));
  EXPECT_EQ(b.stat(CamStat::kFramesDropped), 3u);  // CTRL.EN cleared before frame 4
  EXPECT_EQ(b.stats.find_counter("cam0.frames_captured")->value(), 1u);
  EXPECT_EQ(b.stats.find_counter("cam0.irqs")->value(), 1u);
}

TEST(CameraModel, SlowWritesOverflowTheLineFifo) {
  Bench b;
  b.cfg.line_fifo_lines = 2;
  b.cfg.outstanding_writes = 1;
  b.cfg.burst_bytes = 64;  // two bursts a line
  b.build();
  // 2 x 40 us per line against a line every 50 us: the FIFO fills.
  b.mem.write_latency_ns = 40'000;
  uint32_t pop = 0;
  b.host.body = [&](Host& h) {
    h.queue(kMemBase, b.frame_bytes(), 3);
    h.wr(CAM_REG_CTRL, CAM_CTRL_EN | CAM_CTRL_IRQ_EN);
    while (b.irqs.lines.empty()) sc_core::wait(10, sc_core::SC_US);
    pop = h.rd(CAM_REG_DONE_POP);
    h.wr(CAM_REG_CTRL, 0);
  };
  sc_core::sc_start(3, sc_core::SC_MS);
  EXPECT_EQ(pop, 3u | CAM_DONE_CORRUPTED);
  const uint64_t lost = b.stat(CamStat::kLinesLost);
  EXPECT_GT(lost, 0u);
  EXPECT_LT(lost, 16u);
  EXPECT_EQ(b.stat(CamStat::kFramesCorrupted), 1u);
  EXPECT_EQ(b.stat(CamStat::kDmaFaults), 0u);
  EXPECT_EQ(b.bad_lines(kMemBase, 0), lost);  // the lines lost were never written
  const Histogram* fifo = b.stats.find_histogram("cam0.line_fifo_lines");
  EXPECT_EQ(fifo->max(), 2.0);
  EXPECT_GE(b.stats.find_histogram("cam0.line_write_latency_ns")->max(), 80'000.0);
}

TEST(CameraModel, AbortedWriteFlagsTheFrameAndStreamingGoesOn) {
  Bench b;
  b.build();
  const uint64_t buf0 = kMemBase, buf1 = kMemBase + 0x4000;
  b.mem.fault_lo = buf0 + 5 * 128;  // line 5 of the first buffer
  b.mem.fault_hi = buf0 + 6 * 128;
  std::vector<uint32_t> pops;
  uint32_t err = 0;
  b.host.body = [&](Host& h) {
    h.queue(buf0, b.frame_bytes(), 1);
    h.queue(buf1, b.frame_bytes(), 2);
    h.wr(CAM_REG_CTRL, CAM_CTRL_EN);
    sc_core::wait(2, sc_core::SC_MS);
    h.wr(CAM_REG_CTRL, 0);
    err = h.rd(CAM_REG_ERR_STATUS);
    for (uint32_t v; (v = h.rd(CAM_REG_DONE_POP)) != CAM_DONE_EMPTY;) pops.push_back(v);
    h.wr(CAM_REG_ERR_STATUS, CAM_ERR_DMA);
    EXPECT_EQ(h.rd(CAM_REG_ERR_STATUS), 0u);
  };
  sc_core::sc_start(3, sc_core::SC_MS);
  ASSERT_EQ(pops.size(), 2u);
  EXPECT_EQ(pops[0], 1u | CAM_DONE_CORRUPTED | CAM_DONE_DMA_FAULT);
  EXPECT_EQ(pops[1], 2u);
  EXPECT_EQ(err, CAM_ERR_DMA);
  EXPECT_EQ(b.stat(CamStat::kDmaFaults), 1u);
  EXPECT_EQ(b.stat(CamStat::kFramesCorrupted), 1u);
  EXPECT_EQ(b.stat(CamStat::kFramesCaptured), 2u);
  EXPECT_EQ(b.bad_lines(buf0, 0), 1u);
  EXPECT_EQ(b.bad_lines(buf1, 1), 0u);
}

TEST(CameraModel, MsiWritesItsDataToItsAddress) {
  Bench b;
  b.build();
  b.host.body = [&](Host& h) {
    h.wr(CAM_REG_MSI_ADDR_LO, static_cast<uint32_t>(kMsiAddr));
    h.wr(CAM_REG_MSI_ADDR_HI, static_cast<uint32_t>(kMsiAddr >> 32));
    h.wr(CAM_REG_MSI_DATA, 0xCAFE'0042u);
    h.queue(kMemBase, b.frame_bytes(), 1);
    h.wr(CAM_REG_CTRL, CAM_CTRL_EN | CAM_CTRL_MSI_EN | CAM_CTRL_IRQ_EN);  // MSI takes precedence
    sc_core::wait(1.5, sc_core::SC_MS);
    // An MSI address with nothing behind it: the write is aborted and counted.
    h.wr(CAM_REG_MSI_ADDR_LO, 0x1000);
    h.wr(CAM_REG_MSI_ADDR_HI, 0);
    h.queue(kMemBase, b.frame_bytes(), 2);  // frame 1 has gone by: frame 2 takes it
    sc_core::wait(1.4, sc_core::SC_MS);
    h.wr(CAM_REG_CTRL, 0);
    EXPECT_EQ(h.rd(CAM_REG_ERR_STATUS), CAM_ERR_MSI);
  };
  sc_core::sc_start(4, sc_core::SC_MS);
  uint32_t msi = 0;
  std::memcpy(&msi, b.mem.at(kMsiAddr), sizeof msi);
  EXPECT_EQ(msi, 0xCAFE'0042u);
  EXPECT_TRUE(b.irqs.lines.empty());
  EXPECT_EQ(b.stat(CamStat::kFramesCaptured), 2u);
  EXPECT_EQ(b.stats.find_counter("cam0.irqs")->value(), 2u);
  EXPECT_EQ(b.stats.find_counter("cam0.msi_errors")->value(), 1u);
}

TEST(CameraModel, ClearingEnableStopsAtTheNextFrameBoundary) {
  Bench b;
  b.build();
  uint32_t status_mid = 0, status_after = 9;
  b.host.body = [&](Host& h) {
    for (uint32_t i = 0; i < 3; ++i) h.queue(kMemBase + i * 0x1000, b.frame_bytes(), i);
    h.wr(CAM_REG_CTRL, CAM_CTRL_EN | CAM_CTRL_IRQ_EN);
    sc_core::wait(300, sc_core::SC_US);  // in frame 0
    h.wr(CAM_REG_CTRL, CAM_CTRL_IRQ_EN);
    status_mid = h.rd(CAM_REG_STATUS);
    sc_core::wait(1, sc_core::SC_MS);
    status_after = h.rd(CAM_REG_STATUS);
  };
  sc_core::sc_start(4, sc_core::SC_MS);
  EXPECT_EQ(status_mid, CAM_STATUS_STREAMING);
  EXPECT_EQ(status_after, 0u);
  EXPECT_EQ(b.stat(CamStat::kFramesCaptured), 1u);  // frame 0 finished
  EXPECT_EQ(b.irqs.lines.size(), 1u);
  EXPECT_EQ(b.cam->core().queued(), 2u);
}

TEST(CameraModel, BadProgrammingIsRefusedAndStreamingGoesOn) {
  Bench b;
  b.cfg.queue_depth = 2;
  b.build();
  uint32_t err = 0, level = 0;
  uint64_t prog = 0;
  b.host.body = [&](Host& h) {
    uint64_t v = 0;
    EXPECT_EQ(h.try_access(false, 0x06C, &v, 4), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(h.try_access(true, 0x800, &v, 4), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(h.try_access(false, CAM_REG_CTRL, &v, 2), tlm::TLM_BURST_ERROR_RESPONSE);
    EXPECT_EQ(h.try_access(false, CAM_REG_DONE_POP, &v, 8), tlm::TLM_BURST_ERROR_RESPONSE);
    h.queue(kMemBase + 0x10, b.frame_bytes(), 1);       // misaligned
    h.queue(kMemBase, b.frame_bytes() - 64, 2);        // too small
    h.queue(kMemBase, b.frame_bytes(), 3);             // good
    h.queue(kMemBase + 0x1000, b.frame_bytes(), 4);    // good
    h.queue(kMemBase + 0x2000, b.frame_bytes(), 5);    // full
    err = h.rd(CAM_REG_ERR_STATUS);
    level = h.rd(CAM_REG_QUEUE_LEVEL);
    prog = h.stat(CAM_STAT_PROG_ERRORS);
    h.wr(CAM_REG_CTRL, CAM_CTRL_EN);
    sc_core::wait(2.5, sc_core::SC_MS);
    h.wr(CAM_REG_CTRL, 0);
  };
  sc_core::sc_start(4, sc_core::SC_MS);
  EXPECT_EQ(err, CAM_ERR_BUF_ALIGN | CAM_ERR_BUF_TOO_SMALL | CAM_ERR_QUEUE_FULL);
  EXPECT_EQ(level, 2u);
  EXPECT_EQ(prog, 3u);
  EXPECT_EQ(b.stat(CamStat::kFramesCaptured), 2u);
  EXPECT_EQ(b.cam->core().done_count(), 2u);
  EXPECT_EQ(b.bad_lines(kMemBase, 0), 0u);
  EXPECT_EQ(b.bad_lines(kMemBase + 0x1000, 1), 0u);
}

}  // namespace
}  // namespace smmu_vp

// The camera's register file, buffer and done queues, frame bookkeeping and
// sensor timing, without the SystemC kernel.
#include <gtest/gtest.h>

#include "camera/camera_core.h"

namespace smmu_vp {
namespace {

uint32_t rd(CameraCore& c, uint64_t off) {
  uint64_t v = 0;
  EXPECT_EQ(c.read(off, 4, &v), CameraCore::Access::kOk) << std::hex << off;
  return static_cast<uint32_t>(v);
}

CameraCore::Effects wr(CameraCore& c, uint64_t off, uint32_t v) {
  CameraCore::Effects fx;
  EXPECT_EQ(c.write(off, 4, v, &fx), CameraCore::Access::kOk) << std::hex << off;
  return fx;
}

CameraCore::Params small() {
  CameraCore::Params p;
  p.width = 64;
  p.height = 16;
  p.bytes_per_pixel = 2;
  p.fps = 1000.0;
  p.vblank_lines = 4;
  p.queue_depth = 4;
  return p;
}

void queue(CameraCore& c, uint64_t addr, uint32_t len, uint32_t id) {
  wr(c, CAM_REG_BUF_ADDR_LO, static_cast<uint32_t>(addr));
  wr(c, CAM_REG_BUF_ADDR_HI, static_cast<uint32_t>(addr >> 32));
  wr(c, CAM_REG_BUF_LEN, len);
  wr(c, CAM_REG_BUF_ID, id);
}

TEST(CameraCore, IdentificationAndGeometryAreReadOnly) {
  CameraCore c(CameraCore::Params{});
  EXPECT_EQ(rd(c, CAM_REG_ID), CAM_ID_VALUE);
  EXPECT_EQ(rd(c, CAM_REG_WIDTH), 1920u);
  EXPECT_EQ(rd(c, CAM_REG_HEIGHT), 1080u);
  EXPECT_EQ(rd(c, CAM_REG_BPP), 2u);
  EXPECT_EQ(rd(c, CAM_REG_FPS_MILLI), 30000u);
  EXPECT_EQ(rd(c, CAM_REG_LINE_BYTES), 3840u);
  EXPECT_EQ(rd(c, CAM_REG_FRAME_BYTES), 3840u * 1080u);
  EXPECT_EQ(rd(c, CAM_REG_QUEUE_DEPTH), 8u);
  EXPECT_EQ(rd(c, CAM_REG_QUEUE_LEVEL), 0u);
  EXPECT_EQ(rd(c, CAM_REG_STATUS), 0u);
  for (uint64_t off : {CAM_REG_ID, CAM_REG_WIDTH, CAM_REG_HEIGHT, CAM_REG_FRAME_BYTES, CAM_REG_QUEUE_DEPTH}) wr(c, off, 7);
  EXPECT_EQ(rd(c, CAM_REG_ID), CAM_ID_VALUE);
  EXPECT_EQ(rd(c, CAM_REG_WIDTH), 1920u);
  EXPECT_EQ(rd(c, CAM_REG_FRAME_BYTES), 3840u * 1080u);
  c.set_streaming(true);
  EXPECT_EQ(rd(c, CAM_REG_STATUS), CAM_STATUS_STREAMING);
}

TEST(CameraCore, UnknownOffsetsAndBadWidthsAreRefused) {
  CameraCore c(small());
  uint64_t v = 0;
  CameraCore::Effects fx;
  EXPECT_EQ(c.read(0x03C, 4, &v), CameraCore::Access::kBadAddress);  // holes
  EXPECT_EQ(c.read(0x06C, 4, &v), CameraCore::Access::kBadAddress);
  EXPECT_EQ(c.read(0x130, 4, &v), CameraCore::Access::kBadAddress);
  EXPECT_EQ(c.read(CAM_REG_BLOCK_SIZE, 4, &v), CameraCore::Access::kBadAddress);
  EXPECT_EQ(c.write(0x200, 4, 0, &fx), CameraCore::Access::kBadAddress);
  EXPECT_EQ(c.read(CAM_REG_CTRL, 2, &v), CameraCore::Access::kBadSize);
  EXPECT_EQ(c.read(CAM_REG_CTRL + 1, 4, &v), CameraCore::Access::kBadSize);
  EXPECT_EQ(c.read(CAM_REG_BUF_ADDR_LO, 8, &v), CameraCore::Access::kBadSize);  // 32-bit registers
  EXPECT_EQ(c.read(CAM_STAT_LINES_LOST + 4, 8, &v), CameraCore::Access::kBadSize);
  EXPECT_EQ(c.write(CAM_REG_CTRL, 8, 1, &fx), CameraCore::Access::kBadSize);
  EXPECT_EQ(c.write(CAM_STAT_LINES_LOST, 8, 1, &fx), CameraCore::Access::kBadSize);
  EXPECT_EQ(rd(c, CAM_REG_CTRL), 0u);
}

TEST(CameraCore, StatisticsReadAs64BitRegisters) {
  CameraCore c(small());
  c.count(CamStat::kLinesLost, 0x1'2345'6789ull);
  c.count(CamStat::kProgErrors, 3);
  uint64_t v = 0;
  ASSERT_EQ(c.read(CAM_STAT_LINES_LOST, 8, &v), CameraCore::Access::kOk);
  EXPECT_EQ(v, 0x1'2345'6789ull);
  EXPECT_EQ(rd(c, CAM_STAT_LINES_LOST), 0x2345'6789u);
  EXPECT_EQ(rd(c, CAM_STAT_LINES_LOST + 4), 1u);
  ASSERT_EQ(c.read(CAM_STAT_PROG_ERRORS, 8, &v), CameraCore::Access::kOk);
  EXPECT_EQ(v, 3u);
  wr(c, CAM_STAT_PROG_ERRORS, 0);  // read-only
  EXPECT_EQ(rd(c, CAM_STAT_PROG_ERRORS), 3u);
}

TEST(CameraCore, CtrlKeepsItsBitsAndSaysWhenStreamingStarts) {
  CameraCore c(small());
  EXPECT_TRUE(wr(c, CAM_REG_CTRL, 0xFFFF'FFFFu).started);
  EXPECT_EQ(rd(c, CAM_REG_CTRL), CAM_CTRL_EN | CAM_CTRL_IRQ_EN | CAM_CTRL_MSI_EN);
  EXPECT_FALSE(wr(c, CAM_REG_CTRL, CAM_CTRL_EN).started);  // already on
  EXPECT_TRUE(c.enabled());
  EXPECT_FALSE(c.msi_enabled());
  EXPECT_FALSE(wr(c, CAM_REG_CTRL, 0).started);
  EXPECT_FALSE(c.enabled());
  wr(c, CAM_REG_MSI_ADDR_LO, 0x1000);
  wr(c, CAM_REG_MSI_ADDR_HI, 0x2);
  wr(c, CAM_REG_MSI_DATA, 0x55);
  EXPECT_EQ(c.msi_addr(), 0x2'0000'1000ull);
  EXPECT_EQ(rd(c, CAM_REG_MSI_ADDR_HI), 2u);
  EXPECT_EQ(c.msi_data(), 0x55u);
}

TEST(CameraCore, TimingFollowsFpsHeightAndBlanking) {
  CameraCore c(small());  // 1000 fps, 16 + 4 lines: 1 ms frames, 50 us lines
  EXPECT_EQ(c.frame_offset(0), 0u);
  EXPECT_EQ(c.frame_offset(3), 3'000'000'000ull);
  EXPECT_EQ(c.line_time(), 50'000'000ull);
  EXPECT_EQ(c.line_offset(15), 800'000'000ull);
  CameraCore d(CameraCore::Params{});  // 30 fps, 1125 lines
  EXPECT_NEAR(static_cast<double>(d.line_time()), 1e12 / (30.0 * 1125.0), 1.0);
  EXPECT_NEAR(static_cast<double>(d.frame_offset(30)), 1e12, 1.0);  // no drift
}

TEST(CameraCore, BuffersQueueInOrderUpToTheDepth) {
  CameraCore c(small());
  const uint32_t frame = c.frame_bytes();
  for (uint32_t i = 0; i < 4; ++i) queue(c, 0x8000'0000ull + i * 0x1000, frame, 10 + i);
  EXPECT_EQ(rd(c, CAM_REG_QUEUE_LEVEL), 4u);
  EXPECT_EQ(rd(c, CAM_REG_ERR_STATUS), 0u);
  queue(c, 0x8001'0000ull, frame, 99);  // full
  EXPECT_EQ(rd(c, CAM_REG_QUEUE_LEVEL), 4u);
  EXPECT_EQ(rd(c, CAM_REG_ERR_STATUS), CAM_ERR_QUEUE_FULL);
  EXPECT_EQ(c.stat(CamStat::kProgErrors), 1u);
  const CamFrame f = c.start_frame(0);
  EXPECT_TRUE(f.has_buffer);
  EXPECT_EQ(f.buf.id, 10u);
  EXPECT_EQ(f.buf.addr, 0x8000'0000ull);
  EXPECT_EQ(rd(c, CAM_REG_QUEUE_LEVEL), 3u);
  wr(c, CAM_REG_ERR_STATUS, CAM_ERR_QUEUE_FULL);  // W1C
  EXPECT_EQ(rd(c, CAM_REG_ERR_STATUS), 0u);
}

TEST(CameraCore, SmallOrMisalignedBuffersAreRefused) {
  CameraCore c(small());
  const uint32_t frame = c.frame_bytes();
  queue(c, 0x8000'0000ull, frame - 1, 1);
  EXPECT_EQ(rd(c, CAM_REG_ERR_STATUS), CAM_ERR_BUF_TOO_SMALL);
  queue(c, 0x8000'0020ull, frame, 2);
  EXPECT_EQ(rd(c, CAM_REG_ERR_STATUS), CAM_ERR_BUF_TOO_SMALL | CAM_ERR_BUF_ALIGN);
  wr(c, CAM_REG_ERR_STATUS, ~0u);
  queue(c, 0x8000'0004ull, 0, 3);  // both at once: one refused buffer, both bits
  EXPECT_EQ(rd(c, CAM_REG_ERR_STATUS), CAM_ERR_BUF_TOO_SMALL | CAM_ERR_BUF_ALIGN);
  EXPECT_EQ(c.stat(CamStat::kProgErrors), 3u);
  EXPECT_EQ(rd(c, CAM_REG_QUEUE_LEVEL), 0u);
  uint64_t v = 0;
  ASSERT_EQ(c.read(CAM_STAT_PROG_ERRORS, 8, &v), CameraCore::Access::kOk);
  EXPECT_EQ(v, 3u);
  queue(c, 0x8000'0040ull, frame, 4);  // 64-byte aligned, exactly a frame
  EXPECT_EQ(rd(c, CAM_REG_QUEUE_LEVEL), 1u);
  EXPECT_EQ(rd(c, CAM_REG_BUF_LEN), frame);  // staged values stay
  EXPECT_EQ(rd(c, CAM_REG_BUF_ADDR_LO), 0x8000'0040u);
}

TEST(CameraCore, NoBufferDropsTheFrameButItsNumberIsUsed) {
  CameraCore c(small());
  const CamFrame a = c.start_frame(0);
  EXPECT_FALSE(a.has_buffer);
  EXPECT_EQ(c.stat(CamStat::kFramesDropped), 1u);
  queue(c, 0x8000'0000ull, c.frame_bytes(), 7);
  const CamFrame b = c.start_frame(c.frame_offset(1));
  EXPECT_TRUE(b.has_buffer);
  EXPECT_EQ(b.seq, a.seq + 1);  // a gap in DONE_SEQ shows the drop
  EXPECT_EQ(c.stat(CamStat::kFramesDropped), 1u);
}

TEST(CameraCore, DoneQueuePopsOldestFirstThenEmpty) {
  CameraCore c(small());
  EXPECT_EQ(rd(c, CAM_REG_DONE_POP), CAM_DONE_EMPTY);
  queue(c, 0x8000'0000ull, c.frame_bytes(), 0x1'0005);  // id keeps 16 bits
  queue(c, 0x8001'0000ull, c.frame_bytes(), 6);
  c.start_frame(0);  // takes the first buffer
  CamFrame f1 = c.start_frame(c.frame_offset(1));
  // Bookkeeping of the second frame: one line lost, then all resolved.
  c.line_lost(f1);
  const Ps s1 = c.frame_offset(1);
  EXPECT_TRUE(c.line_resolved(f1, s1 + 5000) == false);
  for (uint32_t y = 1; y < 15; ++y) EXPECT_FALSE(c.line_resolved(f1, s1 + 1000 + y));
  EXPECT_TRUE(c.line_resolved(f1, s1 + 3000));
  EXPECT_EQ(f1.done_at, s1 + 5000);  // the latest line's time
  CamFrame f0;
  f0.seq = 0;
  f0.has_buffer = true;
  f0.buf.id = 5;
  f0.first_line = 50'000'000;
  c.complete_frame(f0);
  c.complete_frame(f1);
  EXPECT_EQ(rd(c, CAM_REG_DONE_COUNT), 2u);
  EXPECT_EQ(rd(c, CAM_REG_DONE_POP), 5u);
  EXPECT_EQ(rd(c, CAM_REG_DONE_SEQ), 0u);
  EXPECT_EQ(rd(c, CAM_REG_DONE_TIME_LO), 50'000u);
  EXPECT_EQ(rd(c, CAM_REG_DONE_COUNT), 1u);
  EXPECT_EQ(rd(c, CAM_REG_DONE_POP), 6u | CAM_DONE_CORRUPTED);
  EXPECT_EQ(rd(c, CAM_REG_DONE_SEQ), 1u);
  EXPECT_EQ(rd(c, CAM_REG_DONE_TIME_LO), (c.frame_offset(1) + c.line_time()) / kPsPerNs);
  EXPECT_EQ(rd(c, CAM_REG_DONE_TIME_HI), 0u);
  EXPECT_EQ(rd(c, CAM_REG_DONE_POP), CAM_DONE_EMPTY);
  EXPECT_EQ(rd(c, CAM_REG_DONE_SEQ), 1u);  // the last pop's
  EXPECT_EQ(c.stat(CamStat::kFramesCaptured), 2u);
  EXPECT_EQ(c.stat(CamStat::kFramesCorrupted), 1u);
  EXPECT_EQ(c.stat(CamStat::kLinesLost), 1u);
}

TEST(CameraCore, AbortedLineWriteFlagsTheFrameAndLatchesErrDma) {
  CameraCore c(small());
  queue(c, 0x8000'0000ull, c.frame_bytes(), 1);
  CamFrame f = c.start_frame(0);
  c.line_fault(f);
  c.line_fault(f);
  EXPECT_EQ(f.status, CAM_DONE_CORRUPTED | CAM_DONE_DMA_FAULT);
  EXPECT_EQ(c.stat(CamStat::kDmaFaults), 2u);
  EXPECT_EQ(rd(c, CAM_REG_ERR_STATUS), CAM_ERR_DMA);
  c.msi_error();
  EXPECT_EQ(rd(c, CAM_REG_ERR_STATUS), CAM_ERR_DMA | CAM_ERR_MSI);
  wr(c, CAM_REG_ERR_STATUS, CAM_ERR_DMA);
  EXPECT_EQ(rd(c, CAM_REG_ERR_STATUS), CAM_ERR_MSI);
}

}  // namespace
}  // namespace smmu_vp

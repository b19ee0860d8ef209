// DmaEngineCore: the DMA engine's register file (docs/devices.md#dma) without
// SystemC: reset values, access rules, GO and completion semantics.
#include "dma/dma_engine_core.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace smmu_vp {
namespace {

using Access = DmaEngineCore::Access;

constexpr unsigned kChannels = 4;
constexpr uint32_t kBurst = 256;
constexpr uint32_t kStreamId = 0x10;

class DmaEngineCoreTest : public ::testing::Test {
 protected:
  uint64_t rd(uint64_t off, unsigned len = 4) {
    uint64_t v = 0xDEADBEEF;
    EXPECT_EQ(core.read(off, len, &v), Access::kOk) << "read of 0x" << std::hex << off;
    return v;
  }
  // Returns the channel a write started, or -1.
  int wr(uint64_t off, uint64_t v, unsigned len = 4) {
    int started = 1234;
    EXPECT_EQ(core.write(off, len, v, &started), Access::kOk) << "write of 0x" << std::hex << off;
    return started;
  }
  uint32_t status(unsigned ch) { return static_cast<uint32_t>(rd(DMA_CH_REG(ch, DMA_CH_STATUS))); }

  DmaEngineCore core{kChannels, kBurst, kStreamId};
};

TEST_F(DmaEngineCoreTest, GlobalRegisters) {
  EXPECT_EQ(rd(DMA_REG_ID), DMA_ID_VALUE);
  EXPECT_EQ(rd(DMA_REG_CHANNELS), kChannels);
  EXPECT_EQ(rd(DMA_REG_BURST), kBurst);
  EXPECT_EQ(core.channels(), kChannels);
  // Unassigned global registers read as zero.
  EXPECT_EQ(rd(0x00C), 0u);
  EXPECT_EQ(rd(0x0FC), 0u);
  // A 64-bit read covers two registers, low one first.
  EXPECT_EQ(rd(DMA_REG_ID, 8), DMA_ID_VALUE | (uint64_t{kChannels} << 32));
}

TEST_F(DmaEngineCoreTest, ChannelResetValues) {
  for (unsigned ch = 0; ch < kChannels; ++ch) {
    EXPECT_EQ(rd(DMA_CH_REG(ch, DMA_CH_SID)), kStreamId) << "SID resets to the configured stream id";
    for (uint32_t reg : {DMA_CH_SRC_LO, DMA_CH_SRC_HI, DMA_CH_DST_LO, DMA_CH_DST_HI, DMA_CH_LEN, DMA_CH_SSID,
                         DMA_CH_CTRL, DMA_CH_STATUS, DMA_CH_MSI_DATA, DMA_CH_MSI_ADDR_LO, DMA_CH_MSI_ADDR_HI,
                         DMA_CH_BYTES_DONE, 0x34u, 0x3Cu})
      EXPECT_EQ(rd(DMA_CH_REG(ch, reg)), 0u) << "channel " << ch << " reg 0x" << std::hex << reg;
  }
}

TEST(DmaEngineCore, RegisterBlockSize) {
  EXPECT_EQ(DmaEngineCore::register_block_size(1), 0x140u);
  EXPECT_EQ(DmaEngineCore::register_block_size(4), 0x200u);
}

TEST_F(DmaEngineCoreTest, GlobalRegistersAreReadOnly) {
  EXPECT_EQ(wr(DMA_REG_ID, 0), -1);
  EXPECT_EQ(wr(DMA_REG_CHANNELS, 99), -1);
  EXPECT_EQ(rd(DMA_REG_ID), DMA_ID_VALUE);
  EXPECT_EQ(rd(DMA_REG_CHANNELS), kChannels);
}

TEST_F(DmaEngineCoreTest, ThirtyTwoAndSixtyFourBitAccess) {
  const uint64_t src = DMA_CH_REG(1, DMA_CH_SRC_LO);
  wr(src, 0x1122334455667788ull, 8);
  EXPECT_EQ(core.channel(1).src, 0x1122334455667788ull);
  EXPECT_EQ(rd(src), 0x55667788u);
  EXPECT_EQ(rd(src + 4), 0x11223344u);
  EXPECT_EQ(rd(src, 8), 0x1122334455667788ull);
  // 32-bit halves update only their half.
  wr(DMA_CH_REG(1, DMA_CH_SRC_HI), 0xAABBCCDD);
  EXPECT_EQ(core.channel(1).src, 0xAABBCCDD55667788ull);
  wr(DMA_CH_REG(1, DMA_CH_SRC_LO), 0x01020304);
  EXPECT_EQ(core.channel(1).src, 0xAABBCCDD01020304ull);
  // A 32-bit write ignores the upper half of the value.
  wr(DMA_CH_REG(1, DMA_CH_LEN), 0xFFFFFFFF00001000ull);
  EXPECT_EQ(core.channel(1).len, 0x1000u);
  // Other channels untouched.
  EXPECT_EQ(core.channel(0).src, 0u);
  EXPECT_EQ(core.channel(2).src, 0u);
}

TEST_F(DmaEngineCoreTest, WritableRegistersReadBack) {
  const unsigned ch = 3;
  wr(DMA_CH_REG(ch, DMA_CH_DST_LO), 0x90000000ull | (0x1ull << 32), 8);
  wr(DMA_CH_REG(ch, DMA_CH_SID), 0x77);
  wr(DMA_CH_REG(ch, DMA_CH_MSI_DATA), 42);
  wr(DMA_CH_REG(ch, DMA_CH_MSI_ADDR_LO), 0x08000040ull, 8);
  EXPECT_EQ(rd(DMA_CH_REG(ch, DMA_CH_DST_LO), 8), 0x190000000ull);
  EXPECT_EQ(rd(DMA_CH_REG(ch, DMA_CH_SID)), 0x77u);
  EXPECT_EQ(rd(DMA_CH_REG(ch, DMA_CH_MSI_DATA)), 42u);
  EXPECT_EQ(rd(DMA_CH_REG(ch, DMA_CH_MSI_ADDR_LO), 8), 0x08000040u);
  EXPECT_EQ(core.channel(ch).msi_addr, 0x08000040u);
}

TEST_F(DmaEngineCoreTest, SsidKeepsOnlySsvAndSubstreamBits) {
  wr(DMA_CH_REG(0, DMA_CH_SSID), 0xFFFFFFFF);
  EXPECT_EQ(rd(DMA_CH_REG(0, DMA_CH_SSID)), DMA_SSID_SSV | DMA_SSID_MASK);
  wr(DMA_CH_REG(0, DMA_CH_SSID), 0x7FF00005);
  EXPECT_EQ(rd(DMA_CH_REG(0, DMA_CH_SSID)), 5u);
}

TEST_F(DmaEngineCoreTest, ReadOnlyAndReservedChannelRegistersIgnoreWrites) {
  core.complete(0, DMA_ERR_NONE, 512);
  wr(DMA_CH_REG(0, DMA_CH_BYTES_DONE), 7);
  wr(DMA_CH_REG(0, 0x34), 7);
  EXPECT_EQ(rd(DMA_CH_REG(0, DMA_CH_BYTES_DONE)), 512u);
  EXPECT_EQ(rd(DMA_CH_REG(0, 0x34)), 0u);
}

TEST_F(DmaEngineCoreTest, BadSizeOrAlignment) {
  uint64_t v = 0x5A5A;
  int started = 7;
  for (unsigned len : {0u, 1u, 2u, 3u, 16u}) {
    EXPECT_EQ(core.read(DMA_REG_ID, len, &v), Access::kBadSize) << len;
    EXPECT_EQ(core.write(DMA_CH_REG(0, DMA_CH_LEN), len, 1, &started), Access::kBadSize) << len;
    EXPECT_EQ(started, -1);
  }
  EXPECT_EQ(core.read(DMA_REG_CHANNELS + 2, 4, &v), Access::kBadSize);  // 32-bit, not aligned
  EXPECT_EQ(core.read(DMA_REG_CHANNELS, 8, &v), Access::kBadSize);      // 64-bit at a 4-aligned offset
  EXPECT_EQ(core.write(DMA_CH_REG(0, DMA_CH_SRC_HI), 8, 1, &started), Access::kBadSize);
  EXPECT_EQ(core.write(DMA_CH_REG(0, DMA_CH_CTRL) + 1, 4, DMA_CTRL_GO, &started), Access::kBadSize);
  EXPECT_EQ(v, 0x5A5Au);  // failed reads do not write the result
  EXPECT_EQ(core.channel(0).src, 0u);
  EXPECT_EQ(core.channel(0).len, 0u);
  EXPECT_EQ(core.channel(0).status, 0u);  // the misaligned GO did nothing
}

TEST_F(DmaEngineCoreTest, OutOfRangeOffsets) {
  const uint64_t end = DmaEngineCore::register_block_size(kChannels);
  uint64_t v = 0;
  int started = 0;
  EXPECT_EQ(core.read(end - 4, 4, &v), Access::kOk);  // last register of the last channel
  EXPECT_EQ(core.read(end - 8, 8, &v), Access::kOk);
  for (uint64_t off : {end, end + 4, end + 0x1000, uint64_t{1} << 40, UINT64_MAX - 7}) {
    EXPECT_EQ(core.read(off, 4, &v), Access::kBadAddress) << std::hex << off;
    EXPECT_EQ(core.read(off & ~7ull, 8, &v), Access::kBadAddress) << std::hex << off;
    EXPECT_EQ(core.write(off, 4, DMA_CTRL_GO, &started), Access::kBadAddress) << std::hex << off;
    EXPECT_EQ(started, -1);
  }
}

TEST_F(DmaEngineCoreTest, GoStartsIdleChannel) {
  const unsigned ch = 2;
  core.channel(ch).bytes_done = 99;  // left over from an earlier transfer
  EXPECT_EQ(wr(DMA_CH_REG(ch, DMA_CH_CTRL), DMA_CTRL_GO | DMA_CTRL_IRQ_EN), static_cast<int>(ch));
  EXPECT_EQ(status(ch), DMA_STATUS_BUSY);
  EXPECT_EQ(rd(DMA_CH_REG(ch, DMA_CH_CTRL)), DMA_CTRL_IRQ_EN);  // GO is not stored
  EXPECT_EQ(rd(DMA_CH_REG(ch, DMA_CH_BYTES_DONE)), 0u);
  EXPECT_EQ(core.go_while_busy(), 0u);
  for (unsigned other = 0; other < kChannels; ++other)
    if (other != ch) {
      EXPECT_EQ(status(other), 0u);
    }
}

TEST_F(DmaEngineCoreTest, CtrlWithoutGoDoesNotStart) {
  EXPECT_EQ(wr(DMA_CH_REG(0, DMA_CH_CTRL), DMA_CTRL_MSI_EN | DMA_CTRL_IRQ_EN), -1);
  EXPECT_EQ(status(0), 0u);
  EXPECT_EQ(rd(DMA_CH_REG(0, DMA_CH_CTRL)), DMA_CTRL_MSI_EN | DMA_CTRL_IRQ_EN);
  // Unknown CTRL bits are not stored.
  wr(DMA_CH_REG(0, DMA_CH_CTRL), 0xFFFFFFF0);
  EXPECT_EQ(rd(DMA_CH_REG(0, DMA_CH_CTRL)), 0u);
}

TEST_F(DmaEngineCoreTest, GoWhileBusyIsCountedAndIgnored) {
  ASSERT_EQ(wr(DMA_CH_REG(1, DMA_CH_CTRL), DMA_CTRL_GO), 1);
  EXPECT_EQ(wr(DMA_CH_REG(1, DMA_CH_CTRL), DMA_CTRL_GO), -1);
  EXPECT_EQ(wr(DMA_CH_REG(1, DMA_CH_CTRL), DMA_CTRL_GO), -1);
  EXPECT_EQ(core.go_while_busy(), 2u);
  EXPECT_EQ(status(1), DMA_STATUS_BUSY);
  // Another channel is independent.
  EXPECT_EQ(wr(DMA_CH_REG(0, DMA_CH_CTRL), DMA_CTRL_GO), 0);
  EXPECT_EQ(core.go_while_busy(), 2u);
}

TEST_F(DmaEngineCoreTest, SixtyFourBitWriteCanStartAChannel) {
  // SSID (low half) and CTRL (high half) in one access.
  const int started = wr(DMA_CH_REG(3, DMA_CH_SSID), (uint64_t{DMA_CTRL_GO} << 32) | 9, 8);
  EXPECT_EQ(started, 3);
  EXPECT_EQ(core.channel(3).ssid, 9u);
  EXPECT_EQ(status(3), DMA_STATUS_BUSY);
}

TEST_F(DmaEngineCoreTest, CompleteWithoutError) {
  wr(DMA_CH_REG(0, DMA_CH_CTRL), DMA_CTRL_GO);
  core.complete(0, DMA_ERR_NONE, 4096);
  EXPECT_EQ(status(0), DMA_STATUS_DONE);  // BUSY cleared
  EXPECT_EQ(rd(DMA_CH_REG(0, DMA_CH_BYTES_DONE)), 4096u);
  // Idle again: GO starts a new transfer, clearing DONE.
  EXPECT_EQ(wr(DMA_CH_REG(0, DMA_CH_CTRL), DMA_CTRL_GO), 0);
  EXPECT_EQ(status(0), DMA_STATUS_BUSY);
  EXPECT_EQ(rd(DMA_CH_REG(0, DMA_CH_BYTES_DONE)), 0u);
}

TEST_F(DmaEngineCoreTest, CompleteWithErrorCode) {
  wr(DMA_CH_REG(1, DMA_CH_CTRL), DMA_CTRL_GO);
  core.complete(1, DMA_ERR_WRITE, 768);
  const uint32_t s = status(1);
  EXPECT_EQ(s & DMA_STATUS_BUSY, 0u);
  EXPECT_NE(s & DMA_STATUS_DONE, 0u);
  EXPECT_NE(s & DMA_STATUS_ERROR, 0u);
  EXPECT_EQ((s & DMA_STATUS_ERR_MASK) >> DMA_STATUS_ERR_SHIFT, DMA_ERR_WRITE);
  EXPECT_EQ(rd(DMA_CH_REG(1, DMA_CH_BYTES_DONE)), 768u);
  // A new GO clears ERROR and the code.
  wr(DMA_CH_REG(1, DMA_CH_CTRL), DMA_CTRL_GO);
  EXPECT_EQ(status(1), DMA_STATUS_BUSY);
}

TEST_F(DmaEngineCoreTest, StatusWriteOneToClear) {
  wr(DMA_CH_REG(2, DMA_CH_CTRL), DMA_CTRL_GO);
  core.complete(2, DMA_ERR_READ, 0);
  const uint32_t err = DMA_STATUS_ERROR | (DMA_ERR_READ << DMA_STATUS_ERR_SHIFT);
  ASSERT_EQ(status(2), DMA_STATUS_DONE | err);
  wr(DMA_CH_REG(2, DMA_CH_STATUS), 0);  // writing zeros clears nothing
  EXPECT_EQ(status(2), DMA_STATUS_DONE | err);
  wr(DMA_CH_REG(2, DMA_CH_STATUS), DMA_STATUS_DONE);  // DONE only
  EXPECT_EQ(status(2), err);
  wr(DMA_CH_REG(2, DMA_CH_STATUS), DMA_STATUS_ERROR);  // ERROR takes the code with it
  EXPECT_EQ(status(2), 0u);
}

TEST_F(DmaEngineCoreTest, BusyIsReadOnly) {
  wr(DMA_CH_REG(0, DMA_CH_CTRL), DMA_CTRL_GO);
  wr(DMA_CH_REG(0, DMA_CH_STATUS), 0xFFFFFFFF);  // W1C of everything
  EXPECT_EQ(status(0), DMA_STATUS_BUSY);         // software cannot stop a transfer
  EXPECT_EQ(wr(DMA_CH_REG(0, DMA_CH_CTRL), DMA_CTRL_GO), -1);
  EXPECT_EQ(core.go_while_busy(), 1u);
  // Nor can it fake one.
  wr(DMA_CH_REG(1, DMA_CH_STATUS), DMA_STATUS_BUSY);
  EXPECT_EQ(status(1), 0u);
}

}  // namespace
}  // namespace smmu_vp

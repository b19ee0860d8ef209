// The NIC's register file, ring bookkeeping, interrupt moderation, RSS and
// traffic generator, without the SystemC kernel.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "nic/nic_core.h"
#include "nic/nic_traffic.h"

namespace smmu_vp {
namespace {

uint32_t rd(const NicCore& c, uint64_t off) {
  uint64_t v = 0;
  EXPECT_EQ(c.read(off, 4, &v), NicCore::Access::kOk) << std::hex << off;
  return static_cast<uint32_t>(v);
}

NicCore::Effects wr(NicCore& c, uint64_t off, uint32_t v) {
  NicCore::Effects fx;
  EXPECT_EQ(c.write(off, 4, v, &fx), NicCore::Access::kOk) << std::hex << off;
  return fx;
}

void enable_rx(NicCore& c, unsigned q, uint64_t base, uint32_t size) {
  wr(c, NIC_Q_REG(q, NIC_Q_RX_BASE_LO), static_cast<uint32_t>(base));
  wr(c, NIC_Q_REG(q, NIC_Q_RX_BASE_HI), static_cast<uint32_t>(base >> 32));
  wr(c, NIC_Q_REG(q, NIC_Q_RX_SIZE), size);
  wr(c, NIC_Q_REG(q, NIC_Q_CTRL), rd(c, NIC_Q_REG(q, NIC_Q_CTRL)) | NIC_Q_CTRL_RX_EN);
}

TEST(NicCore, IdentificationIsReadOnly) {
  NicCore c(4, 100000, 1514, 8);
  EXPECT_EQ(rd(c, NIC_REG_ID), NIC_ID_VALUE);
  EXPECT_EQ(rd(c, NIC_REG_QUEUES), 4u);
  EXPECT_EQ(rd(c, NIC_REG_LINK_MBPS), 100000u);
  EXPECT_EQ(rd(c, NIC_REG_MAX_FRAME), 1514u);
  EXPECT_EQ(rd(c, NIC_REG_DESC_BATCH), 8u);
  EXPECT_EQ(rd(c, NIC_REG_STATUS) & NIC_STATUS_LINK_UP, NIC_STATUS_LINK_UP);
  wr(c, NIC_REG_ID, 0);
  wr(c, NIC_STAT_RX_PACKETS, 5);
  EXPECT_EQ(rd(c, NIC_REG_ID), NIC_ID_VALUE);
  EXPECT_EQ(rd(c, NIC_STAT_RX_PACKETS), 0u);
}

TEST(NicCore, AccessesOutsideTheBlockOrMisalignedAreRefused) {
  NicCore c(2, 100000, 1514, 8);
  uint64_t v;
  NicCore::Effects fx;
  EXPECT_EQ(c.read(NicCore::register_block_size(2), 4, &v), NicCore::Access::kBadAddress);
  EXPECT_EQ(c.read(NIC_Q_REG(3, 0), 4, &v), NicCore::Access::kBadAddress);  // queue 3 of 2 (same page)
  EXPECT_EQ(c.read(NIC_REG_QUEUES + 1, 4, &v), NicCore::Access::kBadSize);
  EXPECT_EQ(c.write(NIC_REG_CTRL, 2, 1, &fx), NicCore::Access::kBadSize);
}

TEST(NicCore, StatisticsReadAs64BitRegisters) {
  NicCore c(1, 100000, 1514, 8);
  c.count(NicStat::kRxBytes, 0x1'2345'6789ull);
  uint64_t v = 0;
  ASSERT_EQ(c.read(NIC_STAT_RX_BYTES, 8, &v), NicCore::Access::kOk);
  EXPECT_EQ(v, 0x1'2345'6789ull);
  EXPECT_EQ(rd(c, NIC_STAT_RX_BYTES + 4), 1u);
}

TEST(NicCore, EnableLatchesTheRingAndResetsPointers) {
  NicCore c(2, 100000, 1514, 8);
  enable_rx(c, 1, 0x8000'1000, 64);
  const NicRing& r = c.queue(1).rx;
  EXPECT_TRUE(r.enabled);
  EXPECT_EQ(r.base, 0x8000'1000u);
  EXPECT_EQ(r.size, 64u);
  wr(c, NIC_Q_REG(1, NIC_Q_RX_TAIL), 10);
  EXPECT_EQ(r.posted(), 10u);
  EXPECT_EQ(rd(c, NIC_Q_REG(1, NIC_Q_RX_TAIL)), 10u);
  // Reprogramming the base changes nothing until the next enable.
  wr(c, NIC_Q_REG(1, NIC_Q_RX_BASE_LO), 0x2000);
  EXPECT_EQ(r.base, 0x8000'1000u);
  EXPECT_EQ(c.rss_queue(7), 1);
}

TEST(NicCore, RingSizeNotAPowerOfTwoIsAnErrorAndTheRingStaysOff) {
  NicCore c(2, 100000, 1514, 8);
  for (uint32_t bad : {0u, 1u, 48u, NIC_RING_MAX * 2}) {
    enable_rx(c, 0, 0x8000'0000, bad);
    EXPECT_FALSE(c.queue(0).rx.enabled) << bad;
    EXPECT_EQ(rd(c, NIC_Q_REG(0, NIC_Q_CTRL)) & NIC_Q_CTRL_RX_EN, 0u) << bad;
    EXPECT_NE(rd(c, NIC_Q_REG(0, NIC_Q_ERR)) & NIC_ERR_RING_SIZE, 0u) << bad;
  }
  EXPECT_EQ(c.stat(NicStat::kProgErrors), 4u);
  EXPECT_NE(rd(c, NIC_REG_ERR_STATUS) & NIC_ERR_RING_SIZE, 0u);
  EXPECT_EQ(rd(c, NIC_REG_ERR_QUEUE), 0u);
  wr(c, NIC_REG_ERR_STATUS, NIC_ERR_RING_SIZE);  // W1C
  EXPECT_EQ(rd(c, NIC_REG_ERR_STATUS), 0u);
}

TEST(NicCore, MisalignedRingBaseIsAnError) {
  NicCore c(1, 100000, 1514, 8);
  enable_rx(c, 0, 0x8000'0010, 16);
  EXPECT_FALSE(c.queue(0).rx.enabled);
  EXPECT_NE(rd(c, NIC_Q_REG(0, NIC_Q_ERR)) & NIC_ERR_RING_ALIGN, 0u);
}

TEST(NicCore, DoorbellBeyondTheRingOrOnADisabledRingIsRefused) {
  NicCore c(1, 100000, 1514, 8);
  wr(c, NIC_Q_REG(0, NIC_Q_RX_TAIL), 1);  // disabled
  EXPECT_NE(rd(c, NIC_Q_REG(0, NIC_Q_ERR)) & NIC_ERR_DOORBELL, 0u);
  wr(c, NIC_Q_REG(0, NIC_Q_ERR), ~0u);
  enable_rx(c, 0, 0x8000'0000, 16);
  wr(c, NIC_Q_REG(0, NIC_Q_RX_TAIL), 5);
  wr(c, NIC_Q_REG(0, NIC_Q_RX_TAIL), 16);  // beyond
  EXPECT_NE(rd(c, NIC_Q_REG(0, NIC_Q_ERR)) & NIC_ERR_DOORBELL, 0u);
  EXPECT_EQ(c.queue(0).rx.tail, 5u);
  EXPECT_TRUE(c.queue(0).rx.enabled);  // a refused doorbell does not stop the ring
  EXPECT_EQ(c.stat(NicStat::kProgErrors), 2u);
}

TEST(NicCore, DoorbellCannotTakeBackFetchedDescriptors) {
  NicCore c(1, 100000, 1514, 8);
  enable_rx(c, 0, 0x8000'0000, 16);
  wr(c, NIC_Q_REG(0, NIC_Q_RX_TAIL), 8);
  c.queue(0).rx.fetched = 6;
  wr(c, NIC_Q_REG(0, NIC_Q_RX_TAIL), 4);
  EXPECT_EQ(c.queue(0).rx.tail, 8u);
  wr(c, NIC_Q_REG(0, NIC_Q_RX_TAIL), 12);
  EXPECT_EQ(c.queue(0).rx.tail, 12u);
  EXPECT_EQ(c.queue(0).rx.unfetched(), 6u);
}

TEST(NicCore, RingIndexesWrap) {
  NicRing r;
  r.size = 8;
  r.head = 6;
  r.tail = 2;
  EXPECT_EQ(r.posted(), 4u);
  r.fetched = 3;
  EXPECT_EQ(r.fetch_index(), 1u);
  EXPECT_EQ(r.unfetched(), 1u);
}

TEST(NicCore, TxDoorbellAndRearmAreReportedAsEffects) {
  NicCore c(1, 100000, 1514, 8);
  wr(c, NIC_Q_REG(0, NIC_Q_TX_SIZE), 8);
  EXPECT_TRUE(wr(c, NIC_Q_REG(0, NIC_Q_CTRL), NIC_Q_CTRL_TX_EN).tx_doorbell);
  EXPECT_TRUE(wr(c, NIC_Q_REG(0, NIC_Q_TX_TAIL), 3).tx_doorbell);
  EXPECT_TRUE(wr(c, NIC_REG_CTRL, NIC_CTRL_RX_EN).rx_started);
  EXPECT_FALSE(wr(c, NIC_REG_CTRL, NIC_CTRL_RX_EN).rx_started);  // no edge
  EXPECT_EQ(rd(c, NIC_Q_REG(0, NIC_Q_IRQ_MASK)), 1u);             // masked out of reset
  EXPECT_TRUE(wr(c, NIC_Q_REG(0, NIC_Q_IRQ_MASK), 0).irq_rearmed);
  EXPECT_FALSE(wr(c, NIC_Q_REG(0, NIC_Q_IRQ_MASK), 0).irq_rearmed);
}

TEST(NicCore, ModerationByFramesAndTime) {
  NicCore c(1, 100000, 1514, 8);
  wr(c, NIC_Q_REG(0, NIC_Q_CTRL), NIC_Q_CTRL_MSI_EN);
  wr(c, NIC_Q_REG(0, NIC_Q_IRQ_MASK), 0);
  // Neither trigger: every completion is signalled.
  EXPECT_EQ(c.irq_due(0), NicCore::kNever);
  c.complete(0, 1000);
  EXPECT_EQ(c.irq_due(0), 1000u);
  c.irq_raised(0);
  EXPECT_EQ(c.irq_due(0), NicCore::kNever);  // masked by raising
  wr(c, NIC_Q_REG(0, NIC_Q_IRQ_MASK), 0);
  // 4 frames or 8 us, whichever first.
  wr(c, NIC_Q_REG(0, NIC_Q_COAL_FRAMES), 4);
  wr(c, NIC_Q_REG(0, NIC_Q_COAL_USECS), 8);
  c.complete(0, 5000);
  EXPECT_EQ(c.irq_due(0), 5000u + 8'000'000u);
  c.complete(0, 6000);
  c.complete(0, 7000);
  EXPECT_EQ(c.irq_due(0), 5000u + 8'000'000u);
  c.complete(0, 8000);
  EXPECT_EQ(c.irq_due(0), 5000u);  // the fourth frame: due at once
  c.irq_raised(0);
  // Masked: nothing is due however much completes, until re-armed.
  for (int i = 0; i < 10; ++i) c.complete(0, 10000);
  EXPECT_EQ(c.irq_due(0), NicCore::kNever);
  wr(c, NIC_Q_REG(0, NIC_Q_IRQ_MASK), 0);
  EXPECT_EQ(c.irq_due(0), 10000u);
}

TEST(NicCore, NoInterruptWithoutAVector) {
  NicCore c(1, 100000, 1514, 8);
  wr(c, NIC_Q_REG(0, NIC_Q_IRQ_MASK), 0);
  c.complete(0, 1);
  EXPECT_EQ(c.irq_due(0), NicCore::kNever);
  wr(c, NIC_Q_REG(0, NIC_Q_CTRL), NIC_Q_CTRL_IRQ_EN);
  EXPECT_EQ(c.irq_due(0), 1u);
}

TEST(NicCore, RssSpreadsFlowsOverEnabledQueuesOnly) {
  NicCore c(8, 100000, 1514, 8);
  EXPECT_EQ(c.rss_queue(1), -1);
  for (unsigned q : {1u, 3u, 4u, 6u}) enable_rx(c, q, 0x8000'0000 + q * 0x1000, 16);
  std::vector<unsigned> hits(8, 0);
  for (uint32_t flow = 0; flow < 4096; ++flow) {
    const int q = c.rss_queue(flow);
    ASSERT_GE(q, 0);
    ++hits[static_cast<unsigned>(q)];
    EXPECT_EQ(c.rss_queue(flow), q);  // a flow stays on its queue
  }
  for (unsigned q : {0u, 2u, 5u, 7u}) EXPECT_EQ(hits[q], 0u);
  for (unsigned q : {1u, 3u, 4u, 6u}) EXPECT_NEAR(hits[q], 1024.0, 200.0) << q;
}

TEST(NicTraffic, FramesArriveAtLineRate) {
  RxTrafficGenerator::Params p;
  p.link_gbps = 100;
  p.frame_bytes = 1514;
  RxTrafficGenerator g(p);
  g.start(1000);
  RxFrame a = g.next(), b = g.next();
  EXPECT_EQ(a.first_byte, 1000u);
  // 1514 + 24 bytes of framing at 12.5 bytes/ns: 123.04 ns apart.
  EXPECT_EQ(b.first_byte - a.first_byte, 123040u);
  EXPECT_GT(a.last_byte, a.first_byte);
  EXPECT_LT(a.last_byte, b.first_byte);
  EXPECT_EQ(a.bytes, 1514u);
  // 100 frames cannot take less than 100 wire times: never above line rate.
  for (int i = 0; i < 98; ++i) b = g.next();
  EXPECT_GE(b.first_byte + wire_time_ps(1514, 100) - 1000, 100 * wire_time_ps(1514, 100));
}

TEST(NicTraffic, LowerLoadStretchesTheGaps) {
  RxTrafficGenerator::Params p;
  p.load_percent = 25;
  RxTrafficGenerator g(p);
  g.start(0);
  const RxFrame a = g.next(), b = g.next();
  EXPECT_EQ(b.first_byte - a.first_byte, 4 * wire_time_ps(1514, 100));
}

TEST(NicTraffic, FlowsRoundRobinWithSequenceNumbersPerFlow) {
  RxTrafficGenerator::Params p;
  p.flows = 3;
  RxTrafficGenerator g(p);
  g.start(0);
  for (uint32_t i = 0; i < 9; ++i) {
    const RxFrame f = g.next();
    EXPECT_EQ(f.flow, i % 3);
    EXPECT_EQ(f.seq, i / 3);
  }
}

TEST(NicTraffic, ImixCarriesTheThreeSizes) {
  RxTrafficGenerator::Params p;
  p.mix = FrameMix::kImix;
  RxTrafficGenerator g(p);
  g.start(0);
  std::multiset<uint32_t> sizes;
  for (int i = 0; i < 12; ++i) sizes.insert(g.next().bytes);
  EXPECT_EQ(sizes.count(60), 7u);
  EXPECT_EQ(sizes.count(590), 4u);
  EXPECT_EQ(sizes.count(1514), 1u);
}

TEST(NicTraffic, FrameContentFollowsTheSharedLayout) {
  RxFrame f;
  f.bytes = 200;
  f.flow = 5;
  f.seq = 9;
  f.first_byte = 7'000'000;
  std::vector<uint8_t> buf(f.bytes);
  RxTrafficGenerator::fill(f, buf.data());
  EXPECT_EQ(buf[12], NIC_FRAME_ETHERTYPE >> 8);
  nic_frame_hdr h;
  std::memcpy(&h, buf.data() + NIC_FRAME_HDR_OFFSET, sizeof h);
  EXPECT_EQ(h.flow, 5u);
  EXPECT_EQ(h.seq, 9u);
  EXPECT_EQ(h.wire_ns, 7000u);
  for (uint32_t i = NIC_FRAME_PAYLOAD_OFFSET; i < f.bytes; ++i) ASSERT_EQ(buf[i], nic_frame_byte(5, 9, i)) << i;
}

// The word-at-a-time fill and check (nic_regs.h) against the byte
// definition: every length up to past a 256-byte block, flows and sequence
// numbers whose products wrap, and a corrupt byte at every position found.
TEST(NicTraffic, PayloadFillAndCheckFollowTheByteDefinition) {
  const uint32_t kFlows[] = {0, 5, 0xFFFFFFFFu};
  const uint32_t kSeqs[] = {0, 9, 0x89ABCDEFu};
  for (uint32_t flow : kFlows) {
    for (uint32_t seq : kSeqs) {
      for (uint32_t len = 0; len <= 600; ++len) {
        std::vector<uint8_t> buf(len + 1, 0xA5);
        nic_frame_fill_payload(buf.data(), len, flow, seq);
        for (uint32_t i = 0; i <= len; ++i) {
          const uint8_t want = i >= NIC_FRAME_PAYLOAD_OFFSET && i < len ? nic_frame_byte(flow, seq, i) : 0xA5;
          ASSERT_EQ(buf[i], want) << "flow " << flow << " seq " << seq << " len " << len << " byte " << i;
        }
        ASSERT_TRUE(nic_frame_payload_ok(buf.data(), len, flow, seq)) << len;
        if (len % 37 != 0) continue;  // corrupting every byte of every length is slow
        for (uint32_t i = NIC_FRAME_PAYLOAD_OFFSET; i < len; ++i) {
          buf[i] ^= 0x10;
          ASSERT_FALSE(nic_frame_payload_ok(buf.data(), len, flow, seq)) << "len " << len << " byte " << i;
          buf[i] ^= 0x10;
        }
      }
    }
  }
  std::vector<uint8_t> frame(1518);
  nic_frame_fill_payload(frame.data(), 1518, 7, 3);
  EXPECT_FALSE(nic_frame_payload_ok(frame.data(), 1518, 7, 4));  // another frame's payload
  EXPECT_FALSE(nic_frame_payload_ok(frame.data(), 1518, 8, 3));
}

}  // namespace
}  // namespace smmu_vp

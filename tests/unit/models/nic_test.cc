// The NIC's SystemC module against a plain memory and a host thread that
// plays the driver: frames land intact, descriptors are written back, ring
// wrap, the three drop causes, moderation, TX at line rate, bad programming.
// Each test elaborates its own modules: one test per process (ctest).
#include <gtest/gtest.h>

#include "bench_memory.h"

#include <cstring>
#include <functional>
#include <vector>

#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "common/payload.h"
#include "common/tlm_time.h"
#include "nic/nic.h"

namespace smmu_vp {
namespace {

constexpr uint64_t kMemBase = 0x8000'0000;
constexpr uint64_t kMemSize = 4 << 20;
constexpr uint64_t kRing = kMemBase;             // descriptor rings
constexpr uint64_t kBufs = kMemBase + (1 << 20);  // 2 KiB buffers

struct Memory : test::BenchMemory {
  explicit Memory(sc_core::sc_module_name n) : test::BenchMemory(n, kMemBase, kMemSize) {}
  nic_desc& desc(uint64_t ring, uint32_t i) { return *reinterpret_cast<nic_desc*>(at(ring + i * NIC_DESC_BYTES)); }
};

using Irqs = test::BenchIrqs;

// Plays the driver: register accesses through a socket, memory directly.
struct Host : test::BenchHost<Host> {
  using BenchHost::BenchHost;
};

struct Bench {
  Memory mem{"mem"};
  Irqs irqs;
  StatsRegistry stats;
  NicConfig cfg;
  std::unique_ptr<Nic> nic;
  Host host{"host"};

  void build() {
    nic = std::make_unique<Nic>("nic0", cfg, &irqs, stats, nullptr);
    nic->mem.bind(mem.socket);
    host.socket.bind(nic->regs);
  }
  uint64_t stat(NicStat s) { return nic->core().stat(s); }
};

uint64_t buffer(uint32_t q, uint32_t i) { return kBufs + (q * 64 + i) * 2048ull; }

void setup_rx_ring(Host& h, Memory& m, unsigned q, uint32_t size, uint32_t post) {
  const uint64_t ring = kRing + q * 0x10000;
  for (uint32_t i = 0; i < size; ++i) {
    nic_desc& d = m.desc(ring, i);
    std::memset(&d, 0, sizeof d);
    d.addr = buffer(q, i);
    d.len = 2048;
  }
  h.wr(NIC_Q_REG(q, NIC_Q_RX_BASE_LO), static_cast<uint32_t>(ring));
  h.wr(NIC_Q_REG(q, NIC_Q_RX_BASE_HI), static_cast<uint32_t>(ring >> 32));
  h.wr(NIC_Q_REG(q, NIC_Q_RX_SIZE), size);
  h.wr(NIC_Q_REG(q, NIC_Q_CTRL), NIC_Q_CTRL_RX_EN | NIC_Q_CTRL_IRQ_EN);
  h.wr(NIC_Q_REG(q, NIC_Q_RX_TAIL), post);
}

// A polling receiver: checks each completed frame and gives the buffer back.
struct Receiver {
  uint32_t next = 0, got = 0, bad = 0, errors = 0;
  uint64_t last_ts = 0;
  void poll(Host& h, Memory& m, unsigned q, uint32_t size) {
    const uint64_t ring = kRing + q * 0x10000;
    bool any = false;
    for (;;) {
      nic_desc& d = m.desc(ring, next);
      if (!(d.wb_status & NIC_DESC_DD)) break;
      if (d.wb_status & ~NIC_DESC_DD) {
        ++errors;
      } else {
        ++got;
        const uint8_t* f = m.at(d.addr);
        nic_frame_hdr hdr;
        std::memcpy(&hdr, f + NIC_FRAME_HDR_OFFSET, sizeof hdr);
        for (uint32_t i = NIC_FRAME_PAYLOAD_OFFSET; i < d.wb_len; ++i)
          if (f[i] != nic_frame_byte(hdr.flow, hdr.seq, i)) {
            ++bad;
            break;
          }
        if (d.wb_timestamp_ns < last_ts || d.wb_timestamp_ns < hdr.wire_ns) ++bad;
        last_ts = d.wb_timestamp_ns;
      }
      d.wb_status = 0;
      d.len = 2048;
      next = (next + 1) % size;
      any = true;
    }
    // Everything but one slot posted again.
    if (any) h.wr(NIC_Q_REG(q, NIC_Q_RX_TAIL), (next + size - 1) % size);
  }
};

TEST(NicModel, ReceivedFramesLandIntactThroughWrappingRings) {
  Bench b;
  b.cfg.queues = 2;
  b.cfg.rx_flows = 8;
  b.build();
  Receiver rx[2];
  double started_ns = 0;
  b.host.body = [&](Host& h) {
    for (unsigned q = 0; q < 2; ++q) setup_rx_ring(h, b.mem, q, 16, 15);
    h.wr(NIC_REG_CTRL, NIC_CTRL_RX_EN);
    started_ns = sc_core::sc_time_stamp().to_seconds() * 1e9;
    while (sc_core::sc_time_stamp() < sc_core::sc_time(20, sc_core::SC_US)) {
      sc_core::wait(200, sc_core::SC_NS);
      for (unsigned q = 0; q < 2; ++q) rx[q].poll(h, b.mem, q, 16);
    }
    h.wr(NIC_REG_CTRL, 0);
  };
  sc_core::sc_start(21, sc_core::SC_US);
  const uint64_t offered = b.stats.find_counter("nic0.rx_offered")->value();
  // At 100 Gbit/s a 1514-byte frame takes 123.04 ns of wire.
  EXPECT_NEAR(static_cast<double>(offered), (20000.0 - started_ns) / 123.04, 2);
  EXPECT_EQ(b.stat(NicStat::kRxPackets), offered);
  EXPECT_EQ(b.stat(NicStat::kRxNoBuffer) + b.stat(NicStat::kRxFifoOverflow) + b.stat(NicStat::kRxDmaFault), 0u);
  EXPECT_EQ(b.stat(NicStat::kRxBytes), offered * 1514);
  EXPECT_GT(rx[0].got, 16u);  // both 16-entry rings wrapped
  EXPECT_GT(rx[1].got, 16u);
  EXPECT_GE(rx[0].got + rx[1].got + 32, offered);  // all but what the rings still held
  EXPECT_EQ(rx[0].bad + rx[1].bad, 0u);
  EXPECT_EQ(rx[0].errors + rx[1].errors, 0u);
  // Descriptors come in batches: far fewer reads than frames.
  EXPECT_LT(b.mem.reads, offered / 2);
}

TEST(NicModel, NoPostedBufferDropsAsNoBuffer) {
  Bench b;
  b.cfg.queues = 1;
  b.build();
  b.host.body = [&](Host& h) {
    setup_rx_ring(h, b.mem, 0, 16, 0);
    h.wr(NIC_REG_CTRL, NIC_CTRL_RX_EN);
    sc_core::wait(5, sc_core::SC_US);
    EXPECT_GT(h.access(false, NIC_STAT_RX_NO_BUFFER, 0, 8), 30u);  // visible to the driver
    h.wr(NIC_REG_CTRL, 0);
  };
  sc_core::sc_start(6, sc_core::SC_US);
  const uint64_t offered = b.stats.find_counter("nic0.rx_offered")->value();
  EXPECT_GT(offered, 30u);
  EXPECT_EQ(b.stat(NicStat::kRxNoBuffer), offered);
  EXPECT_EQ(b.stat(NicStat::kRxPackets), 0u);
}

TEST(NicModel, SlowDmaWritesOverflowTheFifo) {
  Bench b;
  b.cfg.queues = 1;
  b.cfg.rx_fifo_bytes = 16 * 1024;
  b.cfg.outstanding_writes = 2;
  b.build();
  b.mem.write_latency_ns = 2000;  // as if every write missed in the TLB and walked slowly
  Receiver rx;
  b.host.body = [&](Host& h) {
    setup_rx_ring(h, b.mem, 0, 64, 63);
    h.wr(NIC_REG_CTRL, NIC_CTRL_RX_EN);
    while (sc_core::sc_time_stamp() < sc_core::sc_time(30, sc_core::SC_US)) {
      sc_core::wait(500, sc_core::SC_NS);
      rx.poll(h, b.mem, 0, 64);
    }
    h.wr(NIC_REG_CTRL, 0);
  };
  sc_core::sc_start(40, sc_core::SC_US);
  EXPECT_GT(b.stat(NicStat::kRxFifoOverflow), 0u);
  EXPECT_GT(b.stat(NicStat::kRxPackets), 0u);
  EXPECT_EQ(b.stat(NicStat::kRxNoBuffer), 0u);
  const Histogram* fifo = b.stats.find_histogram("nic0.rx_fifo_bytes");
  ASSERT_NE(fifo, nullptr);
  EXPECT_GT(fifo->max(), 12 * 1024.0);
  EXPECT_EQ(rx.bad, 0u);
}

TEST(NicModel, AbortedPayloadWriteDropsTheFrameAndFlagsTheDescriptor) {
  Bench b;
  b.cfg.queues = 1;
  b.build();
  b.mem.fault_lo = buffer(0, 2);
  b.mem.fault_hi = buffer(0, 2) + 2048;
  b.host.body = [&](Host& h) {
    setup_rx_ring(h, b.mem, 0, 16, 8);
    h.wr(NIC_REG_CTRL, NIC_CTRL_RX_EN);
    sc_core::wait(3, sc_core::SC_US);
    h.wr(NIC_REG_CTRL, 0);
    EXPECT_NE(h.rd(NIC_Q_REG(0, NIC_Q_ERR)) & NIC_ERR_DMA, 0u);
    EXPECT_NE(h.rd(NIC_REG_ERR_STATUS) & NIC_ERR_DMA, 0u);
  };
  sc_core::sc_start(4, sc_core::SC_US);
  EXPECT_EQ(b.stat(NicStat::kRxDmaFault), 1u);
  EXPECT_EQ(b.stat(NicStat::kRxPackets), 7u);
  EXPECT_EQ(b.stat(NicStat::kRxNoBuffer), b.stats.find_counter("nic0.rx_offered")->value() - 8);
  const nic_desc& d = b.mem.desc(kRing, 2);
  EXPECT_EQ(d.wb_status, NIC_DESC_DD | NIC_DESC_ERR_DMA);
  EXPECT_EQ(d.wb_len, 0u);
  EXPECT_EQ(b.mem.desc(kRing, 3).wb_status, NIC_DESC_DD);
}

TEST(NicModel, BufferTooSmallIsRefused) {
  Bench b;
  b.cfg.queues = 1;
  b.build();
  b.host.body = [&](Host& h) {
    setup_rx_ring(h, b.mem, 0, 16, 0);
    b.mem.desc(kRing, 0).len = 100;
    b.mem.desc(kRing, 1).len = 0;
    h.wr(NIC_Q_REG(0, NIC_Q_RX_TAIL), 3);
    h.wr(NIC_REG_CTRL, NIC_CTRL_RX_EN);
    sc_core::wait(1, sc_core::SC_US);
    h.wr(NIC_REG_CTRL, 0);
  };
  sc_core::sc_start(2, sc_core::SC_US);
  EXPECT_EQ(b.stat(NicStat::kDescErrors), 2u);
  EXPECT_EQ(b.stat(NicStat::kRxPackets), 1u);
  EXPECT_EQ(b.mem.desc(kRing, 0).wb_status, NIC_DESC_DD | NIC_DESC_ERR_LEN);
  EXPECT_EQ(b.mem.desc(kRing, 1).wb_status, NIC_DESC_DD | NIC_DESC_ERR_LEN);
  EXPECT_EQ(b.mem.desc(kRing, 2).wb_status, NIC_DESC_DD);
}

// The length check's boundary (issue 37): a buffer of exactly the frame's
// size takes it, one byte less is refused.
TEST(NicModel, ABufferOfExactlyTheFramesSizeTakesItOneByteLessDoesNot) {
  Bench b;
  b.cfg.queues = 1;
  b.cfg.rx_frame_bytes = 1514;
  b.build();
  b.host.body = [&](Host& h) {
    setup_rx_ring(h, b.mem, 0, 16, 0);
    b.mem.desc(kRing, 0).len = 1514;
    b.mem.desc(kRing, 1).len = 1513;
    h.wr(NIC_Q_REG(0, NIC_Q_RX_TAIL), 2);
    h.wr(NIC_REG_CTRL, NIC_CTRL_RX_EN);
    sc_core::wait(1, sc_core::SC_US);
    h.wr(NIC_REG_CTRL, 0);
  };
  sc_core::sc_start(2, sc_core::SC_US);
  EXPECT_EQ(b.mem.desc(kRing, 0).wb_status, NIC_DESC_DD);
  EXPECT_EQ(b.mem.desc(kRing, 0).wb_len, 1514u);
  EXPECT_EQ(b.mem.desc(kRing, 1).wb_status, NIC_DESC_DD | NIC_DESC_ERR_LEN);
  EXPECT_EQ(b.stat(NicStat::kRxPackets), 1u);
  EXPECT_EQ(b.stat(NicStat::kDescErrors), 1u);
}

TEST(NicModel, RingOutsideMemoryStopsTheQueueWithAFetchError) {
  Bench b;
  b.cfg.queues = 1;
  b.build();
  b.host.body = [&](Host& h) {
    h.wr(NIC_Q_REG(0, NIC_Q_RX_BASE_LO), 0x1000);  // no memory there
    h.wr(NIC_Q_REG(0, NIC_Q_RX_SIZE), 16);
    h.wr(NIC_Q_REG(0, NIC_Q_CTRL), NIC_Q_CTRL_RX_EN);
    h.wr(NIC_Q_REG(0, NIC_Q_RX_TAIL), 8);
    h.wr(NIC_REG_CTRL, NIC_CTRL_RX_EN);
    sc_core::wait(2, sc_core::SC_US);
    EXPECT_NE(h.rd(NIC_Q_REG(0, NIC_Q_ERR)) & NIC_ERR_DESC_FETCH, 0u);
    EXPECT_EQ(h.rd(NIC_Q_REG(0, NIC_Q_CTRL)) & NIC_Q_CTRL_RX_EN, 0u);
    h.wr(NIC_REG_CTRL, 0);
  };
  sc_core::sc_start(3, sc_core::SC_US);
  EXPECT_EQ(b.stat(NicStat::kRxDmaFault), 1u);
  EXPECT_GT(b.stat(NicStat::kRxNoBuffer), 0u);  // the queue is off after the fault
  EXPECT_EQ(b.stat(NicStat::kRxPackets), 0u);
}

TEST(NicModel, ModerationByFramesRaisesOncePerBatch) {
  Bench b;
  b.cfg.queues = 1;
  b.cfg.irq = 40;
  b.build();
  Receiver rx;
  b.host.body = [&](Host& h) {
    setup_rx_ring(h, b.mem, 0, 64, 63);
    h.wr(NIC_Q_REG(0, NIC_Q_COAL_FRAMES), 8);
    h.wr(NIC_Q_REG(0, NIC_Q_IRQ_MASK), 0);
    h.wr(NIC_REG_CTRL, NIC_CTRL_RX_EN);
    size_t seen = 0;
    while (sc_core::sc_time_stamp() < sc_core::sc_time(20, sc_core::SC_US)) {
      sc_core::wait(100, sc_core::SC_NS);
      if (b.irqs.lines.size() != seen) {  // NAPI: poll, then re-arm
        seen = b.irqs.lines.size();
        EXPECT_EQ(h.rd(NIC_Q_REG(0, NIC_Q_IRQ_MASK)), 1u);
        rx.poll(h, b.mem, 0, 64);
        h.wr(NIC_Q_REG(0, NIC_Q_IRQ_MASK), 0);
      }
    }
    h.wr(NIC_REG_CTRL, 0);
  };
  sc_core::sc_start(21, sc_core::SC_US);
  ASSERT_FALSE(b.irqs.lines.empty());
  for (unsigned l : b.irqs.lines) EXPECT_EQ(l, 40u);
  const double per_irq = static_cast<double>(b.stat(NicStat::kRxPackets)) / static_cast<double>(b.irqs.lines.size());
  EXPECT_GE(per_irq, 8.0);
  EXPECT_LT(per_irq, 12.0);
  EXPECT_EQ(rx.bad, 0u);
}

TEST(NicModel, ModerationByTimeWaitsForTheTimer) {
  Bench b;
  b.cfg.queues = 1;
  b.cfg.rx_load_percent = 1;  // one frame every ~12 us
  b.build();
  b.host.body = [&](Host& h) {
    setup_rx_ring(h, b.mem, 0, 16, 15);
    h.wr(NIC_Q_REG(0, NIC_Q_COAL_USECS), 5);
    h.wr(NIC_Q_REG(0, NIC_Q_IRQ_MASK), 0);
    h.wr(NIC_REG_CTRL, NIC_CTRL_RX_EN);
    sc_core::wait(10, sc_core::SC_US);
    h.wr(NIC_REG_CTRL, 0);
  };
  sc_core::sc_start(11, sc_core::SC_US);
  ASSERT_EQ(b.irqs.lines.size(), 1u);  // one frame, raised 5 us after it completed
  EXPECT_EQ(b.stat(NicStat::kRxPackets), 1u);
}

// Queue 0 sends n 1514-byte frames from a 128-entry TX ring; returns the
// time of the doorbell, ns.
double send_frames(Bench& b, Host& h, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    nic_desc& d = b.mem.desc(kRing, i);
    std::memset(&d, 0, sizeof d);
    d.addr = buffer(0, i);
    d.len = 1514;
  }
  h.wr(NIC_Q_REG(0, NIC_Q_TX_BASE_LO), static_cast<uint32_t>(kRing));
  h.wr(NIC_Q_REG(0, NIC_Q_TX_BASE_HI), static_cast<uint32_t>(kRing >> 32));
  h.wr(NIC_Q_REG(0, NIC_Q_TX_SIZE), 128);
  h.wr(NIC_REG_CTRL, NIC_CTRL_TX_EN);
  h.wr(NIC_Q_REG(0, NIC_Q_CTRL), NIC_Q_CTRL_TX_EN);
  const double t0_ns = sc_core::sc_time_stamp().to_seconds() * 1e9;
  h.wr(NIC_Q_REG(0, NIC_Q_TX_TAIL), n);
  return t0_ns;
}

TEST(NicModel, TransmitsAtLineRateAndWritesBack) {
  Bench b;
  b.cfg.queues = 1;
  b.build();
  const uint32_t n = 64;
  double t0_ns = 0;
  b.host.body = [&](Host& h) {
    t0_ns = send_frames(b, h, n);
  };
  sc_core::sc_start(50, sc_core::SC_US);
  EXPECT_EQ(b.stat(NicStat::kTxPackets), n);
  EXPECT_EQ(b.stat(NicStat::kTxBytes), n * 1514ull);
  // Never faster than the wire: the last frame leaves at least n wire times
  // after the doorbell (the write-back stamps the end of each frame on the wire).
  const double done_ns = static_cast<double>(b.mem.desc(kRing, n - 1).wb_timestamp_ns) - t0_ns;
  EXPECT_GE(done_ns, n * 123.04);
  EXPECT_LT(done_ns, n * 123.04 + 2000);
  uint64_t prev = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const nic_desc& d = b.mem.desc(kRing, i);
    EXPECT_EQ(d.wb_status, NIC_DESC_DD);
    EXPECT_EQ(d.wb_len, 1514u);
    EXPECT_GE(d.wb_timestamp_ns, prev + 123);  // one wire time apart at least
    prev = d.wb_timestamp_ns;
  }
}

// The transmit length check's boundary: a frame of exactly the largest size
// (mtu + 14) goes, one byte more is refused.
TEST(NicModel, TheLargestFrameGoesOneByteMoreIsRefused) {
  Bench b;
  b.cfg.queues = 1;
  b.build();
  const uint32_t largest = b.cfg.mtu + 14;
  b.host.body = [&](Host& h) {
    send_frames(b, h, 0);
    b.mem.desc(kRing, 0).len = largest;
    b.mem.desc(kRing, 1).len = largest + 1;
    b.mem.desc(kRing, 0).addr = buffer(0, 0);
    b.mem.desc(kRing, 1).addr = buffer(0, 2);
    h.wr(NIC_Q_REG(0, NIC_Q_TX_TAIL), 2);
  };
  sc_core::sc_start(20, sc_core::SC_US);
  EXPECT_EQ(b.mem.desc(kRing, 0).wb_status, NIC_DESC_DD);
  EXPECT_EQ(b.mem.desc(kRing, 0).wb_len, largest);
  EXPECT_EQ(b.mem.desc(kRing, 1).wb_status, NIC_DESC_DD | NIC_DESC_ERR_LEN);
  EXPECT_EQ(b.stat(NicStat::kTxPackets), 1u);
  EXPECT_EQ(b.stat(NicStat::kDescErrors), 1u);
}

// Reads ahead of the wire hide memory latency: with 1 frame ahead a 400 ns
// read is paid per frame; with 8, the wire stays busy.
class NicTxAhead : public ::testing::TestWithParam<unsigned> {};

TEST_P(NicTxAhead, ReadAheadHidesReadLatency) {
  Bench b;
  b.cfg.queues = 1;
  b.cfg.tx_frames_ahead = GetParam();
  b.mem.read_latency_ns = 400;
  b.build();
  const uint32_t n = 64;
  double t0_ns = 0;
  b.host.body = [&](Host& h) {
    t0_ns = send_frames(b, h, n);
  };
  sc_core::sc_start(100, sc_core::SC_US);
  ASSERT_EQ(b.stat(NicStat::kTxPackets), n);
  const double per_frame = (static_cast<double>(b.mem.desc(kRing, n - 1).wb_timestamp_ns) - t0_ns) / n;
  if (GetParam() == 1) EXPECT_GT(per_frame, 400.0);  // each read waits for the frame before it
  else EXPECT_LT(per_frame, 123.04 * 1.25);  // the wire rate, after the first fetches
  EXPECT_GE(per_frame, 123.04);
}

INSTANTIATE_TEST_SUITE_P(FramesAhead, NicTxAhead, ::testing::Values(1u, 8u));

}  // namespace
}  // namespace smmu_vp

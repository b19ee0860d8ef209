// The NIC, its driver and the net apps on the platform: frames arrive intact
// through the SMMU, a frame DMA'd into a buffer unmapped in strict mode
// faults with an event record naming the NIC's StreamID, lazy mode's stale
// window closes at the flush, the page pool keeps the IOMMU out of the
// per-packet path, transmit reclaims what it sent, bad parameters fail.
#include <gtest/gtest.h>

#include <string>

#include "drivers/nic/nic.h"
#include "hal/hal.h"
#include "iommu/dma_iommu.h"
#include "iommu/iommu.h"
#include "platform_fixture.h"
#include "smmu_event.h"
#include "drivers/smmu/arm_smmu.h"
#include "drivers/smmu/smmu_hw.h"

namespace smmu_vp::test {
namespace {

constexpr uint32_t kNicSid = 32;  // base.json's nic0

// net_rx on `cores` cores of the base platform, a short window at a load a
// few cores keep up with.
nlohmann::json net_app(const char* app, unsigned cores, nlohmann::json params) {
  nlohmann::json list = nlohmann::json::array();
  for (unsigned c = 0; c < cores; ++c) list.push_back(c);
  params["warmup_us"] = 300;
  params["duration_us"] = 300;
  return {{{"app", app}, {"cores", list}, {"params", params}}};
}

double value(const TestRun& t, const std::string& path) {
  const double* v = t.stats().find_value(path);
  return v ? *v : -1.0;
}

TEST(NetRx, StrictFramesArriveIntactThroughTheSmmu) {
  const TestRun t = run(scenario(net_app("net_rx", 2, {{"unmap", 0}, {"check", 1}})), {},
                        {"platform.devices.nic0.rx_load_percent=10"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GT(t.counter("nic0.rx_packets"), 400u);
  EXPECT_EQ(t.counter("sw.net_rx.frames_corrupt"), 0u);      // every byte as the generator wrote it
  EXPECT_EQ(t.counter("sw.net_rx.frames_out_of_order"), 0u);
  EXPECT_EQ(t.counter("nic0.rx_no_buffer") + t.counter("nic0.rx_fifo_overflow") + t.counter("nic0.rx_dma_fault"), 0u);
  // 10 Gbit/s offered: about 9.4 Gbit/s of TCP payload.
  EXPECT_NEAR(value(t, "sw.net_rx.gbps"), 9.41, 0.3);
  // The SMMU translated every payload write, walked for the fresh IOVAs and
  // took a TLBI + SYNC per strict unmap.
  EXPECT_GE(t.counter("smmu.tlb.lookups"), t.counter("nic0.rx_packets") * 3);
  EXPECT_EQ(t.counter("smmu.bypassed"), 0u);
  EXPECT_GT(t.counter("smmu.ptw.walks.s1"), t.counter("nic0.rx_packets") / 2);
  EXPECT_GE(t.counter("smmu.cmdq.syncs") + 2048, t.counter("nic0.rx_packets"));
  EXPECT_EQ(t.counter("smmu.faults.total"), 0u);
  const Histogram* lat = t.histogram("sw.net_rx.latency_ns");
  ASSERT_NE(lat, nullptr);
  EXPECT_GT(lat->count(), 0u);
  EXPECT_GT(t.counter("cpus.cpu0.irqs_taken"), 0u);  // interrupt-driven, by MSI through the SMMU
  EXPECT_GT(t.counter("nic0.irqs"), 0u);
  EXPECT_EQ(t.counter("nic0.msi_errors"), 0u);
}

TEST(NetRx, PagePoolMapsEachBufferOnce) {
  const TestRun t = run(scenario(net_app("net_rx", 1, {{"unmap", 0}, {"buffers", 1}, {"ring", 256}})), {},
                        {"platform.devices.nic0.rx_load_percent=5"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GT(t.counter("nic0.rx_packets"), 200u);
  // Two rings, the doorbell and a buffer per slot: nothing per packet.
  EXPECT_EQ(value(t, "sw.net_rx.iovas_allocated"), 256 + 3);
  EXPECT_EQ(t.counter("sw.net_rx.frames_corrupt"), 0u);
  EXPECT_LT(t.counter("smmu.cmdq.commands"), 20u);
}

TEST(NetRx, PassthroughBypassesTranslation) {
  const TestRun t = run(scenario(net_app("net_rx", 1, {{"unmap", 2}})), {}, {"platform.devices.nic0.rx_load_percent=5"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GT(t.counter("nic0.rx_packets"), 200u);
  EXPECT_EQ(t.counter("smmu.tlb.lookups"), 0u);
  EXPECT_EQ(t.counter("smmu.ptw.walks.s1"), 0u);
  EXPECT_GT(t.counter("smmu.bypassed"), t.counter("nic0.rx_packets"));
}

TEST(NetRx, OutOfRangeParameterIsAConfigurationError) {
  try {
    run(scenario(net_app("net_rx", 1, {{"cmdq", 9}})), {});
    FAIL() << "cmdq = 9 was accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.path(), "/scenario/apps/0/params/cmdq");
    EXPECT_NE(std::string(e.what()).find("0 to 3"), std::string::npos) << e.what();
  }
}

TEST(NetRx, BadParameterFailsTheApp) {
  // Not a power of two: only the app can tell.
  const TestRun t = run(scenario(net_app("net_rx", 1, {{"ring", 1000}})), {});
  EXPECT_EQ(t.result.status, RunResult::Status::kAppFailed);
  EXPECT_NE(t.result.message.find("returned 1"), std::string::npos) << t.result.message;
  EXPECT_EQ(t.counter("nic0.rx_packets"), 0u);
}

TEST(NetTx, SentFramesAreReclaimedAndUnmapped) {
  const TestRun t = run(scenario(net_app("net_tx", 1, {{"unmap", 0}, {"frame_bytes", 1514}})), {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GT(t.counter("nic0.tx_packets"), 500u);
  EXPECT_EQ(t.counter("nic0.tx_dma_fault"), 0u);
  EXPECT_EQ(t.counter("nic0.desc_errors"), 0u);
  EXPECT_EQ(t.counter("nic0.tx_bytes"), t.counter("nic0.tx_packets") * 1514);
  EXPECT_GT(value(t, "sw.net_tx.gbps"), 1.0);
  // One CMD_SYNC per reclaimed frame (strict unmap).
  EXPECT_GE(t.counter("smmu.cmdq.syncs") + 1024, t.counter("nic0.tx_packets"));
}

// ---- Driver-level cases: a driver bug on purpose, and what the SMMU does.

smmu_device g_smmu;
iommu_domain g_dom;
iommu_dma_cookie g_cookie;
dma_dev g_dev;
nic_dev g_nic;

int attach(dma_unmap_policy unmap) {
  if (smmu_probe(&g_smmu, hal_smmu().base) != 0 || smmu_reset(&g_smmu) != 0) return 1;
  if (iommu_domain_init(&g_dom, &g_smmu, 1, 4096, nullptr) != 0) return 2;
  dma_policy pol{};
  pol.unmap = unmap;
  pol.gather_when_queued = true;
  pol.fq_timeout_ns = 1000000000ull;  // the test flushes by hand
  if (iommu_dma_cookie_init(&g_cookie, &g_dom, &pol) != 0) return 3;
  if (dma_dev_init(&g_dev, &g_cookie, kNicSid, DMA_BIT_MASK(48), nullptr) != 0) return 4;
  nic_config cfg;
  nic_config_default(&cfg);
  cfg.rx_ring_size = cfg.tx_ring_size = 16;
  cfg.coal_frames = 1;
  if (nic_probe(&g_nic, "nic0", &g_dev, &cfg, 1) != 0) return 5;
  return nic_queue_open(&g_nic, 0) != 0 ? 6 : 0;
}

// Waits (in simulated time) until the NIC has written slot `slot` back.
bool wait_done(const nic_ring& r, uint32_t slot) {
  for (int i = 0; i < 2000; ++i) {
    if (*reinterpret_cast<const volatile uint32_t*>(&r.desc[slot].wb_status) & NIC_DESC_DD) return true;
    hal_delay_ns(500);
  }
  return false;
}

// Posts `dma` in the next free RX slot by hand, as a buggy driver would.
uint32_t post_raw(nic_queue* q, uint64_t dma) {
  nic_ring& r = q->rx;
  const uint32_t slot = r.next_to_use;
  r.desc[slot] = nic_desc{dma, 2048, 0, 0, 0, 0};
  r.next_to_use = (slot + 1) & (r.size - 1);
  hal_barrier(HAL_BARRIER_DSB);
  hal_write32(q->nic->info.base + NIC_Q_REG(q->index, NIC_Q_RX_TAIL), r.next_to_use);
  return slot;
}

struct {
  int setup = -1;
  bool first_done = false;
  uint32_t first_status = 0, event_id = 0, event_sid = 0;
  uint64_t event_addr = 0, unmapped_dma = 0;
  uint64_t rx_errors = 0, rx_packets = 0;
} strict_st;

void count_frame(void*, const uint8_t*, uint32_t, uint64_t) {}

// Strict: the buffer of slot 0 is unmapped while the NIC still owns it.
int strict_fault_main() {
  strict_st.setup = attach(DMA_UNMAP_STRICT);
  if (strict_st.setup) return 1;
  nic_queue* q = &g_nic.q[0];
  nic_buf& b = q->rx.bufs[0];
  strict_st.unmapped_dma = b.dma;
  dma_unmap_single(&g_dev, b.dma, b.len, DMA_FROM_DEVICE);
  b.mapped = false;
  nic_set_enabled(&g_nic, true, false);
  strict_st.first_done = wait_done(q->rx, 0);
  strict_st.first_status = q->rx.desc[0].wb_status;
  if (!wait_done(q->rx, 3)) return 2;
  nic_set_enabled(&g_nic, false, false);
  // The event record as the SMMU wrote it (IHI 0070 7.3), before the driver consumes it.
  const EventRecord ev = oldest_event(g_smmu);
  strict_st.event_id = ev.id;
  strict_st.event_sid = ev.sid;
  strict_st.event_addr = ev.addr;
  smmu_handle_events(&g_smmu);
  nic_rx_poll(q, 16, count_frame, nullptr);
  strict_st.rx_errors = q->stats.rx_errors;
  strict_st.rx_packets = q->stats.rx_packets;
  return 0;
}
const hal_app strict_fault_app = {"nic_strict_fault", "DMA into an unmapped RX buffer", strict_fault_main, nullptr};

TEST(NicDriver, StrictUnmappedBufferFaultsDropsAndNamesTheNic) {
  const TestRun t = run(scenario({{{"app", "nic_strict_fault"}, {"cores", {0}}}}), {&strict_fault_app},
                        {"platform.devices.nic0.rx_load_percent=5"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  ASSERT_EQ(strict_st.setup, 0);
  ASSERT_TRUE(strict_st.first_done);
  // The frame is dropped, the descriptor comes back flagged, the driver counts it.
  EXPECT_EQ(strict_st.first_status, NIC_DESC_DD | NIC_DESC_ERR_DMA);
  EXPECT_EQ(t.counter("nic0.rx_dma_fault"), 1u);
  EXPECT_EQ(strict_st.rx_errors, 1u);
  EXPECT_GE(strict_st.rx_packets, 3u);  // the slots after it carried their frames
  // The SMMU aborted the write and said who and where.
  EXPECT_EQ(strict_st.event_id, SMMU_EVT_F_TRANSLATION);
  EXPECT_EQ(strict_st.event_sid, kNicSid);
  EXPECT_EQ(strict_st.event_addr >> 12, strict_st.unmapped_dma >> 12);
  EXPECT_GE(t.counter("smmu.faults.F_TRANSLATION"), 1u);
  EXPECT_EQ(g_smmu.stats.events_by_id[SMMU_EVT_F_TRANSLATION], t.counter("smmu.faults.F_TRANSLATION"));
}

struct {
  int setup = -1;
  bool warm = false, stale_done = false, after_done = false;
  uint32_t stale_status = 0, after_status = 0;
  uint64_t hits_before_flush = 0;
} lazy_st;

// Lazy: slot 0's buffer is unmapped (queued, no TLBI) after the NIC used it,
// then handed to the NIC again: the write lands through the stale TLB entry.
// After the flush the same bug faults.
int lazy_stale_main() {
  lazy_st.setup = attach(DMA_UNMAP_LAZY);
  if (lazy_st.setup) return 1;
  nic_queue* q = &g_nic.q[0];
  nic_set_enabled(&g_nic, true, false);
  lazy_st.warm = wait_done(q->rx, 0);  // the TLB now holds slot 0's page
  const uint64_t stale_dma = q->rx.bufs[0].dma;
  // Stop the ring from refilling on its own: consume slot 0 by hand.
  dma_unmap_single(&g_dev, stale_dma, q->rx.bufs[0].len, DMA_FROM_DEVICE);
  q->rx.bufs[0].mapped = false;
  // Frames go to slots 1..14 first; the stale slot comes after them.
  const uint32_t s1 = post_raw(q, stale_dma);
  lazy_st.stale_done = wait_done(q->rx, s1);
  lazy_st.stale_status = q->rx.desc[s1].wb_status;
  dma_flush_queue_flush(&g_dev);  // the window closes
  const uint32_t s2 = post_raw(q, stale_dma);
  lazy_st.after_done = wait_done(q->rx, s2);
  lazy_st.after_status = q->rx.desc[s2].wb_status;
  nic_set_enabled(&g_nic, false, false);
  return 0;
}
const hal_app lazy_stale_app = {"nic_lazy_stale", "DMA through a stale entry until the flush", lazy_stale_main, nullptr};

TEST(NicDriver, LazyStaleEntryReachesTheBufferOnlyUntilTheFlush) {
  const TestRun t = run(scenario({{{"app", "nic_lazy_stale"}, {"cores", {0}}}}), {&lazy_stale_app},
                        {"platform.devices.nic0.rx_load_percent=20", "platform.smmu.stale_check=true"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  ASSERT_EQ(lazy_st.setup, 0);
  ASSERT_TRUE(lazy_st.warm);
  ASSERT_TRUE(lazy_st.stale_done);
  ASSERT_TRUE(lazy_st.after_done);
  // Inside the window: the device wrote the unmapped buffer, through stale entries.
  EXPECT_EQ(lazy_st.stale_status, NIC_DESC_DD);
  EXPECT_GT(t.counter("smmu.stale_check.stale_hits"), 0u);
  // After the flush: the same access faults and the frame is dropped.
  EXPECT_EQ(lazy_st.after_status, NIC_DESC_DD | NIC_DESC_ERR_DMA);
  EXPECT_EQ(t.counter("nic0.rx_dma_fault"), 1u);
  EXPECT_GE(t.counter("smmu.faults.F_TRANSLATION"), 1u);
  // Only one IOVA waited for a flush: its security window was recorded.
  EXPECT_EQ(g_cookie.stats.lazy_windows, 1u);
  EXPECT_GT(g_cookie.stats.lazy_window_max_ns, 0u);
}

}  // namespace
}  // namespace smmu_vp::test

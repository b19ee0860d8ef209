// The NVMe drives, their driver and fio on the platform: data written then
// read back intact through the SMMU (strict and lazy), a read into an
// unmapped IOVA completes with a Data Transfer Error and an event record
// naming the drive's StreamID, several drives at once, bad parameters fail.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "apps/iommu_setup.h"
#include "drivers/nvme/nvme.h"
#include "hal/hal.h"
#include "platform_fixture.h"
#include "smmu_event.h"
#include "drivers/smmu/arm_smmu.h"
#include "drivers/smmu/smmu_hw.h"

namespace smmu_vp::test {
namespace {

constexpr uint32_t kDriveSid = 48;  // base.json's nvme0

nlohmann::json fio_app(unsigned cores, nlohmann::json params) {
  nlohmann::json list = nlohmann::json::array();
  for (unsigned c = 0; c < cores; ++c) list.push_back(c);
  if (!params.contains("warmup_us")) params["warmup_us"] = 100;
  if (!params.contains("runtime_us")) params["runtime_us"] = 500;
  return {{{"app", "fio"}, {"cores", list}, {"params", params}}};
}

double value(const TestRun& t, const std::string& path) {
  const double* v = t.stats().find_value(path);
  return v ? *v : -1.0;
}

class FioVerify : public ::testing::TestWithParam<unsigned> {};

// Every block written with a pattern, then random reads checked against it.
TEST_P(FioVerify, DataReadBackIntactThroughTheSmmu) {
  const TestRun t = run(scenario(fio_app(2, {{"unmap", GetParam()}, {"verify", 1}, {"rw", 2}, {"bs", 16384},
                                             {"iodepth", 8}, {"region_mib", 1}})),
                        {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(t.counter("sw.fio.verify_errors"), 0u);
  EXPECT_EQ(t.counter("sw.fio.errors"), 0u);
  EXPECT_GT(value(t, "sw.fio.iops"), 1000.0);
  EXPECT_GT(t.counter("nvme0.bytes_written"), 2u * 1024 * 1024 - 1);  // both jobs' regions
  EXPECT_GT(t.counter("nvme0.bytes_read"), 0u);
  if (GetParam() != 2) {
    EXPECT_GT(t.counter("smmu.tlb.lookups"), 1000u);  // the drive's DMA was translated
    EXPECT_GT(t.counter("smmu.ptw.walks.s1"), 0u);
  } else {
    EXPECT_EQ(t.counter("smmu.tlb.lookups"), 0u);
  }
  EXPECT_EQ(t.counter("smmu.faults.total"), 0u);
}

INSTANTIATE_TEST_SUITE_P(Unmap, FioVerify, ::testing::Values(0u, 1u, 2u),
                         [](const ::testing::TestParamInfo<unsigned>& i) {
                           return std::string(i.param == 0 ? "Strict" : i.param == 1 ? "Lazy" : "Passthrough");
                         });

TEST(Fio, SeveralDrivesAtOnce) {
  const TestRun t = run(scenario(fio_app(4, {{"drives", 4}, {"bs", 4096}, {"iodepth", 16}})), {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  for (const char* d : {"nvme0", "nvme1", "nvme2", "nvme3"})
    EXPECT_GT(t.counter(std::string(d) + ".reads"), 100u) << d;
  EXPECT_EQ(t.counter("sw.fio.errors"), 0u);
}

// Seed 004's bounce path (swiotlb=512,4,force): every data page goes through
// swiotlb, the data arrives intact, and with a completion core the unmaps
// take the area locks on another core than the maps.
nlohmann::json bounce_params(unsigned irq_cores) {
  return {{"bounce", 1}, {"bs", 4096}, {"iodepth", 64}, {"rw", 4}, {"verify", 1}, {"region_mib", 1},
          {"irq_cores", irq_cores}, {"completion_cycles", 2000}};
}

TEST(Fio, BounceForcesEveryPageThroughSwiotlbAndCompletesOnAnotherCore) {
  const TestRun t = run(scenario(fio_app(2, bounce_params(1))), {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(t.counter("sw.fio.verify_errors"), 0u);
  EXPECT_EQ(t.counter("sw.fio.errors"), 0u);
  EXPECT_GT(value(t, "sw.fio.iops"), 1000.0);
  // One 4 KiB page per command, each bounced (aligned pages included).
  const double commands = static_cast<double>(t.counter("nvme0.reads") + t.counter("nvme0.writes"));
  EXPECT_GT(commands, 100.0);
  EXPECT_EQ(value(t, "sw.fio.swiotlb_maps"), commands);
  // Map on the job's core, unmap on the completion core: the area's lock
  // changes hands about twice per I/O.
  EXPECT_GT(value(t, "sw.fio.swiotlb_lock_handoffs_per_map"), 1.0);
  EXPECT_EQ(t.counter("smmu.faults.total"), 0u);
}

TEST(Fio, BounceCompletedOnTheJobsCoreKeepsEachAreaLockThere) {
  const TestRun t = run(scenario(fio_app(1, bounce_params(0))), {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(t.counter("sw.fio.verify_errors"), 0u);
  EXPECT_GT(value(t, "sw.fio.swiotlb_maps"), 100.0);
  EXPECT_EQ(value(t, "sw.fio.swiotlb_lock_handoffs_per_map"), 0.0);
}

TEST(Fio, BadParameterFailsTheApp) {
  const TestRun t = run(scenario(fio_app(1, {{"bs", 1000}})), {});
  EXPECT_EQ(t.result.status, RunResult::Status::kAppFailed);
}

// ---- A driver bug on purpose: the buffer is unmapped before the read.

smmu_device* g_smmu = nullptr;
app_dma g_dma;
nvme_ctrl g_ctrl;
struct {
  int setup = -1;
  uint16_t status = 0xFFFF;
  uint32_t event_id = 0, event_sid = 0;
  uint64_t event_addr = 0, dma = 0;
} st;

void remember(nvme_request* rq) { st.status = rq->status; }

int unmapped_read_main() {
  hal_device_info info;
  if (hal_device_find("nvme0", &info) != 0) return 1;
  if (iommu_setup_attach(&g_dma, "test", info.stream_id, 1, nullptr) != 0) return 2;
  if (nvme_probe(&g_ctrl, "nvme0", app_dma_dev(&g_dma), 1, 8, true) != 0 || nvme_queue_start(&g_ctrl, 0) != 0) return 3;
  g_smmu = g_dma.domain.smmu;
  phys_addr_t pa;
  if (!hal_dma_alloc(4096, 4096, &pa)) return 4;
  // Map and unmap a page by hand, then give the drive the stale address as
  // a physical ("no IOMMU") request would: the driver's own map is skipped.
  st.dma = dma_map_single(&g_dma.dev, pa, 4096, DMA_FROM_DEVICE);
  dma_unmap_single(&g_dma.dev, st.dma, 4096, DMA_FROM_DEVICE);
  g_ctrl.dma = nullptr;  // the bug: the request goes out with an address nobody mapped
  iommu_sg sg{st.dma, 4096};
  nvme_request rq{};
  rq.opcode = NVME_CMD_READ;
  rq.slba = 0;
  rq.blocks = 4096 / g_ctrl.lba_bytes;
  rq.sg = &sg;
  rq.nents = 1;
  rq.done = remember;
  if (nvme_submit(&g_ctrl.io[0], &rq) != 0) return 5;
  for (int i = 0; i < 10000 && st.status == 0xFFFF; ++i) {
    nvme_process_cq(&g_ctrl.io[0]);
    hal_delay_ns(1000);
  }
  const EventRecord ev = oldest_event(*g_smmu);
  st.event_id = ev.id;
  st.event_sid = ev.sid;
  st.event_addr = ev.addr;
  smmu_handle_events(g_smmu);
  return 0;
}
const hal_param_decl unmapped_params[] = {IOMMU_SETUP_PARAMS, {nullptr, 0, nullptr, 0, nullptr}};
const hal_app unmapped_read_app = {"nvme_unmapped_read", "a read into an unmapped IOVA", unmapped_read_main,
                                   unmapped_params};

TEST(NvmeDriver, ReadIntoUnmappedIovaFailsWithDataTransferErrorAndAnEvent) {
  const TestRun t = run(scenario({{{"app", "nvme_unmapped_read"}, {"cores", {0}}, {"params", {{"unmap", 0}}}}}),
                        {&unmapped_read_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(NVME_STATUS_SCT(st.status), NVME_SCT_GENERIC);
  EXPECT_EQ(NVME_STATUS_SC(st.status), NVME_SC_DATA_TRANSFER_ERROR);
  EXPECT_EQ(st.event_id, SMMU_EVT_F_TRANSLATION);
  EXPECT_EQ(st.event_sid, kDriveSid);
  EXPECT_EQ(st.event_addr >> 12, st.dma >> 12);
  EXPECT_GE(t.counter("nvme0.data_transfer_errors"), 1u);
}

// ---- Regression: the stream table must be aligned to its size whatever was
// allocated before the SMMU came up (a bounce pool first left it 64-byte
// aligned, and the SMMU, ignoring the low address bits, read another level-1
// descriptor: C_BAD_STREAMID on the drive's first DMA).

app_dma g_dma2;
swiotlb_mem g_pool;
nvme_ctrl g_ctrl2;
struct {
  int probe = -1;
  EventRecord ev;
} first;

int pool_first_main() {
  hal_device_info info;
  if (hal_device_find("nvme0", &info) != 0) return 1;
  swiotlb_config cfg{};
  cfg.pool_size = 512 * 2048;
  cfg.nareas = 4;
  if (swiotlb_init(&g_pool, &cfg) != 0) return 2;
  if (iommu_setup_attach(&g_dma2, "test", info.stream_id, 1, nullptr) != 0) return 3;
  first.probe = nvme_probe(&g_ctrl2, "nvme0", app_dma_dev(&g_dma2), 1, 8, true);
  first.ev = oldest_event(*g_dma2.domain.smmu);
  return 0;
}
const hal_app pool_first_app = {"nvme_pool_first", "bounce pool before the SMMU", pool_first_main, unmapped_params};

TEST(NvmeDriver, StreamTableAlignedAfterEarlierAllocations) {
  const TestRun t = run(scenario({{{"app", "nvme_pool_first"}, {"cores", {0}}, {"params", {{"unmap", 0}}}}}, 1e6),
                        {&pool_first_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(first.probe, 0);
  EXPECT_FALSE(first.ev.valid) << "event 0x" << std::hex << first.ev.id << " for StreamID " << std::dec << first.ev.sid;
  EXPECT_EQ(t.counter("smmu.faults.total"), 0u);
}

}  // namespace
}  // namespace smmu_vp::test

// The camera, its driver and the capture app on the platform: captured
// frames hold the sensor's pattern through the SMMU, buffers kept mapped are
// mapped once, and a buffer unmapped too early makes the camera's writes
// fault: the frame is flagged corrupted and the SMMU's event names the
// camera's StreamID.
#include <gtest/gtest.h>

#include <string>

#include "apps/iommu_setup.h"
#include "drivers/camera/camera.h"
#include "hal/hal.h"
#include "platform_fixture.h"
#include "smmu_event.h"
#include "drivers/smmu/arm_smmu.h"
#include "drivers/smmu/smmu_hw.h"

namespace smmu_vp::test {
namespace {

constexpr uint32_t kCameraSid = 64;  // base.json's camera0

double value(const TestRun& t, const std::string& path) {
  const double* v = t.stats().find_value(path);
  return v ? *v : -1.0;
}

nlohmann::json camera_app(nlohmann::json params) {
  if (!params.contains("duration_us")) params["duration_us"] = 150000;
  return {{{"app", "camera"}, {"cores", {0}}, {"params", params}}};
}

class CameraPolicy : public ::testing::TestWithParam<unsigned> {};

TEST_P(CameraPolicy, FramesHoldThePatternThroughTheSmmu) {
  const TestRun t = run(scenario(camera_app({{"policy", GetParam()}, {"check", 1}}), 1e6), {});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GE(value(t, "sw.camera.frames_captured"), 3.0);  // 30 fps for 150 ms
  EXPECT_EQ(value(t, "sw.camera.frames_lost"), 0.0);
  EXPECT_EQ(value(t, "sw.camera.frames_bad_pattern"), -1.0);  // never set: every checked frame matched
  EXPECT_GT(t.counter("smmu.tlb.lookups"), 10000u);           // every line write translated
  // Only the camera translated: its StreamID's counters are the totals.
  EXPECT_EQ(t.counter("smmu.tlb.by_sid.64.lookups"), t.counter("smmu.tlb.lookups"));
  EXPECT_EQ(t.counter("smmu.tlb.by_sid.64.hits"), t.counter("smmu.tlb.hits"));
  EXPECT_GT(t.counter("smmu.ptw.walks.s1"), 0u);
  EXPECT_EQ(t.counter("smmu.faults.total"), 0u);
  const double mapped = value(t, "sw.camera.iovas_allocated");
  if (GetParam() == 1) EXPECT_EQ(mapped, 4.0 + 1.0);  // four buffers and the doorbell, once
  else EXPECT_GT(mapped, 4.0 + 1.0);                  // a fresh mapping per frame
}

INSTANTIATE_TEST_SUITE_P(Buffers, CameraPolicy, ::testing::Values(0u, 1u),
                         [](const ::testing::TestParamInfo<unsigned>& i) {
                           return std::string(i.param == 0 ? "MapEveryFrame" : "KeptMapped");
                         });

TEST(Camera, BadParametersFail) {
  EXPECT_THROW(run(scenario(camera_app({{"buffers", 40}}), 1e6), {}), config::ConfigError);  // above 16
  const TestRun t = run(scenario(camera_app({{"buffers", 1}}), 1e6), {});                    // below 2
  EXPECT_EQ(t.result.status, RunResult::Status::kAppFailed);
}

// ---- A driver bug on purpose: the buffer is unmapped while queued.

app_dma g_dma;
cam_dev g_cam;
cam_buffer g_buf;
iommu_sg g_sg[1024];
uint64_t g_addrs[1024];
struct {
  int setup = -1;
  uint32_t status = 0, event_id = 0, event_sid = 0;
  bool got = false;
} st;

int early_unmap_main() {
  hal_device_info info;
  if (hal_device_find("camera0", &info) != 0) return 1;
  if (iommu_setup_attach(&g_dma, "test", info.stream_id, 3, nullptr) != 0) return 2;
  if (cam_probe(&g_cam, "camera0", app_dma_dev(&g_dma)) != 0) return 3;
  const unsigned pages = (g_cam.frame_bytes + 4095) / 4096;
  if (pages > 1024) return 4;
  phys_addr_t pa;
  if (!hal_dma_alloc(static_cast<size_t>(pages) * 4096, 4096, &pa)) return 5;
  for (unsigned p = 0; p < pages; ++p) g_sg[p] = {pa + p * 4096ull, 4096};
  g_buf.sg = g_sg;
  g_buf.dma_addrs = g_addrs;
  g_buf.nents = pages;
  g_buf.bytes = pages * 4096ull;
  if (cam_buffer_map(&g_cam, &g_buf) != 0 || cam_queue(&g_cam, &g_buf) != 0) return 6;
  cam_buffer_unmap(&g_cam, &g_buf);  // the bug: the camera still owns it
  st.setup = 0;
  if (cam_start(&g_cam) != 0) return 7;
  cam_frame f{};
  for (int i = 0; i < 200 && !st.got; ++i) {
    hal_delay_ns(1000000);
    if (cam_dequeue(&g_cam, &f)) {
      st.got = true;
      st.status = f.status;
    }
  }
  cam_stop(&g_cam);
  smmu_device* s = g_dma.domain.smmu;
  const EventRecord ev = oldest_event(*s);
  st.event_id = ev.id;
  st.event_sid = ev.sid;
  smmu_handle_events(s);
  return 0;
}
const hal_param_decl early_params[] = {IOMMU_SETUP_PARAMS, {nullptr, 0, nullptr, 0, nullptr}};
const hal_app early_unmap_app = {"camera_early_unmap", "a buffer unmapped while queued", early_unmap_main,
                                 early_params};

TEST(CameraDriver, BufferUnmappedTooEarlyCorruptsTheFrameAndNamesTheCamera) {
  const TestRun t = run(scenario({{{"app", "camera_early_unmap"}, {"cores", {0}}, {"params", {{"unmap", 0}}}}}, 1e6),
                        {&early_unmap_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  ASSERT_EQ(st.setup, 0);
  ASSERT_TRUE(st.got);
  EXPECT_EQ(st.status, CAM_DONE_CORRUPTED | CAM_DONE_DMA_FAULT);
  EXPECT_EQ(st.event_id, SMMU_EVT_F_TRANSLATION);
  EXPECT_EQ(st.event_sid, kCameraSid);
  EXPECT_GE(t.counter("camera0.frames_corrupted"), 1u);
  EXPECT_GE(t.counter("camera0.dma_faults"), 1u);
}

}  // namespace
}  // namespace smmu_vp::test

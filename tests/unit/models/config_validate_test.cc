// The device and memory models' configuration checks (each struct's
// validate(), which its module's constructor makes): what a platform that
// fills in the structs itself (docs/embedding.md) is told, an InvalidConfig
// naming the field as the JSON names the parameter.
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "camera/camera.h"
#include "common/invalid_config.h"
#include "dma/dma_engine.h"
#include "memory/dram.h"
#include "memory/dram_core.h"
#include "nic/nic.h"
#include "nvme/nvme.h"

namespace smmu_vp {
namespace {

// The field InvalidConfig names after `change` is applied to the defaults;
// "" when validate() accepts it.
template <class Config>
std::string rejected(const std::function<void(Config&)>& change) {
  Config c;
  change(c);
  try {
    c.validate();
  } catch (const InvalidConfig& e) {
    return e.field();
  }
  return "";
}

TEST(DeviceConfigValidate, DefaultsAreValid) {
  EXPECT_EQ(rejected<NicConfig>([](NicConfig&) {}), "");
  EXPECT_EQ(rejected<NvmeConfig>([](NvmeConfig&) {}), "");
  EXPECT_EQ(rejected<DmaConfig>([](DmaConfig&) {}), "");
  EXPECT_EQ(rejected<CameraConfig>([](CameraConfig&) {}), "");
  EXPECT_EQ(rejected<DramConfig>([](DramConfig&) {}), "");
}

TEST(DeviceConfigValidate, Nic) {
  EXPECT_EQ(rejected<NicConfig>([](NicConfig& c) { c.queues = 0; }), "queues");
  EXPECT_EQ(rejected<NicConfig>([](NicConfig& c) { c.link_gbps = 0; }), "link_gbps");
  EXPECT_EQ(rejected<NicConfig>([](NicConfig& c) { c.rx_frame_bytes = 1515; }), "rx_frame_bytes");
  EXPECT_EQ(rejected<NicConfig>([](NicConfig& c) { c.mtu = 9000, c.rx_frame_bytes = 9014; }), "");
  EXPECT_EQ(rejected<NicConfig>([](NicConfig& c) { c.rx_frame_mix = FrameMix::kImix, c.mtu = 1000; }), "mtu");
  EXPECT_EQ(rejected<NicConfig>([](NicConfig& c) { c.rx_load_percent = 101; }), "rx_load_percent");
  EXPECT_EQ(rejected<NicConfig>([](NicConfig& c) { c.burst_bytes = 8192; }), "burst_bytes");
  EXPECT_EQ(rejected<NicConfig>([](NicConfig& c) { c.per_packet_ns = -1; }), "per_packet_ns");
}

TEST(DeviceConfigValidate, Nvme) {
  EXPECT_EQ(rejected<NvmeConfig>([](NvmeConfig& c) { c.lba_bytes = 1024; }), "lba_bytes");
  EXPECT_EQ(rejected<NvmeConfig>([](NvmeConfig& c) { c.lba_bytes = 512; }), "");
  EXPECT_EQ(rejected<NvmeConfig>([](NvmeConfig& c) { c.vectors = NVME_MAX_VECTORS + 1; }), "vectors");
  EXPECT_EQ(rejected<NvmeConfig>([](NvmeConfig& c) { c.parallelism = 0; }), "parallelism");
  EXPECT_EQ(rejected<NvmeConfig>([](NvmeConfig& c) { c.read_mbps = 0; }), "read_mbps");
}

TEST(DeviceConfigValidate, DmaCameraDram) {
  EXPECT_EQ(rejected<DmaConfig>([](DmaConfig& c) { c.channels = 0; }), "channels");
  EXPECT_EQ(rejected<DmaConfig>([](DmaConfig& c) { c.setup_ns = -5; }), "setup_ns");
  EXPECT_EQ(rejected<CameraConfig>([](CameraConfig& c) { c.burst_bytes = 384; }), "burst_bytes");
  EXPECT_EQ(rejected<CameraConfig>([](CameraConfig& c) { c.line_fifo_lines = 1 << 20; }), "line_fifo_lines");
  EXPECT_EQ(rejected<CameraConfig>([](CameraConfig& c) { c.fps = 0; }), "fps");
  EXPECT_EQ(rejected<DramConfig>([](DramConfig& c) { c.bandwidth_gbps = 0; }), "bandwidth_gbps");
  EXPECT_EQ(rejected<DramConfig>([](DramConfig& c) { c.read_latency_ns = -1; }), "read_latency_ns");
}

// The modules check before they exist (nothing is left in the hierarchy).
TEST(DeviceConfigValidate, ModulesThrowBeforeTheyExist) {
  StatsRegistry stats;
  NicConfig nic;
  nic.queues = 0;
  EXPECT_THROW(Nic("bad_nic", nic, nullptr, stats, nullptr), InvalidConfig);
  EXPECT_EQ(sc_core::sc_find_object("bad_nic"), nullptr);
  DramConfig dram;
  dram.bandwidth_gbps = -1;
  EXPECT_THROW(Dram("bad_dram", dram, stats), InvalidConfig);
  EXPECT_EQ(sc_core::sc_find_object("bad_dram"), nullptr);
}

}  // namespace
}  // namespace smmu_vp

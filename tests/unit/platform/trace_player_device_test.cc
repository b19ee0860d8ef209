// "type": "trace_player" in a platform's devices: the trace is read while the
// configuration is checked, relative to the scenario's directory, and a
// missing or malformed trace is a ConfigError naming the file and line.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "config/run_config.h"
#include "hal/hal.h"
#include "trace_player/trace_player_core.h"

namespace smmu_vp::config {
namespace {

int noop_main(void) { return 0; }
const hal_app kNoop = {"noop", "Does nothing.", noop_main, nullptr};

class TracePlayerDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "trace_player_device_test_" + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream out(dir_ + "/" + name);
    out << text;
  }
  json doc(const json& player) {
    json d = json::parse(R"({
      "platform": { "cpu": { "count": 1 }, "devices": {} },
      "scenario": { "apps": [ { "app": "noop", "cores": [0] } ] }
    })");
    d["platform"]["devices"]["tp0"] = player;
    return d;
  }
  RunConfig build(const json& player) { return build_run_config(doc(player), dir_, {}, {&kNoop}); }
  std::string dir_;
};

const char* kTrace =
    "smmu-vp-trace 1 ns\n"
    "100 map dir=from_device iova=0x10000 pa=0x80000000 size=8192\n"
    "150 access sid=4 rw=w iova=0x10040 size=64\n"
    "200 unmap dir=from_device iova=0x10000 size=8192\n";

TEST_F(TracePlayerDevice, ReadsTheTraceRelativeToTheScenario) {
  write("t.trace", kTrace);
  const RunConfig rc = build({{"type", "trace_player"}, {"base", "0x10000000"}, {"irq", 40}, {"stream_id", 4},
                              {"trace", "t.trace"}});
  ASSERT_EQ(rc.devices.size(), 1u);
  const DeviceConfig& d = rc.devices[0];
  EXPECT_EQ(d.size, uint64_t{TP_REG_SIZE});
  EXPECT_EQ(d.irq_lines, 0u);
  ASSERT_TRUE(d.prepared);
  const auto img = std::static_pointer_cast<const TraceImage>(d.prepared);
  EXPECT_EQ(img->records, 3u);
  EXPECT_EQ(img->slots, 1u);
  ASSERT_EQ(img->accesses.size(), 1u);
  // The map has no StreamID: the device's own, so the access finds it.
  EXPECT_EQ(img->accesses[0].sid, 4u);
  EXPECT_EQ(img->accesses[0].slot, 0u);
  EXPECT_EQ(img->accesses[0].offset, 0x40u);
  EXPECT_EQ(rc.resolved["platform"]["devices"]["tp0"]["channels"], 4);
  EXPECT_EQ(rc.resolved["platform"]["devices"]["tp0"]["burst_bytes"], 4096);
}

TEST_F(TracePlayerDevice, DefaultSidParameter) {
  write("t.trace", kTrace);
  const RunConfig rc = build({{"type", "trace_player"}, {"base", "0x10000000"}, {"irq", 40}, {"stream_id", 4},
                              {"trace", dir_ + "/t.trace"}, {"default_sid", 9}});
  const auto img = std::static_pointer_cast<const TraceImage>(rc.devices[0].prepared);
  EXPECT_EQ(img->accesses[0].sid, 4u);
  EXPECT_EQ(img->accesses[0].slot, TP_NO_SLOT);  // the map is StreamID 9's
  EXPECT_EQ(img->accesses_unmapped, 1u);
}

TEST_F(TracePlayerDevice, TraceIsRequired) {
  try {
    build({{"type", "trace_player"}, {"base", "0x10000000"}, {"irq", 40}});
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/platform/devices/tp0/trace") << e.what();
  }
}

TEST_F(TracePlayerDevice, MissingFileIsAConfigErrorNamingIt) {
  try {
    build({{"type", "trace_player"}, {"base", "0x10000000"}, {"irq", 40}, {"trace", "nope.trace"}});
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/platform/devices/tp0/trace");
    EXPECT_NE(std::string(e.what()).find(dir_ + "/nope.trace"), std::string::npos) << e.what();
  }
}

TEST_F(TracePlayerDevice, MalformedLineIsAConfigErrorNamingFileAndLine) {
  write("bad.trace", "smmu-vp-trace 1 ns\n100 map sid=4 iova=0x1000 size=4096\n200 teleport sid=4\n");
  try {
    build({{"type", "trace_player"}, {"base", "0x10000000"}, {"irq", 40}, {"trace", "bad.trace"}});
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/platform/devices/tp0/trace");
    EXPECT_NE(std::string(e.what()).find("bad.trace:3"), std::string::npos) << e.what();
  }
}

TEST_F(TracePlayerDevice, TooManySegmentsNamesTheLine) {
  std::string line = "5 map_sg sid=1 dir=to_device iova=0x100000 size=65536 segs=";
  for (int i = 0; i < 65536; ++i) line += (i ? "," : "") + std::string("0x80000000:1");
  write("sg.trace", "smmu-vp-trace 1 ns\n# many\n" + line + "\n");
  try {
    build({{"type", "trace_player"}, {"base", "0x10000000"}, {"irq", 40}, {"trace", "sg.trace"}});
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sg.trace:3: map_sg has 65536 segments"), std::string::npos) << e.what();
  }
}

// Issue 31: a FIFO as the trace blocked the configuration check forever.
TEST_F(TracePlayerDevice, AFifoIsNotReadAsATrace) {
  const std::string fifo = dir_ + "/fifo.trace";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  try {
    build({{"type", "trace_player"}, {"base", "0x10000000"}, {"irq", 40}, {"trace", "fifo.trace"}});
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/platform/devices/tp0/trace");
    EXPECT_NE(std::string(e.what()).find("fifo.trace: not a regular file"), std::string::npos) << e.what();
  }
}

// Issue 31: a small gzip of many lines once took gigabytes to load. The
// image must fit the DMA region it is loaded into, and the load stops at the
// first record past it: a 64 KiB region holds the 64-byte header and 1023
// records of 64 bytes.
TEST_F(TracePlayerDevice, AnImageLargerThanTheDmaRegionIsRefusedWhileItIsRead) {
  std::string text = "smmu-vp-trace 1 ns\n";
  for (int i = 0; i < 5000; ++i) text += std::to_string(i) + " access sid=4 rw=r iova=0x10040 size=64\n";
  write("big.trace", text);
  json d = doc({{"type", "trace_player"}, {"base", "0x10000000"}, {"irq", 40}, {"trace", "big.trace"}});
  d["platform"]["dram"]["dma_region"] = {{"size", 65536}};
  try {
    build_run_config(d, dir_, {}, {&kNoop});
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/platform/devices/tp0/trace");
    // Header line 1, records from line 2: the 1024th record is line 1025.
    EXPECT_NE(std::string(e.what()).find("big.trace:1025: here the trace's image outgrows the 64.00 KiB DMA region"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("platform.dram.dma_region.size"), std::string::npos) << e.what();
  }
  d["platform"]["dram"]["dma_region"]["size"] = 1 << 20;
  const RunConfig rc = build_run_config(d, dir_, {}, {&kNoop});
  EXPECT_EQ(std::static_pointer_cast<const TraceImage>(rc.devices[0].prepared)->records, 5000u);
}

// Too many synthesized accesses is a configuration error naming the
// parameter, not a run out of memory.
TEST_F(TracePlayerDevice, TooManySynthesizedAccessesNameTheLimit) {
  write("big.trace", "smmu-vp-trace 1 ns\n100 map sid=4 dir=to_device iova=0x10000 pa=0x80000000 size=1048576\n");
  try {
    build({{"type", "trace_player"}, {"base", "0x10000000"}, {"irq", 40}, {"trace", "big.trace"},
           {"synth_max_accesses", 100}});
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/platform/devices/tp0/trace");
    EXPECT_NE(std::string(e.what()).find("more than 100 synthesized device accesses (synth_max_accesses"),
              std::string::npos)
        << e.what();
  }
  const RunConfig rc = build({{"type", "trace_player"}, {"base", "0x10000000"}, {"irq", 40}, {"trace", "big.trace"},
                              {"synth_max_bytes", 65536}});
  EXPECT_EQ(std::static_pointer_cast<const TraceImage>(rc.devices[0].prepared)->accesses_synthesized, 16u);
}

}  // namespace
}  // namespace smmu_vp::config

// Device accesses synthesized for a trace without any (issue 32): pages of
// each mapping, their times from the class's delay and bandwidth, their
// direction from the DMA API, and the builder's merge and unmap waits.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "devices/trace_player_image.h"
#include "devices/trace_player_synth.h"

namespace smmu_vp {
namespace {

using dmatrace::Dir;
using dmatrace::Op;
using dmatrace::Record;

MappingSpan span(uint64_t open, uint64_t close, uint64_t iova, uint64_t size, bool reads, bool writes) {
  MappingSpan s;
  s.open_ns = open;
  s.close_ns = close;
  s.iova = iova;
  s.size = size;
  s.sid = 3;
  s.slot = 0;
  s.reads = reads;
  s.writes = writes;
  return s;
}

TEST(TracePlayerSynth, PagesOfIovaAtTheClassBandwidthAfterItsDelay) {
  SynthConfig cfg;
  cfg.generic = {2.0, 500.0};  // 2 bytes per ns
  // 0x1800 bytes from 0x10c00: pages cut at 0x11000 and 0x12000.
  const SynthResult r = synthesize_accesses({span(1000, ~0ull, 0x10c00, 0x1800, true, false)}, cfg);
  ASSERT_EQ(r.accesses.size(), 3u);
  EXPECT_EQ(r.accesses[0].offset, 0u);
  EXPECT_EQ(r.accesses[0].size, 0x400u);
  EXPECT_EQ(r.accesses[0].time_ns, 1500u);
  EXPECT_EQ(r.accesses[1].offset, 0x400u);
  EXPECT_EQ(r.accesses[1].size, 0x1000u);
  EXPECT_EQ(r.accesses[1].time_ns, 1500u + 0x400 / 2);
  EXPECT_EQ(r.accesses[2].offset, 0x1400u);
  EXPECT_EQ(r.accesses[2].size, 0x400u);
  EXPECT_EQ(r.accesses[2].time_ns, 1500u + 0x1400 / 2);
  for (const PlayerAccess& a : r.accesses) {
    EXPECT_FALSE(a.write);
    EXPECT_EQ(a.sid, 3u);
  }
  EXPECT_EQ(r.late, 0u);
}

TEST(TracePlayerSynth, DirectionsAndNothingToMove) {
  SynthConfig cfg;
  const SynthResult w = synthesize_accesses({span(0, ~0ull, 0, 4096, false, true)}, cfg);
  ASSERT_EQ(w.accesses.size(), 1u);
  EXPECT_TRUE(w.accesses[0].write);
  // Bidirectional: each page read, then written.
  const SynthResult b = synthesize_accesses({span(0, ~0ull, 0, 8192, true, true)}, cfg);
  ASSERT_EQ(b.accesses.size(), 4u);
  EXPECT_FALSE(b.accesses[0].write);
  EXPECT_TRUE(b.accesses[1].write);
  EXPECT_EQ(b.accesses[1].offset, 0u);
  EXPECT_EQ(b.accesses[2].offset, 4096u);
  EXPECT_TRUE(synthesize_accesses({span(0, ~0ull, 0, 0, true, true), span(0, ~0ull, 0, 4096, false, false)}, cfg)
                  .accesses.empty());
}

// The driver unmaps once the device is done: pages the bandwidth would put
// after the unmap come just before it, and are counted.
TEST(TracePlayerSynth, PagesPastTheUnmapMoveToIt) {
  SynthConfig cfg;
  cfg.generic = {1.0, 100.0};
  const SynthResult r = synthesize_accesses({span(0, 5000, 0, 4 * 4096, true, false)}, cfg);
  ASSERT_EQ(r.accesses.size(), 4u);
  EXPECT_EQ(r.accesses[0].time_ns, 100u);
  EXPECT_EQ(r.accesses[1].time_ns, 4196u);
  EXPECT_EQ(r.accesses[2].time_ns, 5000u);
  EXPECT_EQ(r.accesses[3].time_ns, 5000u);
  EXPECT_EQ(r.late, 2u);
}

// A few lines of trace must not make billions of accesses (found by
// fuzz_dma_trace: a map of 2^40 bytes ran the harness out of memory). A
// mapping gives at most max_bytes, and all of them at most max_accesses.
TEST(TracePlayerSynth, AMappingMovesAtMostMaxBytesAndTheTotalIsBounded) {
  SynthConfig cfg;
  cfg.max_bytes = 3 * 4096;
  const SynthResult r = synthesize_accesses({span(0, ~0ull, 0, 1ull << 40, true, false)}, cfg);
  ASSERT_EQ(r.accesses.size(), 3u);
  EXPECT_EQ(r.accesses[2].offset, 2u * 4096);
  cfg.max_accesses = 5;
  EXPECT_THROW(synthesize_accesses({span(0, ~0ull, 0, 1ull << 40, true, false), span(0, ~0ull, 0, 1ull << 40, true, false)},
                                   cfg),
               std::length_error);
}

TEST(TracePlayerSynth, ClassByDeviceNameThenStreamId) {
  SynthConfig cfg;
  cfg.classes = {{"0000:01:00.0", DeviceClass::kNvme}, {"7", DeviceClass::kNic}};
  cfg.default_class = DeviceClass::kBlock;
  EXPECT_EQ(cfg.class_of("0000:01:00.0", 7), DeviceClass::kNvme);
  EXPECT_EQ(cfg.class_of("0000:02:00.0", 7), DeviceClass::kNic);
  EXPECT_EQ(cfg.class_of("", 8), DeviceClass::kBlock);
  EXPECT_EQ(cfg.timing(DeviceClass::kNic).gbytes_per_s, 12.5);
}

Record rec(uint64_t t, Op op, uint64_t iova, uint64_t size, Dir dir = Dir::kToDevice) {
  Record r;
  r.time_ns = t;
  r.op = op;
  r.iova = iova;
  r.size = size;
  r.sid = 5;
  r.dir = dir;
  return r;
}

uint32_t aux_of(const TraceImage& img, uint32_t i) {
  tp_record r;
  std::memcpy(&r, img.bytes.data() + sizeof(tp_image_header) + i * sizeof(tp_record), sizeof r);
  return r.aux;
}

TraceImage build(const std::vector<Record>& in, SynthConfig::Mode mode) {
  SynthConfig cfg;
  cfg.mode = mode;
  cfg.generic = {1.0, 10.0};
  TraceImageBuilder b(0, cfg);
  for (const Record& r : in) b.add(r);
  return b.finish();
}

// A trace of DMA-API calls only: the device reads the to_device buffer, and
// the unmap waits for those reads; a coherent allocation gets nothing.
TEST(TracePlayerSynth, AutoFillsATraceWithoutAccessesAndUnmapsWaitForThem) {
  const std::vector<Record> in{rec(0, Op::kMap, 0x10000, 8192), rec(0, Op::kAlloc, 0x40000, 4096),
                               rec(100000, Op::kUnmap, 0x10000, 8192)};
  const TraceImage img = build(in, SynthConfig::Mode::kAuto);
  ASSERT_EQ(img.accesses.size(), 2u);
  EXPECT_EQ(img.accesses_synthesized, 2u);
  EXPECT_EQ(img.accesses[0].slot, 0u);
  EXPECT_EQ(img.accesses[1].offset, 4096u);
  EXPECT_EQ(img.accesses[1].time_ns, 10u + 4096u);
  EXPECT_EQ(aux_of(img, 2), 2u);  // the unmap waits until both are done
  EXPECT_EQ(build(in, SynthConfig::Mode::kOff).accesses.size(), 0u);
}

// A trace with accesses of its own keeps them alone under auto; "on" merges
// the made-up ones in time order, the trace's first at equal times, and the
// unmap waits for the last of either.
TEST(TracePlayerSynth, OnMergesBesideTheTracesOwnAccesses) {
  Record own = rec(10, Op::kAccess, 0x10000, 64);
  own.write = true;
  const std::vector<Record> in{rec(0, Op::kMap, 0x10000, 4096, Dir::kFromDevice), own,
                               rec(50, Op::kUnmap, 0x10000, 4096)};
  const TraceImage a = build(in, SynthConfig::Mode::kAuto);
  EXPECT_EQ(a.accesses.size(), 1u);
  EXPECT_EQ(a.accesses_synthesized, 0u);
  const TraceImage on = build(in, SynthConfig::Mode::kOn);
  ASSERT_EQ(on.accesses.size(), 2u);
  EXPECT_EQ(on.accesses[0].size, 64u);  // the trace's own, at 10
  EXPECT_EQ(on.accesses[1].size, 4096u);  // made up, at 10 too
  EXPECT_TRUE(on.accesses[1].write);
  EXPECT_EQ(aux_of(on, 2), 2u);
}

}  // namespace
}  // namespace smmu_vp

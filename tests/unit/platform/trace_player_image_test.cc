// The trace player's image builder: layout, order, slots, the live-mapping
// index per StreamID, unmap waits, segments, and the problems it counts.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "devices/trace_player_image.h"

namespace smmu_vp {
namespace {

using dmatrace::Dir;
using dmatrace::Op;
using dmatrace::Record;

Record rec(uint64_t t, Op op, uint64_t iova, uint64_t size, uint32_t sid = 5) {
  Record r;
  r.time_ns = t;
  r.op = op;
  r.iova = iova;
  r.size = size;
  r.sid = sid;
  return r;
}
Record access(uint64_t t, uint64_t iova, uint64_t size, bool write, uint32_t sid = 5) {
  Record r = rec(t, Op::kAccess, iova, size, sid);
  r.write = write;
  return r;
}

tp_image_header header(const TraceImage& img) {
  tp_image_header h;
  std::memcpy(&h, img.bytes.data(), sizeof h);
  return h;
}
tp_record record(const TraceImage& img, uint32_t i) {
  tp_record r;
  std::memcpy(&r, img.bytes.data() + sizeof(tp_image_header) + i * sizeof(tp_record), sizeof r);
  return r;
}
tp_segment segment(const TraceImage& img, uint32_t i) {
  tp_segment s;
  std::memcpy(&s, img.bytes.data() + sizeof(tp_image_header) + img.records * sizeof(tp_record) + i * sizeof(tp_segment),
              sizeof s);
  return s;
}

TEST(TracePlayerImage, EmptyTraceIsAHeader) {
  const TraceImage img = build_trace_image({}, 0);
  ASSERT_EQ(img.bytes.size(), sizeof(tp_image_header));
  const tp_image_header h = header(img);
  EXPECT_EQ(h.magic, TP_IMAGE_MAGIC);
  EXPECT_EQ(h.version, TP_VERSION_VALUE);
  EXPECT_EQ(h.records, 0u);
  EXPECT_EQ(h.slots, 0u);
  EXPECT_EQ(h.flags, 0u);
  EXPECT_TRUE(img.accesses.empty());
}

TEST(TracePlayerImage, LayoutAndFields) {
  Record m = rec(1000, Op::kMap, 0x10000, 0x2000);
  m.pa = 0x8000'0000;
  m.dir = Dir::kFromDevice;
  m.cpu = 2;
  std::vector<Record> in{m, access(1500, 0x10100, 64, true), rec(2500, Op::kUnmap, 0x10000, 0x2000)};
  in[2].dir = Dir::kFromDevice;
  const TraceImage img = build_trace_image(in, 0);
  ASSERT_EQ(img.bytes.size(), sizeof(tp_image_header) + 3 * sizeof(tp_record));
  EXPECT_EQ(img.bytes.size() % 8, 0u);
  const tp_image_header h = header(img);
  EXPECT_EQ(h.records, 3u);
  EXPECT_EQ(h.segments, 0u);
  EXPECT_EQ(h.slots, 1u);
  EXPECT_EQ(h.flags, TP_IMAGE_HAS_DMA_API);
  EXPECT_EQ(h.duration_ns, 1500u);
  EXPECT_EQ(h.unmatched, 0u);
  EXPECT_EQ(h.overlapping, 0u);

  const tp_record r0 = record(img, 0), r1 = record(img, 1), r2 = record(img, 2);
  EXPECT_EQ(r0.op, TP_OP_MAP);
  EXPECT_EQ(r0.time_ns, 0u);
  EXPECT_EQ(r0.iova, 0x10000u);
  EXPECT_EQ(r0.pa, 0x8000'0000u);
  EXPECT_EQ(r0.size, 0x2000u);
  EXPECT_EQ(r0.sid, 5u);
  EXPECT_EQ(r0.cpu, 2);
  EXPECT_EQ(r0.slot, 0u);
  EXPECT_EQ(r0.dir, 2u);  // DMA_FROM_DEVICE
  EXPECT_EQ(r0.offset, 0u);

  EXPECT_EQ(r1.op, TP_OP_ACCESS);
  EXPECT_EQ(r1.time_ns, 500u);
  EXPECT_EQ(r1.slot, 0u);
  EXPECT_EQ(r1.offset, 0x100u);
  EXPECT_EQ(r1.dir, 1u);  // a write
  EXPECT_EQ(r1.cpu, TP_NO_CPU);
  EXPECT_EQ(r1.pa, TP_NO_ADDR);

  EXPECT_EQ(r2.op, TP_OP_UNMAP);
  EXPECT_EQ(r2.slot, 0u);
  EXPECT_EQ(r2.aux, 1u);  // waits for access 0

  ASSERT_EQ(img.accesses.size(), 1u);
  const PlayerAccess& a = img.accesses[0];
  EXPECT_EQ(a.time_ns, 500u);
  EXPECT_EQ(a.sid, 5u);
  EXPECT_EQ(a.slot, 0u);
  EXPECT_EQ(a.offset, 0x100u);
  EXPECT_EQ(a.size, 64u);
  EXPECT_TRUE(a.write);
}

TEST(TracePlayerImage, OutOfOrderRecordsAreStablySorted) {
  // The access comes first in the file but after the map in time; two
  // records at the same time keep their file order.
  std::vector<Record> in{access(300, 0x1000, 8, false), rec(100, Op::kMap, 0x1000, 0x1000),
                         rec(300, Op::kSyncForCpu, 0x1000, 8), rec(50, Op::kAttach, dmatrace::kNoAddr, 0)};
  in[3].asid = 7;
  const TraceImage img = build_trace_image(in, 0);
  ASSERT_EQ(img.records, 4u);
  EXPECT_EQ(record(img, 0).op, TP_OP_ATTACH);
  EXPECT_EQ(record(img, 0).aux, 7u);
  EXPECT_EQ(record(img, 1).op, TP_OP_MAP);
  EXPECT_EQ(record(img, 1).time_ns, 50u);
  EXPECT_EQ(record(img, 2).op, TP_OP_ACCESS);
  EXPECT_EQ(record(img, 2).slot, 0u);
  EXPECT_EQ(record(img, 3).op, TP_OP_SYNC_FOR_CPU);
  EXPECT_EQ(record(img, 3).slot, 0u);
  EXPECT_EQ(img.accesses_unmapped, 0u);
  EXPECT_EQ(img.duration_ns, 250u);
}

TEST(TracePlayerImage, AttachWithoutAsidIsAllOnes) {
  const TraceImage img = build_trace_image({rec(0, Op::kAttach, dmatrace::kNoAddr, 0)}, 0);
  EXPECT_EQ(record(img, 0).aux, 0xffffffffu);
  EXPECT_EQ(record(img, 0).slot, TP_NO_SLOT);
}

TEST(TracePlayerImage, SlotsAreNumberedInOrderAndResolvedByStreamId) {
  // The same iova in two StreamIDs is two mappings.
  std::vector<Record> in{rec(0, Op::kMap, 0x1000, 0x1000, 1), rec(1, Op::kAlloc, 0x1000, 0x1000, 2),
                         rec(2, Op::kIommuMap, 0x9000, 0x1000, 1), access(3, 0x1800, 4, false, 2),
                         access(4, 0x1800, 4, false, 1), access(5, 0x9000, 4, false, 1)};
  const TraceImage img = build_trace_image(in, 0);
  EXPECT_EQ(img.slots, 2u);  // the iommu_map is implied by the DMA-API maps
  EXPECT_EQ(record(img, 0).slot, 0u);
  EXPECT_EQ(record(img, 1).slot, 1u);
  ASSERT_EQ(img.accesses.size(), 3u);
  EXPECT_EQ(img.accesses[0].slot, 1u);
  EXPECT_EQ(img.accesses[0].offset, 0x800u);
  EXPECT_EQ(img.accesses[1].slot, 0u);
  // With DMA-API maps present, iommu_map is implied: no slot, not indexed.
  EXPECT_EQ(record(img, 2).slot, TP_NO_SLOT);
  EXPECT_EQ(img.accesses[2].slot, TP_NO_SLOT);
  EXPECT_EQ(img.accesses_unmapped, 1u);
}

TEST(TracePlayerImage, IommuOnlyTracesUseIommuMapSlots) {
  std::vector<Record> in{rec(0, Op::kIommuMap, 0x40000, 0x10000), access(10, 0x4f000, 0x1000, true),
                         rec(20, Op::kIommuUnmap, 0x40000, 0x10000), access(30, 0x4f000, 0x1000, true)};
  const TraceImage img = build_trace_image(in, 0);
  EXPECT_EQ(img.flags, 0u);
  EXPECT_EQ(img.slots, 1u);
  EXPECT_EQ(img.accesses[0].slot, 0u);
  EXPECT_EQ(img.accesses[0].offset, 0xf000u);
  EXPECT_EQ(record(img, 2).slot, 0u);
  EXPECT_EQ(record(img, 2).aux, 1u);
  // After the unmap the range is not live any more.
  EXPECT_EQ(img.accesses[1].slot, TP_NO_SLOT);
  EXPECT_EQ(img.accesses_unmapped, 1u);
  EXPECT_EQ(img.unmatched, 0u);
}

// A scatterlist mapped by dma-iommu: one IOVA range, an iommu:map event per
// piece, one iommu:unmap of the whole range (Linux's iommu_unmap ends all
// that is mapped in its range). Every piece ends there, the unmap waits for
// the accesses to all of them, and the range can be mapped again.
TEST(TracePlayerImage, IommuUnmapEndsEveryPieceInItsRange) {
  std::vector<Record> in{rec(0, Op::kIommuMap, 0x80000, 0x1000),  rec(1, Op::kIommuMap, 0x81000, 0x2000),
                         rec(2, Op::kIommuMap, 0x83000, 0x1000),  access(3, 0x81800, 64, true),
                         access(4, 0x80000, 64, true),            rec(5, Op::kIommuUnmap, 0x80000, 0x4000),
                         rec(6, Op::kIommuMap, 0x82000, 0x1000),  access(7, 0x83000, 64, false)};
  const TraceImage img = build_trace_image(in, 0);
  EXPECT_EQ(record(img, 5).slot, 0u);
  EXPECT_EQ(record(img, 5).aux, 2u);  // after both accesses: index 1, plus one
  EXPECT_EQ(img.overlapping, 0u);     // the map at 0x82000 is over nothing live
  EXPECT_EQ(img.unmatched, 0u);
  EXPECT_EQ(img.accesses[2].slot, TP_NO_SLOT);  // the third piece ended too
  EXPECT_EQ(img.accesses_unmapped, 1u);
}

TEST(TracePlayerImage, UnmapWaitsForTheLastAccessToItsSlotOnly) {
  std::vector<Record> in{rec(0, Op::kMap, 0x1000, 0x1000),  rec(1, Op::kMap, 0x5000, 0x1000),
                         access(2, 0x1000, 4, false),        access(3, 0x5000, 4, false),
                         access(4, 0x1004, 4, false),        access(5, 0x5004, 4, true),
                         rec(6, Op::kUnmap, 0x1000, 0x1000), rec(7, Op::kMap, 0x7000, 0x1000),
                         rec(8, Op::kUnmap, 0x7000, 0x1000)};
  const TraceImage img = build_trace_image(in, 0);
  EXPECT_EQ(record(img, 6).slot, 0u);
  EXPECT_EQ(record(img, 6).aux, 3u);  // access index 2, plus one
  EXPECT_EQ(record(img, 8).slot, 2u);
  EXPECT_EQ(record(img, 8).aux, 0u);  // no access to it
}

TEST(TracePlayerImage, UnmatchedUsersAreCounted) {
  std::vector<Record> in{rec(0, Op::kUnmap, 0x1000, 0x1000), rec(1, Op::kSyncForDevice, 0x2000, 8),
                         rec(2, Op::kFree, 0x3000, 8),     rec(3, Op::kFault, 0x4000, 0),
                         access(4, 0x5000, 8, false),      rec(5, Op::kMap, 0x6000, 0x1000),
                         rec(6, Op::kUnmap, 0x6000, 0x1000), rec(7, Op::kUnmap, 0x6000, 0x1000)};
  const TraceImage img = build_trace_image(in, 0);
  EXPECT_EQ(img.unmatched, 4u);  // unmap, sync, free, and the second unmap; not the fault
  EXPECT_EQ(img.accesses_unmapped, 1u);
  EXPECT_EQ(header(img).unmatched, 4u);
  EXPECT_EQ(record(img, 0).slot, TP_NO_SLOT);
  EXPECT_EQ(record(img, 3).slot, TP_NO_SLOT);
  EXPECT_EQ(record(img, 6).slot, 0u);
  EXPECT_EQ(record(img, 7).slot, TP_NO_SLOT);
}

TEST(TracePlayerImage, FaultsResolveToTheirSlotWhenMapped) {
  Record f = rec(1, Op::kFault, 0x1010, 0);
  f.write = true;
  const TraceImage img = build_trace_image({rec(0, Op::kMap, 0x1000, 0x100), f}, 0);
  EXPECT_EQ(record(img, 1).slot, 0u);
  EXPECT_EQ(record(img, 1).offset, 0x10u);
  EXPECT_EQ(record(img, 1).dir, 1u);
  EXPECT_EQ(img.unmatched, 0u);
}

TEST(TracePlayerImage, OverlappingMapTakesOverTheRange) {
  std::vector<Record> in{rec(0, Op::kMap, 0x1000, 0x2000), rec(1, Op::kMap, 0x5000, 0x1000),
                         rec(2, Op::kMap, 0x2000, 0x4000),  // over both
                         access(3, 0x1000, 4, false),        access(4, 0x5000, 4, false),
                         rec(5, Op::kMap, 0x1000, 0x1000, 6)};  // another StreamID: no overlap
  const TraceImage img = build_trace_image(in, 0);
  EXPECT_EQ(img.overlapping, 1u);
  EXPECT_EQ(header(img).overlapping, 1u);
  // The old mappings are no longer live: even the part the new one leaves out.
  EXPECT_EQ(img.accesses[0].slot, TP_NO_SLOT);
  EXPECT_EQ(img.accesses[1].slot, 2u);
  EXPECT_EQ(img.accesses[1].offset, 0x3000u);
}

TEST(TracePlayerImage, AdjacentMappingsDoNotOverlap) {
  std::vector<Record> in{rec(0, Op::kMap, 0x1000, 0x1000), rec(1, Op::kMap, 0x2000, 0x1000),
                         rec(2, Op::kMap, 0x0, 0x1000), access(3, 0x1fff, 1, false), access(4, 0x2000, 1, false),
                         access(5, 0xfff, 1, false)};
  const TraceImage img = build_trace_image(in, 0);
  EXPECT_EQ(img.overlapping, 0u);
  EXPECT_EQ(img.accesses[0].slot, 0u);
  EXPECT_EQ(img.accesses[1].slot, 1u);
  EXPECT_EQ(img.accesses[2].slot, 2u);
}

TEST(TracePlayerImage, ScatterGatherSegments) {
  Record m = rec(0, Op::kMapSg, 0x10000, 0x3000);
  m.segs = {{0x8000'0000, 0x1000}, {0x8010'0000, 0x2000}};
  Record m2 = rec(1, Op::kMapSg, 0x20000, 0x1000);
  m2.segs = {{0x8020'0000, 0x1000}};
  Record u = rec(3, Op::kUnmapSg, 0x10000, 0x3000);
  u.segs = m.segs;
  Record u2 = rec(4, Op::kUnmapSg, 0x20000, 0x1000);  // no segments given
  const TraceImage img = build_trace_image({m, m2, access(2, 0x12000, 0x800, true), u, u2}, 0);
  EXPECT_EQ(img.segments, 3u);
  EXPECT_EQ(header(img).segments, 3u);
  EXPECT_EQ(img.bytes.size(), sizeof(tp_image_header) + 5 * sizeof(tp_record) + 3 * sizeof(tp_segment));
  EXPECT_EQ(record(img, 0).aux, 0u);
  EXPECT_EQ(record(img, 0).nsegs, 2u);
  EXPECT_EQ(record(img, 1).aux, 2u);
  EXPECT_EQ(record(img, 1).nsegs, 1u);
  EXPECT_EQ(record(img, 1).slot, 1u);
  // unmap_sg: aux is the wait (access 0, plus one); no segments of its own.
  EXPECT_EQ(record(img, 3).op, TP_OP_UNMAP_SG);
  EXPECT_EQ(record(img, 3).slot, 0u);
  EXPECT_EQ(record(img, 3).aux, 1u);
  EXPECT_EQ(record(img, 3).nsegs, 0u);
  EXPECT_EQ(record(img, 4).nsegs, 0u);
  EXPECT_EQ(record(img, 4).slot, 1u);
  EXPECT_EQ(record(img, 4).aux, 0u);
  EXPECT_EQ(segment(img, 0).pa, 0x8000'0000u);
  EXPECT_EQ(segment(img, 1).pa, 0x8010'0000u);
  EXPECT_EQ(segment(img, 1).len, 0x2000u);
  EXPECT_EQ(segment(img, 2).pa, 0x8020'0000u);
  EXPECT_EQ(img.accesses[0].slot, 0u);
  EXPECT_EQ(img.accesses[0].offset, 0x2000u);
}

// The builder keeps the segments in file order while it reads; a file out
// of time order gets them in the order of their records, as the image lays
// them out.
TEST(TracePlayerImage, SegmentsFollowTheirRecordsIntoTimeOrder) {
  Record late = rec(20, Op::kMapSg, 0x10000, 0x1000);
  late.segs = {{0xa000'0000, 0x1000}};
  Record early = rec(10, Op::kMapSg, 0x20000, 0x2000);
  early.segs = {{0xb000'0000, 0x1000}, {0xb010'0000, 0x1000}};
  const TraceImage img = build_trace_image({late, early}, 0);
  ASSERT_EQ(img.segments, 3u);
  EXPECT_EQ(record(img, 0).time_ns, 0u);
  EXPECT_EQ(record(img, 0).aux, 0u);
  EXPECT_EQ(record(img, 0).nsegs, 2u);
  EXPECT_EQ(record(img, 1).aux, 2u);
  EXPECT_EQ(segment(img, 0).pa, 0xb000'0000u);
  EXPECT_EQ(segment(img, 1).pa, 0xb010'0000u);
  EXPECT_EQ(segment(img, 2).pa, 0xa000'0000u);
}

// Records go in one at a time; image_bytes() is what the image will take.
TEST(TracePlayerImage, BuilderCountsTheImageAsItGrows) {
  TraceImageBuilder b(0);
  EXPECT_EQ(b.image_bytes(), sizeof(tp_image_header));
  Record m = rec(0, Op::kMapSg, 0x10000, 0x2000);
  m.segs = {{0xa000'0000, 0x1000}, {0xa010'0000, 0x1000}};
  b.add(m);
  b.add(rec(1, Op::kCommand, 0, 0));  // dropped: takes nothing
  b.add(access(2, 0x10000, 64, false));
  EXPECT_EQ(b.image_bytes(), sizeof(tp_image_header) + 2 * sizeof(tp_record) + 2 * sizeof(tp_segment));
  const TraceImage img = b.finish();
  EXPECT_EQ(img.bytes.size(), sizeof(tp_image_header) + 2 * sizeof(tp_record) + 2 * sizeof(tp_segment));
  EXPECT_EQ(img.commands_dropped, 1u);
  EXPECT_EQ(img.accesses[0].slot, 0u);
}

TEST(TracePlayerImage, TooManySegmentsIsAnError) {
  Record m = rec(0, Op::kMapSg, 0x10000, 0);
  m.segs.resize(65536, {0x1000, 1});
  Record ok = m;
  ok.segs.resize(65535);
  EXPECT_EQ(build_trace_image({ok}, 0).segments, 65535u);
  try {
    build_trace_image({rec(0, Op::kAttach, dmatrace::kNoAddr, 0), m}, 0);
    FAIL() << "no error";
  } catch (const TraceImageError& e) {
    EXPECT_EQ(e.record(), 1u);
    EXPECT_NE(std::string(e.what()).find("65536"), std::string::npos);
  }
}

TEST(TracePlayerImage, RecordsWithoutStreamIdGetTheDefault) {
  std::vector<Record> in{rec(0, Op::kMap, 0x1000, 0x1000, dmatrace::kNoSid), access(1, 0x1000, 4, false, 9),
                         access(2, 0x1000, 4, false, dmatrace::kNoSid)};
  const TraceImage img = build_trace_image(in, 9);
  EXPECT_EQ(record(img, 0).sid, 9u);
  EXPECT_EQ(img.accesses[0].slot, 0u);
  EXPECT_EQ(img.accesses[1].sid, 9u);
  EXPECT_EQ(img.accesses[1].slot, 0u);
}

TEST(TracePlayerImage, CommandsAreDropped) {
  Record c = rec(0, Op::kCommand, dmatrace::kNoAddr, 0);
  c.text = "CMD_SYNC";
  const TraceImage img = build_trace_image({c, rec(100, Op::kMap, 0x1000, 0x1000), c}, 0);
  EXPECT_EQ(img.records, 1u);
  EXPECT_EQ(img.commands_dropped, 2u);
  EXPECT_EQ(record(img, 0).time_ns, 0u);  // time 0 is the first record kept
}

TEST(TracePlayerImage, AccessWithoutAddressIsUnmapped) {
  const TraceImage img =
      build_trace_image({rec(0, Op::kMap, 0x1000, 0x1000), access(1, dmatrace::kNoAddr, 4, false)}, 0);
  EXPECT_EQ(img.accesses[0].slot, TP_NO_SLOT);
  EXPECT_EQ(img.accesses_unmapped, 1u);
}

TEST(TracePlayerImage, MapWithoutAddressOpensASlotNothingFinds) {
  const TraceImage img = build_trace_image(
      {rec(0, Op::kMap, dmatrace::kNoAddr, 0x1000), rec(1, Op::kUnmap, dmatrace::kNoAddr, 0x1000)}, 0);
  EXPECT_EQ(img.slots, 1u);
  EXPECT_EQ(record(img, 0).slot, 0u);
  EXPECT_EQ(record(img, 1).slot, TP_NO_SLOT);
  EXPECT_EQ(img.unmatched, 1u);
}

TEST(TracePlayerImage, MappingAtTheTopOfTheAddressSpace) {
  const TraceImage img =
      build_trace_image({rec(0, Op::kMap, ~0ull - 0xfff, 0x1000), access(1, ~0ull - 1, 1, false)}, 0);
  EXPECT_EQ(img.accesses[0].slot, 0u);
  EXPECT_EQ(img.accesses[0].offset, 0xffeu);
}

TEST(TracePlayerImage, ManyMappingsStayFast) {
  // 200k maps, accesses and unmaps: an O(n^2) index would take minutes.
  std::vector<Record> in;
  const uint64_t n = 200000;
  for (uint64_t i = 0; i < n; ++i) {
    in.push_back(rec(i * 3, Op::kMap, 0x100000 + i * 0x1000, 0x1000));
    in.push_back(access(i * 3 + 1, 0x100000 + i * 0x1000 + 8, 64, false));
    if (i >= 10) in.push_back(rec(i * 3 + 2, Op::kUnmap, 0x100000 + (i - 10) * 0x1000, 0x1000));
  }
  const TraceImage img = build_trace_image(std::move(in), 0);
  EXPECT_EQ(img.slots, n);
  EXPECT_EQ(img.accesses.size(), n);
  EXPECT_EQ(img.unmatched, 0u);
  EXPECT_EQ(img.accesses.back().slot, n - 1);
}

// ---- Phases (dmatrace/phases.h) ----------------------------------------------

Record mark(uint64_t t, const std::string& text) {
  Record r;
  r.time_ns = t;
  r.op = Op::kMark;
  r.text = text;
  return r;
}

TEST(TracePlayerImage, WithoutPhaseMarkersNoPhases) {
  const TraceImage img = build_trace_image({rec(10, Op::kMap, 0x1000, 4096), mark(15, "a note"),
                                            rec(20, Op::kUnmap, 0x1000, 4096)},
                                           0);
  EXPECT_TRUE(img.phases.empty());
  EXPECT_EQ(header(img).flags & TP_IMAGE_HAS_PHASES, 0u);
  EXPECT_EQ(img.records, 2u);  // markers are not records of the image
  EXPECT_EQ(record(img, 0).phase, 0u);
  EXPECT_EQ(record(img, 1).phase, 0u);
}

TEST(TracePlayerImage, RecordsAndAccessesGetThePhaseTheyFallIn) {
  // Out of order in the file; at equal times the file order decides.
  const TraceImage img = build_trace_image({rec(100, Op::kMap, 0x1000, 8192),  // before any marker
                                            mark(200, "phase read"),
                                            access(200, 0x1000, 64, false),    // after the marker in the file
                                            rec(400, Op::kUnmap, 0x1000, 8192),
                                            mark(300, "phase write"),          // sorts before the unmap
                                            access(300, 0x1400, 64, true),
                                            mark(250, "not a phase"),
                                            rec(150, Op::kMap, 0x9000, 4096)},
                                           0);
  ASSERT_EQ(img.phases.size(), 3u);
  EXPECT_EQ(header(img).flags & TP_IMAGE_HAS_PHASES, TP_IMAGE_HAS_PHASES);
  EXPECT_EQ(img.phases[0].name, "(before first phase)");
  EXPECT_EQ(img.phases[1].name, "read");
  EXPECT_EQ(img.phases[1].time_ns, 100u);  // since the first record
  EXPECT_EQ(img.phases[2].name, "write");
  EXPECT_EQ(img.phases[2].time_ns, 200u);
  ASSERT_EQ(img.records, 5u);
  // In time order: map@100, map@150, access@200, access@300, unmap@400.
  EXPECT_EQ(record(img, 0).phase, 0u);
  EXPECT_EQ(record(img, 1).phase, 0u);
  EXPECT_EQ(record(img, 2).phase, 1u);
  EXPECT_EQ(record(img, 3).phase, 2u);
  EXPECT_EQ(record(img, 4).phase, 2u);
  EXPECT_EQ(img.phases[0].records, 2u);
  EXPECT_EQ(img.phases[1].records, 1u);
  EXPECT_EQ(img.phases[2].records, 2u);
  ASSERT_EQ(img.accesses.size(), 2u);
  EXPECT_EQ(img.accesses[0].phase, 1u);
  EXPECT_EQ(img.accesses[1].phase, 2u);
  EXPECT_EQ(img.phases[1].accesses, 1u);
  EXPECT_EQ(img.phases[2].accesses, 1u);
}

TEST(TracePlayerImage, AMarkerAtARecordsTimeGoesByFileOrder) {
  const TraceImage img = build_trace_image({rec(10, Op::kMap, 0x1000, 4096), mark(10, "phase x"),
                                            rec(10, Op::kMap, 0x3000, 4096)},
                                           0);
  EXPECT_EQ(record(img, 0).phase, 0u);
  EXPECT_EQ(record(img, 1).phase, 1u);
}

TEST(TracePlayerImage, SynthesizedAccessesGetThePhaseOfTheirTime) {
  SynthConfig synth;
  synth.mode = SynthConfig::Mode::kOn;
  synth.generic = {4.0, 0.0};  // the first page at the map
  TraceImageBuilder b(0, synth);
  b.add(rec(1000, Op::kMap, 0x1000, 4096));
  b.add(rec(2000, Op::kUnmap, 0x1000, 4096));
  b.add(mark(5000, "phase later"));
  b.add(rec(6000, Op::kMap, 0x1000, 8192));
  b.add(rec(9000, Op::kUnmap, 0x1000, 8192));
  const TraceImage img = b.finish();
  ASSERT_EQ(img.accesses.size(), 3u);
  EXPECT_EQ(img.accesses[0].phase, 0u);
  EXPECT_EQ(img.accesses[1].phase, 1u);
  EXPECT_EQ(img.accesses[2].phase, 1u);
  EXPECT_EQ(img.phases[0].accesses, 1u);
  EXPECT_EQ(img.phases[1].accesses, 2u);
}

}  // namespace
}  // namespace smmu_vp

// Phases of a trace (dmatrace/phases.h): which markers open one, and what
// `trace stats` counts in each.
#include "dmatrace/phases.h"

#include <gtest/gtest.h>

namespace smmu_vp::dmatrace {
namespace {

Record mark(uint64_t t, const std::string& text) {
  Record r;
  r.time_ns = t;
  r.op = Op::kMark;
  r.text = text;
  return r;
}

Record rec(uint64_t t, Op op, uint64_t size) {
  Record r;
  r.time_ns = t;
  r.op = op;
  r.iova = 0x1000;
  r.size = size;
  return r;
}

TEST(Phases, OnlyPhaseMarkersWithANameOpenAPhase) {
  EXPECT_EQ(phase_name(mark(0, "phase nvme-read-4k")), "nvme-read-4k");
  EXPECT_EQ(phase_name(mark(0, "phase \t two words \n")), "two words");
  EXPECT_EQ(phase_name(mark(0, "phase")), std::nullopt);
  EXPECT_EQ(phase_name(mark(0, "phase   ")), std::nullopt);
  EXPECT_EQ(phase_name(mark(0, "phases x")), std::nullopt);
  EXPECT_EQ(phase_name(mark(0, "Phase x")), std::nullopt);
  EXPECT_EQ(phase_name(mark(0, "TRACE_MARKER_START")), std::nullopt);
  Record not_a_mark = rec(0, Op::kCommand, 0);
  not_a_mark.text = "phase x";
  EXPECT_EQ(phase_name(not_a_mark), std::nullopt);
}

TEST(Phases, NoPhaseMarkerNoPhases) {
  PhaseSplitter s;
  s.add(rec(1, Op::kMap, 4096), 2);
  s.add(mark(2, "a note"), 3);
  EXPECT_TRUE(s.phases().empty());
}

TEST(Phases, RecordsGoToTheLastPhaseMarkerBeforeThem) {
  PhaseSplitter s;
  s.add(rec(10, Op::kMap, 4096), 2);
  s.add(rec(20, Op::kUnmap, 4096), 3);
  s.add(mark(30, "phase a"), 4);
  s.add(rec(40, Op::kMapSg, 65536), 5);
  s.add(rec(45, Op::kIommuMap, 8192), 6);
  s.add(rec(50, Op::kUnmapSg, 65536), 7);
  s.add(mark(60, "phase b"), 8);
  s.add(mark(70, "phase c"), 9);
  s.add(rec(75, Op::kAccess, 64), 10);
  const std::vector<PhaseSummary> p = s.phases();
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].name, kLeadingPhaseName);
  EXPECT_EQ(p[0].records, 2u);
  EXPECT_EQ(p[0].mark_line, 0u);
  EXPECT_EQ(p[0].mark_time_ns, 10u);
  EXPECT_EQ(p[0].bytes_mapped, 4096u);
  EXPECT_EQ(p[0].bytes_unmapped, 4096u);
  EXPECT_EQ(p[1].name, "a");
  EXPECT_EQ(p[1].mark_line, 4u);
  EXPECT_EQ(p[1].mark_time_ns, 30u);
  EXPECT_EQ(p[1].records, 3u);
  EXPECT_EQ(p[1].bytes_mapped, 65536u + 8192u);
  EXPECT_EQ(p[1].bytes_unmapped, 65536u);
  EXPECT_EQ(p[1].t_min, 30u);  // from its marker
  EXPECT_EQ(p[1].t_max, 50u);
  EXPECT_EQ(p[2].name, "b");
  EXPECT_EQ(p[2].records, 0u);
  EXPECT_EQ(p[3].name, "c");
  EXPECT_EQ(p[3].by_op.at(Op::kAccess), 1u);
}

TEST(Phases, AnEmptyLeadingPhaseIsLeftOut) {
  PhaseSplitter s;
  s.add(mark(5, "phase only"), 2);
  s.add(rec(6, Op::kMap, 4096), 3);
  const std::vector<PhaseSummary> p = s.phases();
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].name, "only");
  EXPECT_EQ(p[0].records, 1u);
}

}  // namespace
}  // namespace smmu_vp::dmatrace

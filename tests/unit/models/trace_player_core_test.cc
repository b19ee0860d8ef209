// The trace player's register file and access scheduler, without SystemC:
// registers and their widths, LOAD through the backdoor, the order and
// timing of accesses, slot states, and the in-order completion mark.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "trace_player/trace_player_core.h"
#include "trace_player_support.h"

namespace smmu_vp {
namespace {

constexpr uint64_t kDram = 0x8000'0000;
constexpr uint64_t kDramSize = 1 << 20;
constexpr uint64_t kRemap = kDram + 0x1000;
constexpr uint64_t kImage = kDram + 0x10000;

using D = TracePlayerCore::Decision;


struct Fixture {
  std::vector<uint8_t> dram = std::vector<uint8_t>(kDramSize, 0);
  std::shared_ptr<TraceImage> image = std::make_shared<TraceImage>();
  std::unique_ptr<TracePlayerCore> core;

  void build() {
    core = std::make_unique<TracePlayerCore>(image, [this](uint64_t pa, uint64_t len) -> uint8_t* {
      if (pa < kDram || len > kDramSize || pa - kDram > kDramSize - len) return nullptr;
      return dram.data() + (pa - kDram);
    });
  }
  void slot(uint32_t s, uint64_t state, uint64_t iova = 0) {
    tp_slot e{iova, state};
    std::memcpy(dram.data() + (kRemap - kDram) + s * sizeof e, &e, sizeof e);
  }
  uint64_t slot_state(uint32_t s) const {
    tp_slot e;
    std::memcpy(&e, dram.data() + (kRemap - kDram) + s * sizeof e, sizeof e);
    return e.state;
  }
  uint64_t rd(uint64_t off, unsigned len = 4) {
    uint64_t v = ~0ull;
    EXPECT_EQ(core->read(off, len, &v), TracePlayerCore::Access::kOk) << std::hex << off;
    return v;
  }
  TracePlayerCore::Effects wr(uint64_t off, uint64_t v, unsigned len = 4) {
    TracePlayerCore::Effects fx;
    EXPECT_EQ(core->write(off, len, v, &fx), TracePlayerCore::Access::kOk) << std::hex << off;
    return fx;
  }
  void start(Ps now, uint32_t mode, uint32_t scale = 100) {
    wr(TP_REG_REMAP_BASE, kRemap, 8);
    wr(TP_REG_MODE, mode);
    wr(TP_REG_TIME_SCALE, scale);
    EXPECT_TRUE(wr(TP_REG_CTRL, TP_CTRL_START).started);
    core->start(now);
  }
};

TEST(TracePlayerCore, IdentityAndImageRegisters) {
  Fixture f;
  f.image->records = 7;
  f.image->bytes.assign(120, 0);
  f.image->accesses = {player_access(0, 0, 0), player_access(1, 0, 0)};
  f.build();
  EXPECT_EQ(f.rd(TP_REG_ID), TP_ID_VALUE);
  EXPECT_EQ(f.rd(TP_REG_VERSION), TP_VERSION_VALUE);
  EXPECT_EQ(f.rd(TP_REG_RECORDS), 7u);
  EXPECT_EQ(f.rd(TP_REG_ACCESS_COUNT), 2u);
  EXPECT_EQ(f.rd(TP_REG_IMAGE_BYTES, 8), 120u);
  EXPECT_EQ(f.rd(TP_REG_IMAGE_BYTES), 120u);
  EXPECT_EQ(f.rd(TP_REG_IMAGE_BYTES + 4), 0u);
  EXPECT_EQ(f.rd(TP_REG_STATUS), 0u);
  EXPECT_EQ(f.rd(TP_REG_MODE), TP_MODE_TIMED);
  EXPECT_EQ(f.rd(TP_REG_TIME_SCALE), 100u);
  EXPECT_EQ(f.rd(TP_REG_ACCESSES_DONE, 8), 0u);
  EXPECT_EQ(f.rd(TP_REG_ACCESS_ERRORS, 8), 0u);
  EXPECT_EQ(f.rd(TP_REG_CTRL), 0u);  // write-only
  EXPECT_EQ(f.core->bad_register_accesses(), 0u);
}

TEST(TracePlayerCore, SixtyFourBitRegistersByHalves) {
  Fixture f;
  f.build();
  f.wr(TP_REG_IMAGE_BASE, 0x89abcdefu);
  f.wr(TP_REG_IMAGE_BASE + 4, 0x1234567u);
  EXPECT_EQ(f.rd(TP_REG_IMAGE_BASE, 8), 0x0123'4567'89ab'cdefu);
  EXPECT_EQ(f.rd(TP_REG_IMAGE_BASE + 4), 0x1234567u);
  f.wr(TP_REG_REMAP_BASE, 0xfedc'ba98'7654'3210u, 8);
  EXPECT_EQ(f.rd(TP_REG_REMAP_BASE), 0x7654'3210u);
  EXPECT_EQ(f.rd(TP_REG_REMAP_BASE + 4), 0xfedc'ba98u);
  f.wr(TP_REG_REMAP_BASE, 0x1111'1111u);
  EXPECT_EQ(f.rd(TP_REG_REMAP_BASE, 8), 0xfedc'ba98'1111'1111u);
}

TEST(TracePlayerCore, BadRegisterAccessesAreRefusedAndCounted) {
  Fixture f;
  f.build();
  uint64_t v = 0;
  TracePlayerCore::Effects fx;
  using A = TracePlayerCore::Access;
  EXPECT_EQ(f.core->read(0x3c, 4, &v), A::kBadAddress);             // a hole
  EXPECT_EQ(f.core->read(TP_REG_SIZE, 4, &v), A::kBadAddress);      // past the block
  EXPECT_EQ(f.core->read(TP_REG_STATUS, 8, &v), A::kBadSize);       // 32-bit register read as 64
  EXPECT_EQ(f.core->read(TP_REG_IMAGE_BASE + 4, 8, &v), A::kBadSize);  // 64-bit at the high half
  EXPECT_EQ(f.core->read(TP_REG_ID, 2, &v), A::kBadSize);
  EXPECT_EQ(f.core->read(TP_REG_ID + 1, 4, &v), A::kBadSize);       // misaligned
  EXPECT_EQ(f.core->write(TP_REG_STATUS, 4, 1, &fx), A::kBadAddress);  // read-only
  EXPECT_EQ(f.core->write(TP_REG_ACCESSES_DONE, 8, 1, &fx), A::kBadAddress);
  EXPECT_EQ(f.core->write(TP_REG_CTRL, 8, TP_CTRL_START, &fx), A::kBadSize);
  EXPECT_FALSE(fx.started);
  EXPECT_EQ(f.core->bad_register_accesses(), 9u);
  EXPECT_EQ(f.rd(TP_REG_STATUS), 0u);
}

TEST(TracePlayerCore, LoadCopiesTheImageIntoDram) {
  Fixture f;
  for (unsigned i = 0; i < 64; ++i) f.image->bytes.push_back(static_cast<uint8_t>(i + 1));
  f.build();
  f.wr(TP_REG_IMAGE_BASE, kImage, 8);
  f.wr(TP_REG_CTRL, TP_CTRL_LOAD);
  EXPECT_EQ(f.rd(TP_REG_STATUS), TP_STATUS_LOADED);
  EXPECT_EQ(std::memcmp(f.dram.data() + (kImage - kDram), f.image->bytes.data(), 64), 0);
}

TEST(TracePlayerCore, LoadOutsideDramIsALoadError) {
  Fixture f;
  f.image->bytes.assign(64, 1);
  f.build();
  f.wr(TP_REG_IMAGE_BASE, kDram + kDramSize - 32, 8);  // does not fit
  f.wr(TP_REG_CTRL, TP_CTRL_LOAD);
  EXPECT_EQ(f.rd(TP_REG_STATUS), TP_STATUS_LOAD_ERROR);
  f.wr(TP_REG_IMAGE_BASE, 0x1000, 8);  // not DRAM at all
  f.wr(TP_REG_CTRL, TP_CTRL_LOAD);
  EXPECT_EQ(f.rd(TP_REG_STATUS), TP_STATUS_LOAD_ERROR);
  // A good base afterwards clears the error.
  f.wr(TP_REG_IMAGE_BASE, kImage, 8);
  f.wr(TP_REG_CTRL, TP_CTRL_LOAD);
  EXPECT_EQ(f.rd(TP_REG_STATUS), TP_STATUS_LOADED);
}

TEST(TracePlayerCore, NothingBeforeStart) {
  Fixture f;
  f.image->accesses = {player_access(0, TP_NO_SLOT, 0)};
  f.build();
  EXPECT_EQ(f.core->next(0).kind, D::kNotStarted);
  EXPECT_EQ(f.core->accesses_done(), 0u);
}

TEST(TracePlayerCore, EmptyTraceIsDoneAtStart) {
  Fixture f;
  f.build();
  f.start(5, TP_MODE_TIMED);
  EXPECT_EQ(f.rd(TP_REG_STATUS), TP_STATUS_DONE);
  EXPECT_EQ(f.core->next(5).kind, D::kAllTaken);
}

TEST(TracePlayerCore, TimedModeWaitsForEachRecordsScaledTime) {
  Fixture f;
  f.image->accesses = {player_access(0, 0, 0x10), player_access(100, 0, 0x20), player_access(100, 1, 0)};
  f.build();
  f.slot(0, TP_SLOT_MAPPED, 0xa000);
  f.slot(1, TP_SLOT_MAPPED, 0xb000);
  const Ps t0 = 1'000'000;
  f.start(t0, TP_MODE_TIMED, 50);  // gaps halved
  EXPECT_EQ(f.rd(TP_REG_STATUS), TP_STATUS_RUNNING);
  D d = f.core->next(t0);
  ASSERT_EQ(d.kind, D::kIssue);
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.addr, 0xa010u);
  d = f.core->next(t0);
  ASSERT_EQ(d.kind, D::kWaitTime);
  EXPECT_EQ(d.index, 1u);
  EXPECT_EQ(d.at, t0 + 50'000);  // 100 ns at 50 %
  d = f.core->next(t0 + 50'000);
  ASSERT_EQ(d.kind, D::kIssue);
  EXPECT_EQ(d.index, 1u);
  d = f.core->next(t0 + 50'000);
  ASSERT_EQ(d.kind, D::kIssue);
  EXPECT_EQ(d.index, 2u);
  EXPECT_EQ(d.addr, 0xb000u);
  EXPECT_EQ(f.core->next(t0 + 50'000).kind, D::kAllTaken);
}

TEST(TracePlayerCore, AsapModeTakesEverythingAtOnce) {
  Fixture f;
  f.image->accesses = {player_access(0, 0, 0), player_access(1'000'000, 0, 8), player_access(2'000'000, 0, 16)};
  f.build();
  f.slot(0, TP_SLOT_MAPPED, 0x4000);
  f.start(0, TP_MODE_ASAP);
  for (uint32_t i = 0; i < 3; ++i) {
    const D d = f.core->next(0);
    ASSERT_EQ(d.kind, D::kIssue);
    EXPECT_EQ(d.index, i);
    EXPECT_EQ(d.addr, 0x4000u + 8 * i);
  }
  EXPECT_EQ(f.core->next(0).kind, D::kAllTaken);
}

TEST(TracePlayerCore, PendingSlotWaitsForTheMapAndCountsOneWait) {
  Fixture f;
  f.image->accesses = {player_access(0, 2, 0x100)};
  f.build();
  f.start(0, TP_MODE_ASAP);
  EXPECT_EQ(f.slot_state(2), TP_SLOT_PENDING);
  EXPECT_EQ(f.core->next(0).kind, D::kWaitMap);
  EXPECT_EQ(f.slot_state(2), TP_SLOT_WAITING);  // the app will ring the doorbell
  EXPECT_EQ(f.core->next(10).kind, D::kWaitMap);  // woken, still pending
  EXPECT_EQ(f.core->waits_for_map(), 1u);
  f.slot(2, TP_SLOT_MAPPED, 0x7000);
  EXPECT_TRUE(f.wr(TP_REG_MAP_DOORBELL, 1).doorbell);
  const D d = f.core->next(20);
  ASSERT_EQ(d.kind, D::kIssue);
  EXPECT_EQ(d.addr, 0x7100u);
  EXPECT_EQ(f.core->waits_for_map(), 1u);
}

TEST(TracePlayerCore, UnmappedSlotStillGoesAndFailedOrMissingSlotsAreSkipped) {
  Fixture f;
  f.image->accesses = {player_access(0, 0, 4), player_access(0, 1, 0), player_access(0, TP_NO_SLOT, 0), player_access(0, 2, 0), player_access(0, 3, 0)};
  f.build();
  f.slot(0, TP_SLOT_UNMAPPED, 0x3000);
  f.slot(1, TP_SLOT_FAILED);
  f.slot(2, 77);  // not a state: as failed
  f.slot(3, TP_SLOT_MAPPED, 0x9000);
  f.start(0, TP_MODE_ASAP);
  D d = f.core->next(0);
  ASSERT_EQ(d.kind, D::kIssue);
  EXPECT_EQ(d.addr, 0x3004u);  // use after unmap: goes, the SMMU decides
  d = f.core->next(0);
  ASSERT_EQ(d.kind, D::kIssue);
  EXPECT_EQ(d.index, 4u);
  EXPECT_EQ(f.core->skipped_failed(), 2u);
  EXPECT_EQ(f.core->skipped_unmapped(), 1u);
  // The skipped ones count as completed, but access 0 is still in flight.
  EXPECT_EQ(f.core->accesses_done(), 0u);
  f.core->complete(0, true);
  EXPECT_EQ(f.core->accesses_done(), 4u);
  f.core->complete(4, true);
  EXPECT_EQ(f.rd(TP_REG_ACCESSES_DONE, 8), 5u);
  EXPECT_EQ(f.rd(TP_REG_STATUS), TP_STATUS_DONE);
}

TEST(TracePlayerCore, SlotTableOutsideDramSkips) {
  Fixture f;
  f.image->accesses = {player_access(0, 0, 0)};
  f.build();
  f.wr(TP_REG_MODE, TP_MODE_ASAP);
  f.wr(TP_REG_REMAP_BASE, 0x10, 8);
  f.wr(TP_REG_CTRL, TP_CTRL_START);
  f.core->start(0);
  EXPECT_EQ(f.core->next(0).kind, D::kAllTaken);
  EXPECT_EQ(f.core->skipped_no_table(), 1u);
  EXPECT_TRUE(f.core->done());
}

TEST(TracePlayerCore, CompletionOutOfOrderMovesTheLowWaterMarkInOrder) {
  Fixture f;
  f.image->accesses = {player_access(0, 0, 0), player_access(0, 0, 0), player_access(0, 0, 0), player_access(0, 0, 0)};
  f.build();
  f.slot(0, TP_SLOT_MAPPED, 0x1000);
  f.start(0, TP_MODE_ASAP);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(f.core->next(0).kind, D::kIssue);
  f.core->complete(2, true);
  f.core->complete(1, false);
  EXPECT_EQ(f.rd(TP_REG_ACCESSES_DONE), 0u);
  f.core->complete(0, true);
  EXPECT_EQ(f.rd(TP_REG_ACCESSES_DONE), 3u);
  EXPECT_EQ(f.rd(TP_REG_STATUS), TP_STATUS_RUNNING);
  f.core->complete(3, false);
  EXPECT_EQ(f.rd(TP_REG_ACCESSES_DONE), 4u);
  EXPECT_EQ(f.rd(TP_REG_ACCESS_ERRORS, 8), 2u);
  EXPECT_EQ(f.rd(TP_REG_STATUS), TP_STATUS_DONE);
}

TEST(TracePlayerCore, ProgrammingWhileRunningIsIgnoredAndCounted) {
  Fixture f;
  f.image->accesses = {player_access(0, 0, 0)};
  f.build();
  EXPECT_EQ(f.wr(TP_REG_MODE, 9).started, false);  // not a mode
  EXPECT_EQ(f.rd(TP_REG_MODE), TP_MODE_TIMED);
  f.start(0, TP_MODE_ASAP);
  f.wr(TP_REG_MODE, TP_MODE_TIMED);
  f.wr(TP_REG_TIME_SCALE, 1);
  f.wr(TP_REG_REMAP_BASE, 0, 8);
  EXPECT_FALSE(f.wr(TP_REG_CTRL, TP_CTRL_START).started);
  EXPECT_EQ(f.rd(TP_REG_MODE), TP_MODE_ASAP);
  EXPECT_EQ(f.rd(TP_REG_TIME_SCALE), 100u);
  EXPECT_EQ(f.rd(TP_REG_REMAP_BASE, 8), kRemap);
  EXPECT_EQ(f.core->prog_errors(), 5u);
}

TEST(TracePlayerCore, ZeroTimeScaleRunsEverythingAtStart) {
  Fixture f;
  f.image->accesses = {player_access(0, 0, 0), player_access(1'000'000'000, 0, 0)};
  f.build();
  f.slot(0, TP_SLOT_MAPPED, 0x1000);
  f.start(7, TP_MODE_TIMED, 0);
  EXPECT_EQ(f.core->next(7).kind, D::kIssue);
  EXPECT_EQ(f.core->next(7).kind, D::kIssue);
}

TEST(TracePlayerCore, HugeTimesSaturate) {
  Fixture f;
  f.image->accesses = {player_access(~0ull / 2, 0, 0)};
  f.build();
  f.start(1000, TP_MODE_TIMED, 1000);
  const D d = f.core->next(1000);
  ASSERT_EQ(d.kind, D::kWaitTime);
  EXPECT_EQ(d.at, ~0ull);
}

// PHASE (a trace with phases): the app's "I began phase N", taken after
// START and for a phase the trace has; anything else is a programming error.
TEST(TracePlayerCore, PhaseRegisterAfterStartForAPhaseTheTraceHas) {
  Fixture f;
  f.image->phases = {TracePhase{"(before first phase)", 0, 0, 0}, TracePhase{"a", 10, 0, 0}, TracePhase{"b", 20, 0, 0}};
  f.build();
  EXPECT_FALSE(f.wr(TP_REG_PHASE, 1).phase);  // before START
  EXPECT_EQ(f.core->prog_errors(), 1u);
  f.start(0, TP_MODE_ASAP);
  const TracePlayerCore::Effects fx = f.wr(TP_REG_PHASE, 2);
  EXPECT_TRUE(fx.phase);
  EXPECT_EQ(fx.phase_index, 2u);
  EXPECT_FALSE(f.wr(TP_REG_PHASE, 3).phase);  // no such phase
  EXPECT_EQ(f.core->prog_errors(), 2u);
  EXPECT_EQ(f.rd(TP_REG_PHASE), 0u);  // write-only
}

TEST(TracePlayerCore, PhaseRegisterOfATraceWithoutPhasesIsAnError) {
  Fixture f;
  f.build();
  f.start(0, TP_MODE_ASAP);
  EXPECT_FALSE(f.wr(TP_REG_PHASE, 0).phase);
  EXPECT_EQ(f.core->prog_errors(), 1u);
}

}  // namespace
}  // namespace smmu_vp

// The trace player's SystemC module against a recording memory target and a
// host thread that plays the replay app: LOAD, START in ASAP and TIMED
// modes, the transactions (StreamID, IOVA, size, bursts), waiting for a
// PENDING slot until MAP_DOORBELL, ACCESSES_DONE with out-of-order
// completion, and the errors it counts.
// Each test elaborates its own modules: one test per process (ctest).
#include <gtest/gtest.h>

#include "bench_memory.h"

#include <cstring>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm_utils/simple_target_socket.h>

#include "common/stream_id_extension.h"
#include "common/tlm_time.h"
#include "trace_player/trace_player.h"
#include "trace_player_support.h"

namespace smmu_vp {
namespace {

constexpr uint64_t kDram = 0x8000'0000;
constexpr uint64_t kDramSize = 1 << 20;
constexpr uint64_t kRemap = kDram + 0x1000;
constexpr uint64_t kImage = kDram + 0x10000;

// The player's master port ends here: every transaction is recorded and
// answered after a latency (longer in the slow range, an abort in the fault
// range).
struct Target : sc_core::sc_module {
  struct Txn {
    uint64_t addr;
    unsigned len;
    bool write;
    uint32_t sid;
    double issue_ns;  // when it was issued (the caller's local time)
    bool all_zero;    // a write's data
  };
  tlm_utils::simple_target_socket<Target> socket{"socket"};
  std::vector<Txn> log;
  double latency_ns = 100;
  uint64_t slow_lo = 0, slow_hi = 0, fault_lo = 0, fault_hi = 0;
  double slow_ns = 10'000;

  explicit Target(sc_core::sc_module_name n) : sc_module(n) { socket.register_b_transport(this, &Target::transport); }
  void transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    const auto* ext = t.get_extension<StreamIdExtension>();
    bool zero = true;
    if (t.is_write())
      for (unsigned i = 0; i < t.get_data_length(); ++i) zero = zero && t.get_data_ptr()[i] == 0;
    log.push_back({t.get_address(), t.get_data_length(), t.is_write(), ext ? ext->stream_id : ~0u,
                   (sc_core::sc_time_stamp() + delay).to_seconds() * 1e9, zero});
    const uint64_t a = t.get_address();
    if (a >= fault_lo && a < fault_hi) {
      t.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    delay += ps_to_sc(ns_to_ps(a >= slow_lo && a < slow_hi ? slow_ns : latency_ns));
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

struct Host : test::BenchHost<Host> {
  using BenchHost::BenchHost;
  uint64_t rd64(uint64_t off) { return access(false, off, 0, 8); }
  void wr64(uint64_t off, uint64_t v) { access(true, off, v, 8); }
  double now_ns() const { return sc_core::sc_time_stamp().to_seconds() * 1e9; }
};


struct Bench {
  std::vector<uint8_t> dram = std::vector<uint8_t>(kDramSize, 0);
  std::shared_ptr<TraceImage> image = std::make_shared<TraceImage>();
  Target target{"target"};
  StatsRegistry stats;
  TracePlayerConfig cfg;
  std::unique_ptr<TracePlayer> player;
  Host host{"host"};

  void build() {
    player = std::make_unique<TracePlayer>(
        "tp0", cfg, image,
        [this](uint64_t pa, uint64_t len) -> uint8_t* {
          if (pa < kDram || len > kDramSize || pa - kDram > kDramSize - len) return nullptr;
          return dram.data() + (pa - kDram);
        },
        stats, nullptr);
    player->mem.bind(target.socket);
    host.socket.bind(player->regs);
  }
  void slot(uint32_t s, uint64_t state, uint64_t iova = 0) {
    tp_slot e{iova, state};
    std::memcpy(dram.data() + (kRemap - kDram) + s * sizeof e, &e, sizeof e);
  }
  uint64_t counter(const char* name) { return stats.counter(std::string("tp0.") + name).value(); }
  // The usual programming: slot table, mode, scale, START.
  static void start(Host& h, uint32_t mode, uint32_t scale = 100) {
    h.wr64(TP_REG_REMAP_BASE, kRemap);
    h.wr(TP_REG_MODE, mode);
    h.wr(TP_REG_TIME_SCALE, scale);
    h.wr(TP_REG_CTRL, TP_CTRL_START);
  }
};

TEST(TracePlayerModel, LoadCopiesTheImageAndReportsIt) {
  Bench b;
  for (unsigned i = 0; i < 256; ++i) b.image->bytes.push_back(static_cast<uint8_t>(i));
  b.image->records = 3;
  b.build();
  uint32_t status = 0, bad_status = 0;
  uint64_t bytes = 0;
  b.host.body = [&](Host& h) {
    EXPECT_EQ(h.rd(TP_REG_ID), TP_ID_VALUE);
    EXPECT_EQ(h.rd(TP_REG_RECORDS), 3u);
    bytes = h.rd64(TP_REG_IMAGE_BYTES);
    h.wr64(TP_REG_IMAGE_BASE, kDram + kDramSize);  // outside DRAM
    h.wr(TP_REG_CTRL, TP_CTRL_LOAD);
    bad_status = h.rd(TP_REG_STATUS);
    h.wr64(TP_REG_IMAGE_BASE, kImage);
    h.wr(TP_REG_CTRL, TP_CTRL_LOAD);
    status = h.rd(TP_REG_STATUS);
  };
  sc_core::sc_start(1, sc_core::SC_US);
  EXPECT_EQ(bytes, 256u);
  EXPECT_EQ(bad_status, TP_STATUS_LOAD_ERROR);
  EXPECT_EQ(status, TP_STATUS_LOADED);
  EXPECT_EQ(std::memcmp(b.dram.data() + (kImage - kDram), b.image->bytes.data(), 256), 0);
}

TEST(TracePlayerModel, AsapIssuesEachAccessWithItsStreamIdAddressAndSize) {
  Bench b;
  b.image->accesses = {player_access(0, 0, 0x40, 64, false, 7), player_access(5'000, 1, 0x100, 8192, true, 9),
                       player_access(9'000, 0, 0, 4, true, 7)};
  b.build();
  b.slot(0, TP_SLOT_MAPPED, 0x10000);
  b.slot(1, TP_SLOT_MAPPED, 0x40000);
  uint64_t done = 0;
  uint32_t status = 0;
  b.host.body = [&](Host& h) {
    Bench::start(h, TP_MODE_ASAP);
    sc_core::wait(2, sc_core::SC_US);
    done = h.rd64(TP_REG_ACCESSES_DONE);
    status = h.rd(TP_REG_STATUS);
  };
  sc_core::sc_start(3, sc_core::SC_US);
  b.player->finalize();
  // 8 KiB at 0x40100 in bursts of at most 4 KiB that do not cross a page.
  ASSERT_EQ(b.target.log.size(), 5u);
  const auto& l = b.target.log;
  EXPECT_EQ(l[0].addr, 0x10040u);
  EXPECT_EQ(l[0].len, 64u);
  EXPECT_FALSE(l[0].write);
  EXPECT_EQ(l[0].sid, 7u);
  EXPECT_EQ(l[1].addr, 0x40100u);
  EXPECT_EQ(l[1].len, 0xf00u);
  EXPECT_EQ(l[2].addr, 0x41000u);
  EXPECT_EQ(l[2].len, 0x1000u);
  EXPECT_EQ(l[3].addr, 0x42000u);
  EXPECT_EQ(l[3].len, 0x100u);
  for (int i = 1; i <= 3; ++i) {
    EXPECT_TRUE(l[i].write);
    EXPECT_TRUE(l[i].all_zero);
    EXPECT_EQ(l[i].sid, 9u);
  }
  EXPECT_EQ(l[4].addr, 0x10000u);
  EXPECT_EQ(l[4].len, 4u);
  // ASAP: the trace's gaps are not waited for; all start together (4 channels).
  for (const auto& t : l) EXPECT_LT(t.issue_ns, 100.0);
  EXPECT_EQ(done, 3u);
  EXPECT_EQ(status, TP_STATUS_DONE);
  EXPECT_EQ(b.counter("accesses"), 3u);
  EXPECT_EQ(b.counter("bytes"), 64u + 8192 + 4);
  const Histogram* lat = b.stats.find_histogram("tp0.access_latency_ns");
  ASSERT_NE(lat, nullptr);
  EXPECT_EQ(lat->count(), 3u);
  EXPECT_NEAR(lat->max(), 100.0, 1.0);  // the bursts of an access are issued together
}

TEST(TracePlayerModel, TimedModeIssuesAtTheScaledTraceTimes) {
  Bench b;
  b.cfg.channels = 1;
  b.image->accesses = {player_access(0, 0, 0, 8, false, 1), player_access(1'000, 0, 8, 8, false, 1), player_access(3'000, 0, 16, 8, false, 1)};
  b.build();
  b.slot(0, TP_SLOT_MAPPED, 0x2000);
  double started = 0;
  b.host.body = [&](Host& h) {
    sc_core::wait(500, sc_core::SC_NS);
    Bench::start(h, TP_MODE_TIMED, 200);  // gaps doubled
    started = h.now_ns();                  // START landed (the write's latency is waited)
  };
  sc_core::sc_start(10, sc_core::SC_US);
  const auto& l = b.target.log;
  ASSERT_EQ(l.size(), 3u);
  EXPECT_NEAR(l[0].issue_ns, started, 0.01);
  EXPECT_NEAR(l[1].issue_ns, started + 2'000, 0.01);
  EXPECT_NEAR(l[2].issue_ns, started + 6'000, 0.01);
  EXPECT_TRUE(b.player->core().done());
}

TEST(TracePlayerModel, OneChannelWaitsForTheEarlierAccessToComplete) {
  Bench b;
  b.cfg.channels = 1;
  b.image->accesses = {player_access(0, 0, 0, 8, false, 1), player_access(0, 0, 8, 8, false, 1)};
  b.build();
  b.slot(0, TP_SLOT_MAPPED, 0x2000);
  b.host.body = [&](Host& h) { Bench::start(h, TP_MODE_ASAP); };
  sc_core::sc_start(2, sc_core::SC_US);
  ASSERT_EQ(b.target.log.size(), 2u);
  EXPECT_NEAR(b.target.log[1].issue_ns - b.target.log[0].issue_ns, 100.0, 0.01);
}

TEST(TracePlayerModel, PendingSlotWaitsForTheDoorbell) {
  Bench b;
  b.image->accesses = {player_access(0, 0, 0x10, 32, true, 4), player_access(0, 1, 0, 32, false, 4)};
  b.build();
  b.slot(1, TP_SLOT_MAPPED, 0x9000);  // ready, but behind access 0 in trace order
  double rang = 0;
  uint64_t done_before = 0;
  b.host.body = [&](Host& h) {
    Bench::start(h, TP_MODE_ASAP);
    sc_core::wait(5, sc_core::SC_US);
    done_before = h.rd64(TP_REG_ACCESSES_DONE);
    b.slot(0, TP_SLOT_MAPPED, 0x5000);
    h.wr(TP_REG_MAP_DOORBELL, 1);
    rang = h.now_ns();
  };
  sc_core::sc_start(10, sc_core::SC_US);
  b.player->finalize();
  const auto& l = b.target.log;
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(done_before, 0u);
  EXPECT_EQ(l[0].addr, 0x5010u);
  EXPECT_NEAR(l[0].issue_ns, rang, 0.01);  // when the doorbell write landed
  EXPECT_EQ(l[1].addr, 0x9000u);
  EXPECT_NEAR(l[1].issue_ns, rang, 0.01);
  EXPECT_EQ(b.counter("waits_for_map"), 1u);
  EXPECT_TRUE(b.player->core().done());
}

TEST(TracePlayerModel, AccessesDoneIsInOrderWhenCompletionIsNot) {
  Bench b;
  b.cfg.channels = 2;
  b.target.slow_lo = 0x5000;
  b.target.slow_hi = 0x6000;  // access 0 takes 10 us, access 1 100 ns
  b.image->accesses = {player_access(0, 0, 0, 8, false, 1), player_access(0, 1, 0, 8, false, 1)};
  b.build();
  b.slot(0, TP_SLOT_MAPPED, 0x5000);
  b.slot(1, TP_SLOT_MAPPED, 0x7000);
  uint64_t mid = 99, end = 99;
  uint32_t mid_status = 0;
  b.host.body = [&](Host& h) {
    Bench::start(h, TP_MODE_ASAP);
    sc_core::wait(2, sc_core::SC_US);
    mid = h.rd64(TP_REG_ACCESSES_DONE);
    mid_status = h.rd(TP_REG_STATUS);
    sc_core::wait(10, sc_core::SC_US);
    end = h.rd64(TP_REG_ACCESSES_DONE);
  };
  sc_core::sc_start(15, sc_core::SC_US);
  EXPECT_EQ(b.target.log.size(), 2u);
  EXPECT_EQ(mid, 0u);  // access 1 completed, access 0 not yet
  EXPECT_EQ(mid_status, TP_STATUS_RUNNING);
  EXPECT_EQ(end, 2u);
}

TEST(TracePlayerModel, ErrorsAndSkipsAreCounted) {
  Bench b;
  b.target.fault_lo = 0x6000;
  b.target.fault_hi = 0x7000;
  b.image->accesses = {player_access(0, 0, 0, 8192, true, 1),  // aborts at its first burst
                       player_access(0, 1, 0, 8, false, 1),     // FAILED slot
                       player_access(0, TP_NO_SLOT, 0, 8, false, 1), player_access(0, 2, 0, 8, false, 1)};
  b.image->unmatched = 2;
  b.image->overlapping = 1;
  b.image->accesses_unmapped = 1;
  b.build();
  b.slot(0, TP_SLOT_MAPPED, 0x6000);
  b.slot(1, TP_SLOT_FAILED);
  b.slot(2, TP_SLOT_MAPPED, 0x8000);
  uint64_t errors = 0, done = 0;
  tlm::tlm_response_status bad = tlm::TLM_OK_RESPONSE, wide = tlm::TLM_OK_RESPONSE;
  b.host.body = [&](Host& h) {
    uint64_t v = 0;
    bad = h.access_status(false, 0x3c, &v, 4);
    wide = h.access_status(false, TP_REG_STATUS, &v, 8);
    Bench::start(h, TP_MODE_ASAP);
    sc_core::wait(1, sc_core::SC_US);
    errors = h.rd64(TP_REG_ACCESS_ERRORS);
    done = h.rd64(TP_REG_ACCESSES_DONE);
  };
  sc_core::sc_start(2, sc_core::SC_US);
  b.player->finalize();
  EXPECT_EQ(bad, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(wide, tlm::TLM_BURST_ERROR_RESPONSE);
  EXPECT_EQ(errors, 1u);
  EXPECT_EQ(done, 4u);
  ASSERT_EQ(b.target.log.size(), 2u);  // one aborted burst, then access 3
  EXPECT_EQ(b.target.log[1].addr, 0x8000u);
  EXPECT_EQ(b.counter("access_errors"), 1u);
  EXPECT_EQ(b.counter("accesses_skipped_failed"), 1u);
  EXPECT_EQ(b.counter("accesses_skipped_unmapped"), 1u);
  EXPECT_EQ(b.counter("register_errors"), 2u);
  EXPECT_EQ(b.counter("load_unmatched"), 2u);
  EXPECT_EQ(b.counter("load_overlapping"), 1u);
  EXPECT_EQ(b.counter("load_accesses_unmapped"), 1u);
  EXPECT_EQ(b.counter("accesses"), 2u);
}

}  // namespace
}  // namespace smmu_vp

// Event records (IHI 0070 7.3) and the event queue producer (7.4): slot
// placement, wrap, a full queue losing records without overwriting, abort.
#include <gtest/gtest.h>

#include "fake_memory.h"
#include "smmu/event_queue.h"

namespace smmu_vp::smmu {
namespace {

constexpr uint64_t kBase = 0x8000'0000;

TEST(EventRecord, FieldPositions) {
  EventRecord r;
  r.id = EventId::kTranslation;
  r.sid = 0x1234'5678;
  r.ssv = true;
  r.ssid = 0xABCDE;
  r.pnu = true;
  r.ind = false;
  r.rnw = false;
  r.s2 = true;
  r.cls = FaultClass::kTranslationTable;
  r.input_addr = 0xFFFF'0000'1234'5000ull;
  r.ipa = 0x000F'FFFF'FFFF'F000ull;
  const auto w = r.encode();
  // By hand from IHI 0070 7.3.
  EXPECT_EQ(w[0] & 0xFF, 0x10u);
  EXPECT_EQ((w[0] >> 11) & 1, 1u);
  EXPECT_EQ((w[0] >> 12) & 0xFFFFF, 0xABCDEu);
  EXPECT_EQ(w[0] >> 32, 0x1234'5678u);
  EXPECT_EQ((w[1] >> 33) & 1, 1u);  // PnU
  EXPECT_EQ((w[1] >> 35) & 1, 0u);  // RnW: a write
  EXPECT_EQ((w[1] >> 39) & 1, 1u);  // S2
  EXPECT_EQ((w[1] >> 40) & 3, 1u);  // CLASS = TT
  EXPECT_EQ(w[2], 0xFFFF'0000'1234'5000ull);
  EXPECT_EQ(w[3], 0x000F'FFFF'FFFF'F000ull);
  const EventRecord back = EventRecord::decode(w);
  EXPECT_EQ(back.id, r.id);
  EXPECT_EQ(back.sid, r.sid);
  EXPECT_EQ(back.ssid, r.ssid);
  EXPECT_EQ(back.cls, r.cls);
  EXPECT_EQ(back.ipa, r.ipa);
  EXPECT_FALSE(back.rnw);
}

TEST(EventRecord, FetchAbortsCarryTheFetchAddressInDwordThree) {
  EventRecord r;
  r.id = EventId::kWalkEabt;
  r.fetch_addr = 0x0000'8765'4321'0FF8ull;
  const auto w = r.encode();
  EXPECT_EQ(w[3], 0x0000'8765'4321'0FF8ull);  // FetchAddr[51:3], IHI 0070 7.3
  EXPECT_EQ(EventRecord::decode(w).fetch_addr, r.fetch_addr);
  r.id = EventId::kTranslation;  // other records keep the IPA there
  r.ipa = 0x1234'5000;
  EXPECT_EQ(r.encode()[3], 0x1234'5000u);
}

class EventQueueTest : public ::testing::Test {
 protected:
  EventQueueTest() : mem_(kBase, 1 << 16, 10'000), writer_(mem_) {
    q_.enabled = true;
    q_.base = kBase + 0x1000;
    q_.prod = QueueIndex(2, 0);  // 4 entries
    q_.cons = QueueIndex(2, 0);
  }
  EventRecord record(uint32_t sid) {
    EventRecord r;
    r.id = EventId::kPermission;
    r.sid = sid;
    return r;
  }
  EventRecord read_slot(unsigned i) {
    std::array<uint64_t, 4> w;
    mem_.peek(q_.base + i * 32ull, w.data(), 32);
    return EventRecord::decode(w);
  }

  test::FakeMemory mem_;
  EventQueueWriter writer_;
  EventQueueWriter::Queue q_;
};

TEST_F(EventQueueTest, RecordsGoToProdSlotAndWrap) {
  for (uint32_t i = 0; i < 4; ++i) {
    const auto r = writer_.post(q_, record(i), 0);
    ASSERT_EQ(r.outcome, EventQueueWriter::Outcome::kWritten);
    EXPECT_EQ(r.done, 10'000u);
    q_.prod = r.prod;
  }
  EXPECT_EQ(q_.prod.value(), 4u);  // index 0, wrap 1: full
  for (unsigned i = 0; i < 4; ++i) EXPECT_EQ(read_slot(i).sid, i);
  q_.cons = QueueIndex(2, 1);  // software consumed one record
  const auto r = writer_.post(q_, record(9), 0);
  ASSERT_EQ(r.outcome, EventQueueWriter::Outcome::kWritten);
  EXPECT_EQ(read_slot(0).sid, 9u);
  EXPECT_EQ(r.prod.value(), 5u);
}

TEST_F(EventQueueTest, FullQueueLosesTheRecordAndOverwritesNothing) {
  q_.prod = QueueIndex(2, 4);  // full: same index, other wrap
  const auto r = writer_.post(q_, record(1), 0);
  EXPECT_EQ(r.outcome, EventQueueWriter::Outcome::kLostFull);
  EXPECT_EQ(r.prod, q_.prod);
  EXPECT_TRUE(mem_.log().empty());
}

TEST_F(EventQueueTest, DisabledQueueAndAbortingWrite) {
  q_.enabled = false;
  EXPECT_EQ(writer_.post(q_, record(1), 0).outcome, EventQueueWriter::Outcome::kLostDisabled);
  q_.enabled = true;
  mem_.add_error_range(q_.base, 32);
  const auto r = writer_.post(q_, record(1), 0);
  EXPECT_EQ(r.outcome, EventQueueWriter::Outcome::kAbort);
  EXPECT_EQ(r.prod.value(), 0u);  // not advanced
}

}  // namespace
}  // namespace smmu_vp::smmu

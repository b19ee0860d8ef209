// ECMDQ interface registers (IHI 0070 6.3.107-6.3.109): placement in the
// control pages, the EN/ENACK handshake, registers guarded while enabled,
// and the per-queue error / ERRACK protocol.
#include "smmu/ecmdq.h"

#include <gtest/gtest.h>

namespace smmu_vp::smmu {
namespace {

using namespace reg;

class EcmdqTest : public ::testing::Test {
 protected:
  EcmdqTest() : r_(SmmuFeatures::v3_3_profile()) {}
  // Offset of queue q's register `reg` (v3.3: 2 pages x 4 queues).
  static uint64_t at(unsigned q, uint64_t which) {
    return kEcmdqPagesOffset + (q / 4) * kPageSize + (q % 4) * ecmdq_queue_stride(2) + which;
  }
  uint32_t rd(uint64_t off) {
    bool ok;
    return static_cast<uint32_t>(r_.read(off, 4, &ok));
  }
  void wr(uint64_t off, uint64_t v, unsigned size = 4) {
    bool ok;
    r_.write(off, size, v, &ok);
    ASSERT_TRUE(ok);
  }
  EcmdqRegisters r_;
};

TEST_F(EcmdqTest, GeometryFollowsIdr6) {
  EXPECT_EQ(r_.queues(), 8u);
  EXPECT_TRUE(r_.contains(at(7, kEcmdqCons)));
  EXPECT_FALSE(r_.contains(kEcmdqPagesOffset + 2 * kPageSize));
  EXPECT_EQ(EcmdqRegisters(SmmuFeatures::v3_0_profile()).queues(), 0u);
}

TEST_F(EcmdqTest, EnableHandshakeAndGuardedRegisters) {
  wr(at(5, kEcmdqBase), 0x8000'1000ull | 4, 8);
  wr(at(5, kEcmdqCons), 3);
  EXPECT_EQ(r_.base_addr(5), 0x8000'1000u);
  EXPECT_EQ(r_.log2size(5), 4u);
  EXPECT_FALSE(r_.enabled(5));
  wr(at(5, kEcmdqProd), ecmdq_prod::kEn.mask32() | 3);
  EXPECT_TRUE(r_.enabled(5));
  EXPECT_TRUE(rd(at(5, kEcmdqCons)) & ecmdq_cons::kEnAck.mask32());
  // While enabled, BASE and CONS ignore software.
  wr(at(5, kEcmdqBase), 0x9000'0000ull | 4, 8);
  wr(at(5, kEcmdqCons), 0);
  EXPECT_EQ(r_.base_addr(5), 0x8000'1000u);
  EXPECT_EQ(r_.cons(5).value(), 3u);
  // Other queues are untouched.
  EXPECT_FALSE(r_.enabled(4));
  EXPECT_EQ(rd(at(4, kEcmdqProd)), 0u);
  // Disable: ENACK follows.
  wr(at(5, kEcmdqProd), 3);
  EXPECT_FALSE(r_.enabled(5));
  EXPECT_FALSE(rd(at(5, kEcmdqCons)) & ecmdq_cons::kEnAck.mask32());
}

TEST_F(EcmdqTest, ErrorsToggleErrAndWaitForErrack) {
  wr(at(0, kEcmdqBase), 0x8000'0000ull | 4, 8);
  wr(at(0, kEcmdqProd), ecmdq_prod::kEn.mask32());
  EXPECT_FALSE(r_.error_pending(0));
  EXPECT_TRUE(r_.raise_error(0, cerror::kIll));
  EXPECT_TRUE(r_.error_pending(0));
  EXPECT_FALSE(r_.raise_error(0, cerror::kAbt));  // one at a time
  const uint32_t cons = rd(at(0, kEcmdqCons));
  EXPECT_TRUE(cons & ecmdq_cons::kErr.mask32());
  EXPECT_EQ(ecmdq_cons::kErrReason.get(cons), cerror::kIll);
  // Software acknowledges by making PROD.ERRACK equal to CONS.ERR.
  wr(at(0, kEcmdqProd), ecmdq_prod::kEn.mask32() | ecmdq_prod::kErrAck.mask32());
  EXPECT_FALSE(r_.error_pending(0));
  // The next error toggles ERR back to 0, pending again until ERRACK = 0.
  EXPECT_TRUE(r_.raise_error(0, cerror::kAbt));
  EXPECT_FALSE(rd(at(0, kEcmdqCons)) & ecmdq_cons::kErr.mask32());
  EXPECT_TRUE(r_.error_pending(0));
}

TEST_F(EcmdqTest, ProdWritesReachTheListenerWithOldAndNewIndex) {
  unsigned calls = 0, queue = 99;
  uint32_t from = 99, to = 99;
  r_.set_listener([&](unsigned q, uint32_t o, uint32_t n) {
    ++calls;
    queue = q;
    from = o;
    to = n;
  });
  wr(at(2, kEcmdqBase), 0x8000'0000ull | 4, 8);
  wr(at(2, kEcmdqProd), ecmdq_prod::kEn.mask32() | 5);
  EXPECT_EQ(calls, 1u);
  EXPECT_EQ(queue, 2u);
  EXPECT_EQ(from, 0u);
  EXPECT_EQ(to, 5u);
  bool ok;
  r_.read(at(2, kEcmdqProd) + 1, 4, &ok);
  EXPECT_FALSE(ok);  // misaligned
}

}  // namespace
}  // namespace smmu_vp::smmu

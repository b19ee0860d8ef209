// An endpoint's ATC (models/common/device_atc.h): what it keeps of ATS
// completions, LRU replacement over ranges of any size, and how an
// Invalidation Request removes entries and waits for the accesses that used
// them (PCIe 6.0 10.3; IHI 0070 3.9.1.4).
#include <gtest/gtest.h>

#include "common/device_atc.h"
#include "common/invalid_config.h"

namespace smmu_vp {
namespace {

using smmu::AtsExtension;

AtsExtension success(uint64_t iova, uint64_t pa, unsigned size_log2, bool write = true) {
  AtsExtension c(AtsExtension::Kind::kTranslationRequest);
  c.status = AtsExtension::Status::kSuccess;
  c.untranslated_addr = iova;
  c.translated_addr = pa;
  c.size_log2 = size_log2;
  c.read = true;
  c.write = write;
  return c;
}

AtcConfig config(unsigned entries) {
  AtcConfig c;
  c.entries = entries;
  c.invalidate_ns = 100.0;
  return c;
}

smmu::AtsDevice::Invalidation inv(uint64_t addr, unsigned size) {
  smmu::AtsDevice::Invalidation i;
  i.addr = addr;
  i.size = size;
  return i;
}

TEST(DeviceAtc, KeepsSuccessfulTranslationsOnly) {
  StatsRegistry stats;
  DeviceAtc atc(config(4), stats, "dev.atc");
  EXPECT_FALSE(atc.lookup(0x1000, false));
  atc.fill(success(0x1000, 0x8000'0000, 12));
  const auto h = atc.lookup(0x1234, false);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->pa, 0x8000'0234u);
  EXPECT_EQ(h->bytes_left, 0x1000u - 0x234u);
  // R = W = 0, UR and CA completions are not translations.
  AtsExtension none = success(0x2000, 0, 12);
  none.read = none.write = false;
  atc.fill(none);
  AtsExtension ur = success(0x3000, 0x9000'0000, 12);
  ur.status = AtsExtension::Status::kUnsupportedRequest;
  atc.fill(ur);
  EXPECT_FALSE(atc.lookup(0x2000, false));
  EXPECT_FALSE(atc.lookup(0x3000, false));
  EXPECT_EQ(atc.size(), 1u);
  EXPECT_EQ(stats.counter("dev.atc.lookups").value(), 4u);
  EXPECT_EQ(stats.counter("dev.atc.hits").value(), 1u);
  EXPECT_EQ(stats.counter("dev.atc.fills").value(), 1u);
}

TEST(DeviceAtc, AReadOnlyTranslationDoesNotServeAWrite) {
  StatsRegistry stats;
  DeviceAtc atc(config(4), stats, "dev.atc");
  atc.fill(success(0x1000, 0x8000'0000, 12, false));
  EXPECT_TRUE(atc.lookup(0x1000, false));
  EXPECT_FALSE(atc.lookup(0x1000, true));
}

TEST(DeviceAtc, BlocksAndLruReplacement) {
  StatsRegistry stats;
  DeviceAtc atc(config(2), stats, "dev.atc");
  atc.fill(success(0x20'0000, 0x4000'0000, 21));  // a 2 MiB block
  atc.fill(success(0x1000, 0x8000'0000, 12));
  ASSERT_TRUE(atc.lookup(0x3F'FFFF, false));      // the block is now the most recent
  EXPECT_EQ(atc.lookup(0x3F'FFFF, false)->pa, 0x401F'FFFFu);
  atc.fill(success(0x5000, 0x8000'5000, 12));      // evicts the 4 KiB entry
  EXPECT_FALSE(atc.lookup(0x1000, false));
  EXPECT_TRUE(atc.lookup(0x20'0000, false));
  EXPECT_TRUE(atc.lookup(0x5000, false));
  EXPECT_EQ(stats.counter("dev.atc.evictions").value(), 1u);
}

TEST(DeviceAtc, FifoReplacesTheOldestFillWhateverItsUse) {
  StatsRegistry stats;
  AtcConfig c = config(2);
  c.replacement = AtcConfig::Replacement::kFifo;
  DeviceAtc atc(c, stats, "dev.atc");
  atc.fill(success(0x1000, 0x8000'1000, 12));
  atc.fill(success(0x2000, 0x8000'2000, 12));
  ASSERT_TRUE(atc.lookup(0x1000, false));      // used last, but filled first
  atc.fill(success(0x3000, 0x8000'3000, 12));  // replaces it
  EXPECT_FALSE(atc.peek(0x1000, false));
  EXPECT_TRUE(atc.peek(0x2000, false));
}

TEST(DeviceAtc, InvalidationRemovesOverlappingEntriesAndWaitsForTheirUse) {
  StatsRegistry stats;
  DeviceAtc atc(config(8), stats, "dev.atc");
  atc.fill(success(0x0000, 0x8000'0000, 12));
  atc.fill(success(0x1000, 0x8000'1000, 12));
  atc.fill(success(0x4000, 0x8000'4000, 12));
  atc.used(0x1000, ns_to_ps(5000));
  // 8 KiB from 0: the first two go; the second was in use until 5 us.
  const std::optional<Ps> done = atc.atc_invalidate(inv(0x0000, 1), ns_to_ps(1000));
  ASSERT_TRUE(done);
  EXPECT_EQ(*done, ns_to_ps(5000));
  EXPECT_FALSE(atc.lookup(0x0000, false));
  EXPECT_FALSE(atc.lookup(0x1000, false));
  EXPECT_TRUE(atc.lookup(0x4000, false));
  // Nothing in use: the endpoint's own time.
  EXPECT_EQ(*atc.atc_invalidate(inv(0x4000, 0), ns_to_ps(1000)), ns_to_ps(1100));
  EXPECT_EQ(atc.size(), 0u);
  EXPECT_EQ(stats.counter("dev.atc.invalidated").value(), 3u);
  EXPECT_EQ(stats.counter("dev.atc.invalidations").value(), 2u);
}

// A device issues ahead of simulated time: an entry evicted while an access
// through it is in flight must still hold back the next invalidation.
TEST(DeviceAtc, AnEvictedEntryInUseDelaysTheNextInvalidation) {
  StatsRegistry stats;
  DeviceAtc atc(config(1), stats, "dev.atc");
  atc.fill(success(0x1000, 0x8000'1000, 12));
  atc.used(0x1000, ns_to_ps(9000));
  atc.fill(success(0x2000, 0x8000'2000, 12));  // evicts it
  EXPECT_FALSE(atc.peek(0x1000, false));
  EXPECT_EQ(*atc.atc_invalidate(inv(0x1000, 0), ns_to_ps(1000)), ns_to_ps(9000));
}

// A new answer replaces every entry it overlaps (a write-capable block over
// an older read-only page).
TEST(DeviceAtc, AFillReplacesWhatItOverlaps) {
  StatsRegistry stats;
  DeviceAtc atc(config(4), stats, "dev.atc");
  atc.fill(success(0x20'3000, 0x8000'3000, 12, false));
  atc.fill(success(0x20'0000, 0x4000'0000, 21, true));
  EXPECT_EQ(atc.size(), 1u);
  const auto h = atc.peek(0x20'3000, true);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->pa, 0x4000'3000u);
}

TEST(DeviceAtc, SizeAllInvalidatesEverything) {
  StatsRegistry stats;
  DeviceAtc atc(config(8), stats, "dev.atc");
  atc.fill(success(0x1000, 0x8000'1000, 12));
  atc.fill(success(0x7fff'0000'0000, 0x8000'2000, 12));
  atc.atc_invalidate(inv(0, smmu::AtsDevice::Invalidation::kSizeAll), 0);
  EXPECT_EQ(atc.size(), 0u);
}

TEST(DeviceAtc, DisabledKeepsNothingAndMakesNoStatistics) {
  StatsRegistry stats;
  DeviceAtc atc(AtcConfig{}, stats, "dev.atc");
  atc.fill(success(0x1000, 0x8000'0000, 12));
  EXPECT_FALSE(atc.lookup(0x1000, false));
  EXPECT_FALSE(stats.has("dev.atc.lookups"));
}

TEST(DeviceAtc, ValidateNamesTheField) {
  AtcConfig c = config(4);
  c.invalidate_ns = -1;
  try {
    c.validate("atc");
    FAIL() << "accepted";
  } catch (const InvalidConfig& e) {
    EXPECT_EQ(e.field(), "atc.invalidate_ns");
  }
}

}  // namespace
}  // namespace smmu_vp

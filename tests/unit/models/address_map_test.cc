// AddressMap: decoding of the platform address map and its overlap rules.
#include "memory/address_map.h"

#include <cstdint>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace smmu_vp {
namespace {

constexpr uint64_t kDramBase = 0x80000000;
constexpr uint64_t kDramSize = 1ull << 30;

class AddressMapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    map.add({"dram", kDramBase, kDramSize, 0});
    map.add({"dma0", 0x10000000, 0x1000, 1});
    map.add({"intc", 0x08000000, 0x1000, 2});
  }
  AddressMap map;
};

const char* name_at(const AddressMap& m, uint64_t addr, uint64_t len = 1) {
  const AddressRange* r = m.decode(addr, len);
  return r ? r->name.c_str() : "(none)";
}

TEST_F(AddressMapTest, DecodesInsideEachRange) {
  EXPECT_STREQ(name_at(map, kDramBase), "dram");
  EXPECT_STREQ(name_at(map, kDramBase + kDramSize - 1), "dram");
  EXPECT_STREQ(name_at(map, 0x10000000, 4), "dma0");
  EXPECT_STREQ(name_at(map, 0x10000FFC, 4), "dma0");
  EXPECT_STREQ(name_at(map, 0x08000040, 4), "intc");
  EXPECT_EQ(map.decode(0x10000010)->port, 1u);
  EXPECT_EQ(map.decode(0x08000000)->port, 2u);
}

TEST_F(AddressMapTest, MissesOutsideEveryRange) {
  EXPECT_EQ(map.decode(0), nullptr);
  EXPECT_EQ(map.decode(0x07FFFFFF), nullptr);
  EXPECT_EQ(map.decode(0x10001000), nullptr);  // one past dma0
  EXPECT_EQ(map.decode(kDramBase - 1), nullptr);
  EXPECT_EQ(map.decode(kDramBase + kDramSize), nullptr);
  EXPECT_EQ(map.decode(UINT64_MAX), nullptr);
}

TEST_F(AddressMapTest, AccessRunningOffTheEndDecodesToNone) {
  EXPECT_EQ(map.decode(0x10000FFE, 4), nullptr);
  EXPECT_EQ(map.decode(kDramBase + kDramSize - 4, 8), nullptr);
  EXPECT_EQ(map.decode(kDramBase - 4, 8), nullptr);  // starts before the range
  EXPECT_EQ(map.decode(0x10000000, 0x1001), nullptr);
  EXPECT_STREQ(name_at(map, 0x10000000, 0x1000), "dma0");  // exactly the whole range
}

TEST_F(AddressMapTest, ZeroLengthDecodesAsOneByte) {
  EXPECT_STREQ(name_at(map, 0x10000FFF, 0), "dma0");
  EXPECT_EQ(map.decode(0x10001000, 0), nullptr);
}

TEST(AddressMap, StraddlingTwoAdjacentRangesDecodesToNone) {
  AddressMap m;
  m.add({"a", 0x1000, 0x1000, 0});
  m.add({"b", 0x2000, 0x1000, 1});  // adjacent is not overlapping
  EXPECT_STREQ(name_at(m, 0x1FF8, 8), "a");
  EXPECT_STREQ(name_at(m, 0x2000, 8), "b");
  EXPECT_EQ(m.decode(0x1FFC, 8), nullptr);
  EXPECT_EQ(m.decode(0x1FFF, 2), nullptr);
}

// The error must name both ranges: it is what the user sees for a bad config.
void expect_overlap(AddressMap& m, const AddressRange& r, const std::string& other) {
  try {
    m.add(r);
    FAIL() << "adding '" << r.name << "' should have failed";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'" + r.name + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'" + other + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("overlap"), std::string::npos) << msg;
  }
}

TEST_F(AddressMapTest, OverlapRejectedNamingBoth) {
  expect_overlap(map, {"low_tail", 0x0FFFF000, 0x1001, 3}, "dma0");      // last byte on dma0's first
  expect_overlap(map, {"high_head", 0x10000FFF, 0x10, 3}, "dma0");      // first byte on dma0's last
  expect_overlap(map, {"inside", 0x10000100, 0x10, 3}, "dma0");
  expect_overlap(map, {"around", 0x0F000000, 0x02000000, 3}, "dma0");   // contains dma0
  expect_overlap(map, {"same", kDramBase, kDramSize, 3}, "dram");
  expect_overlap(map, {"top", kDramBase + kDramSize - 1, 2, 3}, "dram");
  // Nothing was added by the failed calls.
  EXPECT_EQ(map.ranges().size(), 3u);
  EXPECT_EQ(map.find("inside"), nullptr);
}

TEST_F(AddressMapTest, AdjacentRangesAccepted) {
  EXPECT_NO_THROW(map.add({"below", 0x0FFFF000, 0x1000, 3}));
  EXPECT_NO_THROW(map.add({"above", 0x10001000, 0x1000, 4}));
  EXPECT_STREQ(name_at(map, 0x0FFFFFFF), "below");
  EXPECT_STREQ(name_at(map, 0x10001000), "above");
}

TEST(AddressMap, ZeroSizeRejected) {
  AddressMap m;
  try {
    m.add({"empty", 0x1000, 0, 0});
    FAIL() << "zero size accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'empty'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(m.ranges().empty());
}

TEST(AddressMap, WrappingRangeRejected) {
  AddressMap m;
  EXPECT_THROW(m.add({"wrap", 0xFFFFFFFFFFFFF000ull, 0x2000, 0}), std::invalid_argument);
  EXPECT_THROW(m.add({"wrap2", 2, UINT64_MAX, 0}), std::invalid_argument);
  EXPECT_TRUE(m.ranges().empty());
}

TEST(AddressMap, RangeEndingAtTopOfAddressSpace) {
  AddressMap m;
  m.add({"top", 0xFFFFFFFFFFFFF000ull, 0x1000, 0});
  EXPECT_STREQ(name_at(m, UINT64_MAX), "top");
  EXPECT_STREQ(name_at(m, 0xFFFFFFFFFFFFFFF8ull, 8), "top");
  EXPECT_EQ(m.decode(UINT64_MAX, 2), nullptr);  // would run past the top
  EXPECT_EQ(m.decode(0xFFFFFFFFFFFFEFFFull), nullptr);
}

TEST(AddressMap, WholeAddressSpace) {
  AddressMap m;
  m.add({"all", 0, UINT64_MAX, 0});  // [0, 2^64 - 2]
  EXPECT_STREQ(name_at(m, 0), "all");
  EXPECT_STREQ(name_at(m, UINT64_MAX - 1), "all");
  EXPECT_EQ(m.decode(UINT64_MAX), nullptr);
  // The one byte left is a valid range of its own.
  EXPECT_NO_THROW(m.add({"last", UINT64_MAX, 1, 1}));
  EXPECT_STREQ(name_at(m, UINT64_MAX), "last");
  EXPECT_EQ(m.decode(UINT64_MAX - 1, 2), nullptr);
}

TEST_F(AddressMapTest, RangesSortedByBaseAndFindByName) {
  const auto& r = map.ranges();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].name, "intc");
  EXPECT_EQ(r[1].name, "dma0");
  EXPECT_EQ(r[2].name, "dram");
  ASSERT_NE(map.find("dma0"), nullptr);
  EXPECT_EQ(map.find("dma0")->base, 0x10000000u);
  EXPECT_EQ(map.find("dma0")->last(), 0x10000FFFu);
  EXPECT_EQ(map.find("smmu"), nullptr);
}

}  // namespace
}  // namespace smmu_vp

// sw/lib bitmaps: word-boundary edge cases, then random maps against a
// brute-force model.
#include "lib/bitmap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

constexpr uint64_t kOnes = ~0ull;

TEST(Bitmap, WordsMacro) {
  EXPECT_EQ(SW_BITMAP_WORDS(0), 0u);
  EXPECT_EQ(SW_BITMAP_WORDS(1), 1u);
  EXPECT_EQ(SW_BITMAP_WORDS(64), 1u);
  EXPECT_EQ(SW_BITMAP_WORDS(65), 2u);
  EXPECT_EQ(SW_BITMAP_WORDS(128), 2u);
  EXPECT_EQ(SW_BITMAP_WORDS(129), 3u);
  SW_BITMAP_DECLARE(map, 130);
  EXPECT_EQ(sizeof(map), 3 * sizeof(uint64_t));
}

TEST(Bitmap, SingleBitsAtWordBoundaries) {
  uint64_t map[3] = {};
  for (const size_t bit : {0u, 63u, 64u, 127u, 128u, 191u}) {
    EXPECT_FALSE(sw_bitmap_test_bit(map, bit));
    sw_bitmap_set_bit(map, bit);
    EXPECT_TRUE(sw_bitmap_test_bit(map, bit));
  }
  EXPECT_EQ(map[0], 0x8000000000000001ull);
  EXPECT_EQ(map[1], 0x8000000000000001ull);
  EXPECT_EQ(map[2], 0x8000000000000001ull);
  sw_bitmap_set_bit(map, 63);  // idempotent
  EXPECT_EQ(map[0], 0x8000000000000001ull);

  sw_bitmap_clear_bit(map, 63);
  sw_bitmap_clear_bit(map, 128);
  EXPECT_EQ(map[0], 1ull);
  EXPECT_EQ(map[1], 0x8000000000000001ull);
  EXPECT_EQ(map[2], 0x8000000000000000ull);
  EXPECT_FALSE(sw_bitmap_test_bit(map, 63));
  sw_bitmap_clear_bit(map, 63);  // clearing a clear bit is harmless
  EXPECT_EQ(map[0], 1ull);
}

TEST(Bitmap, SetRanges) {
  struct Case {
    size_t start, n;
    uint64_t w0, w1, w2, w3;
  };
  const Case cases[] = {
      {0, 0, 0, 0, 0, 0},
      {70, 0, 0, 0, 0, 0},
      {0, 1, 1, 0, 0, 0},
      {63, 1, 1ull << 63, 0, 0, 0},
      {64, 1, 0, 1, 0, 0},
      {0, 64, kOnes, 0, 0, 0},                         // exactly one word
      {32, 32, 0xFFFFFFFF00000000ull, 0, 0, 0},        // ends on a boundary
      {60, 10, 0xF000000000000000ull, 0x3F, 0, 0},     // crosses one boundary
      {64, 128, 0, kOnes, kOnes, 0},                   // whole inner words
      {1, 254, kOnes - 1, kOnes, kOnes, kOnes >> 1},   // partial at both ends
      {63, 130, 1ull << 63, kOnes, kOnes, 1},          // 1 + 128 + 1
      {0, 256, kOnes, kOnes, kOnes, kOnes},
  };
  for (const Case& c : cases) {
    uint64_t map[4] = {};
    sw_bitmap_set(map, c.start, c.n);
    EXPECT_EQ(map[0], c.w0) << c.start << "+" << c.n;
    EXPECT_EQ(map[1], c.w1) << c.start << "+" << c.n;
    EXPECT_EQ(map[2], c.w2) << c.start << "+" << c.n;
    EXPECT_EQ(map[3], c.w3) << c.start << "+" << c.n;

    // Clearing the same range from all ones leaves the complement.
    uint64_t full[4] = {kOnes, kOnes, kOnes, kOnes};
    sw_bitmap_clear(full, c.start, c.n);
    EXPECT_EQ(full[0], ~c.w0) << c.start << "+" << c.n;
    EXPECT_EQ(full[1], ~c.w1) << c.start << "+" << c.n;
    EXPECT_EQ(full[2], ~c.w2) << c.start << "+" << c.n;
    EXPECT_EQ(full[3], ~c.w3) << c.start << "+" << c.n;
  }
}

TEST(Bitmap, RangeDoesNotTouchWordsBeyondIt) {
  // A guard word after the map must survive a range ending at the map's end.
  uint64_t map[3] = {0, 0, 0x1234};
  sw_bitmap_set(map, 100, 28);
  EXPECT_EQ(map[1], 0xFFFFFFF000000000ull);
  EXPECT_EQ(map[2], 0x1234u);
  sw_bitmap_clear(map, 64, 64);
  EXPECT_EQ(map[1], 0u);
  EXPECT_EQ(map[2], 0x1234u);
}

TEST(Bitmap, Zero) {
  uint64_t map[3] = {kOnes, kOnes, kOnes};
  sw_bitmap_zero(map, 65);  // rounds up to whole words
  EXPECT_EQ(map[0], 0u);
  EXPECT_EQ(map[1], 0u);
  EXPECT_EQ(map[2], kOnes);
}

TEST(Bitmap, FindNextBit) {
  uint64_t map[3] = {};
  EXPECT_EQ(sw_bitmap_find_next_bit(map, 192, 0), 192u);  // none: size
  EXPECT_EQ(sw_bitmap_find_next_bit(map, 0, 0), 0u);
  sw_bitmap_set_bit(map, 0);
  sw_bitmap_set_bit(map, 63);
  sw_bitmap_set_bit(map, 64);
  sw_bitmap_set_bit(map, 150);
  EXPECT_EQ(sw_bitmap_find_next_bit(map, 192, 0), 0u);
  EXPECT_EQ(sw_bitmap_find_next_bit(map, 192, 1), 63u);
  EXPECT_EQ(sw_bitmap_find_next_bit(map, 192, 63), 63u);
  EXPECT_EQ(sw_bitmap_find_next_bit(map, 192, 64), 64u);
  EXPECT_EQ(sw_bitmap_find_next_bit(map, 192, 65), 150u);  // skips an empty tail of word 1
  EXPECT_EQ(sw_bitmap_find_next_bit(map, 192, 151), 192u);
  EXPECT_EQ(sw_bitmap_find_next_bit(map, 192, 192), 192u);
  EXPECT_EQ(sw_bitmap_find_next_bit(map, 192, 1000), 192u);  // offset past size
  // Bits at or beyond size are not reported, within or after the last word.
  EXPECT_EQ(sw_bitmap_find_next_bit(map, 150, 65), 150u);
  EXPECT_EQ(sw_bitmap_find_next_bit(map, 151, 65), 150u);
  EXPECT_EQ(sw_bitmap_find_next_bit(map, 64, 1), 63u);
  EXPECT_EQ(sw_bitmap_find_next_bit(map, 63, 1), 63u);
  EXPECT_EQ(sw_bitmap_find_next_bit(map, 100, 65), 100u);
}

TEST(Bitmap, FindNextZeroBit) {
  uint64_t map[3] = {kOnes, kOnes, kOnes};
  EXPECT_EQ(sw_bitmap_find_next_zero_bit(map, 192, 0), 192u);  // none: size
  EXPECT_EQ(sw_bitmap_find_next_zero_bit(map, 100, 0), 100u);  // size inside a word
  sw_bitmap_clear_bit(map, 63);
  sw_bitmap_clear_bit(map, 64);
  sw_bitmap_clear_bit(map, 191);
  EXPECT_EQ(sw_bitmap_find_next_zero_bit(map, 192, 0), 63u);
  EXPECT_EQ(sw_bitmap_find_next_zero_bit(map, 192, 64), 64u);
  EXPECT_EQ(sw_bitmap_find_next_zero_bit(map, 192, 65), 191u);
  EXPECT_EQ(sw_bitmap_find_next_zero_bit(map, 191, 65), 191u);  // bit 191 is outside
  EXPECT_EQ(sw_bitmap_find_next_zero_bit(map, 192, 192), 192u);

  // Zeros in the unused tail of the last word are ignored.
  uint64_t tail[2] = {kOnes, 0xFF};
  EXPECT_EQ(sw_bitmap_find_next_zero_bit(tail, 72, 0), 72u);
  EXPECT_EQ(sw_bitmap_find_next_zero_bit(tail, 73, 0), 72u);
}

TEST(Bitmap, Weight) {
  uint64_t map[3] = {kOnes, 0x5, kOnes};
  EXPECT_EQ(sw_bitmap_weight(map, 0), 0u);
  EXPECT_EQ(sw_bitmap_weight(map, 1), 1u);
  EXPECT_EQ(sw_bitmap_weight(map, 63), 63u);
  EXPECT_EQ(sw_bitmap_weight(map, 64), 64u);
  EXPECT_EQ(sw_bitmap_weight(map, 65), 65u);
  EXPECT_EQ(sw_bitmap_weight(map, 66), 65u);
  EXPECT_EQ(sw_bitmap_weight(map, 67), 66u);
  EXPECT_EQ(sw_bitmap_weight(map, 128), 66u);
  EXPECT_EQ(sw_bitmap_weight(map, 130), 68u);  // tail bits of word 2 not counted
  EXPECT_EQ(sw_bitmap_weight(map, 192), 130u);
}

TEST(Bitmap, FindNextZeroAreaBasics) {
  uint64_t map[4] = {};
  EXPECT_EQ(sw_bitmap_find_next_zero_area(map, 256, 0, 10, 0), 0u);
  EXPECT_EQ(sw_bitmap_find_next_zero_area(map, 256, 5, 10, 0), 5u);
  EXPECT_EQ(sw_bitmap_find_next_zero_area(map, 256, 0, 256, 0), 0u);  // whole map
  EXPECT_GT(sw_bitmap_find_next_zero_area(map, 256, 1, 256, 0), 256u);  // one too many
  EXPECT_GT(sw_bitmap_find_next_zero_area(map, 256, 0, 257, 0), 256u);

  sw_bitmap_set(map, 0, 3);
  sw_bitmap_set(map, 10, 1);
  // The first gap [3, 10) is too small for 8; the search restarts after bit 10.
  EXPECT_EQ(sw_bitmap_find_next_zero_area(map, 256, 0, 7, 0), 3u);
  EXPECT_EQ(sw_bitmap_find_next_zero_area(map, 256, 0, 8, 0), 11u);
  // An area may cross word boundaries.
  sw_bitmap_set(map, 11, 50);  // busy up to bit 60
  EXPECT_EQ(sw_bitmap_find_next_zero_area(map, 256, 0, 100, 0), 61u);
  EXPECT_EQ(sw_bitmap_find_next_zero_area(map, 256, 0, 195, 0), 61u);  // to the very end
  EXPECT_GE(sw_bitmap_find_next_zero_area(map, 256, 0, 196, 0), 256u);
}

TEST(Bitmap, FindNextZeroAreaAlignment) {
  uint64_t map[4] = {};
  sw_bitmap_set(map, 0, 5);
  // First zero is 5; aligned up to 8, 16, 64.
  EXPECT_EQ(sw_bitmap_find_next_zero_area(map, 256, 0, 4, 7), 8u);
  EXPECT_EQ(sw_bitmap_find_next_zero_area(map, 256, 0, 4, 15), 16u);
  EXPECT_EQ(sw_bitmap_find_next_zero_area(map, 256, 0, 4, 63), 64u);
  // A busy bit inside the aligned candidate moves to the next aligned slot.
  sw_bitmap_set_bit(map, 66);
  EXPECT_EQ(sw_bitmap_find_next_zero_area(map, 256, 0, 4, 63), 128u);
  EXPECT_EQ(sw_bitmap_find_next_zero_area(map, 256, 0, 4, 3), 8u);
  EXPECT_EQ(sw_bitmap_find_next_zero_area(map, 256, 64, 4, 3), 68u);
  // Start that is already aligned and free.
  EXPECT_EQ(sw_bitmap_find_next_zero_area(map, 256, 192, 64, 63), 192u);
  // Aligned slot exists but the area would run past size.
  EXPECT_GT(sw_bitmap_find_next_zero_area(map, 200, 0, 80, 63), 200u);
  EXPECT_EQ(sw_bitmap_find_next_zero_area(map, 200, 0, 8, 63), 128u);
}

TEST(Bitmap, FindNextZeroAreaNothingFits) {
  uint64_t full[2] = {kOnes, kOnes};
  EXPECT_GE(sw_bitmap_find_next_zero_area(full, 128, 0, 1, 0), 128u);
  EXPECT_GE(sw_bitmap_find_next_zero_area(full, 100, 0, 1, 0), 100u);
  // Zero bits only in the unused tail never count.
  uint64_t tail[2] = {kOnes, 0xF};
  EXPECT_GE(sw_bitmap_find_next_zero_area(tail, 68, 0, 1, 0), 68u);
  EXPECT_EQ(sw_bitmap_find_next_zero_area(tail, 69, 0, 1, 0), 68u);
  // Start past size.
  uint64_t empty[2] = {};
  EXPECT_GE(sw_bitmap_find_next_zero_area(empty, 128, 200, 1, 0), 128u);
  // nr == 0: as Linux, the aligned first zero, or size when there is none.
  EXPECT_EQ(sw_bitmap_find_next_zero_area(empty, 128, 3, 0, 0), 3u);
  EXPECT_EQ(sw_bitmap_find_next_zero_area(full, 128, 0, 0, 0), 128u);
}

// Brute-force references.
class Model {
 public:
  explicit Model(size_t size) : bits_(size) {}
  size_t next(size_t size, size_t offset, bool value) const {
    for (size_t i = offset; i < size; i++)
      if (bits_[i] == value) return i;
    return size;
  }
  bool area_free(size_t index, size_t nr) const {
    for (size_t i = index; i < index + nr; i++)
      if (bits_[i]) return false;
    return true;
  }
  // Smallest aligned index >= start with a free area inside size, or size
  // when none: every aligned candidate below Linux's answer is busy.
  size_t zero_area(size_t size, size_t start, size_t nr, size_t align_mask) const {
    for (size_t index = (start + align_mask) & ~align_mask; index + nr <= size;
         index += align_mask + 1)
      if (area_free(index, nr)) return index;
    return size;
  }
  std::vector<bool> bits_;
};

TEST(Bitmap, RandomAgainstModel) {
  constexpr size_t kSize = 300;  // not a multiple of 64
  std::mt19937 rng(12345);
  for (int round = 0; round < 300; round++) {
    uint64_t map[SW_BITMAP_WORDS(kSize)];
    for (uint64_t& w : map) w = (uint64_t{rng()} << 32) | rng();  // tail bits random too
    Model model(kSize);
    for (size_t i = 0; i < kSize; i++) model.bits_[i] = ((map[i / 64] >> (i % 64)) & 1) != 0;

    // Random range edits, sparse or dense depending on the round.
    for (int edit = 0; edit < 20; edit++) {
      const size_t start = rng() % kSize;
      const size_t n = rng() % (kSize - start + 1);
      const bool set = static_cast<int>(rng() % 3) < round % 3;
      if (set)
        sw_bitmap_set(map, start, n);
      else
        sw_bitmap_clear(map, start, n);
      for (size_t i = start; i < start + n; i++) model.bits_[i] = set;
    }
    for (size_t i = 0; i < kSize; i++) ASSERT_EQ(sw_bitmap_test_bit(map, i), model.bits_[i]) << i;

    // Weight over every prefix length, including partial last words.
    size_t weight = 0;
    for (size_t size = 0; size <= kSize; size++) {
      ASSERT_EQ(sw_bitmap_weight(map, size), weight) << size;
      if (size < kSize && model.bits_[size]) weight++;
    }

    for (int q = 0; q < 50; q++) {
      const size_t size = rng() % (kSize + 1);
      const size_t offset = rng() % (kSize + 10);
      ASSERT_EQ(sw_bitmap_find_next_bit(map, size, offset), model.next(size, offset, true));
      ASSERT_EQ(sw_bitmap_find_next_zero_bit(map, size, offset), model.next(size, offset, false));

      const size_t start = rng() % (size + 1);
      const size_t nr = 1 + rng() % 24;
      const size_t align_mask = (size_t{1} << (rng() % 5)) - 1;
      const size_t want = model.zero_area(size, start, nr, align_mask);
      const size_t got = sw_bitmap_find_next_zero_area(map, size, start, nr, align_mask);
      if (want < size) {
        ASSERT_EQ(got, want) << "size " << size << " start " << start << " nr " << nr
                             << " align_mask " << align_mask;
      } else {
        ASSERT_GE(got, size) << "size " << size << " start " << start << " nr " << nr
                             << " align_mask " << align_mask;
      }
    }
  }
}

}  // namespace

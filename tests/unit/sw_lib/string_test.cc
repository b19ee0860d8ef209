// sw/lib string functions, checked against the host C library over every
// alignment and a range of lengths (word and byte paths and their joins).
#include "lib/string.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kBuf = 160;

// Recognisable, non-zero content so misplaced bytes show.
void Fill(unsigned char* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) p[i] = static_cast<unsigned char>((i * 37 + seed * 11 + 1) & 0xFF);
}

int Sign(int v) { return (v > 0) - (v < 0); }

TEST(String, MemsetAllAlignmentsAndLengths) {
  alignas(8) unsigned char got[kBuf];
  alignas(8) unsigned char want[kBuf];
  for (size_t off = 0; off < 16; off++) {
    for (size_t len = 0; off + len <= kBuf && len < 80; len++) {
      Fill(got, kBuf, 1);
      Fill(want, kBuf, 1);
      void* ret = sw_memset(got + off, 0x1A5, len);  // only the low byte counts
      std::memset(want + off, 0xA5, len);
      ASSERT_EQ(ret, got + off);
      ASSERT_EQ(std::memcmp(got, want, kBuf), 0) << "off " << off << " len " << len;
    }
  }
  unsigned char zero[kBuf];
  Fill(zero, kBuf, 2);
  sw_memset(zero, 0, kBuf);
  for (const unsigned char c : zero) ASSERT_EQ(c, 0);
}

TEST(String, MemcpyAllAlignmentsAndLengths) {
  alignas(8) unsigned char src[kBuf];
  alignas(8) unsigned char got[kBuf];
  alignas(8) unsigned char want[kBuf];
  Fill(src, kBuf, 3);
  for (size_t soff = 0; soff < 16; soff++) {
    for (size_t doff = 0; doff < 16; doff++) {
      for (size_t len = 0; len < 80; len++) {
        Fill(got, kBuf, 4);
        Fill(want, kBuf, 4);
        void* ret = sw_memcpy(got + doff, src + soff, len);
        std::memcpy(want + doff, src + soff, len);
        ASSERT_EQ(ret, got + doff);
        ASSERT_EQ(std::memcmp(got, want, kBuf), 0)
            << "soff " << soff << " doff " << doff << " len " << len;
      }
    }
  }
}

TEST(String, MemmoveOverlappingBothWays) {
  alignas(8) unsigned char got[kBuf];
  alignas(8) unsigned char want[kBuf];
  for (size_t src = 0; src < 24; src++) {
    for (size_t dst = 0; dst < 24; dst++) {
      for (size_t len = 0; len + 24 <= kBuf && len < 70; len++) {
        Fill(got, kBuf, 5);
        Fill(want, kBuf, 5);
        void* ret = sw_memmove(got + dst, got + src, len);
        std::memmove(want + dst, want + src, len);
        ASSERT_EQ(ret, got + dst);
        ASSERT_EQ(std::memcmp(got, want, kBuf), 0)
            << "src " << src << " dst " << dst << " len " << len;
      }
    }
  }
}

TEST(String, Memcmp) {
  const unsigned char a[] = {1, 2, 3, 4};
  const unsigned char b[] = {1, 2, 3, 5};
  EXPECT_EQ(sw_memcmp(a, b, 0), 0);
  EXPECT_EQ(sw_memcmp(a, b, 3), 0);
  EXPECT_LT(sw_memcmp(a, b, 4), 0);
  EXPECT_GT(sw_memcmp(b, a, 4), 0);
  EXPECT_EQ(sw_memcmp(a, a, 4), 0);
  // Bytes compare unsigned: 0x80 sorts after 0x01.
  const unsigned char hi[] = {0x80};
  const unsigned char lo[] = {0x01};
  EXPECT_GT(sw_memcmp(hi, lo, 1), 0);
  EXPECT_LT(sw_memcmp(lo, hi, 1), 0);

  std::vector<unsigned char> x(100), y(100);
  Fill(x.data(), x.size(), 6);
  for (size_t i = 0; i < x.size(); i++) {
    y = x;
    y[i] = static_cast<unsigned char>(y[i] + 1);
    ASSERT_EQ(Sign(sw_memcmp(x.data(), y.data(), x.size())),
              Sign(std::memcmp(x.data(), y.data(), x.size())))
        << i;
    ASSERT_EQ(sw_memcmp(x.data(), y.data(), i), 0);
  }
}

TEST(String, Strcmp) {
  EXPECT_EQ(sw_strcmp("", ""), 0);
  EXPECT_EQ(sw_strcmp("abc", "abc"), 0);
  EXPECT_LT(sw_strcmp("abc", "abd"), 0);
  EXPECT_GT(sw_strcmp("abd", "abc"), 0);
  EXPECT_LT(sw_strcmp("ab", "abc"), 0);  // prefix sorts first
  EXPECT_GT(sw_strcmp("abc", "ab"), 0);
  EXPECT_LT(sw_strcmp("", "a"), 0);
  EXPECT_GT(sw_strcmp("a", ""), 0);
  EXPECT_GT(sw_strcmp("\x80", "\x01"), 0);  // unsigned, as the C library
  EXPECT_EQ(sw_strcmp("smmu0", "smmu0"), 0);
  EXPECT_NE(sw_strcmp("dma0", "dma1"), 0);
}

TEST(String, Strlen) {
  EXPECT_EQ(sw_strlen(""), 0u);
  EXPECT_EQ(sw_strlen("a"), 1u);
  EXPECT_EQ(sw_strlen("hello, world"), 12u);
  const char embedded[] = "ab\0cd";
  EXPECT_EQ(sw_strlen(embedded), 2u);
  std::vector<char> s(1000, 'x');
  s.back() = '\0';
  EXPECT_EQ(sw_strlen(s.data()), 999u);
}

}  // namespace

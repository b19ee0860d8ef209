// Test-side translation table builder: writes VMSAv8-64 tables into a
// FakeMemory with its own descriptor encoder (literal bit positions, not
// translation_table.h), and records what it mapped, so that tests can compare
// the SMMU's walks and translations against an independent reference.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "fake_memory.h"

namespace smmu_vp::smmu::test {

struct LeafBits {
  // Stage 1
  bool read_only = false;  // AP[2]
  bool user = true;        // AP[1]
  bool pxn = false;
  bool uxn = false;
  unsigned attr = 1;
  bool ng = true;
  // Both stages
  bool af = true;
  unsigned sh = 3;
  bool contiguous = false;
  // Stage 2
  bool s2_read = true;
  bool s2_write = true;
  unsigned s2_xn = 0;
  unsigned mem_attr = 0xF;  // Normal write-back
};

class TableBuilder {
 public:
  struct Mapping {
    uint64_t va, size, pa;
    unsigned level;
  };

  // Tables are allocated in [pool_lo, pool_hi) of `mem`; descriptors and the
  // TTB hold addresses `offset` above those PAs (an IPA window for nested).
  TableBuilder(FakeMemory& mem, unsigned stage, unsigned granule_shift, unsigned ias, unsigned start,
               uint64_t pool_lo, uint64_t pool_hi, uint64_t offset = 0)
      : mem_(mem), stage_(stage), gshift_(granule_shift), ias_(ias), start_(start), next_(pool_lo),
        pool_hi_(pool_hi), offset_(offset) {
    root_ = alloc(8ull << (ias_ - lowest_bit(start_)));
  }

  uint64_t ttb() const { return root_ + offset_; }
  uint64_t root_pa() const { return root_; }
  unsigned start() const { return start_; }
  unsigned ias() const { return ias_; }
  const std::vector<Mapping>& mappings() const { return maps_; }

  // Lowest input bit resolved at a level: the page offset plus one table's
  // worth of bits for every level below.
  unsigned lowest_bit(unsigned level) const {
    unsigned b = gshift_;
    for (unsigned l = 3; l > level; --l) b += gshift_ - 3;
    return b;
  }

  uint64_t size_at(unsigned level) const { return 1ull << lowest_bit(level); }

  // PA of the descriptor for `va` at `level`, creating the tables above it
  // (with `create`); 0 when a table on the way is missing.
  uint64_t slot(uint64_t va, unsigned level, bool create = true) {
    uint64_t table = root_;
    for (unsigned l = start_; l < level; ++l) {
      const uint64_t s = table + 8 * index(l, va);
      uint64_t d = mem_.peek64(s);
      if ((d & 3) != 3) {
        if (!create) return 0;
        EXPECT_EQ(d, 0u) << "table builder: a leaf is in the way at level " << l;
        const uint64_t t = alloc(1ull << gshift_);
        mem_.poke64(s, (t + offset_) | 3);
        tables_[{l + 1, va >> lowest_bit(l)}] = t;
        d = mem_.peek64(s);
      }
      table = (d & ((1ull << 48) - 1) & ~((1ull << gshift_) - 1)) - offset_;
    }
    return table + 8 * index(level, va);
  }

  uint64_t encode_leaf(uint64_t pa, unsigned level, const LeafBits& b) const {
    uint64_t d = pa | (level == 3 ? 3u : 1u);
    d |= static_cast<uint64_t>(b.sh) << 8;
    if (b.af) d |= 1ull << 10;
    if (b.contiguous) d |= 1ull << 52;
    if (stage_ == 1) {
      d |= static_cast<uint64_t>(b.attr) << 2;
      if (b.user) d |= 1ull << 6;
      if (b.read_only) d |= 1ull << 7;
      if (b.ng) d |= 1ull << 11;
      if (b.pxn) d |= 1ull << 53;
      if (b.uxn) d |= 1ull << 54;
    } else {
      d |= static_cast<uint64_t>(b.mem_attr) << 2;
      if (b.s2_read) d |= 1ull << 6;
      if (b.s2_write) d |= 1ull << 7;
      d |= static_cast<uint64_t>(b.s2_xn) << 53;
    }
    return d;
  }

  void map(uint64_t va, uint64_t pa, unsigned level, const LeafBits& b = {}) {
    const uint64_t size = size_at(level);
    ASSERT_EQ(va % size, 0u);
    ASSERT_EQ(pa % size, 0u);
    mem_.poke64(slot(va, level), encode_leaf(pa, level, b));
    maps_.push_back({va, size, pa, level});
  }

  // Writes a raw descriptor (tables above are created as needed).
  void set_raw(uint64_t va, unsigned level, uint64_t desc) { mem_.poke64(slot(va, level), desc); }
  // ORs bits into the existing descriptor at `level` on the path of `va`.
  void or_bits(uint64_t va, unsigned level, uint64_t bits) {
    const uint64_t s = slot(va, level, false);
    ASSERT_NE(s, 0u);
    mem_.poke64(s, mem_.peek64(s) | bits);
  }
  // PA of the table at `level` on the path of `va` (0 if not created).
  uint64_t table_pa(uint64_t va, unsigned level) const {
    if (level == start_) return root_;
    auto it = tables_.find({level, va >> lowest_bit(level - 1)});
    return it == tables_.end() ? 0 : it->second;
  }

  const Mapping* find(uint64_t va) const {
    for (const Mapping& m : maps_)
      if (va >= m.va && va - m.va < m.size) return &m;
    return nullptr;
  }
  bool overlaps(uint64_t va, uint64_t size) const {
    for (const Mapping& m : maps_)
      if (va < m.va + m.size && m.va < va + size) return true;
    return false;
  }
  // Deepest level whose table exists on the path of `va`.
  unsigned deepest_table(uint64_t va) const {
    unsigned l = start_;
    while (l < 3 && tables_.count({l + 1, va >> lowest_bit(l)})) ++l;
    return l;
  }

 private:
  uint64_t index(unsigned level, uint64_t va) const {
    const unsigned width = level == start_ ? ias_ - lowest_bit(level) : gshift_ - 3;
    return (va >> lowest_bit(level)) & ((1ull << width) - 1);
  }
  uint64_t alloc(uint64_t bytes) {
    const uint64_t align = bytes < 64 ? 64 : bytes;
    next_ = (next_ + align - 1) & ~(align - 1);
    const uint64_t a = next_;
    next_ += bytes;
    if (next_ > pool_hi_) {
      ADD_FAILURE() << "table builder: pool exhausted";
      return 0;
    }
    return a;
  }

  FakeMemory& mem_;
  unsigned stage_, gshift_, ias_, start_;
  uint64_t next_, pool_hi_, offset_, root_;
  std::vector<Mapping> maps_;
  std::map<std::pair<unsigned, uint64_t>, uint64_t> tables_;  // (level, va >> lowest_bit(level - 1)) -> PA
};

}  // namespace smmu_vp::smmu::test

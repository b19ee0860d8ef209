// PageTableWalker against an independent reference.
//
// The tests build real translation tables in a FakeMemory with their own small
// table builder (its own descriptor encoder with literal bit positions and its
// own geometry, not translation_table.h), and the builder's record of what it
// mapped is the reference: for any input address, the mapping that contains
// it gives the expected output address, size and leaf level, and the deepest
// table it created on that address's path gives the level at which an
// unmapped address must fault. Initial levels come from hard-coded tables
// (Arm ARM D8, "initial lookup level" for each granule and input size).
#include "smmu/page_table_walker.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "fake_memory.h"
#include "table_builder.h"

namespace smmu_vp::smmu {
namespace {

using test::FakeMemory;
using test::LeafBits;
using test::TableBuilder;

constexpr Ps kLatency = 50'000;  // 50 ns per descriptor read
constexpr double kStepNs = 2.0;
constexpr Ps kStepPs = 2'000;
constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;

const AccessType kPrivRead = AccessType{false, false, true};
const AccessType kPrivWrite = AccessType{true, false, true};
const AccessType kUserRead = AccessType{false, false, false};
const AccessType kUserWrite = AccessType{true, false, false};
const AccessType kPrivExec = AccessType{false, true, true};
const AccessType kUserExec = AccessType{false, true, false};

unsigned log2u(uint64_t v) { return 63u - static_cast<unsigned>(__builtin_clzll(v)); }

unsigned shift_of(Granule g) { return static_cast<unsigned>(g); }

WalkTiming timing() {
  WalkTiming t;
  t.step_ns = kStepNs;
  return t;
}

PageTableWalker::Stage1Config s1_config(const TableBuilder& b, Granule g, unsigned t0sz) {
  PageTableWalker::Stage1Config c;
  c.ttb = b.ttb();
  c.t0sz = t0sz;
  c.granule = g;
  c.oas_bits = 48;
  c.asid = 1;
  c.vmid = 0;
  return c;
}

// ---------------------------------------------------------------------------
// Random mappings checked against the builder's record
// ---------------------------------------------------------------------------
struct Geometry {
  Granule g;
  unsigned t0sz;
  unsigned start;                    // expected initial level (Arm ARM tables)
  std::vector<unsigned> leaf_levels;  // levels allowed to hold blocks or pages
};

// Fills `b` with random non-overlapping mappings at every allowed leaf level,
// half of them near earlier ones so that they share tables.
void random_mappings(TableBuilder& b, const std::vector<unsigned>& leaf_levels, unsigned count,
                     std::mt19937_64& rng, uint64_t pa_limit_bits = 48) {
  std::vector<unsigned> levels;
  for (unsigned l : leaf_levels)
    if (l >= b.start() && b.lowest_bit(l) < b.ias()) levels.push_back(l);
  ASSERT_FALSE(levels.empty());
  unsigned made = 0;
  for (unsigned attempt = 0; made < count && attempt < count * 50; ++attempt) {
    const unsigned level = levels[rng() % levels.size()];
    const uint64_t size = b.size_at(level);
    uint64_t va;
    if (made > 0 && rng() % 2) {
      // Near an earlier mapping: same upper bits, a few bits changed below.
      const auto& m = b.mappings()[rng() % b.mappings().size()];
      const unsigned top = std::min(b.ias(), log2u(size) + 12);
      va = m.va ^ ((rng() & ((1ull << top) - 1)) & ~(size - 1));
    } else {
      va = rng() & ((1ull << b.ias()) - 1);
    }
    va &= ~(size - 1);
    if (b.overlaps(va, size)) continue;
    const uint64_t pa = (rng() & ((1ull << pa_limit_bits) - 1)) & ~(size - 1);
    b.map(va, pa, level);
    ++made;
  }
  EXPECT_EQ(made, count);
}

// Input addresses worth checking: inside mappings, just outside them, one
// bit away from them, uniformly random, and beyond the input size.
std::vector<uint64_t> probe_addresses(const TableBuilder& b, unsigned gshift, std::mt19937_64& rng, unsigned n) {
  std::vector<uint64_t> v;
  const auto& maps = b.mappings();
  const uint64_t mask = (1ull << b.ias()) - 1;
  for (unsigned i = 0; i < n; ++i) {
    const auto& m = maps[rng() % maps.size()];
    switch (i % 6) {
      case 0:
      case 1: v.push_back(m.va + (rng() % m.size)); break;
      case 2: v.push_back((m.va - (1ull << gshift)) & mask); break;
      case 3: v.push_back((m.va + m.size) & mask); break;
      case 4: v.push_back((m.va ^ (1ull << (gshift + rng() % (b.ias() - gshift)))) & mask); break;
      case 5: v.push_back(i % 12 == 5 ? (rng() | (1ull << b.ias())) : (rng() & mask)); break;
    }
  }
  return v;
}

// Checks one walk result against the reference. `stage` is the walked stage.
void expect_matches_reference(const TableBuilder& b, unsigned stage, uint64_t ia, const WalkResult& r, Ps at) {
  SCOPED_TRACE(::testing::Message() << "input address 0x" << std::hex << ia);
  unsigned reads = 0;
  if (b.ias() < 64 && (ia >> b.ias()) != 0) {
    EXPECT_EQ(r.fault, FaultType::kTranslation);
    EXPECT_EQ(r.fault_stage, stage);
    EXPECT_EQ(r.level, 0u);
  } else if (const TableBuilder::Mapping* m = b.find(ia)) {
    ASSERT_TRUE(r.ok()) << "fault " << static_cast<int>(r.fault) << " at level " << r.level;
    EXPECT_EQ(r.output_address, m->pa + (ia - m->va));
    EXPECT_EQ(r.block_size(), m->size);
    EXPECT_EQ(r.level, m->level);
    reads = m->level - b.start() + 1;
  } else {
    const unsigned level = b.deepest_table(ia);
    EXPECT_EQ(r.fault, FaultType::kTranslation);
    EXPECT_EQ(r.fault_stage, stage);
    EXPECT_EQ(r.level, level);
    reads = level - b.start() + 1;
  }
  EXPECT_EQ(r.reads_at(stage), reads);
  EXPECT_EQ(r.total_reads(), reads);
  EXPECT_EQ(r.done, at + reads * (kLatency + kStepPs));
}

void run_random_stage1(const Geometry& geo, uint64_t seed, WalkCache* cache = nullptr) {
  SCOPED_TRACE(::testing::Message() << "granule " << granule_bytes(geo.g) << " T0SZ " << geo.t0sz);
  const unsigned gshift = shift_of(geo.g);
  const unsigned ias = 64 - geo.t0sz;
  FakeMemory mem(0, 32 * kMiB, kLatency);
  TableBuilder b(mem, 1, gshift, ias, geo.start, 0x10000, 32 * kMiB);
  std::mt19937_64 rng(seed);
  random_mappings(b, geo.leaf_levels, 40, rng);

  PageTableWalker w(mem, timing(), cache);
  const auto cfg = s1_config(b, geo.g, geo.t0sz);
  ASSERT_EQ(PageTableWalker::check(cfg), ConfigError::kNone);
  EXPECT_EQ(PageTableWalker::start_level(cfg), geo.start);
  Ps at = 1'000'000;
  unsigned mapped = 0, beyond = 0;
  std::map<unsigned, unsigned> fault_levels;
  for (uint64_t va : probe_addresses(b, gshift, rng, 600)) {
    const WalkResult r = w.walk_stage1(cfg, va, kPrivRead, at);
    if (r.ok())
      ++mapped;
    else if (va >> ias)
      ++beyond;
    else
      ++fault_levels[r.level];
    if (!cache) {
      expect_matches_reference(b, 1, va, r, at);
    } else {
      // With a walk cache: same translation, never more reads.
      const TableBuilder::Mapping* m = (va >> ias) ? nullptr : b.find(va);
      if (m) {
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(r.output_address, m->pa + (va - m->va));
        EXPECT_EQ(r.level, m->level);
        EXPECT_LE(r.total_reads(), m->level - geo.start + 1);
      } else {
        EXPECT_EQ(r.fault, FaultType::kTranslation);
        EXPECT_EQ(r.level, (va >> ias) ? 0u : b.deepest_table(va));
      }
      EXPECT_EQ(r.done, at + r.total_reads() * (kLatency + kStepPs));
    }
    at += 10'000'000;
  }
  // The probes exercise hits, misses at several levels and the range check.
  EXPECT_GT(mapped, 150u);
  EXPECT_GT(beyond, 0u);
  EXPECT_GE(fault_levels.size(), geo.start <= 1 ? 2u : 1u);
}

TEST(PageTableWalker, RandomStage1Mappings4K) {
  // 4K: ias 40..48 start at L0, 31..39 at L1, 22..30 at L2, 16..21 at L3.
  run_random_stage1({Granule::k4K, 16, 0, {1, 2, 3}}, 1);
  run_random_stage1({Granule::k4K, 20, 0, {1, 2, 3}}, 2);  // 44-bit: 32-entry level 0 table
  run_random_stage1({Granule::k4K, 25, 1, {1, 2, 3}}, 3);
  run_random_stage1({Granule::k4K, 34, 2, {2, 3}}, 4);
  run_random_stage1({Granule::k4K, 39, 2, {2, 3}}, 5);
  run_random_stage1({Granule::k4K, 44, 3, {3}}, 6);
}

TEST(PageTableWalker, RandomStage1Mappings16K) {
  // 16K: 48-bit starts at L0 with one bit, 37..47 at L1, 26..36 at L2.
  run_random_stage1({Granule::k16K, 16, 0, {2, 3}}, 11);
  run_random_stage1({Granule::k16K, 17, 1, {2, 3}}, 12);
  run_random_stage1({Granule::k16K, 28, 2, {2, 3}}, 13);
  run_random_stage1({Granule::k16K, 40, 3, {3}}, 14);
}

TEST(PageTableWalker, RandomStage1Mappings64K) {
  // 64K: 43..48 start at L1, 30..42 at L2, up to 29 at L3.
  run_random_stage1({Granule::k64K, 16, 1, {2, 3}}, 21);
  run_random_stage1({Granule::k64K, 22, 2, {2, 3}}, 22);
  run_random_stage1({Granule::k64K, 36, 3, {3}}, 23);
}

TEST(PageTableWalker, RandomStage1MappingsWithWalkCache) {
  WalkCacheConfig wc;
  wc.entries = 16;  // small: evictions happen
  wc.ways = 2;
  WalkCache cache(wc);
  run_random_stage1({Granule::k4K, 16, 0, {1, 2, 3}}, 31, &cache);
  EXPECT_GT(cache.hits(), 0u);
  EXPECT_GT(cache.evictions(), 0u);
  WalkCache cache16(wc);
  run_random_stage1({Granule::k16K, 16, 0, {2, 3}}, 32, &cache16);
  WalkCache cache64(wc);
  run_random_stage1({Granule::k64K, 22, 2, {2, 3}}, 33, &cache64);
}

// ---------------------------------------------------------------------------
// Initial level from T0SZ: number of reads for a page
// ---------------------------------------------------------------------------
TEST(PageTableWalker, InitialLevelFromT0sz) {
  struct Case {
    Granule g;
    unsigned t0sz;
    unsigned start;
  };
  const Case cases[] = {
      {Granule::k4K, 16, 0},  {Granule::k4K, 24, 0},  {Granule::k4K, 25, 1},  {Granule::k4K, 33, 1},
      {Granule::k4K, 34, 2},  {Granule::k4K, 39, 2},  {Granule::k4K, 42, 2},  {Granule::k4K, 43, 3},
      {Granule::k4K, 48, 3},  {Granule::k16K, 16, 0}, {Granule::k16K, 17, 1}, {Granule::k16K, 27, 1},
      {Granule::k16K, 28, 2}, {Granule::k16K, 38, 2}, {Granule::k16K, 39, 3}, {Granule::k16K, 48, 3},
      {Granule::k64K, 16, 1}, {Granule::k64K, 21, 1}, {Granule::k64K, 22, 2}, {Granule::k64K, 34, 2},
      {Granule::k64K, 35, 3}, {Granule::k64K, 47, 3},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "granule " << granule_bytes(c.g) << " T0SZ " << c.t0sz);
    FakeMemory mem(0, 8 * kMiB, kLatency);
    TableBuilder b(mem, 1, shift_of(c.g), 64 - c.t0sz, c.start, 0x10000, 8 * kMiB);
    const uint64_t page = granule_bytes(c.g);
    const uint64_t va = ((1ull << (64 - c.t0sz)) - 1) & ~(page - 1);  // last page of the range
    b.map(va, 0x1234ull * page, 3);
    PageTableWalker w(mem, timing());
    const auto cfg = s1_config(b, c.g, c.t0sz);
    EXPECT_EQ(PageTableWalker::start_level(cfg), c.start);
    const WalkResult r = w.walk_stage1(cfg, va + 5, kPrivRead, 0);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.output_address, 0x1234ull * page + 5);
    EXPECT_EQ(r.total_reads(), 4 - c.start);
    EXPECT_EQ(r.reads[0][c.start], 1u);
    // One past the range: Translation fault at level 0 without a read.
    const WalkResult out = w.walk_stage1(cfg, va + page, kPrivRead, 0);
    EXPECT_EQ(out.fault, FaultType::kTranslation);
    EXPECT_EQ(out.level, 0u);
    EXPECT_EQ(out.total_reads(), 0u);
    EXPECT_EQ(out.done, 0u);
  }
}

// ---------------------------------------------------------------------------
// Descriptor encodings
// ---------------------------------------------------------------------------
struct Fixture4K {
  FakeMemory mem{0, 8 * kMiB, kLatency};
  TableBuilder b{mem, 1, 12, 48, 0, 0x10000, 8 * kMiB};
  PageTableWalker w{mem, timing()};
  PageTableWalker::Stage1Config cfg = s1_config(b, Granule::k4K, 16);
};

TEST(PageTableWalker, BlocksAndPagesAt4K) {
  Fixture4K f;
  f.b.map(1 * kGiB, 7 * kGiB, 1);                  // 1 GiB block
  f.b.map(2 * kGiB + 4 * kMiB, 0x80000000, 2);     // 2 MiB block
  f.b.map(3 * kGiB + 0x5000, 0x123456000, 3);      // page
  WalkResult r = f.w.walk_stage1(f.cfg, 1 * kGiB + 0x12345678, kPrivRead, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.output_address, 7 * kGiB + 0x12345678);
  EXPECT_EQ(r.level, 1u);
  EXPECT_EQ(r.block_shift, 30u);
  r = f.w.walk_stage1(f.cfg, 2 * kGiB + 4 * kMiB + 0x1abcd, kPrivRead, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.output_address, 0x80000000u + 0x1abcd);
  EXPECT_EQ(r.level, 2u);
  EXPECT_EQ(r.block_shift, 21u);
  r = f.w.walk_stage1(f.cfg, 3 * kGiB + 0x5fff, kPrivRead, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.output_address, 0x123456fffu);
  EXPECT_EQ(r.level, 3u);
  EXPECT_EQ(r.block_shift, 12u);
}

TEST(PageTableWalker, InvalidDescriptorAtEachLevel) {
  Fixture4K f;
  const uint64_t va = 0x0000123456789000;
  f.b.map(va, 0x40000000, 3);
  for (unsigned level = 0; level <= 3; ++level) {
    SCOPED_TRACE(level);
    const uint64_t slot = f.b.slot(va, level, false);
    const uint64_t saved = f.mem.peek64(slot);
    f.mem.poke64(slot, saved & ~1ull);  // clear bit 0 only: invalid whatever the rest says
    const WalkResult r = f.w.walk_stage1(f.cfg, va, kPrivRead, 0);
    EXPECT_EQ(r.fault, FaultType::kTranslation);
    EXPECT_EQ(r.fault_stage, 1u);
    EXPECT_EQ(r.level, level);
    EXPECT_EQ(r.total_reads(), level + 1);
    f.mem.poke64(slot, saved);
  }
  EXPECT_TRUE(f.w.walk_stage1(f.cfg, va, kPrivRead, 0).ok());
}

TEST(PageTableWalker, BlockEncodingWhereNotAllowedIsATranslationFault) {
  {
    // Level 3 with bits[1:0] = 01 (reserved), and a 4K level 0 block.
    Fixture4K f;
    const uint64_t va = 0x40000000;
    f.b.set_raw(va, 3, 0x80000000ull | (1ull << 10) | 1);
    WalkResult r = f.w.walk_stage1(f.cfg, va, kPrivRead, 0);
    EXPECT_EQ(r.fault, FaultType::kTranslation);
    EXPECT_EQ(r.level, 3u);
    const uint64_t va0 = 0x0000800000000000ull >> 1;  // another level 0 entry
    f.b.set_raw(va0, 0, (1ull << 10) | 1);
    r = f.w.walk_stage1(f.cfg, va0, kPrivRead, 0);
    EXPECT_EQ(r.fault, FaultType::kTranslation);
    EXPECT_EQ(r.level, 0u);
    EXPECT_EQ(r.total_reads(), 1u);
  }
  {
    // 16K level 1 block (64 GiB, only with 52-bit addressing) and level 0 block.
    FakeMemory mem(0, 8 * kMiB, kLatency);
    TableBuilder b(mem, 1, 14, 48, 0, 0x10000, 8 * kMiB);
    PageTableWalker w(mem, timing());
    const auto cfg = s1_config(b, Granule::k16K, 16);
    b.set_raw(1ull << 36, 1, (1ull << 10) | 1);
    WalkResult r = w.walk_stage1(cfg, (1ull << 36) + 0x1000, kPrivRead, 0);
    EXPECT_EQ(r.fault, FaultType::kTranslation);
    EXPECT_EQ(r.level, 1u);
    b.set_raw(1ull << 47, 0, (1ull << 10) | 1);
    r = w.walk_stage1(cfg, 1ull << 47, kPrivRead, 0);
    EXPECT_EQ(r.fault, FaultType::kTranslation);
    EXPECT_EQ(r.level, 0u);
    // A 32 MiB level 2 block is fine.
    b.map(64 * kMiB, 96 * kMiB, 2);
    r = w.walk_stage1(cfg, 64 * kMiB + 77, kPrivRead, 0);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.output_address, 96 * kMiB + 77);
    EXPECT_EQ(r.block_shift, 25u);
  }
  {
    // 64K level 1 block (4 TiB, only with 52-bit addressing).
    FakeMemory mem(0, 8 * kMiB, kLatency);
    TableBuilder b(mem, 1, 16, 48, 1, 0x10000, 8 * kMiB);
    PageTableWalker w(mem, timing());
    const auto cfg = s1_config(b, Granule::k64K, 16);
    b.set_raw(0, 1, (1ull << 10) | 1);
    WalkResult r = w.walk_stage1(cfg, 0x1000, kPrivRead, 0);
    EXPECT_EQ(r.fault, FaultType::kTranslation);
    EXPECT_EQ(r.level, 1u);
    b.map(4ull << 40, 512 * kMiB, 2);  // 512 MiB block
    r = w.walk_stage1(cfg, (4ull << 40) + 0x1234567, kPrivRead, 0);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.output_address, 512 * kMiB + 0x1234567);
    EXPECT_EQ(r.block_shift, 29u);
  }
}

TEST(PageTableWalker, TtbBitsBelowTheTableSizeAreIgnored) {
  // Stage 1, 4K, 48-bit: a 4 KiB level 0 table.
  Fixture4K f;
  f.b.map(0x00007f0000001000, 0x2000, 3);
  f.cfg.ttb |= 0xff8;
  WalkResult r = f.w.walk_stage1(f.cfg, 0x00007f0000001000, kPrivRead, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.output_address, 0x2000u);
  // Stage 1, 4K, 44-bit: a 32-entry (256-byte) level 0 table at a 256-byte
  // boundary; the bits below 256 are ignored, bit 8 is not.
  FakeMemory mem(0, 4 * kMiB, kLatency);
  TableBuilder b(mem, 1, 12, 44, 0, 0x10100, 4 * kMiB);
  ASSERT_EQ(b.root_pa() % 4096, 0x100u);
  b.map(0x00000f0000001000, 0x3000, 3);
  PageTableWalker w(mem, timing());
  auto c = s1_config(b, Granule::k4K, 20);
  c.ttb |= 0xf0;
  r = w.walk_stage1(c, 0x00000f0000001000, kPrivRead, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.output_address, 0x3000u);
  // Stage 2 with two concatenated level 1 tables: an 8 KiB-aligned base.
  FakeMemory mem2(0, 4 * kMiB, kLatency);
  TableBuilder s2(mem2, 2, 12, 40, 1, 0x10000, 4 * kMiB);
  const uint64_t ipa = (1ull << 39) + 0x5000;  // in the second table of the pair
  s2.map(ipa, 0x9000, 3);
  PageTableWalker w2(mem2, timing());
  PageTableWalker::Stage2Config c2;
  c2.ttb = s2.ttb() | 0x1ff8;
  c2.t0sz = 24;
  c2.sl0 = 1;
  r = w2.walk_stage2(c2, ipa, kUserRead, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.output_address, 0x9000u);
}

TEST(PageTableWalker, LeafAttributesAreReported) {
  Fixture4K f;
  LeafBits bits;
  bits.attr = 5;
  bits.sh = 2;
  bits.ng = false;
  bits.contiguous = true;
  f.b.map(0x10000, 0x20000, 3, bits);
  const WalkResult r = f.w.walk_stage1(f.cfg, 0x10000, kPrivRead, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.attr_indx, 5u);
  EXPECT_EQ(r.sh, 2u);
  EXPECT_TRUE(r.global);
  EXPECT_TRUE(r.contiguous);
  EXPECT_FALSE(r.ipa_valid);
}

// ---------------------------------------------------------------------------
// Faults
// ---------------------------------------------------------------------------
TEST(PageTableWalker, AddressSizeFaultOnOutputAndTableAddresses) {
  Fixture4K f;
  f.cfg.oas_bits = 40;
  f.b.map(0x1000, 1ull << 40, 3);  // page output at 1 TiB: bit 40 set
  WalkResult r = f.w.walk_stage1(f.cfg, 0x1000, kPrivRead, 0);
  EXPECT_EQ(r.fault, FaultType::kAddressSize);
  EXPECT_EQ(r.fault_stage, 1u);
  EXPECT_EQ(r.level, 3u);
  f.b.map(0x2000, (1ull << 40) - 0x1000, 3);  // highest page below 1 TiB is fine
  EXPECT_TRUE(f.w.walk_stage1(f.cfg, 0x2000, kPrivRead, 0).ok());
  // A table descriptor at level 1 pointing above 2^40.
  const uint64_t va = 5 * kGiB;
  f.b.set_raw(va, 1, (1ull << 42) | 3);
  r = f.w.walk_stage1(f.cfg, va, kPrivRead, 0);
  EXPECT_EQ(r.fault, FaultType::kAddressSize);
  EXPECT_EQ(r.level, 1u);
  EXPECT_EQ(r.total_reads(), 2u);
  // The same tables with a 48-bit IPS: the 2^42 table is read (and aborts:
  // nothing there in the fake memory).
  f.cfg.oas_bits = 48;
  r = f.w.walk_stage1(f.cfg, va, kPrivRead, 0);
  EXPECT_EQ(r.fault, FaultType::kWalkExternalAbort);
  EXPECT_EQ(r.level, 2u);
}

TEST(PageTableWalker, AccessFlagFaultUnlessDisabled) {
  Fixture4K f;
  LeafBits bits;
  bits.af = false;
  bits.read_only = true;
  f.b.map(0x7000, 0x9000, 3, bits);
  f.b.map(2 * kGiB, 4 * kGiB, 1, bits);
  WalkResult r = f.w.walk_stage1(f.cfg, 0x7000, kPrivRead, 0);
  EXPECT_EQ(r.fault, FaultType::kAccessFlag);
  EXPECT_EQ(r.level, 3u);
  r = f.w.walk_stage1(f.cfg, 2 * kGiB + 8, kPrivRead, 0);
  EXPECT_EQ(r.fault, FaultType::kAccessFlag);
  EXPECT_EQ(r.level, 1u);
  // The access flag fault is reported before the permission fault.
  r = f.w.walk_stage1(f.cfg, 0x7000, kPrivWrite, 0);
  EXPECT_EQ(r.fault, FaultType::kAccessFlag);
  f.cfg.affd = true;
  r = f.w.walk_stage1(f.cfg, 0x7000, kPrivRead, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.output_address, 0x9000u);
  r = f.w.walk_stage1(f.cfg, 0x7000, kPrivWrite, 0);
  EXPECT_EQ(r.fault, FaultType::kPermission);
}

TEST(PageTableWalker, ExternalAbortOnDescriptorRead) {
  Fixture4K f;
  const uint64_t va = 0x00007f0012345000;
  f.b.map(va, 0x5000, 3);
  const uint64_t l2_table = f.b.table_pa(va, 2);
  ASSERT_NE(l2_table, 0u);
  f.mem.add_error_range(l2_table, 4096);
  const Ps at = 777'000;
  const WalkResult r = f.w.walk_stage1(f.cfg, va, kPrivRead, at);
  EXPECT_EQ(r.fault, FaultType::kWalkExternalAbort);
  EXPECT_EQ(r.fault_stage, 1u);
  EXPECT_EQ(r.level, 2u);
  EXPECT_EQ(r.fetch_address, f.b.slot(va, 2, false));
  EXPECT_EQ(r.total_reads(), 3u);
  EXPECT_EQ(r.done, at + 3 * (kLatency + kStepPs));
  // A TTB pointing where there is no memory at all.
  f.mem.clear_error_ranges();
  f.cfg.ttb = 1ull << 40;
  const WalkResult r2 = f.w.walk_stage1(f.cfg, va, kPrivRead, at);
  EXPECT_EQ(r2.fault, FaultType::kWalkExternalAbort);
  EXPECT_EQ(r2.level, 0u);
  EXPECT_EQ(r2.total_reads(), 1u);
}

// ---------------------------------------------------------------------------
// Stage 1 permissions
// ---------------------------------------------------------------------------
TEST(PageTableWalker, Stage1AccessPermissions) {
  // Expected results written out from the Arm ARM tables for AP[2:1] and
  // UXN/PXN in the EL1&0 regime: {priv read, priv write, user read, user
  // write} for AP = 00, 01, 10, 11.
  struct Row {
    bool ap2, ap1;
    bool pr, pw, ur, uw;
  };
  const Row rows[] = {
      {false, false, true, true, false, false},
      {false, true, true, true, true, true},
      {true, false, true, false, false, false},
      {true, true, true, false, true, false},
  };
  Fixture4K f;
  uint64_t va = 0x100000;
  for (const Row& row : rows) {
    for (int xn = 0; xn < 4; ++xn) {
      const bool pxn = xn & 1, uxn = xn & 2;
      SCOPED_TRACE(::testing::Message() << "AP " << row.ap2 << row.ap1 << " PXN " << pxn << " UXN " << uxn);
      LeafBits bits;
      bits.read_only = row.ap2;
      bits.user = row.ap1;
      bits.pxn = pxn;
      bits.uxn = uxn;
      f.b.map(va, 0x300000, 3, bits);
      // EL0-writable memory is never privileged-executable.
      const bool px = !pxn && !(row.ap1 && !row.ap2);
      const bool ux = !uxn;
      const std::pair<AccessType, bool> checks[] = {
          {kPrivRead, row.pr}, {kPrivWrite, row.pw}, {kUserRead, row.ur},
          {kUserWrite, row.uw}, {kPrivExec, px},    {kUserExec, ux},
      };
      for (const auto& [acc, allowed] : checks) {
        const WalkResult r = f.w.walk_stage1(f.cfg, va, acc, 0);
        SCOPED_TRACE(::testing::Message() << "write " << acc.write << " instr " << acc.instruction << " priv "
                                          << acc.privileged);
        if (allowed) {
          EXPECT_TRUE(r.ok());
        } else {
          EXPECT_EQ(r.fault, FaultType::kPermission);
          EXPECT_EQ(r.fault_stage, 1u);
          EXPECT_EQ(r.level, 3u);
          EXPECT_EQ(r.total_reads(), 4u);
        }
      }
      const WalkResult r = f.w.walk_stage1(f.cfg, va, kPrivRead, 0);
      EXPECT_EQ(r.perms.priv_write, row.pw);
      EXPECT_EQ(r.perms.unpriv_read, row.ur);
      EXPECT_EQ(r.perms.user_accessible(), row.ur || ux);
      va += 0x1000;
    }
  }
}

TEST(PageTableWalker, WriteWithInstructionFlagIsADataWrite) {
  Fixture4K f;
  LeafBits bits;
  bits.uxn = true;
  bits.pxn = true;
  f.b.map(0x1000, 0x2000, 3, bits);
  EXPECT_TRUE(f.w.walk_stage1(f.cfg, 0x1000, AccessType{true, true, false}, 0).ok());
  EXPECT_EQ(f.w.walk_stage1(f.cfg, 0x1000, kUserExec, 0).fault, FaultType::kPermission);
}

TEST(PageTableWalker, HierarchicalTableAttributes) {
  Fixture4K f;
  const uint64_t va = 0x0000004000000000ull;  // L0 index 0, L1 index 256
  f.b.map(va, 0x1000, 3);                     // user RW, executable
  f.b.map(va + 0x1000, 0x2000, 3);
  EXPECT_TRUE(f.w.walk_stage1(f.cfg, va, kUserExec, 0).ok());
  EXPECT_EQ(f.w.walk_stage1(f.cfg, va, kPrivExec, 0).fault, FaultType::kPermission);  // EL0-writable
  // APTable[1] (no write) on the level 1 table descriptor's path, set at level 1.
  f.b.or_bits(va, 1, 1ull << 62);
  EXPECT_EQ(f.w.walk_stage1(f.cfg, va, kPrivWrite, 0).fault, FaultType::kPermission);
  EXPECT_TRUE(f.w.walk_stage1(f.cfg, va, kUserRead, 0).ok());
  // APTable[0] (no unprivileged access) at level 0.
  f.b.or_bits(va, 0, 1ull << 61);
  EXPECT_EQ(f.w.walk_stage1(f.cfg, va, kUserRead, 0).fault, FaultType::kPermission);
  EXPECT_TRUE(f.w.walk_stage1(f.cfg, va, kPrivRead, 0).ok());
  // UXNTable and PXNTable at level 2.
  f.b.or_bits(va, 2, 1ull << 59);
  f.b.or_bits(va, 2, 1ull << 60);
  WalkResult r = f.w.walk_stage1(f.cfg, va, kPrivRead, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.perms.priv_write);
  EXPECT_FALSE(r.perms.unpriv_read);
  EXPECT_FALSE(r.perms.unpriv_exec);
  EXPECT_FALSE(r.perms.priv_exec);
  // CD.HAD0: table attributes are ignored.
  f.cfg.had = true;
  r = f.w.walk_stage1(f.cfg, va, kUserWrite, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.perms.unpriv_exec);
}

// ---------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------
TEST(PageTableWalker, ReadsAreSequentialAndTimed) {
  Fixture4K f;
  f.b.map(0x00005a5a5a5a5000ull & ((1ull << 48) - 1), 0x7000, 3);
  const uint64_t va = 0x00005a5a5a5a5000ull;
  f.mem.clear_log();
  const Ps at = 3'000'000;
  const WalkResult r = f.w.walk_stage1(f.cfg, va, kPrivRead, at);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(f.mem.log().size(), 4u);
  Ps expect_issue = at;
  for (unsigned i = 0; i < 4; ++i) {
    const auto& a = f.mem.log()[i];
    EXPECT_FALSE(a.write);
    EXPECT_EQ(a.len, 8u);
    EXPECT_EQ(a.pa, f.b.slot(va, i, false));
    EXPECT_EQ(a.at, expect_issue);  // issued when the previous read and its step are done
    expect_issue = a.done + kStepPs;
    EXPECT_EQ(r.reads[0][i], 1u);
  }
  EXPECT_EQ(r.done, expect_issue);
  EXPECT_EQ(r.done, at + 4 * (kLatency + kStepPs));
  // Other latencies and step costs.
  f.mem.set_latency(123'456);
  WalkTiming t;
  t.step_ns = 0.5;
  PageTableWalker w2(f.mem, t);
  EXPECT_EQ(w2.walk_stage1(f.cfg, va, kPrivRead, 10).done, 10 + 4 * (123'456 + 500));
}

// ---------------------------------------------------------------------------
// Configuration errors
// ---------------------------------------------------------------------------
TEST(PageTableWalker, Stage1ConfigErrors) {
  PageTableWalker::Stage1Config c;
  c.granule = Granule::k4K;
  c.t0sz = 16;
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kNone);
  c.t0sz = 15;
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kT0szOutOfRange);
  c.t0sz = 48;
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kNone);
  c.t0sz = 49;
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kT0szOutOfRange);
  c.granule = Granule::k64K;
  c.t0sz = 48;
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kT0szOutOfRange);
  c.t0sz = 47;
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kNone);
  c.oas_bits = 40;
  c.ttb = 1ull << 40;
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kTtbOutOfRange);
  c.ttb = 0;
  c.oas_bits = 52;
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kBadAddressSize);

  FakeMemory mem(0, kMiB, kLatency);
  PageTableWalker w(mem, timing());
  c.oas_bits = 48;
  c.t0sz = 10;
  const WalkResult r = w.walk_stage1(c, 0, kPrivRead, 42);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.fault, FaultType::kNone);
  EXPECT_EQ(r.config_error, ConfigError::kT0szOutOfRange);
  EXPECT_EQ(r.fault_stage, 1u);
  EXPECT_EQ(r.done, 42u);
  EXPECT_TRUE(mem.log().empty());
}

TEST(PageTableWalker, Stage2ConfigErrors) {
  PageTableWalker::Stage2Config c;
  c.granule = Granule::k4K;
  c.t0sz = 16;  // 48-bit IPA
  c.sl0 = 2;    // level 0
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kNone);
  EXPECT_EQ(PageTableWalker::start_level(c), 0u);
  c.sl0 = 1;  // level 1 would need 18 bits: 32 concatenated tables
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kSl0Inconsistent);
  c.t0sz = 21;  // 43-bit: 16 concatenated level 1 tables
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kNone);
  c.t0sz = 20;  // 44-bit: would need 32
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kSl0Inconsistent);
  c.t0sz = 24;
  c.sl0 = 0;  // 40-bit from level 2: 19 bits
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kSl0Inconsistent);
  c.t0sz = 32;
  c.sl0 = 2;  // 32-bit from level 0: nothing left for level 0
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kSl0Inconsistent);
  c.sl0 = 0;  // 32-bit from level 2: 11 bits, two tables
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kNone);
  // Level 0 start needs a PA size of 44 bits or more.
  c.t0sz = 24;
  c.sl0 = 2;
  c.pa_max_bits = 40;
  c.ps_bits = 40;
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kSl0Invalid);
  // T0SZ below 64 - OAS.
  c.sl0 = 1;
  c.t0sz = 23;
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kT0szOutOfRange);
  c.t0sz = 24;
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kNone);
  c.ps_bits = 44;  // above the SMMU OAS
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kBadAddressSize);
  c.ps_bits = 40;
  c.ttb = 1ull << 40;
  EXPECT_EQ(PageTableWalker::check(c), ConfigError::kTtbOutOfRange);
  // 64K: SL0 = 3 is reserved; 16K SL0 = 3 needs 52-bit support.
  PageTableWalker::Stage2Config g;
  g.granule = Granule::k64K;
  g.t0sz = 22;
  g.sl0 = 3;
  EXPECT_EQ(PageTableWalker::check(g), ConfigError::kSl0Invalid);
  g.sl0 = 1;
  EXPECT_EQ(PageTableWalker::check(g), ConfigError::kNone);
  EXPECT_EQ(PageTableWalker::start_level(g), 2u);
  g.granule = Granule::k16K;
  g.sl0 = 3;
  EXPECT_EQ(PageTableWalker::check(g), ConfigError::kSl0Invalid);
  g.sl0 = 2;  // 16K level 1 for 42 bits: 6 bits
  EXPECT_EQ(PageTableWalker::check(g), ConfigError::kNone);
  g.sl0 = 5;
  EXPECT_EQ(PageTableWalker::check(g), ConfigError::kSl0Invalid);
}

// ---------------------------------------------------------------------------
// Stage 2 alone
// ---------------------------------------------------------------------------
struct S2Geometry {
  Granule g;
  unsigned t0sz;
  unsigned sl0;
  unsigned start;  // expected from the VTCR_EL2.SL0 encoding
  std::vector<unsigned> leaf_levels;
};

void run_random_stage2(const S2Geometry& geo, uint64_t seed) {
  SCOPED_TRACE(::testing::Message() << "granule " << granule_bytes(geo.g) << " T0SZ " << geo.t0sz << " SL0 "
                                    << geo.sl0);
  const unsigned gshift = shift_of(geo.g);
  FakeMemory mem(0, 32 * kMiB, kLatency);
  TableBuilder b(mem, 2, gshift, 64 - geo.t0sz, geo.start, 0x10000, 32 * kMiB);
  std::mt19937_64 rng(seed);
  random_mappings(b, geo.leaf_levels, 40, rng);
  PageTableWalker::Stage2Config c;
  c.ttb = b.ttb();
  c.t0sz = geo.t0sz;
  c.sl0 = geo.sl0;
  c.granule = geo.g;
  c.vmid = 3;
  ASSERT_EQ(PageTableWalker::check(c), ConfigError::kNone);
  EXPECT_EQ(PageTableWalker::start_level(c), geo.start);
  PageTableWalker w(mem, timing());
  Ps at = 5'000;
  for (uint64_t ipa : probe_addresses(b, gshift, rng, 600)) {
    const WalkResult r = w.walk_stage2(c, ipa, kUserWrite, at);
    expect_matches_reference(b, 2, ipa, r, at);
    if (!r.ok()) {
      EXPECT_EQ(r.fault_class, FaultClass::kInput);
      EXPECT_TRUE(r.ipa_valid);
      EXPECT_EQ(r.ipa, ipa);
    }
    at += 1'000'000;
  }
}

TEST(PageTableWalker, RandomStage2Mappings) {
  run_random_stage2({Granule::k4K, 16, 2, 0, {1, 2, 3}}, 41);
  run_random_stage2({Granule::k4K, 24, 1, 1, {1, 2, 3}}, 42);  // 2 concatenated level 1 tables
  run_random_stage2({Granule::k4K, 21, 1, 1, {1, 2, 3}}, 43);  // 16 concatenated
  run_random_stage2({Granule::k4K, 32, 0, 2, {2, 3}}, 44);     // 2 concatenated level 2 tables
  run_random_stage2({Granule::k4K, 40, 3, 3, {3}}, 45);        // level 3 start (TTST)
  run_random_stage2({Granule::k16K, 24, 2, 1, {2, 3}}, 46);
  run_random_stage2({Granule::k16K, 24, 1, 2, {2, 3}}, 47);    // 16 concatenated 16K tables
  run_random_stage2({Granule::k64K, 22, 1, 2, {2, 3}}, 48);
  run_random_stage2({Granule::k64K, 18, 1, 2, {2, 3}}, 49);    // 46-bit from level 2: 16 tables
  run_random_stage2({Granule::k64K, 16, 2, 1, {2, 3}}, 50);
  run_random_stage2({Granule::k64K, 36, 0, 3, {3}}, 51);
}

TEST(PageTableWalker, Stage2Permissions) {
  FakeMemory mem(0, 8 * kMiB, kLatency);
  TableBuilder b(mem, 2, 12, 40, 1, 0x10000, 8 * kMiB);
  PageTableWalker::Stage2Config c;
  c.ttb = b.ttb();
  c.t0sz = 24;
  c.sl0 = 1;
  PageTableWalker w(mem, timing());
  // S2AP: read-only, write-only, none.
  LeafBits ro, wo, none;
  ro.s2_write = false;
  wo.s2_read = false;
  none.s2_read = none.s2_write = false;
  b.map(0x1000, 0x11000, 3, ro);
  b.map(0x2000, 0x12000, 3, wo);
  b.map(0x3000, 0x13000, 3, none);
  EXPECT_TRUE(w.walk_stage2(c, 0x1000, kUserRead, 0).ok());
  WalkResult r = w.walk_stage2(c, 0x1000, kPrivWrite, 0);
  EXPECT_EQ(r.fault, FaultType::kPermission);
  EXPECT_EQ(r.fault_stage, 2u);
  EXPECT_EQ(r.fault_class, FaultClass::kInput);
  EXPECT_EQ(r.level, 3u);
  EXPECT_EQ(w.walk_stage2(c, 0x2000, kPrivRead, 0).fault, FaultType::kPermission);
  EXPECT_TRUE(w.walk_stage2(c, 0x2000, kUserWrite, 0).ok());
  EXPECT_EQ(w.walk_stage2(c, 0x3000, kUserRead, 0).fault, FaultType::kPermission);
  // XN[1:0]: 00 both, 01 not privileged, 10 neither, 11 not unprivileged.
  const bool px[4] = {true, false, false, true};
  const bool ux[4] = {true, true, false, false};
  for (unsigned xn = 0; xn < 4; ++xn) {
    LeafBits bits;
    bits.s2_xn = xn;
    const uint64_t ipa = 0x10000 + xn * 0x1000;
    b.map(ipa, 0x20000, 3, bits);
    EXPECT_EQ(w.walk_stage2(c, ipa, kPrivExec, 0).ok(), px[xn]) << "XN " << xn;
    EXPECT_EQ(w.walk_stage2(c, ipa, kUserExec, 0).ok(), ux[xn]) << "XN " << xn;
    EXPECT_TRUE(w.walk_stage2(c, ipa, kUserRead, 0).ok());
  }
  // Access flag and S2AFFD; output address size against S2PS.
  LeafBits noaf;
  noaf.af = false;
  b.map(0x40000, 0x50000, 3, noaf);
  EXPECT_EQ(w.walk_stage2(c, 0x40000, kUserRead, 0).fault, FaultType::kAccessFlag);
  c.affd = true;
  EXPECT_TRUE(w.walk_stage2(c, 0x40000, kUserRead, 0).ok());
  b.map(0x41000, 1ull << 44, 3);
  c.ps_bits = 44;
  c.pa_max_bits = 48;
  r = w.walk_stage2(c, 0x41000, kUserRead, 0);
  EXPECT_EQ(r.fault, FaultType::kAddressSize);
  EXPECT_EQ(r.fault_stage, 2u);
  // IPA beyond S2T0SZ: stage 2 Translation fault at level 0.
  r = w.walk_stage2(c, 1ull << 40, kUserRead, 0);
  EXPECT_EQ(r.fault, FaultType::kTranslation);
  EXPECT_EQ(r.fault_stage, 2u);
  EXPECT_EQ(r.level, 0u);
  EXPECT_EQ(r.total_reads(), 0u);
}

// ---------------------------------------------------------------------------
// Nested
// ---------------------------------------------------------------------------
// Stage 1 tables live at PAs [16, 32) MiB and are addressed through the IPA
// window [kWin, kWin + 16 MiB), which stage 2 maps there with 2 MiB blocks.
// Stage 2 tables are at PAs [40, 48) MiB. Stage 2 also maps the data IPAs:
// a 1 GiB block at 4 GiB and pages at 5 GiB.
struct Nested {
  static constexpr uint64_t kWin = 0x80000000;
  static constexpr uint64_t kS1Pool = 16 * kMiB;
  FakeMemory mem{0, 48 * kMiB, kLatency};
  TableBuilder s2{mem, 2, 12, 40, 1, 40 * kMiB, 48 * kMiB};
  TableBuilder s1{mem, 1, 12, 48, 0, kS1Pool, 32 * kMiB, kWin - kS1Pool};
  PageTableWalker::Stage1Config c1;
  PageTableWalker::Stage2Config c2;

  explicit Nested(const LeafBits& window = {}) {
    for (uint64_t off = 0; off < 16 * kMiB; off += 2 * kMiB) s2.map(kWin + off, kS1Pool + off, 2, window);
    s2.map(4 * kGiB, 256 * kGiB, 1);
    c1.ttb = s1.ttb();
    c1.t0sz = 16;
    c1.granule = Granule::k4K;
    c1.oas_bits = 40;
    c1.asid = 9;
    c1.vmid = 4;
    c2.ttb = s2.ttb();
    c2.t0sz = 24;
    c2.sl0 = 1;
    c2.granule = Granule::k4K;
    c2.ps_bits = 48;
    c2.vmid = 4;
  }
  // Expected PA of a VA from the two builders' records.
  bool reference(uint64_t va, uint64_t* pa, unsigned* s2_level) const {
    const auto* m1 = s1.find(va);
    if (!m1) return false;
    const uint64_t ipa = m1->pa + (va - m1->va);
    const auto* m2 = s2.find(ipa);
    if (!m2) return false;
    *pa = m2->pa + (ipa - m2->va);
    *s2_level = m2->level;
    return true;
  }
};

TEST(PageTableWalker, NestedTranslatesTableAddressesThroughStage2) {
  Nested n;
  const uint64_t va_block = 0x00007f0000200000;  // -> IPA in the 1 GiB stage 2 block
  const uint64_t va_page = 0x00007f0000400000;   // -> IPA in a stage 2 page
  n.s1.map(va_block, 4 * kGiB + 6 * kMiB, 2);
  n.s2.map(5 * kGiB + 0x3000, 0x7700000000, 3);
  n.s1.map(va_page, 5 * kGiB + 0x3000, 3);
  PageTableWalker w(n.mem, timing());

  for (uint64_t va : {va_block + 0x12345, va_page + 0x678}) {
    SCOPED_TRACE(::testing::Message() << std::hex << va);
    uint64_t pa = 0;
    unsigned s2_leaf = 0;
    ASSERT_TRUE(n.reference(va, &pa, &s2_leaf));
    n.mem.clear_log();
    const Ps at = 1'000;
    const WalkResult r = w.walk_stage1(n.c1, va, kUserRead, at, &n.c2);
    ASSERT_TRUE(r.ok()) << static_cast<int>(r.fault) << " stage " << r.fault_stage << " level " << r.level;
    EXPECT_EQ(r.output_address, pa);
    EXPECT_TRUE(r.ipa_valid);
    EXPECT_EQ(r.ipa, n.s1.find(va)->pa + (va - n.s1.find(va)->va));
    EXPECT_EQ(r.s2_level, s2_leaf);
    // Stage 1: four lookups, each preceded by a stage 2 walk of two reads
    // (level 1 table, level 2 block); then the output IPA's stage 2 walk.
    const unsigned s1_reads = 4 - (va == va_block + 0x12345 ? 1 : 0);
    EXPECT_EQ(r.reads_at(1), s1_reads);
    EXPECT_EQ(r.reads_at(2), s1_reads * 2 + (s2_leaf - 1 + 1));
    EXPECT_EQ(r.done, at + r.total_reads() * (kLatency + kStepPs));
    // Every stage 1 descriptor was read at its PA (below 32 MiB), never at
    // its IPA; stage 2 descriptors come from [40, 48) MiB.
    unsigned s1_seen = 0, s2_seen = 0;
    for (const auto& a : n.mem.log()) {
      EXPECT_TRUE(a.ok);
      if (a.pa >= Nested::kS1Pool && a.pa < 32 * kMiB) ++s1_seen;
      if (a.pa >= 40 * kMiB && a.pa < 48 * kMiB) ++s2_seen;
    }
    EXPECT_EQ(s1_seen, r.reads_at(1));
    EXPECT_EQ(s2_seen, r.reads_at(2));
    EXPECT_EQ(n.mem.log().size(), r.total_reads());
  }
  // Block sizes: the smaller of the two stages.
  const WalkResult rb = w.walk_stage1(n.c1, va_block, kUserRead, 0, &n.c2);
  EXPECT_EQ(rb.s1_block_shift, 21u);
  EXPECT_EQ(rb.s2_block_shift, 30u);
  EXPECT_EQ(rb.block_shift, 21u);
  const WalkResult rp = w.walk_stage1(n.c1, va_page, kUserRead, 0, &n.c2);
  EXPECT_EQ(rp.block_shift, 12u);
}

TEST(PageTableWalker, NestedStage2FaultClassTableVersusInput) {
  Nested n;
  const uint64_t va = 0x0000100000000000;
  n.s1.map(va, 6 * kGiB, 3);  // IPA 6 GiB: not mapped at stage 2
  PageTableWalker w(n.mem, timing());
  // Final IPA unmapped: CLASS = IN.
  WalkResult r = w.walk_stage1(n.c1, va + 0x10, kUserRead, 0, &n.c2);
  EXPECT_EQ(r.fault, FaultType::kTranslation);
  EXPECT_EQ(r.fault_stage, 2u);
  EXPECT_EQ(r.fault_class, FaultClass::kInput);
  EXPECT_TRUE(r.ipa_valid);
  EXPECT_EQ(r.ipa, 6 * kGiB + 0x10);
  EXPECT_EQ(r.level, n.s2.deepest_table(6 * kGiB));
  EXPECT_EQ(r.reads_at(1), 4u);
  // Stage 1 table at an IPA stage 2 does not map: CLASS = TT, and the IPA is
  // the descriptor's.
  auto c1 = n.c1;
  c1.ttb = Nested::kWin + 64 * kMiB;
  r = w.walk_stage1(c1, va, kUserRead, 0, &n.c2);
  EXPECT_EQ(r.fault, FaultType::kTranslation);
  EXPECT_EQ(r.fault_stage, 2u);
  EXPECT_EQ(r.fault_class, FaultClass::kTranslationTable);
  EXPECT_EQ(r.ipa, c1.ttb + 8 * ((va >> 39) & 511));
  EXPECT_EQ(r.level, n.s2.deepest_table(c1.ttb));
  EXPECT_EQ(r.reads_at(1), 0u);
  // A stage 1 table whose IPA is beyond the stage 2 input size (IPS 48 bits,
  // stage 2 input 40 bits).
  c1.oas_bits = 48;
  c1.ttb = 1ull << 40;
  r = w.walk_stage1(c1, va, kUserRead, 0, &n.c2);
  EXPECT_EQ(r.fault_stage, 2u);
  EXPECT_EQ(r.fault_class, FaultClass::kTranslationTable);
  EXPECT_EQ(r.level, 0u);
}

TEST(PageTableWalker, NestedPermissionOrderAndCombination) {
  Nested n;
  LeafBits s1_ro;
  s1_ro.read_only = true;
  LeafBits s2_ro;
  s2_ro.s2_write = false;
  n.s2.map(5 * kGiB, 0x100000000, 3, s2_ro);
  n.s2.map(5 * kGiB + 0x1000, 0x100001000, 3);
  n.s1.map(0x1000, 5 * kGiB, 3);                // S1 RW, S2 RO
  n.s1.map(0x2000, 5 * kGiB, 3, s1_ro);         // S1 RO, S2 RO
  n.s1.map(0x3000, 5 * kGiB + 0x1000, 3, s1_ro);  // S1 RO, S2 RW
  PageTableWalker w(n.mem, timing());
  WalkResult r = w.walk_stage1(n.c1, 0x1000, kUserWrite, 0, &n.c2);
  EXPECT_EQ(r.fault, FaultType::kPermission);
  EXPECT_EQ(r.fault_stage, 2u);
  EXPECT_EQ(r.fault_class, FaultClass::kInput);
  EXPECT_EQ(r.ipa, 5 * kGiB);
  // Stage 1 checks first: no stage 2 walk of the output happens.
  r = w.walk_stage1(n.c1, 0x2000, kUserWrite, 0, &n.c2);
  EXPECT_EQ(r.fault, FaultType::kPermission);
  EXPECT_EQ(r.fault_stage, 1u);
  EXPECT_EQ(r.reads_at(2), 8u);
  r = w.walk_stage1(n.c1, 0x3000, kUserRead, 0, &n.c2);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.perms.unpriv_write);
  EXPECT_TRUE(r.s2_perms.unpriv_write);
  EXPECT_FALSE(r.s1_perms.unpriv_write);
  r = w.walk_stage1(n.c1, 0x1000, kUserRead, 0, &n.c2);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.s1_perms.unpriv_write);
  EXPECT_FALSE(r.perms.unpriv_write);
  // Stage 1 output IPA beyond the stage 1 output size (IPS 40 bits).
  n.s1.map(0x4000, 1ull << 41, 3);
  r = w.walk_stage1(n.c1, 0x4000, kUserRead, 0, &n.c2);
  EXPECT_EQ(r.fault, FaultType::kAddressSize);
  EXPECT_EQ(r.fault_stage, 1u);
}

TEST(PageTableWalker, NestedTableReadsNeedStage2ReadAndHonourS2Ptw) {
  {
    LeafBits no_read;
    no_read.s2_read = false;
    Nested n(no_read);
    n.s1.map(0x1000, 4 * kGiB, 3);
    PageTableWalker w(n.mem, timing());
    const WalkResult r = w.walk_stage1(n.c1, 0x1000, kPrivRead, 0, &n.c2);
    EXPECT_EQ(r.fault, FaultType::kPermission);
    EXPECT_EQ(r.fault_stage, 2u);
    EXPECT_EQ(r.fault_class, FaultClass::kTranslationTable);
    EXPECT_EQ(r.ipa, n.c1.ttb);
    EXPECT_EQ(r.level, 2u);
  }
  {
    LeafBits device;
    device.mem_attr = 0x1;  // Device-nGnRE
    Nested n(device);
    n.s1.map(0x1000, 4 * kGiB, 3);
    PageTableWalker w(n.mem, timing());
    EXPECT_TRUE(w.walk_stage1(n.c1, 0x1000, kPrivRead, 0, &n.c2).ok());
    n.c2.ptw = true;
    const WalkResult r = w.walk_stage1(n.c1, 0x1000, kPrivRead, 0, &n.c2);
    EXPECT_EQ(r.fault, FaultType::kPermission);
    EXPECT_EQ(r.fault_class, FaultClass::kTranslationTable);
  }
}

TEST(PageTableWalker, NestedExternalAborts) {
  Nested n;
  n.s1.map(0x1000, 4 * kGiB, 3);
  PageTableWalker w(n.mem, timing());
  // Abort on a stage 2 descriptor read made for a stage 1 table: stage 2, TT.
  const uint64_t s2_l2_table = n.s2.table_pa(Nested::kWin, 2);
  ASSERT_NE(s2_l2_table, 0u);
  n.mem.add_error_range(s2_l2_table, 4096);
  WalkResult r = w.walk_stage1(n.c1, 0x1000, kPrivRead, 0, &n.c2);
  EXPECT_EQ(r.fault, FaultType::kWalkExternalAbort);
  EXPECT_EQ(r.fault_stage, 2u);
  EXPECT_EQ(r.fault_class, FaultClass::kTranslationTable);
  EXPECT_EQ(r.level, 2u);
  // Abort on the stage 1 descriptor read itself: stage 1, at its PA.
  n.mem.clear_error_ranges();
  const uint64_t s1_l1_table = n.s1.table_pa(0x1000, 1);
  n.mem.add_error_range(s1_l1_table, 4096);
  r = w.walk_stage1(n.c1, 0x1000, kPrivRead, 0, &n.c2);
  EXPECT_EQ(r.fault, FaultType::kWalkExternalAbort);
  EXPECT_EQ(r.fault_stage, 1u);
  EXPECT_EQ(r.level, 1u);
  EXPECT_EQ(r.fetch_address, s1_l1_table + 8 * 0);
}

TEST(PageTableWalker, NestedConfigErrorPrefersStage2) {
  Nested n;
  PageTableWalker w(n.mem, timing());
  n.c2.sl0 = 0;  // inconsistent with a 40-bit IPA
  n.c1.t0sz = 60;
  WalkResult r = w.walk_stage1(n.c1, 0, kPrivRead, 5, &n.c2);
  EXPECT_EQ(r.config_error, ConfigError::kSl0Inconsistent);
  EXPECT_EQ(r.fault_stage, 2u);
  EXPECT_EQ(r.done, 5u);
  n.c2.sl0 = 1;
  r = w.walk_stage1(n.c1, 0, kPrivRead, 5, &n.c2);
  EXPECT_EQ(r.config_error, ConfigError::kT0szOutOfRange);
  EXPECT_EQ(r.fault_stage, 1u);
}

// ---------------------------------------------------------------------------
// Walk cache
// ---------------------------------------------------------------------------
TEST(PageTableWalker, WalkCacheShortensNeighbouringWalks) {
  Fixture4K f;
  WalkCache cache;
  f.w.set_cache(&cache);
  const uint64_t a = 0x0000001234400000;
  f.b.map(a, 0x100000, 3);
  f.b.map(a + 0x1000, 0x101000, 3);
  f.b.map(a + 2 * kMiB, 0x102000, 3);
  f.b.map(a + kGiB, 0x103000, 3);
  EXPECT_EQ(f.w.walk_stage1(f.cfg, a, kPrivRead, 0).total_reads(), 4u);
  // Same level 3 table: one read.
  WalkResult r = f.w.walk_stage1(f.cfg, a + 0x1000, kPrivRead, 100);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.output_address, 0x101000u);
  EXPECT_EQ(r.total_reads(), 1u);
  EXPECT_EQ(r.reads[0][3], 1u);
  EXPECT_EQ(r.done, 100 + kLatency + kStepPs);
  // Same level 2 table, another level 3 table: two reads.
  r = f.w.walk_stage1(f.cfg, a + 2 * kMiB, kPrivRead, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.total_reads(), 2u);
  EXPECT_EQ(r.reads[0][2], 1u);
  // Same level 1 table: three reads.
  EXPECT_EQ(f.w.walk_stage1(f.cfg, a + kGiB, kPrivRead, 0).total_reads(), 3u);
  // An unmapped neighbour faults at level 3 after one read.
  r = f.w.walk_stage1(f.cfg, a + 0x5000, kPrivRead, 0);
  EXPECT_EQ(r.fault, FaultType::kTranslation);
  EXPECT_EQ(r.level, 3u);
  EXPECT_EQ(r.total_reads(), 1u);
}

TEST(PageTableWalker, WalkCacheIsTaggedAndInvalidated) {
  Fixture4K f;
  WalkCache cache;
  f.w.set_cache(&cache);
  const uint64_t a = 0x0000001234400000;
  const uint64_t b = a + kGiB;
  f.b.map(a, 0x100000, 3);
  f.b.map(a + 0x1000, 0x101000, 3);
  f.b.map(b, 0x102000, 3);
  f.b.map(b + 0x1000, 0x103000, 3);
  auto reads = [&](const PageTableWalker::Stage1Config& c, uint64_t va) {
    const WalkResult r = f.w.walk_stage1(c, va, kPrivRead, 0);
    EXPECT_TRUE(r.ok());
    return r.total_reads();
  };
  EXPECT_EQ(reads(f.cfg, a), 4u);
  EXPECT_EQ(reads(f.cfg, b), 3u);
  // Another ASID, another VMID or another granule tag: nothing cached.
  auto other = f.cfg;
  other.asid = 2;
  EXPECT_EQ(reads(other, a + 0x1000), 4u);
  other = f.cfg;
  other.vmid = 7;
  EXPECT_EQ(reads(other, a + 0x1000), 4u);
  // By ASID.
  EXPECT_EQ(reads(f.cfg, a + 0x1000), 1u);
  cache.invalidate_asid(1, 0);
  EXPECT_EQ(reads(f.cfg, a + 0x1000), 4u);
  EXPECT_EQ(reads(f.cfg, b), 3u);
  // By VA: the entries on a's path go, b's level 3 table stays.
  cache.invalidate_va(a, 1, 0);
  EXPECT_EQ(reads(f.cfg, a + 0x1000), 4u);
  cache.invalidate_va(a, 1, 0);
  EXPECT_EQ(reads(f.cfg, b + 0x1000), 1u);
  // A VA of another ASID does not touch ours.
  cache.invalidate_va(b, 2, 0);
  EXPECT_EQ(reads(f.cfg, b + 0x1000), 1u);
  // All.
  cache.invalidate_all();
  EXPECT_EQ(reads(f.cfg, b + 0x1000), 4u);
}

TEST(PageTableWalker, WalkCacheKeepsHierarchicalAttributes) {
  Fixture4K f;
  WalkCache cache;
  f.w.set_cache(&cache);
  const uint64_t a = 0x0000001234400000;
  f.b.map(a, 0x100000, 3);
  f.b.map(a + 0x1000, 0x101000, 3);
  f.b.or_bits(a, 1, 1ull << 62);  // APTable[1]: read-only below level 1
  EXPECT_EQ(f.w.walk_stage1(f.cfg, a, kPrivWrite, 0).fault, FaultType::kPermission);
  const WalkResult r = f.w.walk_stage1(f.cfg, a + 0x1000, kPrivWrite, 0);
  EXPECT_EQ(r.total_reads(), 1u);
  EXPECT_EQ(r.fault, FaultType::kPermission);
}

TEST(PageTableWalker, WalkCacheInNestedWalks) {
  Nested n;
  n.s1.map(0x1000, 4 * kGiB, 3);
  n.s1.map(0x2000, 4 * kGiB + 0x1000, 3);
  WalkCache cache;
  PageTableWalker w(n.mem, timing(), &cache);
  WalkResult r = w.walk_stage1(n.c1, 0x1000, kPrivRead, 0, &n.c2);
  ASSERT_TRUE(r.ok());
  // Cold: four stage 1 reads; the first stage 2 walk of a table IPA reads
  // two descriptors, the next three find the window's level 2 table cached
  // and read one; the output IPA's walk reads the 1 GiB block.
  EXPECT_EQ(r.reads_at(1), 4u);
  EXPECT_EQ(r.reads_at(2), 2u + 1u + 1u + 1u + 1u);
  // Stage 1 starts at the cached level 3 table (an IPA): one stage 2 walk for
  // it, which itself starts at the cached stage 2 level 2 table.
  r = w.walk_stage1(n.c1, 0x2000, kPrivRead, 0, &n.c2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.output_address, 256 * kGiB + 0x1000);
  EXPECT_EQ(r.reads_at(1), 1u);
  EXPECT_EQ(r.reads_at(2), 2u);  // table IPA: cached L2 table -> 1; output: 1 GiB block at L1 -> 1
  // Stage 2 invalidation for the VMID forces full stage 2 walks again.
  cache.invalidate_stage2(4);
  r = w.walk_stage1(n.c1, 0x2000, kPrivRead, 0, &n.c2);
  EXPECT_EQ(r.reads_at(1), 1u);
  EXPECT_EQ(r.reads_at(2), 3u);
}

// ---------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------
TEST(PageTableWalker, Statistics) {
  Fixture4K f;
  StatsRegistry stats;
  PageTableWalker w(f.mem, timing(), nullptr, &stats, "smmu0.ptw");
  f.b.map(0x1000, 0x2000, 3);
  LeafBits ro;
  ro.read_only = true;
  f.b.map(0x3000, 0x4000, 3, ro);
  w.walk_stage1(f.cfg, 0x1000, kPrivRead, 0);
  w.walk_stage1(f.cfg, 0x3000, kPrivWrite, 0);
  w.walk_stage1(f.cfg, 0x5000, kPrivRead, 0);
  w.walk_stage1(f.cfg, 1ull << 50, kPrivRead, 0);
  EXPECT_EQ(stats.find_counter("smmu0.ptw.walks.s1")->value(), 4u);
  EXPECT_EQ(stats.find_counter("smmu0.ptw.walks.s2")->value(), 0u);
  EXPECT_EQ(stats.find_counter("smmu0.ptw.reads.s1.l0")->value(), 3u);
  EXPECT_EQ(stats.find_counter("smmu0.ptw.reads.s1.l3")->value(), 3u);
  EXPECT_EQ(stats.find_counter("smmu0.ptw.faults.translation")->value(), 2u);
  EXPECT_EQ(stats.find_counter("smmu0.ptw.faults.permission")->value(), 1u);
  const Histogram* h = stats.find_histogram("smmu0.ptw.latency_ns");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->count(), 4u);
  EXPECT_DOUBLE_EQ(h->max(), 4 * (50.0 + kStepNs));
  EXPECT_DOUBLE_EQ(h->min(), 0.0);
}

}  // namespace
}  // namespace smmu_vp::smmu

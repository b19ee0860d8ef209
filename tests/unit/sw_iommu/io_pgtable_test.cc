// sw/iommu/io_pgtable_arm on the host HAL.
//
// Tables built by io-pgtable are read back two ways: by a small walker
// written here from the Arm ARM D8 rules (its own geometry and descriptor
// decoding, literal bit positions), and by the SMMU model's stage-1 walker
// (models/smmu/page_table_walker.h) reading the host HAL arena through a
// MemoryPort, configured from the CD values io-pgtable reports. Unmap tests
// check the flush ops each path calls, and the table pages freed.
#include "iommu/io_pgtable_arm.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host_hal.h"
#include "smmu/page_table_walker.h"

namespace {

using smmu_vp::Ps;
using smmu_vp::smmu::AccessType;
using smmu_vp::smmu::FaultType;
using smmu_vp::smmu::Granule;
using smmu_vp::smmu::MemoryPort;
using smmu_vp::smmu::PageTableWalker;
using smmu_vp::smmu::WalkResult;
namespace host_hal = smmu_vp::host_hal;

constexpr uint64_t kKiB = 1ull << 10;
constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kPaBase = 1ull << 40;  // output addresses need not be DRAM

const AccessType kUserRead{false, false, false};
const AccessType kUserWrite{true, false, false};
const AccessType kUserExec{false, true, false};
const AccessType kPrivRead{false, false, true};

// ---------------------------------------------------------------------------
// The SMMU model's walker, reading the arena.
// ---------------------------------------------------------------------------
class ArenaMemory : public MemoryPort {
 public:
  bool read(uint64_t pa, void* data, unsigned len, Ps at, Ps* done) override {
    *done = at + 1000;
    const void* src = hal_phys_to_virt(pa);
    if (!src || !hal_phys_to_virt(pa + len - 1)) {
      std::memset(data, 0, len);
      return false;
    }
    std::memcpy(data, src, len);
    return true;
  }
  bool write(uint64_t, const void*, unsigned, Ps at, Ps* done) override {
    *done = at;
    return false;  // the walker never writes (no HTTU)
  }
};

Granule granule_from_tg0(unsigned tg0) {
  switch (tg0) {
    case 0: return Granule::k4K;
    case 1: return Granule::k64K;
    case 2: return Granule::k16K;
  }
  ADD_FAILURE() << "bad TG0 " << tg0;
  return Granule::k4K;
}

// ---------------------------------------------------------------------------
// Reference walker (Arm ARM D8, stage 1, 48-bit OA, no LPA/LPA2).
// ---------------------------------------------------------------------------
struct RefWalk {
  bool ok = false;
  unsigned level = 0;  // leaf level, or faulting level
  uint64_t pa = 0;
  uint64_t desc = 0;
};

uint64_t arena_read64(uint64_t pa) {
  const void* p = hal_phys_to_virt(pa);
  if (!p) {
    ADD_FAILURE() << "descriptor read outside DRAM at 0x" << std::hex << pa;
    return 0;
  }
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

uint64_t bits_47_to(unsigned lo) { return ((1ull << 48) - 1) & ~((1ull << lo) - 1); }

RefWalk ref_walk(uint64_t ttb, unsigned gshift, unsigned ias, uint64_t va) {
  RefWalk r;
  if (va >> ias) return r;  // level 0 translation fault
  const unsigned stride = gshift - 3;
  unsigned levels = 1;
  while (gshift + levels * stride < ias) ++levels;
  const unsigned first = 4 - levels;
  uint64_t table = ttb;
  for (unsigned level = first;; ++level) {
    const unsigned lo = gshift + (3 - level) * stride;
    const unsigned width = level == first ? ias - lo : stride;
    const uint64_t idx = (va >> lo) & ((1ull << width) - 1);
    const uint64_t d = arena_read64(table + 8 * idx);
    r.level = level;
    if ((d & 1) == 0) return r;
    const bool bit1 = (d & 2) != 0;
    if (level < 3 && bit1) {
      table = d & bits_47_to(gshift);
      continue;
    }
    if (level == 3 && !bit1) return r;  // reserved encoding
    if (level < 3) {
      const bool block_ok = gshift == 12 ? (level == 1 || level == 2) : level == 2;
      if (!block_ok) return r;
    }
    r.ok = true;
    r.desc = d;
    r.pa = (d & bits_47_to(lo)) | (va & ((1ull << lo) - 1));
    return r;
  }
}

// ---------------------------------------------------------------------------
// Flush ops that record their calls.
// ---------------------------------------------------------------------------
struct FlushLog {
  struct Walk {
    uint64_t iova;
    size_t size, granule;
    uint64_t tables_freed_before;  // pgt stats at the time of the call
    uint64_t phys_at_call;         // iova_to_phys(iova) at the time of the call
  };
  struct Page {
    uint64_t iova;
    size_t size;
    iommu_iotlb_gather* gather;
  };
  const io_pgtable* pgt = nullptr;
  std::vector<Walk> walks;
  std::vector<Page> pages;
  unsigned flush_all = 0;
};

void log_flush_all(void* cookie) { static_cast<FlushLog*>(cookie)->flush_all++; }
void log_flush_walk(uint64_t iova, size_t size, size_t granule, void* cookie) {
  auto* log = static_cast<FlushLog*>(cookie);
  log->walks.push_back({iova, size, granule, log->pgt ? log->pgt->stats.tables_freed : 0,
                        log->pgt ? io_pgtable_iova_to_phys(log->pgt, iova) : 0});
}
void log_add_page(iommu_iotlb_gather* gather, uint64_t iova, size_t granule, void* cookie) {
  static_cast<FlushLog*>(cookie)->pages.push_back({iova, granule, gather});
  iommu_iotlb_gather_add_range(gather, iova, granule);
  gather->pgsize = granule;
}

const iommu_flush_ops kFlushOps = {log_flush_all, log_flush_walk, log_add_page};

// ---------------------------------------------------------------------------
// Fixture
// ---------------------------------------------------------------------------
struct Geometry {
  size_t granule;
  unsigned ias;
  unsigned start_level;  // expected (Arm ARM initial lookup level)
};

std::string geometry_name(const testing::TestParamInfo<Geometry>& info) {
  return std::to_string(info.param.granule / kKiB) + "K_ias" + std::to_string(info.param.ias);
}

struct Mapping {
  uint64_t iova;
  uint64_t pa;
  size_t size;
  size_t count;
  unsigned prot;
};

class IoPgtableBase : public testing::Test {
 protected:
  void SetUp() override { host_hal::reset(); }
  void TearDown() override {
    if (live_) io_pgtable_destroy(&pgt_);
  }

  void create(size_t granule, unsigned ias, bool coherent = true) {
    std::memset(&cfg_, 0, sizeof(cfg_));
    cfg_.granule = granule;
    cfg_.ias = ias;
    cfg_.oas = 48;
    cfg_.coherent_walk = coherent;
    cfg_.tlb = &kFlushOps;
    cfg_.cookie = &log_;
    ASSERT_EQ(io_pgtable_init(&pgt_, &cfg_), 0);
    live_ = true;
    log_.pgt = &pgt_;
    gshift_ = 63u - static_cast<unsigned>(__builtin_clzll(granule));
    page_ = granule;
    block_ = 1ull << (gshift_ + (gshift_ - 3));  // level 2 block
  }

  // Maps count entries of size, looping as the IOMMU core does.
  int map(uint64_t iova, uint64_t pa, size_t size, size_t count, unsigned prot) {
    while (count) {
      size_t mapped = 0;
      const int ret = io_pgtable_map_pages(&pgt_, iova, pa, size, count, prot, &mapped);
      if (ret) return ret;
      EXPECT_EQ(mapped % size, 0u);
      EXPECT_GT(mapped, 0u);
      if (mapped == 0) return -1;
      iova += mapped;
      pa += mapped;
      count -= mapped / size;
    }
    return 0;
  }

  size_t unmap(uint64_t iova, size_t size, size_t count, iommu_iotlb_gather* gather) {
    size_t total = 0;
    while (count) {
      const size_t n = io_pgtable_unmap_pages(&pgt_, iova, size, count, gather);
      if (n == 0) break;
      total += n;
      iova += n;
      count -= n / size;
    }
    return total;
  }

  PageTableWalker::Stage1Config model_config() const {
    PageTableWalker::Stage1Config c;
    c.ttb = cfg_.s1.ttbr;
    c.t0sz = cfg_.s1.t0sz;
    c.granule = granule_from_tg0(cfg_.s1.tg0);
    c.oas_bits = 48;
    c.asid = 1;
    return c;
  }

  WalkResult model_walk(uint64_t va, const AccessType& access = kUserRead) {
    PageTableWalker walker(mem_);
    return walker.walk_stage1(model_config(), va, access, 0);
  }

  // Both walkers and iova_to_phys agree that va maps to pa with prot, as a
  // leaf of leaf_size bytes.
  void expect_mapped(uint64_t va, uint64_t pa, size_t leaf_size, unsigned prot) {
    SCOPED_TRACE(testing::Message() << "va 0x" << std::hex << va << " pa 0x" << pa);
    EXPECT_EQ(io_pgtable_iova_to_phys(&pgt_, va), pa);

    const RefWalk ref = ref_walk(cfg_.s1.ttbr, gshift_, cfg_.ias, va);
    ASSERT_TRUE(ref.ok) << "reference walker faulted at level " << ref.level;
    EXPECT_EQ(ref.pa, pa);
    const unsigned leaf_shift = gshift_ + (3 - ref.level) * (gshift_ - 3);
    EXPECT_EQ(1ull << leaf_shift, leaf_size);
    const uint64_t d = ref.desc;
    EXPECT_EQ((d >> 10) & 1, 1u) << "AF";
    EXPECT_EQ((d >> 11) & 1, 1u) << "nG";
    EXPECT_EQ((d >> 6) & 1, (prot & IOMMU_PRIV) ? 0u : 1u) << "AP[1]";
    EXPECT_EQ((d >> 7) & 1, (prot & IOMMU_WRITE) ? 0u : 1u) << "AP[2]";
    EXPECT_EQ((d >> 53) & 3, (prot & IOMMU_NOEXEC) ? 3u : 0u) << "PXN/UXN";
    const uint64_t attr = (prot & IOMMU_MMIO) ? 2 : (prot & IOMMU_CACHE) ? 1 : 0;
    EXPECT_EQ((d >> 2) & 7, attr) << "AttrIndx";
    EXPECT_EQ((d >> 8) & 3, (prot & IOMMU_CACHE) ? 3u : 2u) << "SH";
    // MAIR byte selected by AttrIndx.
    const uint64_t mair_attr = (cfg_.s1.mair >> (8 * attr)) & 0xff;
    EXPECT_EQ(mair_attr, attr == 2 ? 0x04u : attr == 1 ? 0xffu : 0x44u);

    const WalkResult m = model_walk(va, (prot & IOMMU_PRIV) ? kPrivRead : kUserRead);
    ASSERT_TRUE(m.ok()) << "model fault " << static_cast<int>(m.fault) << " at level " << m.level;
    EXPECT_EQ(m.output_address, pa);
    EXPECT_EQ(m.level, ref.level);
    EXPECT_EQ(m.block_size(), leaf_size);
    EXPECT_FALSE(m.global);
    EXPECT_EQ(m.attr_indx, attr);
    EXPECT_TRUE(m.s1_perms.priv_read);
    EXPECT_EQ(m.s1_perms.unpriv_read, (prot & IOMMU_PRIV) == 0);
    EXPECT_EQ(m.s1_perms.priv_write, (prot & IOMMU_WRITE) != 0);
    EXPECT_EQ(m.s1_perms.unpriv_exec, (prot & IOMMU_NOEXEC) == 0);
    EXPECT_FALSE(m.s1_perms.priv_exec && (prot & IOMMU_NOEXEC));

    // The model enforces them too.
    const WalkResult w = model_walk(va, (prot & IOMMU_PRIV) ? AccessType{true, false, true} : kUserWrite);
    EXPECT_EQ(w.fault, (prot & IOMMU_WRITE) ? FaultType::kNone : FaultType::kPermission);
    if (!(prot & IOMMU_PRIV)) {
      const WalkResult x = model_walk(va, kUserExec);
      EXPECT_EQ(x.fault, (prot & IOMMU_NOEXEC) ? FaultType::kPermission : FaultType::kNone);
    }
  }

  void expect_unmapped(uint64_t va) {
    SCOPED_TRACE(testing::Message() << "unmapped va 0x" << std::hex << va);
    EXPECT_EQ(io_pgtable_iova_to_phys(&pgt_, va), 0u);
    const RefWalk ref = ref_walk(cfg_.s1.ttbr, gshift_, cfg_.ias, va);
    EXPECT_FALSE(ref.ok);
    const WalkResult m = model_walk(va, kPrivRead);
    EXPECT_EQ(m.fault, FaultType::kTranslation);
    EXPECT_EQ(m.fault_stage, 1u);
    EXPECT_EQ(m.level, ref.level);
  }

  void expect_mapping(const Mapping& mp) {
    for (size_t i = 0; i < mp.count; ++i) {
      const uint64_t va = mp.iova + i * mp.size, pa = mp.pa + i * mp.size;
      expect_mapped(va, pa, mp.size, mp.prot);
      expect_mapped(va + mp.size - 8, pa + mp.size - 8, mp.size, mp.prot);
      if (mp.size > page_) expect_mapped(va + mp.size / 2 + page_ + 16, pa + mp.size / 2 + page_ + 16, mp.size, mp.prot);
    }
  }

  io_pgtable_cfg cfg_{};
  io_pgtable pgt_{};
  bool live_ = false;
  FlushLog log_;
  ArenaMemory mem_;
  unsigned gshift_ = 12;
  uint64_t page_ = 4 * kKiB;
  uint64_t block_ = 2 * kMiB;
};

class IoPgtableGeometryTest : public IoPgtableBase, public testing::WithParamInterface<Geometry> {
 protected:
  void SetUp() override {
    IoPgtableBase::SetUp();
    create(GetParam().granule, GetParam().ias);
  }
};

// ---------------------------------------------------------------------------
// Configuration outputs
// ---------------------------------------------------------------------------
TEST_P(IoPgtableGeometryTest, ConfigMatchesTheModelsCdRules) {
  const Geometry g = GetParam();
  EXPECT_EQ(pgt_.start_level, g.start_level);
  EXPECT_EQ(cfg_.s1.t0sz, 64u - g.ias);
  EXPECT_EQ(cfg_.s1.ips, 5u);  // 48-bit OAS
  EXPECT_EQ(cfg_.s1.mair, 0xf404ff44ull);
  EXPECT_EQ(cfg_.s1.ttbr % g.granule, 0u);
  EXPECT_EQ(cfg_.s1.irgn0, 1u);
  EXPECT_EQ(cfg_.s1.sh0, 3u);
  switch (g.granule) {
    case 4 * kKiB:
      EXPECT_EQ(cfg_.s1.tg0, 0u);
      EXPECT_EQ(cfg_.pgsize_bitmap, 4 * kKiB | 2 * kMiB | 1 * kGiB);
      break;
    case 16 * kKiB:
      EXPECT_EQ(cfg_.s1.tg0, 2u);
      EXPECT_EQ(cfg_.pgsize_bitmap, 16 * kKiB | 32 * kMiB);
      break;
    case 64 * kKiB:
      EXPECT_EQ(cfg_.s1.tg0, 1u);
      EXPECT_EQ(cfg_.pgsize_bitmap, 64 * kKiB | 512 * kMiB);
      break;
  }
  EXPECT_EQ(pgt_.cfg.pgsize_bitmap, cfg_.pgsize_bitmap);
  EXPECT_EQ(pgt_.cfg.s1.ttbr, cfg_.s1.ttbr);
  const PageTableWalker::Stage1Config c = model_config();
  EXPECT_EQ(PageTableWalker::check(c), smmu_vp::smmu::ConfigError::kNone);
  EXPECT_EQ(PageTableWalker::start_level(c), g.start_level);
  EXPECT_EQ(pgt_.stats.tables_allocated, 1u);
  EXPECT_EQ(host_hal::dma_bytes_in_use(), g.granule);
  // An empty table translates nothing.
  expect_unmapped(0);
  expect_unmapped((1ull << g.ias) - page_);
}

// ---------------------------------------------------------------------------
// A mix of pages and blocks, read back by both walkers
// ---------------------------------------------------------------------------
TEST_P(IoPgtableGeometryTest, MixOfPagesAndBlocksTranslatesInBothWalkers) {
  const uint64_t top = 1ull << GetParam().ias;
  std::vector<Mapping> maps = {
      // Pages with different permissions, sharing one leaf table.
      {block_ + 0 * page_, kPaBase + 0 * kGiB, page_, 2, IOMMU_READ | IOMMU_WRITE | IOMMU_CACHE},
      {block_ + 2 * page_, kPaBase + 1 * kGiB, page_, 1, IOMMU_READ},
      {block_ + 3 * page_, kPaBase + 2 * kGiB, page_, 1, IOMMU_READ | IOMMU_WRITE | IOMMU_NOEXEC},
      {block_ + 5 * page_, kPaBase + 3 * kGiB, page_, 1, IOMMU_READ | IOMMU_MMIO | IOMMU_NOEXEC},
      {block_ + 6 * page_, kPaBase + 4 * kGiB, page_, 1, IOMMU_READ | IOMMU_WRITE | IOMMU_PRIV},
      // Last page of one leaf table and first of the next.
      {2 * block_ - page_, kPaBase + 5 * kGiB, page_, 1, IOMMU_READ | IOMMU_WRITE},
      {2 * block_, kPaBase + 6 * kGiB, page_, 1, IOMMU_READ | IOMMU_WRITE},
      // Blocks.
      {3 * block_, kPaBase + 7 * kGiB, block_, 1, IOMMU_READ | IOMMU_WRITE | IOMMU_CACHE},
      {4 * block_, kPaBase + 8 * kGiB, block_, 1, IOMMU_READ | IOMMU_NOEXEC},
      // A run of pages crossing into the next leaf table.
      {6 * block_ - 2 * page_, kPaBase + 9 * kGiB, page_, 5, IOMMU_READ | IOMMU_WRITE},
      // The top of the input range.
      {top - block_, kPaBase + 10 * kGiB, block_, 1, IOMMU_WRITE},
      {top - block_ - page_, kPaBase + 11 * kGiB, page_, 1, IOMMU_READ | IOMMU_WRITE | IOMMU_CACHE},
  };
  if (GetParam().granule == 4 * kKiB) maps.push_back({2 * kGiB, kPaBase + 12 * kGiB, kGiB, 1, IOMMU_READ | IOMMU_CACHE});

  for (const Mapping& mp : maps) ASSERT_EQ(map(mp.iova, mp.pa, mp.size, mp.count, mp.prot), 0) << std::hex << mp.iova;
  for (const Mapping& mp : maps) expect_mapping(mp);

  // Holes next to mappings, inside populated tables and outside them.
  for (uint64_t va : {block_ + 4 * page_, block_ + 7 * page_, block_ - page_, 2 * block_ + page_, 5 * block_,
                      6 * block_ + 3 * page_, 6 * block_ - 3 * page_, top - 3 * block_, top - block_ - 2 * page_,
                      uint64_t{0}})
    expect_unmapped(va);
  // Beyond the input size: level 0 Translation fault, nothing read.
  const WalkResult beyond = model_walk(top);
  EXPECT_EQ(beyond.fault, FaultType::kTranslation);
  EXPECT_EQ(beyond.total_reads(), 0u);
  EXPECT_EQ(io_pgtable_iova_to_phys(&pgt_, top), 0u);

  // Costs: one pte_write per descriptor stored, none cleaned (coherent).
  EXPECT_EQ(host_hal::cost_count("pte_write"), pgt_.stats.ptes_written);
  EXPECT_EQ(host_hal::cost_count("cache_clean_line"), 0u);
  EXPECT_EQ(host_hal::cost_count("kmem_alloc"), pgt_.stats.tables_allocated);
  EXPECT_EQ(host_hal::dma_bytes_in_use(), pgt_.stats.tables_allocated * GetParam().granule);
}

// ---------------------------------------------------------------------------
// Unmap
// ---------------------------------------------------------------------------
TEST_P(IoPgtableGeometryTest, UnmappingLeavesAddsEachPageToTheGather) {
  ASSERT_EQ(map(block_, kPaBase, page_, 8, IOMMU_READ | IOMMU_WRITE), 0);
  ASSERT_EQ(map(3 * block_, kPaBase + kGiB, block_, 2, IOMMU_READ), 0);
  iommu_iotlb_gather gather;
  iommu_iotlb_gather_init(&gather);
  EXPECT_TRUE(iommu_iotlb_gather_empty(&gather));

  EXPECT_EQ(io_pgtable_unmap_pages(&pgt_, block_ + 2 * page_, page_, 5, &gather), 5 * page_);
  ASSERT_EQ(log_.pages.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(log_.pages[i].iova, block_ + (2 + i) * page_);
    EXPECT_EQ(log_.pages[i].size, page_);
    EXPECT_EQ(log_.pages[i].gather, &gather);
  }
  EXPECT_EQ(gather.start, block_ + 2 * page_);
  EXPECT_EQ(gather.end, block_ + 7 * page_ - 1);
  EXPECT_TRUE(log_.walks.empty());
  EXPECT_EQ(pgt_.stats.pages_added, 5u);
  for (size_t i = 2; i < 7; ++i) expect_unmapped(block_ + i * page_);
  expect_mapped(block_ + page_, kPaBase + page_, page_, IOMMU_READ | IOMMU_WRITE);
  expect_mapped(block_ + 7 * page_, kPaBase + 7 * page_, page_, IOMMU_READ | IOMMU_WRITE);

  // Blocks are leaves too.
  log_.pages.clear();
  EXPECT_EQ(io_pgtable_unmap_pages(&pgt_, 3 * block_, block_, 2, &gather), 2 * block_);
  ASSERT_EQ(log_.pages.size(), 2u);
  EXPECT_EQ(log_.pages[0].iova, 3 * block_);
  EXPECT_EQ(log_.pages[1].iova, 4 * block_);
  EXPECT_EQ(log_.pages[1].size, block_);
  expect_unmapped(3 * block_);
  expect_unmapped(5 * block_ - page_);

  // A queued gather (flush queue) is not told about pages.
  log_.pages.clear();
  iommu_iotlb_gather queued;
  iommu_iotlb_gather_init(&queued);
  queued.queued = true;
  EXPECT_EQ(io_pgtable_unmap_pages(&pgt_, block_, page_, 2, &queued), 2 * page_);
  EXPECT_TRUE(log_.pages.empty());
  EXPECT_TRUE(iommu_iotlb_gather_empty(&queued));
  expect_unmapped(block_);
  expect_unmapped(block_ + page_);
  // Nothing freed: leaf unmaps keep their (now empty) tables, as Linux.
  EXPECT_EQ(pgt_.stats.tables_freed, 0u);
}

TEST_P(IoPgtableGeometryTest, UnmapStopsAtTheFirstHole) {
  ASSERT_EQ(map(block_, kPaBase, page_, 3, IOMMU_READ), 0);
  ASSERT_EQ(map(block_ + 4 * page_, kPaBase, page_, 3, IOMMU_READ), 0);
  iommu_iotlb_gather gather;
  iommu_iotlb_gather_init(&gather);
  EXPECT_EQ(io_pgtable_unmap_pages(&pgt_, block_, page_, 7, &gather), 3 * page_);
  EXPECT_EQ(io_pgtable_unmap_pages(&pgt_, block_ + 3 * page_, page_, 4, &gather), 0u);
  EXPECT_EQ(io_pgtable_unmap_pages(&pgt_, 7 * block_, page_, 1, &gather), 0u);
  expect_mapped(block_ + 4 * page_, kPaBase, page_, IOMMU_READ);
}

TEST_P(IoPgtableGeometryTest, UnmappingAWholeTableFlushesTheWalkAndFreesIt) {
  const uint64_t per_table = block_ / page_;
  const uint64_t before = host_hal::dma_bytes_in_use();
  ASSERT_EQ(map(2 * block_, kPaBase, page_, per_table, IOMMU_READ | IOMMU_WRITE), 0);
  const uint64_t tables = pgt_.stats.tables_allocated - 1;
  EXPECT_EQ(host_hal::dma_bytes_in_use(), before + tables * GetParam().granule);
  expect_mapped(2 * block_ + block_ / 2, kPaBase + block_ / 2, page_, IOMMU_READ | IOMMU_WRITE);

  iommu_iotlb_gather gather;
  iommu_iotlb_gather_init(&gather);
  EXPECT_EQ(io_pgtable_unmap_pages(&pgt_, 2 * block_, block_, 1, &gather), block_);
  ASSERT_EQ(log_.walks.size(), 1u);
  EXPECT_EQ(log_.walks[0].iova, 2 * block_);
  EXPECT_EQ(log_.walks[0].size, block_);
  EXPECT_EQ(log_.walks[0].granule, GetParam().granule);
  // Flushed after the entry was cleared, before the table was freed.
  EXPECT_EQ(log_.walks[0].tables_freed_before, 0u);
  EXPECT_EQ(log_.walks[0].phys_at_call, 0u);
  EXPECT_TRUE(log_.pages.empty());
  EXPECT_TRUE(iommu_iotlb_gather_empty(&gather));
  EXPECT_EQ(pgt_.stats.walk_flushes, 1u);
  EXPECT_EQ(pgt_.stats.tables_freed, 1u);
  EXPECT_EQ(host_hal::dma_bytes_in_use(), before + (tables - 1) * GetParam().granule);
  for (uint64_t off : {uint64_t{0}, block_ / 2, block_ - page_}) expect_unmapped(2 * block_ + off);

  // The range is free for a block now.
  ASSERT_EQ(map(2 * block_, kPaBase, block_, 1, IOMMU_READ), 0);
  expect_mapped(2 * block_ + page_, kPaBase + page_, block_, IOMMU_READ);
}

TEST_P(IoPgtableGeometryTest, BlockOverAnEmptiedTableReplacesIt) {
  ASSERT_EQ(map(block_, kPaBase, page_, 4, IOMMU_READ), 0);
  EXPECT_EQ(unmap(block_, page_, 4, nullptr), 4 * page_);
  EXPECT_EQ(pgt_.stats.tables_freed, 0u);
  ASSERT_EQ(map(block_, kPaBase + kGiB, block_, 1, IOMMU_READ | IOMMU_WRITE), 0);
  ASSERT_EQ(log_.walks.size(), 1u);
  EXPECT_EQ(log_.walks[0].iova, block_);
  EXPECT_EQ(log_.walks[0].size, block_);
  EXPECT_EQ(pgt_.stats.tables_freed, 1u);
  expect_mapped(block_ + 3 * page_, kPaBase + kGiB + 3 * page_, block_, IOMMU_READ | IOMMU_WRITE);
}

TEST_P(IoPgtableGeometryTest, PartialBlockUnmapIsRejected) {
  ASSERT_EQ(map(block_, kPaBase, block_, 1, IOMMU_READ | IOMMU_WRITE), 0);
  iommu_iotlb_gather gather;
  iommu_iotlb_gather_init(&gather);
  EXPECT_EQ(io_pgtable_unmap_pages(&pgt_, block_, page_, 1, &gather), 0u);
  EXPECT_EQ(io_pgtable_unmap_pages(&pgt_, block_ + page_, page_, 4, &gather), 0u);
  EXPECT_TRUE(log_.pages.empty());
  EXPECT_TRUE(log_.walks.empty());
  expect_mapped(block_, kPaBase, block_, IOMMU_READ | IOMMU_WRITE);
  expect_mapped(block_ + page_, kPaBase + page_, block_, IOMMU_READ | IOMMU_WRITE);
}

// ---------------------------------------------------------------------------
// map_pages contract
// ---------------------------------------------------------------------------
TEST_P(IoPgtableGeometryTest, MapStopsAtTheEndOfTheLeafTable) {
  const uint64_t iova = 2 * block_ - 3 * page_;
  const uint64_t writes0 = host_hal::cost_count("pte_write");
  size_t mapped = 0;
  ASSERT_EQ(io_pgtable_map_pages(&pgt_, iova, kPaBase, page_, 10, IOMMU_READ, &mapped), 0);
  EXPECT_EQ(mapped, 3 * page_);
  expect_unmapped(2 * block_);
  // Tables installed on the way (coherent: one store each) plus three leaves.
  const uint64_t tables = pgt_.stats.tables_allocated - 1;
  EXPECT_EQ(pgt_.stats.ptes_written, tables + 3);
  EXPECT_EQ(host_hal::cost_count("pte_write") - writes0, tables + 3);

  // The caller loops; *mapped accumulates, as Linux.
  ASSERT_EQ(io_pgtable_map_pages(&pgt_, iova + mapped, kPaBase + mapped, page_, 7, IOMMU_READ, &mapped), 0);
  EXPECT_EQ(mapped, 10 * page_);
  EXPECT_EQ(pgt_.stats.tables_allocated - 1, tables + 1);  // one more leaf table
  for (uint64_t i = 0; i < 10; ++i) expect_mapped(iova + i * page_, kPaBase + i * page_, page_, IOMMU_READ);
  expect_unmapped(iova + 10 * page_);
  expect_unmapped(iova - page_);

  // Blocks stop at the end of their table too.
  const uint64_t span = block_ * (GetParam().granule / 8);  // of one full level-2 table
  if (span < (1ull << GetParam().ias)) {
    mapped = 0;
    ASSERT_EQ(io_pgtable_map_pages(&pgt_, span - block_, kPaBase, block_, 4, IOMMU_READ, &mapped), 0);
    EXPECT_EQ(mapped, block_);
  }
}

TEST_P(IoPgtableGeometryTest, MappingTwiceOrBadArgumentsFail) {
  ASSERT_EQ(map(block_ + 4 * page_, kPaBase, page_, 4, IOMMU_READ), 0);
  ASSERT_EQ(map(3 * block_, kPaBase, block_, 1, IOMMU_READ), 0);
  const uint64_t writes = pgt_.stats.ptes_written;
  size_t mapped = 0;
  EXPECT_EQ(io_pgtable_map_pages(&pgt_, block_ + 4 * page_, kPaBase, page_, 1, IOMMU_READ, &mapped),
            -IO_PGTABLE_EEXIST);
  // Overlapping at the end: nothing of the run is written.
  EXPECT_EQ(io_pgtable_map_pages(&pgt_, block_ + 2 * page_, kPaBase, page_, 3, IOMMU_READ, &mapped),
            -IO_PGTABLE_EEXIST);
  expect_unmapped(block_ + 2 * page_);
  // A block over live pages, a page inside a block.
  EXPECT_EQ(io_pgtable_map_pages(&pgt_, block_, kPaBase, block_, 1, IOMMU_READ, &mapped), -IO_PGTABLE_EEXIST);
  EXPECT_EQ(io_pgtable_map_pages(&pgt_, 3 * block_ + page_, kPaBase, page_, 1, IOMMU_READ, &mapped),
            -IO_PGTABLE_EEXIST);
  EXPECT_EQ(mapped, 0u);
  EXPECT_EQ(pgt_.stats.ptes_written, writes);

  const int einval = -IO_PGTABLE_EINVAL;
  EXPECT_EQ(io_pgtable_map_pages(&pgt_, 5 * block_, kPaBase, page_ * 2, 1, IOMMU_READ, &mapped), einval);
  EXPECT_EQ(io_pgtable_map_pages(&pgt_, 5 * block_ + page_ / 2, kPaBase, page_, 1, IOMMU_READ, &mapped), einval);
  EXPECT_EQ(io_pgtable_map_pages(&pgt_, 5 * block_, kPaBase + 8, page_, 1, IOMMU_READ, &mapped), einval);
  EXPECT_EQ(io_pgtable_map_pages(&pgt_, 5 * block_ + page_, kPaBase, block_, 1, IOMMU_READ, &mapped), einval);
  EXPECT_EQ(io_pgtable_map_pages(&pgt_, 1ull << GetParam().ias, kPaBase, page_, 1, IOMMU_READ, &mapped), einval);
  EXPECT_EQ(io_pgtable_map_pages(&pgt_, 5 * block_, 1ull << 48, page_, 1, IOMMU_READ, &mapped), einval);
  EXPECT_EQ(io_pgtable_map_pages(&pgt_, 5 * block_, kPaBase, page_, 0, IOMMU_READ, &mapped), einval);
  EXPECT_EQ(io_pgtable_map_pages(&pgt_, 5 * block_, kPaBase, page_, 1, IOMMU_CACHE, &mapped), einval);
  EXPECT_EQ(mapped, 0u);
  EXPECT_EQ(io_pgtable_unmap_pages(&pgt_, block_ + 4 * page_, page_ * 2, 1, nullptr), 0u);
  EXPECT_EQ(io_pgtable_unmap_pages(&pgt_, block_ + 4 * page_ + 8, page_, 1, nullptr), 0u);
  expect_mapped(block_ + 4 * page_, kPaBase, page_, IOMMU_READ);
}

// ---------------------------------------------------------------------------
// Cache maintenance for a non-coherent walker
// ---------------------------------------------------------------------------
TEST_P(IoPgtableGeometryTest, NonCoherentWalkCleansWhatItWrites) {
  io_pgtable_destroy(&pgt_);
  live_ = false;
  host_hal::reset();
  create(GetParam().granule, GetParam().ias, /*coherent=*/false);
  EXPECT_EQ(cfg_.s1.irgn0, 0u);
  EXPECT_EQ(cfg_.s1.sh0, 2u);
  const uint64_t lines_per_table = GetParam().granule / 64;
  // The initial table is cleaned once when allocated.
  EXPECT_EQ(host_hal::cost_count("cache_clean_line"), lines_per_table);
  EXPECT_EQ(pgt_.stats.cache_syncs, 1u);

  size_t mapped = 0;
  ASSERT_EQ(io_pgtable_map_pages(&pgt_, 0, kPaBase, page_, 16, IOMMU_READ, &mapped), 0);
  const uint64_t tables = pgt_.stats.tables_allocated - 1;
  EXPECT_EQ(tables, 3u - GetParam().start_level);
  // Each new table: cleaned whole, then its entry (one line) cleaned and
  // re-stored with the software "synced" mark; 16 leaves = 128 bytes = 2 lines.
  EXPECT_EQ(host_hal::cost_count("cache_clean_line"), lines_per_table + tables * (lines_per_table + 1) + 2);
  EXPECT_EQ(pgt_.stats.cache_syncs, 1 + tables * 2 + 1);
  EXPECT_EQ(pgt_.stats.ptes_written, tables * 2 + 16);
  EXPECT_EQ(host_hal::cost_count("pte_write"), pgt_.stats.ptes_written);

  // Same leaf table: the table entries are marked synced, only the leaves
  // (bytes 128..255, two lines) are cleaned.
  const uint64_t lines = host_hal::cost_count("cache_clean_line");
  ASSERT_EQ(io_pgtable_map_pages(&pgt_, 16 * page_, kPaBase, page_, 16, IOMMU_READ, &mapped), 0);
  EXPECT_EQ(host_hal::cost_count("cache_clean_line") - lines, 2u);
  // A single leaf: one line.
  ASSERT_EQ(io_pgtable_map_pages(&pgt_, 40 * page_, kPaBase, page_, 1, IOMMU_READ, &mapped), 0);
  EXPECT_EQ(host_hal::cost_count("cache_clean_line") - lines, 3u);
  for (uint64_t i = 0; i < 32; ++i) expect_mapped(i * page_, kPaBase + (i % 16) * page_, page_, IOMMU_READ);

  // Unmapping cleans the cleared entries: 32 leaves, 4 lines, one sync.
  const uint64_t syncs = pgt_.stats.cache_syncs;
  const uint64_t lines2 = host_hal::cost_count("cache_clean_line");
  EXPECT_EQ(io_pgtable_unmap_pages(&pgt_, 0, page_, 32, nullptr), 32 * page_);
  EXPECT_EQ(host_hal::cost_count("cache_clean_line") - lines2, 4u);
  EXPECT_EQ(pgt_.stats.cache_syncs - syncs, 1u);
}

TEST_P(IoPgtableGeometryTest, CoherentWalkCleansNothing) {
  size_t mapped = 0;
  ASSERT_EQ(io_pgtable_map_pages(&pgt_, 0, kPaBase, page_, 16, IOMMU_READ, &mapped), 0);
  ASSERT_EQ(map(3 * block_, kPaBase, block_, 1, IOMMU_READ), 0);
  EXPECT_EQ(unmap(0, page_, 16, nullptr), 16 * page_);
  EXPECT_EQ(host_hal::cost_count("cache_clean_line"), 0u);
  EXPECT_EQ(pgt_.stats.cache_syncs, 0u);
  // Coherent tables are marked synced when installed (single store each).
  const uint64_t tables = pgt_.stats.tables_allocated - 1;
  EXPECT_EQ(pgt_.stats.ptes_written, tables + 16 + 1 + 16);
  EXPECT_EQ(host_hal::cost_count("pte_write"), pgt_.stats.ptes_written);
}

TEST_P(IoPgtableGeometryTest, DestroyFreesEveryTable) {
  ASSERT_EQ(map(0, kPaBase, page_, 3, IOMMU_READ), 0);
  ASSERT_EQ(map(5 * block_ - page_, kPaBase, page_, 2, IOMMU_READ), 0);
  ASSERT_EQ(map((1ull << GetParam().ias) - page_, kPaBase, page_, 1, IOMMU_READ), 0);
  EXPECT_GT(pgt_.stats.tables_allocated, 3u);
  io_pgtable_destroy(&pgt_);
  live_ = false;
  EXPECT_EQ(pgt_.stats.tables_freed, pgt_.stats.tables_allocated);
  EXPECT_EQ(host_hal::dma_bytes_in_use(), 0u);
  EXPECT_EQ(host_hal::cost_count("kmem_alloc"), pgt_.stats.tables_allocated * 2);
  EXPECT_TRUE(log_.walks.empty());
}

INSTANTIATE_TEST_SUITE_P(IoPgtable, IoPgtableGeometryTest,
                         testing::Values(Geometry{4 * kKiB, 48, 0}, Geometry{4 * kKiB, 39, 1},
                                         Geometry{4 * kKiB, 32, 1}, Geometry{16 * kKiB, 48, 0},
                                         Geometry{16 * kKiB, 36, 2}, Geometry{64 * kKiB, 48, 1},
                                         Geometry{64 * kKiB, 42, 2}, Geometry{64 * kKiB, 32, 2}),
                         geometry_name);

// ---------------------------------------------------------------------------
// 4K-specific: a subtree of several levels
// ---------------------------------------------------------------------------
class IoPgtableTest : public IoPgtableBase {};

TEST_F(IoPgtableTest, UnmappingAGigabyteOfPagesFlushesOnceAndFreesTheSubtree) {
  create(4 * kKiB, 48);
  const uint64_t base = 3 * kGiB;
  // Pages in three 2 MiB regions and a 2 MiB block, all under one level-1
  // entry: one level-2 table and three level-3 tables.
  ASSERT_EQ(map(base, kPaBase, 4 * kKiB, 512, IOMMU_READ), 0);
  ASSERT_EQ(map(base + 10 * kMiB, kPaBase, 4 * kKiB, 3, IOMMU_READ), 0);
  ASSERT_EQ(map(base + kGiB - 4 * kKiB, kPaBase, 4 * kKiB, 1, IOMMU_READ), 0);
  ASSERT_EQ(map(base + 100 * kMiB, kPaBase, 2 * kMiB, 1, IOMMU_READ), 0);
  const uint64_t freed_before = pgt_.stats.tables_freed;
  const uint64_t in_use = host_hal::dma_bytes_in_use();

  iommu_iotlb_gather gather;
  iommu_iotlb_gather_init(&gather);
  EXPECT_EQ(io_pgtable_unmap_pages(&pgt_, base, kGiB, 1, &gather), kGiB);
  ASSERT_EQ(log_.walks.size(), 1u);
  EXPECT_EQ(log_.walks[0].iova, base);
  EXPECT_EQ(log_.walks[0].size, kGiB);
  EXPECT_EQ(log_.walks[0].granule, 4 * kKiB);
  EXPECT_TRUE(log_.pages.empty());
  EXPECT_EQ(pgt_.stats.tables_freed - freed_before, 4u);
  EXPECT_EQ(host_hal::dma_bytes_in_use(), in_use - 4 * 4 * kKiB);
  for (uint64_t off : {uint64_t{0}, 10 * kMiB, 100 * kMiB + 4 * kKiB, kGiB - 4 * kKiB}) expect_unmapped(base + off);
}

TEST_F(IoPgtableTest, UnmappingARangeOfTablesFlushesEachEntry) {
  // 32 MiB of 4K pages unmapped as 2 MiB entries: one walk flush per table,
  // the seed 000 case (16 flushes, no per-page invalidation).
  create(4 * kKiB, 48);
  const uint64_t base = 64 * kMiB;
  ASSERT_EQ(map(base, kPaBase, 4 * kKiB, 8192, IOMMU_READ | IOMMU_WRITE), 0);
  iommu_iotlb_gather gather;
  iommu_iotlb_gather_init(&gather);
  EXPECT_EQ(io_pgtable_unmap_pages(&pgt_, base, 2 * kMiB, 16, &gather), 32 * kMiB);
  ASSERT_EQ(log_.walks.size(), 16u);
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(log_.walks[i].iova, base + i * 2 * kMiB);
    EXPECT_EQ(log_.walks[i].size, 2 * kMiB);
  }
  EXPECT_TRUE(log_.pages.empty());
  EXPECT_EQ(pgt_.stats.tables_freed, 16u);
  expect_unmapped(base + 17 * kMiB);
}

TEST_F(IoPgtableTest, AllocAndFreeUseDmaMemory) {
  host_hal::reset();
  io_pgtable_cfg cfg{};
  cfg.granule = 4 * kKiB;
  cfg.ias = 48;
  cfg.oas = 48;
  cfg.coherent_walk = true;
  cfg.tlb = &kFlushOps;
  cfg.cookie = &log_;
  io_pgtable* p = io_pgtable_alloc(&cfg);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->cfg.s1.ttbr, cfg.s1.ttbr);
  size_t mapped = 0;
  ASSERT_EQ(io_pgtable_map_pages(p, 0x1234000, kPaBase, 4 * kKiB, 1, IOMMU_READ, &mapped), 0);
  EXPECT_EQ(io_pgtable_iova_to_phys(p, 0x1234567), kPaBase + 0x567);
  io_pgtable_free(p);
  EXPECT_EQ(host_hal::dma_bytes_in_use(), 0u);

  cfg.granule = 8 * kKiB;
  EXPECT_EQ(io_pgtable_alloc(&cfg), nullptr);
  cfg.granule = 4 * kKiB;
  cfg.ias = 49;
  EXPECT_EQ(io_pgtable_alloc(&cfg), nullptr);
  EXPECT_EQ(host_hal::dma_bytes_in_use(), 0u);
}

TEST_F(IoPgtableTest, GatherHelpers) {
  iommu_iotlb_gather g;
  iommu_iotlb_gather_init(&g);
  EXPECT_EQ(g.start, ~0ull);
  EXPECT_EQ(g.end, 0u);
  EXPECT_FALSE(g.queued);
  EXPECT_FALSE(iommu_iotlb_gather_is_disjoint(&g, 0x5000, 0x1000));
  iommu_iotlb_gather_add_range(&g, 0x5000, 0x1000);
  EXPECT_FALSE(iommu_iotlb_gather_is_disjoint(&g, 0x6000, 0x1000));
  EXPECT_FALSE(iommu_iotlb_gather_is_disjoint(&g, 0x4000, 0x1000));
  EXPECT_TRUE(iommu_iotlb_gather_is_disjoint(&g, 0x8000, 0x1000));
  EXPECT_TRUE(iommu_iotlb_gather_is_disjoint(&g, 0x2000, 0x1000));
  iommu_iotlb_gather_add_range(&g, 0x3000, 0x1000);
  EXPECT_EQ(g.start, 0x3000u);
  EXPECT_EQ(g.end, 0x5fffu);
}

}  // namespace

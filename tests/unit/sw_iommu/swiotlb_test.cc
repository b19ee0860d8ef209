// sw/iommu swiotlb on the host HAL: slot invariants under long random traffic
// (checked against a shadow of every allocation), the bounce copies, the two
// search orders of seed 004, dynamic pools, and error returns.
#include "iommu/swiotlb.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "host_hal.h"

namespace {

namespace hh = smmu_vp::host_hal;

constexpr uint64_t kSlot = SWIOTLB_SLOT_SIZE;
constexpr uint32_t kSeg = SWIOTLB_SEGSIZE;

uint8_t* va(phys_addr_t pa) { return static_cast<uint8_t*>(hal_phys_to_virt(pa)); }

std::vector<swiotlb_pool*> pools_of(const swiotlb_mem& mem) {
  std::vector<swiotlb_pool*> v;
  for (swiotlb_pool* p = mem.pools; p; p = p->next) v.push_back(p);
  return v;
}

uint32_t slot_of(const swiotlb_pool* pool, phys_addr_t pa) {
  return static_cast<uint32_t>((pa - pool->start) / kSlot);
}

// What Linux's rules give for a request, computed independently of the code.
struct Placement {
  uint64_t offset;     // from the first allocated slot to the returned address
  uint64_t size;       // bytes allocated
  uint32_t nslots;
  uint32_t pad;        // whole padding slots
  uint64_t align;      // the first allocated slot's address is a multiple of this
};

Placement expected(phys_addr_t orig, size_t alloc_size, uint32_t align_mask, uint32_t min_mask) {
  Placement p{};
  p.offset = orig & min_mask & (uint64_t{align_mask} | (kSlot - 1));
  p.size = alloc_size + p.offset;
  if (align_mask) p.size = (p.size + align_mask) & ~uint64_t{align_mask};
  p.nslots = static_cast<uint32_t>((p.size + kSlot - 1) / kSlot);
  p.pad = static_cast<uint32_t>(p.offset / kSlot);
  uint64_t a = align_mask;
  if (!align_mask && !min_mask && p.size >= SWIOTLB_PAGE_SIZE) a = SWIOTLB_PAGE_SIZE - 1;
  p.align = (a | (kSlot - 1)) + 1;
  return p;
}

struct Live {
  phys_addr_t tlb, orig;
  size_t map_size;
  swiotlb_dir dir;
  swiotlb_pool* pool;
  uint32_t first, nslots;
};

// Every slot's `list` is the free run to the end of its segment (0 when used),
// and every area's used count matches the shadow.
void check_pool(const swiotlb_pool* pool, const std::vector<int>& owner) {
  ASSERT_EQ(owner.size(), pool->nslabs);
  uint32_t run = 0;
  for (uint32_t i = pool->nslabs; i-- > 0;) {
    if ((i + 1) % kSeg == 0 || i + 1 == pool->nslabs) run = 0;
    run = owner[i] < 0 ? run + 1 : 0;
    ASSERT_EQ(pool->slots[i].list, run) << "pool " << pool->id << " slot " << i;
  }
  for (uint32_t a = 0; a < pool->nareas; a++) {
    uint32_t used = 0;
    for (uint32_t i = a * pool->area_nslabs; i < (a + 1) * pool->area_nslabs; i++) used += owner[i] >= 0;
    ASSERT_EQ(pool->areas[a].used, used) << "pool " << pool->id << " area " << a;
  }
}

class Swiotlb : public ::testing::Test {
 protected:
  void SetUp() override {
    hh::reset();
    hh::set_cpu(0, 1);
    mem_ = new swiotlb_mem();
  }
  void TearDown() override {
    swiotlb_destroy(mem_);
    delete mem_;
    for (void* p : sources_) hal_dma_free(p);
    EXPECT_EQ(hh::dma_bytes_in_use(), 0u);
  }
  static swiotlb_config config(uint64_t pool_size, unsigned extra_pools, unsigned nareas) {
    swiotlb_config c;
    swiotlb_default_config(&c);
    c.pool_size = pool_size;
    c.extra_pools = extra_pools;
    c.nareas = nareas;
    return c;
  }
  // A source buffer in DRAM filled with a byte pattern.
  phys_addr_t source(size_t bytes, uint8_t seed = 1) {
    phys_addr_t pa = 0;
    auto* p = static_cast<uint8_t*>(hal_dma_alloc(bytes, 4096, &pa));
    EXPECT_NE(p, nullptr);
    sources_.push_back(p);
    for (size_t i = 0; i < bytes; i++) p[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
    return pa;
  }
  swiotlb_mem* mem_ = nullptr;
  std::vector<void*> sources_;
};

TEST_F(Swiotlb, InitSizesPoolsAndAreas) {
  hh::set_cpu(0, 3);  // 3 CPUs: 4 areas
  swiotlb_config c = config(1 << 20, 2, 0);
  c.extra_pool_size = 256 << 10;  // 2 segments: capped at 2 areas
  ASSERT_EQ(swiotlb_init(mem_, &c), 0);
  auto pools = pools_of(*mem_);
  ASSERT_EQ(pools.size(), 3u);
  EXPECT_EQ(mem_->default_nareas, 4u);
  EXPECT_EQ(pools[0]->nslabs, 512u);
  EXPECT_EQ(pools[0]->nareas, 4u);
  EXPECT_EQ(pools[0]->area_nslabs, 128u);
  EXPECT_EQ(pools[1]->nslabs, 128u * 1);  // 256 KiB = 128 slots = 1 segment
  EXPECT_EQ(pools[1]->nareas, 1u);
  for (unsigned i = 0; i < pools.size(); i++) {
    EXPECT_EQ(pools[i]->id, i);
    EXPECT_EQ(pools[i]->start % SWIOTLB_PAGE_SIZE, 0u);
    EXPECT_EQ(pools[i]->end - pools[i]->start, uint64_t{pools[i]->nslabs} * kSlot);
    for (uint32_t s = 0; s < pools[i]->nslabs; s++) ASSERT_EQ(pools[i]->slots[s].list, kSeg - s % kSeg);
  }
  swiotlb_destroy(mem_);

  // 3 segments cannot be split into 2 or 4 areas of whole segments: 1 area.
  hh::set_cpu(0, 4);
  c = config(3 * kSeg * kSlot, 0, 0);
  ASSERT_EQ(swiotlb_init(mem_, &c), 0);
  EXPECT_EQ(mem_->pools->nareas, 1u);
  swiotlb_destroy(mem_);

  // More CPUs than segments: one segment per area. Less than a segment: one.
  hh::set_cpu(0, 16);
  c = config(4 * kSeg * kSlot, 0, 0);
  ASSERT_EQ(swiotlb_init(mem_, &c), 0);
  EXPECT_EQ(mem_->default_nareas, 16u);
  EXPECT_EQ(mem_->pools->nareas, 4u);
  swiotlb_destroy(mem_);
  c = config(1000, 0, 2);
  ASSERT_EQ(swiotlb_init(mem_, &c), 0);
  EXPECT_EQ(mem_->pools->nslabs, kSeg);
  EXPECT_EQ(mem_->pools->nareas, 1u);
  swiotlb_destroy(mem_);

  // Defaults: one 64 MiB pool.
  hh::set_cpu(0, 1);
  ASSERT_EQ(swiotlb_init(mem_, nullptr), 0);
  EXPECT_EQ(mem_->npools, 1u);
  EXPECT_EQ(mem_->pools->nslabs, (64u << 20) / kSlot);
  EXPECT_EQ(mem_->search, SWIOTLB_AREA_FIRST);
}

// ---- Invariants under long random traffic ----

class SwiotlbRandom : public Swiotlb, public ::testing::WithParamInterface<swiotlb_search> {};

TEST_P(SwiotlbRandom, InvariantsHoldUnderRandomMapUnmap) {
  constexpr unsigned kCpus = 4;
  hh::set_cpu(0, kCpus);
  swiotlb_config c = config(1 << 20, 3, kCpus);  // 512 slots, 4 areas
  c.extra_pool_size = 512 << 10;                  // 256 slots, 2 areas: skipped by area-first later
  c.search = GetParam();
  ASSERT_EQ(swiotlb_init(mem_, &c), 0);
  const auto pools = pools_of(*mem_);
  ASSERT_EQ(pools.size(), 4u);
  ASSERT_EQ(pools[1]->nareas, 2u);
  std::map<const swiotlb_pool*, std::vector<int>> owner;
  for (auto* p : pools) owner[p].assign(p->nslabs, -1);

  constexpr size_t kSrc = 2 << 20;
  const phys_addr_t src = source(kSrc);
  std::mt19937_64 rng(12345);
  std::map<int, Live> live;
  int next_id = 0;
  const uint32_t align_masks[] = {0, 0, 0, 0x7FF, 0xFFF, 0x3FFF, 0xFFFF};
  const uint32_t min_masks[] = {0, 0, 0, 0x3, 0x7FF, 0xFFF, 0x1FFF};
  const swiotlb_dir dirs[] = {SWIOTLB_DMA_TO_DEVICE, SWIOTLB_DMA_FROM_DEVICE, SWIOTLB_DMA_BIDIRECTIONAL};
  uint64_t maps = 0, full = 0, too_big = 0, unmaps = 0, padded = 0, unaligned_full = 0;

  auto unmap_one = [&](std::map<int, Live>::iterator it) {
    Live& l = it->second;
    std::vector<uint8_t> device(l.map_size);
    if (l.dir != SWIOTLB_DMA_TO_DEVICE) {
      for (auto& b : device) b = static_cast<uint8_t>(rng());
      std::memcpy(va(l.tlb), device.data(), l.map_size);  // the device writes
    }
    ASSERT_EQ(swiotlb_tbl_unmap_single(mem_, l.tlb, l.map_size, l.dir), 0);
    if (l.dir != SWIOTLB_DMA_TO_DEVICE) {
      ASSERT_EQ(std::memcmp(va(l.orig), device.data(), l.map_size), 0);
    }
    for (uint32_t i = l.first; i < l.first + l.nslots; i++) owner[l.pool][i] = -1;
    live.erase(it);
    unmaps++;
  };

  for (int step = 0; step < 12000; step++) {
    hh::set_cpu(static_cast<unsigned>(rng() % kCpus), kCpus);
    const bool do_map = live.size() < 8 || (live.size() < 400 && rng() % 100 < 55);
    if (do_map) {
      // Sizes spread on a log scale from 1 B to 256 KiB.
      const unsigned bits = static_cast<unsigned>(rng() % 19);
      size_t map_size = 1 + static_cast<size_t>(rng() % (size_t{1} << bits));
      if (rng() % 32 == 0) map_size = SWIOTLB_MAX_ALLOC - rng() % 8192;  // near the limit
      size_t alloc_size = rng() % 4 == 0 ? (map_size + 4095) & ~size_t{4095} : map_size;
      const uint32_t am = align_masks[rng() % std::size(align_masks)];
      const uint32_t mm = min_masks[rng() % std::size(min_masks)];
      const swiotlb_dir dir = dirs[rng() % 3];
      const phys_addr_t orig = src + rng() % (kSrc - alloc_size);
      const Placement want = expected(orig, alloc_size, am, mm);

      const phys_addr_t tlb = swiotlb_tbl_map_single_mask(mem_, orig, map_size, alloc_size, am, mm, dir);
      if (tlb == SWIOTLB_MAP_ERROR) {
        if (want.size > SWIOTLB_MAX_ALLOC) {
          ASSERT_EQ(mem_->last_error, SWIOTLB_ERR_TOO_BIG);
          too_big++;
        } else {
          ASSERT_EQ(mem_->last_error, SWIOTLB_ERR_FULL);
          full++;
          // Without alignment or min_align bits to match, every slot of
          // every area is examined: no long enough free run may exist.
          if (want.align == kSlot && (mm & ~uint32_t{kSlot - 1}) == 0) {
            for (auto* p : pools) {
              uint32_t run = 0;
              for (uint32_t i = 0; i < p->nslabs; i++) {
                run = (i % kSeg == 0 ? 0 : run);
                run = owner[p][i] < 0 ? run + 1 : 0;
                ASSERT_LT(run, want.nslots) << "free run missed in pool " << p->id << " at slot " << i;
              }
            }
            unaligned_full++;
          }
        }
        continue;
      }
      ASSERT_LE(want.size, SWIOTLB_MAX_ALLOC);
      swiotlb_pool* pool = swiotlb_find_pool(mem_, tlb);
      ASSERT_NE(pool, nullptr);
      ASSERT_FALSE(pool->transient);
      const phys_addr_t first_pa = tlb - want.offset;
      ASSERT_EQ((first_pa - pool->start) % kSlot, 0u);
      const uint32_t first = slot_of(pool, first_pa);
      // Alignment: the allocation start, and the bits under min_align_mask.
      ASSERT_EQ(first_pa % want.align, 0u) << "align_mask " << am << " min " << mm << " size " << want.size;
      ASSERT_EQ(tlb & mm, orig & mm);
      // Inside one segment, inside the pool.
      ASSERT_LE(first + want.nslots, pool->nslabs);
      ASSERT_EQ(first / kSeg, (first + want.nslots - 1) / kSeg);
      ASSERT_EQ(pool->slots[first + want.pad].pad_slots, want.pad);
      padded += want.pad != 0;
      // Never two owners.
      for (uint32_t i = first; i < first + want.nslots; i++) {
        ASSERT_EQ(owner[pool][i], -1) << "slot " << i << " of pool " << pool->id << " allocated twice";
        owner[pool][i] = next_id;
      }
      if (dir != SWIOTLB_DMA_FROM_DEVICE) {
        ASSERT_EQ(std::memcmp(va(tlb), va(orig), map_size), 0);
      }
      live[next_id++] = Live{tlb, orig, map_size, dir, pool, first, want.nslots};
      maps++;
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      unmap_one(it);
      if (HasFatalFailure()) return;
    }
    for (auto* p : pools) {
      check_pool(p, owner[p]);
      if (HasFatalFailure()) return;
    }
  }
  // Double unmap of a released mapping is refused.
  while (!live.empty()) {
    unmap_one(live.begin());
    if (HasFatalFailure()) return;
  }
  for (auto* p : pools) {
    check_pool(p, owner[p]);
    for (uint32_t a = 0; a < p->nareas; a++) EXPECT_EQ(p->areas[a].used, 0u);
    EXPECT_EQ(swiotlb_pool_used(p), 0u);
  }
  EXPECT_EQ(mem_->stats.used_slots, 0u);
  EXPECT_EQ(mem_->stats.maps, maps);
  EXPECT_EQ(mem_->stats.unmaps, unmaps);
  EXPECT_EQ(mem_->stats.failures, full + too_big);
  EXPECT_EQ(mem_->stats.failures_full, full);
  EXPECT_EQ(mem_->stats.failures_too_big, too_big);
  EXPECT_EQ(hh::cost_count("slot_scan"), mem_->stats.slots_scanned);
  // The traffic really went through full pools, padding slots and big maps.
  EXPECT_GT(maps, 3000u);
  EXPECT_GT(full, 10u);
  EXPECT_GT(too_big, 0u);
  EXPECT_GT(padded, 10u);
  EXPECT_GT(unaligned_full, 10u);
  EXPECT_GT(mem_->stats.used_hiwater, 900u);
  RecordProperty("maps", std::to_string(maps));
  RecordProperty("full", std::to_string(full));
  RecordProperty("slots_scanned", std::to_string(mem_->stats.slots_scanned));
}

INSTANTIATE_TEST_SUITE_P(BothSearches, SwiotlbRandom, ::testing::Values(SWIOTLB_POOL_FIRST, SWIOTLB_AREA_FIRST),
                         [](const ::testing::TestParamInfo<swiotlb_search>& i) {
                           return i.param == SWIOTLB_POOL_FIRST ? std::string("PoolFirst")
                                                                : std::string("AreaFirst");
                         });

// ---- Copies ----

// cfg.queued_locks: the pool list's lock and every area's are qspinlocks,
// in the pools made at init and in one grown later; a map and unmap still
// work. Without it, ticket locks. The queued locks' per-core nodes, taken
// on first use, stay for the process as a kernel's per-CPU nodes do.
class SwiotlbQueued : public Swiotlb {
 protected:
  void TearDown() override {
    swiotlb_destroy(mem_);
    delete mem_;
    for (void* p : sources_) hal_dma_free(p);
  }
};

TEST_F(SwiotlbQueued, QueuedLocksInEveryPool) {
  hh::set_cpu(0, 4);
  swiotlb_config c = config(1 << 20, 1, 0);
  c.dynamic = true;
  c.queued_locks = true;
  ASSERT_EQ(swiotlb_init(mem_, &c), 0);
  EXPECT_TRUE(sw_spin_is_queued(&mem_->lock));
  ASSERT_EQ(swiotlb_grow(mem_), 0);
  auto pools = pools_of(*mem_);
  ASSERT_EQ(pools.size(), 3u);
  for (const auto* pool : pools)
    for (uint32_t a = 0; a < pool->nareas; a++) EXPECT_TRUE(sw_spin_is_queued(&pool->areas[a].lock)) << pool->id << " " << a;
  const phys_addr_t src = source(4096, 5);
  const phys_addr_t tlb = swiotlb_tbl_map_single(mem_, src, 4096, 0, 0, SWIOTLB_DMA_TO_DEVICE);
  ASSERT_NE(tlb, SWIOTLB_MAP_ERROR);
  EXPECT_EQ(swiotlb_tbl_unmap_single(mem_, tlb, 4096, SWIOTLB_DMA_TO_DEVICE), 0);
  swiotlb_destroy(mem_);

  c.queued_locks = false;
  ASSERT_EQ(swiotlb_init(mem_, &c), 0);
  EXPECT_FALSE(sw_spin_is_queued(&mem_->lock));
  EXPECT_FALSE(sw_spin_is_queued(&mem_->pools->areas[0].lock));
}

TEST_F(Swiotlb, ToDeviceCopiesOnMapOnly) {
  ASSERT_EQ(swiotlb_init(mem_, nullptr), 0);
  const phys_addr_t src = source(64 << 10, 3);
  const size_t n = 10000;
  const uint64_t copies_before = hh::cost_count("memcpy_64b");
  const phys_addr_t tlb = swiotlb_tbl_map_single(mem_, src + 100, n, 0, 0, SWIOTLB_DMA_TO_DEVICE);
  ASSERT_NE(tlb, SWIOTLB_MAP_ERROR);
  EXPECT_EQ(std::memcmp(va(tlb), va(src + 100), n), 0);
  EXPECT_EQ(hh::cost_count("memcpy_64b") - copies_before, (n + 63) / 64);
  EXPECT_EQ(mem_->stats.bounce_bytes, n);
  // The device does not write back for TO_DEVICE: the original stays.
  std::vector<uint8_t> orig(va(src + 100), va(src + 100) + n);
  std::memset(va(tlb), 0xEE, n);
  ASSERT_EQ(swiotlb_tbl_unmap_single(mem_, tlb, n, SWIOTLB_DMA_TO_DEVICE), 0);
  EXPECT_EQ(std::memcmp(va(src + 100), orig.data(), n), 0);
  EXPECT_EQ(mem_->stats.bounce_bytes, n);
}

TEST_F(Swiotlb, FromDeviceCopiesBackOnUnmap) {
  ASSERT_EQ(swiotlb_init(mem_, nullptr), 0);
  const phys_addr_t src = source(64 << 10, 5);
  const size_t n = 3000;
  const phys_addr_t tlb = swiotlb_tbl_map_single(mem_, src, n, 0, 0, SWIOTLB_DMA_FROM_DEVICE);
  ASSERT_NE(tlb, SWIOTLB_MAP_ERROR);
  EXPECT_EQ(mem_->stats.bounce_bytes, 0u);  // nothing copied in
  EXPECT_NE(std::memcmp(va(tlb), va(src), n), 0);
  for (size_t i = 0; i < n; i++) va(tlb)[i] = static_cast<uint8_t>(i * 13 + 1);  // the device writes
  const uint64_t copies_before = hh::cost_count("memcpy_64b");
  ASSERT_EQ(swiotlb_tbl_unmap_single(mem_, tlb, n, SWIOTLB_DMA_FROM_DEVICE), 0);
  for (size_t i = 0; i < n; i++) ASSERT_EQ(va(src)[i], static_cast<uint8_t>(i * 13 + 1)) << i;
  EXPECT_EQ(hh::cost_count("memcpy_64b") - copies_before, (n + 63) / 64);
  // Bytes after the mapping are untouched.
  EXPECT_EQ(va(src)[n], static_cast<uint8_t>(5 + n * 7 + (n >> 8)));
}

TEST_F(Swiotlb, FromDeviceOnMapWhenConfigured) {
  swiotlb_config c = config(1 << 20, 0, 1);
  c.bounce_from_device_on_map = true;
  ASSERT_EQ(swiotlb_init(mem_, &c), 0);
  const phys_addr_t src = source(8192, 9);
  const phys_addr_t tlb = swiotlb_tbl_map_single(mem_, src, 5000, 0, 0, SWIOTLB_DMA_FROM_DEVICE);
  ASSERT_NE(tlb, SWIOTLB_MAP_ERROR);
  EXPECT_EQ(std::memcmp(va(tlb), va(src), 5000), 0);
  ASSERT_EQ(swiotlb_tbl_unmap_single(mem_, tlb, 5000, SWIOTLB_DMA_FROM_DEVICE), 0);
}

TEST_F(Swiotlb, BidirectionalAndSyncs) {
  ASSERT_EQ(swiotlb_init(mem_, nullptr), 0);
  const phys_addr_t src = source(64 << 10, 7);
  const size_t n = 20000;
  const phys_addr_t orig = src + 0x123;
  const phys_addr_t tlb =
      swiotlb_tbl_map_single_mask(mem_, orig, n, 0, 0, 0xFFF, SWIOTLB_DMA_BIDIRECTIONAL);
  ASSERT_NE(tlb, SWIOTLB_MAP_ERROR);
  EXPECT_EQ(tlb & 0xFFF, orig & 0xFFF);
  EXPECT_EQ(std::memcmp(va(tlb), va(orig), n), 0);

  // The CPU changes a range in the middle and pushes it to the device.
  for (size_t i = 5000; i < 9000; i++) va(orig)[i] = 0xA5;
  ASSERT_EQ(swiotlb_sync_for_device(mem_, tlb + 5000, 4000, SWIOTLB_DMA_BIDIRECTIONAL), 0);
  EXPECT_EQ(std::memcmp(va(tlb), va(orig), n), 0);
  // The device changes another range; the CPU pulls only that range.
  for (size_t i = 12000; i < 12100; i++) va(tlb)[i] = 0x5A;
  ASSERT_EQ(swiotlb_sync_for_cpu(mem_, tlb + 12000, 100, SWIOTLB_DMA_BIDIRECTIONAL), 0);
  for (size_t i = 12000; i < 12100; i++) ASSERT_EQ(va(orig)[i], 0x5A);
  EXPECT_EQ(mem_->stats.syncs, 2u);
  // Direction rules: no copy for the other way.
  va(tlb)[0] = 0x11;
  ASSERT_EQ(swiotlb_sync_for_cpu(mem_, tlb, 1, SWIOTLB_DMA_TO_DEVICE), 0);
  EXPECT_NE(va(orig)[0], 0x11);
  // Unmap copies the whole mapping back.
  va(tlb)[n - 1] = 0x77;
  ASSERT_EQ(swiotlb_tbl_unmap_single(mem_, tlb, n, SWIOTLB_DMA_BIDIRECTIONAL), 0);
  EXPECT_EQ(va(orig)[0], 0x11);
  EXPECT_EQ(va(orig)[n - 1], 0x77);
  EXPECT_EQ(swiotlb_sync_for_cpu(mem_, tlb, 1, SWIOTLB_DMA_BIDIRECTIONAL), -1);
}

TEST_F(Swiotlb, MinAlignAboveSlotUsesPaddingSlots) {
  ASSERT_EQ(swiotlb_init(mem_, nullptr), 0);
  const phys_addr_t src = source(64 << 10, 11);
  // dma-iommu style: allocation aligned to the 4 KiB granule, device keeps 12 bits.
  const phys_addr_t orig = src + 0x900;
  const phys_addr_t tlb = swiotlb_tbl_map_single_mask(mem_, orig, 6000, 0, 0xFFF, 0xFFF, SWIOTLB_DMA_TO_DEVICE);
  ASSERT_NE(tlb, SWIOTLB_MAP_ERROR);
  EXPECT_EQ(tlb & 0xFFF, 0x900u);
  swiotlb_pool* pool = swiotlb_find_pool(mem_, tlb);
  ASSERT_NE(pool, nullptr);
  const uint32_t s = slot_of(pool, tlb);
  ASSERT_GT(s, 0u);
  ASSERT_EQ(pool->slots[s].pad_slots, 1u);
  EXPECT_EQ(pool->slots[s - 1].list, 0u);  // the padding slot is allocated
  EXPECT_EQ((tlb - 0x900) & 0xFFF, 0u);
  EXPECT_EQ(std::memcmp(va(tlb), va(orig), 6000), 0);
  // 0x900 + 6000 = 8304 bytes, rounded up to 4 KiB: 12 KiB, 6 slots.
  EXPECT_EQ(mem_->stats.used_slots, 6u);
  ASSERT_EQ(swiotlb_tbl_unmap_single(mem_, tlb, 6000, SWIOTLB_DMA_TO_DEVICE), 0);
  EXPECT_EQ(swiotlb_pool_used(pool), 0u);
  EXPECT_EQ(pool->slots[s - 1].list, kSeg - (s - 1) % kSeg);
}

// ---- Search order: pool-first against area-first (seed 004) ----

enum class AreaState { kFree, kFragmented, kFull };

// Fills every slot with one-slot mappings from CPU 0, then frees to reach the
// wanted state per (pool, area). Fragmented: every other slot free, so no run
// of two slots exists and a two-slot search examines the whole area.
void build_state(swiotlb_mem* mem, const std::vector<std::vector<AreaState>>& plan) {
  const unsigned ncpu = hal_cpu_count();
  hh::set_cpu(0, ncpu);
  const auto saved = mem->search;
  mem->search = SWIOTLB_AREA_FIRST;
  std::vector<phys_addr_t> all;
  for (;;) {
    const phys_addr_t tlb = swiotlb_tbl_map_single(mem, hh::kDramBase, 1, 0, 0, SWIOTLB_DMA_TO_DEVICE);
    if (tlb == SWIOTLB_MAP_ERROR) break;
    all.push_back(tlb);
  }
  mem->search = saved;
  for (phys_addr_t tlb : all) {
    swiotlb_pool* pool = swiotlb_find_pool(mem, tlb);
    const uint32_t slot = slot_of(pool, tlb);
    const AreaState st = plan.at(pool->id).at(slot / pool->area_nslabs);
    if (st == AreaState::kFree || (st == AreaState::kFragmented && slot % 2 == 0)) {
      ASSERT_EQ(swiotlb_tbl_unmap_single(mem, tlb, 1, SWIOTLB_DMA_TO_DEVICE), 0);
    }
  }
  const uint64_t used = mem->stats.used_slots;
  mem->stats = swiotlb_stats{};
  mem->stats.used_slots = used;
}

TEST_F(Swiotlb, SearchOrderFollowsSeed004Diagram) {
  // 3 pools x 4 areas of one segment each. For every (pool, area) that alone
  // has room, the number of areas tried is its position in each search order:
  // pool-first A,B,..,C,D,.. (pool by pool) and area-first A,D,..,F,B,E,..
  constexpr unsigned kCpus = 4, kPools = 3, kCpu = 1;
  for (unsigned p = 0; p < kPools; p++) {
    for (unsigned a = 0; a < kCpus; a++) {
      for (swiotlb_search policy : {SWIOTLB_POOL_FIRST, SWIOTLB_AREA_FIRST}) {
        hh::reset();
        hh::set_cpu(0, kCpus);
        swiotlb_config c = config(4 * kSeg * kSlot, kPools - 1, kCpus);
        c.search = policy;
        ASSERT_EQ(swiotlb_init(mem_, &c), 0);
        std::vector<std::vector<AreaState>> plan(kPools, std::vector<AreaState>(kCpus, AreaState::kFragmented));
        plan[p][a] = AreaState::kFree;
        build_state(mem_, plan);
        hh::set_cpu(kCpu, kCpus);
        const phys_addr_t tlb = swiotlb_tbl_map_single(mem_, hh::kDramBase, 3000, 0, 0, SWIOTLB_DMA_TO_DEVICE);
        ASSERT_NE(tlb, SWIOTLB_MAP_ERROR);
        swiotlb_pool* pool = swiotlb_find_pool(mem_, tlb);
        EXPECT_EQ(pool->id, p);
        EXPECT_EQ(slot_of(pool, tlb) / pool->area_nslabs, a);
        const unsigned dist = (a - kCpu) & (kCpus - 1);
        const uint64_t want_tried = policy == SWIOTLB_POOL_FIRST ? p * kCpus + dist + 1 : dist * kPools + p + 1;
        EXPECT_EQ(mem_->stats.areas_tried, want_tried) << "pool " << p << " area " << a << " policy " << policy;
        // Each fragmented area costs a full scan of its 128 slots.
        EXPECT_EQ(mem_->stats.slots_scanned / kSeg, want_tried - 1);
        EXPECT_EQ(mem_->stats.pools_tried,
                  policy == SWIOTLB_POOL_FIRST ? p + 1 : (dist == 0 ? p + 1 : kPools));
        swiotlb_destroy(mem_);
      }
    }
  }
}

TEST_F(Swiotlb, AreaFirstStaysInTheCpusAreaWhenPool0IsBusy) {
  // CPU 1's area in pool 0 is full (fragmented), as are areas 0 and 2 (other
  // CPUs busy); area 3 of pool 0 and pools 1-2 are free.
  constexpr unsigned kCpus = 4;
  struct Result {
    unsigned pool, area;
    uint64_t scanned, tried, cycles, scanned_100;
  };
  auto run = [&](swiotlb_search policy) {
    hh::reset();
    hh::set_cpu(0, kCpus);
    swiotlb_config c = config(4 * kSeg * kSlot, 2, kCpus);
    c.search = policy;
    EXPECT_EQ(swiotlb_init(mem_, &c), 0);
    using S = AreaState;
    build_state(mem_, {{S::kFragmented, S::kFragmented, S::kFragmented, S::kFree},
                       {S::kFree, S::kFree, S::kFree, S::kFree},
                       {S::kFree, S::kFree, S::kFree, S::kFree}});
    hh::set_cpu(1, kCpus);
    const uint64_t cycles0 = hh::cycles();
    const uint64_t scans0 = hh::cost_count("slot_scan");
    const phys_addr_t tlb = swiotlb_tbl_map_single(mem_, hh::kDramBase, 3000, 0, 0, SWIOTLB_DMA_TO_DEVICE);
    EXPECT_NE(tlb, SWIOTLB_MAP_ERROR);
    swiotlb_pool* pool = swiotlb_find_pool(mem_, tlb);
    Result r{pool->id, slot_of(pool, tlb) / pool->area_nslabs, mem_->stats.slots_scanned,
             mem_->stats.areas_tried, hh::cycles() - cycles0, 0};
    // A burst of 100 more two-slot maps from the same CPU.
    for (int i = 0; i < 100; i++)
      EXPECT_NE(swiotlb_tbl_map_single(mem_, hh::kDramBase, 3000, 0, 0, SWIOTLB_DMA_TO_DEVICE), SWIOTLB_MAP_ERROR);
    r.scanned_100 = mem_->stats.slots_scanned - r.scanned;
    EXPECT_EQ(hh::cost_count("slot_scan") - scans0, mem_->stats.slots_scanned);
    swiotlb_destroy(mem_);
    return r;
  };
  const Result pf = run(SWIOTLB_POOL_FIRST);
  const Result af = run(SWIOTLB_AREA_FIRST);
  // Pool-first walks pool 0's areas 1 and 2 and lands in CPU 3's area.
  EXPECT_EQ(pf.pool, 0u);
  EXPECT_EQ(pf.area, 3u);
  EXPECT_EQ(pf.tried, 3u);
  EXPECT_EQ(pf.scanned, 2 * kSeg + 1);
  // Area-first moves to pool 1 and keeps to CPU 1's own area.
  EXPECT_EQ(af.pool, 1u);
  EXPECT_EQ(af.area, 1u);
  EXPECT_EQ(af.tried, 2u);
  EXPECT_EQ(af.scanned, kSeg + 1);
  EXPECT_LT(af.cycles, pf.cycles);
  // Over the burst pool-first keeps rescanning the busy area 2 as well.
  EXPECT_LT(af.scanned_100, pf.scanned_100);
}

TEST_F(Swiotlb, AreaFirstSkipsPoolsWithFewerAreas) {
  // Pool 0 has 4 areas, pool 1 only 1. From CPU 2, pool 1's single area is
  // tried in the first round only, never again.
  hh::set_cpu(0, 4);
  swiotlb_config c = config(4 * kSeg * kSlot, 1, 4);
  c.extra_pool_size = kSeg * kSlot;
  c.search = SWIOTLB_AREA_FIRST;
  ASSERT_EQ(swiotlb_init(mem_, &c), 0);
  ASSERT_EQ(pools_of(*mem_)[1]->nareas, 1u);
  using S = AreaState;
  build_state(mem_, {{S::kFragmented, S::kFree, S::kFragmented, S::kFragmented}, {S::kFragmented}});
  hh::set_cpu(2, 4);
  const phys_addr_t tlb = swiotlb_tbl_map_single(mem_, hh::kDramBase, 3000, 0, 0, SWIOTLB_DMA_TO_DEVICE);
  ASSERT_NE(tlb, SWIOTLB_MAP_ERROR);
  swiotlb_pool* pool = swiotlb_find_pool(mem_, tlb);
  EXPECT_EQ(pool->id, 0u);
  EXPECT_EQ(slot_of(pool, tlb) / pool->area_nslabs, 1u);
  // (p0,a2) (p1,a0) (p0,a3) (p0,a0) (p0,a1): pool 1 is not tried again.
  EXPECT_EQ(mem_->stats.areas_tried, 5u);
}

// ---- Dynamic pools ----

TEST_F(Swiotlb, FullWithoutDynamicFails) {
  const swiotlb_config c = config(2 * kSeg * kSlot, 0, 1);
  ASSERT_EQ(swiotlb_init(mem_, &c), 0);
  const phys_addr_t src = source(SWIOTLB_MAX_ALLOC);
  for (int i = 0; i < 2; i++)
    ASSERT_NE(swiotlb_tbl_map_single(mem_, src, SWIOTLB_MAX_ALLOC, 0, 0, SWIOTLB_DMA_TO_DEVICE), SWIOTLB_MAP_ERROR);
  EXPECT_EQ(swiotlb_tbl_map_single(mem_, src, 1, 0, 0, SWIOTLB_DMA_TO_DEVICE), SWIOTLB_MAP_ERROR);
  EXPECT_EQ(mem_->last_error, SWIOTLB_ERR_FULL);
  EXPECT_EQ(mem_->stats.failures_full, 1u);
  EXPECT_EQ(mem_->stats.transient_pools, 0u);
  EXPECT_EQ(mem_->grow_pending, 0u);
  EXPECT_EQ(mem_->npools, 1u);
}

TEST_F(Swiotlb, DynamicTransientPoolThenGrowth) {
  swiotlb_config c = config(2 * kSeg * kSlot, 0, 1);
  c.dynamic = true;
  ASSERT_EQ(swiotlb_init(mem_, &c), 0);
  const phys_addr_t src = source(SWIOTLB_MAX_ALLOC + 8192, 21);
  std::vector<phys_addr_t> full;
  for (int i = 0; i < 2; i++) {
    full.push_back(swiotlb_tbl_map_single(mem_, src, SWIOTLB_MAX_ALLOC, 0, 0, SWIOTLB_DMA_TO_DEVICE));
    ASSERT_NE(full.back(), SWIOTLB_MAP_ERROR);
  }
  const uint64_t bytes_full = hh::dma_bytes_in_use();

  // Every pool full: a transient pool sized to the request serves it, and
  // growth becomes pending. The device keeps bits 0-11 and bit 11 is set, so
  // the transient pool's slot must be placed accordingly.
  const phys_addr_t orig = src + 0xA34;
  const phys_addr_t t = swiotlb_tbl_map_single_mask(mem_, orig, 5000, 0, 0, 0xFFF, SWIOTLB_DMA_TO_DEVICE);
  ASSERT_NE(t, SWIOTLB_MAP_ERROR);
  EXPECT_EQ(t & 0xFFF, 0xA34u);
  swiotlb_pool* tp = swiotlb_find_pool(mem_, t);
  ASSERT_NE(tp, nullptr);
  EXPECT_TRUE(tp->transient);
  EXPECT_EQ(tp->nslabs, 3u);  // 0x234 + 5000 bytes
  EXPECT_EQ(std::memcmp(va(t), va(orig), 5000), 0);
  EXPECT_EQ(mem_->stats.transient_pools, 1u);
  EXPECT_EQ(mem_->stats.transient_live, 1u);
  EXPECT_EQ(mem_->grow_pending, 1u);
  EXPECT_EQ(mem_->npools, 1u);
  EXPECT_GT(hh::dma_bytes_in_use(), bytes_full);

  // The next map adds the pool first (the background work), then uses it.
  const phys_addr_t g = swiotlb_tbl_map_single(mem_, src, 4096, 0, 0, SWIOTLB_DMA_TO_DEVICE);
  ASSERT_NE(g, SWIOTLB_MAP_ERROR);
  EXPECT_EQ(mem_->stats.pools_grown, 1u);
  EXPECT_EQ(mem_->npools, 2u);
  EXPECT_EQ(mem_->grow_pending, 0u);
  swiotlb_pool* gp = swiotlb_find_pool(mem_, g);
  ASSERT_NE(gp, nullptr);
  EXPECT_FALSE(gp->transient);
  EXPECT_EQ(gp->id, 1u);
  EXPECT_EQ(gp->nslabs, mem_->pools->nslabs);
  EXPECT_EQ(mem_->stats.transient_pools, 1u);

  // Unmapping the transient mapping frees its pool.
  const uint64_t before = hh::dma_bytes_in_use();
  va(t)[0] = 0x42;
  ASSERT_EQ(swiotlb_tbl_unmap_single(mem_, t, 5000, SWIOTLB_DMA_BIDIRECTIONAL), 0);
  EXPECT_EQ(va(orig)[0], 0x42);
  EXPECT_EQ(mem_->stats.transient_live, 0u);
  EXPECT_LT(hh::dma_bytes_in_use(), before);
  EXPECT_EQ(swiotlb_find_pool(mem_, t), nullptr);
  EXPECT_EQ(swiotlb_tbl_unmap_single(mem_, t, 5000, SWIOTLB_DMA_TO_DEVICE), -1);

  // An explicit grow adds a third pool.
  ASSERT_EQ(swiotlb_grow(mem_), 0);
  EXPECT_EQ(mem_->npools, 3u);
  EXPECT_EQ(mem_->stats.pools_grown, 2u);
  EXPECT_EQ(pools_of(*mem_)[2]->id, 2u);

  for (phys_addr_t f : full) ASSERT_EQ(swiotlb_tbl_unmap_single(mem_, f, SWIOTLB_MAX_ALLOC, SWIOTLB_DMA_TO_DEVICE), 0);
  ASSERT_EQ(swiotlb_tbl_unmap_single(mem_, g, 4096, SWIOTLB_DMA_TO_DEVICE), 0);
  for (auto* p : pools_of(*mem_)) EXPECT_EQ(swiotlb_pool_used(p), 0u);
}

TEST_F(Swiotlb, DynamicGrowthKeepsServingUnderPressure) {
  hh::set_cpu(0, 2);
  swiotlb_config c = config(2 * kSeg * kSlot, 0, 2);
  c.dynamic = true;
  ASSERT_EQ(swiotlb_init(mem_, &c), 0);
  std::vector<phys_addr_t> live;
  for (int i = 0; i < 40; i++) {
    hh::set_cpu(static_cast<unsigned>(i % 2), 2);
    const phys_addr_t tlb = swiotlb_tbl_map_single(mem_, hh::kDramBase, 64 << 10, 0, 0, SWIOTLB_DMA_TO_DEVICE);
    ASSERT_NE(tlb, SWIOTLB_MAP_ERROR) << i;
    live.push_back(tlb);
  }
  // 40 x 64 KiB from 512 KiB pools (8 each): whenever every pool is full a
  // transient pool serves the map and the next map grows, so 8 + 1 + 8 + 1 ...
  EXPECT_EQ(mem_->npools, 5u);
  EXPECT_EQ(mem_->stats.transient_pools, 4u);
  EXPECT_EQ(mem_->stats.pools_grown, mem_->npools - 1);
  EXPECT_EQ(mem_->stats.failures, 0u);
  for (phys_addr_t tlb : live) ASSERT_EQ(swiotlb_tbl_unmap_single(mem_, tlb, 64 << 10, SWIOTLB_DMA_TO_DEVICE), 0);
  EXPECT_EQ(mem_->stats.transient_live, 0u);
  EXPECT_EQ(mem_->stats.used_slots, 0u);
}

// ---- Errors ----

TEST_F(Swiotlb, ErrorsAreReturnedNotFatal) {
  const swiotlb_config c = config(1 << 20, 0, 1);
  ASSERT_EQ(swiotlb_init(mem_, &c), 0);
  const phys_addr_t src = source(1 << 20);

  // Larger than a segment.
  EXPECT_EQ(swiotlb_tbl_map_single(mem_, src, SWIOTLB_MAX_ALLOC + 1, 0, 0, SWIOTLB_DMA_TO_DEVICE),
            SWIOTLB_MAP_ERROR);
  EXPECT_EQ(mem_->last_error, SWIOTLB_ERR_TOO_BIG);
  EXPECT_EQ(swiotlb_tbl_map_single(mem_, src, 4096, 1 << 20, 0, SWIOTLB_DMA_TO_DEVICE), SWIOTLB_MAP_ERROR);
  EXPECT_EQ(mem_->last_error, SWIOTLB_ERR_TOO_BIG);
  // Exactly a segment fits; with a min_align offset it no longer does.
  phys_addr_t tlb = swiotlb_tbl_map_single(mem_, src, SWIOTLB_MAX_ALLOC, 0, 0, SWIOTLB_DMA_TO_DEVICE);
  ASSERT_NE(tlb, SWIOTLB_MAP_ERROR);
  ASSERT_EQ(swiotlb_tbl_unmap_single(mem_, tlb, SWIOTLB_MAX_ALLOC, SWIOTLB_DMA_TO_DEVICE), 0);
  EXPECT_EQ(swiotlb_tbl_map_single_mask(mem_, src + 0x10, SWIOTLB_MAX_ALLOC, 0, 0, 0xFFF, SWIOTLB_DMA_TO_DEVICE),
            SWIOTLB_MAP_ERROR);
  EXPECT_EQ(mem_->last_error, SWIOTLB_ERR_TOO_BIG);
  // swiotlb_max_mapping_size always fits, whatever the offset.
  EXPECT_EQ(swiotlb_max_mapping_size(0), SWIOTLB_MAX_ALLOC);
  EXPECT_EQ(swiotlb_max_mapping_size(0xFFF), SWIOTLB_MAX_ALLOC - 4096);
  tlb = swiotlb_tbl_map_single_mask(mem_, src + 0xFFF, swiotlb_max_mapping_size(0xFFF), 0, 0, 0xFFF,
                                    SWIOTLB_DMA_TO_DEVICE);
  ASSERT_NE(tlb, SWIOTLB_MAP_ERROR);
  ASSERT_EQ(swiotlb_tbl_unmap_single(mem_, tlb, swiotlb_max_mapping_size(0xFFF), SWIOTLB_DMA_TO_DEVICE), 0);

  // Invalid arguments.
  EXPECT_EQ(swiotlb_tbl_map_single(mem_, src, 0, 0, 0, SWIOTLB_DMA_TO_DEVICE), SWIOTLB_MAP_ERROR);
  EXPECT_EQ(mem_->last_error, SWIOTLB_ERR_INVALID);
  EXPECT_EQ(swiotlb_tbl_map_single(mem_, src, 4096, 100, 0, SWIOTLB_DMA_TO_DEVICE), SWIOTLB_MAP_ERROR);
  EXPECT_EQ(swiotlb_tbl_map_single(mem_, src, 4096, 0, 0x1000, SWIOTLB_DMA_TO_DEVICE), SWIOTLB_MAP_ERROR);
  EXPECT_EQ(swiotlb_tbl_map_single_mask(mem_, src, 4096, 0, 0, 0x10, SWIOTLB_DMA_TO_DEVICE), SWIOTLB_MAP_ERROR);
  EXPECT_EQ(swiotlb_tbl_map_single(mem_, 0x1000, 64, 0, 0, SWIOTLB_DMA_TO_DEVICE), SWIOTLB_MAP_ERROR);
  EXPECT_EQ(swiotlb_tbl_map_single(mem_, hh::kDramBase + hh::kDramSize - 10, 64, 0, 0, SWIOTLB_DMA_TO_DEVICE),
            SWIOTLB_MAP_ERROR);
  EXPECT_EQ(swiotlb_tbl_map_single(mem_, src, 64, 0, 0, SWIOTLB_DMA_NONE), SWIOTLB_MAP_ERROR);
  EXPECT_EQ(mem_->last_error, SWIOTLB_ERR_INVALID);
  EXPECT_EQ(mem_->stats.failures_invalid, 7u);
  EXPECT_EQ(mem_->stats.failures_too_big, 3u);
  EXPECT_EQ(mem_->stats.failures, 10u);

  // Unmaps of what is not a live mapping leave the pool untouched.
  tlb = swiotlb_tbl_map_single(mem_, src, 10000, 0, 0, SWIOTLB_DMA_TO_DEVICE);
  ASSERT_NE(tlb, SWIOTLB_MAP_ERROR);
  const uint32_t used = swiotlb_pool_used(mem_->pools);
  EXPECT_EQ(swiotlb_tbl_unmap_single(mem_, src, 10, SWIOTLB_DMA_TO_DEVICE), -1);  // not a bounce address
  EXPECT_EQ(swiotlb_tbl_unmap_single(mem_, tlb + 4096, 10, SWIOTLB_DMA_TO_DEVICE), -1);  // inside a mapping
  EXPECT_EQ(swiotlb_tbl_unmap_single(mem_, mem_->pools->end - kSlot, 10, SWIOTLB_DMA_TO_DEVICE), -1);  // free
  EXPECT_EQ(mem_->last_error, SWIOTLB_ERR_NOT_MAPPED);
  EXPECT_EQ(swiotlb_pool_used(mem_->pools), used);
  EXPECT_EQ(swiotlb_tbl_unmap_single(mem_, tlb, 10000, SWIOTLB_DMA_TO_DEVICE), 0);
  EXPECT_EQ(swiotlb_tbl_unmap_single(mem_, tlb, 10000, SWIOTLB_DMA_TO_DEVICE), -1);  // twice
  EXPECT_EQ(mem_->stats.bad_unmaps, 4u);
  EXPECT_EQ(swiotlb_pool_used(mem_->pools), 0u);
  EXPECT_FALSE(swiotlb_is_bounce(mem_, src));
  EXPECT_TRUE(swiotlb_is_bounce(mem_, mem_->pools->start));
}

TEST_F(Swiotlb, SmallestMappingAndPageAlignment) {
  const swiotlb_config c = config(1 << 20, 0, 1);
  ASSERT_EQ(swiotlb_init(mem_, &c), 0);
  const phys_addr_t src = source(16384, 2);
  // 1 byte takes one slot, at the area index.
  const phys_addr_t one = swiotlb_tbl_map_single(mem_, src + 3, 1, 0, 0, SWIOTLB_DMA_TO_DEVICE);
  ASSERT_NE(one, SWIOTLB_MAP_ERROR);
  EXPECT_EQ(one, mem_->pools->start);
  EXPECT_EQ(*va(one), *va(src + 3));
  EXPECT_EQ(mem_->pools->areas[0].index, 1u);
  EXPECT_EQ(mem_->pools->slots[0].list, 0u);
  EXPECT_EQ(mem_->pools->slots[1].list, kSeg - 1);
  // Under a page there is no page alignment: slots 1-2, from the area index.
  const phys_addr_t small = swiotlb_tbl_map_single(mem_, src, 3000, 0, 0, SWIOTLB_DMA_TO_DEVICE);
  EXPECT_EQ(small, mem_->pools->start + 1 * kSlot);
  // A page or more with no alignment asked is page-aligned: slot 3 is
  // examined and skipped, slot 4 taken.
  const phys_addr_t page = swiotlb_tbl_map_single(mem_, src, 4096, 0, 0, SWIOTLB_DMA_TO_DEVICE);
  ASSERT_NE(page, SWIOTLB_MAP_ERROR);
  EXPECT_EQ(page, mem_->pools->start + 4 * kSlot);
  EXPECT_EQ(mem_->stats.slots_scanned, 1u + 1u + 2u);
  EXPECT_EQ(hh::cost_count("slot_scan"), 4u);
  ASSERT_EQ(swiotlb_tbl_unmap_single(mem_, one, 1, SWIOTLB_DMA_TO_DEVICE), 0);
  ASSERT_EQ(swiotlb_tbl_unmap_single(mem_, page, 4096, SWIOTLB_DMA_TO_DEVICE), 0);
  ASSERT_EQ(swiotlb_tbl_unmap_single(mem_, small, 3000, SWIOTLB_DMA_TO_DEVICE), 0);
  for (uint32_t s = 0; s < mem_->pools->nslabs; s++) ASSERT_EQ(mem_->pools->slots[s].list, kSeg - s % kSeg);
}

}  // namespace

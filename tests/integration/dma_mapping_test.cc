// The IOMMU core and the DMA API (sw/iommu/iommu.h, dma_iommu.h) on the
// platform: page tables written by iommu_map/map_sg checked by DMA through
// the SMMU model, strict unmap faulting at once, lazy unmap's stale window
// (platform.smmu.stale_check) closing at the flush, no IOVA reused before its
// flush, the walk-flush policies' TLBI counts (seed 000), and map_sg's call
// counts under both policies (seed 002).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "dma/dma_registers.h"
#include "drivers/dma/dma_engine.h"
#include "hal/hal.h"
#include "iommu/dma_iommu.h"
#include "iommu/iommu.h"
#include "lib/spinlock.h"
#include "platform_fixture.h"
#include "drivers/smmu/arm_smmu.h"
#include "drivers/smmu/smmu_hw.h"

namespace smmu_vp::test {
namespace {

constexpr uint64_t kSz4K = 4096;
constexpr uint64_t kSz2M = 2ull << 20;

// ---- What every app here shares: the SMMU, dma0 and helpers.

smmu_device g_smmu;
dma_engine g_dma;
uint32_t g_sid;

int bring_up(unsigned tlbi_policy = SMMU_TLBI_PER_GRANULE) {
  hal_device_info info;
  if (hal_device_find("dma0", &info) != 0) return 1;
  g_sid = info.stream_id;
  if (smmu_probe(&g_smmu, hal_smmu().base) != 0 || smmu_reset(&g_smmu) != 0) return 1;
  smmu_policy want{};
  want.tlbi = static_cast<smmu_tlbi_policy>(tlbi_policy);
  smmu_set_policy(&g_smmu, want);
  return dma_engine_probe(&g_dma, "dma0");
}

uint32_t dma_copy(uint64_t src, uint64_t dst, uint32_t len) {
  dma_engine_start(&g_dma, 0, src, dst, len, DMA_COMPLETE_POLL);
  dma_engine_wait_poll(&g_dma, 0);
  return dma_engine_ack(&g_dma, 0);
}

uint8_t* dram(phys_addr_t pa) { return static_cast<uint8_t*>(hal_phys_to_virt(pa)); }

phys_addr_t alloc_buffer(size_t size, size_t align) {
  phys_addr_t pa = 0;
  return hal_dma_alloc(size, align, &pa) ? pa : 0;
}

void fill(phys_addr_t pa, size_t n, uint8_t seed) {
  uint8_t* p = dram(pa);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 12));
}

bool same(phys_addr_t a, phys_addr_t b, size_t n) { return std::memcmp(dram(a), dram(b), n) == 0; }

// ---- iommu_map: pages and 2 MiB blocks carry the right data.

constexpr uint64_t kSrcIova = 0x4000'0000;       // 2 MiB-aligned: a block
constexpr uint64_t kDstIova = 0x8000'0000 + kSz4K;  // offset from the buffer's 2 MiB alignment: pages

iommu_domain g_dom;
struct {
  int map_src = -1, map_dst = -1;
  uint64_t src_map_pages_calls = 0, dst_map_pages_calls = 0;
  phys_addr_t src_pa = 0, dst_pa = 0;
  bool walk_ok = false;
  uint32_t copy_err[4] = {99, 99, 99, 99};
  bool copy_ok[4] = {};
  size_t unmapped = 0;
  uint32_t after_unmap = 99;
  size_t pgsize_block = 0, count_block = 0, pgsize_pages = 0, count_pages = 0;
} m;

int map_main(void) {
  if (bring_up()) return 1;
  if (iommu_domain_init(&g_dom, &g_smmu, 1, IO_PGTABLE_SZ_4K, nullptr) != 0) return 2;
  if (iommu_attach_device(&g_dom, g_sid) != 0) return 3;
  m.src_pa = alloc_buffer(kSz2M, kSz2M);
  m.dst_pa = alloc_buffer(kSz2M, kSz2M);
  if (!m.src_pa || !m.dst_pa) return 4;
  fill(m.src_pa, kSz2M, 3);
  std::memset(dram(m.dst_pa), 0, kSz2M);

  m.pgsize_block = iommu_pgsize(&g_dom, kSrcIova, m.src_pa, kSz2M, &m.count_block);
  m.pgsize_pages = iommu_pgsize(&g_dom, kDstIova, m.dst_pa, kSz2M, &m.count_pages);
  uint64_t before = g_dom.stats.map_pages_calls;
  m.map_src = iommu_map(&g_dom, kSrcIova, m.src_pa, kSz2M, IOMMU_READ | IOMMU_CACHE);
  m.src_map_pages_calls = g_dom.stats.map_pages_calls - before;
  before = g_dom.stats.map_pages_calls;
  m.map_dst = iommu_map(&g_dom, kDstIova, m.dst_pa, kSz2M, IOMMU_WRITE | IOMMU_CACHE);
  m.dst_map_pages_calls = g_dom.stats.map_pages_calls - before;
  m.walk_ok = iommu_iova_to_phys(&g_dom, kSrcIova + 0x12345) == m.src_pa + 0x12345 &&
              iommu_iova_to_phys(&g_dom, kDstIova + kSz2M - 1) == m.dst_pa + kSz2M - 1;

  // Chunks at the start, middle and end of the block, and one straddling
  // two destination pages from an unaligned source offset.
  const uint64_t src_off[4] = {0, 7 * kSz4K, kSz2M - kSz4K, 0x10'0800};
  const uint64_t dst_off[4] = {0, kSz4K, 2 * kSz4K, 0x1F'0800};
  for (int i = 0; i < 4; ++i) {
    m.copy_err[i] = dma_copy(kSrcIova + src_off[i], kDstIova + dst_off[i], kSz4K);
    m.copy_ok[i] = same(m.src_pa + src_off[i], m.dst_pa + dst_off[i], kSz4K);
  }
  m.unmapped = iommu_unmap(&g_dom, kSrcIova, kSz2M);
  m.after_unmap = dma_copy(kSrcIova, kDstIova, 64);
  return 0;
}
const hal_app map_app = {"dma_mapping_map", "iommu_map pages and blocks", map_main, nullptr};

TEST(DmaMappingCore, MappedPagesAndBlocksCopyTheRightData) {
  const TestRun t = run(scenario({{{"app", "dma_mapping_map"}, {"cores", {0}}}}), {&map_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(m.pgsize_block, kSz2M);
  EXPECT_EQ(m.count_block, 1u);
  EXPECT_EQ(m.pgsize_pages, kSz4K);
  EXPECT_EQ(m.count_pages, 512u);  // the whole run: no larger size ever fits
  EXPECT_EQ(m.map_src, 0);
  EXPECT_EQ(m.map_dst, 0);
  EXPECT_EQ(m.src_map_pages_calls, 1u);  // one block
  EXPECT_EQ(m.dst_map_pages_calls, 2u);  // 511 pages to the end of a leaf table, then 1
  EXPECT_TRUE(m.walk_ok);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(m.copy_err[i], DMA_ERR_NONE) << i;
    EXPECT_TRUE(m.copy_ok[i]) << i;
  }
  EXPECT_EQ(m.unmapped, kSz2M);
  EXPECT_EQ(m.after_unmap, DMA_ERR_READ);  // the block's TLB entry went with the sync
  EXPECT_EQ(g_dom.stats.iotlb_syncs, 1u);
  EXPECT_EQ(g_dom.stats.tlbi_commands, 1u);  // one TLBI for the one 2 MiB leaf
}

// ---- map_sg: both policies write the same tables; batched makes far fewer
// indirect calls. Then DMA through each domain copies the list's data.

constexpr uint64_t kSgIova = 0x4000'0000;
constexpr uint64_t kSgDstIova = 0x9000'0000;
constexpr unsigned kSgScattered = 24;
constexpr unsigned kSgEnts = 1 + kSgScattered + 2;

iommu_domain g_dom_a, g_dom_b;
iommu_sg g_sg[kSgEnts];
struct SgOutcome {
  size_t mapped = 0;
  uint64_t indirect = 0, ptes = 0, tables = 0, runs = 0;
};
struct {
  SgOutcome per_element, batched;
  size_t total = 0;
  unsigned translation_mismatches = 0, translations_checked = 0;
  unsigned copy_errors = 0, copy_mismatches = 0;
} s;

// The list: a 2 MiB-aligned 2 MiB element (a block in both policies), 24
// scattered pages (every other page), then two pages contiguous with each
// other (the batched pass merges them into one run of 2 pages: the same
// leaves as mapping them one by one).
int build_sg_list() {
  // The scattered pages first: the block must not follow the first of them
  // in memory (the batched pass would merge the two).
  const phys_addr_t pages = alloc_buffer(2 * kSgScattered * kSz4K, kSz4K);
  const phys_addr_t block = alloc_buffer(kSz2M, kSz2M);
  const phys_addr_t pair = alloc_buffer(2 * kSz4K, kSz4K);
  if (!block || !pages || !pair) return 1;
  g_sg[0] = {block, kSz2M};
  for (unsigned i = 0; i < kSgScattered; ++i) g_sg[1 + i] = {pages + 2 * i * kSz4K, kSz4K};
  g_sg[kSgEnts - 2] = {pair, kSz4K};
  g_sg[kSgEnts - 1] = {pair + kSz4K, kSz4K};
  for (unsigned i = 0; i < kSgEnts; ++i) fill(g_sg[i].pa, g_sg[i].len, static_cast<uint8_t>(11 * i));
  return 0;
}

int map_sg_into(iommu_domain* dom, uint16_t asid, iommu_map_sg_policy policy, SgOutcome* out) {
  iommu_domain_policy p{};
  p.map_sg = policy;
  if (iommu_domain_init(dom, &g_smmu, asid, IO_PGTABLE_SZ_4K, &p) != 0) return 1;
  const uint64_t indirect = dom->stats.indirect_calls;
  out->mapped = iommu_map_sg(dom, kSgIova, g_sg, kSgEnts, IOMMU_READ | IOMMU_CACHE);
  out->indirect = dom->stats.indirect_calls - indirect;
  out->ptes = dom->pgt.stats.ptes_written;
  out->tables = dom->pgt.stats.tables_allocated;
  out->runs = dom->stats.sg_runs;
  return 0;
}

// DMA every element through `dom` into a scratch buffer mapped in it, and
// compare with the element's memory.
void copy_through(iommu_domain* dom, phys_addr_t scratch) {
  if (iommu_attach_device(dom, g_sid) != 0 ||
      iommu_map(dom, kSgDstIova, scratch, kSz2M, IOMMU_WRITE | IOMMU_CACHE) != 0) {
    ++s.copy_errors;
    return;
  }
  uint64_t iova = kSgIova;
  for (unsigned i = 0; i < kSgEnts; ++i) {
    const uint32_t len = static_cast<uint32_t>(g_sg[i].len < kSz4K * 4 ? g_sg[i].len : kSz4K * 4);
    std::memset(dram(scratch), 0, len);
    s.copy_errors += dma_copy(iova, kSgDstIova, len) != DMA_ERR_NONE;
    s.copy_mismatches += !same(scratch, g_sg[i].pa, len);
    iova += g_sg[i].len;
  }
}

int map_sg_main(void) {
  if (bring_up() || build_sg_list()) return 1;
  if (map_sg_into(&g_dom_a, 1, IOMMU_MAP_SG_PER_ELEMENT, &s.per_element)) return 2;
  if (map_sg_into(&g_dom_b, 2, IOMMU_MAP_SG_BATCHED, &s.batched)) return 3;
  for (unsigned i = 0; i < kSgEnts; ++i) s.total += g_sg[i].len;
  // Every 4 KiB of the IOVA span translates the same way in both domains,
  // and to the right element.
  uint64_t iova = kSgIova;
  for (unsigned i = 0; i < kSgEnts; ++i) {
    for (uint64_t off = 0; off < g_sg[i].len; off += kSz4K, ++s.translations_checked) {
      const phys_addr_t a = io_pgtable_iova_to_phys(&g_dom_a.pgt, iova + off);
      const phys_addr_t b = io_pgtable_iova_to_phys(&g_dom_b.pgt, iova + off);
      s.translation_mismatches += a != b || a != g_sg[i].pa + off;
    }
    iova += g_sg[i].len;
  }
  const phys_addr_t scratch = alloc_buffer(kSz2M, kSz2M);
  if (!scratch) return 4;
  copy_through(&g_dom_a, scratch);
  copy_through(&g_dom_b, scratch);
  return 0;
}
const hal_app map_sg_app = {"dma_mapping_map_sg", "map_sg under both policies", map_sg_main, nullptr};

TEST(DmaMappingCore, MapSgPoliciesWriteTheSameTablesWithFewerIndirectCalls) {
  const TestRun t = run(scenario({{{"app", "dma_mapping_map_sg"}, {"cores", {0}}}}), {&map_sg_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(s.per_element.mapped, s.total);
  EXPECT_EQ(s.batched.mapped, s.total);
  EXPECT_EQ(s.translation_mismatches, 0u);
  EXPECT_EQ(s.translations_checked, 512u + kSgScattered + 2u);
  // Same page tables: the same descriptors written into the same tables.
  EXPECT_EQ(s.per_element.ptes, s.batched.ptes);
  EXPECT_EQ(s.per_element.tables, s.batched.tables);
  // Per element: core -> driver -> io-pgtable for each element's one chunk.
  EXPECT_EQ(s.per_element.indirect, 2u * kSgEnts);
  // Batched: one descent for the whole list; the last two pages merge.
  EXPECT_EQ(s.batched.indirect, 2u);
  EXPECT_EQ(s.batched.runs, kSgEnts - 1u);
  EXPECT_EQ(s.copy_errors, 0u);
  EXPECT_EQ(s.copy_mismatches, 0u);
}

// ---- Walk flush on removing whole tables (seed 000): a 2 MiB-aligned 4 MiB
// range mapped as 4 KiB pages is unmapped 2 MiB at a time, each a leaf table
// leaving the tree.

constexpr uint64_t kWalkIova = 0x4000'0000;
constexpr uint64_t kWalkSize = 4ull << 20;

struct {
  int map = -1;
  size_t unmapped = 0;
  uint64_t tables_freed = 0, syncs = 0;
  uint32_t warm = 99, after = 99;
} w;

int walk_flush_main(void) {
  if (bring_up()) return 1;
  iommu_domain_policy p{};
  p.walk_flush = static_cast<iommu_walk_flush_policy>(hal_param("walk_flush"));
  p.sync_always = hal_param("sync_always") != 0;
  if (iommu_domain_init(&g_dom, &g_smmu, 1, IO_PGTABLE_SZ_4K, &p) != 0 || iommu_attach_device(&g_dom, g_sid) != 0)
    return 2;
  // One page past a 2 MiB boundary: iova and pa never share a 2 MiB offset,
  // so every leaf is a 4 KiB page.
  const phys_addr_t buf = alloc_buffer(kWalkSize + 2 * kSz4K, kSz2M);
  if (!buf) return 3;
  w.map = iommu_map(&g_dom, kWalkIova, buf + kSz4K, kWalkSize, IOMMU_READ | IOMMU_WRITE | IOMMU_CACHE);
  w.warm = dma_copy(kWalkIova + kSz2M + 5 * kSz4K, kWalkIova, 256);  // walks into the walk cache
  const uint64_t freed = g_dom.pgt.stats.tables_freed;
  const uint64_t syncs = g_smmu.stats.syncs;
  w.unmapped = iommu_unmap(&g_dom, kWalkIova, kWalkSize);
  w.syncs = g_smmu.stats.syncs - syncs;
  w.tables_freed = g_dom.pgt.stats.tables_freed - freed;
  w.after = dma_copy(kWalkIova + kSz2M + 5 * kSz4K, kWalkIova, 256);
  return 0;
}
const hal_param_decl walk_flush_params[] = {
    {"walk_flush", 0, "iommu_walk_flush_policy", 0, 0}, {"sync_always", 0, "iommu_domain_policy.sync_always", 0, 0}, {}};
const hal_app walk_flush_app = {"dma_mapping_walk_flush", "unmap whole leaf tables", walk_flush_main,
                                walk_flush_params};

TestRun run_walk_flush(iommu_walk_flush_policy policy, bool sync_always = false) {
  return run(scenario({{{"app", "dma_mapping_walk_flush"},
                        {"cores", {0}},
                        {"params", {{"walk_flush", static_cast<unsigned>(policy)}, {"sync_always", sync_always ? 1 : 0}}}}}),
             {&walk_flush_app});
}

void expect_walk_unmapped(const TestRun& t) {
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(w.map, 0);
  EXPECT_EQ(w.warm, DMA_ERR_NONE);
  EXPECT_EQ(w.unmapped, kWalkSize);
  EXPECT_EQ(w.tables_freed, 2u);
  EXPECT_EQ(g_dom.stats.walk_flushes, 2u);
  EXPECT_EQ(g_dom.stats.pages_gathered, 0u);  // the walk flush covers the leaves
  EXPECT_EQ(w.after, DMA_ERR_READ);           // no stale walk or leaf survived
}

TEST(DmaMappingWalkFlush, PerGranuleIssuesOneTlbiPerPage) {
  const TestRun t = run_walk_flush(IOMMU_WALK_FLUSH_VA);
  expect_walk_unmapped(t);
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_VA"), 1024u);
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_ASID"), 0u);
  EXPECT_EQ(g_dom.stats.tlbi_commands, 1024u);
}

TEST(DmaMappingWalkFlush, AsidWideIssuesOneTlbiPerTable) {
  const TestRun t = run_walk_flush(IOMMU_WALK_FLUSH_ASID);
  expect_walk_unmapped(t);
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_VA"), 0u);
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_ASID"), 2u);
  EXPECT_EQ(g_dom.stats.tlbi_commands, 2u);
  EXPECT_EQ(w.syncs, 2u);  // each flush's own; iotlb_sync has nothing gathered
}

// The SMMUv2 driver's iotlb_sync (seed 000): a TLBSYNC after the walk
// flushes even though they left nothing gathered: one CMD_SYNC more than the
// two flushes' own.
TEST(DmaMappingWalkFlush, SyncAlwaysAddsASyncWhenNothingWasGathered) {
  const TestRun t = run_walk_flush(IOMMU_WALK_FLUSH_ASID, true);
  expect_walk_unmapped(t);
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_ASID"), 2u);
  EXPECT_EQ(w.syncs, 3u);
  EXPECT_EQ(g_dom.stats.iotlb_syncs, 1u);
}

// ---- DMA API, strict: a DMA after dma_unmap faults and is reported.

iommu_dma_cookie g_cookie;
dma_dev g_dev;
struct {
  uint64_t src = DMA_MAPPING_ERROR, dst = DMA_MAPPING_ERROR, block = DMA_MAPPING_ERROR;
  uint32_t copy = 99, after_unmap = 99, block_copy = 99, block_after = 99;
  bool data_ok = false, block_ok = false;
  uint64_t f_translation = 0, block_tlbis = 0;
} st;

int strict_main(void) {
  if (bring_up(static_cast<unsigned>(hal_param("tlbi")))) return 1;
  if (iommu_domain_init(&g_dom, &g_smmu, 1, IO_PGTABLE_SZ_4K, nullptr) != 0) return 2;
  if (iommu_dma_cookie_init(&g_cookie, &g_dom, nullptr) != 0) return 3;
  if (dma_dev_init(&g_dev, &g_cookie, g_sid, DMA_BIT_MASK(64), nullptr) != 0) return 4;
  const phys_addr_t src = alloc_buffer(2 * kSz4K, kSz4K), dst = alloc_buffer(2 * kSz4K, kSz4K);
  const phys_addr_t block = alloc_buffer(kSz2M, kSz2M);
  if (!src || !dst || !block) return 5;
  fill(src, 2 * kSz4K, 5);
  fill(block, kSz2M, 9);
  st.src = dma_map_single(&g_dev, src + 0x80, 0x1000, DMA_TO_DEVICE);  // spans two pages
  st.dst = dma_map_single(&g_dev, dst, 2 * kSz4K, DMA_FROM_DEVICE);
  st.copy = dma_copy(st.src, st.dst, 0x1000);
  st.data_ok = same(src + 0x80, dst, 0x1000);
  dma_unmap_single(&g_dev, st.src, 0x1000, DMA_TO_DEVICE);
  st.after_unmap = dma_copy(st.src, st.dst, 64);

  // A 2 MiB buffer gets a size-aligned IOVA range, so a block; its unmap
  // syncs a gather of one 2 MiB leaf under the driver's TLBI policy.
  st.block = dma_map_page(&g_dev, block, kSz2M, DMA_BIDIRECTIONAL);
  st.block_copy = dma_copy(st.block + kSz2M - kSz4K, st.dst, kSz4K);
  st.block_ok = same(block + kSz2M - kSz4K, dst, kSz4K);
  const uint64_t tlbis = g_dom.stats.tlbi_commands;
  dma_unmap_page(&g_dev, st.block, kSz2M, DMA_BIDIRECTIONAL);
  st.block_tlbis = g_dom.stats.tlbi_commands - tlbis;
  st.block_after = dma_copy(st.block + kSz2M - kSz4K, st.dst, 64);
  smmu_handle_events(&g_smmu);
  st.f_translation = g_smmu.stats.events_by_id[SMMU_EVT_F_TRANSLATION];
  return 0;
}
const hal_param_decl strict_params[] = {{"tlbi", 0, "smmu_tlbi_policy", 0, 0}, {}};
const hal_app strict_app = {"dma_mapping_strict", "strict dma_unmap", strict_main, strict_params};

class DmaApiStrict : public ::testing::TestWithParam<unsigned> {};

TEST_P(DmaApiStrict, DmaAfterUnmapFaults) {
  const TestRun t = run(scenario({{{"app", "dma_mapping_strict"}, {"cores", {0}}, {"params", {{"tlbi", GetParam()}}}}}),
                        {&strict_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  ASSERT_NE(st.src, DMA_MAPPING_ERROR);
  ASSERT_NE(st.dst, DMA_MAPPING_ERROR);
  EXPECT_EQ(st.src & 0xFFF, 0x80u);  // the offset inside the page is kept
  EXPECT_LT(st.src, 1ull << 32);      // 32-bit space first for a 64-bit mask
  EXPECT_EQ(st.copy, DMA_ERR_NONE);
  EXPECT_TRUE(st.data_ok);
  EXPECT_EQ(st.after_unmap, DMA_ERR_READ);
  EXPECT_EQ(st.block & (kSz2M - 1), 0u);
  EXPECT_EQ(st.block_copy, DMA_ERR_NONE);
  EXPECT_TRUE(st.block_ok);
  EXPECT_EQ(st.block_tlbis, 1u);  // per 2 MiB leaf, or one range command with TTL 2
  EXPECT_EQ(st.block_after, DMA_ERR_READ);
  EXPECT_EQ(st.f_translation, 2u);
  EXPECT_EQ(t.counter("smmu.faults.F_TRANSLATION"), 2u);
  EXPECT_EQ(g_cookie.stats.iovas_freed, 2u);
  EXPECT_EQ(g_cookie.stats.iotlb_syncs, 2u);
}

INSTANTIATE_TEST_SUITE_P(TlbiPolicies, DmaApiStrict,
                         ::testing::Values(unsigned{SMMU_TLBI_PER_GRANULE}, unsigned{SMMU_TLBI_RANGE}),
                         [](const ::testing::TestParamInfo<unsigned>& i) {
                           return std::string(i.param == SMMU_TLBI_RANGE ? "Range" : "PerGranule");
                         });

// ---- DMA API, lazy: the unmapped buffer stays reachable until the flush.

// The SMMU up, a 4 KiB domain and a lazy cookie of `policy`, g_dev attached
// to it: 0, or 1 to 4 by the step that failed.
int attach_lazy(dma_policy policy) {
  if (bring_up()) return 1;
  if (iommu_domain_init(&g_dom, &g_smmu, 1, IO_PGTABLE_SZ_4K, nullptr) != 0) return 2;
  policy.unmap = DMA_UNMAP_LAZY;
  if (iommu_dma_cookie_init(&g_cookie, &g_dom, &policy) != 0) return 3;
  return dma_dev_init(&g_dev, &g_cookie, g_sid, DMA_BIT_MASK(64), nullptr) != 0 ? 4 : 0;
}

constexpr unsigned kStaleDmas = 3;
struct {
  uint32_t warm = 99, stale[kStaleDmas] = {99, 99, 99}, after_flush = 99;
  bool stale_data_ok = false, timer_flushed = false, early_poll = true;
  uint64_t unmap_tlbis = 99, gathered = 0, pending_before = 0, pending_after = 99;
} lz;

int lazy_main(void) {
  dma_policy policy{};
  policy.gather_when_queued = hal_param("gather_when_queued") != 0;
  if (const int failed = attach_lazy(policy)) return failed;
  const phys_addr_t src = alloc_buffer(kSz4K, kSz4K), dst = alloc_buffer(kSz4K, kSz4K);
  if (!src || !dst) return 5;
  fill(src, kSz4K, 42);
  const uint64_t s_iova = dma_map_single(&g_dev, src, kSz4K, DMA_TO_DEVICE);
  const uint64_t d_iova = dma_map_single(&g_dev, dst, kSz4K, DMA_FROM_DEVICE);
  lz.warm = dma_copy(s_iova, d_iova, 64);  // src's translation into the TLB
  const uint64_t tlbis = g_dom.stats.tlbi_commands;
  dma_unmap_single(&g_dev, s_iova, kSz4K, DMA_TO_DEVICE);
  lz.unmap_tlbis = g_dom.stats.tlbi_commands - tlbis;
  lz.gathered = g_dom.stats.pages_gathered;
  lz.pending_before = dma_flush_queue_pending(&g_cookie);
  std::memset(dram(dst), 0, kSz4K);
  for (unsigned i = 0; i < kStaleDmas; ++i) lz.stale[i] = dma_copy(s_iova, d_iova, 64);
  lz.stale_data_ok = same(src, dst, 64);
  lz.early_poll = dma_flush_queue_timer_poll(&g_dev);  // well before 10 ms
  hal_delay_ns(DMA_FQ_TIMEOUT_NS + 100'000);
  lz.timer_flushed = dma_flush_queue_timer_poll(&g_dev);
  lz.pending_after = dma_flush_queue_pending(&g_cookie);
  lz.after_flush = dma_copy(s_iova, d_iova, 64);
  return 0;
}
const hal_param_decl lazy_params[] = {{"gather_when_queued", 0, "track leaves in a queued gather", 0, 0}, {}};
const hal_app lazy_app = {"dma_mapping_lazy", "lazy dma_unmap and its flush", lazy_main, lazy_params};

class DmaApiLazy : public ::testing::TestWithParam<unsigned> {};

TEST_P(DmaApiLazy, StaleUntilTheFlushThenFaults) {
  const TestRun t = run(scenario({{{"app", "dma_mapping_lazy"},
                                   {"cores", {0}},
                                   {"params", {{"gather_when_queued", GetParam()}}}}}),
                        {&lazy_app}, {"platform.smmu.stale_check=true"});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(lz.warm, DMA_ERR_NONE);
  EXPECT_EQ(lz.unmap_tlbis, 0u);  // no TLBI (and no SYNC) on the lazy unmap path
  EXPECT_EQ(lz.gathered, GetParam() ? 1u : 0u);  // seed 003: no tracking when queued
  EXPECT_EQ(lz.pending_before, 1u);
  for (unsigned i = 0; i < kStaleDmas; ++i) EXPECT_EQ(lz.stale[i], DMA_ERR_NONE) << i;
  EXPECT_TRUE(lz.stale_data_ok);  // the device still reached the unmapped buffer
  EXPECT_FALSE(lz.early_poll);
  EXPECT_TRUE(lz.timer_flushed);
  EXPECT_EQ(lz.pending_after, 0u);
  EXPECT_EQ(lz.after_flush, DMA_ERR_READ);
  // Exactly the DMAs of the window hit a stale entry; none after the flush.
  EXPECT_EQ(t.counter("smmu.stale_check.stale_hits"), kStaleDmas);
  EXPECT_GT(t.counter("smmu.stale_check.checks"), kStaleDmas);
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_ASID"), 1u);
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_VA"), 0u);
  EXPECT_EQ(g_cookie.stats.iovas_deferred, 1u);
  EXPECT_EQ(g_cookie.stats.fq_timer_flushes, 1u);
  EXPECT_EQ(g_cookie.stats.iovas_freed, 1u);
}

INSTANTIATE_TEST_SUITE_P(Gather, DmaApiLazy, ::testing::Values(0u, 1u),
                         [](const ::testing::TestParamInfo<unsigned>& i) {
                           return std::string(i.param ? "GatherWhenQueued" : "SkipGatherWhenQueued");
                         });

// ---- DMA API, lazy, with the kernel's locks queued (the spinlock
// parameter's iova_policy.queued_locks): the flush queue's ring locks and the
// IOVA allocator's are qspinlocks, and a lazy unmap still flushes.
struct {
  bool rings_queued = false, iova_queued = false, flushed = false;
  unsigned rings = 0;
  uint32_t after_flush = 99;
} ql;

int queued_locks_main(void) {
  dma_policy policy{};
  policy.iova.rcache = true;
  policy.iova.queued_locks = true;
  if (const int failed = attach_lazy(policy)) return failed;
  ql.rings = g_cookie.fq_rings;
  ql.rings_queued = ql.rings > 0;
  for (unsigned i = 0; i < g_cookie.fq_rings; i++) ql.rings_queued = ql.rings_queued && sw_spin_is_queued(&g_cookie.fq[i].lock);
  ql.iova_queued = sw_spin_is_queued(&g_cookie.iovad.lock);
  const phys_addr_t src = alloc_buffer(kSz4K, kSz4K), dst = alloc_buffer(kSz4K, kSz4K);
  if (!src || !dst) return 5;
  const uint64_t s_iova = dma_map_single(&g_dev, src, kSz4K, DMA_TO_DEVICE);
  const uint64_t d_iova = dma_map_single(&g_dev, dst, kSz4K, DMA_FROM_DEVICE);
  dma_unmap_single(&g_dev, s_iova, kSz4K, DMA_TO_DEVICE);
  hal_delay_ns(DMA_FQ_TIMEOUT_NS + 100'000);
  ql.flushed = dma_flush_queue_timer_poll(&g_dev) && dma_flush_queue_pending(&g_cookie) == 0;
  ql.after_flush = dma_copy(s_iova, d_iova, 64);
  return 0;
}
const hal_app queued_locks_app = {"dma_mapping_queued_locks", "lazy dma_unmap with queued locks", queued_locks_main,
                                  nullptr};

TEST(DmaApiLazy, QueuedLocksForTheFlushQueueAndTheAllocator) {
  const TestRun t = run(scenario({{{"app", "dma_mapping_queued_locks"}, {"cores", {0}}}}), {&queued_locks_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_GT(ql.rings, 0u);
  EXPECT_TRUE(ql.rings_queued);
  EXPECT_TRUE(ql.iova_queued);
  EXPECT_TRUE(ql.flushed);
  EXPECT_NE(ql.after_flush, DMA_ERR_NONE);  // the flush invalidated the unmapped range
}

// ---- DMA API, lazy: no IOVA is handed out again before the flush that
// covers its unmap. Two cores map and unmap in a loop (rcache on, so freed
// ranges come back quickly); each checks every new range against those still
// waiting for a flush. Rings fill (full flushes) and the timer expires once.

constexpr unsigned kReuseCores = 2;
constexpr unsigned kReuseRounds = 700;
struct Pending {
  uint64_t lo, hi, counter;
};
std::vector<Pending> g_pending;  // touched only between HAL calls: cores interleave at those
volatile uint32_t g_reuse_ready, g_reuse_done;
struct {
  unsigned violations = 0, map_failures = 0, reuses = 0, ring_mismatches = 0;
  uint64_t pending_at_end = 99;
} ru;
std::vector<uint64_t> g_seen;

void prune_flushed() {
  const uint64_t finished = g_cookie.fq_flush_finish;
  std::vector<Pending> keep;
  for (const Pending& p : g_pending)
    if (p.counter >= finished) keep.push_back(p);
  g_pending.swap(keep);
}

void check_new_range(uint64_t lo, uint64_t hi) {
  prune_flushed();
  for (const Pending& p : g_pending) ru.violations += lo <= p.hi && p.lo <= hi;
  for (uint64_t seen : g_seen)
    if (seen == lo) {
      ++ru.reuses;
      return;
    }
  g_seen.push_back(lo);
}

int reuse_main(void) {
  const unsigned cpu = hal_cpu_id();
  if (cpu == 0) {
    dma_policy policy{};
    policy.iova.cache = IOVA_CACHED32_AND_64;
    policy.iova.rcache = true;
    if (const int failed = attach_lazy(policy)) return failed;
    hal_store32(&g_reuse_ready, 1);
  }
  while (!hal_load32(&g_reuse_ready)) hal_cpu_relax();
  const phys_addr_t buf = alloc_buffer(8 * kSz4K, kSz4K);
  if (!buf) return 5;
  const size_t sizes[] = {kSz4K, 2 * kSz4K, 3 * kSz4K, 5 * kSz4K};
  for (unsigned i = 0; i < kReuseRounds; ++i) {
    const size_t size = sizes[(i + cpu) % 4];
    const uint64_t iova = dma_map_page(&g_dev, buf, size, DMA_BIDIRECTIONAL);
    if (iova == DMA_MAPPING_ERROR) {
      ++ru.map_failures;
      continue;
    }
    // The allocator rounds small sizes up to a power of two: the whole
    // range it handed out must be free of pending ranges.
    uint64_t pages = size / kSz4K;
    while (pages & (pages - 1)) pages += pages & (~pages + 1);
    check_new_range(iova, iova + pages * kSz4K - 1);
    dma_unmap_page(&g_dev, iova, size, DMA_BIDIRECTIONAL);
    // The entry this unmap queued, read back from this CPU's ring: the
    // flush count it must wait for.
    const dma_fq& fq = g_cookie.fq[cpu];
    const dma_fq_entry& e = fq.entries[(fq.tail + DMA_FQ_SIZE - 1) % DMA_FQ_SIZE];
    ru.ring_mismatches += e.iova_pfn != iova / kSz4K;
    g_pending.push_back({iova, iova + pages * kSz4K - 1, e.counter});
    if (cpu == 0 && i == kReuseRounds / 2) hal_delay_ns(DMA_FQ_TIMEOUT_NS + 1000);  // let the timer expire
  }
  hal_fetch_add32(&g_reuse_done, 1);
  if (cpu == 0) {
    while (hal_load32(&g_reuse_done) != kReuseCores) hal_cpu_relax();
    dma_flush_queue_flush(&g_dev);
    ru.pending_at_end = dma_flush_queue_pending(&g_cookie);
  }
  return 0;
}
const hal_app reuse_app = {"dma_mapping_reuse", "lazy IOVA reuse", reuse_main, nullptr};

TEST(DmaApiLazyReuse, NoIovaIsReusedBeforeItsFlush) {
  const TestRun t = run(scenario({{{"app", "dma_mapping_reuse"}, {"cores", {0, 1}}}}), {&reuse_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(ru.map_failures, 0u);
  EXPECT_EQ(ru.ring_mismatches, 0u);
  EXPECT_EQ(ru.violations, 0u);
  EXPECT_GT(ru.reuses, 100u);  // ranges did come back, after their flushes
  EXPECT_GE(g_cookie.stats.fq_full_flushes, 2u);
  EXPECT_GE(g_cookie.stats.fq_timer_flushes, 1u);
  EXPECT_EQ(g_cookie.stats.iovas_deferred, kReuseCores * kReuseRounds);
  EXPECT_EQ(g_cookie.stats.iovas_freed, kReuseCores * kReuseRounds);
  EXPECT_EQ(ru.pending_at_end, 0u);
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_VA"), 0u);
  EXPECT_EQ(t.counter("smmu.cmdq.executed.CMD_TLBI_NH_ASID"), g_cookie.stats.fq_flushes);
}

// ---- DMA API: a scatter-gather list, and bounce buffers.

struct {
  int nents = 0;
  uint64_t addrs[3] = {};
  unsigned copy_errors = 0, mismatches = 0;
  uint32_t after_unmap = 99;
  uint64_t bounced = 0;
  uint32_t bounce_copy = 99;
  bool bounce_ok = false, original_untouched = false;
} sg;

int dma_sg_main(void) {
  if (bring_up()) return 1;
  iommu_domain_policy p{};
  p.map_sg = IOMMU_MAP_SG_BATCHED;
  if (iommu_domain_init(&g_dom, &g_smmu, 1, IO_PGTABLE_SZ_4K, &p) != 0) return 2;
  if (iommu_dma_cookie_init(&g_cookie, &g_dom, nullptr) != 0) return 3;
  if (dma_dev_init(&g_dev, &g_cookie, g_sid, DMA_BIT_MASK(32), nullptr) != 0) return 4;
  // Three elements with a page between each: three runs.
  const phys_addr_t base = alloc_buffer(8 * kSz4K, kSz4K), dst = alloc_buffer(4 * kSz4K, kSz4K);
  if (!base || !dst) return 5;
  const phys_addr_t a = base, b = base + 2 * kSz4K, c = base + 5 * kSz4K;
  const iommu_sg list[3] = {{a + 0x100, 0x300}, {b, 2 * kSz4K}, {c + 0x800, kSz4K}};
  for (unsigned i = 0; i < 3; ++i) fill(list[i].pa, list[i].len, static_cast<uint8_t>(i + 1));
  sg.nents = dma_map_sg(&g_dev, list, 3, DMA_TO_DEVICE, sg.addrs);
  const uint64_t d = dma_map_single(&g_dev, dst, 4 * kSz4K, DMA_FROM_DEVICE);
  for (unsigned i = 0; i < 3; ++i) {
    std::memset(dram(dst), 0, 4 * kSz4K);
    sg.copy_errors += dma_copy(sg.addrs[i], d, static_cast<uint32_t>(list[i].len)) != DMA_ERR_NONE;
    sg.mismatches += !same(list[i].pa, dst, list[i].len);
  }
  dma_unmap_sg(&g_dev, list, 3, DMA_TO_DEVICE, sg.addrs);
  sg.after_unmap = dma_copy(sg.addrs[1], d, 64);
  dma_unmap_single(&g_dev, d, 4 * kSz4K, DMA_FROM_DEVICE);

  // A device that must not see the rest of the page: 200 bytes in the
  // middle of a page go through a bounce buffer both ways.
  static swiotlb_mem mem;
  swiotlb_config cfg;
  swiotlb_default_config(&cfg);
  cfg.pool_size = 1u << 20;
  if (swiotlb_init(&mem, &cfg) != 0) return 6;
  static dma_dev untrusted;
  if (dma_dev_init(&untrusted, &g_cookie, g_sid, DMA_BIT_MASK(32), &mem) != 0) return 7;
  const phys_addr_t page = alloc_buffer(2 * kSz4K, kSz4K);
  if (!page) return 8;
  fill(page, 2 * kSz4K, 77);
  std::vector<uint8_t> before(dram(page), dram(page) + 2 * kSz4K);
  const uint64_t in = dma_map_single(&untrusted, page + 0x200, 200, DMA_TO_DEVICE);
  const uint64_t out = dma_map_single(&untrusted, page + kSz4K + 0x10, 200, DMA_FROM_DEVICE);
  sg.bounce_copy = dma_copy(in, out, 200);
  // Until the unmap copies back, the original destination is untouched.
  sg.original_untouched = std::memcmp(dram(page + kSz4K + 0x10), before.data() + kSz4K + 0x10, 200) == 0;
  dma_unmap_single(&untrusted, in, 200, DMA_TO_DEVICE);
  dma_unmap_single(&untrusted, out, 200, DMA_FROM_DEVICE);
  sg.bounce_ok = same(page + 0x200, page + kSz4K + 0x10, 200);
  sg.bounced = untrusted.stats.bounced;
  return 0;
}
const hal_app dma_sg_app = {"dma_mapping_sg", "dma_map_sg and bounce buffers", dma_sg_main, nullptr};

TEST(DmaApi, MapSgAndBounceBuffersCarryTheData) {
  const TestRun t = run(scenario({{{"app", "dma_mapping_sg"}, {"cores", {0}}}}), {&dma_sg_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(sg.nents, 3);
  EXPECT_EQ(sg.addrs[0] & 0xFFF, 0x100u);
  EXPECT_EQ(sg.addrs[1], (sg.addrs[0] & ~0xFFFull) + kSz4K);  // laid out one after another
  EXPECT_EQ(sg.addrs[2], sg.addrs[1] + 2 * kSz4K + 0x800);
  EXPECT_LT(sg.addrs[2], 1ull << 32);
  EXPECT_EQ(sg.copy_errors, 0u);
  EXPECT_EQ(sg.mismatches, 0u);
  EXPECT_EQ(sg.after_unmap, DMA_ERR_READ);
  EXPECT_EQ(g_dom.stats.map_sgs, 1u);
  EXPECT_EQ(g_dom.stats.sg_runs, 3u);
  EXPECT_EQ(sg.bounced, 2u);
  EXPECT_EQ(sg.bounce_copy, DMA_ERR_NONE);
  EXPECT_TRUE(sg.original_untouched);
  EXPECT_TRUE(sg.bounce_ok);
}

}  // namespace
}  // namespace smmu_vp::test

namespace smmu_vp::test {
namespace {

// ---- sync_each_page: Linux 4.13's unmap syncs every page; since 2017 one
// sync covers the range (seed 001's "Thunder patches 2-5").

struct {
  uint64_t syncs[2] = {0, 0}, tlbis[2] = {0, 0};
  size_t unmapped[2] = {0, 0};
  uint32_t after[2] = {99, 99};
} sep;

int sync_each_page_main(void) {
  if (bring_up()) return 1;
  const phys_addr_t buf = alloc_buffer(16 * kSz4K, kSz4K);
  if (!buf) return 2;
  for (unsigned mode = 0; mode < 2; ++mode) {
    iommu_domain* dom = mode ? &g_dom_b : &g_dom_a;
    iommu_domain_policy p{};
    p.sync_each_page = mode == 1;
    if (iommu_domain_init(dom, &g_smmu, static_cast<uint16_t>(10 + mode), IO_PGTABLE_SZ_4K, &p) != 0 ||
        iommu_attach_device(dom, g_sid) != 0 || iommu_map(dom, kSgIova, buf, 16 * kSz4K, IOMMU_READ | IOMMU_CACHE) != 0)
      return 3;
    const uint64_t syncs = dom->stats.iotlb_syncs, tlbis = dom->stats.tlbi_commands;
    sep.unmapped[mode] = iommu_unmap(dom, kSgIova, 16 * kSz4K);
    sep.syncs[mode] = dom->stats.iotlb_syncs - syncs;
    sep.tlbis[mode] = dom->stats.tlbi_commands - tlbis;
    sep.after[mode] = dma_copy(kSgIova + 15 * kSz4K, kSgIova, 64);  // the last page is gone
    iommu_detach_device(dom, g_sid);
  }
  return 0;
}
const hal_app sync_each_page_app = {"dma_mapping_sync_each_page", "unmap sync per page or per range",
                                    sync_each_page_main, nullptr};

TEST(DmaMappingCore, SyncEachPageSyncsEveryPageOfAnUnmap) {
  const TestRun t = run(scenario({{{"app", "dma_mapping_sync_each_page"}, {"cores", {0}}}}), {&sync_each_page_app});
  ASSERT_EQ(t.result.status, RunResult::Status::kCompleted) << t.result.message;
  EXPECT_EQ(sep.unmapped[0], 16 * kSz4K);
  EXPECT_EQ(sep.unmapped[1], 16 * kSz4K);
  EXPECT_EQ(sep.syncs[0], 1u);   // one gather for the range
  EXPECT_EQ(sep.syncs[1], 16u);  // one per page
  EXPECT_EQ(sep.tlbis[0], 16u);  // per-granule TLBIs either way
  EXPECT_EQ(sep.tlbis[1], 16u);
  EXPECT_EQ(sep.after[0], DMA_ERR_READ);
  EXPECT_EQ(sep.after[1], DMA_ERR_READ);
}

}  // namespace
}  // namespace smmu_vp::test

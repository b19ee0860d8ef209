/*
 * TLB invalidation for unmap (IHI 0070 4.4, 4.4.1.1; Linux v6.1 arm-smmu-v3.c
 * __arm_smmu_tlb_inv_range and arm_smmu_cmdq_batch_add): one TLBI_NH_VA per
 * 4 KiB granule (or per leaf of a larger page size), Linux's range-TLBI
 * splitting loop when the SMMU has RIL, or one TLBI_NH_ASID above a page
 * threshold; commands go in batches of up to SMMU_CMD_BATCH, full ones
 * without a SYNC and the last with the one CMD_SYNC, as Linux's cmdq batches
 * do.
 * smmu_tlbi_va_each is the per-granule walk flush used whatever the policy.
 * The _nosync forms leave out the CMD_SYNC, for a domain whose devices sit
 * behind several SMMUs (sw/iommu/iommu.c fans the commands out to every one
 * before it syncs any).
 */
#include "drivers/smmu/arm_smmu_internal.h"

struct cmd_batch {
  uint64_t cmds[SMMU_CMD_BATCH][2];
  unsigned n;
  int err;
  uint64_t issued; /* commands added, SYNCs not counted */
};

static void batch_init(struct cmd_batch *b) {
  b->n = 0;
  b->err = 0;
  b->issued = 0;
}

static void batch_add(struct smmu_device *dev, struct cmd_batch *b, uint64_t w0, uint64_t w1) {
  b->cmds[b->n][0] = w0;
  b->cmds[b->n][1] = w1;
  b->issued++;
  if (++b->n == SMMU_CMD_BATCH) {
    /* A full batch goes in without a SYNC, as Linux's cmdq batch does; the
     * one SYNC at submit covers every batch before it. */
    b->err |= smmu_cmdq_issue(dev, (const uint64_t(*)[2])b->cmds, b->n, false);
    b->n = 0;
  }
}

/* The last batch, with the one CMD_SYNC unless the caller syncs later. */
static int batch_submit(struct smmu_device *dev, struct cmd_batch *b, uint64_t *tlbis, bool sync) {
  if (b->n || (b->issued && sync)) b->err |= smmu_cmdq_issue(dev, (const uint64_t(*)[2])b->cmds, b->n, sync);
  b->n = 0;
  if (tlbis) *tlbis += b->issued;
  return b->err;
}

static int tlbi_asid(struct smmu_device *dev, uint16_t asid, bool sync) {
  const uint64_t cmd[1][2] = {{SMMU_CMD_TLBI_NH_ASID | ((uint64_t)asid << SMMU_CMD0_ASID_SHIFT), 0}};
  return smmu_cmdq_issue(dev, cmd, 1, sync);
}

int smmu_tlbi_asid(struct smmu_device *dev, uint16_t asid) { return tlbi_asid(dev, asid, true); }
int smmu_tlbi_asid_nosync(struct smmu_device *dev, uint16_t asid) { return tlbi_asid(dev, asid, false); }

/* Walk level at which a 4 KiB-granule table holds a leaf of `pgsize` bytes:
 * the TTL hint of a range command (IHI 0070 4.4.1.1); 0 (no hint) for a size
 * that is no leaf. Linux derives the same level from the gather's page size. */
static unsigned leaf_ttl_4k(uint64_t pgsize) {
  switch (pgsize) {
    case 1ull << 12: return 3;
    case 1ull << 21: return 2;
    case 1ull << 30: return 1;
    default: return 0;
  }
}

/* A command step: a power of two of at least the 4 KiB granule. */
static uint64_t tlbi_step(uint64_t size) {
  return (size < 4096 || (size & (size - 1)) != 0) ? 4096 : size;
}

/* One TLBI_NH_VA per `step` bytes, starting at the step containing iova. */
static void add_per_step(struct smmu_device *dev, struct cmd_batch *b, uint64_t w0, uint64_t iova, uint64_t size,
                         uint64_t step, bool leaf) {
  const uint64_t first = iova & ~(step - 1);
  const uint64_t w1_leaf = leaf ? SMMU_CMD1_LEAF : 0;
  for (uint64_t n = (iova + size - first + step - 1) / step, va = first; n; va += step, n--)
    batch_add(dev, b, w0, w1_leaf | (va & SMMU_CMD1_ADDR_MASK));
}

/* Linux's splitting loop (__arm_smmu_tlb_inv_range; range commands since
 * commit 6a481a95d4c1, IHI 0070 4.4.1.1), 4 KiB granule (TG = 1): each
 * command covers (NUM + 1) << SCALE pages, taking the lowest set bits of the
 * page count first. */
static void add_ranges(struct smmu_device *dev, struct cmd_batch *b, uint64_t w0, uint64_t first, uint64_t pages,
                       unsigned ttl, bool leaf) {
  const uint64_t w1_fixed = (leaf ? SMMU_CMD1_LEAF : 0) | ((uint64_t)ttl << SMMU_CMD1_TTL_SHIFT) |
                            (1ull << SMMU_CMD1_TG_SHIFT);
  uint64_t addr = first;
  while (pages) {
    const unsigned scale = (unsigned)__builtin_ctzll(pages);
    const uint64_t num = (pages >> scale) & 31;
    batch_add(dev, b, w0 | ((num - 1) << SMMU_CMD0_NUM_SHIFT) | ((uint64_t)scale << SMMU_CMD0_SCALE_SHIFT),
              w1_fixed | (addr & SMMU_CMD1_ADDR_MASK));
    pages -= num << scale;
    addr += (num << scale) * 4096;
  }
}

static int tlbi_range_pgsize(struct smmu_device *dev, uint16_t asid, uint64_t iova, uint64_t size, uint64_t pgsize,
                             bool leaf, uint64_t *tlbis, bool sync) {
  const uint64_t first = iova & ~0xFFFull;
  const uint64_t pages = (iova + size - first + 4095) / 4096;
  const uint64_t w0 = SMMU_CMD_TLBI_NH_VA | ((uint64_t)asid << SMMU_CMD0_ASID_SHIFT);
  if (dev->policy.asid_threshold_pages && pages >= dev->policy.asid_threshold_pages) {
    /* Cheaper to drop the whole ASID than to walk the range. */
    if (tlbis) (*tlbis)++;
    return tlbi_asid(dev, asid, sync);
  }
  struct cmd_batch b;
  batch_init(&b);
  if (dev->policy.tlbi == SMMU_TLBI_RANGE)
    add_ranges(dev, &b, w0, first, pages, leaf ? leaf_ttl_4k(pgsize) : 0, leaf);
  else
    add_per_step(dev, &b, w0, iova, size, tlbi_step(pgsize), leaf);
  return batch_submit(dev, &b, tlbis, sync);
}

int smmu_tlbi_range_pgsize(struct smmu_device *dev, uint16_t asid, uint64_t iova, uint64_t size, uint64_t pgsize,
                           bool leaf, uint64_t *tlbis) {
  return tlbi_range_pgsize(dev, asid, iova, size, pgsize, leaf, tlbis, true);
}

int smmu_tlbi_range_pgsize_nosync(struct smmu_device *dev, uint16_t asid, uint64_t iova, uint64_t size,
                                  uint64_t pgsize, bool leaf, uint64_t *tlbis) {
  return tlbi_range_pgsize(dev, asid, iova, size, pgsize, leaf, tlbis, false);
}

int smmu_tlbi_range(struct smmu_device *dev, uint16_t asid, uint64_t iova, uint64_t size) {
  return smmu_tlbi_range_pgsize(dev, asid, iova, size, 4096, true, 0);
}

static int tlbi_va_each(struct smmu_device *dev, uint16_t asid, uint64_t iova, uint64_t size, uint64_t step,
                        bool leaf, uint64_t *tlbis, bool sync) {
  struct cmd_batch b;
  batch_init(&b);
  add_per_step(dev, &b, SMMU_CMD_TLBI_NH_VA | ((uint64_t)asid << SMMU_CMD0_ASID_SHIFT), iova, size,
               tlbi_step(step), leaf);
  return batch_submit(dev, &b, tlbis, sync);
}

int smmu_tlbi_va_each(struct smmu_device *dev, uint16_t asid, uint64_t iova, uint64_t size, uint64_t step,
                      bool leaf, uint64_t *tlbis) {
  return tlbi_va_each(dev, asid, iova, size, step, leaf, tlbis, true);
}

int smmu_tlbi_va_each_nosync(struct smmu_device *dev, uint16_t asid, uint64_t iova, uint64_t size, uint64_t step,
                             bool leaf, uint64_t *tlbis) {
  return tlbi_va_each(dev, asid, iova, size, step, leaf, tlbis, false);
}

int smmu_sync(struct smmu_device *dev) { return smmu_cmdq_issue(dev, 0, 0, true); }

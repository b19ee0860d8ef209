/*
 * TLB invalidation for unmap (facts §2, §5): one TLBI_NH_VA per 4 KiB
 * granule, Linux's range-TLBI splitting loop when the SMMU has RIL, or one
 * TLBI_NH_ASID above a page threshold; commands go in batches of up to
 * SMMU_CMD_BATCH with one CMD_SYNC each, as Linux's cmdq batches do.
 */
#include "smmu/arm_smmu_internal.h"

struct cmd_batch {
  uint64_t cmds[SMMU_CMD_BATCH][2];
  unsigned n;
  int err;
};

static void batch_add(struct smmu_device *dev, struct cmd_batch *b, uint64_t w0, uint64_t w1) {
  b->cmds[b->n][0] = w0;
  b->cmds[b->n][1] = w1;
  if (++b->n == SMMU_CMD_BATCH) {
    b->err |= smmu_cmdq_issue(dev, (const uint64_t(*)[2])b->cmds, b->n, true);
    b->n = 0;
  }
}

static int batch_submit(struct smmu_device *dev, struct cmd_batch *b) {
  if (b->n) b->err |= smmu_cmdq_issue(dev, (const uint64_t(*)[2])b->cmds, b->n, true);
  b->n = 0;
  return b->err;
}

int smmu_tlbi_asid(struct smmu_device *dev, uint16_t asid) {
  const uint64_t cmd[1][2] = {{SMMU_CMD_TLBI_NH_ASID | ((uint64_t)asid << SMMU_CMD0_ASID_SHIFT), 0}};
  return smmu_cmdq_issue(dev, cmd, 1, true);
}

int smmu_tlbi_range(struct smmu_device *dev, uint16_t asid, uint64_t iova, uint64_t size) {
  struct cmd_batch b;
  b.n = 0;
  b.err = 0;
  const uint64_t first = iova & ~0xFFFull;
  uint64_t pages = (iova + size - first + 4095) / 4096;
  const uint64_t w0 = SMMU_CMD_TLBI_NH_VA | ((uint64_t)asid << SMMU_CMD0_ASID_SHIFT);
  if (dev->policy.asid_threshold_pages && pages >= dev->policy.asid_threshold_pages) {
    /* Cheaper to drop the whole ASID than to walk the range. */
    return smmu_tlbi_asid(dev, asid);
  }
  if (dev->policy.tlbi == SMMU_TLBI_RANGE) {
    /* Linux's splitting loop (facts §2), leaf, 4 KiB granule: TG = 1 and
     * TTL = 3; each command covers (NUM + 1) << SCALE pages, taking the
     * lowest set bits of the page count first. */
    uint64_t addr = first;
    while (pages) {
      const unsigned scale = (unsigned)__builtin_ctzll(pages);
      const uint64_t num = (pages >> scale) & 31;
      batch_add(dev, &b, w0 | ((num - 1) << SMMU_CMD0_NUM_SHIFT) | ((uint64_t)scale << SMMU_CMD0_SCALE_SHIFT),
                SMMU_CMD1_LEAF | (3ull << SMMU_CMD1_TTL_SHIFT) | (1ull << SMMU_CMD1_TG_SHIFT) |
                    (addr & SMMU_CMD1_ADDR_MASK));
      pages -= num << scale;
      addr += (num << scale) * 4096;
    }
  } else {
    for (uint64_t va = first; pages; va += 4096, pages--)
      batch_add(dev, &b, w0, SMMU_CMD1_LEAF | (va & SMMU_CMD1_ADDR_MASK));
  }
  return batch_submit(dev, &b);
}

/* ATC invalidation (IHI 0070 4.5.1, 3.9.1.4): what an unmap must send to
 * the endpoints that cache translations themselves, after the SMMU's own
 * TLBs are invalidated. */
#include "drivers/smmu/arm_smmu_internal.h"

/* Linux's arm_smmu_atc_inv_to_cmd: the command covers the smallest naturally
 * aligned span of 2^Size 4 KiB pages that holds [iova, iova + size): Size is
 * the position of the highest bit in which the first and last page numbers
 * differ, plus one. Size 0 asks for everything. */
static void atc_inv_cmd(uint32_t sid, uint64_t iova, uint64_t size, uint64_t cmd[2]) {
  cmd[0] = SMMU_CMD_ATC_INV | ((uint64_t)sid << SMMU_CMD0_SID_SHIFT);
  if (size == 0) {
    cmd[1] = SMMU_ATC_INV_SIZE_ALL;
    return;
  }
  const uint64_t first = iova >> 12, last = (iova + size - 1) >> 12;
  const uint64_t differ = first ^ last;
  const unsigned log2_span = differ ? 64u - (unsigned)__builtin_clzll(differ) : 0u;
  const uint64_t start = first & ~((1ull << log2_span) - 1);
  cmd[1] = ((start << 12) & SMMU_CMD1_ADDR_MASK) | (log2_span & SMMU_CMD1_ATC_SIZE_MASK);
}

int smmu_atc_inv(struct smmu_device *dev, uint32_t sid, uint64_t iova, uint64_t size, bool sync) {
  uint64_t cmd[1][2];
  atc_inv_cmd(sid, iova, size, cmd[0]);
  return smmu_cmdq_issue(dev, (const uint64_t(*)[2])cmd, 1, sync);
}

// The NVMe controller's properties, state machine, queues, admin and I/O
// command checks, PRP walk and data store, without the SystemC kernel.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "nvme/nvme_core.h"

namespace smmu_vp {
namespace {

constexpr uint64_t kAsq = 0x8000'0000, kAcq = 0x8000'1000;
constexpr uint32_t kCcGood = NVME_CC_EN | (6u << NVME_CC_IOSQES_SHIFT) | (4u << NVME_CC_IOCQES_SHIFT);

NvmeCore::Params params(unsigned queues = 4, unsigned vectors = 5) {
  NvmeCore::Params p;
  p.queues = queues;
  p.vectors = vectors;
  p.capacity_bytes = 1ull << 30;
  p.lba_bytes = 4096;
  p.serial = "SVP-test";
  return p;
}

uint64_t rd(const NvmeCore& c, uint64_t off, unsigned len = 4) {
  uint64_t v = 0;
  EXPECT_EQ(c.read(off, len, &v), NvmeCore::Access::kOk) << std::hex << off;
  return v;
}

NvmeCore::Effects wr(NvmeCore& c, uint64_t off, uint64_t v, unsigned len = 4) {
  NvmeCore::Effects fx;
  EXPECT_EQ(c.write(off, len, v, &fx), NvmeCore::Access::kOk) << std::hex << off;
  return fx;
}

// Programs the admin queues and sets CC.EN; the controller is then enabling.
void start(NvmeCore& c, uint32_t entries = 16, uint32_t cc = kCcGood) {
  wr(c, NVME_REG_AQA, NVME_AQA_ASQS(entries) | NVME_AQA_ACQS(entries));
  wr(c, NVME_REG_ASQ, kAsq, 8);
  wr(c, NVME_REG_ACQ, kAcq, 8);
  wr(c, NVME_REG_CC, cc);
}

// Enabled and ready.
void bring_up(NvmeCore& c, uint32_t entries = 16) {
  start(c, entries);
  ASSERT_EQ(c.transition(), NvmeCore::Transition::kEnabling);
  c.finish_transition();
  ASSERT_TRUE(c.ready());
}

nvme_sqe cmd(uint8_t opc, uint16_t cid = 1) {
  nvme_sqe s;
  std::memset(&s, 0, sizeof s);
  s.cdw0 = NVME_CDW0(opc, cid);
  return s;
}

nvme_sqe create_cq(uint16_t qid, uint32_t entries, uint16_t vector, bool ien = true, uint64_t base = 0x8010'0000) {
  nvme_sqe s = cmd(NVME_ADMIN_CREATE_CQ);
  s.prp1 = base;
  s.cdw10 = NVME_QUEUE_CDW10(qid, entries);
  s.cdw11 = NVME_CQ_CDW11(vector, ien);
  return s;
}

nvme_sqe create_sq(uint16_t qid, uint32_t entries, uint16_t cqid, uint64_t base = 0x8020'0000) {
  nvme_sqe s = cmd(NVME_ADMIN_CREATE_SQ);
  s.prp1 = base;
  s.cdw10 = NVME_QUEUE_CDW10(qid, entries);
  s.cdw11 = NVME_SQ_CDW11(cqid);
  return s;
}

uint16_t run(NvmeCore& c, const nvme_sqe& s, uint32_t* dw0 = nullptr) {
  std::vector<uint8_t> data;
  const NvmeCore::AdminResult r = c.admin(s, &data);
  if (dw0) *dw0 = r.dw0;
  return r.status;
}

// The status with DNR.
uint16_t err(uint8_t sct, uint8_t sc) { return static_cast<uint16_t>(NVME_STATUS(sct, sc) | NVME_STATUS_DNR); }

// ---- Properties

TEST(NvmeCore, CapabilitiesAndVersion) {
  NvmeCore c(params());
  const uint64_t cap = rd(c, NVME_REG_CAP, 8);
  EXPECT_EQ(NVME_CAP_MQES(cap), 4095u);
  EXPECT_NE(cap & NVME_CAP_CQR, 0u);
  EXPECT_GE(NVME_CAP_TO(cap), 1u);
  EXPECT_EQ(NVME_CAP_DSTRD(cap), 0u);
  EXPECT_NE(cap & NVME_CAP_CSS_NVM, 0u);
  EXPECT_EQ(NVME_CAP_MPSMIN(cap), 0u);
  EXPECT_EQ(NVME_CAP_MPSMAX(cap), 0u);
  // Two 32-bit halves read the same.
  EXPECT_EQ(rd(c, NVME_REG_CAP) | rd(c, NVME_REG_CAP + 4) << 32, cap);
  EXPECT_EQ(rd(c, NVME_REG_VS), NVME_VS_2_0);
  // Read-only.
  wr(c, NVME_REG_CAP, 0, 8);
  wr(c, NVME_REG_VS, 0);
  wr(c, NVME_REG_CSTS, ~0u);
  EXPECT_EQ(rd(c, NVME_REG_CAP, 8), cap);
  EXPECT_EQ(rd(c, NVME_REG_VS), NVME_VS_2_0);
  EXPECT_EQ(rd(c, NVME_REG_CSTS), 0u);
}

TEST(NvmeCore, ReadyTimeoutFollowsTheParameter) {
  NvmeCore::Params p = params();
  p.ready_timeout = 3;
  NvmeCore c(p);
  EXPECT_EQ(NVME_CAP_TO(c.cap()), 3u);
}

TEST(NvmeCore, BadAccessesAreRefusedNotFatal) {
  NvmeCore c(params(4, 5));
  uint64_t v = 0;
  NvmeCore::Effects fx;
  EXPECT_EQ(c.read(NVME_REG_CC + 2, 4, &v), NvmeCore::Access::kBadSize);       // misaligned
  EXPECT_EQ(c.read(NVME_REG_CC, 2, &v), NvmeCore::Access::kBadSize);           // 16-bit
  EXPECT_EQ(c.read(NVME_REG_VS, 8, &v), NvmeCore::Access::kBadSize);           // 64-bit at a 32-bit register
  EXPECT_EQ(c.write(NVME_SQ_TAIL_DB(0, 0), 8, 0, &fx), NvmeCore::Access::kBadSize);
  EXPECT_EQ(c.read(NVME_REG_BLOCK_SIZE, 4, &v), NvmeCore::Access::kBadAddress);
  EXPECT_EQ(c.read(NVME_MSIX_REG(5, NVME_MSIX_DATA), 4, &v), NvmeCore::Access::kBadAddress);  // vector 5 of 5
  EXPECT_EQ(c.write(NVME_MSIX_REG(7, NVME_MSIX_CTRL), 4, 0, &fx), NvmeCore::Access::kBadAddress);
  EXPECT_FALSE(c.fatal());
  // Reserved properties read as zero; doorbells are write-only and read as zero.
  EXPECT_EQ(rd(c, 0x18), 0u);
  EXPECT_EQ(rd(c, NVME_SQ_TAIL_DB(1, 0)), 0u);
}

TEST(NvmeCore, VectorTableResetsMaskedAndHoldsAddressAndData) {
  NvmeCore c(params(4, 5));
  for (unsigned v = 0; v < 5; ++v) {
    EXPECT_EQ(rd(c, NVME_MSIX_REG(v, NVME_MSIX_CTRL)), NVME_MSIX_CTRL_MASKED);
    EXPECT_EQ(rd(c, NVME_MSIX_REG(v, NVME_MSIX_ADDR_LO), 8), 0u);
    EXPECT_FALSE(c.vector(v).msi());
  }
  wr(c, NVME_MSIX_REG(2, NVME_MSIX_ADDR_LO), 0x1'0000'0040ull, 8);
  wr(c, NVME_MSIX_REG(2, NVME_MSIX_DATA), 77);
  EXPECT_FALSE(c.vector(2).msi());  // still masked
  wr(c, NVME_MSIX_REG(2, NVME_MSIX_CTRL), 0);
  EXPECT_TRUE(c.vector(2).msi());
  EXPECT_EQ(c.vector(2).addr, 0x1'0000'0040ull);
  EXPECT_EQ(rd(c, NVME_MSIX_REG(2, NVME_MSIX_ADDR_HI)), 1u);
  EXPECT_EQ(rd(c, NVME_MSIX_REG(2, NVME_MSIX_DATA)), 77u);
}

TEST(NvmeCore, WiredMaskLatchesAndReleasesOnClear) {
  NvmeCore c(params());
  wr(c, NVME_REG_INTMS, 0x5);
  EXPECT_EQ(rd(c, NVME_REG_INTMS), 0x5u);
  EXPECT_TRUE(c.wired_masked(0));
  EXPECT_FALSE(c.wired_masked(1));
  c.latch_wired(2);
  EXPECT_EQ(wr(c, NVME_REG_INTMC, 0x1).unmasked_pending, 0u);  // nothing pending on 0
  EXPECT_EQ(wr(c, NVME_REG_INTMC, 0x4).unmasked_pending, 0x4u);
  EXPECT_EQ(rd(c, NVME_REG_INTMC), 0u);
}

// ---- Enable, disable, shutdown (NVMe 2.0 3.5.1)

TEST(NvmeCore, EnableMakesTheAdminQueuesAndReady) {
  NvmeCore c(params());
  start(c, 32);
  EXPECT_FALSE(c.ready());  // RDY follows after the controller's enable time
  EXPECT_EQ(c.transition(), NvmeCore::Transition::kEnabling);
  c.finish_transition();
  EXPECT_EQ(rd(c, NVME_REG_CSTS), NVME_CSTS_RDY);
  EXPECT_EQ(c.transition(), NvmeCore::Transition::kNone);
  ASSERT_NE(c.sq(0), nullptr);
  ASSERT_NE(c.cq(0), nullptr);
  EXPECT_EQ(c.sq(0)->base, kAsq);
  EXPECT_EQ(c.sq(0)->size, 32u);
  EXPECT_EQ(c.cq(0)->base, kAcq);
  EXPECT_EQ(c.cq(0)->size, 32u);
  EXPECT_TRUE(c.cq(0)->ien);
  EXPECT_EQ(c.cq(0)->iv, 0u);
  EXPECT_EQ(rd(c, NVME_REG_AQA), (NVME_AQA_ASQS(32) | NVME_AQA_ACQS(32)));
  EXPECT_EQ(rd(c, NVME_REG_ASQ, 8), kAsq);
}

TEST(NvmeCore, DisableDeletesQueuesThenClearsReady) {
  NvmeCore c(params());
  bring_up(c);
  ASSERT_EQ(run(c, create_cq(1, 8, 1)), 0u);
  ASSERT_EQ(run(c, create_sq(1, 8, 1)), 0u);
  const NvmeCore::Effects fx = wr(c, NVME_REG_CC, kCcGood & ~NVME_CC_EN);
  EXPECT_TRUE(fx.cc_changed);
  EXPECT_TRUE(fx.reset);
  EXPECT_EQ(c.sq(0), nullptr);
  EXPECT_EQ(c.sq(1), nullptr);
  EXPECT_EQ(c.cq(1), nullptr);
  EXPECT_TRUE(c.ready());  // until the controller has finished
  EXPECT_EQ(c.transition(), NvmeCore::Transition::kDisabling);
  c.finish_transition();
  EXPECT_EQ(rd(c, NVME_REG_CSTS), 0u);
  // And again.
  wr(c, NVME_REG_CC, kCcGood);
  c.finish_transition();
  EXPECT_TRUE(c.ready());
  EXPECT_NE(c.sq(0), nullptr);
}

TEST(NvmeCore, BadSettingsAtEnableAreFatal) {
  const struct {
    const char* what;
    uint32_t cc;
    uint32_t aqa;
    uint64_t asq;
  } bad[] = {
      {"MPS 8 KiB", kCcGood | (1u << NVME_CC_MPS_SHIFT), NVME_AQA_ASQS(16) | NVME_AQA_ACQS(16), kAsq},
      {"ASQ not page aligned", kCcGood, NVME_AQA_ASQS(16) | NVME_AQA_ACQS(16), kAsq + 0x80},
      {"AQA sizes 0", kCcGood, 0, kAsq},
      {"ACQS 0", kCcGood, NVME_AQA_ASQS(16), kAsq},
      {"IOSQES 7", (kCcGood & ~(0xFu << NVME_CC_IOSQES_SHIFT)) | (7u << NVME_CC_IOSQES_SHIFT),
       NVME_AQA_ASQS(16) | NVME_AQA_ACQS(16), kAsq},
      {"IOCQES 0", kCcGood & ~(0xFu << NVME_CC_IOCQES_SHIFT), NVME_AQA_ASQS(16) | NVME_AQA_ACQS(16), kAsq},
      {"CSS admin only", kCcGood | (7u << NVME_CC_CSS_SHIFT), NVME_AQA_ASQS(16) | NVME_AQA_ACQS(16), kAsq},
  };
  for (const auto& b : bad) {
    NvmeCore c(params());
    wr(c, NVME_REG_AQA, b.aqa);
    wr(c, NVME_REG_ASQ, b.asq, 8);
    wr(c, NVME_REG_ACQ, kAcq, 8);
    wr(c, NVME_REG_CC, b.cc);
    EXPECT_EQ(rd(c, NVME_REG_CSTS), NVME_CSTS_CFS) << b.what;
    EXPECT_EQ(c.transition(), NvmeCore::Transition::kNone) << b.what;  // never ready
    EXPECT_EQ(c.stat(NvmeStat::kFatal), 1u) << b.what;
    // Clearing EN resets the controller and CFS with it.
    wr(c, NVME_REG_CC, 0);
    EXPECT_EQ(rd(c, NVME_REG_CSTS), 0u) << b.what;
  }
}

TEST(NvmeCore, ShutdownCompletesWhenTheControllerSaysSo) {
  NvmeCore c(params());
  bring_up(c);
  const NvmeCore::Effects fx = wr(c, NVME_REG_CC, kCcGood | NVME_CC_SHN_NORMAL);
  EXPECT_TRUE(fx.cc_changed);
  EXPECT_EQ(rd(c, NVME_REG_CSTS) & NVME_CSTS_SHST_MASK, 1u << 2);  // occurring
  EXPECT_EQ(c.transition(), NvmeCore::Transition::kShuttingDown);
  c.finish_transition();
  EXPECT_EQ(rd(c, NVME_REG_CSTS), NVME_CSTS_RDY | NVME_CSTS_SHST_COMPLETE);
  EXPECT_EQ(c.transition(), NvmeCore::Transition::kNone);
  wr(c, NVME_REG_CC, 0);  // a reset clears SHST
  c.finish_transition();
  EXPECT_EQ(rd(c, NVME_REG_CSTS), 0u);
}

// ---- Admin commands (NVMe 2.0 5)

TEST(NvmeCore, IdentifyControllerAndNamespace) {
  NvmeCore::Params p = params();
  p.capacity_bytes = 8ull << 30;
  p.lba_bytes = 512;
  NvmeCore c(p);
  bring_up(c);
  std::vector<uint8_t> d;
  nvme_sqe s = cmd(NVME_ADMIN_IDENTIFY);
  s.cdw10 = NVME_IDENTIFY_CONTROLLER;
  ASSERT_EQ(c.admin(s, &d).status, 0u);
  ASSERT_EQ(d.size(), NVME_IDENTIFY_BYTES);
  uint16_t vid;
  std::memcpy(&vid, &d[NVME_IDCTRL_VID], 2);
  EXPECT_EQ(vid, NvmeCore::kVendorId);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(&d[NVME_IDCTRL_SN]), 20), "SVP-test            ");
  EXPECT_EQ(std::string(reinterpret_cast<char*>(&d[NVME_IDCTRL_MN]), 12), "smmu-vp NVMe");
  EXPECT_EQ(d[NVME_IDCTRL_MN + 39], ' ');
  EXPECT_EQ(d[NVME_IDCTRL_MDTS], NvmeCore::kMdts);
  EXPECT_EQ(d[NVME_IDCTRL_SQES], 0x66);
  EXPECT_EQ(d[NVME_IDCTRL_CQES], 0x44);
  uint32_t nn;
  std::memcpy(&nn, &d[NVME_IDCTRL_NN], 4);
  EXPECT_EQ(nn, 1u);

  s.cdw10 = NVME_IDENTIFY_NAMESPACE;
  s.nsid = 1;
  ASSERT_EQ(c.admin(s, &d).status, 0u);
  uint64_t nsze, ncap;
  uint32_t lbaf0;
  std::memcpy(&nsze, &d[NVME_IDNS_NSZE], 8);
  std::memcpy(&ncap, &d[NVME_IDNS_NCAP], 8);
  std::memcpy(&lbaf0, &d[NVME_IDNS_LBAF0], 4);
  EXPECT_EQ(nsze, (8ull << 30) / 512);
  EXPECT_EQ(ncap, nsze);
  EXPECT_EQ(d[NVME_IDNS_FLBAS] & 0xF, 0);
  EXPECT_EQ((lbaf0 >> 16) & 0xFF, 9u);  // 2^9 = 512

  s.nsid = 2;
  EXPECT_EQ(c.admin(s, &d).status, err(NVME_SCT_GENERIC, NVME_SC_INVALID_NAMESPACE));
  EXPECT_TRUE(d.empty());
  s.cdw10 = 0x55;  // a CNS the controller does not have
  s.nsid = 1;
  EXPECT_EQ(c.admin(s, &d).status, err(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
  EXPECT_EQ(c.stat(NvmeStat::kAdmin), 4u);
  EXPECT_EQ(c.stat(NvmeStat::kInvalidNamespace), 1u);
  EXPECT_EQ(c.stat(NvmeStat::kInvalidField), 1u);
}

TEST(NvmeCore, NumberOfQueuesGrantsAtMostTheParameter) {
  NvmeCore c(params(4));
  bring_up(c);
  nvme_sqe get = cmd(NVME_ADMIN_GET_FEATURES);
  get.cdw10 = NVME_FEAT_NUM_QUEUES;
  uint32_t dw0 = 0;
  ASSERT_EQ(run(c, get, &dw0), 0u);
  EXPECT_EQ(dw0, NVME_NUM_QUEUES(4, 4));
  nvme_sqe set = cmd(NVME_ADMIN_SET_FEATURES);
  set.cdw10 = NVME_FEAT_NUM_QUEUES;
  set.cdw11 = NVME_NUM_QUEUES(64, 2);
  ASSERT_EQ(run(c, set, &dw0), 0u);
  EXPECT_EQ(dw0, NVME_NUM_QUEUES(4, 2));
  ASSERT_EQ(run(c, get, &dw0), 0u);
  EXPECT_EQ(dw0, NVME_NUM_QUEUES(4, 2));
  // Only 2 CQs granted: qid 3 is invalid now.
  EXPECT_EQ(run(c, create_cq(3, 8, 0)), err(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QID));
  set.cdw11 = 0xFFFFu;  // 65536 SQs: invalid
  EXPECT_EQ(run(c, set), err(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
  get.cdw10 = 0x08;  // interrupt coalescing: not supported
  EXPECT_EQ(run(c, get), err(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
}

TEST(NvmeCore, CreateAndDeleteQueues) {
  NvmeCore c(params(4, 5));
  bring_up(c);
  ASSERT_EQ(run(c, create_cq(1, 64, 4, true, 0x8010'0000)), 0u);
  ASSERT_EQ(run(c, create_sq(1, 128, 1, 0x8020'0000)), 0u);
  ASSERT_NE(c.cq(1), nullptr);
  EXPECT_EQ(c.cq(1)->size, 64u);
  EXPECT_EQ(c.cq(1)->iv, 4u);
  EXPECT_TRUE(c.cq(1)->ien);
  EXPECT_TRUE(c.cq(1)->phase);
  ASSERT_NE(c.sq(1), nullptr);
  EXPECT_EQ(c.sq(1)->size, 128u);
  EXPECT_EQ(c.sq(1)->cqid, 1u);
  EXPECT_EQ(c.sq(1)->base, 0x8020'0000u);
  // Two SQs on one CQ; the CQ goes only after both.
  ASSERT_EQ(run(c, create_sq(2, 16, 1, 0x8030'0000)), 0u);
  nvme_sqe del_cq = cmd(NVME_ADMIN_DELETE_CQ);
  del_cq.cdw10 = 1;
  nvme_sqe del_sq = cmd(NVME_ADMIN_DELETE_SQ);
  del_sq.cdw10 = 1;
  EXPECT_EQ(run(c, del_cq), err(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_DELETION));
  EXPECT_EQ(run(c, del_sq), 0u);
  EXPECT_EQ(run(c, del_sq), err(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QID));  // gone
  EXPECT_EQ(run(c, del_cq), err(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_DELETION));
  del_sq.cdw10 = 2;
  EXPECT_EQ(run(c, del_sq), 0u);
  EXPECT_EQ(run(c, del_cq), 0u);
  EXPECT_EQ(c.cq(1), nullptr);
  // The admin queues cannot be deleted.
  del_sq.cdw10 = 0;
  del_cq.cdw10 = 0;
  EXPECT_EQ(run(c, del_sq), err(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QID));
  EXPECT_EQ(run(c, del_cq), err(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QID));
  EXPECT_EQ(c.stat(NvmeStat::kInvalidQueue), 5u);
}

TEST(NvmeCore, CreateQueueErrors) {
  NvmeCore c(params(4, 5));
  bring_up(c);
  const uint16_t bad_qid = err(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QID);
  const uint16_t bad_size = err(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QSIZE);
  EXPECT_EQ(run(c, create_cq(0, 8, 0)), bad_qid);
  EXPECT_EQ(run(c, create_cq(5, 8, 0)), bad_qid);  // 4 queues
  EXPECT_EQ(run(c, create_cq(1, 1, 0)), bad_size);
  EXPECT_EQ(run(c, create_cq(1, 4097, 0)), bad_size);
  EXPECT_EQ(run(c, create_cq(1, 8, 5)), err(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_VECTOR));  // 5 vectors
  nvme_sqe not_contiguous = create_cq(1, 8, 0);
  not_contiguous.cdw11 &= ~1u;
  EXPECT_EQ(run(c, not_contiguous), err(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
  EXPECT_EQ(run(c, create_cq(1, 8, 0, true, 0x8010'0100)), err(NVME_SCT_GENERIC, NVME_SC_PRP_OFFSET_INVALID));
  EXPECT_EQ(run(c, create_sq(1, 8, 1)), err(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CQ_INVALID));  // no CQ 1 yet
  ASSERT_EQ(run(c, create_cq(1, 8, 0)), 0u);
  EXPECT_EQ(run(c, create_cq(1, 8, 0)), bad_qid);  // exists
  EXPECT_EQ(run(c, create_sq(1, 8, 0)), err(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CQ_INVALID));  // the admin CQ
  EXPECT_EQ(run(c, create_sq(1, 0x10000, 1)), bad_size);
  ASSERT_EQ(run(c, create_sq(1, 8, 1)), 0u);
  EXPECT_EQ(run(c, create_sq(1, 8, 1)), bad_qid);
  EXPECT_EQ(c.stat(NvmeStat::kInvalidQueue), 9u);
  EXPECT_EQ(c.stat(NvmeStat::kInvalidVector), 1u);
  EXPECT_EQ(c.stat(NvmeStat::kInvalidField), 1u);
  EXPECT_EQ(c.stat(NvmeStat::kPrpOffsetInvalid), 1u);
}

TEST(NvmeCore, UnknownOpcodesAndSglsAreRefused) {
  NvmeCore c(params());
  bring_up(c);
  EXPECT_EQ(run(c, cmd(0x02)), err(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE));  // Get Log Page: not here
  EXPECT_EQ(run(c, cmd(0xC0)), err(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE));
  nvme_sqe sgl = cmd(NVME_ADMIN_IDENTIFY);
  sgl.cdw0 |= 1u << 14;  // PSDT: SGL
  sgl.cdw10 = NVME_IDENTIFY_CONTROLLER;
  EXPECT_EQ(run(c, sgl), err(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
  EXPECT_EQ(c.stat(NvmeStat::kInvalidOpcode), 2u);
  EXPECT_EQ(c.stat(NvmeStat::kInvalidField), 1u);
}

// ---- I/O commands (NVM Command Set 3)

nvme_sqe rw(uint8_t opc, uint64_t slba, uint32_t blocks) {
  nvme_sqe s = cmd(opc);
  s.nsid = 1;
  s.cdw10 = static_cast<uint32_t>(slba);
  s.cdw11 = static_cast<uint32_t>(slba >> 32);
  s.cdw12 = blocks - 1;
  return s;
}

TEST(NvmeCore, IoCommandsAreDecodedAndChecked) {
  NvmeCore c(params());  // 1 GiB of 4 KiB blocks: 262144 LBAs
  const NvmeCore::IoCommand r = c.decode_io(rw(NVME_CMD_READ, 10, 32));
  EXPECT_EQ(r.status, 0u);
  EXPECT_EQ(r.offset, 10u * 4096);
  EXPECT_EQ(r.bytes, 32u * 4096);
  EXPECT_EQ(c.decode_io(rw(NVME_CMD_WRITE, 262143, 1)).status, 0u);  // the last block
  const uint16_t range = err(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE);
  EXPECT_EQ(c.decode_io(rw(NVME_CMD_WRITE, 262143, 2)).status, range);
  EXPECT_EQ(c.decode_io(rw(NVME_CMD_READ, 262144, 1)).status, range);
  EXPECT_EQ(c.decode_io(rw(NVME_CMD_READ, ~0ull - 1, 4)).status, range);  // no wrap-around
  // Beyond MDTS (4 MiB).
  EXPECT_EQ(c.decode_io(rw(NVME_CMD_READ, 0, 1025)).status, err(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD));
  nvme_sqe ns2 = rw(NVME_CMD_READ, 0, 1);
  ns2.nsid = 2;
  EXPECT_EQ(c.decode_io(ns2).status, err(NVME_SCT_GENERIC, NVME_SC_INVALID_NAMESPACE));
  nvme_sqe flush = cmd(NVME_CMD_FLUSH);
  flush.nsid = 0xFFFFFFFFu;  // every namespace
  EXPECT_EQ(c.decode_io(flush).status, 0u);
  EXPECT_EQ(c.decode_io(cmd(0x05)).status, err(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE));  // Compare
  EXPECT_EQ(c.stat(NvmeStat::kReads), 5u);
  EXPECT_EQ(c.stat(NvmeStat::kWrites), 2u);
  EXPECT_EQ(c.stat(NvmeStat::kFlushes), 1u);
  EXPECT_EQ(c.stat(NvmeStat::kLbaOutOfRange), 3u);
  EXPECT_EQ(c.stat(NvmeStat::kInvalidOpcode), 1u);
}

TEST(NvmeCore, DataTransferErrorMayBeRetried) {
  NvmeCore c(params());
  const uint16_t s = c.fail(NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR);
  EXPECT_EQ(NVME_STATUS_SC(s), NVME_SC_DATA_TRANSFER_ERROR);
  EXPECT_EQ(s & NVME_STATUS_DNR, 0u);
  EXPECT_EQ(c.stat(NvmeStat::kDataTransferErrors), 1u);
}

// ---- Queues, doorbells and phase tags (NVMe 2.0 3.3)

TEST(NvmeCore, PhaseTagFlipsOnEachPassAndAFullQueueRefuses) {
  NvmeCore c(params());
  bring_up(c, 4);  // 4-entry admin CQ: 3 completions fit
  std::vector<uint64_t> addrs;
  std::vector<bool> phases;
  auto post = [&]() {
    nvme_cqe e{};
    uint64_t a = 0;
    if (!c.post(0, &e, &a)) return false;
    addrs.push_back(a);
    phases.push_back(e.status & NVME_CQE_PHASE);
    return true;
  };
  EXPECT_TRUE(post());
  EXPECT_TRUE(post());
  EXPECT_TRUE(post());
  EXPECT_FALSE(post());  // full: the host has consumed nothing
  EXPECT_TRUE(wr(c, NVME_CQ_HEAD_DB(0, 0), 2).cq_doorbell);
  EXPECT_TRUE(post());  // slot 3
  EXPECT_TRUE(post());  // slot 0, second pass
  EXPECT_FALSE(post());
  wr(c, NVME_CQ_HEAD_DB(0, 0), 1);
  EXPECT_TRUE(post());
  ASSERT_EQ(addrs.size(), 6u);
  const std::vector<uint64_t> want_addr = {kAcq, kAcq + 16, kAcq + 32, kAcq + 48, kAcq, kAcq + 16};
  const std::vector<bool> want_phase = {true, true, true, true, false, false};
  EXPECT_EQ(addrs, want_addr);
  EXPECT_EQ(phases, want_phase);
  EXPECT_EQ(c.stat(NvmeStat::kDoorbellErrors), 0u);
}

TEST(NvmeCore, SubmissionDoorbellAndFetchInBatchesNotAcrossTheEnd) {
  NvmeCore c(params());
  bring_up(c, 8);
  const NvmeCore::Effects fx = wr(c, NVME_SQ_TAIL_DB(0, 0), 6);
  EXPECT_EQ(fx.sq, 0);
  EXPECT_EQ(fx.sq_from, 0u);
  EXPECT_EQ(fx.sq_to, 6u);
  EXPECT_EQ(c.next_sq(0), 0);
  uint32_t first = 99;
  EXPECT_EQ(c.fetch(0, 4, &first), 4u);
  EXPECT_EQ(first, 0u);
  EXPECT_EQ(c.fetch(0, 4, &first), 2u);
  EXPECT_EQ(first, 4u);
  EXPECT_EQ(c.next_sq(0), -1);
  wr(c, NVME_SQ_TAIL_DB(0, 0), 3);  // wraps: 6, 7, 0, 1, 2
  EXPECT_EQ(c.fetch(0, 8, &first), 2u);  // up to the end
  EXPECT_EQ(first, 6u);
  EXPECT_EQ(c.fetch(0, 8, &first), 3u);
  EXPECT_EQ(first, 0u);
}

TEST(NvmeCore, RoundRobinOverQueuesWithWork) {
  NvmeCore c(params());
  bring_up(c);
  ASSERT_EQ(run(c, create_cq(1, 8, 1)), 0u);
  ASSERT_EQ(run(c, create_sq(1, 8, 1)), 0u);
  ASSERT_EQ(run(c, create_sq(3, 8, 1, 0x8040'0000)), 0u);
  wr(c, NVME_SQ_TAIL_DB(1, 0), 1);
  wr(c, NVME_SQ_TAIL_DB(3, 0), 1);
  wr(c, NVME_SQ_TAIL_DB(0, 0), 1);
  EXPECT_EQ(c.next_sq(0), 1);
  EXPECT_EQ(c.next_sq(1), 3);
  EXPECT_EQ(c.next_sq(3), 0);
}

TEST(NvmeCore, InvalidDoorbellsAreCountedAndIgnored) {
  NvmeCore c(params(4));
  wr(c, NVME_SQ_TAIL_DB(0, 0), 1);  // not ready yet
  EXPECT_EQ(c.stat(NvmeStat::kDoorbellErrors), 1u);
  EXPECT_FALSE(c.fatal());
  bring_up(c, 8);
  ASSERT_EQ(run(c, create_cq(1, 8, 1)), 0u);
  ASSERT_EQ(run(c, create_sq(1, 8, 1)), 0u);
  wr(c, NVME_SQ_TAIL_DB(1, 0), 5);
  EXPECT_EQ(wr(c, NVME_SQ_TAIL_DB(1, 0), 8).sq, -1);  // beyond the queue
  EXPECT_EQ(wr(c, NVME_SQ_TAIL_DB(1, 0), 3).sq, -1);  // backwards over submitted entries
  EXPECT_EQ(c.sq(1)->tail, 5u);
  wr(c, NVME_SQ_TAIL_DB(2, 0), 1);                    // no SQ 2
  wr(c, NVME_CQ_HEAD_DB(3, 0), 0);                    // no CQ 3
  wr(c, NVME_SQ_TAIL_DB(40, 0), 0);                   // beyond every queue
  EXPECT_FALSE(wr(c, NVME_CQ_HEAD_DB(1, 0), 1).cq_doorbell);  // nothing posted yet
  EXPECT_EQ(c.stat(NvmeStat::kDoorbellErrors), 7u);
  EXPECT_FALSE(c.fatal());  // I/O queues: ignored
  // The admin queue's doorbell beyond its size: the controller cannot go on.
  wr(c, NVME_SQ_TAIL_DB(0, 0), 8);
  EXPECT_TRUE(c.fatal());
  EXPECT_EQ(rd(c, NVME_REG_CSTS), NVME_CSTS_RDY | NVME_CSTS_CFS);
  EXPECT_EQ(c.stat(NvmeStat::kFatal), 1u);
  EXPECT_FALSE(c.running());
}

// ---- PRPs (NVMe 2.0 4.1.1)

// Host memory holding PRP lists; records each list read.
struct Lists {
  std::map<uint64_t, uint64_t> entries;  // address -> value
  std::vector<std::pair<uint64_t, uint32_t>> reads;
  uint64_t fault = ~0ull;
  PrpListReader reader() {
    return [this](uint64_t addr, uint32_t n, uint64_t* out) {
      reads.emplace_back(addr, n);
      EXPECT_LE(addr % 4096 + n * 8ull, 4096u) << "a list read crosses a page";
      if (addr / 4096 == fault / 4096) return false;
      for (uint32_t i = 0; i < n; ++i) out[i] = entries.count(addr + 8 * i) ? entries[addr + 8 * i] : 0xBAD;
      return true;
    };
  }
  void fill(uint64_t at, const std::vector<uint64_t>& v) {
    for (size_t i = 0; i < v.size(); ++i) entries[at + 8 * i] = v[i];
  }
};

uint64_t page(unsigned i) { return 0x9000'0000ull + i * 0x10000ull; }  // scattered data pages

TEST(NvmePrp, OneAndTwoPagesNeedNoList) {
  Lists l;
  std::vector<PrpSegment> s;
  ASSERT_EQ(prp_segments(page(0), 0, 4096, 4096, l.reader(), &s), PrpResult::kOk);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].addr, page(0));
  EXPECT_EQ(s[0].len, 4096u);
  // An offset in PRP1: 512 bytes in its page, the rest in PRP2's.
  ASSERT_EQ(prp_segments(page(0) + 3584, page(1), 4096, 4096, l.reader(), &s), PrpResult::kOk);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].addr, page(0) + 3584);
  EXPECT_EQ(s[0].len, 512u);
  EXPECT_EQ(s[1].addr, page(1));
  EXPECT_EQ(s[1].len, 3584u);
  // Exactly two pages.
  ASSERT_EQ(prp_segments(page(0), page(1), 8192, 4096, l.reader(), &s), PrpResult::kOk);
  EXPECT_EQ(s.size(), 2u);
  EXPECT_TRUE(l.reads.empty());
  // A small transfer inside PRP1's page ignores PRP2.
  ASSERT_EQ(prp_segments(page(0) + 64, 0xBAD, 512, 4096, l.reader(), &s), PrpResult::kOk);
  EXPECT_EQ(s.size(), 1u);
}

TEST(NvmePrp, ThreePagesUseAList) {
  Lists l;
  const uint64_t list = 0x7000'0000;
  l.fill(list, {page(1), page(2)});
  std::vector<PrpSegment> s;
  ASSERT_EQ(prp_segments(page(0) + 1024, list, 3 * 4096 - 1024, 4096, l.reader(), &s), PrpResult::kOk);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].len, 3072u);
  EXPECT_EQ(s[1].addr, page(1));
  EXPECT_EQ(s[2].addr, page(2));
  EXPECT_EQ(s[2].len, 4096u);
  ASSERT_EQ(l.reads.size(), 1u);
  EXPECT_EQ(l.reads[0], std::make_pair(list, 2u));  // only the entries needed
}

TEST(NvmePrp, AListThatChainsToASecondListPage) {
  Lists l;
  // 600 pages after PRP1's: the first list page holds 511 data entries and a
  // pointer to the second, which holds the remaining 89.
  const uint64_t list1 = 0x7000'0000, list2 = 0x7100'0000;
  std::vector<uint64_t> first;
  for (unsigned i = 0; i < 511; ++i) first.push_back(page(1 + i));
  first.push_back(list2);
  l.fill(list1, first);
  std::vector<uint64_t> second;
  for (unsigned i = 0; i < 89; ++i) second.push_back(page(512 + i));
  l.fill(list2, second);
  std::vector<PrpSegment> s;
  const uint64_t len = 601ull * 4096 - 8;  // PRP1 starts 8 bytes into its page
  ASSERT_EQ(prp_segments(page(0) + 8, list1, len, 4096, l.reader(), &s), PrpResult::kOk);
  ASSERT_EQ(s.size(), 601u);
  uint64_t total = 0;
  for (unsigned i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i].addr, i == 0 ? page(0) + 8 : page(i)) << i;
    total += s[i].len;
  }
  EXPECT_EQ(total, len);
  ASSERT_EQ(l.reads.size(), 2u);
  EXPECT_EQ(l.reads[0], std::make_pair(list1, 512u));
  EXPECT_EQ(l.reads[1], std::make_pair(list2, 89u));
}

TEST(NvmePrp, AFullListPageNeedsNoChain) {
  Lists l;
  const uint64_t list = 0x7000'0000;
  std::vector<uint64_t> e;
  for (unsigned i = 0; i < 512; ++i) e.push_back(page(1 + i));
  l.fill(list, e);
  std::vector<PrpSegment> s;
  ASSERT_EQ(prp_segments(page(0), list, 513ull * 4096, 4096, l.reader(), &s), PrpResult::kOk);
  EXPECT_EQ(s.size(), 513u);
  EXPECT_EQ(s.back().addr, page(512));
  EXPECT_EQ(l.reads.size(), 1u);
}

TEST(NvmePrp, AListStartingInsideItsPageChainsAtThatPageEnd) {
  Lists l;
  const uint64_t list1 = 0x7000'0000 + 4096 - 24, list2 = 0x7100'0000;  // room for 3 entries
  l.fill(list1, {page(1), page(2), list2});
  l.fill(list2, {page(3), page(4)});
  std::vector<PrpSegment> s;
  ASSERT_EQ(prp_segments(page(0), list1, 5 * 4096, 4096, l.reader(), &s), PrpResult::kOk);
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[4].addr, page(4));
  ASSERT_EQ(l.reads.size(), 2u);
  EXPECT_EQ(l.reads[0], std::make_pair(list1, 3u));
}

TEST(NvmePrp, OffsetsOutsidePrp1AreInvalid) {
  Lists l;
  std::vector<PrpSegment> s;
  EXPECT_EQ(prp_segments(page(0) + 2, page(1), 4096, 4096, l.reader(), &s), PrpResult::kOffsetInvalid);  // not dword
  EXPECT_EQ(prp_segments(page(0), page(1) + 512, 8192, 4096, l.reader(), &s), PrpResult::kOffsetInvalid);
  EXPECT_EQ(prp_segments(page(0), 0x7000'0004, 3 * 4096, 4096, l.reader(), &s), PrpResult::kOffsetInvalid);
  l.fill(0x7000'0000, {page(1), page(2) + 64});
  EXPECT_EQ(prp_segments(page(0), 0x7000'0000, 3 * 4096, 4096, l.reader(), &s), PrpResult::kOffsetInvalid);
  // A chain pointer with an offset.
  const uint64_t list1 = 0x7200'0000 + 4096 - 16;
  l.fill(list1, {page(1), 0x7300'0008});
  EXPECT_EQ(prp_segments(page(0), list1, 4 * 4096, 4096, l.reader(), &s), PrpResult::kOffsetInvalid);
}

TEST(NvmePrp, AnAbortedListReadStopsTheWalk) {
  Lists l;
  l.fault = 0x7000'0000;
  std::vector<PrpSegment> s;
  EXPECT_EQ(prp_segments(page(0), 0x7000'0000, 3 * 4096, 4096, l.reader(), &s), PrpResult::kListAborted);
}

// ---- The drive's data

TEST(NvmeCore, DataReadsBackAndUnwrittenBlocksAreZero) {
  NvmeCore c(params());
  std::vector<uint8_t> in(3 * 4096 + 100), out(in.size());
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7 + 3);
  c.media_write(4096 * 5 + 512, in.data(), in.size());
  EXPECT_EQ(c.stored_blocks(), 4u);
  c.media_read(4096 * 5 + 512, out.data(), out.size());
  EXPECT_EQ(in, out);
  std::vector<uint8_t> around(4096 * 6, 0xEE);
  c.media_read(4096 * 4, around.data(), around.size());
  for (size_t i = 0; i < 4096 + 512; ++i) ASSERT_EQ(around[i], 0) << i;
  EXPECT_EQ(around[4096 + 512], in[0]);
  c.media_read(1ull << 29, out.data(), 4096);  // never written
  for (size_t i = 0; i < 4096; ++i) ASSERT_EQ(out[i], 0);
}

}  // namespace
}  // namespace smmu_vp

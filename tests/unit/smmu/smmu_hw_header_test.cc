// sw/drivers/smmu/smmu_hw.h (the C definitions drivers use) must say exactly what the
// model's C++ declarations say: every value is compared here.
#include <gtest/gtest.h>

#include "smmu/commands.h"
#include "smmu/descriptors.h"
#include "smmu/event_queue.h"
#include "smmu/pri_queue.h"
#include "smmu/registers.h"
#include "drivers/smmu/smmu_hw.h"

namespace smmu_vp::smmu {
namespace {

TEST(SmmuHwHeader, RegisterOffsets) {
  static_assert(SMMU_IDR0 == reg::kIdr0 && SMMU_IDR1 == reg::kIdr1 && SMMU_IDR3 == reg::kIdr3 &&
                SMMU_IDR5 == reg::kIdr5);
  static_assert(SMMU_CR0 == reg::kCr0 && SMMU_CR0ACK == reg::kCr0Ack && SMMU_CR1 == reg::kCr1 &&
                SMMU_CR2 == reg::kCr2 && SMMU_GBPA == reg::kGbpa);
  static_assert(SMMU_IRQ_CTRL == reg::kIrqCtrl && SMMU_IRQ_CTRLACK == reg::kIrqCtrlAck &&
                SMMU_GERROR == reg::kGerror && SMMU_GERRORN == reg::kGerrorn);
  static_assert(SMMU_STRTAB_BASE == reg::kStrtabBase && SMMU_STRTAB_BASE_CFG == reg::kStrtabBaseCfg);
  static_assert(SMMU_CMDQ_BASE == reg::kCmdqBase && SMMU_CMDQ_PROD == reg::kCmdqProd &&
                SMMU_CMDQ_CONS == reg::kCmdqCons);
  static_assert(SMMU_EVENTQ_BASE == reg::kEventqBase && SMMU_EVENTQ_PROD == reg::kEventqProd &&
                SMMU_EVENTQ_CONS == reg::kEventqCons && SMMU_EVENTQ_IRQ_CFG0 == reg::kEventqIrqCfg0 &&
                SMMU_EVENTQ_IRQ_CFG1 == reg::kEventqIrqCfg1);
  SUCCEED();
}

TEST(SmmuHwHeader, RegisterFields) {
  EXPECT_EQ(SMMU_IDR0_S1P, reg::idr0::kS1p.mask32());
  EXPECT_EQ(SMMU_IDR0_S2P, reg::idr0::kS2p.mask32());
  EXPECT_EQ(SMMU_IDR0_MSI, reg::idr0::kMsi.mask32());
  EXPECT_EQ(SMMU_IDR0_SEV, reg::idr0::kSev.mask32());
  EXPECT_EQ(SMMU_IDR1_SIDSIZE_MASK, reg::idr1::kSidSize.mask32());
  EXPECT_EQ(SMMU_IDR1_SSIDSIZE_MASK << SMMU_IDR1_SSIDSIZE_SHIFT, reg::idr1::kSsidSize.mask32());
  EXPECT_EQ(SMMU_IDR5_OAS_MASK, reg::idr5::kOas.mask32());
  EXPECT_EQ(SMMU_IDR5_GRAN4K, reg::idr5::kGran4K.mask32());
  EXPECT_EQ(SMMU_IDR0_HYP, reg::idr0::kHyp.mask32());
  EXPECT_EQ(SMMU_IDR0_CD2L, reg::idr0::kCd2l.mask32());
  EXPECT_EQ(SMMU_IDR0_ST_LEVEL_MASK << SMMU_IDR0_ST_LEVEL_SHIFT, reg::idr0::kStLevel.mask32());
  EXPECT_EQ(SMMU_IDR1_QS_MASK << SMMU_IDR1_CMDQS_SHIFT, reg::idr1::kCmdqs.mask32());
  EXPECT_EQ(SMMU_IDR1_QS_MASK << SMMU_IDR1_EVENTQS_SHIFT, reg::idr1::kEventqs.mask32());
  EXPECT_EQ(SMMU_IDR1_ECMDQ, reg::idr1::kEcmdq.mask32());
  EXPECT_EQ(SMMU_IDR3_RIL, reg::idr3::kRil.mask32());
  EXPECT_EQ(SMMU_IDR6, reg::kIdr6);
  EXPECT_EQ(SMMU_IDR6_LOG2NUM_MASK << SMMU_IDR6_LOG2NUMP_SHIFT, reg::idr6::kCmdqControlPageLog2NumP.mask32());
  EXPECT_EQ(SMMU_IDR6_LOG2NUM_MASK << SMMU_IDR6_LOG2NUMQ_SHIFT, reg::idr6::kCmdqControlPageLog2NumQ.mask32());
  EXPECT_EQ(SMMU_CMDQ_CONTROL_PAGE_BASE(3), reg::cmdq_control_page_base_offset(3));
  EXPECT_EQ(SMMU_CMDQ_CONTROL_PAGE_ADDR_MASK, reg::cmdq_control_page_base::kAddr.mask());
  EXPECT_EQ(SMMU_ECMDQ_BASE, reg::kEcmdqBase);
  EXPECT_EQ(SMMU_ECMDQ_PROD, reg::kEcmdqProd);
  EXPECT_EQ(SMMU_ECMDQ_CONS, reg::kEcmdqCons);
  EXPECT_EQ(SMMU_ECMDQ_PROD_EN, reg::ecmdq_prod::kEn.mask32());
  EXPECT_EQ(SMMU_ECMDQ_PROD_ERRACK, reg::ecmdq_prod::kErrAck.mask32());
  EXPECT_EQ(SMMU_ECMDQ_CONS_ENACK, reg::ecmdq_cons::kEnAck.mask32());
  EXPECT_EQ(SMMU_ECMDQ_CONS_ERR, reg::ecmdq_cons::kErr.mask32());
  EXPECT_EQ(SMMU_GERROR_CMDQP_ERR, reg::gerror::kCmdqpErr.mask32());
  EXPECT_EQ(SMMU_CR0_SMMUEN, reg::cr0::kSmmuEn.mask32());
  EXPECT_EQ(SMMU_CR0_EVTQEN, reg::cr0::kEventqEn.mask32());
  EXPECT_EQ(SMMU_CR0_CMDQEN, reg::cr0::kCmdqEn.mask32());
  EXPECT_EQ(SMMU_GBPA_UPDATE, reg::gbpa::kUpdate.mask32());
  EXPECT_EQ(SMMU_GBPA_ABORT, reg::gbpa::kAbort.mask32());
  EXPECT_EQ(SMMU_IRQ_CTRL_GERROR_IRQEN, reg::irq_ctrl::kGerrorIrqEn.mask32());
  EXPECT_EQ(SMMU_IRQ_CTRL_EVTQ_IRQEN, reg::irq_ctrl::kEventqIrqEn.mask32());
  EXPECT_EQ(SMMU_STRTAB_CFG_LOG2SIZE_MASK, reg::strtab_base_cfg::kLog2Size.mask32());
  EXPECT_EQ(0x1Fu << SMMU_STRTAB_CFG_SPLIT_SHIFT, reg::strtab_base_cfg::kSplit.mask32());
  EXPECT_EQ(0x3u << SMMU_STRTAB_CFG_FMT_SHIFT, reg::strtab_base_cfg::kFmt.mask32());
  EXPECT_EQ(SMMU_STRTAB_CFG_FMT_2LVL, reg::strtab_base_cfg::kFmtTwoLevel);
  EXPECT_EQ(SMMU_Q_BASE_LOG2SIZE_MASK, reg::queue_base::kLog2Size.mask32());
  EXPECT_EQ(SMMU_Q_OVFLG, reg::queue_prod::kOvflg.mask32());
  EXPECT_EQ(SMMU_Q_OVFLG, reg::queue_cons::kOvackflg.mask32());
  EXPECT_EQ(SMMU_Q_WR_RD_MASK, reg::queue_prod::kWr.mask32());
}

TEST(SmmuHwHeader, SteAndCdLayouts) {
  DecodedSte s;
  s.config = ste::kS1Trans;
  s.s1_context_ptr = 0x1234'5680;
  s.s1_cdmax = 7;
  s.s1dss = ste::kSubstream0;
  const SteWords w = encode_ste(s);
  EXPECT_EQ(w[0], SMMU_STE0_V | (uint64_t{SMMU_STE_CONFIG_S1} << SMMU_STE0_CONFIG_SHIFT) |
                      (0x1234'5680ull & SMMU_STE0_S1CTXPTR_MASK) | (7ull << SMMU_STE0_S1CDMAX_SHIFT));
  EXPECT_EQ(w[1] & SMMU_STE1_S1DSS_MASK, uint64_t{ste::kSubstream0});
  EXPECT_EQ(SMMU_STE_CONFIG_ABORT, ste::kAbort);
  EXPECT_EQ(SMMU_STE_CONFIG_BYPASS, ste::kBypass);
  EXPECT_EQ(SMMU_STE_CONFIG_S2, ste::kS2Trans);
  EXPECT_EQ(SMMU_STE_CONFIG_NESTED, ste::kNested);
  EXPECT_EQ(SMMU_STE_DWORDS * 8, ste::kBytes);

  DecodedCd c;
  c.t0sz = 16;
  c.granule = Granule::k64K;
  c.ips_bits = 48;
  c.asid = 0xBEEF;
  c.ttb0 = 0x8765'4320;
  const CdWords cw = encode_cd(c);
  EXPECT_EQ(cw[0], 16ull | (1ull << SMMU_CD0_TG0_SHIFT) | SMMU_CD0_EPD1 | SMMU_CD0_V | (5ull << SMMU_CD0_IPS_SHIFT) |
                       SMMU_CD0_AA64 | SMMU_CD0_R | SMMU_CD0_A | (0xBEEFull << SMMU_CD0_ASID_SHIFT));
  EXPECT_EQ(cw[1], 0x8765'4320ull & SMMU_CD1_TTB0_MASK);

  // TG0 encodings, and MAIR as the whole of dword 3.
  EXPECT_EQ(SMMU_CD0_TG0_4K, encode_tg(Granule::k4K));
  EXPECT_EQ(SMMU_CD0_TG0_64K, encode_tg(Granule::k64K));
  EXPECT_EQ(SMMU_CD0_TG0_16K, encode_tg(Granule::k16K));
  c.mair = 0x0000'0000'f404'ff44ull;
  EXPECT_EQ(encode_cd(c)[SMMU_CD_MAIR_DWORD], c.mair);

  // IR0/OR0/SH0 lie in the gap the model's decoder leaves between TG0[7:6]
  // and EPD0[14]: setting them changes nothing it decodes.
  // The gap is exactly [13:8]: bit 7 belongs to TG0 and bit 14 to EPD0.
  EXPECT_EQ(SMMU_CD0_IR0_SHIFT, SMMU_CD0_TG0_SHIFT + 2);
  EXPECT_EQ(SMMU_CD0_OR0_SHIFT, SMMU_CD0_IR0_SHIFT + 2);
  EXPECT_EQ(SMMU_CD0_SH0_SHIFT, SMMU_CD0_OR0_SHIFT + 2);
  DecodedCd epd0;
  CdWords epd0_words = encode_cd(c);
  epd0_words[0] |= 1ull << (SMMU_CD0_SH0_SHIFT + 2);
  ASSERT_TRUE(decode_cd(epd0_words, SmmuCaps{}, &epd0).ok());
  EXPECT_TRUE(epd0.epd0);
  CdWords with_attrs = encode_cd(c);
  with_attrs[0] |= (1ull << SMMU_CD0_IR0_SHIFT) | (1ull << SMMU_CD0_OR0_SHIFT) | (3ull << SMMU_CD0_SH0_SHIFT);
  DecodedCd plain, attrs;
  const SmmuCaps caps;
  ASSERT_TRUE(decode_cd(encode_cd(c), caps, &plain).ok());
  ASSERT_TRUE(decode_cd(with_attrs, caps, &attrs).ok());
  EXPECT_EQ(attrs.t0sz, plain.t0sz);
  EXPECT_EQ(attrs.granule, plain.granule);
  EXPECT_EQ(attrs.epd0, plain.epd0);
  EXPECT_EQ(attrs.ips_bits, plain.ips_bits);
  EXPECT_EQ(attrs.asid, plain.asid);
  EXPECT_EQ(attrs.ttb0, plain.ttb0);
  EXPECT_EQ(attrs.mair, plain.mair);
}

TEST(SmmuHwHeader, EventRecordLayout) {
  EventRecord r;
  r.id = EventId::kTranslation;
  r.sid = 0xABCD;
  r.rnw = true;
  const auto w = r.encode();
  EXPECT_EQ(w[0] & SMMU_EVT0_ID_MASK, SMMU_EVT_F_TRANSLATION);
  EXPECT_EQ(w[0] >> SMMU_EVT0_SID_SHIFT, 0xABCDu);
  EXPECT_TRUE(w[1] & SMMU_EVT1_RNW);
  EXPECT_EQ(SMMU_EVT_F_PERMISSION, static_cast<unsigned>(EventId::kPermission));
  EXPECT_EQ(SMMU_EVT_C_BAD_STE, static_cast<unsigned>(EventId::kBadSte));
  EXPECT_EQ(SMMU_EVT_DWORDS * 8, EventRecord::kBytes);
}

TEST(SmmuHwHeader, CommandLayouts) {
  EXPECT_EQ(SMMU_CMD_CFGI_STE, static_cast<unsigned>(Opcode::kCfgiSte));
  EXPECT_EQ(SMMU_CMD_CFGI_ALL, static_cast<unsigned>(Opcode::kCfgiSteRange));
  EXPECT_EQ(SMMU_CMD_CFGI_CD, static_cast<unsigned>(Opcode::kCfgiCd));
  EXPECT_EQ(SMMU_CMD_TLBI_NH_ASID, static_cast<unsigned>(Opcode::kTlbiNhAsid));
  EXPECT_EQ(SMMU_CMD_TLBI_NH_VA, static_cast<unsigned>(Opcode::kTlbiNhVa));
  EXPECT_EQ(SMMU_CMD_TLBI_EL2_ALL, static_cast<unsigned>(Opcode::kTlbiEl2All));
  EXPECT_EQ(SMMU_CMD_TLBI_NSNH_ALL, static_cast<unsigned>(Opcode::kTlbiNsnhAll));
  EXPECT_EQ(SMMU_CMD_SYNC, static_cast<unsigned>(Opcode::kCmdSync));
  // A range TLBI_NH_VA built the C way equals the model's encoder.
  const CommandWords m = cmd_tlbi_nh_va(0x1234, 7, 0x0000'8000'1234'5000ull, true, 3, 5, 1, 3);
  const uint64_t w0 = SMMU_CMD_TLBI_NH_VA | (3ull << SMMU_CMD0_NUM_SHIFT) | (5ull << SMMU_CMD0_SCALE_SHIFT) |
                      (7ull << SMMU_CMD0_VMID_SHIFT) | (0x1234ull << SMMU_CMD0_ASID_SHIFT);
  const uint64_t w1 = SMMU_CMD1_LEAF | (3ull << SMMU_CMD1_TTL_SHIFT) | (1ull << SMMU_CMD1_TG_SHIFT) |
                      (0x0000'8000'1234'5000ull & SMMU_CMD1_ADDR_MASK);
  EXPECT_EQ(m[0], w0);
  EXPECT_EQ(m[1], w1);
  const CommandWords ste = cmd_cfgi_ste(0xABCD, true);
  EXPECT_EQ(ste[0], SMMU_CMD_CFGI_STE | (0xABCDull << SMMU_CMD0_SID_SHIFT));
  EXPECT_EQ(ste[1], SMMU_CMD1_LEAF);
  const CommandWords all = cmd_cfgi_all();
  EXPECT_EQ(all[1] & 0x1F, 31u << SMMU_CMD1_RANGE_SHIFT);
  const CommandWords sync = cmd_sync(SyncCs::kIrq, 0x8000'1000, 0xBEEF);
  EXPECT_EQ(sync[0], SMMU_CMD_SYNC | (uint64_t{SMMU_SYNC_CS_IRQ} << SMMU_CMD0_SYNC_CS_SHIFT) |
                         (0xBEEFull << SMMU_CMD0_SYNC_MSIDATA_SHIFT));
  EXPECT_EQ(sync[1], 0x8000'1000ull & SMMU_CMD1_MSIADDR_MASK);
  EXPECT_EQ(SMMU_CMDQ_CONS_ERR_MASK << SMMU_CMDQ_CONS_ERR_SHIFT, reg::queue_cons::kErr.mask32());
  EXPECT_EQ(SMMU_CERROR_ILL, reg::cerror::kIll);
  EXPECT_EQ(SMMU_GERROR_CMDQ_ERR, reg::gerror::kCmdqErr.mask32());
  // ATC_INV (4.5.1) built the C way equals the model's encoder.
  EXPECT_EQ(SMMU_CMD_ATC_INV, static_cast<unsigned>(Opcode::kAtcInv));
  const CommandWords atc = cmd_atc_inv(0x42, 0x1234'0000, 5);
  EXPECT_EQ(atc[0], SMMU_CMD_ATC_INV | (0x42ull << SMMU_CMD0_SID_SHIFT));
  EXPECT_EQ(atc[1], (0x1234'0000ull & SMMU_CMD1_ADDR_MASK) | (5ull & SMMU_CMD1_ATC_SIZE_MASK));
  EXPECT_EQ(SMMU_ATC_INV_SIZE_ALL, unsigned{kAtcInvSizeAll});
  EXPECT_EQ(SMMU_CERROR_ATC_INV_SYNC, reg::cerror::kAtcInvSync);
  EXPECT_EQ(uint32_t{SMMU_ECMDQ_CONS_ERR_REASON_MASK} << SMMU_ECMDQ_CONS_ERR_REASON_SHIFT,
            reg::ecmdq_cons::kErrReason.mask32());
}

// The PRI side (chapter 8, 4.5.2) as the C driver uses it.
TEST(SmmuHwHeader, PriLayouts) {
  EXPECT_EQ(SMMU_IDR0_PRI, reg::idr0::kPri.mask32());
  EXPECT_EQ(SMMU_IDR1_PRIQS_SHIFT, reg::idr1::kPriqs.lo);
  EXPECT_EQ(SMMU_CR0_PRIQEN, reg::cr0::kPriqEn.mask32());
  EXPECT_EQ(SMMU_IRQ_CTRL_PRIQ_IRQEN, reg::irq_ctrl::kPriqIrqEn.mask32());
  EXPECT_EQ(SMMU_PRIQ_BASE, reg::kPriqBase);
  EXPECT_EQ(SMMU_PRIQ_IRQ_CFG0, reg::kPriqIrqCfg0);
  EXPECT_EQ(SMMU_PRIQ_IRQ_CFG1, reg::kPriqIrqCfg1);
  EXPECT_EQ(SMMU_PRIQ_PROD, reg::kPriqProd);
  EXPECT_EQ(SMMU_PRIQ_CONS, reg::kPriqCons);
  PageRequestRecord r;
  r.sid = 0x1234;
  r.write = true;
  r.last = true;
  r.prg_index = 0x1AB;
  r.addr = 0x8765'4000;
  const std::array<uint64_t, 2> w = r.encode();
  EXPECT_EQ(SMMU_PRIQ_DWORDS * 8, PageRequestRecord::kBytes);
  EXPECT_EQ(w[0] & SMMU_PRIQ0_SID_MASK, 0x1234u);
  EXPECT_TRUE(w[0] & SMMU_PRIQ0_WRITE);
  EXPECT_TRUE(w[0] & SMMU_PRIQ0_LAST);
  EXPECT_EQ(w[1] & SMMU_PRIQ1_PRG_MASK, 0x1ABu);
  EXPECT_EQ(w[1] & SMMU_PRIQ1_ADDR_MASK, 0x8765'4000u);
  const CommandWords resp = cmd_pri_resp(0x42, 0x1AB, SMMU_PRI_RESP_SUCCESS);
  EXPECT_EQ(resp[0], SMMU_CMD_PRI_RESP | (0x42ull << SMMU_CMD0_SID_SHIFT));
  EXPECT_EQ(resp[1], 0x1ABull | (uint64_t{SMMU_PRI_RESP_SUCCESS} << SMMU_CMD1_PRI_RESP_SHIFT));
  EXPECT_EQ(prg_code_of_resp(SMMU_PRI_RESP_SUCCESS), PrgResponseCode::kSuccess);
  EXPECT_EQ(prg_code_of_resp(SMMU_PRI_RESP_INVALID), PrgResponseCode::kInvalidRequest);
  EXPECT_EQ(prg_code_of_resp(SMMU_PRI_RESP_FAILURE), PrgResponseCode::kResponseFailure);
}

// The stall side (3.12.2, 4.7.1, 5.4, 7.3) as the C driver uses it.
TEST(SmmuHwHeader, StallLayouts) {
  EXPECT_EQ(SMMU_IDR0_STALL_MODEL_SHIFT, reg::idr0::kStallModel.lo);
  DecodedCd c;
  c.stall = true;
  EXPECT_TRUE(encode_cd(c)[0] & SMMU_CD0_S);
  EventRecord e;
  e.id = EventId::kTranslation;
  e.stall = true;
  e.stag = 0xBEEF;
  const std::array<uint64_t, 4> w = e.encode();
  EXPECT_TRUE(w[1] & SMMU_EVT1_STALL);
  EXPECT_EQ(w[1] & SMMU_EVT1_STAG_MASK, 0xBEEFu);
  const CommandWords retry = cmd_resume(0x42, 0xBEEF, true, false);
  EXPECT_EQ(retry[0], SMMU_CMD_RESUME | (0x42ull << SMMU_CMD0_SID_SHIFT) | SMMU_CMD0_RESUME_RETRY);
  EXPECT_EQ(retry[1], 0xBEEFu);
  EXPECT_EQ(cmd_resume(0x42, 1, false, true)[0] & SMMU_CMD0_RESUME_ABORT, SMMU_CMD0_RESUME_ABORT);
}

// STE.EATS (5.2) where the C header puts it in dword 1.
TEST(SmmuHwHeader, SteEats) {
  EXPECT_EQ(SMMU_IDR0_ATS, reg::idr0::kAts.mask32());
  DecodedSte s;
  s.config = ste::kS1Trans;
  s.eats = ste::kEatsFull;
  EXPECT_EQ(encode_ste(s)[1], SMMU_STE_EATS_TRANS << SMMU_STE1_EATS_SHIFT);
}

TEST(SmmuHwHeader, StreamTableL1Descriptor) {
  const uint64_t l2 = 0x8123'4000ull;
  const L1Std d = decode_l1_std((9 & SMMU_L1STD_SPAN_MASK) | (l2 & SMMU_L1STD_L2PTR_MASK));
  EXPECT_EQ(d.span, 9u);
  EXPECT_EQ(d.l2ptr, l2);
}

}  // namespace
}  // namespace smmu_vp::smmu

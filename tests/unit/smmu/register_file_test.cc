// SmmuRegisterFile: the SMMUv3 register file without SystemC (IHI 0070
// chapter 6): reset values, read-only and RES0 behaviour, the CR0, IRQ_CTRL
// and GBPA update handshakes, global errors, queue pointers, Guarded
// registers, access sizes.
#include "smmu/register_file.h"

#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace smmu_vp::smmu {
namespace {

using namespace reg;

struct Recorder : SmmuRegisterListener {
  std::vector<std::pair<uint32_t, uint32_t>> cr0, irq_ctrl, gerrorn;
  std::vector<uint32_t> gbpa, cmdq_prod, eventq_cons;

  void on_cr0(uint32_t o, uint32_t n) override { cr0.emplace_back(o, n); }
  void on_irq_ctrl(uint32_t o, uint32_t n) override { irq_ctrl.emplace_back(o, n); }
  void on_gbpa_update(uint32_t v) override { gbpa.push_back(v); }
  void on_cmdq_prod(uint32_t v) override { cmdq_prod.push_back(v); }
  void on_eventq_cons(uint32_t v) override { eventq_cons.push_back(v); }
  void on_gerrorn(uint32_t o, uint32_t n) override { gerrorn.emplace_back(o, n); }
};

constexpr uint32_t kSmmuEn = 1u << 0, kEventqEn = 1u << 2, kCmdqEn = 1u << 3;
constexpr uint32_t kGerrorIrqEn = 1u << 0, kEventqIrqEn = 1u << 2;
constexpr uint32_t kGbpaUpdate = 1u << 31, kGbpaAbort = 1u << 20, kShCfgIncoming = 1u << 12;

class RegisterFileTest : public ::testing::Test {
 protected:
  explicit RegisterFileTest(SmmuFeatures f = SmmuFeatures::v3_3_profile()) : rf(f) { rf.set_listener(&rec); }

  uint64_t rd(uint64_t off, unsigned size = 4) {
    bool ok = false;
    const uint64_t v = rf.read(off, size, &ok);
    EXPECT_TRUE(ok) << "read of 0x" << std::hex << off;
    return v;
  }
  void wr(uint64_t off, uint64_t v, unsigned size = 4) {
    bool ok = false;
    rf.write(off, size, v, &ok);
    EXPECT_TRUE(ok) << "write of 0x" << std::hex << off;
  }

  Recorder rec;
  SmmuRegisterFile rf;
};

class RegisterFileV30Test : public RegisterFileTest {
 protected:
  RegisterFileV30Test() : RegisterFileTest(SmmuFeatures::v3_0_profile()) {}
};

// ---- Reset values

void expect_reset_state(SmmuRegisterFile& rf) {
  const SmmuFeatures& f = rf.features();
  SCOPED_TRACE(f.name);
  bool ok = false;
  auto rd = [&](uint64_t off) {
    const uint64_t v = rf.read(off, 4, &ok);
    EXPECT_TRUE(ok);
    return v;
  };
  EXPECT_EQ(rd(kIdr0), f.idr0());
  EXPECT_EQ(rd(kIdr1), f.idr1());
  EXPECT_EQ(rd(kIdr2), 0u);
  EXPECT_EQ(rd(kIdr3), f.idr3());
  EXPECT_EQ(rd(kIdr4), 0u);
  EXPECT_EQ(rd(kIdr5), f.idr5());
  EXPECT_EQ(rd(kIdr6), f.idr6());
  EXPECT_EQ(rd(kIidr), f.iidr);
  EXPECT_EQ(rd(kAidr), f.arch_minor);
  // Architected resets (6.3.9, 6.3.14, 6.3.16, 6.3.19) and the UNKNOWN ones,
  // which this model resets to 0.
  for (uint64_t off : {kCr0, kCr0Ack, kCr1, kCr2, kStatusr, kAgbpa, kIrqCtrl, kIrqCtrlAck, kGerror, kGerrorn,
                       kGerrorIrqCfg0, kGerrorIrqCfg0 + 4, kGerrorIrqCfg1, kGerrorIrqCfg2, kStrtabBase, kStrtabBase + 4,
                       kStrtabBaseCfg, kCmdqBase, kCmdqBase + 4, kCmdqProd, kCmdqCons, kEventqBase, kEventqBase + 4,
                       kEventqProd, kEventqCons, kEventqIrqCfg0, kEventqIrqCfg1, kEventqIrqCfg2, kPriqBase, kPriqProd,
                       kPriqCons})
    EXPECT_EQ(rd(off), 0u) << "offset 0x" << std::hex << off;
  EXPECT_EQ(rd(kGbpa), kShCfgIncoming | (f.gbpa_abort_at_reset ? kGbpaAbort : 0u));
  EXPECT_EQ(rf.gbpa_abort(), f.gbpa_abort_at_reset);
  EXPECT_FALSE(rf.smmuen());
  EXPECT_FALSE(rf.cmdqen());
  EXPECT_FALSE(rf.evtqen());
  EXPECT_EQ(rf.gerror_active(), 0u);
}

TEST(SmmuRegisterFile, ResetValuesPerProfile) {
  for (const std::string& name : profile_names()) {
    SmmuRegisterFile rf(*profile_by_name(name));
    expect_reset_state(rf);
  }
  SmmuFeatures deny = SmmuFeatures::v3_3_profile();
  deny.gbpa_abort_at_reset = true;
  SmmuRegisterFile rf(deny);
  expect_reset_state(rf);
  EXPECT_TRUE(rf.gbpa_abort());
}

TEST_F(RegisterFileTest, ResetRestoresResetState) {
  wr(kCmdqBase, 0x12345000 | 8, 8);
  wr(kCr0, kSmmuEn | kCmdqEn);
  wr(kGbpa, kGbpaUpdate | kGbpaAbort);
  rf.raise_gerror(1);
  rf.reset();
  expect_reset_state(rf);
}

TEST(SmmuRegisterFile, RejectsInvalidFeatures) {
  SmmuFeatures f = SmmuFeatures::v3_3_profile();
  f.msi = false;  // ECMDQ needs MSI
  EXPECT_THROW(SmmuRegisterFile{f}, std::invalid_argument);
}

// ---- Read-only registers, RES0 locations and fields

TEST_F(RegisterFileTest, ReadOnlyRegistersIgnoreWrites) {
  for (uint64_t off : {kIdr0, kIdr1, kIdr3, kIdr5, kIdr6, kIidr, kAidr, kCr0Ack, kIrqCtrlAck, kGerror, kStatusr}) {
    const uint64_t before = rd(off);
    const uint64_t ignored = rf.ignored_writes();
    wr(off, ~before & 0xFFFFFFFF);
    EXPECT_EQ(rd(off), before) << "offset 0x" << std::hex << off;
    EXPECT_EQ(rf.ignored_writes(), ignored + 1) << "offset 0x" << std::hex << off;
    wr(off, before);  // writing the value already there changes nothing and is not counted
    EXPECT_EQ(rf.ignored_writes(), ignored + 1);
  }
  EXPECT_EQ(rf.res0_writes(), 0u);
}

TEST_F(RegisterFileTest, Res0LocationsReadZeroAndIgnoreWrites) {
  // Undefined page-0 and page-1 locations, AGBPA (absent from this model), S2PII
  // (no S2PI), PRIQ_* (no PRI), the Secure page, the ECMDQ pages (not yet
  // modelled).
  const uint64_t offsets[] = {0x0038, 0x0100, 0x0FFC, kAgbpa, kS2pii, kPriqBase, kPriqIrqCfg0, kPriqIrqCfg1,
                              kPriqProdPage0Alias, kPage1, kPage1 + 0x20, kPriqProd, kPriqCons, 0x8000, 0x8020,
                              kEcmdqPagesOffset, kEcmdqPagesOffset + 0x1000C};
  uint64_t count = 0;
  for (uint64_t off : offsets) {
    wr(off, 0xFFFFFFFF);
    EXPECT_EQ(rd(off), 0u) << "offset 0x" << std::hex << off;
    EXPECT_EQ(rf.res0_writes(), ++count);
  }
  EXPECT_EQ(rf.ignored_writes(), 0u);
}

TEST_F(RegisterFileTest, Res0FieldsOfWritableRegisters) {
  wr(kCr0, 0xFFFFFFFF);  // PRIQEN, ATSCHK, VMW, DPT_WALK_EN: RES0 here
  EXPECT_EQ(rd(kCr0), kSmmuEn | kEventqEn | kCmdqEn);
  wr(kCr0, 0);
  wr(kIrqCtrl, 0xFFFFFFFF);  // PRIQ_IRQEN: RES0 without PRI
  EXPECT_EQ(rd(kIrqCtrl), kGerrorIrqEn | kEventqIrqEn);
  wr(kIrqCtrl, 0);
  wr(kCr1, 0xFFFFFFFF);
  EXPECT_EQ(rd(kCr1), 0xFFFu);
  wr(kCr2, 0xFFFFFFFF);  // E2H (Hyp) and RECINVSID; PTM needs BTM
  EXPECT_EQ(rd(kCr2), 0x3u);
  wr(kGerrorn, 0xFFFFFFFF);  // CMDQ_ERR, EVENTQ_ABT, MSI_{CMDQ,EVENTQ,GERROR}_ABT, SFM, CMDQP
  EXPECT_EQ(rd(kGerrorn), 0x3B5u);
  EXPECT_EQ(rf.gerror_implemented(), 0x3B5u);
  wr(kGerrorn, 0);
  wr(kStrtabBaseCfg, 0xFFFFFFFF);
  EXPECT_EQ(rd(kStrtabBaseCfg), 0x307FFu);  // FMT, SPLIT, LOG2SIZE
  // Base registers: RA/WA, ADDR up to the 48-bit OAS, LOG2SIZE.
  wr(kStrtabBase, ~uint64_t{0}, 8);
  EXPECT_EQ(rd(kStrtabBase, 8), (uint64_t{1} << 62) | 0x0000FFFFFFFFFFC0ull);
  wr(kCmdqBase, ~uint64_t{0}, 8);
  EXPECT_EQ(rd(kCmdqBase, 8), (uint64_t{1} << 62) | 0x0000FFFFFFFFFFFFull);
  wr(kEventqBase, ~uint64_t{0}, 8);
  EXPECT_EQ(rd(kEventqBase, 8), (uint64_t{1} << 62) | 0x0000FFFFFFFFFFFFull);
  wr(kCmdqProd, 0xFFFFFFFF);
  EXPECT_EQ(rd(kCmdqProd), 0xFFFFFu);
  wr(kEventqCons, 0xFFFFFFFF);
  EXPECT_EQ(rd(kEventqCons), 0x800FFFFFu);
  wr(kGbpa, 0xFFFFFFFF);
  EXPECT_EQ(rd(kGbpa), 0x001F3F1Fu);  // Update completed; bits [30:21], [15:14], [7:5] RES0
  EXPECT_EQ(rf.ignored_writes(), 0u);
  EXPECT_EQ(rf.res0_writes(), 0u);
}

TEST_F(RegisterFileV30Test, Res0FieldsWithoutMsiOrHyp) {
  wr(kCr2, 0xFFFFFFFF);  // no Hyp: E2H is RES0
  EXPECT_EQ(rd(kCr2), 0x2u);
  wr(kGerrorn, 0xFFFFFFFF);  // no MSI, no ECMDQ
  EXPECT_EQ(rd(kGerrorn), 0x105u);
  // *_IRQ_CFG* are RES0 without MSI (6.3.21).
  for (uint64_t off : {kGerrorIrqCfg0, kGerrorIrqCfg0 + 4, kGerrorIrqCfg1, kGerrorIrqCfg2, kEventqIrqCfg0,
                       kEventqIrqCfg0 + 4, kEventqIrqCfg1, kEventqIrqCfg2}) {
    wr(off, 0xFFFFFFFF);
    EXPECT_EQ(rd(off), 0u) << "offset 0x" << std::hex << off;
  }
  EXPECT_EQ(rf.gerror_irq_cfg().addr, 0u);
  EXPECT_EQ(rf.eventq_irq_cfg().data, 0u);
  // IDR6 and the control-page registers are RES0 without ECMDQ.
  wr(kIdr6, 0xFFFFFFFF);
  EXPECT_EQ(rd(kIdr6), 0u);
  EXPECT_EQ(rd(cmdq_control_page_base_offset(0), 8), 0u);
  EXPECT_EQ(rd(cmdq_control_page_cfg_offset(0)), 0u);
  // No ECMDQ pages: the register space ends after page 1.
  bool ok = true;
  rf.read(kEcmdqPagesOffset, 4, &ok);
  EXPECT_FALSE(ok);
}

// ---- CR0 / CR0ACK

TEST_F(RegisterFileTest, Cr0AcknowledgedImmediatelyByDefault) {
  wr(kCr0, kCmdqEn);
  EXPECT_EQ(rd(kCr0Ack), kCmdqEn);
  EXPECT_TRUE(rf.cmdqen());
  EXPECT_EQ(rf.cr0_pending(), 0u);
  ASSERT_EQ(rec.cr0.size(), 1u);
  EXPECT_EQ(rec.cr0[0], std::make_pair(0u, kCmdqEn));
  wr(kCr0, kCmdqEn);  // no change: no notification
  EXPECT_EQ(rec.cr0.size(), 1u);
  wr(kCr0, kCmdqEn | kEventqEn | kSmmuEn);
  EXPECT_EQ(rd(kCr0Ack), kCmdqEn | kEventqEn | kSmmuEn);
  EXPECT_TRUE(rf.smmuen() && rf.evtqen());
  ASSERT_EQ(rec.cr0.size(), 2u);
  EXPECT_EQ(rec.cr0[1], std::make_pair(kCmdqEn, kCmdqEn | kEventqEn | kSmmuEn));
}

TEST_F(RegisterFileTest, Cr0AcknowledgementDeferredToTheSmmu) {
  rf.set_ack_policy({/*defer_cr0=*/true, false, false});
  wr(kCr0, kSmmuEn | kCmdqEn);
  EXPECT_EQ(rd(kCr0), kSmmuEn | kCmdqEn);  // the written value is observable at once
  EXPECT_EQ(rd(kCr0Ack), 0u);
  EXPECT_EQ(rf.cr0_pending(), kSmmuEn | kCmdqEn);
  EXPECT_FALSE(rf.smmuen());
  EXPECT_FALSE(rf.cmdqen());
  ASSERT_EQ(rec.cr0.size(), 1u);

  // While a field is in transition, changing it again is ignored; other
  // fields stay writable.
  wr(kCr0, kEventqEn);
  EXPECT_EQ(rd(kCr0), kSmmuEn | kCmdqEn | kEventqEn);
  EXPECT_EQ(rf.ignored_writes(), 1u);  // one write dropping two field changes counts once

  // The SMMU completes the fields one by one.
  rf.complete_cr0_update(kCmdqEn);
  EXPECT_EQ(rd(kCr0Ack), kCmdqEn);
  EXPECT_TRUE(rf.cmdqen());
  EXPECT_FALSE(rf.smmuen());
  rf.complete_cr0_update();
  EXPECT_EQ(rd(kCr0Ack), kSmmuEn | kCmdqEn | kEventqEn);
  EXPECT_EQ(rf.cr0_pending(), 0u);
  wr(kCr0, 0);  // now it can change again
  EXPECT_EQ(rd(kCr0), 0u);
  EXPECT_EQ(rd(kCr0Ack), kSmmuEn | kCmdqEn | kEventqEn);
}

// A listener that completes the update from its callback, as a module with
// zero acknowledge latency would.
struct AckingListener : SmmuRegisterListener {
  SmmuRegisterFile* rf = nullptr;
  uint32_t ack_seen_in_callback = 0xFFFFFFFF;
  void on_cr0(uint32_t, uint32_t) override {
    ack_seen_in_callback = rf->cr0ack();
    rf->complete_cr0_update();
  }
};

TEST(SmmuRegisterFile, ListenerMayCompleteTheUpdate) {
  SmmuRegisterFile rf(SmmuFeatures::v3_3_profile());
  AckingListener l;
  l.rf = &rf;
  rf.set_listener(&l);
  rf.set_ack_policy({true, false, false});
  bool ok = false;
  rf.write(kCr0, 4, kSmmuEn, &ok);
  EXPECT_EQ(l.ack_seen_in_callback, 0u);
  EXPECT_EQ(rf.cr0ack(), kSmmuEn);
}

// ---- IRQ_CTRL / IRQ_CTRLACK and the MSI configuration they guard

TEST_F(RegisterFileTest, IrqCtrlHandshakeImmediate) {
  wr(kIrqCtrl, kGerrorIrqEn | kEventqIrqEn);
  EXPECT_EQ(rd(kIrqCtrlAck), kGerrorIrqEn | kEventqIrqEn);
  EXPECT_TRUE(rf.gerror_irqen());
  EXPECT_TRUE(rf.eventq_irqen());
  ASSERT_EQ(rec.irq_ctrl.size(), 1u);
  EXPECT_EQ(rec.irq_ctrl[0], std::make_pair(0u, kGerrorIrqEn | kEventqIrqEn));
}

TEST_F(RegisterFileTest, IrqCtrlHandshakeDeferred) {
  rf.set_ack_policy({false, /*defer_irq_ctrl=*/true, false});
  wr(kIrqCtrl, kGerrorIrqEn);
  EXPECT_EQ(rd(kIrqCtrl), kGerrorIrqEn);
  EXPECT_EQ(rd(kIrqCtrlAck), 0u);
  EXPECT_FALSE(rf.gerror_irqen());
  EXPECT_EQ(rf.irq_ctrl_pending(), kGerrorIrqEn);
  wr(kIrqCtrl, 0);  // in transition: ignored
  EXPECT_EQ(rd(kIrqCtrl), kGerrorIrqEn);
  EXPECT_EQ(rf.ignored_writes(), 1u);
  rf.complete_irq_ctrl_update();
  EXPECT_EQ(rd(kIrqCtrlAck), kGerrorIrqEn);
  EXPECT_TRUE(rf.gerror_irqen());
  // Disabling: the MSI configuration stays locked until the ACK clears too.
  wr(kIrqCtrl, 0);
  wr(kGerrorIrqCfg1, 0x1234);
  EXPECT_EQ(rd(kGerrorIrqCfg1), 0u);
  rf.complete_irq_ctrl_update();
  wr(kGerrorIrqCfg1, 0x1234);
  EXPECT_EQ(rd(kGerrorIrqCfg1), 0x1234u);
}

TEST_F(RegisterFileTest, IrqConfigurationRegisters) {
  wr(kGerrorIrqCfg0, 0xFFFF123456789ABFull, 8);  // ADDR[55:2], bits above the 48-bit OAS RES0
  EXPECT_EQ(rd(kGerrorIrqCfg0, 8), 0x0000123456789ABCull);
  wr(kGerrorIrqCfg1, 0xCAFEF00D);
  wr(kGerrorIrqCfg2, 0xFFFFFFFF);
  EXPECT_EQ(rd(kGerrorIrqCfg2), 0x3Fu);
  const IrqConfig g = rf.gerror_irq_cfg();
  EXPECT_EQ(g.addr, 0x0000123456789ABCull);
  EXPECT_EQ(g.data, 0xCAFEF00Du);
  EXPECT_EQ(g.sh, 3u);
  EXPECT_EQ(g.memattr, 0xFu);

  wr(kEventqIrqCfg0, 0x40000040, 8);
  wr(kEventqIrqCfg1, 7);
  wr(kEventqIrqCfg2, 0x21);
  const IrqConfig e = rf.eventq_irq_cfg();
  EXPECT_EQ(e.addr, 0x40000040u);
  EXPECT_EQ(e.data, 7u);
  EXPECT_EQ(e.sh, 2u);
  EXPECT_EQ(e.memattr, 1u);

  // Guarded by the source's IRQEN (6.3.21); the other source's stay writable.
  wr(kIrqCtrl, kEventqIrqEn);
  wr(kEventqIrqCfg0, 0x50000000, 8);
  wr(kEventqIrqCfg1, 8);
  wr(kEventqIrqCfg2, 0);
  EXPECT_EQ(rf.eventq_irq_cfg().addr, 0x40000040u);
  EXPECT_EQ(rf.eventq_irq_cfg().data, 7u);
  EXPECT_EQ(rf.eventq_irq_cfg().sh, 2u);
  EXPECT_EQ(rf.ignored_writes(), 3u);
  wr(kGerrorIrqCfg1, 1);
  EXPECT_EQ(rf.gerror_irq_cfg().data, 1u);
}

// ---- GBPA (6.3.14)

TEST_F(RegisterFileTest, GbpaUpdateCompletesImmediatelyByDefault) {
  EXPECT_FALSE(rf.gbpa_abort());
  wr(kGbpa, kGbpaUpdate | kGbpaAbort);
  EXPECT_EQ(rd(kGbpa), kGbpaAbort);  // Update already back to 0
  EXPECT_TRUE(rf.gbpa_abort());
  ASSERT_EQ(rec.gbpa.size(), 1u);
  EXPECT_EQ(rec.gbpa[0], kGbpaAbort);
  // Without Update = 1 a write is ignored (6.3.14.1).
  wr(kGbpa, kShCfgIncoming);
  EXPECT_EQ(rd(kGbpa), kGbpaAbort);
  EXPECT_TRUE(rf.gbpa_abort());
  EXPECT_EQ(rf.ignored_writes(), 1u);
  EXPECT_EQ(rec.gbpa.size(), 1u);
  wr(kGbpa, kGbpaUpdate | kShCfgIncoming);
  EXPECT_EQ(rd(kGbpa), kShCfgIncoming);
  EXPECT_FALSE(rf.gbpa_abort());
}

TEST_F(RegisterFileTest, GbpaUpdateDeferredToTheSmmu) {
  rf.set_ack_policy({false, false, /*defer_gbpa=*/true});
  wr(kGbpa, kGbpaUpdate | kGbpaAbort);
  EXPECT_EQ(rd(kGbpa), kGbpaUpdate | kGbpaAbort);  // new value visible, Update reads 1
  EXPECT_TRUE(rf.gbpa_update_pending());
  EXPECT_FALSE(rf.gbpa_abort());  // not in effect yet
  ASSERT_EQ(rec.gbpa.size(), 1u);
  EXPECT_EQ(rec.gbpa[0], kGbpaAbort);
  // A write while Update is 1 is ignored and the first update completes.
  wr(kGbpa, kGbpaUpdate | kShCfgIncoming);
  EXPECT_EQ(rd(kGbpa), kGbpaUpdate | kGbpaAbort);
  EXPECT_EQ(rf.ignored_writes(), 1u);
  EXPECT_EQ(rec.gbpa.size(), 1u);
  rf.complete_gbpa_update();
  EXPECT_EQ(rd(kGbpa), kGbpaAbort);
  EXPECT_FALSE(rf.gbpa_update_pending());
  EXPECT_TRUE(rf.gbpa_abort());
  EXPECT_EQ(rf.gbpa_effective(), kGbpaAbort);
}

// ---- GERROR / GERRORN (6.3.19, 6.3.20)

TEST_F(RegisterFileTest, GerrorTogglesOnlyInactiveErrors) {
  const uint32_t cmdq_err = gerror::kCmdqErr.mask32(), evtq_abt = gerror::kEventqAbtErr.mask32();
  EXPECT_EQ(rf.raise_gerror(cmdq_err), cmdq_err);
  EXPECT_EQ(rd(kGerror), cmdq_err);
  EXPECT_EQ(rf.gerror_active(), cmdq_err);
  // Already active: not toggled again.
  EXPECT_EQ(rf.raise_gerror(cmdq_err | evtq_abt), evtq_abt);
  EXPECT_EQ(rd(kGerror), cmdq_err | evtq_abt);
  // Software acknowledges CMDQ_ERR by making GERRORN equal to GERROR for it.
  wr(kGerrorn, cmdq_err);
  EXPECT_EQ(rf.gerror_active(), evtq_abt);
  ASSERT_EQ(rec.gerrorn.size(), 1u);
  EXPECT_EQ(rec.gerrorn[0], std::make_pair(0u, cmdq_err));
  // A new occurrence toggles GERROR back to 0, which differs from GERRORN.
  EXPECT_EQ(rf.raise_gerror(cmdq_err), cmdq_err);
  EXPECT_EQ(rd(kGerror), evtq_abt);
  EXPECT_EQ(rf.gerror_active(), cmdq_err | evtq_abt);
  wr(kGerrorn, rd(kGerror));  // acknowledge everything
  EXPECT_EQ(rf.gerror_active(), 0u);
  // GERROR is read-only for software.
  wr(kGerror, 0);
  EXPECT_EQ(rd(kGerror), evtq_abt);
  // PRIQ_ABT_ERR (no PRI) and bit 1 (reserved) are never raised.
  EXPECT_EQ(rf.raise_gerror(gerror::kPriqAbtErr.mask32() | 2u), 0u);
}

TEST_F(RegisterFileV30Test, GerrorMsiErrorsNeedMsi) {
  EXPECT_EQ(rf.raise_gerror(gerror::kMsiCmdqAbtErr.mask32() | gerror::kCmdqpErr.mask32()), 0u);
  EXPECT_EQ(rf.raise_gerror(gerror::kSfmErr.mask32()), gerror::kSfmErr.mask32());
}

// ---- Command queue

TEST_F(RegisterFileTest, CommandQueuePointers) {
  wr(kCmdqBase, 0x80000000ull | 4, 8);  // 16 entries
  wr(kCmdqProd, 0);
  wr(kCmdqCons, 0);
  wr(kCr0, kCmdqEn);
  EXPECT_EQ(rf.cmdq_base_addr(), 0x80000000u);
  EXPECT_EQ(rf.cmdq_log2size(), 4u);
  EXPECT_TRUE(queue_empty(rf.cmdq_prod(), rf.cmdq_cons()));

  // Software produces: every PROD write is reported, even without a change.
  wr(kCmdqProd, 5);
  wr(kCmdqProd, 5);
  EXPECT_EQ(rec.cmdq_prod, (std::vector<uint32_t>{0, 5, 5}));
  EXPECT_EQ(queue_used(rf.cmdq_prod(), rf.cmdq_cons()), 5u);

  // The SMMU consumes; software cannot move CONS while the queue is enabled.
  rf.set_cmdq_cons(3);
  EXPECT_EQ(rd(kCmdqCons), 3u);
  wr(kCmdqCons, 0);
  EXPECT_EQ(rd(kCmdqCons), 3u);
  EXPECT_EQ(rf.ignored_writes(), 1u);

  // Wrap: prod at index 0 with the wrap bit set, cons at 0 without: full.
  wr(kCmdqProd, 16);
  rf.set_cmdq_cons(0);
  EXPECT_TRUE(queue_full(rf.cmdq_prod(), rf.cmdq_cons()));
  // The SMMU's CONS update keeps only index and wrap bits.
  rf.set_cmdq_cons(0xFFFF0 | 16);
  EXPECT_EQ(rd(kCmdqCons), 16u);
  EXPECT_TRUE(queue_empty(rf.cmdq_prod(), rf.cmdq_cons()));
}

TEST_F(RegisterFileTest, CommandErrorReasonInCons) {
  wr(kCmdqBase, 0x80000000ull | 8, 8);
  rf.set_cmdq_cons(7);
  EXPECT_TRUE(rf.set_cmdq_error(cerror::kIll));
  EXPECT_EQ(rd(kCmdqCons), (cerror::kIll << 24) | 7u);
  EXPECT_EQ(rf.cmdq_error(), cerror::kIll);
  // The caller activates CMDQ_ERR, so that it also signals the GERROR
  // interrupt (IHI 0070 7.5.1; Smmu::raise_gerror).
  EXPECT_FALSE(gerror::kCmdqErr.test(rf.gerror_active()));
  EXPECT_EQ(rf.raise_gerror(gerror::kCmdqErr.mask32()), gerror::kCmdqErr.mask32());
  EXPECT_TRUE(gerror::kCmdqErr.test(rf.gerror_active()));
  // A second error while CMDQ_ERR is active changes nothing.
  EXPECT_FALSE(rf.set_cmdq_error(cerror::kAbt));
  EXPECT_EQ(rf.cmdq_error(), cerror::kIll);
  // RD moves on with the SMMU; ERR stays.
  rf.set_cmdq_cons(8);
  EXPECT_EQ(rd(kCmdqCons), (cerror::kIll << 24) | 8u);
  // Software writes to CONS (queue disabled) set RD but not ERR (6.3.28 allows
  // ignoring it).
  wr(kCmdqCons, 0x7F000002);
  EXPECT_EQ(rd(kCmdqCons), (cerror::kIll << 24) | 2u);
  EXPECT_EQ(rf.ignored_writes(), 0u);
  // After the acknowledgement, a new error can be reported.
  wr(kGerrorn, rd(kGerror));
  EXPECT_TRUE(rf.set_cmdq_error(cerror::kAtcInvSync));
  EXPECT_EQ(rf.cmdq_error(), cerror::kAtcInvSync);
}

// ---- Event queue

TEST_F(RegisterFileTest, EventQueuePointersAndOverflow) {
  wr(kEventqBase, 0x90000000ull | 3, 8);  // 8 entries
  wr(kEventqProd, 0);
  wr(kEventqCons, 0);
  wr(kCr0, kEventqEn);
  EXPECT_EQ(rf.eventq_log2size(), 3u);
  rf.set_eventq_prod(7);
  EXPECT_EQ(rd(kEventqProd), 7u);
  EXPECT_EQ(queue_used(rf.eventq_prod(), rf.eventq_cons()), 7u);
  // Software can't move PROD while the queue is enabled, but consumes freely.
  wr(kEventqProd, 0);
  EXPECT_EQ(rd(kEventqProd), 7u);
  EXPECT_EQ(rf.ignored_writes(), 1u);
  wr(kEventqCons, 4);
  EXPECT_EQ(rec.eventq_cons.back(), 4u);
  EXPECT_EQ(queue_used(rf.eventq_prod(), rf.eventq_cons()), 3u);

  // Overflow (7.4): OVFLG toggles once; a second overflow before the
  // acknowledgement does not toggle again.
  EXPECT_FALSE(rf.eventq_overflow_pending());
  EXPECT_TRUE(rf.signal_eventq_overflow());
  EXPECT_EQ(rd(kEventqProd), (1u << 31) | 7u);
  EXPECT_TRUE(rf.eventq_overflow_pending());
  EXPECT_FALSE(rf.signal_eventq_overflow());
  EXPECT_EQ(rd(kEventqProd), (1u << 31) | 7u);
  // The SMMU moves WR; OVFLG stays.
  rf.set_eventq_prod(8);  // index 0, wrap 1
  EXPECT_EQ(rd(kEventqProd), (1u << 31) | 8u);
  // Software acknowledges by copying OVFLG into OVACKFLG.
  wr(kEventqCons, (1u << 31) | 4);
  EXPECT_FALSE(rf.eventq_overflow_pending());
  EXPECT_TRUE(rf.signal_eventq_overflow());
  EXPECT_EQ(rd(kEventqProd), 8u);  // toggled back to 0
}

TEST_F(RegisterFileTest, EventQueuePage0Aliases) {
  wr(kEventqBase, 0x90000000ull | 3, 8);
  wr(kEventqConsPage0Alias, 5);
  EXPECT_EQ(rd(kEventqCons), 5u);
  wr(kEventqProdPage0Alias, 6);
  EXPECT_EQ(rd(kEventqProd), 6u);
  EXPECT_EQ(rd(kEventqProdPage0Alias), 6u);
  EXPECT_EQ(rd(kEventqConsPage0Alias), 5u);
}

TEST(SmmuRegisterFile, EventQueuePage0AliasesCanBeOff) {
  SmmuFeatures f = SmmuFeatures::v3_3_profile();
  f.page0_queue_aliases = false;
  SmmuRegisterFile rf(f);
  bool ok = false;
  rf.write(kEventqCons, 4, 5, &ok);
  rf.write(kEventqConsPage0Alias, 4, 6, &ok);  // RAZ/WI
  EXPECT_TRUE(ok);
  EXPECT_EQ(rf.read(kEventqConsPage0Alias, 4, &ok), 0u);
  EXPECT_EQ(rf.read(kEventqCons, 4, &ok), 5u);
  EXPECT_EQ(rf.res0_writes(), 1u);
}

// ---- Queue index helpers (3.5)

TEST(QueueIndex, IndexWrapAndPredicates) {
  QueueIndex prod(3, 0), cons(3, 0);
  EXPECT_EQ(prod.entries(), 8u);
  EXPECT_TRUE(queue_empty(prod, cons));
  EXPECT_FALSE(queue_full(prod, cons));
  EXPECT_EQ(queue_free(prod, cons), 8u);
  prod = prod.advanced(7);
  EXPECT_EQ(prod.index(), 7u);
  EXPECT_FALSE(prod.wrap());
  EXPECT_EQ(queue_used(prod, cons), 7u);
  prod = prod.advanced();
  EXPECT_EQ(prod.index(), 0u);
  EXPECT_TRUE(prod.wrap());
  EXPECT_EQ(prod.value(), 8u);
  EXPECT_TRUE(queue_full(prod, cons));
  EXPECT_FALSE(queue_empty(prod, cons));
  EXPECT_EQ(queue_used(prod, cons), 8u);
  EXPECT_EQ(queue_free(prod, cons), 0u);
  cons = cons.advanced(8);
  EXPECT_TRUE(queue_empty(prod, cons));
  // Wrap bit toggles back on the second lap.
  prod = prod.advanced(8);
  EXPECT_EQ(prod.value(), 0u);
  EXPECT_FALSE(prod.wrap());
  // Flag bits above the wrap bit (OVFLG, ERR, stale high bits) are dropped.
  EXPECT_EQ(QueueIndex(3, (1u << 31) | 0xF0 | 0x9).value(), 9u);
  EXPECT_EQ(QueueIndex(3, 0x9).index(), 1u);
  EXPECT_TRUE(QueueIndex(3, 0x9).wrap());
  // The largest queue.
  const QueueIndex big(19, 0xFFFFF);
  EXPECT_EQ(big.index(), 0x7FFFFu);
  EXPECT_TRUE(big.wrap());
  EXPECT_EQ(big.advanced().value(), 0u);
}

TEST(QueueIndex, OneEntryQueue) {
  // LOG2SIZE 0: no index bits, the wrap bit is bit 0 (6.3.27).
  QueueIndex prod(0, 0), cons(0, 0);
  EXPECT_EQ(prod.entries(), 1u);
  EXPECT_TRUE(queue_empty(prod, cons));
  prod = prod.advanced();
  EXPECT_EQ(prod.value(), 1u);
  EXPECT_EQ(prod.index(), 0u);
  EXPECT_TRUE(queue_full(prod, cons));
  EXPECT_EQ(queue_used(prod, cons), 1u);
}

// ---- Guarded registers

TEST_F(RegisterFileTest, StreamTableRegistersLockedWhileSmmuEnabled) {
  wr(kStrtabBase, 0x40000000, 8);
  wr(kStrtabBaseCfg, 0x10000 | (8 << 6) | 16);
  wr(kCr1, 0x0D5);
  wr(kCr2, 0x2);
  wr(kCr0, kSmmuEn);
  wr(kStrtabBase, 0x50000000, 8);
  wr(kStrtabBase + 4, 1);
  wr(kStrtabBaseCfg, 0);
  wr(kCr2, 0);
  wr(kCr1, 0xFFF);  // TABLE_* locked; QUEUE_* still writable (no queue enabled)
  EXPECT_EQ(rd(kStrtabBase, 8), 0x40000000u);
  EXPECT_EQ(rd(kStrtabBaseCfg), 0x10000u | (8 << 6) | 16);
  EXPECT_EQ(rd(kCr2), 0x2u);
  EXPECT_EQ(rd(kCr1), 0x0FFu);
  EXPECT_EQ(rf.ignored_writes(), 5u);
  // Still locked while the disable is not yet acknowledged.
  rf.set_ack_policy({true, false, false});
  wr(kCr0, 0);
  wr(kStrtabBase, 0x50000000, 8);
  EXPECT_EQ(rd(kStrtabBase, 8), 0x40000000u);
  rf.complete_cr0_update();
  wr(kStrtabBase, 0x50000000, 8);
  EXPECT_EQ(rd(kStrtabBase, 8), 0x50000000u);
  EXPECT_EQ(rf.ignored_writes(), 6u);
}

TEST_F(RegisterFileTest, QueueRegistersLockedWhileQueueEnabled) {
  wr(kCmdqBase, 0x80000000ull | 8, 8);
  wr(kEventqBase, 0x90000000ull | 8, 8);
  wr(kCr1, 0x0D5);
  wr(kCr0, kCmdqEn);
  wr(kCmdqBase, 0x81000000ull | 8, 8);  // ignored
  wr(kCmdqBase + 4, 0x1);                // ignored (high half)
  wr(kCmdqCons, 9);                      // ignored
  wr(kCr1, 0x0AA);                       // QUEUE_* ignored, TABLE_* written
  wr(kEventqBase, 0x91000000ull | 8, 8);  // event queue not enabled: written
  EXPECT_EQ(rd(kCmdqBase, 8), 0x80000000ull | 8);
  EXPECT_EQ(rd(kCmdqCons), 0u);
  EXPECT_EQ(rd(kCr1), 0x095u);
  EXPECT_EQ(rd(kEventqBase, 8), 0x91000000ull | 8);
  EXPECT_EQ(rf.ignored_writes(), 4u);
  wr(kCmdqProd, 3);  // PROD is always writable
  EXPECT_EQ(rd(kCmdqProd), 3u);

  wr(kCr0, kEventqEn);  // command queue off, event queue on
  wr(kCmdqBase, 0x81000000ull | 8, 8);
  EXPECT_EQ(rd(kCmdqBase, 8), 0x81000000ull | 8);
  wr(kEventqBase, 0x92000000ull | 8, 8);  // ignored
  wr(kEventqProd, 5);                     // ignored
  wr(kEventqCons, 5);                     // always writable
  EXPECT_EQ(rd(kEventqBase, 8), 0x91000000ull | 8);
  EXPECT_EQ(rd(kEventqProd), 0u);
  EXPECT_EQ(rd(kEventqCons), 5u);
  EXPECT_EQ(rf.ignored_writes(), 6u);
}

// ---- LOG2SIZE: read back as written, used capped (6.3.25, 6.3.26, 6.3.29)

TEST_F(RegisterFileV30Test, Log2SizeCappedAtIdr1ButReadBackAsWritten) {
  ASSERT_EQ(rf.features().cmdqs, 10u);
  wr(kCmdqBase, 0x80000000ull | 19, 8);
  EXPECT_EQ(queue_base::kLog2Size.get(rd(kCmdqBase, 8)), 19u);
  EXPECT_EQ(rf.cmdq_log2size(), 10u);
  // The wrap bit of a 2^10-entry queue is bit 10; bits above it in CONS are RAZ.
  rf.set_cmdq_cons(0xFFFFF);
  EXPECT_EQ(rd(kCmdqCons), 0x7FFu);
  EXPECT_EQ(rf.cmdq_cons().index(), 0x3FFu);
  EXPECT_TRUE(rf.cmdq_cons().wrap());
  // PROD keeps what software wrote; the index view drops the excess bits.
  wr(kCmdqProd, 0xFFFFF);
  EXPECT_EQ(rd(kCmdqProd), 0xFFFFFu);
  EXPECT_EQ(rf.cmdq_prod().value(), 0x7FFu);

  wr(kEventqBase, 0x90000000ull | 31, 8);
  EXPECT_EQ(queue_base::kLog2Size.get(rd(kEventqBase, 8)), 31u);
  EXPECT_EQ(rf.eventq_log2size(), 10u);

  // Stream table: effective LOG2SIZE is MIN(LOG2SIZE, SIDSIZE).
  wr(kStrtabBaseCfg, 40);
  EXPECT_EQ(rd(kStrtabBaseCfg), 40u);
  EXPECT_EQ(rf.strtab_log2size(), 16u);
  wr(kStrtabBaseCfg, 12);
  EXPECT_EQ(rf.strtab_log2size(), 12u);
}

TEST_F(RegisterFileTest, QueueBaseAlignedToQueueSize) {
  // 2^8 commands of 16 bytes: 4 KiB, so ADDR[11:0] are ignored.
  wr(kCmdqBase, 0x80000FE0ull | 8, 8);
  EXPECT_EQ(rf.cmdq_base_addr(), 0x80000000u);
  // One entry: aligned to 32 bytes.
  wr(kCmdqBase, 0x80000FE0ull | 0, 8);
  EXPECT_EQ(rf.cmdq_base_addr(), 0x80000FE0u);
  // 2^8 events of 32 bytes: 8 KiB.
  wr(kEventqBase, 0x90001FE0ull | 8 | (uint64_t{1} << 62), 8);
  EXPECT_EQ(rf.eventq_base_addr(), 0x90000000u);
  EXPECT_TRUE(rf.eventq_wa());
}

TEST_F(RegisterFileTest, StreamTableEffectiveConfiguration) {
  // Linear, 2^8 STEs of 64 bytes: base aligned to 16 KiB.
  wr(kStrtabBase, 0x40003FC0ull | (uint64_t{1} << 62), 8);
  wr(kStrtabBaseCfg, 8);
  EXPECT_EQ(rf.strtab_fmt(), StrtabFormat::kLinear);
  EXPECT_EQ(rf.strtab_base(), 0x40000000u);
  EXPECT_TRUE(rf.strtab_ra());
  // 2-level, 2^16 StreamIDs split 8: 2^8 L1 descriptors of 8 bytes (2 KiB).
  wr(kStrtabBaseCfg, (1u << 16) | (8u << 6) | 16);
  EXPECT_EQ(rf.strtab_fmt(), StrtabFormat::kTwoLevel);
  EXPECT_EQ(rf.strtab_split(), 8u);
  EXPECT_EQ(rf.strtab_log2size(), 16u);
  EXPECT_EQ(rf.strtab_base(), 0x40003800u);
  // A tiny L1 table is still aligned to 64 bytes.
  wr(kStrtabBaseCfg, (1u << 16) | (10u << 6) | 4);
  EXPECT_EQ(rf.strtab_base(), 0x40003FC0u);
  // Reserved encodings: SPLIT behaves as 6, FMT as linear (6.3.25).
  wr(kStrtabBaseCfg, (2u << 16) | (7u << 6) | 4);
  EXPECT_EQ(rf.strtab_split(), 6u);
  EXPECT_EQ(rf.strtab_fmt(), StrtabFormat::kLinear);
}

TEST(SmmuRegisterFile, StreamTableFormatRes0WithoutTwoLevelSupport) {
  SmmuFeatures f = SmmuFeatures::v3_0_profile();
  f.sidsize = 6;
  f.two_level_strtab = false;
  SmmuRegisterFile rf(f);
  bool ok = false;
  rf.write(kStrtabBaseCfg, 4, (1u << 16) | (8u << 6) | 6, &ok);
  EXPECT_EQ(rf.read(kStrtabBaseCfg, 4, &ok), 6u);
  EXPECT_EQ(rf.strtab_fmt(), StrtabFormat::kLinear);
}

// ---- Access sizes (6.2)

TEST_F(RegisterFileTest, HalvesOf64BitRegisters) {
  wr(kStrtabBase, 0x89ABCDC0);
  wr(kStrtabBase + 4, 0x00001234);
  EXPECT_EQ(rd(kStrtabBase, 8), 0x0000123489ABCDC0ull);
  EXPECT_EQ(rd(kStrtabBase), 0x89ABCDC0u);
  EXPECT_EQ(rd(kStrtabBase + 4), 0x1234u);
  // A 32-bit write to one half leaves the other alone.
  wr(kStrtabBase, 0x00000040);
  EXPECT_EQ(rd(kStrtabBase, 8), 0x0000123400000040ull);
  wr(kCmdqBase, 0x0000567812345008ull, 8);
  EXPECT_EQ(rd(kCmdqBase), 0x12345008u);
  EXPECT_EQ(rd(kCmdqBase + 4), 0x5678u);
  wr(kGerrorIrqCfg0 + 4, 0xABCD);
  wr(kGerrorIrqCfg0, 0x1000);
  EXPECT_EQ(rf.gerror_irq_cfg().addr, 0x0000ABCD00001000ull);
}

TEST_F(RegisterFileTest, SixtyFourBitAccessToTwo32BitRegisters) {
  // Acts as two 32-bit accesses, low register first.
  wr(kCmdqBase, 0x80000000ull | 8, 8);
  wr(kCmdqProd, 0x0000000200000001ull, 8);  // CMDQ_PROD = 1, CMDQ_CONS = 2
  EXPECT_EQ(rd(kCmdqProd), 1u);
  EXPECT_EQ(rd(kCmdqCons), 2u);
  EXPECT_EQ(rd(kCmdqProd, 8), 0x0000000200000001ull);
  wr(kGerrorIrqCfg1, 0x00000021DEADBEEFull, 8);  // CFG1 and CFG2
  EXPECT_EQ(rf.gerror_irq_cfg().data, 0xDEADBEEFu);
  EXPECT_EQ(rf.gerror_irq_cfg().sh, 2u);
  EXPECT_EQ(rd(kIdr0, 8), (uint64_t{rf.features().idr1()} << 32) | rf.features().idr0());
}

TEST_F(RegisterFileTest, IllegalAccessesAreRejected) {
  struct Case {
    uint64_t off;
    unsigned size;
  };
  const Case cases[] = {
      {kCr0, 1}, {kCr0, 2}, {kCr0, 16}, {kCr0, 0},   // unsupported sizes
      {kCr0 + 2, 4}, {kCr0 + 1, 4},                  // unaligned
      {kStrtabBase + 4, 8}, {kCmdqCons, 8},          // 64-bit, only 4-aligned
      {rf.register_space_size(), 4},                 // beyond the register space
      {rf.register_space_size() - 4, 8},
  };
  for (const Case& c : cases) {
    bool ok = true;
    EXPECT_EQ(rf.read(c.off, c.size, &ok), 0u);
    EXPECT_FALSE(ok) << "read 0x" << std::hex << c.off << " size " << std::dec << c.size;
    ok = true;
    rf.write(c.off, c.size, ~uint64_t{0}, &ok);
    EXPECT_FALSE(ok) << "write 0x" << std::hex << c.off << " size " << std::dec << c.size;
  }
  EXPECT_EQ(rd(kCr0), 0u);
  EXPECT_EQ(rd(kStrtabBase, 8), 0u);
  EXPECT_EQ(rf.ignored_writes(), 0u);
  EXPECT_EQ(rf.res0_writes(), 0u);
  EXPECT_TRUE(rec.cr0.empty());
  // The last word of the register space is a legal (RES0) location.
  EXPECT_EQ(rd(rf.register_space_size() - 4), 0u);
}

// ---- ECMDQ control-page registers (6.3.45, 6.3.49-6.3.51)

TEST_F(RegisterFileTest, CommandQueueControlPageRegisters) {
  EXPECT_EQ(rd(kIdr6), (1u << 24) | (2u << 16));
  for (unsigned n = 0; n < 2; ++n) {
    const uint64_t base = rd(cmdq_control_page_base_offset(n), 8);
    EXPECT_EQ(cmdq_control_page_base::kAddr.get(base) << 16, ecmdq_page_offset(n));
    EXPECT_EQ(cmdq_control_page_base::kCmdqgs.get(base), cmdq_control_page_base::kCmdqgs64K);
    EXPECT_EQ(cmdq_control_page_base::kPreset.get(base), 1u);
    EXPECT_EQ(rd(cmdq_control_page_base_offset(n)), static_cast<uint32_t>(base));
    EXPECT_EQ(rd(cmdq_control_page_cfg_offset(n)), 1u);     // EN is RES1
    EXPECT_EQ(rd(cmdq_control_page_status_offset(n)), 1u);  // ENACK is RES1
    // Read-only.
    wr(cmdq_control_page_base_offset(n), 0, 8);
    wr(cmdq_control_page_cfg_offset(n), 0);
    EXPECT_EQ(rd(cmdq_control_page_base_offset(n), 8), base);
    EXPECT_EQ(rd(cmdq_control_page_cfg_offset(n)), 1u);
  }
  EXPECT_EQ(rd(cmdq_control_page_base_offset(0), 8), 0x20003u);
  EXPECT_EQ(rd(cmdq_control_page_base_offset(1), 8), 0x30003u);
  EXPECT_EQ(rf.ignored_writes(), 4u);
  // Only 2 pages: page 2's registers are RES0.
  EXPECT_EQ(rd(cmdq_control_page_base_offset(2), 8), 0u);
  EXPECT_EQ(rd(cmdq_control_page_cfg_offset(2)), 0u);
  EXPECT_EQ(rf.register_space_size(), 0x40000u);
}

}  // namespace
}  // namespace smmu_vp::smmu

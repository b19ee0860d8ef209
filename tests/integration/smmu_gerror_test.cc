// Global errors (IHI 0070 7.5, SMMU_GERROR 6.3.19): every source activates
// its GERROR bit and, with IRQ_CTRL.GERROR_IRQEN, triggers the GERROR
// interrupt (7.5.1): an MSI when GERROR_IRQ_CFG0 holds an address, else the
// wired line; never for MSI_GERROR_ABT_ERR. The SMMU module runs alone here,
// against a memory that aborts accesses to chosen ranges, and its registers
// are written directly. PRIQ_ABT_ERR and MSI_PRIQ_ABT_ERR are not tested:
// PRI is not modelled and those bits are RES0 (register_file_test.cc).
#include <cstring>
#include <map>
#include <vector>

#include <gtest/gtest.h>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "common/irq_sink.h"
#include "common/stats.h"
#include "common/stream_id_extension.h"
#include "smmu/commands.h"
#include "smmu/register_file.h"
#include "smmu/registers.h"
#include "smmu/smmu.h"
#include "smmu_test_memory.h"

namespace smmu_vp::smmu {
namespace {

constexpr uint64_t kMem = 0x8000'0000;
constexpr uint64_t kMemSize = 1 << 20;
constexpr uint64_t kAbortBase = 0xF000'0000;  // every access here aborts
constexpr uint64_t kCmdq = kMem;               // 64 commands
constexpr uint64_t kEvtq = kMem + 0x1000;      // 64 records
constexpr uint64_t kStrtab = kMem + 0x4000;    // 64 STEs, all invalid
constexpr uint64_t kMsiTarget = kMem + 0x8000;
constexpr unsigned kGerrorLine = 7, kEventqLine = 5;

using Memory = test::SmmuTestMemory;

struct Lines : IrqSink {
  std::map<unsigned, unsigned> raised;
  bool raise_line(unsigned line, const sc_core::sc_time&) override {
    ++raised[line];
    return true;
  }
};

struct Master : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Master> socket{"socket"};
  tlm_utils::simple_initiator_socket<Master> regs{"regs"};  // bound only: registers are written directly
  explicit Master(sc_core::sc_module_name n) : sc_module(n) {}
};

SmmuConfig config() {
  SmmuConfig c;
  c.base = 0x0900'0000;
  c.features = SmmuFeatures::v3_3_profile();
  // One ECMDQ interface (page 0, queue 0), for CMDQP_ERR.
  c.features.ecmdq = true;
  c.features.ecmdq_log2_pages = 0;
  c.features.ecmdq_log2_queues = 0;
  c.gerror_irq = kGerrorLine;
  c.eventq_irq = kEventqLine;
  return c;
}

class GerrorTest : public ::testing::Test {
 protected:
  GerrorTest() : mem_("mem", kMem, kMemSize), master_("master"), smmu_("smmu", config(), &lines_, stats_, nullptr) {
    smmu_.downstream.bind(mem_.socket);
    master_.socket.bind(smmu_.upstream);
    master_.regs.bind(smmu_.regs);
  }

  void wr(uint64_t off, uint64_t v, unsigned size = 4) {
    bool ok = false;
    smmu_.registers().write(off, size, v, &ok);
    ASSERT_TRUE(ok) << std::hex << off;
  }
  uint32_t active() { return smmu_.registers().gerror_active(); }

  // Through the register port, as a core would (reaches the ECMDQ pages too).
  uint64_t bus(bool write, uint64_t off, uint64_t v = 0, unsigned size = 4) {
    tlm::tlm_generic_payload t;
    t.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    t.set_address(off);
    t.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
    t.set_data_length(size);
    t.set_streaming_width(size);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    master_.regs->b_transport(t, delay);
    EXPECT_TRUE(t.is_response_ok()) << std::hex << off;
    return v;
  }

  // Command and event queues (64 entries each) and a stream table of 64
  // invalid STEs; SMMUEN, CMDQEN, EVENTQEN. GERROR_IRQEN and EVENTQ_IRQEN as
  // given; the GERROR MSI address when nonzero.
  void bring_up(bool gerror_irqen, uint64_t gerror_msi = 0, uint64_t eventq_base = kEvtq, uint64_t eventq_msi = 0) {
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // end of elaboration
    wr(reg::kCmdqBase, kCmdq | 6, 8);
    wr(reg::kEventqBase, eventq_base | 6, 8);
    wr(reg::kStrtabBase, kStrtab, 8);
    wr(reg::kStrtabBaseCfg, 6);
    if (gerror_msi) {
      wr(reg::kGerrorIrqCfg0, gerror_msi, 8);
      wr(reg::kGerrorIrqCfg0 + 8, 0x6E6E);  // GERROR_IRQ_CFG1: data
    }
    if (eventq_msi) {
      wr(reg::kEventqIrqCfg0, eventq_msi, 8);
      wr(reg::kEventqIrqCfg0 + 8, 0xE7E7);
    }
    wr(reg::kIrqCtrl, (gerror_irqen ? reg::irq_ctrl::kGerrorIrqEn.mask32() : 0) | reg::irq_ctrl::kEventqIrqEn.mask32());
    wr(reg::kCr0, reg::cr0::kSmmuEn.mask32() | reg::cr0::kCmdqEn.mask32() | reg::cr0::kEventqEn.mask32());
  }

  void submit(const CommandWords& c) {
    mem_.poke(kCmdq + 16 * prod_, c.data(), 16);
    ++prod_;
    wr(reg::kCmdqProd, prod_);
    sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
  }

  // A client transaction from StreamID 3 (its STE is invalid: C_BAD_STE).
  tlm::tlm_response_status access() {
    uint32_t data = 0;
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_READ_COMMAND);
    t.set_address(0x4000'0000);
    t.set_data_ptr(reinterpret_cast<unsigned char*>(&data));
    t.set_data_length(4);
    t.set_streaming_width(4);
    StreamIdExtension ext(3, 0, false);
    t.set_extension(&ext);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    master_.socket->b_transport(t, delay);
    t.clear_extension(&ext);
    return t.get_response_status();
  }

  unsigned msis_to(uint64_t a, uint32_t data) const {
    unsigned n = 0;
    for (const auto& w : mem_.writes) n += w.first == a && w.second == data;
    return n;
  }

  StatsRegistry stats_;
  Lines lines_;
  Memory mem_;
  Master master_;
  Smmu smmu_;
  uint32_t prod_ = 0;
};

const CommandWords kIllegal = {0xFF, 0};

// A platform that fills in SmmuConfig itself hears of a field the model
// cannot be built with from the constructor, and the hierarchy stays usable.
TEST(SmmuConstruction, ABadConfigurationThrowsInvalidConfigNamingTheField) {
  StatsRegistry stats;
  SmmuConfig bad = config();
  bad.translation.tlb.ways = 3;
  try {
    Smmu smmu("bad_smmu", bad, nullptr, stats, nullptr);
    FAIL() << "accepted";
  } catch (const InvalidConfig& e) {
    EXPECT_EQ(e.field(), "translation.tlb.ways");
    EXPECT_NE(std::string(e.what()).find("must be a multiple of ways"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sc_core::sc_find_object("bad_smmu"), nullptr);
  EXPECT_FALSE(stats.has("bad_smmu.transactions"));
}

// IHI 0070 7.5, 7.5.1: CMDQ_ERR (here CERROR_ILL) triggers the wired GERROR
// interrupt. Before the audit the error was activated but no interrupt sent.
TEST_F(GerrorTest, Gerror75_CmdqErrRaisesWiredGerrorIrq) {
  bring_up(true);
  submit(kIllegal);
  EXPECT_TRUE(active() & reg::gerror::kCmdqErr.mask32());
  EXPECT_EQ(lines_.raised[kGerrorLine], 1u);
  // Active already: a second error is not logged and triggers nothing (7.5).
  submit(kIllegal);
  EXPECT_EQ(lines_.raised[kGerrorLine], 1u);
}

// IHI 0070 7.5.1: with GERROR_IRQ_CFG0 set, the interrupt is an MSI.
TEST_F(GerrorTest, Gerror751_CmdqErrSendsGerrorMsi) {
  bring_up(true, kMsiTarget);
  submit(kIllegal);
  EXPECT_TRUE(active() & reg::gerror::kCmdqErr.mask32());
  EXPECT_EQ(msis_to(kMsiTarget, 0x6E6E), 1u);
  EXPECT_EQ(lines_.raised[kGerrorLine], 0u);
}

// IHI 0070 7.5.1: no GERROR interrupt while IRQ_CTRL.GERROR_IRQEN is 0.
TEST_F(GerrorTest, Gerror751_NoInterruptWithoutGerrorIrqEn) {
  bring_up(false, kMsiTarget);
  submit(kIllegal);
  EXPECT_TRUE(active() & reg::gerror::kCmdqErr.mask32());
  EXPECT_EQ(msis_to(kMsiTarget, 0x6E6E), 0u);
  EXPECT_EQ(lines_.raised[kGerrorLine], 0u);
}

// IHI 0070 7.5: an abort writing the event queue is EVENTQ_ABT_ERR.
TEST_F(GerrorTest, Gerror75_EventqAbtErrRaisesGerrorIrq) {
  bring_up(true, 0, kAbortBase);
  EXPECT_EQ(access(), tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_TRUE(active() & reg::gerror::kEventqAbtErr.mask32());
  EXPECT_EQ(lines_.raised[kGerrorLine], 1u);
}

// IHI 0070 7.2.1, 7.5: while EVENTQ_ABT_ERR is active the event queue is
// not writable: records are lost even once the queue points at memory
// again, until software acknowledges the error (issue 31: they were written).
TEST_F(GerrorTest, Gerror75_EventqNotWritableWhileEventqAbtErrIsActive) {
  bring_up(true, 0, kAbortBase);
  EXPECT_EQ(access(), tlm::TLM_GENERIC_ERROR_RESPONSE);
  ASSERT_TRUE(active() & reg::gerror::kEventqAbtErr.mask32());
  // Software moves the queue to memory, without acknowledging the error.
  wr(reg::kCr0, reg::cr0::kSmmuEn.mask32() | reg::cr0::kCmdqEn.mask32());
  wr(reg::kEventqBase, kEvtq | 6, 8);
  wr(reg::kCr0, reg::cr0::kSmmuEn.mask32() | reg::cr0::kCmdqEn.mask32() | reg::cr0::kEventqEn.mask32());
  const uint32_t prod = smmu_.registers().eventq_prod().value();
  EXPECT_EQ(access(), tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(smmu_.registers().eventq_prod().value(), prod) << "a record was written while EVENTQ_ABT_ERR was active";
  // Acknowledged: the next record is written.
  wr(reg::kGerrorn, smmu_.registers().gerror());
  EXPECT_EQ(access(), tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_NE(smmu_.registers().eventq_prod().value(), prod);
}

// IHI 0070 7.5: an aborted CMD_SYNC MSI is MSI_CMDQ_ABT_ERR.
TEST_F(GerrorTest, Gerror75_MsiCmdqAbtErrRaisesGerrorIrq) {
  bring_up(true);
  submit(cmd_sync(SyncCs::kIrq, kAbortBase, 1));
  EXPECT_TRUE(active() & reg::gerror::kMsiCmdqAbtErr.mask32());
  EXPECT_EQ(lines_.raised[kGerrorLine], 1u);
}

// IHI 0070 7.5: an aborted event queue MSI is MSI_EVENTQ_ABT_ERR, with the
// GERROR interrupt (an MSI here). Before the audit no GERROR interrupt.
TEST_F(GerrorTest, Gerror75_MsiEventqAbtErrRaisesGerrorIrq) {
  bring_up(true, kMsiTarget, kEvtq, kAbortBase);
  EXPECT_EQ(access(), tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_TRUE(active() & reg::gerror::kMsiEventqAbtErr.mask32());
  EXPECT_EQ(msis_to(kMsiTarget, 0x6E6E), 1u);
  EXPECT_EQ(lines_.raised[kEventqLine], 0u);
}

// IHI 0070 7.5.1: an aborted GERROR MSI is MSI_GERROR_ABT_ERR, which
// triggers no GERROR interrupt (another MSI to the same address).
TEST_F(GerrorTest, Gerror751_MsiGerrorAbtErrTriggersNoInterrupt) {
  bring_up(true, kAbortBase);
  submit(kIllegal);
  EXPECT_EQ(active(), reg::gerror::kCmdqErr.mask32() | reg::gerror::kMsiGerrorAbtErr.mask32());
  EXPECT_EQ(stats_.find_counter("smmu.msis")->value(), 1u);  // the failed one, no second
  EXPECT_EQ(lines_.raised[kGerrorLine], 0u);
}

// IHI 0070 7.5, 12.3: entering Service Failure Mode activates SFM_ERR with
// its interrupt; client transactions are terminated without an event and no
// command is consumed; acknowledging it in GERRORN does not leave SFM.
TEST_F(GerrorTest, Gerror75_SfmErrRaisesGerrorIrqAndStopsTheSmmu) {
  bring_up(true);
  smmu_.enter_service_failure_mode();
  EXPECT_TRUE(active() & reg::gerror::kSfmErr.mask32());
  EXPECT_EQ(lines_.raised[kGerrorLine], 1u);
  const uint32_t evtq_prod = smmu_.registers().eventq_prod().value();
  EXPECT_EQ(access(), tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(smmu_.registers().eventq_prod().value(), evtq_prod) << "no event recorded";
  submit(cmd_sync(SyncCs::kNone));
  EXPECT_EQ(smmu_.registers().cmdq_cons().value(), 0u) << "no command consumed";
  wr(reg::kGerrorn, smmu_.registers().gerror());
  EXPECT_TRUE(smmu_.in_service_failure_mode());
  EXPECT_EQ(access(), tlm::TLM_GENERIC_ERROR_RESPONSE);
}

// IHI 0070 3.5.6, 7.5, 7.5.1: an ECMDQ that refuses a command (here
// CERROR_ILL) sets its ECMDQ_CONS.ERR and activates GERROR.CMDQP_ERR, which
// triggers the GERROR interrupt like any other global error.
TEST_F(GerrorTest, Gerror75_CmdqpErrFromAnEcmdqRaisesGerrorIrq) {
  bring_up(true);
  constexpr uint64_t kEcmdqRing = kMem + 0x2000;  // 64 commands
  const uint64_t q = reg::ecmdq_page_offset(0);
  bus(true, q + reg::kEcmdqBase, kEcmdqRing | 6, 8);
  bus(true, q + reg::kEcmdqCons, 0);
  bus(true, q + reg::kEcmdqProd, reg::ecmdq_prod::kEn.mask32());
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
  ASSERT_TRUE(bus(false, q + reg::kEcmdqCons) & reg::ecmdq_cons::kEnAck.mask32());

  mem_.poke(kEcmdqRing, kIllegal.data(), 16);
  bus(true, q + reg::kEcmdqProd, reg::ecmdq_prod::kEn.mask32() | 1);
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
  const uint64_t cons = bus(false, q + reg::kEcmdqCons);
  EXPECT_TRUE(cons & reg::ecmdq_cons::kErr.mask32());
  EXPECT_EQ(reg::ecmdq_cons::kRd.get(cons), 0u) << "CONS stays at the refused command";
  EXPECT_TRUE(active() & reg::gerror::kCmdqpErr.mask32());
  EXPECT_FALSE(active() & reg::gerror::kCmdqErr.mask32()) << "the main queue did nothing wrong";
  EXPECT_EQ(lines_.raised[kGerrorLine], 1u);
}

}  // namespace
}  // namespace smmu_vp::smmu

// The stall model (IHI 0070 3.12.2, 4.7.1, 4.7.2): a client transaction
// whose stage-1 fault the CD asks to stall (CD.S) waits in the SMMU, its
// fault recorded with Stall = 1 and a STAG, until CMD_RESUME retries or
// terminates it, CMD_STALL_TERM terminates its stream's, or SMMUEN = 0 ends
// them all. The SMMU runs alone with its tables poked into memory; a client
// thread makes one write and waits for its response.
#include <array>
#include <cstring>
#include <initializer_list>
#include <vector>

#include <gtest/gtest.h>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "common/stats.h"
#include "common/stream_id_extension.h"
#include "common/tlm_time.h"
#include "smmu/commands.h"
#include "smmu/descriptors.h"
#include "smmu/event_queue.h"
#include "smmu/register_file.h"
#include "smmu/registers.h"
#include "smmu/smmu.h"
#include "smmu_register_driver.h"
#include "smmu_test_memory.h"

namespace smmu_vp::smmu {
namespace {

constexpr uint64_t kMem = 0x8000'0000;
constexpr uint64_t kMemSize = 1 << 20;
constexpr uint64_t kCmdq = kMem;
constexpr uint64_t kEvtq = kMem + 0x1000;
constexpr uint64_t kStrtab = kMem + 0x4000;
constexpr uint64_t kCd = kMem + 0x5000;
constexpr uint64_t kTables = kMem + 0x10000;
constexpr uint64_t kPage = kMem + 0x20000;
constexpr uint64_t kIova = 0x4000'0000;  // not mapped until a test maps it
constexpr uint32_t kSid = 1;

using Memory = test::SmmuTestMemory;

// Makes one 8-byte write to kIova from its thread, `count` times 1 us apart.
struct Client : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Client> socket{"socket"};
  unsigned count = 1;
  std::vector<tlm::tlm_response_status> responses;
  std::vector<Ps> returned;  // now + delay at the return
  SC_HAS_PROCESS(Client);
  explicit Client(sc_core::sc_module_name n) : sc_module(n) { SC_THREAD(run); }
  void run() {
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));  // after the test's bring-up
    for (unsigned i = 0; i < count; ++i) {
      uint64_t value = 0xABC0 + i;
      tlm::tlm_generic_payload t;
      t.set_command(tlm::TLM_WRITE_COMMAND);
      t.set_address(kIova + 8 * i);
      t.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
      t.set_data_length(8);
      t.set_streaming_width(8);
      StreamIdExtension id(kSid, 0, false);
      t.set_extension(&id);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      socket->b_transport(t, delay);
      t.clear_extension(&id);
      responses.push_back(t.get_response_status());
      returned.push_back(now_ps() + sc_to_ps(delay));
    }
  }
};

// Bound to the register socket only: the test writes registers directly.
struct RegsPort : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<RegsPort> socket{"socket"};
  explicit RegsPort(sc_core::sc_module_name n) : sc_module(n) {}
};

SmmuConfig config(unsigned stall_max) {
  SmmuConfig c;
  c.base = 0x0900'0000;
  c.features = SmmuFeatures::v3_3_profile();
  c.features.stall_model = reg::idr0::kStallModelBoth;
  c.features.stall_max = stall_max;
  return c;
}

class SmmuStall : public ::testing::Test {
 protected:
  explicit SmmuStall(unsigned stall_max = 4)
      : mem_("mem", kMem, kMemSize), client_("client"), regs_("regs"), smmu_("smmu", config(stall_max), nullptr, stats_, nullptr) {
    smmu_.downstream.bind(mem_.socket);
    client_.socket.bind(smmu_.upstream);
    regs_.socket.bind(smmu_.regs);
    for (unsigned l = 0; l < 3; ++l) {
      const uint64_t desc = (kTables + (l + 1) * 0x1000) | 3;
      mem_.poke(kTables + l * 0x1000 + 8 * ((kIova >> (39 - 9 * l)) & 511), &desc, 8);
    }
    DecodedCd cd;
    cd.t0sz = 16;
    cd.granule = Granule::k4K;
    cd.ips_bits = 48;
    cd.asid = 1;
    cd.ttb0 = kTables;
    cd.stall = true;
    const CdWords cdw = encode_cd(cd);
    mem_.poke(kCd, cdw.data(), sizeof cdw);
    DecodedSte ste;
    ste.config = ste::kS1Trans;
    ste.s1_context_ptr = kCd;
    const SteWords w = encode_ste(ste);
    mem_.poke(kStrtab + 64 * kSid, w.data(), sizeof w);
  }

  void wr(uint64_t off, uint64_t v, unsigned size = 4) { drv_.wr(off, v, size); }
  uint32_t rd(uint64_t off) { return drv_.rd(off); }
  uint32_t cr0(bool eventq = true) { return test::cr0_on(eventq); }
  void bring_up(bool eventq = true) { drv_.bring_up(cr0(eventq)); }
  void run_us(double us) { sc_core::sc_start(sc_core::sc_time(us, sc_core::SC_US)); }
  void submit(std::initializer_list<CommandWords> cmds) {
    drv_.publish(cmds);
    run_us(10);
  }
  void map_page() {
    const uint64_t pte = kPage | 3 | (1u << 11) | (1u << 10) | (3u << 8) | (1u << 6);
    mem_.poke(kTables + 3 * 0x1000 + 8 * ((kIova >> 12) & 511), &pte, 8);
  }
  unsigned events() { return drv_.events(); }
  EventRecord event(unsigned i) { return drv_.event(i); }
  uint64_t counter(const std::string& name) { return stats_.has(name) ? stats_.counter(name).value() : 0; }

  StatsRegistry stats_;
  Memory mem_;
  Client client_;
  RegsPort regs_;
  Smmu smmu_;
  test::SmmuRegisterDriver drv_{smmu_, mem_, kCmdq, kEvtq, kStrtab};
};

// 3.12.2: the faulting write waits, its F_TRANSLATION recorded with Stall = 1
// and a STAG; software maps the page and CMD_RESUME(Retry) lets it go on, as
// though it had just arrived: it is translated and lands.
TEST_F(SmmuStall, Stall3122_ResumeRetryAfterMappingCompletesTheWrite) {
  bring_up();
  run_us(5);
  ASSERT_TRUE(client_.responses.empty()) << "the write must wait";
  ASSERT_EQ(events(), 1u);
  const EventRecord e = event(0);
  EXPECT_EQ(e.id, EventId::kTranslation);
  EXPECT_TRUE(e.stall);
  EXPECT_EQ(e.sid, kSid);
  EXPECT_EQ(e.input_addr, kIova);
  map_page();
  submit({cmd_tlbi_nh_va(1, 0, kIova, true), cmd_sync(SyncCs::kNone), cmd_resume(kSid, e.stag, true, false)});
  ASSERT_EQ(client_.responses.size(), 1u);
  EXPECT_EQ(client_.responses[0], tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(mem_.peek64(kPage), 0xABC0u);
  EXPECT_GE(client_.returned[0], sc_to_ps(sc_core::sc_time(5, sc_core::SC_US)));
  EXPECT_EQ(counter("smmu.stalls.stalled"), 1u);
  EXPECT_EQ(stats_.histogram("smmu.stalls.stall_ns").count(), 1u);
}

// 4.7.1: CMD_RESUME with Action terminate aborts the transaction.
TEST_F(SmmuStall, Stall471_ResumeTerminateAborts) {
  bring_up();
  run_us(5);
  ASSERT_EQ(events(), 1u);
  submit({cmd_resume(kSid, event(0).stag, false, true)});
  ASSERT_EQ(client_.responses.size(), 1u);
  EXPECT_EQ(client_.responses[0], tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(mem_.peek64(kPage), 0u);
  EXPECT_EQ(counter("smmu.stalls.terminated"), 1u);
}

// 3.12.2, 4.7.1: a CMD_RESUME resolves only the transaction of its StreamID
// and STAG; 4.7.2: CMD_STALL_TERM ends every stalled one of the stream.
TEST_F(SmmuStall, Stall472_ResumeOfAnotherStagDoesNothingStallTermEndsIt) {
  bring_up();
  run_us(5);
  ASSERT_EQ(events(), 1u);
  const uint16_t stag = event(0).stag;
  submit({cmd_resume(kSid, static_cast<uint16_t>(stag + 1), true, false), cmd_resume(kSid + 1, stag, true, false)});
  EXPECT_TRUE(client_.responses.empty());
  EXPECT_EQ(counter("smmu.stalls.resume_unmatched"), 2u);
  submit({cmd_stall_term(kSid)});
  ASSERT_EQ(client_.responses.size(), 1u);
  EXPECT_EQ(client_.responses[0], tlm::TLM_GENERIC_ERROR_RESPONSE);
}

// 3.12.2: clearing SMMUEN terminates every stalled transaction.
TEST_F(SmmuStall, Stall3122_SmmuDisableTerminates) {
  bring_up();
  run_us(5);
  ASSERT_TRUE(client_.responses.empty());
  wr(reg::kCr0, reg::cr0::kCmdqEn.mask32() | reg::cr0::kEventqEn.mask32());
  run_us(1);
  ASSERT_EQ(client_.responses.size(), 1u);
  EXPECT_EQ(client_.responses[0], tlm::TLM_GENERIC_ERROR_RESPONSE);
}

// 3.12.2: with the event queue not writable the stall cannot be recorded:
// the transaction is retried when the queue is next writable, and then
// stalls with its record.
TEST_F(SmmuStall, Stall3122_RetriedWhenTheEventQueueBecomesWritable) {
  bring_up(false);
  run_us(5);
  EXPECT_TRUE(client_.responses.empty());
  EXPECT_EQ(events(), 0u);
  wr(reg::kCr0, cr0(true));
  run_us(2);
  ASSERT_EQ(events(), 1u);
  EXPECT_TRUE(event(0).stall);
  map_page();
  submit({cmd_resume(kSid, event(0).stag, true, false)});
  ASSERT_EQ(client_.responses.size(), 1u);
  EXPECT_EQ(client_.responses[0], tlm::TLM_OK_RESPONSE);
}

class SmmuStallMaxOne : public SmmuStall {
 protected:
  SmmuStallMaxOne() : SmmuStall(1), client2_("client2") { client2_.socket.bind(smmu_.upstream); }
  Client client2_;
};

// IDR5.STALL_MAX: with one transaction stalled already, the model terminates
// the next one that would stall, its fault recorded without Stall (the
// terminate model's behaviour).
TEST_F(SmmuStallMaxOne, StallMax_BeyondItTheTransactionIsTerminated) {
  EXPECT_EQ(reg::idr5::kStallMax.get(rd(reg::kIdr5)), 1u);
  bring_up();
  run_us(5);
  ASSERT_EQ(events(), 2u);
  const unsigned stall_record = event(0).stall ? 0 : 1;
  EXPECT_NE(event(0).stall, event(1).stall);  // one stalled, one terminated
  EXPECT_EQ(client_.responses.size() + client2_.responses.size(), 1u);
  const Client& terminated = client_.responses.empty() ? client2_ : client_;
  const Client& stalled = client_.responses.empty() ? client_ : client2_;
  ASSERT_EQ(terminated.responses.size(), 1u);
  EXPECT_EQ(terminated.responses[0], tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(counter("smmu.stalls.terminated_not_possible"), 1u);
  map_page();
  submit({cmd_resume(kSid, event(stall_record).stag, true, false)});
  ASSERT_EQ(stalled.responses.size(), 1u);
  EXPECT_EQ(stalled.responses[0], tlm::TLM_OK_RESPONSE);
}

// Without the stall model (STALL_MODEL 0b01) CMD_RESUME and CMD_STALL_TERM
// are CERROR_ILL: commands_test.cc. IDR0.STALL_MODEL as configured:
TEST_F(SmmuStall, Stall_IdRegistersSayItStalls) {
  EXPECT_EQ(reg::idr0::kStallModel.get(rd(reg::kIdr0)), reg::idr0::kStallModelBoth);
  EXPECT_EQ(reg::idr5::kStallMax.get(rd(reg::kIdr5)), 4u);
}

}  // namespace
}  // namespace smmu_vp::smmu

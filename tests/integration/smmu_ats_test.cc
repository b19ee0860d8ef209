// PCIe ATS at the SMMU (IHI 0070 3.9.1): Translation Requests answered from
// the TLB or a walk, with the completion the spec gives each outcome
// (3.9.1.2); translated transactions passed on as CR0.ATSCHK and STE.EATS
// allow (3.9.1.3); CMD_ATC_INV sent to the endpoint and CMD_SYNC waiting for
// its completion, or failing with CERROR_ATC_INV_SYNC when it never comes
// (3.9.1.4, 4.5.1, 7.1). The SMMU module runs alone, its tables poked into
// memory and its registers written directly; a fake endpoint records the
// invalidations it receives.
#include <cstring>
#include <initializer_list>
#include <optional>
#include <vector>

#include <gtest/gtest.h>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "common/ats_dma.h"
#include "common/device_atc.h"
#include "common/stats.h"
#include "common/stream_id_extension.h"
#include "smmu/ats.h"
#include "smmu/commands.h"
#include "smmu/descriptors.h"
#include "smmu/event_queue.h"
#include "smmu/pri_queue.h"
#include "smmu/register_file.h"
#include "smmu/registers.h"
#include "smmu/smmu.h"
#include "smmu_register_driver.h"
#include "smmu_test_memory.h"

namespace smmu_vp::smmu {
namespace {

constexpr uint64_t kMem = 0x8000'0000;
constexpr uint64_t kMemSize = 1 << 20;
constexpr uint64_t kCmdq = kMem;             // 64 commands
constexpr uint64_t kEvtq = kMem + 0x1000;    // 64 records
constexpr uint64_t kStrtab = kMem + 0x4000;  // 64 STEs
constexpr uint64_t kCd = kMem + 0x5000;
constexpr uint64_t kPriq = kMem + 0x3000;    // 2 page requests (PRIQS 1)
constexpr uint64_t kMsi = kMem + 0x3800;     // the PRI queue's MSI target
constexpr uint64_t kTables = kMem + 0x10000;  // levels 0..3, a page each
constexpr uint64_t kPages = kMem + 0x20000;
constexpr uint64_t kIova = 0x4000'0000;  // RW page, then a read-only one, then nothing

// StreamIDs, one per STE kind.
enum : uint32_t { kAts = 1, kNoAts = 2, kBypass = 3, kAbort = 4, kInvalid = 5, kDssBypass = 6, kNoAtsBadCd = 7 };

using Memory = test::SmmuTestMemory;

struct Master : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Master> socket{"socket"};
  tlm_utils::simple_initiator_socket<Master> regs{"regs"};  // bound only
  explicit Master(sc_core::sc_module_name n) : sc_module(n) {}
};

// An endpoint's ATC as the SMMU sees it: answers each invalidation
// `answer_ns` after it arrives, or never.
struct FakeEndpoint : AtsDevice {
  std::optional<double> answer_ns = 300.0;
  std::vector<Invalidation> received;
  std::vector<Ps> arrivals;
  std::vector<PrgResponse> responses;
  void prg_response(const PrgResponse& r, Ps) override { responses.push_back(r); }
  std::optional<Ps> atc_invalidate(const Invalidation& inv, Ps arrives) override {
    received.push_back(inv);
    arrivals.push_back(arrives);
    if (!answer_ns) return std::nullopt;
    return arrives + ns_to_ps(*answer_ns);
  }
};

SmmuConfig config(bool ats, bool pri = false) {
  SmmuConfig c;
  c.base = 0x0900'0000;
  c.features = SmmuFeatures::v3_3_profile();
  c.features.ats = ats;
  c.features.pri = pri;
  c.features.priqs = 1;
  c.ats.atc_inv_timeout_us = 5.0;  // within one submit()'s 10 us
  return c;
}

class SmmuAts : public ::testing::Test {
 protected:
  explicit SmmuAts(bool ats = true, bool pri = false)
      : mem_("mem", kMem, kMemSize), master_("master"), smmu_("smmu", config(ats, pri), nullptr, stats_, nullptr) {
    smmu_.downstream.bind(mem_.socket);
    master_.socket.bind(smmu_.upstream);
    master_.regs.bind(smmu_.regs);
    build_tables();
  }

  void wr(uint64_t off, uint64_t v, unsigned size = 4) { drv_.wr(off, v, size); }
  uint32_t rd(uint64_t off) { return drv_.rd(off); }

  // Stage-1 tables (4 KiB granule, 48-bit) mapping kIova read-write and
  // kIova + 4K read-only; one CD (ASID 1) and an STE per StreamID kind.
  void build_tables() {
    for (unsigned l = 0; l < 3; ++l) {
      const uint64_t desc = (kTables + (l + 1) * 0x1000) | 3;
      mem_.poke(kTables + l * 0x1000 + 8 * ((kIova >> (39 - 9 * l)) & 511), &desc, 8);
    }
    // nG, AF, inner shareable, AP[1] (EL0 access); AP[2] read-only on the second.
    const uint64_t attrs = 3 | (1u << 11) | (1u << 10) | (3u << 8) | (1u << 6);
    const uint64_t rw = kPages | attrs, ro = (kPages + 0x1000) | attrs | (1u << 7);
    // Privileged only (no AP[1]), at kIova + 12K.
    const uint64_t priv = (kPages + 0x3000) | (attrs & ~uint64_t{1u << 6});
    mem_.poke(kTables + 3 * 0x1000 + 8 * ((kIova >> 12) & 511), &rw, 8);
    mem_.poke(kTables + 3 * 0x1000 + 8 * (((kIova >> 12) + 1) & 511), &ro, 8);
    mem_.poke(kTables + 3 * 0x1000 + 8 * (((kIova >> 12) + 3) & 511), &priv, 8);

    DecodedCd cd;
    cd.t0sz = 16;
    cd.granule = Granule::k4K;
    cd.ips_bits = 48;
    cd.asid = 1;
    cd.ttb0 = kTables;
    const CdWords cdw = encode_cd(cd);
    mem_.poke(kCd, cdw.data(), sizeof cdw);
    // Two CDs for the S1DSS stream (S1CDMax 1); CD 0 is the same.
    mem_.poke(kCd + 64, cdw.data(), sizeof cdw);

    DecodedSte s1;
    s1.config = ste::kS1Trans;
    s1.s1_context_ptr = kCd;
    auto put = [&](uint32_t sid, const DecodedSte& s, bool valid = true) {
      const SteWords w = encode_ste(s, valid);
      mem_.poke(kStrtab + 64 * sid, w.data(), sizeof w);
    };
    DecodedSte ats = s1;
    ats.eats = ste::kEatsFull;
    put(kAts, ats);
    put(kNoAts, s1);
    DecodedSte bypass;
    bypass.config = ste::kBypass;
    put(kBypass, bypass);
    DecodedSte abort;
    abort.config = ste::kAbort;
    put(kAbort, abort);
    put(kInvalid, ats, false);
    DecodedSte dss = ats;
    dss.s1_cdmax = 1;
    dss.s1dss = ste::kBypassDss;
    put(kDssBypass, dss);
    DecodedSte bad_cd = s1;
    bad_cd.s1_context_ptr = kCd + 0x400;  // zeroes: CD.V = 0
    put(kNoAtsBadCd, bad_cd);
  }

  void bring_up(uint32_t extra_cr0 = 0) { drv_.bring_up(test::cr0_on() | extra_cr0); }

  // Publishes the commands with one PROD write, then runs 10 us.
  void submit(std::initializer_list<CommandWords> cmds) {
    drv_.publish(cmds);
    sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
  }

  // `t` through the upstream socket with `id` and `ats` attached.
  tlm::tlm_response_status transport(tlm::tlm_generic_payload& t, StreamIdExtension& id, AtsExtension& ats) {
    t.set_extension(&id);
    t.set_extension(&ats);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    master_.socket->b_transport(t, delay);
    t.clear_extension(&id);
    t.clear_extension(&ats);
    return t.get_response_status();
  }
  // A payload of length 0 at `addr`, as Translation and Page Requests are.
  static void message(tlm::tlm_generic_payload& t, uint64_t addr) {
    t.set_command(tlm::TLM_IGNORE_COMMAND);
    t.set_address(addr);
    t.set_data_ptr(nullptr);
    t.set_data_length(0);
  }

  AtsExtension request(uint32_t sid, uint64_t addr, bool ssv = false, bool privileged = false) {
    tlm::tlm_generic_payload t;
    message(t, addr);
    StreamIdExtension id(sid, 0, ssv);
    id.privileged = privileged;
    AtsExtension ats(AtsExtension::Kind::kTranslationRequest);
    EXPECT_EQ(transport(t, id, ats), tlm::TLM_OK_RESPONSE);
    return ats;
  }

  // A PRI Page Request for the page at `addr`; whether the SMMU queued it.
  bool page_request(uint32_t sid, uint64_t addr, uint16_t prg, bool last = true, bool write = false) {
    tlm::tlm_generic_payload t;
    message(t, addr);
    StreamIdExtension id(sid, 0, false);
    AtsExtension ats(AtsExtension::Kind::kPageRequest);
    ats.prg_index = prg;
    ats.last = last;
    ats.want_write = write;
    EXPECT_EQ(transport(t, id, ats), tlm::TLM_OK_RESPONSE);
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
    return ats.accepted;
  }
  PageRequestRecord priq_record(unsigned i) {
    return PageRequestRecord::decode({mem_.peek64(kPriq + 16 * i), mem_.peek64(kPriq + 16 * i + 8)});
  }
  // The PRI queue at kPriq, its MSI to kMsi, PRIQEN and PRIQ_IRQEN.
  void bring_up_priq(uint32_t irq_cfg2 = 0) {
    bring_up();
    wr(reg::kPriqBase, kPriq | 1, 8);
    wr(reg::kPriqIrqCfg0, kMsi, 8);
    wr(reg::kPriqIrqCfg1, 0x5151);
    wr(reg::kPriqIrqCfg2, irq_cfg2);
    wr(reg::kIrqCtrl, reg::irq_ctrl::kPriqIrqEn.mask32());
    wr(reg::kCr0, reg::cr0::kSmmuEn.mask32() | reg::cr0::kCmdqEn.mask32() | reg::cr0::kEventqEn.mask32() |
                      reg::cr0::kPriqEn.mask32());
  }

  // A translated 8-byte write of `value` to `pa`.
  tlm::tlm_response_status translated_write(uint32_t sid, uint64_t pa, uint64_t value) {
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_WRITE_COMMAND);
    t.set_address(pa);
    t.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
    t.set_data_length(8);
    t.set_streaming_width(8);
    StreamIdExtension id(sid, 0, false);
    AtsExtension ats(AtsExtension::Kind::kTranslated);
    return transport(t, id, ats);
  }

  uint32_t events() { return drv_.events(); }
  EventRecord event(unsigned i) { return drv_.event(i); }
  uint64_t counter(const std::string& name) { return stats_.has(name) ? stats_.counter(name).value() : 0; }

  StatsRegistry stats_;
  Memory mem_;
  Master master_;
  Smmu smmu_;
  test::SmmuRegisterDriver drv_{smmu_, mem_, kCmdq, kEvtq, kStrtab};
};

using Status = AtsExtension::Status;

// 3.9.1.2, 13.7: a translation the stream may write is returned R = W = 1,
// aligned to its size; a second request is served from the TLB.
TEST_F(SmmuAts, Ats3912_SuccessFromWalkThenTlb) {
  bring_up();
  const AtsExtension a = request(kAts, kIova + 0x123);
  EXPECT_EQ(a.status, Status::kSuccess);
  EXPECT_EQ(a.untranslated_addr, kIova);
  EXPECT_EQ(a.translated_addr, kPages);
  EXPECT_EQ(a.size_log2, 12u);
  EXPECT_TRUE(a.read);
  EXPECT_TRUE(a.write);
  EXPECT_FALSE(a.execute);
  const uint64_t walks = counter("smmu.ptw.walks.s1"), hits = counter("smmu.tlb.hits");
  EXPECT_GE(walks, 1u);
  EXPECT_EQ(request(kAts, kIova + 0x800).status, Status::kSuccess);
  EXPECT_EQ(counter("smmu.ptw.walks.s1"), walks);
  EXPECT_EQ(counter("smmu.tlb.hits"), hits + 1);
  EXPECT_EQ(counter("smmu.ats.translation_requests"), 2u);
  EXPECT_EQ(counter("smmu.ats.success"), 2u);
  EXPECT_EQ(events(), 0u);
}

// 13.7: W only where the translation is writable.
TEST_F(SmmuAts, Ats137_ReadOnlyPageGrantsNoWrite) {
  bring_up();
  const AtsExtension a = request(kAts, kIova + 0x1000);
  EXPECT_EQ(a.status, Status::kSuccess);
  EXPECT_EQ(a.translated_addr, kPages + 0x1000);
  EXPECT_TRUE(a.read);
  EXPECT_FALSE(a.write);
}

// 3.9.1.2: a translation fault is a Success with R = W = 0 over one STU
// (4 KiB here), and no event is recorded.
TEST_F(SmmuAts, Ats3912_TranslationFaultIsSuccessWithoutAccessOrEvent) {
  bring_up();
  const AtsExtension a = request(kAts, kIova + 0x2040);
  EXPECT_EQ(a.status, Status::kSuccess);
  EXPECT_FALSE(a.read);
  EXPECT_FALSE(a.write);
  EXPECT_EQ(a.size_log2, 12u);
  EXPECT_EQ(a.untranslated_addr, kIova + 0x2000);
  EXPECT_EQ(events(), 0u);
  EXPECT_EQ(counter("smmu.ats.no_access"), 1u);
}

// 3.9.1.2, 5.2: STE.EATS = 0, or a bypass STE, gives UR and F_BAD_ATS_TREQ.
TEST_F(SmmuAts, Ats3912_NoAtsOrBypassIsUnsupportedWithBadAtsTreq) {
  bring_up();
  EXPECT_EQ(request(kNoAts, kIova).status, Status::kUnsupportedRequest);
  EXPECT_EQ(request(kBypass, kIova).status, Status::kUnsupportedRequest);
  ASSERT_EQ(events(), 2u);
  EXPECT_EQ(event(0).id, EventId::kBadAtsTreq);
  EXPECT_EQ(event(0).sid, kNoAts);
  EXPECT_EQ(event(0).input_addr, kIova);
  EXPECT_EQ(event(1).id, EventId::kBadAtsTreq);
  EXPECT_EQ(event(1).sid, kBypass);
}

// 7.3.6, 3.9.1.2: EATS is a property of the STE: a stream without ATS is
// refused before its CD is looked at, even when the CD is bad.
TEST_F(SmmuAts, Ats736_EatsIsCheckedBeforeTheCd) {
  bring_up();
  EXPECT_EQ(request(kNoAtsBadCd, kIova).status, Status::kUnsupportedRequest);
  ASSERT_EQ(events(), 1u);
  EXPECT_EQ(event(0).id, EventId::kBadAtsTreq);
}

// 13.7, 13.7.1: a request without a PASID is unprivileged data, whatever
// the stream's privilege: a privileged-only page gives nothing, and Priv
// and Exe are 0 in the completion.
TEST_F(SmmuAts, Ats1371_WithoutPasidTheRequestIsUnprivileged) {
  bring_up();
  const AtsExtension a = request(kAts, kIova + 0x3000, false, true);
  EXPECT_EQ(a.status, Status::kSuccess);
  EXPECT_FALSE(a.read);
  EXPECT_FALSE(a.write);
  EXPECT_FALSE(a.priv);
  EXPECT_TRUE(request(kAts, kIova, false, true).write);
}

// 5.2 (Config abort): UR, silently.
TEST_F(SmmuAts, Ats3912_AbortSteIsUnsupportedWithoutEvent) {
  bring_up();
  EXPECT_EQ(request(kAbort, kIova).status, Status::kUnsupportedRequest);
  EXPECT_EQ(events(), 0u);
}

// 3.9.1.2: a configuration error is a Completer Abort; without
// CR2.REC_CFG_ATS (IDR0.ATSRECERR = 0) nothing is recorded.
TEST_F(SmmuAts, Ats3912_ConfigErrorIsCompleterAbortWithoutRecord) {
  bring_up();
  EXPECT_EQ(request(kInvalid, kIova).status, Status::kCompleterAbort);
  EXPECT_EQ(events(), 0u);
  EXPECT_EQ(counter("smmu.ats.completer_abort"), 1u);
}

// 13.6.4: with stage 1 bypassed by S1DSS and no stage 2, the answer is the
// identity over the whole output address space, readable and writable.
TEST_F(SmmuAts, Ats1364_S1dssBypassIsIdentity) {
  bring_up();
  const AtsExtension a = request(kDssBypass, kIova);
  EXPECT_EQ(a.status, Status::kSuccess);
  EXPECT_EQ(a.translated_addr, 0u);
  EXPECT_EQ(a.size_log2, 48u);
  EXPECT_TRUE(a.read && a.write);
}

// 3.9.1.2, 3.9.1.3: with SMMUEN = 0 a Translation Request is UR with
// F_BAD_ATS_TREQ, and a translated transaction is terminated with
// F_TRANSL_FORBIDDEN although GBPA lets untranslated traffic through.
TEST_F(SmmuAts, Ats391_SmmuDisabled) {
  bring_up();
  wr(reg::kCr0, reg::cr0::kCmdqEn.mask32() | reg::cr0::kEventqEn.mask32());
  EXPECT_EQ(request(kAts, kIova).status, Status::kUnsupportedRequest);
  EXPECT_EQ(translated_write(kAts, kPages, 0x1234), tlm::TLM_GENERIC_ERROR_RESPONSE);
  ASSERT_EQ(events(), 2u);
  EXPECT_EQ(event(0).id, EventId::kBadAtsTreq);
  EXPECT_EQ(event(1).id, EventId::kTranslForbidden);
  EXPECT_EQ(mem_.peek64(kPages), 0u);
}

// 3.9.1.3: with CR0.ATSCHK = 0 a translated transaction is not checked
// against the STE (even EATS = 0 passes), only against the OAS.
TEST_F(SmmuAts, Ats3913_WithoutAtsChkTranslatedTrafficPasses) {
  bring_up();
  EXPECT_EQ(translated_write(kNoAts, kPages + 8, 0xABCD), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(mem_.peek64(kPages + 8), 0xABCDu);
  EXPECT_EQ(translated_write(kAts, uint64_t{1} << 48, 1), tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(events(), 0u);
  EXPECT_EQ(counter("smmu.ats.translated"), 1u);
}

// 3.9.1.3: with CR0.ATSCHK = 1 the STE decides: EATS = 1 passes; EATS = 0
// and bypass are F_TRANSL_FORBIDDEN; Config abort terminates silently.
TEST_F(SmmuAts, Ats3913_AtsChkChecksTheSte) {
  bring_up(reg::cr0::kAtsChk.mask32());
  ASSERT_TRUE(smmu_.registers().atschk());
  EXPECT_EQ(translated_write(kAts, kPages + 16, 7), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(mem_.peek64(kPages + 16), 7u);
  EXPECT_EQ(translated_write(kNoAts, kPages + 24, 8), tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(translated_write(kBypass, kPages + 24, 8), tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(translated_write(kAbort, kPages + 24, 8), tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(translated_write(kInvalid, kPages + 24, 8), tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(mem_.peek64(kPages + 24), 0u);
  ASSERT_EQ(events(), 2u);
  EXPECT_EQ(event(0).id, EventId::kTranslForbidden);
  EXPECT_EQ(event(0).sid, kNoAts);
  EXPECT_EQ(event(0).input_addr, kPages + 24);
  EXPECT_FALSE(event(0).rnw);
  EXPECT_EQ(event(1).sid, kBypass);
  // 7.3.8: only RnW is defined in dword 1 (here 0, a write): CLASS, PnU and
  // the rest are RES0.
  EXPECT_EQ(mem_.peek64(kEvtq + 8), 0u);
  // 3.9.1: the address check comes after the STE's: beyond the OAS on a
  // stream the STE refuses is F_TRANSL_FORBIDDEN too.
  EXPECT_EQ(translated_write(kNoAts, uint64_t{1} << 48, 1), tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(events(), 3u);
}

// 4.5.1, 3.9.1.4: the invalidation reaches the endpoint behind its
// StreamID, aligned to its span, and the CMD_SYNC behind it completes only
// once the endpoint's completion is back (two link crossings and its work).
TEST_F(SmmuAts, Ats3914_SyncWaitsForTheAtcInvalidation) {
  FakeEndpoint ep;
  smmu_.attach_ats_device(kAts, &ep);
  bring_up();
  submit({cmd_atc_inv(kAts, kIova + 0x3000, 2), cmd_sync(SyncCs::kNone)});
  ASSERT_EQ(ep.received.size(), 1u);
  EXPECT_EQ(ep.received[0].sid, kAts);
  EXPECT_EQ(ep.received[0].addr, kIova);  // 16 KiB span, aligned
  EXPECT_EQ(ep.received[0].bytes(), 16u * 1024);
  EXPECT_EQ(rd(reg::kCmdqCons) & 127, 2u);
  const AtsTiming t = config(true).ats;
  const double floor_ns = t.message_ns + 2 * t.pcie_latency_ns + 300.0;
  EXPECT_GE(stats_.histogram("smmu.cmdq.sync_latency_ns").max(), floor_ns);
  EXPECT_GE(stats_.histogram("smmu.ats.atc_inv_latency_ns").max(), floor_ns);
  EXPECT_EQ(counter("smmu.ats.atc_invalidations"), 1u);
  // Size 52 invalidates everything.
  submit({cmd_atc_inv(kAts, 0, kAtcInvSizeAll)});
  ASSERT_EQ(ep.received.size(), 2u);
  EXPECT_TRUE(ep.received[1].all());
}

// 4.5.1: a StreamID without an ATS endpoint has nothing to wait for, and
// with SMMUEN = 0 the command is IGNORED.
TEST_F(SmmuAts, Ats451_NoEndpointOrSmmuDisabledCompletesAtOnce) {
  FakeEndpoint ep;
  ep.answer_ns.reset();  // would time out if asked
  smmu_.attach_ats_device(kAts, &ep);
  bring_up();
  submit({cmd_atc_inv(kNoAts, kIova, 0)});
  submit({cmd_sync(SyncCs::kNone)});
  EXPECT_EQ(rd(reg::kCmdqCons) & 127, 2u);
  wr(reg::kCr0, reg::cr0::kCmdqEn.mask32() | reg::cr0::kEventqEn.mask32());
  submit({cmd_atc_inv(kAts, kIova, 0)});
  submit({cmd_sync(SyncCs::kNone)});
  EXPECT_EQ(rd(reg::kCmdqCons) & 127, 4u);
  EXPECT_TRUE(ep.received.empty());
  EXPECT_FALSE(smmu_.registers().gerror_active() & reg::gerror::kCmdqErr.mask32());
}

// 3.9.1.4, 7.1: an endpoint that never answers: the SYNC fails with
// CERROR_ATC_INV_SYNC and stays at CONS; once software acknowledges the
// error the queue fetches the SYNC again and goes on.
TEST_F(SmmuAts, Ats3914_TimeoutStopsTheQueueOnTheSync) {
  FakeEndpoint ep;
  ep.answer_ns.reset();
  smmu_.attach_ats_device(kAts, &ep);
  bring_up();
  submit({cmd_atc_inv(kAts, kIova, 0)});
  submit({cmd_sync(SyncCs::kNone)});
  const uint32_t cons = rd(reg::kCmdqCons);
  EXPECT_EQ(cons & 127, 1u) << "CONS must stay on the SYNC";
  EXPECT_EQ(reg::queue_cons::kErr.get(cons), reg::cerror::kAtcInvSync);
  const uint32_t active = smmu_.registers().gerror_active();
  ASSERT_TRUE(active & reg::gerror::kCmdqErr.mask32());
  EXPECT_EQ(counter("smmu.ats.atc_inv_timeouts"), 1u);
  EXPECT_EQ(counter("smmu.cmdq.errors.CERROR_ATC_INV_SYNC"), 1u);
  wr(reg::kGerrorn, smmu_.registers().gerror());
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
  EXPECT_EQ(rd(reg::kCmdqCons) & 127, 2u);
}

// An answer later than the SMMU's timeout is a timeout too.
TEST_F(SmmuAts, Ats3914_LateAnswerTimesOut) {
  FakeEndpoint ep;
  ep.answer_ns = 6000.0;  // the timeout is 5 us
  smmu_.attach_ats_device(kAts, &ep);
  bring_up();
  submit({cmd_atc_inv(kAts, kIova, 0)});
  submit({cmd_sync(SyncCs::kNone)});
  EXPECT_EQ(reg::queue_cons::kErr.get(rd(reg::kCmdqCons)), reg::cerror::kAtcInvSync);
}

class SmmuWithoutAts : public SmmuAts {
 protected:
  SmmuWithoutAts() : SmmuAts(false) {}
};

// Without IDR0.ATS: a Translation Request is UR without an event, a
// translated transaction is terminated, CR0.ATSCHK is RES0 and no ATS
// statistic exists.
TEST_F(SmmuWithoutAts, Ats391_WithoutAtsNothingIsTranslatedForTheEndpoint) {
  bring_up(reg::cr0::kAtsChk.mask32());
  EXPECT_FALSE(smmu_.registers().atschk());
  EXPECT_EQ(request(kAts, kIova).status, Status::kUnsupportedRequest);
  EXPECT_EQ(translated_write(kAts, kPages, 1), tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(events(), 0u);
  EXPECT_FALSE(stats_.has("smmu.ats.translation_requests"));
  EXPECT_FALSE(stats_.has("smmu.cmdq.errors.CERROR_ATC_INV_SYNC"));
}

class SmmuPri : public SmmuAts {
 protected:
  SmmuPri() : SmmuAts(true, true) { smmu_.attach_ats_device(kAts, &ep_); }
  uint32_t msis() const {
    return static_cast<uint32_t>(mem_.peek64(kMsi) & 0xFFFFFFFF) == 0x5151 ? 1u : 0u;
  }
  FakeEndpoint ep_;
};

// IHI 0070 8: a Page Request lands in the PRI queue with the fields of the
// PCIe message (no PASID: X and Priv 0), PRIQ_PROD moves and the queue's MSI
// goes out; software's CMD_PRI_RESP reaches the endpoint with its code.
TEST_F(SmmuPri, Pri8_PageRequestIsQueuedAndPriRespReachesTheEndpoint) {
  bring_up_priq();
  ASSERT_TRUE(page_request(kAts, kIova + 0x2345, 7, true, true));
  EXPECT_EQ(smmu_.registers().priq_prod().index(), 1u);
  const PageRequestRecord r = priq_record(0);
  EXPECT_EQ(r.sid, kAts);
  EXPECT_EQ(r.addr, kIova + 0x2000);
  EXPECT_EQ(r.prg_index, 7u);
  EXPECT_TRUE(r.last);
  EXPECT_TRUE(r.read);
  EXPECT_TRUE(r.write);
  EXPECT_FALSE(r.ssv);
  EXPECT_FALSE(r.priv);
  EXPECT_EQ(msis(), 1u);
  EXPECT_TRUE(ep_.responses.empty());
  submit({cmd_pri_resp(kAts, 7, 2)});  // Resp 0b10: Success
  ASSERT_EQ(ep_.responses.size(), 1u);
  EXPECT_EQ(ep_.responses[0].prg_index, 7u);
  EXPECT_EQ(ep_.responses[0].code, PrgResponseCode::kSuccess);
  EXPECT_FALSE(ep_.responses[0].automatic);
  submit({cmd_pri_resp(kAts, 8, 1), cmd_pri_resp(kAts, 9, 0)});
  ASSERT_EQ(ep_.responses.size(), 3u);
  EXPECT_EQ(ep_.responses[1].code, PrgResponseCode::kInvalidRequest);
  EXPECT_EQ(ep_.responses[2].code, PrgResponseCode::kResponseFailure);
  EXPECT_EQ(counter("smmu.ats.page_requests_queued"), 1u);
  EXPECT_EQ(counter("smmu.ats.prg_responses"), 3u);
}

// 6.3.35 PRIQ_IRQ_CFG2.LO: the interrupt only for the last request of a group.
TEST_F(SmmuPri, Pri8_LastOnlyInterrupt) {
  bring_up_priq(reg::irq_cfg2::kPriqLo.mask32());
  ASSERT_TRUE(page_request(kAts, kIova, 1, false));
  EXPECT_EQ(msis(), 0u);
  ASSERT_TRUE(page_request(kAts, kIova + 0x1000, 1, true));
  EXPECT_EQ(msis(), 1u);
}

// 8.1: a full queue overflows: OVFLG toggles, nothing more is written while
// the overflow lasts, a Last request gets an automatic Success and others
// are dropped silently; acknowledging it (OVACKFLG) lets requests in again.
TEST_F(SmmuPri, Pri81_OverflowAutoRespondsToLastRequests) {
  bring_up_priq();
  ASSERT_TRUE(page_request(kAts, kIova, 1));
  ASSERT_TRUE(page_request(kAts, kIova + 0x1000, 2));
  EXPECT_FALSE(page_request(kAts, kIova + 0x2000, 3));  // full
  EXPECT_TRUE(smmu_.registers().priq_overflow_pending());
  ASSERT_EQ(ep_.responses.size(), 1u);
  EXPECT_EQ(ep_.responses[0].prg_index, 3u);
  EXPECT_EQ(ep_.responses[0].code, PrgResponseCode::kSuccess);
  EXPECT_TRUE(ep_.responses[0].automatic);
  EXPECT_FALSE(page_request(kAts, kIova + 0x3000, 4, false));  // not Last: silently dropped
  EXPECT_EQ(ep_.responses.size(), 1u);
  // Software drains the queue and acknowledges the overflow in one write.
  const uint32_t ovflg = rd(reg::kPriqProd) & reg::queue_prod::kOvflg.mask32();
  wr(reg::kPriqCons, (rd(reg::kPriqProd) & 3) | ovflg);
  EXPECT_FALSE(smmu_.registers().priq_overflow_pending());
  EXPECT_TRUE(page_request(kAts, kIova + 0x4000, 5));
}

// 8.2: with PRIQEN = 0 (or SMMUEN = 0) every Page Request is answered by
// the SMMU with ResponseFailure and nothing is written.
TEST_F(SmmuPri, Pri82_QueueOffAnswersResponseFailure) {
  bring_up();  // PRIQEN stays 0
  EXPECT_FALSE(page_request(kAts, kIova, 6));
  ASSERT_EQ(ep_.responses.size(), 1u);
  EXPECT_EQ(ep_.responses[0].code, PrgResponseCode::kResponseFailure);
  EXPECT_TRUE(ep_.responses[0].automatic);
  EXPECT_EQ(smmu_.registers().priq_prod().index(), 0u);
}

// 8.2: an abort writing the PRI queue is GERROR.PRIQ_ABT_ERR; while it is
// active every request is answered with ResponseFailure.
TEST_F(SmmuPri, Pri82_WriteAbortIsPriqAbtErr) {
  bring_up();
  wr(reg::kPriqBase, 0xF000'0000 | 1, 8);  // outside memory
  wr(reg::kCr0, reg::cr0::kSmmuEn.mask32() | reg::cr0::kCmdqEn.mask32() | reg::cr0::kEventqEn.mask32() |
                    reg::cr0::kPriqEn.mask32());
  EXPECT_FALSE(page_request(kAts, kIova, 1));
  EXPECT_TRUE(smmu_.registers().gerror_active() & reg::gerror::kPriqAbtErr.mask32());
  wr(reg::kPriqBase, kPriq | 1, 8);  // ignored while PRIQEN: still aborting, and the error is active anyway
  EXPECT_FALSE(page_request(kAts, kIova, 2));
  ASSERT_EQ(ep_.responses.size(), 2u);
  EXPECT_EQ(ep_.responses[1].code, PrgResponseCode::kResponseFailure);
}

// An endpoint with an ATC and PRI (common/ats_dma.h) that makes one 8-byte
// write from its own thread, for the PRI tests below.
struct PriEndpoint : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<PriEndpoint> socket{"socket"};
  StatsRegistry& stats;
  DeviceAtc atc;
  tlm::tlm_generic_payload trans;
  std::unique_ptr<AtsDma> dma;
  uint64_t iova = 0, value = 0;
  bool done = false, ok = false;
  SC_HAS_PROCESS(PriEndpoint);
  PriEndpoint(sc_core::sc_module_name n, StatsRegistry& s, uint64_t addr)
      : sc_module(n), stats(s), atc(pri_atc(), s, "ep.atc"), iova(addr) {
    trans.set_extension(new StreamIdExtension(kAts, 0, false));
    dma = std::make_unique<AtsDma>(atc, *trans.get_extension<StreamIdExtension>(), send_through(socket), s, "ep.atc");
    SC_THREAD(run);
  }
  static AtcConfig pri_atc() {
    AtcConfig c;
    c.entries = 8;
    c.pri = true;
    return c;
  }
  void run() {
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));  // after the test's bring-up
    value = 0xFEED;
    dma->access(trans, true, iova, reinterpret_cast<uint8_t*>(&value), 8, now_ps(), &ok);
    done = true;
  }
};

// PCIe 10.4, IHI 0070 8: an endpoint that gets no translation asks for the
// page with a Page Request and waits; software maps the page and answers
// Success; the endpoint asks again and its write goes out translated.
TEST_F(SmmuPri, Pri8_AnEndpointWaitsForThePageThenWritesTranslated) {
  PriEndpoint ep("ep", stats_, kIova + 0x4000);  // not mapped yet
  ep.socket.bind(smmu_.upstream);
  smmu_.attach_ats_device(kAts, &ep.atc);
  bring_up_priq();
  sc_core::sc_start(sc_core::sc_time(5, sc_core::SC_US));
  EXPECT_FALSE(ep.done);  // waiting for the PRG Response
  ASSERT_EQ(smmu_.registers().priq_prod().index(), 1u);
  const PageRequestRecord r = priq_record(0);
  EXPECT_EQ(r.addr, kIova + 0x4000);
  EXPECT_TRUE(r.write);
  // Software: map the page (read-write), then respond.
  const uint64_t pte = (kPages + 0x4000) | 3 | (1u << 11) | (1u << 10) | (3u << 8) | (1u << 6);
  mem_.poke(kTables + 3 * 0x1000 + 8 * (((kIova >> 12) + 4) & 511), &pte, 8);
  submit({cmd_pri_resp(kAts, r.prg_index, 2)});
  ASSERT_TRUE(ep.done);
  EXPECT_TRUE(ep.ok);
  EXPECT_EQ(mem_.peek64(kPages + 0x4000), 0xFEEDu);
  EXPECT_EQ(counter("ep.atc.page_requests"), 1u);
  EXPECT_EQ(counter("ep.atc.fills"), 1u);
  EXPECT_EQ(counter("smmu.ats.translated"), 1u);
  // Asked at about 1.4 us, answered after software ran at 5 us.
  EXPECT_GE(stats_.histogram("ep.atc.page_fault_ns").max(), 3000.0);
}

// A response other than Success: the endpoint gives up on a translation and
// its access goes untranslated, which the SMMU faults.
TEST_F(SmmuPri, Pri8_AFailedPageRequestEndsInAFault) {
  PriEndpoint ep("ep", stats_, kIova + 0x5000);
  ep.socket.bind(smmu_.upstream);
  smmu_.attach_ats_device(kAts, &ep.atc);
  bring_up_priq();
  sc_core::sc_start(sc_core::sc_time(5, sc_core::SC_US));
  ASSERT_EQ(smmu_.registers().priq_prod().index(), 1u);
  submit({cmd_pri_resp(kAts, priq_record(0).prg_index, 1)});  // InvalidRequest
  ASSERT_TRUE(ep.done);
  EXPECT_FALSE(ep.ok);
  EXPECT_EQ(counter("ep.atc.page_faults_failed"), 1u);
  EXPECT_EQ(counter("smmu.faults.F_TRANSLATION"), 1u);
}

// Without IDR0.PRI the PRIQ registers are RES0 and nothing takes a Page
// Request: the SMMU answers ResponseFailure itself; CMD_PRI_RESP is ILLEGAL.
TEST_F(SmmuAts, Pri_WithoutPriNothingIsQueued) {
  FakeEndpoint ep;
  smmu_.attach_ats_device(kAts, &ep);
  bring_up();
  wr(reg::kPriqBase, kPriq | 1, 8);
  EXPECT_EQ(rd(reg::kPriqBase), 0u);
  EXPECT_FALSE(page_request(kAts, kIova, 1));
  ASSERT_EQ(ep.responses.size(), 1u);
  EXPECT_EQ(ep.responses[0].code, PrgResponseCode::kResponseFailure);
  submit({cmd_pri_resp(kAts, 1, 2)});
  EXPECT_EQ(reg::queue_cons::kErr.get(rd(reg::kCmdqCons)), reg::cerror::kIll);
}

}  // namespace
}  // namespace smmu_vp::smmu

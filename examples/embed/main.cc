// A minimal SystemC platform of "someone else's" with the smmu_vp SMMUv3
// model in it: a CPU port that programs the SMMU and writes its tables, a
// DMA master that says who it is with a StreamIdExtension, a router and a
// memory. The CPU brings the SMMU up as a driver would (IHI 0070 chapter 6
// registers, 5.2 STE, 5.4 CD, VMSAv8-64 stage-1 tables), the master makes a
// translated write and a faulting read, the CPU takes the event queue's
// interrupt (wired as a signal through IrqSignals) and reads the event
// record back, and the SMMU's statistics are printed. Exit 0 when every step
// did what the architecture says.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "common/irq_signals.h"
#include "common/stats.h"
#include "common/stream_id_extension.h"
#include "common/tlm_time.h"
#include "drivers/smmu/smmu_hw.h"
#include "memory/dram.h"
#include "memory/router.h"
#include "smmu/smmu.h"

namespace {

// The example's address map.
constexpr uint64_t kSmmuBase = 0x0900'0000;
constexpr uint64_t kDramBase = 0x8000'0000;
constexpr uint64_t kDramSize = 64ull << 20;
// In DRAM: the stream table (2 STEs), one CD, the queues, four levels of
// page tables and the buffer the device writes.
constexpr uint64_t kStrtab = kDramBase + 0x10'0000;
constexpr uint64_t kCd = kDramBase + 0x10'1000;
constexpr uint64_t kCmdq = kDramBase + 0x10'2000;   // 16 commands
constexpr uint64_t kEvtq = kDramBase + 0x10'3000;   // 16 event records
constexpr uint64_t kTables = kDramBase + 0x11'0000;  // level 0..3, 4 KiB each
constexpr uint64_t kBuffer = kDramBase + 0x20'0000;
// What the device sees.
constexpr uint32_t kStreamId = 1;
constexpr uint64_t kIova = 0x1000'0000;
constexpr uint64_t kUnmappedIova = 0x2000'0000;
// Interrupt lines of the SMMU, wired through IrqSignals.
constexpr unsigned kEventqIrq = 0, kGerrorIrq = 1, kSyncIrq = 2;

class Soc : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Soc);
  explicit Soc(sc_core::sc_module_name name)
      : sc_module(name),
        dram_("dram", dram_config(), stats_),
        router_("router", 2.0, stats_),
        smmu_("smmu", smmu_config(), &irqs_, stats_, nullptr),
        irqs_("irqs", 3) {
    // CPU and SMMU reach memory and the SMMU's registers through the router.
    cpu_.bind(router_.upstream);
    smmu_.downstream.bind(router_.upstream);
    router_.map("smmu", kSmmuBase, smmu_.register_space_size(), smmu_.regs);
    router_.map("dram", kDramBase, kDramSize, dram_.socket);
    // The DMA master's port goes to the SMMU.
    dev_.bind(smmu_.upstream);
    for (unsigned i = 0; i < 3; ++i) irqs_.out[i].bind(irq_lines_[i]);
    SC_THREAD(run);
  }

  bool passed() const { return failures_ == 0; }

 private:
  static smmu_vp::DramConfig dram_config() {
    smmu_vp::DramConfig c;
    c.base = kDramBase;
    c.size = kDramSize;
    return c;
  }
  static smmu_vp::smmu::SmmuConfig smmu_config() {
    smmu_vp::smmu::SmmuConfig c;  // the defaults: an SMMUv3.3 with a 256-entry TLB
    c.base = kSmmuBase;
    c.eventq_irq = kEventqIrq;
    c.gerror_irq = kGerrorIrq;
    c.sync_irq = kSyncIrq;
    c.translation.tlb.entries = 512;
    return c;
  }

  void check(bool ok, const char* what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) ++failures_;
  }

  // One access of a port, waited for (loosely timed: the delay it returns).
  tlm::tlm_response_status access(tlm_utils::simple_initiator_socket<Soc>& port, bool write, uint64_t addr,
                                  void* data, unsigned len, const smmu_vp::StreamIdExtension* sid = nullptr) {
    tlm::tlm_generic_payload t;
    t.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    t.set_address(addr);
    t.set_data_ptr(static_cast<unsigned char*>(data));
    t.set_data_length(len);
    t.set_streaming_width(len);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    smmu_vp::StreamIdExtension ext;
    if (sid) {
      ext = *sid;
      t.set_extension(&ext);
    }
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    port->b_transport(t, delay);
    if (sid) t.clear_extension(&ext);
    wait(delay);
    return t.get_response_status();
  }
  void cpu_write(uint64_t addr, uint64_t value, unsigned len = 8) { access(cpu_, true, addr, &value, len); }
  uint64_t cpu_read(uint64_t addr, unsigned len = 8) {
    uint64_t v = 0;
    access(cpu_, false, addr, &v, len);
    return v;
  }
  uint32_t reg_read(uint64_t off) { return static_cast<uint32_t>(cpu_read(kSmmuBase + off, 4)); }
  void reg_write(uint64_t off, uint64_t v, unsigned len = 4) { cpu_write(kSmmuBase + off, v, len); }

  // Stage-1 tables mapping kIova to kBuffer, read-write; the CD and the STE
  // of kStreamId pointing at them (IHI 0070 5.2, 5.4).
  void write_tables() {
    for (unsigned level = 0; level < 3; ++level) {
      const uint64_t table = kTables + level * 0x1000ull, next = table + 0x1000;
      const unsigned index = (kIova >> (39 - 9 * level)) & 511;
      cpu_write(table + 8 * index, next | SMMU_PTE_VALID | SMMU_PTE_TABLE);
    }
    const uint64_t page = (kBuffer & SMMU_PTE_ADDR_MASK) | SMMU_PTE_VALID | SMMU_PTE_TABLE | SMMU_PTE_AF |
                          SMMU_PTE_SH_INNER | SMMU_PTE_AP_UNPRIV;
    cpu_write(kTables + 3 * 0x1000 + 8 * ((kIova >> 12) & 511), page);
    // CD: 48-bit VA (T0SZ 16), 4K granule, 48-bit IPS, ASID 1, record faults.
    cpu_write(kCd + 8, kTables & SMMU_CD1_TTB0_MASK);
    cpu_write(kCd, 16 | (uint64_t{SMMU_CD0_TG0_4K} << SMMU_CD0_TG0_SHIFT) | SMMU_CD0_EPD1 |
                       (uint64_t{5} << SMMU_CD0_IPS_SHIFT) | SMMU_CD0_AA64 | SMMU_CD0_R | SMMU_CD0_A |
                       (uint64_t{1} << SMMU_CD0_ASID_SHIFT) | SMMU_CD0_V);
    cpu_write(kStrtab + 64 * kStreamId, SMMU_STE0_V | (uint64_t{SMMU_STE_CONFIG_S1} << SMMU_STE0_CONFIG_SHIFT) |
                                            (kCd & SMMU_STE0_S1CTXPTR_MASK));
  }

  // Registers (IHI 0070 6.3): a linear stream table of 2 entries, 16-entry
  // queues, the event queue's interrupt, then SMMUEN with both queues.
  void bring_up() {
    reg_write(SMMU_STRTAB_BASE, kStrtab, 8);
    reg_write(SMMU_STRTAB_BASE_CFG, (SMMU_STRTAB_CFG_FMT_LINEAR << SMMU_STRTAB_CFG_FMT_SHIFT) | 1);
    reg_write(SMMU_CMDQ_BASE, kCmdq | 4, 8);
    reg_write(SMMU_EVENTQ_BASE, kEvtq | 4, 8);
    reg_write(SMMU_IRQ_CTRL, SMMU_IRQ_CTRL_EVTQ_IRQEN | SMMU_IRQ_CTRL_GERROR_IRQEN);
    const uint32_t cr0 = SMMU_CR0_SMMUEN | SMMU_CR0_EVTQEN | SMMU_CR0_CMDQEN;
    reg_write(SMMU_CR0, cr0);
    check(reg_read(SMMU_CR0ACK) == cr0, "CR0ACK confirms SMMUEN, EVTQEN and CMDQEN");
  }

  // CFGI_ALL and CMD_SYNC through the command queue, as a driver does after
  // writing an STE (IHI 0070 4.3.3, 4.7.3); waits for CONS to pass them.
  void invalidate_configs() {
    cpu_write(kCmdq, SMMU_CMD_CFGI_ALL);
    cpu_write(kCmdq + 8, 31);  // Range 31: every StreamID
    cpu_write(kCmdq + 16, SMMU_CMD_SYNC);
    cpu_write(kCmdq + 24, 0);
    reg_write(SMMU_CMDQ_PROD, 2);
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    while ((reg_read(SMMU_CMDQ_CONS) & SMMU_Q_WR_RD_MASK) != 2 && sc_core::sc_time_stamp() - start < sc_core::sc_time(1, sc_core::SC_MS))
      wait(sc_core::sc_time(50, sc_core::SC_NS));
    check((reg_read(SMMU_CMDQ_CONS) & SMMU_Q_WR_RD_MASK) == 2, "the SMMU consumed CFGI_ALL and CMD_SYNC");
  }

  void run() {
    write_tables();
    bring_up();
    invalidate_configs();
    const smmu_vp::StreamIdExtension device(kStreamId, 0, false);

    // A translated write: the data lands at kBuffer.
    uint8_t out[64];
    for (unsigned i = 0; i < sizeof out; ++i) out[i] = static_cast<uint8_t>(i * 7 + 1);
    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
    const tlm::tlm_response_status w = access(dev_, true, kIova + 0x40, out, sizeof out, &device);
    std::printf("     translated write of 64 bytes took %.1f ns (cold: STE, CD and four table reads)\n",
                (sc_core::sc_time_stamp() - t0) / sc_core::sc_time(1, sc_core::SC_NS));
    check(w == tlm::TLM_OK_RESPONSE, "the translated write is answered TLM_OK_RESPONSE");
    uint8_t in[64] = {};
    access(cpu_, false, kBuffer + 0x40, in, sizeof in);
    check(std::memcmp(in, out, sizeof in) == 0, "its data is at the physical page the tables map");

    // A read of an unmapped address: terminated, and an F_TRANSLATION record.
    uint32_t word = 0;
    const tlm::tlm_response_status r = access(dev_, false, kUnmappedIova, &word, 4, &device);
    check(r == tlm::TLM_GENERIC_ERROR_RESPONSE, "the unmapped read is aborted (TLM_GENERIC_ERROR_RESPONSE)");
    if (!irq_lines_[kEventqIrq].read()) wait(timeout_, irq_lines_[kEventqIrq].posedge_event());
    check(irqs_.raised(kEventqIrq) == 1, "the event queue interrupt was raised on its signal");
    const uint32_t prod = reg_read(SMMU_EVENTQ_PROD) & SMMU_Q_WR_RD_MASK;
    check(prod == 1, "EVENTQ_PROD says one record");
    const uint64_t evt0 = cpu_read(kEvtq), evt2 = cpu_read(kEvtq + 16);
    std::printf("     event 0x%02" PRIx64 " StreamID %" PRIu64 " InputAddr 0x%" PRIx64 "\n", evt0 & SMMU_EVT0_ID_MASK,
                evt0 >> SMMU_EVT0_SID_SHIFT, evt2);
    check((evt0 & SMMU_EVT0_ID_MASK) == SMMU_EVT_F_TRANSLATION, "the record is F_TRANSLATION (IHI 0070 7.3.4)");
    check((evt0 >> SMMU_EVT0_SID_SHIFT) == kStreamId && evt2 == kUnmappedIova, "for our StreamID and address");
    reg_write(SMMU_EVENTQ_CONS, prod);  // consumed

    smmu_.finalize(smmu_vp::sc_to_ps(sc_core::sc_time_stamp()));
    for (const char* path : {"smmu.transactions", "smmu.aborted_transactions", "smmu.tlb.lookups", "smmu.tlb.misses",
                             "smmu.ptw.walks.s1", "smmu.events.written", "smmu.cmdq.commands"})
      std::printf("     %-28s %" PRIu64 "\n", path, stats_.counter_value(path));
    check(stats_.counter_value("smmu.tlb.lookups") >= 2 && stats_.counter_value("smmu.ptw.walks.s1") >= 2,
          "the SMMU looked both accesses up in its TLB and walked the tables for them");
    sc_core::sc_stop();
  }

  smmu_vp::StatsRegistry stats_;
  smmu_vp::Dram dram_;
  smmu_vp::Router router_;
  smmu_vp::smmu::Smmu smmu_;
  smmu_vp::IrqSignals irqs_;
  sc_core::sc_signal<bool> irq_lines_[3];
  tlm_utils::simple_initiator_socket<Soc> cpu_{"cpu"};
  tlm_utils::simple_initiator_socket<Soc> dev_{"dev"};
  sc_core::sc_time timeout_{10, sc_core::SC_US};
  unsigned failures_ = 0;
};

}  // namespace

int sc_main(int, char*[]) {
  // The models rank same-time events in femtoseconds (common/tlm_time.h):
  // SystemC's resolution must be 1 fs, set before any sc_time exists.
  smmu_vp::use_ranked_time();
  Soc soc("soc");
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
  std::printf("%s\n", soc.passed() ? "embed_example: every check passed" : "embed_example: FAILED");
  return soc.passed() ? 0 : 1;
}

// SMMUv3 SystemC module: the register pages, one upstream target socket that
// every master port binds to, and one downstream initiator socket for
// translated traffic and for the SMMU's own table, queue and MSI accesses.
// The behaviour lives in the plain cores (SmmuRegisterFile, Translator,
// EventQueueWriter); this module turns TLM transactions into their calls and
// their results into responses, event records and interrupts.
//
// Responses (IHI 0070 3.12, terminate model): a transaction that is aborted
// (GBPA.ABORT, STE.Config = abort, a fault or a configuration error) gets
// TLM_GENERIC_ERROR_RESPONSE; no data is moved.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "common/stats.h"
#include "common/trace.h"
#include "common/irq_sink.h"
#include "common/register_watch.h"
#include "smmu/command_executor.h"
#include "smmu/command_queue.h"
#include "smmu/ecmdq.h"
#include "smmu/event_queue.h"
#include "smmu/features.h"
#include "smmu/register_file.h"
#include "smmu/translator.h"

namespace smmu_vp::smmu {

struct SmmuConfig {
  uint64_t base = 0;                // where the platform maps register page 0 (no default: each platform says)
  SmmuFeatures features = SmmuFeatures::v3_3_profile();
  TranslatorConfig translation;
  double reg_latency_ns = 10.0;     // register access
  double bypass_latency_ns = 2.0;   // SMMUEN = 0 with GBPA bypass
  unsigned eventq_irq = 0;          // wired line for the event queue (no MSI configured)
  unsigned gerror_irq = 0;          // wired line for global errors
  unsigned sync_irq = 0;            // wired line for CMD_SYNC SIG_IRQ when the SMMU has no MSIs
  CommandQueueTiming cmdq;
  bool stale_check = false;         // debug: check TLB hits against memory (Translator)
  bool cmdq_check = false;          // debug: check software's use of the command queues (cmdq_checker.h)
};

// Sees what the SMMU does, for a recorded trace (platform/output/
// dma_trace_recorder.h). Called on the SMMU's SystemC threads; must not wait.
class SmmuObserver {
 public:
  virtual ~SmmuObserver() = default;
  // A client transaction with a StreamID, as it arrives (before translation).
  virtual void on_access(uint32_t sid, uint64_t addr, uint64_t len, bool write, Ps at) = 0;
  // A translation fault that was recorded as an event.
  virtual void on_fault(uint32_t sid, uint64_t addr, bool write, Ps at) = 0;
  // A command consumed from a command queue (CMD_SYNC included).
  virtual void on_command(const Command& cmd, Ps at) = 0;
};

class Smmu : public sc_core::sc_module, public WatchableRegisters, private SmmuRegisterListener {
 public:
  tlm_utils::simple_target_socket<Smmu> regs;
  tlm_utils::multi_passthrough_target_socket<Smmu> upstream;
  tlm_utils::simple_initiator_socket<Smmu> downstream;

  Smmu(sc_core::sc_module_name name, const SmmuConfig& cfg, IrqSink* irq, StatsRegistry& stats,
       TraceSink* trace);
  ~Smmu() override;

  uint64_t register_space_size() const { return regfile_.register_space_size(); }
  // What the command-queue checker (SmmuConfig::cmdq_check) found, every
  // queue's; empty when it is off or found nothing.
  std::vector<std::string> cmdq_check_reports() const;
  SmmuRegisterFile& registers() { return regfile_; }
  Translator& translator() { return *translator_; }
  // What CMD_SYNC with CS = SIG_SEV does: the platform wires it to the cores.
  void set_event_sender(std::function<void()> send_event) { send_event_ = std::move(send_event); }
  // cmdq.msi_coherent: what a coherent write by the SMMU to memory costs it
  // (the platform's CPU caches, CpuCluster::device_write_ns).
  void set_coherent_write(std::function<Ps(uint64_t pa, unsigned len)> fn) { coherent_write_ = std::move(fn); }
  // nullptr: none (the default).
  void set_observer(SmmuObserver* observer) { observer_ = observer; }
  // The run ended at `end`: the command queues close the trace slices of
  // commands done by then (CommandQueueConsumer::finish_trace).
  void finish_trace(Ps end);
  // The run ended at `end`: publishes what is known only then (the slot
  // pools' and the command lanes' utilisation).
  void finalize(Ps end);
  // An app's measurement window: the slot pools and command lanes also sum
  // their use inside it (the *_in_window statistics).
  void set_window(Ps start, Ps end) {
    translator_->set_window(start, end);
    cmd_lanes_.set_window(start, end);
  }
  // Service Failure Mode (IHI 0070 12.3): what the SMMU does when it has lost
  // internal consistency (an uncorrected error in its own state). Entry is
  // IMPLEMENTATION DEFINED and the model has no internal error of its own, so
  // a platform or test injects it here. From then on every client
  // transaction is terminated (no event), no command is consumed and no
  // event is recorded; GERROR.SFM_ERR is activated with its interrupt.
  // Acknowledging it in GERRORN does not leave SFM: only a reset (a new
  // simulation) does.
  void enter_service_failure_mode();

  // WatchableRegisters: a core may poll CMDQ_CONS and an ECMDQ's CONS asleep
  // (hal_read_poll32): their reads take reg_latency_ns, count nothing, and
  // they change only by the consumers and by register writes.
  bool watchable(uint64_t offset, unsigned size) const override;
  void watch(RegisterWatch& w) override { watches_.add(w); }
  void unwatch(RegisterWatch& w) override { watches_.remove(w); }
  size_t watches() const { return watches_.size(); }
  bool in_service_failure_mode() const { return sfm_; }

 private:
  class DownstreamPort;
  class UntimedPort;
  class MainCmdqRegs;
  class EcmdqQueueRegs;

  void reg_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void translate_transport(int port, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  // SMMU_STRTAB_BASE and _CFG decoded, again only when either was written.
  const StreamTableConfig& stream_table();
  // Forwards bytes [offset, offset + len) of `trans` to `pa` downstream at
  // `at`; returns the completion time.
  Ps forward(tlm::tlm_generic_payload& trans, uint64_t pa, unsigned offset, unsigned len, Ps at, bool* ok);
  void record_event(const EventRecord& rec, Ps at);
  void raise_gerror(uint32_t bits, Ps at);
  // MSI write if one is configured, else the wired line.
  void signal_irq(const IrqConfig& msi, unsigned wired_line, uint32_t msi_abort_bit, Ps at);

  // SmmuRegisterListener: what register writes set in motion.
  void on_cmdq_prod(uint32_t cmdq_prod) override;
  void on_gerrorn(uint32_t old_gerrorn, uint32_t new_gerrorn) override;
  void on_cr0(uint32_t old_cr0, uint32_t new_cr0) override;

  SmmuConfig cfg_;
  SmmuRegisterFile regfile_;
  std::unique_ptr<DownstreamPort> mem_;
  std::unique_ptr<UntimedPort> untimed_;
  std::unique_ptr<Translator> translator_;
  EventQueueWriter events_;
  CommandExecutor executor_;
  Resource cmd_lanes_;  // execution lanes shared by every command queue
  std::unique_ptr<MainCmdqRegs> cmdq_regs_;
  std::unique_ptr<CommandQueueConsumer> cmdq_;
  EcmdqRegisters ecmdq_;
  std::vector<std::unique_ptr<EcmdqQueueRegs>> ecmdq_regs_;
  std::vector<std::unique_ptr<CommandQueueConsumer>> ecmdq_consumers_;
  struct StreamTableMemo {
    bool valid = false;
    uint64_t base_raw = 0;
    uint32_t cfg_raw = 0;
    StreamTableConfig st;
  } stream_table_;
  uint32_t last_cmdq_prod_ = 0;
  RegisterWatchList watches_;
  // After a change of state at `delay` from now: the watches whose register now ends their poll.
  void check_watches(const sc_core::sc_time& delay);
  bool sfm_ = false;  // Service Failure Mode
  std::function<void()> send_event_;
  std::function<Ps(uint64_t pa, unsigned len)> coherent_write_;
  SmmuObserver* observer_ = nullptr;
  IrqSink* irq_;
  TraceSink* trace_;
  tlm::tlm_generic_payload fwd_;  // translated (sub-)transactions
  sc_core::sc_time reg_latency_;
  Ps bypass_latency_;
  StatsRegistry& stats_;
  Counter* unrecorded_ = nullptr;  // events.unrecorded, created at the first one (absent while 0)
  Counter& unrecorded();
  Counter& transactions_;
  Counter& bypass_transactions_;
  Counter& aborted_transactions_;
  Counter& missing_stream_id_;
  Counter& events_written_;
  Counter& events_lost_;
  Counter& irqs_;
  Counter& msis_;
};

}  // namespace smmu_vp::smmu

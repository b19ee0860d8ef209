// What the Smmu module (smmu.h) does: turns TLM transactions into calls of
// the plain cores (SmmuRegisterFile, Translator, EventQueueWriter, the
// command queue consumers) and their results into responses, event records
// and interrupts. Internal: the module's public header shows none of it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "common/irq_sink.h"
#include "common/register_watch.h"
#include "common/resource.h"
#include "common/stats.h"
#include "common/trace.h"
#include "smmu/command_executor.h"
#include "smmu/ats.h"
#include "smmu/command_queue.h"
#include "smmu/ecmdq.h"
#include "smmu/event_queue.h"
#include "smmu/register_file.h"
#include "smmu/smmu.h"
#include "smmu/smmu_observer.h"
#include "smmu/translator.h"

namespace smmu_vp::smmu {

class SmmuImpl : private SmmuRegisterListener {
 public:
  // Builds the command queue consumers, which become child modules of
  // `owner` (constructed inside its constructor).
  SmmuImpl(Smmu& owner, const SmmuConfig& cfg, IrqSink* irq, StatsRegistry& stats, TraceSink* trace);
  ~SmmuImpl() override;

  void reg_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void translate_transport(int port, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);

  uint64_t register_space_size() const { return regfile_.register_space_size(); }
  std::vector<std::string> cmdq_check_reports() const;
  SmmuRegisterFile& registers() { return regfile_; }
  Translator& translator() { return *translator_; }
  void set_event_sender(std::function<void()> send_event) { send_event_ = std::move(send_event); }
  void set_coherent_write(std::function<Ps(uint64_t pa, unsigned len)> fn) { coherent_write_ = std::move(fn); }
  void set_observer(SmmuObserver* observer) { observer_ = observer; }
  void finish_trace(Ps end);
  void finalize(Ps end);
  void set_window(Ps start, Ps end) {
    translator_->set_window(start, end);
    cmd_lanes_.set_window(start, end);
  }
  // The endpoint with an ATC behind `sid` (smmu_ats.cc).
  void attach_ats_device(uint32_t sid, AtsDevice* device);
  void enter_service_failure_mode();
  bool in_service_failure_mode() const { return sfm_; }

  bool watchable(uint64_t offset, unsigned size) const;
  RegisterWatchList& watches() { return watches_; }
  const RegisterWatchList& watches() const { return watches_; }

 private:
  class DownstreamPort;
  class UntimedPort;
  class MainCmdqRegs;
  class EcmdqQueueRegs;

  // SMMU_STRTAB_BASE and _CFG decoded, again only when either was written.
  const StreamTableConfig& stream_table();
  // Forwards bytes [offset, offset + len) of `trans` to `pa` downstream at
  // `at`; returns the completion time.
  Ps forward(tlm::tlm_generic_payload& trans, uint64_t pa, unsigned offset, unsigned len, Ps at, bool* ok);
  // Whether the record was written.
  bool record_event(const EventRecord& rec, Ps at);
  void raise_gerror(uint32_t bits, Ps at);
  // MSI write if one is configured, else the wired line.
  void signal_irq(const IrqConfig& msi, unsigned wired_line, uint32_t msi_abort_bit, Ps at);
  // After a change of state at `delay` from now: the watches whose register now ends their poll.
  void check_watches(const sc_core::sc_time& delay);
  const char* name() const { return owner_.basename(); }

  // ATS (smmu_ats.cc): a transaction carrying an AtsExtension, from its
  // arrival at `t`; and a CMD_ATC_INV sent to the endpoint at `at`.
  void ats_transport(int port, tlm::tlm_generic_payload& trans, AtsExtension& ats, Ps t,
                     sc_core::sc_time& delay);
  // Returns when the completion leaves the SMMU.
  Ps translation_request(int port, tlm::tlm_generic_payload& trans, AtsExtension& ats, Ps t);
  CommandQueueConsumer::Hooks::AtcOutcome atc_invalidate(const Command& cmd, Ps at);
  // PRI (smmu_ats.cc): a Page Request arriving at `t` into the PRI queue, or
  // answered by the SMMU itself; a PRG Response sent to the endpoint.
  Ps page_request(tlm::tlm_generic_payload& trans, AtsExtension& ats, Ps t);
  void pri_response(const Command& cmd, Ps at);
  void send_prg_response(const AtsDevice::PrgResponse& r, Ps at);
  // The stall model (smmu_stall.cc, IHI 0070 3.12.2): stall() holds the
  // calling client thread until CMD_RESUME, CMD_STALL_TERM or SMMUEN = 0
  // resolves the transaction; true to retry it.
  struct Stalled {
    uint32_t sid = 0;
    uint16_t stag = 0;
    bool resolved = false, retry = false;
    Ps at = 0;  // when the resolution took effect
    sc_core::sc_event event;
  };
  bool stall(const TranslationResult& r, Ps* t);
  void stall_command(const Command& cmd, Ps at);
  // Resolves the stalled transactions of `sid` (nullptr: all of them).
  void resolve_stalls(const uint32_t* sid, bool retry, Ps at);
  void resolve(Stalled& s, bool retry, Ps at);
  // SmmuRegisterListener: what register writes set in motion.
  void on_cmdq_prod(uint32_t cmdq_prod) override;
  void on_gerrorn(uint32_t old_gerrorn, uint32_t new_gerrorn) override;
  void on_cr0(uint32_t old_cr0, uint32_t new_cr0) override;
  void on_eventq_cons(uint32_t eventq_cons) override;

  Smmu& owner_;
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
  bool sfm_ = false;  // Service Failure Mode
  std::function<void()> send_event_;
  std::function<Ps(uint64_t pa, unsigned len)> coherent_write_;
  SmmuObserver* observer_ = nullptr;
  std::map<uint32_t, AtsDevice*> ats_devices_;  // by StreamID
  // The SMMU's port for ATS messages to endpoints (Invalidation Requests,
  // PRG Responses): one message at a time. Consumers of different command
  // queues send at their own local times, so a message takes the earliest
  // gap at or after its time instead of queueing behind a later one.
  Resource ats_port_{"ats_port", 1};
  Ps send_ats_message(Ps at);  // when a message ready at `at` has left the port
  // <smmu>.<group>.<leaf>, registered on first use: the stall and PRI
  // counters only runs that use them report. The path is built once.
  Counter& counter_on_first_use(Counter*& c, const char* group, const char* leaf);
  struct AtsStats {       // <smmu>.ats.*, only with features.ats
    AtsStats(StatsRegistry& stats, const std::string& smmu);
    Counter& translation_requests;
    Counter& success;          // with R or W
    Counter& no_access;        // Success with R = W = 0: a translation fault
    Counter& unsupported;      // UR
    Counter& completer_abort;  // CA
    Counter& translated;       // translated transactions passed on
    Counter& translated_aborted;
    Counter& atc_invalidations;
    Counter& atc_inv_timeouts;
    Counter* page_requests = nullptr;       // with PRI only
    Counter* page_requests_queued = nullptr;
    Counter* prg_responses = nullptr;       // CMD_PRI_RESP sent on
    Counter* prg_auto_responses = nullptr;  // the SMMU's own (8.1, 8.2)
    Histogram& request_latency;
    Histogram& atc_inv_latency;
  };
  std::unique_ptr<AtsStats> ats_stats_;
  std::vector<Stalled*> stalls_;  // in the order they stalled
  uint16_t next_stag_ = 0;
  sc_core::sc_event eventq_writable_;  // EVENTQ_CONS, CR0 or GERRORN written
  Counter* stalled_ = nullptr;         // <smmu>.stalls.*, created at the first stall
  Counter* stall_terminated_ = nullptr;
  Counter* stall_unmatched_ = nullptr;
  Counter* stall_not_possible_ = nullptr;
  Histogram* stall_ns_ = nullptr;
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

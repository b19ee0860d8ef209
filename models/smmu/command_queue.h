// The SMMU's command queue consumer (IHI 0070 3.5, 4): a process that wakes
// when software moves CMDQ_PROD, fetches commands from memory in batches
// through the SMMU's downstream port, executes them in order on a number of
// execution lanes, and completes CMD_SYNCs. Errors stop consumption with
// CMDQ_CONS.ERR and GERROR.CMDQ_ERR until software acknowledges them.
//
// Timing (all in CommandQueueTiming, documented in docs/smmu.md): a fetch is a
// real memory read of up to `fetch_batch` commands; each command costs
// `decode_ns` to decode, then occupies an execution lane for its class's cost.
// TLBI costs either a fixed time (the broadcast to TBUs) or that time plus
// `tlbi_per_entry_ns` for every TLB entry it removed (a scan), as configured.
// A range TLBI costs `tlbi_range_ns` whatever the range. A CMD_SYNC completes
// when every earlier command has left its lane and every translation that
// started before it has finished (so none can still use an invalidated entry),
// plus `sync_ns`; only then does CMDQ_CONS move past it. With ATS, a
// CMD_SYNC also waits for the completions of the ATC invalidations before it
// (IHI 0070 3.9.1.4): one that times out stops the queue on the SYNC with
// CERROR_ATC_INV_SYNC.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <systemc>

#include "common/resource.h"
#include "common/stats.h"
#include "common/tlm_time.h"
#include "common/trace.h"
#include "smmu/cmdq_checker.h"
#include "smmu/command_executor.h"
#include "smmu/commands.h"
#include "smmu/features.h"
#include "smmu/memory_port.h"
#include "smmu/registers.h"
#include "smmu/smmu_config.h"

namespace smmu_vp::smmu {

// The registers of one command queue as the consumer sees them: the main
// CMDQ (SMMU_CMDQ_*) or one ECMDQ interface.
class CommandQueueRegs {
 public:
  virtual ~CommandQueueRegs() = default;
  virtual bool enabled() const = 0;
  virtual bool stopped() const = 0;  // an error software has not acknowledged
  virtual uint64_t base() const = 0;
  virtual QueueIndex prod() const = 0;
  virtual QueueIndex cons() const = 0;
  virtual void set_cons(uint32_t index) = 0;
  // Records a command error (reg::cerror) and returns the GERROR bit that
  // reports it, or 0 when an error was pending already.
  virtual uint32_t raise_error(uint32_t cerror) = 0;
};


class CommandQueueConsumer : public sc_core::sc_module {
 public:
  struct Hooks {
    std::function<void(uint32_t gerror_bits, Ps at)> raise_gerror;
    std::function<void(Ps at)> sync_wired_irq;      // CS = SIG_IRQ without MSI support
    std::function<void()> send_event;                // CS = SIG_SEV
    std::function<Ps(Ps t)> translations_drained;    // when translations begun by t have finished
    std::function<void(const Command& cmd, Ps at)> executed;  // every command consumed (may be empty)
    // CONS took a new value at `at`, the consumer's time, at its `rank`.
    std::function<void(const TimeRank& rank, Ps at)> cons_changed;
    // With msi_coherent: the time a coherent write by the SMMU of `len`
    // bytes at `pa` takes to take the lines from the cores that hold them.
    std::function<Ps(uint64_t pa, unsigned len)> coherent_write;
    // CMD_ATC_INV issued at `at`: when its completion is back, or when the
    // SMMU gave up waiting for it (timed_out). Empty: no ATS.
    struct AtcOutcome {
      Ps done = 0;
      bool timed_out = false;
    };
    std::function<AtcOutcome(const Command& cmd, Ps at)> atc_invalidate;
    // CMD_PRI_RESP consumed at `at`: the PRG Response goes to the endpoint.
    // Nothing waits for it (4.7.3: a CMD_SYNC guarantees nothing of it).
    std::function<void(const Command& cmd, Ps at)> pri_response;
    // CMD_RESUME or CMD_STALL_TERM consumed at `at` (complete when consumed,
    // 4.7.3). Empty: no stall model.
    std::function<void(const Command& cmd, Ps at)> stall_command;
  };

  SC_HAS_PROCESS(CommandQueueConsumer);
  // `lanes` are the execution lanes, shared by every queue of the SMMU.
  CommandQueueConsumer(sc_core::sc_module_name name, CommandQueueRegs& regs, MemoryPort& mem,
                       CommandExecutor& executor, Resource& lanes, const SmmuFeatures& features,
                       const CommandQueueTiming& timing, Hooks hooks, StatsRegistry& stats,
                       const std::string& stats_prefix, TraceSink* trace);

  // Turns on the command-queue checker (cmdq_checker.h), which reaches
  // memory through `untimed`.
  void enable_check(MemoryPort& untimed, StatsRegistry& stats);
  const CmdqChecker* checker() const { return checker_.get(); }
  // Register writes that may let the consumer go on: a new PROD, an
  // acknowledged error, the queue being enabled.
  void prod_written(uint32_t old_prod, uint32_t new_prod);
  void wake() { kick_.notify(sc_core::SC_ZERO_TIME); }
  // The run ended at `end`: closes the trace slices of commands whose lane
  // was done with them by then (later ones stay open, for TraceSink::finish).
  void finish_trace(Ps end);

 private:
  void run();
  // Consumes until the queue is empty, disabled or in error.
  void consume();
  Ps cost_of(const ExecResult& r) const;
  // False when the SYNC stopped the queue with an error (it stays at CONS).
  bool complete_sync(const Command& sync, Ps issued);
  void stop_with_error(uint32_t cerror, const char* why);
  // CONS moves to `index` at the consumer's time, for whoever polls it.
  void publish_cons(uint32_t index);
  void close_lane_slices(Ps upto);
  // Time. The consumer runs ahead of the kernel while no other process could
  // run before its next wait ends (TimeRank::alone_until): nothing can see
  // the difference, and a batch of commands costs no SystemC wait each.
  Ps now() const { return std::max(now_ps(), ahead_); }
  void wait_until(Ps t);
  // Brings the kernel to the consumer's own time, before what another
  // process would see at once (an error) or a wait for an event.
  void sync_ahead();

  CommandQueueRegs& regs_;
  MemoryPort& mem_;
  CommandExecutor& executor_;
  SmmuFeatures features_;
  CommandQueueTiming timing_;
  Hooks hooks_;
  TraceSink* trace_;
  std::string track_;
  // Trace: one track per execution lane (a lane runs one command at a time,
  // so its slices never overlap); a command's slice is open from its start
  // on the lane until the consumer next runs at or after its end.
  struct LaneSlice {
    TraceSink::SliceId id;
    Ps end;
  };
  std::vector<std::string> lane_tracks_;
  std::vector<LaneSlice> lane_slices_;
  sc_core::sc_event kick_;
  TimeRank rank_;  // the same-time order of the consumer's timed waits (common/tlm_time.h)
  Ps ahead_ = 0;   // the consumer's own time, when ahead of the kernel's
  Resource& lanes_;
  Ps last_completion_ = 0;
  bool invalidated_since_sync_ = false;  // a CFGI or TLBI went to the TBUs since the last CMD_SYNC
  // ATC invalidations issued since the last CMD_SYNC: when the last
  // completion is back, and whether one timed out.
  Ps atc_done_ = 0;
  bool atc_timed_out_ = false;
  std::vector<Ps> issued_at_;  // per queue slot: when PROD made it visible
  std::vector<uint64_t> fetch_buffer_;  // the commands of the current fetch
  std::unique_ptr<CmdqChecker> checker_;  // null unless cmdq_check
  Counter& fetches_;
  Counter& commands_;
  Counter& syncs_;
  Counter& errors_ill_;
  Counter& errors_abt_;
  Counter* errors_atc_ = nullptr;  // created at the first CERROR_ATC_INV_SYNC (absent while 0)
  StatsRegistry& stats_;
  Counter& lane_waits_;
  Histogram& lane_wait_;
  Histogram& occupancy_;
  Histogram& latency_;
  Histogram& sync_latency_;
};

}  // namespace smmu_vp::smmu

// Generic DMA engine: memory-mapped channels copying src -> dst in bursts.
// Each channel is a process; up to `max_outstanding` bursts are in flight at
// once (a burst's slot frees when its write is acknowledged), so a channel's
// throughput is bounded by latency x outstanding and by DRAM bandwidth.
// Every transaction carries the channel's StreamID extension. Completion is
// signalled by a wired interrupt (line irq + channel) and/or an MSI write.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "common/device_atc.h"
#include "common/invalid_config.h"
#include "common/stats.h"
#include "common/tlm_time.h"
#include "common/trace.h"
#include "common/irq_sink.h"
#include "dma/dma_engine_core.h"

namespace smmu_vp {

class AtsDma;

struct DmaConfig {
  unsigned channels = 2;
  uint32_t burst_bytes = 256;
  unsigned max_outstanding = 4;  // bursts in flight per channel
  double setup_ns = 50.0;        // from GO to the first burst
  double reg_latency_ns = 10.0;  // register access
  uint32_t stream_id = 0;        // reset value of each channel's SID register
  unsigned irq = 0;              // channel n raises line irq + n
  // ATS (and PRI) as an accelerator-like master: an ATC for stream_id (off:
  // entries 0). A channel programmed with another StreamID or a SubstreamID
  // sends its transfers untranslated.
  AtcConfig atc;

  // Throws InvalidConfig naming the first field the model cannot be built
  // with (the module's constructor calls it).
  void validate() const;
};

class DmaEngine : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<DmaEngine> regs;   // register block
  tlm_utils::simple_initiator_socket<DmaEngine> mem; // data and MSI writes

  SC_HAS_PROCESS(DmaEngine);
  DmaEngine(sc_core::sc_module_name name, const DmaConfig& cfg, IrqSink* irq,
            StatsRegistry& stats, TraceSink* trace);
  ~DmaEngine() override;
  // With ATS (cfg.atc): the ATC the SMMU sends CMD_ATC_INV and PRG
  // Responses to; else nullptr.
  smmu::AtsDevice* ats_device() { return ats_dma_ ? &atc_ : nullptr; }

  DmaEngineCore& core() { return core_; }
  uint64_t register_block_size() const { return DmaEngineCore::register_block_size(cfg_.channels); }
  // Derived figures (achieved bandwidth) into the stats registry.
  void finalize();

 private:
  // Per-channel state lives here, not on the channel thread's stack: the
  // thread never returns, so the module must own what it allocates.
  struct Channel {
    sc_core::sc_event go;
    TimeRank go_rank, rank;  // of go's timed notifications and of the thread's timed waits (common/tlm_time.h)
    tlm::tlm_generic_payload trans;           // owns its StreamIdExtension
    std::vector<std::vector<uint8_t>> bufs;   // one burst buffer per outstanding slot
    std::vector<Ps> slot_free;                // when each slot's last write completes
    Counter* transfers;
    Counter* bytes;
    Counter* errors;
  };

  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void channel_thread(unsigned ch);
  // One timed memory transaction issued `at` (absolute); returns completion
  // time, or 0 with ok=false on an error response.
  Ps issue(tlm::tlm_generic_payload& t, bool is_write, uint64_t addr, uint8_t* buf, unsigned len,
           Ps at, bool* ok);
  void signal_completion(unsigned ch);

  DmaConfig cfg_;
  DmaEngineCore core_;
  IrqSink* irq_;
  TraceSink* trace_;
  std::vector<Channel> ch_;
  Counter& bytes_total_;
  Counter& msi_errors_;
  Counter& go_while_busy_;
  Histogram& transfer_latency_;
  StatsRegistry& stats_;
  DeviceAtc atc_;
  std::unique_ptr<AtsDma> ats_dma_;  // null without ATS
  Ps first_go_ = UINT64_MAX;
  Ps last_done_ = 0;
};

}  // namespace smmu_vp

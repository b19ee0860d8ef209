// Trace player (docs/devices.md#trace-player): a test device that holds a
// trace, copies its image into DRAM on LOAD for the replay app, and after
// START issues the trace's device accesses through its master port (the
// SMMU) with each record's StreamID, at the IOVA the replay's mapping gave
// the buffer (the slot table in DRAM).
//
// `channels` worker processes take the accesses in trace order, one each at a
// time, so up to `channels` are in flight and they may complete out of order.
// An access goes as TLM transactions of at most burst_bytes that do not cross
// a 4 KiB page; they are issued together and the access completes with the
// last. Reads are discarded, writes write zeros. A worker whose access waits
// for its slot to be mapped sleeps until MAP_DOORBELL is written.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "common/stats.h"
#include "common/tlm_time.h"
#include "common/trace.h"
#include "trace_player/phase_windows.h"
#include "trace_player/trace_player_core.h"

namespace smmu_vp {

struct TracePlayerConfig {
  unsigned channels = 4;           // accesses in flight
  uint32_t burst_bytes = 4096;     // largest transaction
  double reg_latency_ns = 10.0;    // register access
};

class TracePlayer : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<TracePlayer> regs;
  tlm_utils::simple_initiator_socket<TracePlayer> mem;

  SC_HAS_PROCESS(TracePlayer);
  TracePlayer(sc_core::sc_module_name name, const TracePlayerConfig& cfg, std::shared_ptr<const TraceImage> image,
              TracePlayerCore::Backdoor dram, StatsRegistry& stats, TraceSink* trace);

  TracePlayerCore& core() { return core_; }
  // The core's counts into the stats registry.
  void finalize();

 private:
  struct Worker {
    tlm::tlm_generic_payload trans;  // owns its StreamIdExtension
    std::vector<uint8_t> rbuf, wbuf;  // reads land in rbuf; writes send wbuf's zeros
    TimeRank rank;                    // the same-time order of its timed waits (common/tlm_time.h)
  };

  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void worker_thread(unsigned w);
  // Issues access `index` at `addr` now; returns when its last burst completes.
  bool play(Worker& w, uint32_t index, uint64_t addr, Ps* done);

  TracePlayerConfig cfg_;
  TracePlayerCore core_;
  TraceSink* trace_;
  StatsRegistry& stats_;
  std::vector<Worker> workers_;
  sc_core::sc_event start_, doorbell_, done_;
  TimeRank start_rank_, doorbell_rank_;  // of their timed notifications
  Ps first_issue_ = UINT64_MAX, last_done_ = 0;
  TraceSink::SliceId replay_slice_ = 0;  // open from the first issue to the last completion

  Counter& accesses_;
  Counter& bytes_;
  Histogram& latency_;
  PhaseWindows phases_;  // per-phase counters of a trace with phase markers
};

}  // namespace smmu_vp

// Multi-queue Ethernet controller (docs/devices.md#nic): the register block
// of nic_regs.h, descriptor rings in memory reached through its master port
// (the SMMU, with its StreamID), an RX traffic generator on the wire side and
// a TX sink draining at line rate.
//
// Three processes, as the hardware has three independent engines:
//  - RX: frames arrive from the generator into an on-chip FIFO; the RX DMA
//    engine takes them in order, fetches descriptors in batches (prefetching
//    when half the batch is used), writes the payload in bursts with a bounded
//    number of writes in flight, and writes the descriptor back. A frame is
//    dropped when its queue has no posted buffer, when the FIFO is full
//    because DMA writes are slow (translation misses and invalidation stalls
//    show up here), or when a payload write is aborted.
//  - TX: reads posted descriptors and payloads (bounded reads in flight) and
//    puts frames on the wire back to back at line rate.
//  - interrupts: per-queue moderation by frames and time; MSI through the
//    master port, or a wired line.
// A frame costs a handful of TLM transactions (descriptor batches, payload
// bursts of burst_bytes, one write-back), not one per cache line.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "common/device_atc.h"
#include "common/invalid_config.h"
#include "common/irq_sink.h"
#include "common/stats.h"
#include "common/tlm_time.h"
#include "common/trace.h"
#include "nic/nic_core.h"
#include "nic/nic_traffic.h"

namespace smmu_vp {

class AtsDma;

struct NicConfig {
  unsigned queues = 16;               // queue pairs
  double link_gbps = 100.0;           // line rate
  uint32_t mtu = 1500;                // largest frame = mtu + 14
  double rx_load_percent = 100.0;     // offered RX load, of the line rate
  uint32_t rx_frame_bytes = 1514;     // frame size without FCS (fixed mix)
  FrameMix rx_frame_mix = FrameMix::kFixed;
  uint32_t rx_flows = 1024;           // flows, spread over queues by RSS
  uint32_t desc_batch = 8;            // descriptors per fetch
  uint32_t burst_bytes = 512;         // payload burst
  unsigned outstanding_reads = 16;    // descriptor and TX payload reads in flight
  unsigned outstanding_writes = 32;   // RX payload writes in flight
  uint32_t rx_fifo_bytes = 256 * 1024;
  unsigned tx_frames_ahead = 8;       // TX frames read before the wire takes them
  double per_packet_ns = 5.0;         // engine time per frame (parsing, RSS, descriptor logic)
  double pcie_gbps = 252.0;           // host link, each direction
  double reg_latency_ns = 100.0;      // register access
  uint32_t stream_id = 0;
  unsigned irq = 0;                   // queue q raises line irq + q
  AtcConfig atc;                      // PCIe ATS with a device ATC (off: entries 0)

  // Throws InvalidConfig naming the first field the model cannot be built
  // with (the module's constructor calls it).
  void validate() const;
};

class Nic : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Nic> regs;
  tlm_utils::simple_initiator_socket<Nic> mem;

  SC_HAS_PROCESS(Nic);
  Nic(sc_core::sc_module_name name, const NicConfig& cfg, IrqSink* irq, StatsRegistry& stats, TraceSink* trace);
  ~Nic() override;

  static uint64_t register_block_size(unsigned queues) { return NicCore::register_block_size(queues); }
  uint64_t register_block_size() const { return NicCore::register_block_size(cfg_.queues); }
  NicCore& core() { return core_; }
  // With ATS (cfg.atc): the ATC the SMMU sends CMD_ATC_INV to; else nullptr.
  smmu::AtsDevice* ats_device() { return ats_dma_ ? &atc_ : nullptr; }
  const NicConfig& config() const { return cfg_; }
  // End-of-run figures (the statistics registers, achieved rates) into the stats registry.
  void finalize();
  // An app's measurement window: frames on the wire inside it are also
  // counted on their own (rx_gbps_in_window, tx_gbps_in_window).
  void set_window(Ps start, Ps end) {
    window_start_ = start;
    window_end_ = end;
  }

 private:
  struct CachedDesc {
    nic_desc d;
    Ps ready;  // when its fetch completed
  };
  enum class Fetch { kOk, kNone, kFault };

  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void rx_thread();
  void tx_thread();
  void irq_thread();

  void receive(const RxFrame& f);
  bool send_one(unsigned q);
  // Makes sure the ring's cache holds a descriptor, fetching a batch at `at`
  // if not (and prefetching once half the batch is used).
  Fetch ensure_descriptor(unsigned q, NicRing& r, std::deque<CachedDesc>& cache, Ps at, bool tx);
  bool fetch_batch(NicRing& r, std::deque<CachedDesc>& cache, Ps at);
  // Writes back the head descriptor and hands it to the driver.
  Ps complete_descriptor(unsigned q, NicRing& r, std::deque<CachedDesc>& cache, uint32_t len, uint32_t status,
                         Ps timestamp, Ps at);
  // Payload bursts; return the completion time of the last one, ok=false on an abort.
  Ps write_payload(uint64_t addr, const uint8_t* data, uint32_t len, Ps at, Ps* last_issue, bool* ok);
  Ps read_payload(uint64_t addr, uint8_t* data, uint32_t len, Ps at, bool* ok);
  // One timed transaction through the master port, issued at `at`.
  Ps dma(bool is_write, uint64_t addr, void* data, unsigned len, Ps at, bool* ok);
  void schedule_irq(unsigned q);
  void raise_irq(unsigned q);

  NicConfig cfg_;
  NicCore core_;
  RxTrafficGenerator gen_;
  IrqSink* irq_;
  TraceSink* trace_;
  StatsRegistry& stats_;
  tlm::tlm_generic_payload trans_;  // carries the StreamID extension
  DeviceAtc atc_;
  std::unique_ptr<AtsDma> ats_dma_;  // null without ATS
  sc_core::sc_event rx_start_, tx_kick_, irq_kick_;
  // The same-time order (common/tlm_time.h) of the threads' timed waits and the events' timed notifications.
  TimeRank rx_rank_, tx_rank_, rx_start_rank_, tx_kick_rank_, irq_kick_rank_;
  std::vector<std::deque<CachedDesc>> rx_cache_, tx_cache_;
  std::vector<uint8_t> rx_buf_, tx_buf_;
  std::vector<nic_desc> desc_buf_;
  // RX FIFO: frames admitted and when they leave it (their last burst issued).
  struct FifoEntry {
    Ps leave;
    uint32_t bytes;
  };
  std::deque<FifoEntry> fifo_;
  uint64_t fifo_bytes_ = 0;
  Ps rx_engine_free_ = 0;
  std::vector<Ps> write_slots_, read_slots_;
  Ps up_free_ = 0, down_free_ = 0;  // host link, device-to-host and host-to-device
  Ps wire_tx_free_ = 0;
  std::deque<Ps> tx_on_wire_;  // wire start of the frames read ahead
  unsigned tx_next_queue_ = 0;
  Ps rx_first_ = 0, rx_last_ = 0, tx_first_ = 0, tx_last_ = 0;
  Ps window_start_ = 0, window_end_ = 0;
  uint64_t rx_window_bytes_ = 0, tx_window_bytes_ = 0;
  bool in_window(Ps t) const { return t >= window_start_ && t < window_end_; }

  Counter& rx_offered_;
  Counter& irqs_;
  Counter& msi_errors_;
  Histogram& fifo_occupancy_;
  Histogram& rx_dma_latency_;
};

}  // namespace smmu_vp

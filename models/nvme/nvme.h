// NVMe drive (docs/devices.md#nvme): the controller of nvme_regs.h with one
// namespace, its queues in memory reached through the master port (the SMMU,
// with its StreamID), a media model and the drive's data in a sparse store.
//
// Four processes:
//  - control: CC.EN 0 -> 1 sets CSTS.RDY after enable_us, 1 -> 0 clears it
//    after kDisableUs, CC.SHN completes once the commands in flight are done.
//  - submission: round robin over the SQs with new entries, fetching up to
//    sq_fetch_batch entries in one read (fetches are bounded by the read
//    slots, not by each other).
//  - I/O engine: takes each command's next stage when its time comes: the
//    decode once its entry is in (admin commands act then, in order), PRP
//    list reads, host data in bursts with a bounded number in flight over
//    the PCIe link, the media's latency, parallelism and bandwidth; so
//    commands share the DMA slots, link and media in time order. Then it
//    queues the completion.
//  - completion: posts each completion when its time comes (waiting while
//    its CQ is full), then raises the CQ's vector once per batch posted.
// A command costs a handful of TLM transactions (the SQ batch, list pages,
// data bursts of burst_bytes, the CQE), not one per cache line.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <queue>
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
#include "nvme/nvme_core.h"

namespace smmu_vp {

class AtsDma;

// Defaults: an Intel SSD DC P3700 2 TB (product specification 330566:
// sequential read/write up to 2800/2000 MB/s, 4 KiB random read up to 460K
// IOPS, typical sequential latency 20/20 us, PCIe Gen3 x4).
struct NvmeConfig {
  unsigned queues = 16;            // I/O queue pairs
  unsigned vectors = 17;           // interrupt vectors (admin + one per queue)
  uint64_t capacity_gib = 1862;    // 2 TB
  uint32_t lba_bytes = 4096;       // 512 or 4096
  double read_latency_us = 20.0;   // media access per command
  double write_latency_us = 20.0;
  unsigned parallelism = 10;       // commands at the media at once: 460K IOPS x (20 + 1.5) us
  double read_mbps = 2800.0;       // media bandwidth, shared by all commands
  double write_mbps = 2000.0;
  double pcie_gbps = 31.5;         // host link, each direction: Gen3 x4 (8 GT/s x 4, 128b/130b)
  double reg_latency_ns = 100.0;   // register access
  double enable_us = 10.0;         // CC.EN to CSTS.RDY (real drives take milliseconds)
  uint32_t burst_bytes = 512;      // data DMA transaction
  unsigned outstanding = 32;       // DMA transactions in flight
  uint32_t sq_fetch_batch = 8;     // SQ entries read at once
  uint32_t stream_id = 0;
  AtcConfig atc;                      // PCIe ATS with a device ATC (off: entries 0)
  unsigned irq = 0;                // vector v's wired line is irq + v

  // Throws InvalidConfig naming the first field the model cannot be built
  // with (the module's constructor calls it).
  void validate() const;
};

class Nvme : public sc_core::sc_module {
 public:
  static constexpr double kDisableUs = 1.0;  // CC.EN 1 -> 0 until CSTS.RDY = 0

  tlm_utils::simple_target_socket<Nvme> regs;
  tlm_utils::simple_initiator_socket<Nvme> mem;

  SC_HAS_PROCESS(Nvme);
  Nvme(sc_core::sc_module_name name, const NvmeConfig& cfg, IrqSink* irq, StatsRegistry& stats, TraceSink* trace);
  ~Nvme() override;

  static uint64_t register_block_size() { return NvmeCore::register_block_size(); }
  NvmeCore& core() { return core_; }
  // With ATS (cfg.atc): the ATC the SMMU sends CMD_ATC_INV to; else nullptr.
  smmu::AtsDevice* ats_device() { return ats_dma_ ? &atc_ : nullptr; }
  const NvmeConfig& config() const { return cfg_; }
  // End-of-run figures (counters, IOPS and bandwidth) into the stats registry.
  void finalize();
  // An app's measurement window: the media slots' use inside it is also
  // summed (media_utilisation_in_window).
  void set_window(Ps start, Ps end) {
    window_start_ = start;
    window_end_ = end;
  }

 private:
  // A command on its way to its completion queue.
  struct Pending {
    Ps at;          // when the completion is due
    uint64_t seq;   // order among equal times
    uint16_t cqid, sqid;
    uint32_t cq_gen, sq_gen;
    Ps rung;        // doorbell time of its SQ entry
    bool io;        // an I/O command (for IOPS)
    nvme_cqe cqe;
    bool operator>(const Pending& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  // A command between its fetch and its completion, taken a stage at a time
  // and in time order by the I/O engine: decoded when its entry has been
  // read, then Read is PRP lists, media, data to the host; Write is PRP
  // lists, data from the host, media; Identify is PRP lists and its data to
  // the host.
  struct Command {
    enum class Kind { kRead, kWrite, kAdminData } kind = Kind::kRead;
    enum class Stage { kDecode, kPrp, kFromHost, kMedia, kToHost } stage = Stage::kDecode;
    bool fetched = true;  // its entry was read (not aborted)
    Pending p;  // where and what it completes with
    nvme_sqe c;
    NvmeCore::IoCommand d;
    std::vector<uint8_t> data;
    std::vector<PrpSegment> segs;
    size_t seg = 0;        // transfer progress: segment, offset in it, bytes moved
    uint32_t seg_off = 0;
    uint64_t moved = 0;
    Ps last = 0;           // when its latest transaction completed
  };

  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void control_thread();
  void submission_thread();
  void io_thread();
  void completion_thread();

  // A fetched entry, once read: admin commands act, others are checked.
  void decode(std::unique_ptr<Command> cmd);
  void schedule(std::unique_ptr<Command> cmd, Ps at);
  void step(std::unique_ptr<Command> cmd);
  void finish(Command& cmd, uint16_t status, Ps at);
  // Whether its queues and the controller are still there.
  bool alive(const Pending& p) const;
  // PRP walk with timed list reads from `at`; *status set on failure.
  Ps walk_prps(const nvme_sqe& c, uint64_t len, Ps at, std::vector<PrpSegment>* segs, uint16_t* status);
  // Up to `outstanding` bursts of the command's data, from now; true when
  // every byte has moved or a burst was aborted (ok = false).
  bool transfer(Command& cmd, bool to_host, bool* ok);
  // One read through the master port (a read slot, then the host-to-device link).
  Ps read_host(uint64_t addr, void* data, uint32_t len, Ps at, bool* ok);
  // The media: a free slot (parallelism), its latency, then its bytes at the bandwidth.
  Ps media(bool write, uint64_t bytes, Ps at);
  // One timed transaction through the master port, issued at `at`.
  Ps dma(bool is_write, uint64_t addr, void* data, unsigned len, Ps at, bool* ok);
  void complete(Pending p);
  void retire();
  void raise(unsigned vector, Ps at);
  void raise_wired(unsigned vector, Ps at);

  NvmeConfig cfg_;
  NvmeCore core_;
  IrqSink* irq_;
  TraceSink* trace_;
  StatsRegistry& stats_;
  tlm::tlm_generic_payload trans_;  // carries the StreamID extension
  DeviceAtc atc_;
  std::unique_ptr<AtsDma> ats_dma_;  // null without ATS
  sc_core::sc_event ctrl_kick_, sq_kick_, io_kick_, cq_kick_, drained_;
  // The same-time order (common/tlm_time.h) of the threads' timed waits and the events' timed notifications.
  TimeRank ctrl_rank_, io_rank_, cq_rank_, ctrl_kick_rank_, sq_kick_rank_, io_kick_rank_, cq_kick_rank_;
  unsigned rr_ = 0;                          // last SQ served
  std::vector<std::vector<Ps>> rung_;        // per SQ entry: its doorbell time
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> pending_;
  std::map<uint16_t, std::deque<Pending>> due_;  // per CQ: due, waiting for room
  uint64_t seq_ = 0;
  uint64_t inflight_ = 0;                    // fetched, completion not yet posted or dropped
  std::map<std::pair<Ps, uint64_t>, std::unique_ptr<Command>> steps_;  // the engine's work by time
  uint64_t step_seq_ = 0;
  std::vector<Ps> read_slots_, write_slots_, media_slots_;
  Ps media_free_ = 0;                        // the media's bandwidth
  Ps media_busy_ = 0;                        // summed over the media slots
  Ps window_start_ = 0, window_end_ = 0, media_window_busy_ = 0;
  Ps up_free_ = 0, down_free_ = 0;           // host link, device-to-host and host-to-device
  std::vector<uint8_t> sq_buf_;
  Ps io_first_ = 0, io_last_ = 0;
  uint64_t io_done_ = 0;

  Counter& irqs_;
  Counter& msi_errors_;
  Counter& dropped_;
  Histogram& latency_;
};

}  // namespace smmu_vp

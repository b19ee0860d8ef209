// Register file and queue state of the multi-queue NIC, without SystemC:
// decodes register accesses (layout in nic_regs.h), keeps each queue's ring
// pointers, errors and interrupt-moderation state, and says what a write set
// in motion. The SystemC module (nic.h) moves the data and keeps the time.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "common/sim_time.h"
#include "nic/nic_regs.h"

namespace smmu_vp {

// One descriptor ring as the NIC sees it once enabled.
struct NicRing {
  bool enabled = false;
  uint64_t base = 0;   // latched at enable
  uint32_t size = 0;   // latched at enable
  uint32_t head = 0;   // next descriptor the NIC completes
  uint32_t tail = 0;   // doorbell: one past the last posted
  uint32_t fetched = 0;  // descriptors read ahead of head (in the NIC's cache)
  // Programmed values, latched by the next enable.
  uint64_t prog_base = 0;
  uint32_t prog_size = 0;

  uint32_t posted() const { return size ? (tail - head) & (size - 1) : 0; }
  // Posted descriptors not fetched yet.
  uint32_t unfetched() const { return posted() - fetched; }
  uint32_t fetch_index() const { return (head + fetched) & (size - 1); }
  uint64_t desc_addr(uint32_t index) const { return base + static_cast<uint64_t>(index) * NIC_DESC_BYTES; }
};

struct NicQueue {
  NicRing rx, tx;
  uint32_t ctrl = 0;
  uint64_t msi_addr = 0;
  uint32_t msi_data = 0;
  uint32_t coal_frames = 0;
  uint32_t coal_usecs = 0;
  bool irq_masked = true;  // masked until the driver re-arms it
  uint32_t err = 0;
  // Interrupt moderation: completions not yet signalled.
  uint32_t unsignalled = 0;
  Ps first_unsignalled = 0;
};

// Indexes of the 64-bit statistics registers (NIC_STAT_*).
enum class NicStat : unsigned {
  kRxPackets, kRxBytes, kTxPackets, kTxBytes, kRxNoBuffer, kRxFifoOverflow,
  kRxDmaFault, kTxDmaFault, kDescErrors, kProgErrors, kCount
};

class NicCore {
 public:
  static constexpr Ps kNever = UINT64_MAX;

  NicCore(unsigned queues, uint32_t link_mbps, uint32_t max_frame, uint32_t desc_batch);

  static uint64_t register_block_size(unsigned queues);

  enum class Access { kOk, kBadAddress, kBadSize };
  // What a register write set in motion, for the module to act on.
  struct Effects {
    bool rx_started = false;      // NIC_CTRL_RX_EN went 0 -> 1
    bool tx_doorbell = false;     // a TX tail moved (or a TX ring was enabled)
    bool irq_rearmed = false;     // a queue's mask was cleared
  };
  // 32-bit accesses anywhere, 64-bit to _LO registers and statistics.
  Access read(uint64_t offset, unsigned len, uint64_t* value) const;
  Access write(uint64_t offset, unsigned len, uint64_t value, Effects* fx);

  unsigned queues() const { return static_cast<unsigned>(q_.size()); }
  NicQueue& queue(unsigned q) { return q_[q]; }
  const NicQueue& queue(unsigned q) const { return q_[q]; }
  bool rx_enabled() const { return (ctrl_ & NIC_CTRL_RX_EN) != 0; }
  bool tx_enabled() const { return (ctrl_ & NIC_CTRL_TX_EN) != 0; }
  uint32_t desc_batch() const { return desc_batch_; }

  // Receive-side scaling: the queue of a flow among the queues whose RX ring
  // is enabled (an indirection table filled round-robin, as drivers do), or
  // -1 when none is.
  int rss_queue(uint32_t flow) const;

  // An error found while the NIC worked on queue q: latched in Q_ERR and
  // ERR_STATUS, counted; stop_rx/stop_tx disable that ring.
  void queue_error(unsigned q, uint32_t err_bits, bool stop_rx, bool stop_tx);

  void count(NicStat s, uint64_t n = 1) { stats_[static_cast<unsigned>(s)] += n; }
  uint64_t stat(NicStat s) const { return stats_[static_cast<unsigned>(s)]; }

  // Interrupt moderation (nic_regs.h): a completion on queue q at `at`.
  void complete(unsigned q, Ps at);
  // When queue q's interrupt is due (kNever: nothing to signal, or masked).
  Ps irq_due(unsigned q) const;
  // The interrupt was raised: mask the queue, start a new moderation window.
  void irq_raised(unsigned q);

 private:
  uint32_t read32(uint64_t offset, bool* ok) const;
  void write32(uint64_t offset, uint32_t v, bool* ok, Effects* fx);
  void write_queue(unsigned q, uint64_t reg, uint32_t v, Effects* fx);
  void enable_ring(unsigned q, NicRing& r, bool tx);
  void ring_doorbell(unsigned q, NicRing& r, uint32_t tail);

  std::vector<NicQueue> q_;
  uint32_t link_mbps_, max_frame_, desc_batch_;
  uint32_t ctrl_ = 0;
  uint32_t err_status_ = 0;
  uint32_t err_queue_ = 0;
  std::array<uint64_t, static_cast<unsigned>(NicStat::kCount)> stats_{};
};

}  // namespace smmu_vp

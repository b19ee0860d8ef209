#include "nic/nic_core.h"

namespace smmu_vp {

namespace {
constexpr uint64_t kPageBytes = 4096;
bool power_of_two(uint32_t v) { return v && (v & (v - 1)) == 0; }
void set_lo(uint64_t& r, uint32_t x) { r = (r & ~0xFFFFFFFFull) | x; }
void set_hi(uint64_t& r, uint32_t x) { r = (r & 0xFFFFFFFFull) | (static_cast<uint64_t>(x) << 32); }
}  // namespace

NicCore::NicCore(unsigned queues, uint32_t link_mbps, uint32_t max_frame, uint32_t desc_batch)
    : q_(queues), link_mbps_(link_mbps), max_frame_(max_frame), desc_batch_(desc_batch) {}

uint64_t NicCore::register_block_size(unsigned queues) {
  const uint64_t end = NIC_Q_BASE + static_cast<uint64_t>(queues) * NIC_Q_STRIDE;
  return (end + kPageBytes - 1) / kPageBytes * kPageBytes;
}

NicCore::Access NicCore::read(uint64_t off, unsigned len, uint64_t* value) const {
  if ((len != 4 && len != 8) || off % len) return Access::kBadSize;
  if (off >= register_block_size(queues())) return Access::kBadAddress;
  bool ok = true;
  uint64_t v = read32(off, &ok);
  if (len == 8) v |= static_cast<uint64_t>(read32(off + 4, &ok)) << 32;
  *value = v;
  return ok ? Access::kOk : Access::kBadAddress;
}

NicCore::Access NicCore::write(uint64_t off, unsigned len, uint64_t value, Effects* fx) {
  if ((len != 4 && len != 8) || off % len) return Access::kBadSize;
  if (off >= register_block_size(queues())) return Access::kBadAddress;
  bool ok = true;
  write32(off, static_cast<uint32_t>(value), &ok, fx);
  if (len == 8) write32(off + 4, static_cast<uint32_t>(value >> 32), &ok, fx);
  return ok ? Access::kOk : Access::kBadAddress;
}

uint32_t NicCore::read32(uint64_t off, bool* ok) const {
  switch (off) {
    case NIC_REG_ID: return NIC_ID_VALUE;
    case NIC_REG_QUEUES: return queues();
    case NIC_REG_LINK_MBPS: return link_mbps_;
    case NIC_REG_MAX_FRAME: return max_frame_;
    case NIC_REG_CTRL: return ctrl_;
    case NIC_REG_STATUS: return NIC_STATUS_LINK_UP;
    case NIC_REG_ERR_STATUS: return err_status_;
    case NIC_REG_ERR_QUEUE: return err_queue_;
    case NIC_REG_DESC_BATCH: return desc_batch_;
    default: break;
  }
  if (off >= NIC_STAT_BASE && off < NIC_STAT_END) {
    const uint64_t s = stats_[(off - NIC_STAT_BASE) / 8];
    return static_cast<uint32_t>(off % 8 ? s >> 32 : s);
  }
  if (off < NIC_Q_BASE) return 0;  // unassigned global space: RAZ/WI
  const unsigned qi = static_cast<unsigned>((off - NIC_Q_BASE) / NIC_Q_STRIDE);
  if (qi >= queues()) {
    *ok = false;
    return 0;
  }
  const NicQueue& q = q_[qi];
  switch ((off - NIC_Q_BASE) % NIC_Q_STRIDE) {
    case NIC_Q_RX_BASE_LO: return static_cast<uint32_t>(q.rx.prog_base);
    case NIC_Q_RX_BASE_HI: return static_cast<uint32_t>(q.rx.prog_base >> 32);
    case NIC_Q_RX_SIZE: return q.rx.prog_size;
    case NIC_Q_RX_HEAD: return q.rx.head;
    case NIC_Q_RX_TAIL: return q.rx.tail;
    case NIC_Q_TX_BASE_LO: return static_cast<uint32_t>(q.tx.prog_base);
    case NIC_Q_TX_BASE_HI: return static_cast<uint32_t>(q.tx.prog_base >> 32);
    case NIC_Q_TX_SIZE: return q.tx.prog_size;
    case NIC_Q_TX_HEAD: return q.tx.head;
    case NIC_Q_TX_TAIL: return q.tx.tail;
    case NIC_Q_CTRL: return q.ctrl;
    case NIC_Q_MSI_ADDR_LO: return static_cast<uint32_t>(q.msi_addr);
    case NIC_Q_MSI_ADDR_HI: return static_cast<uint32_t>(q.msi_addr >> 32);
    case NIC_Q_MSI_DATA: return q.msi_data;
    case NIC_Q_COAL_FRAMES: return q.coal_frames;
    case NIC_Q_COAL_USECS: return q.coal_usecs;
    case NIC_Q_IRQ_MASK: return q.irq_masked ? 1u : 0u;
    case NIC_Q_ERR: return q.err;
    default: return 0;  // reserved: RAZ/WI
  }
}

void NicCore::write32(uint64_t off, uint32_t v, bool* ok, Effects* fx) {
  if (off == NIC_REG_CTRL) {
    const uint32_t was = ctrl_;
    ctrl_ = v & (NIC_CTRL_RX_EN | NIC_CTRL_TX_EN);
    if (!(was & NIC_CTRL_RX_EN) && (ctrl_ & NIC_CTRL_RX_EN)) fx->rx_started = true;
    if (!(was & NIC_CTRL_TX_EN) && (ctrl_ & NIC_CTRL_TX_EN)) fx->tx_doorbell = true;
    return;
  }
  if (off == NIC_REG_ERR_STATUS) {
    err_status_ &= ~v;
    return;
  }
  if (off < NIC_Q_BASE) return;  // identification and statistics are read-only
  const unsigned qi = static_cast<unsigned>((off - NIC_Q_BASE) / NIC_Q_STRIDE);
  if (qi >= queues()) {
    *ok = false;
    return;
  }
  write_queue(qi, (off - NIC_Q_BASE) % NIC_Q_STRIDE, v, fx);
}

void NicCore::write_queue(unsigned qi, uint64_t reg, uint32_t v, Effects* fx) {
  NicQueue& q = q_[qi];
  switch (reg) {
    case NIC_Q_RX_BASE_LO: set_lo(q.rx.prog_base, v); break;
    case NIC_Q_RX_BASE_HI: set_hi(q.rx.prog_base, v); break;
    case NIC_Q_RX_SIZE: q.rx.prog_size = v; break;
    case NIC_Q_RX_TAIL: ring_doorbell(qi, q.rx, v); break;
    case NIC_Q_TX_BASE_LO: set_lo(q.tx.prog_base, v); break;
    case NIC_Q_TX_BASE_HI: set_hi(q.tx.prog_base, v); break;
    case NIC_Q_TX_SIZE: q.tx.prog_size = v; break;
    case NIC_Q_TX_TAIL:
      ring_doorbell(qi, q.tx, v);
      fx->tx_doorbell = true;
      break;
    case NIC_Q_CTRL: {
      const uint32_t was = q.ctrl;
      q.ctrl = v & (NIC_Q_CTRL_RX_EN | NIC_Q_CTRL_TX_EN | NIC_Q_CTRL_IRQ_EN | NIC_Q_CTRL_MSI_EN);
      if (!(q.ctrl & NIC_Q_CTRL_RX_EN)) q.rx.enabled = false;
      if (!(q.ctrl & NIC_Q_CTRL_TX_EN)) q.tx.enabled = false;
      if (!(was & NIC_Q_CTRL_RX_EN) && (q.ctrl & NIC_Q_CTRL_RX_EN)) enable_ring(qi, q.rx, false);
      if (!(was & NIC_Q_CTRL_TX_EN) && (q.ctrl & NIC_Q_CTRL_TX_EN)) {
        enable_ring(qi, q.tx, true);
        fx->tx_doorbell = true;
      }
      break;
    }
    case NIC_Q_MSI_ADDR_LO: set_lo(q.msi_addr, v); break;
    case NIC_Q_MSI_ADDR_HI: set_hi(q.msi_addr, v); break;
    case NIC_Q_MSI_DATA: q.msi_data = v; break;
    case NIC_Q_COAL_FRAMES: q.coal_frames = v; break;
    case NIC_Q_COAL_USECS: q.coal_usecs = v; break;
    case NIC_Q_IRQ_MASK:
      if (q.irq_masked && !(v & 1u)) fx->irq_rearmed = true;
      q.irq_masked = (v & 1u) != 0;
      break;
    case NIC_Q_ERR: q.err &= ~v; break;
    default: break;  // read-only or reserved
  }
}

void NicCore::enable_ring(unsigned qi, NicRing& r, bool tx) {
  const uint32_t bit = tx ? NIC_Q_CTRL_TX_EN : NIC_Q_CTRL_RX_EN;
  r.head = r.tail = r.fetched = 0;
  if (!power_of_two(r.prog_size) || r.prog_size < 2 || r.prog_size > NIC_RING_MAX) {
    queue_error(qi, NIC_ERR_RING_SIZE, !tx, tx);
    q_[qi].ctrl &= ~bit;
    return;
  }
  if (r.prog_base % NIC_DESC_BYTES) {
    queue_error(qi, NIC_ERR_RING_ALIGN, !tx, tx);
    q_[qi].ctrl &= ~bit;
    return;
  }
  r.base = r.prog_base;
  r.size = r.prog_size;
  r.enabled = true;
}

void NicCore::ring_doorbell(unsigned qi, NicRing& r, uint32_t tail) {
  // A tail beyond the ring, or one that would take back descriptors the NIC
  // already fetched, is refused: the ring keeps its state.
  if (!r.enabled || tail >= r.size || ((tail - r.head) & (r.size - 1)) < r.fetched) {
    queue_error(qi, NIC_ERR_DOORBELL, false, false);
    return;
  }
  r.tail = tail;
}

void NicCore::queue_error(unsigned qi, uint32_t bits, bool stop_rx, bool stop_tx) {
  NicQueue& q = q_[qi];
  if (!err_status_) err_queue_ = qi;
  err_status_ |= bits;
  q.err |= bits;
  if (bits & (NIC_ERR_RING_SIZE | NIC_ERR_RING_ALIGN | NIC_ERR_DOORBELL)) count(NicStat::kProgErrors);
  if (stop_rx) {
    q.rx.enabled = false;
    q.ctrl &= ~NIC_Q_CTRL_RX_EN;
  }
  if (stop_tx) {
    q.tx.enabled = false;
    q.ctrl &= ~NIC_Q_CTRL_TX_EN;
  }
}

int NicCore::rss_queue(uint32_t flow) const {
  // A 128-entry indirection table over the enabled RX queues, indexed by a
  // hash of the flow (Toeplitz in hardware; any well-mixing hash will do
  // here: MurmurHash3's 32-bit finalizer).
  unsigned n = 0;
  for (const NicQueue& q : q_) n += q.rx.enabled ? 1 : 0;
  if (!n) return -1;
  uint32_t h = flow;
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  unsigned k = (h % 128u) % n;
  for (unsigned i = 0; i < queues(); ++i)
    if (q_[i].rx.enabled && k-- == 0) return static_cast<int>(i);
  return -1;
}

void NicCore::complete(unsigned qi, Ps at) {
  NicQueue& q = q_[qi];
  if (q.unsignalled++ == 0) q.first_unsignalled = at;
}

Ps NicCore::irq_due(unsigned qi) const {
  const NicQueue& q = q_[qi];
  if (!q.unsignalled || q.irq_masked || !(q.ctrl & (NIC_Q_CTRL_IRQ_EN | NIC_Q_CTRL_MSI_EN))) return kNever;
  if (q.coal_frames == 0 && q.coal_usecs == 0) return q.first_unsignalled;
  Ps due = kNever;
  if (q.coal_usecs) due = q.first_unsignalled + static_cast<Ps>(q.coal_usecs) * 1000 * kPsPerNs;
  // The frame count is met at the completion that reaches it; its time is
  // not kept, so it counts as due now (the caller's time).
  if (q.coal_frames && q.unsignalled >= q.coal_frames) due = q.first_unsignalled;
  return due;
}

void NicCore::irq_raised(unsigned qi) {
  NicQueue& q = q_[qi];
  q.irq_masked = true;
  q.unsignalled = 0;
}

}  // namespace smmu_vp

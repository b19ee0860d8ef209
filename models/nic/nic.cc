#include "nic/nic.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/ats_dma.h"
#include "common/payload.h"
#include "common/stream_id_extension.h"
#include "common/tlm_time.h"

namespace smmu_vp {

namespace {
RxTrafficGenerator::Params generator_params(const NicConfig& c) {
  RxTrafficGenerator::Params p;
  p.link_gbps = c.link_gbps;
  p.load_percent = c.rx_load_percent;
  p.frame_bytes = c.rx_frame_bytes;
  p.mix = c.rx_frame_mix;
  p.flows = c.rx_flows;
  return p;
}

// The slot that frees first.
Ps& earliest(std::vector<Ps>& slots) { return *std::min_element(slots.begin(), slots.end()); }
}  // namespace

Nic::Nic(sc_core::sc_module_name name, const NicConfig& cfg, IrqSink* irq, StatsRegistry& stats, TraceSink* trace)
    : sc_module(validated_name(name, cfg)),
      regs("regs"),
      mem("mem"),
      cfg_(cfg),
      core_(cfg.queues, static_cast<uint32_t>(cfg.link_gbps * 1000.0), cfg.mtu + kEthHeader, cfg.desc_batch),
      gen_(generator_params(cfg)),
      irq_(irq),
      trace_(trace),
      stats_(stats),
      atc_(cfg.atc, stats, std::string(basename()) + ".atc"),
      rx_cache_(cfg.queues),
      tx_cache_(cfg.queues),
      rx_buf_(cfg.mtu + kEthHeader),
      tx_buf_(cfg.mtu + kEthHeader),
      write_slots_(cfg.outstanding_writes, 0),
      read_slots_(cfg.outstanding_reads, 0),
      rx_offered_(stats.counter(std::string(basename()) + ".rx_offered")),
      irqs_(stats.counter(std::string(basename()) + ".irqs")),
      msi_errors_(stats.counter(std::string(basename()) + ".msi_errors")),
      fifo_occupancy_(stats.histogram(std::string(basename()) + ".rx_fifo_bytes", "bytes", 1.0)),
      rx_dma_latency_(stats.histogram(std::string(basename()) + ".rx_dma_latency_ns", "ns", 1000.0)) {
  regs.register_b_transport(this, &Nic::b_transport);
  trans_.set_extension(new StreamIdExtension(cfg.stream_id, 0, false));  // owned by the payload
  if (cfg.atc.enabled())
    ats_dma_ = std::make_unique<AtsDma>(atc_, *trans_.get_extension<StreamIdExtension>(), send_through(mem), stats,
                                        std::string(basename()) + ".atc");
  SC_THREAD(rx_thread);
  SC_THREAD(tx_thread);
  SC_THREAD(irq_thread);
}

void Nic::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  delay += ps_to_sc(ns_to_ps(cfg_.reg_latency_ns));
  const unsigned len = trans.get_data_length();
  if (trans.get_byte_enable_ptr() || trans.get_streaming_width() < len || len > 8) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  NicCore::Access a = NicCore::Access::kOk;
  uint64_t v = 0;
  if (trans.is_read()) {
    a = core_.read(trans.get_address(), len, &v);
    if (a == NicCore::Access::kOk) std::memcpy(trans.get_data_ptr(), &v, len);
  } else if (trans.is_write()) {
    std::memcpy(&v, trans.get_data_ptr(), len);
    NicCore::Effects fx;
    a = core_.write(trans.get_address(), len, v, &fx);
    // What the write sets in motion starts when it lands.
    if (fx.rx_started) rx_start_.notify(rx_start_rank_.after(delay));
    if (fx.tx_doorbell) tx_kick_.notify(tx_kick_rank_.after(delay));
    if (fx.irq_rearmed) irq_kick_.notify(irq_kick_rank_.after(delay));
  }
  switch (a) {
    case NicCore::Access::kOk: trans.set_response_status(tlm::TLM_OK_RESPONSE); break;
    case NicCore::Access::kBadAddress: trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE); break;
    case NicCore::Access::kBadSize: trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE); break;
  }
}

Nic::~Nic() = default;

Ps Nic::dma(bool is_write, uint64_t addr, void* data, unsigned len, Ps at, bool* ok) {
  if (ats_dma_) return ats_dma_->access(trans_, is_write, addr, static_cast<uint8_t*>(data), len, at, ok);
  prepare_access(trans_, is_write, addr, data, len);
  const Ps now = now_ps();
  sc_core::sc_time delay = ps_to_sc(at > now ? at - now : 0);
  mem->b_transport(trans_, delay);
  *ok = trans_.is_response_ok();
  return now_ps() + sc_to_ps(delay);  // the time at return: a stalled translation waits
}

// ---- RX

void Nic::rx_thread() {
  for (;;) {
    while (!core_.rx_enabled()) sc_core::wait(rx_start_);
    gen_.start(now_ps());
    while (core_.rx_enabled()) {
      const RxFrame f = gen_.next();
      // One wait per frame: the engine decides with the registers as they are then.
      if (f.last_byte > now_ps()) sc_core::wait(rx_rank_.until(f.last_byte));
      if (!core_.rx_enabled()) break;
      rx_offered_.add();
      receive(f);
    }
  }
}

void Nic::receive(const RxFrame& f) {
  // FIFO admission when the frame has arrived: what earlier frames left behind.
  while (!fifo_.empty() && fifo_.front().leave <= f.last_byte) {
    fifo_bytes_ -= fifo_.front().bytes;
    fifo_.pop_front();
  }
  fifo_occupancy_.record(fifo_bytes_);
  if (fifo_bytes_ + f.bytes > cfg_.rx_fifo_bytes) {
    core_.count(NicStat::kRxFifoOverflow);
    return;
  }
  // Store and forward: the DMA engine takes frames in order, when it is free.
  Ps start = std::max(f.last_byte, rx_engine_free_);
  if (start > now_ps()) sc_core::wait(rx_rank_.until(start));
  start += ns_to_ps(cfg_.per_packet_ns);
  Ps leave = start;
  const int qi = core_.rss_queue(f.flow);
  if (rx_first_ == 0) rx_first_ = f.first_byte;
  Fetch got = Fetch::kNone;
  if (qi >= 0) got = ensure_descriptor(static_cast<unsigned>(qi), core_.queue(static_cast<unsigned>(qi)).rx,
                                       rx_cache_[static_cast<unsigned>(qi)], start, false);
  if (got != Fetch::kOk) {
    core_.count(got == Fetch::kNone ? NicStat::kRxNoBuffer : NicStat::kRxDmaFault);
  } else {
    const unsigned q = static_cast<unsigned>(qi);
    NicRing& r = core_.queue(q).rx;
    std::deque<CachedDesc>& cache = rx_cache_[q];
    const nic_desc d = cache.front().d;
    start = std::max(start, cache.front().ready);
    if (d.len == 0 || d.len < f.bytes) {
      // The buffer cannot hold the frame: refuse the descriptor, drop the frame.
      core_.count(NicStat::kDescErrors);
      core_.queue_error(q, NIC_ERR_DESC, false, false);
      complete_descriptor(q, r, cache, 0, NIC_DESC_DD | NIC_DESC_ERR_LEN, f.last_byte, start);
    } else {
      RxTrafficGenerator::fill(f, rx_buf_.data());
      bool ok = true;
      const Ps written = write_payload(d.addr, rx_buf_.data(), f.bytes, start, &leave, &ok);
      if (ok) {
        const Ps wb = complete_descriptor(q, r, cache, f.bytes, NIC_DESC_DD, f.last_byte, written);
        core_.count(NicStat::kRxPackets);
        core_.count(NicStat::kRxBytes, f.bytes);
        if (in_window(f.last_byte)) rx_window_bytes_ += f.bytes;
        rx_dma_latency_.record(wb - f.last_byte);
        rx_last_ = std::max(rx_last_, wb);
      } else {
        // The SMMU aborted the write (and wrote its event record): the frame
        // is lost; the descriptor goes back so that the driver can recycle it.
        core_.count(NicStat::kRxDmaFault);
        core_.queue_error(q, NIC_ERR_DMA, false, false);
        complete_descriptor(q, r, cache, 0, NIC_DESC_DD | NIC_DESC_ERR_DMA, f.last_byte, written);
      }
    }
  }
  rx_engine_free_ = leave;
  fifo_.push_back({leave, f.bytes});
  fifo_bytes_ += f.bytes;
}

Nic::Fetch Nic::ensure_descriptor(unsigned q, NicRing& r, std::deque<CachedDesc>& cache, Ps at, bool tx) {
  if (!r.enabled) return Fetch::kNone;
  if (r.fetched == 0) cache.clear();  // re-enabled since: what was cached is gone
  if (cache.empty() && r.unfetched() == 0) return Fetch::kNone;
  // Prefetch when half the batch is used, so that the fetch latency hides
  // behind the frames still cached.
  if (cache.size() <= core_.desc_batch() / 2 && r.unfetched() > 0) {
    if (!fetch_batch(r, cache, at)) {
      core_.queue_error(q, NIC_ERR_DESC_FETCH, !tx, tx);
      cache.clear();
      return Fetch::kFault;
    }
  }
  return Fetch::kOk;
}

bool Nic::fetch_batch(NicRing& r, std::deque<CachedDesc>& cache, Ps at) {
  uint32_t n = std::min(core_.desc_batch(), r.unfetched());
  Ps ready = at;
  while (n > 0) {
    const uint32_t index = r.fetch_index();
    const uint32_t chunk = std::min(n, r.size - index);  // a read does not wrap
    std::vector<nic_desc>& buf = desc_buf_;
    buf.resize(chunk);
    Ps& slot = earliest(read_slots_);
    const Ps issue = std::max(at, slot);
    bool ok = true;
    const Ps done = dma(false, r.desc_addr(index), buf.data(), chunk * NIC_DESC_BYTES, issue, &ok);
    if (!ok) return false;
    slot = done;
    ready = std::max(ready, done);
    for (const nic_desc& d : buf) cache.push_back({d, done});
    r.fetched += chunk;
    n -= chunk;
  }
  return true;
}

Ps Nic::complete_descriptor(unsigned q, NicRing& r, std::deque<CachedDesc>& cache, uint32_t len, uint32_t status,
                            Ps timestamp, Ps at) {
  struct {
    uint32_t wb_len, wb_status;
    uint64_t wb_timestamp_ns;
  } wb{len, status, timestamp / kPsPerNs};
  static_assert(sizeof wb == NIC_DESC_BYTES - NIC_DESC_WB_OFFSET, "write-back covers the descriptor's tail");
  bool ok = true;
  const Ps done = dma(true, r.desc_addr(r.head) + NIC_DESC_WB_OFFSET, &wb, sizeof wb, at, &ok);
  cache.pop_front();
  r.head = (r.head + 1) & (r.size - 1);
  --r.fetched;
  if (!ok) {
    core_.queue_error(q, NIC_ERR_DESC_FETCH, false, false);
    return done;
  }
  core_.complete(q, done);
  schedule_irq(q);
  return done;
}

Ps Nic::write_payload(uint64_t addr, const uint8_t* data, uint32_t len, Ps at, Ps* last_issue, bool* ok) {
  Ps issue = at, last_done = at;
  *ok = true;
  for (uint32_t off = 0; off < len;) {
    // A burst never crosses a 4 KiB page (PCIe and the SMMU's translation granule).
    const uint64_t a = addr + off;
    const uint32_t n = static_cast<uint32_t>(
        std::min<uint64_t>({cfg_.burst_bytes, len - off, 4096 - (a & 4095)}));
    Ps& slot = earliest(write_slots_);
    issue = std::max({issue, slot, up_free_});
    up_free_ = issue + transfer_time_ps(n, cfg_.pcie_gbps / 8.0);
    const Ps done = dma(true, a, const_cast<uint8_t*>(data + off), n, issue, ok);
    if (!*ok) break;
    slot = done;
    last_done = std::max(last_done, done);
    off += n;
  }
  *last_issue = issue;
  return last_done;
}

// ---- TX

void Nic::tx_thread() {
  for (;;) {
    bool sent = false;
    if (core_.tx_enabled()) {
      // Round-robin over the queues, one frame each.
      for (unsigned i = 0; i < core_.queues(); ++i) {
        const unsigned q = (tx_next_queue_ + i) % core_.queues();
        if (send_one(q)) {
          sent = true;
          tx_next_queue_ = (q + 1) % core_.queues();
          break;
        }
      }
    }
    if (!sent) sc_core::wait(tx_kick_);
  }
}

bool Nic::send_one(unsigned q) {
  NicRing& r = core_.queue(q).tx;
  std::deque<CachedDesc>& cache = tx_cache_[q];
  const Ps now = now_ps();
  const Fetch got = ensure_descriptor(q, r, cache, now, true);
  if (got == Fetch::kFault) core_.count(NicStat::kTxDmaFault);
  if (got != Fetch::kOk) return got == Fetch::kFault;
  const nic_desc d = cache.front().d;
  const Ps start = std::max(now, cache.front().ready);
  if (d.len == 0 || d.len > tx_buf_.size()) {
    core_.count(NicStat::kDescErrors);
    core_.queue_error(q, NIC_ERR_DESC, false, false);
    complete_descriptor(q, r, cache, 0, NIC_DESC_DD | NIC_DESC_ERR_LEN, start, start);
    return true;
  }
  bool ok = true;
  const Ps fetched = read_payload(d.addr, tx_buf_.data(), d.len, start, &ok);
  if (!ok) {
    core_.count(NicStat::kTxDmaFault);
    core_.queue_error(q, NIC_ERR_DMA, false, false);
    complete_descriptor(q, r, cache, 0, NIC_DESC_DD | NIC_DESC_ERR_DMA, fetched, fetched);
    return true;
  }
  // On the wire back to back; the TX sink drains at line rate.
  const Ps on_wire = std::max(fetched, wire_tx_free_);
  wire_tx_free_ = on_wire + wire_time_ps(d.len, cfg_.link_gbps);
  if (tx_first_ == 0) tx_first_ = on_wire;
  tx_last_ = wire_tx_free_;
  if (in_window(on_wire)) tx_window_bytes_ += d.len;
  complete_descriptor(q, r, cache, d.len, NIC_DESC_DD, wire_tx_free_, wire_tx_free_);
  core_.count(NicStat::kTxPackets);
  core_.count(NicStat::kTxBytes, d.len);
  // Read ahead of the wire: up to tx_frames_ahead frames between their read
  // and the start of their transmission (the TX FIFO), so that translation
  // and memory latency hide behind the frames before them.
  tx_on_wire_.push_back(on_wire);
  while (tx_on_wire_.size() >= cfg_.tx_frames_ahead) {
    const Ps t = tx_on_wire_.front();
    tx_on_wire_.pop_front();
    if (t > now_ps()) sc_core::wait(tx_rank_.until(t));
  }
  return true;
}

Ps Nic::read_payload(uint64_t addr, uint8_t* data, uint32_t len, Ps at, bool* ok) {
  Ps last_done = at, issue = at;
  *ok = true;
  for (uint32_t off = 0; off < len;) {
    const uint64_t a = addr + off;
    const uint32_t n = static_cast<uint32_t>(
        std::min<uint64_t>({cfg_.burst_bytes, len - off, 4096 - (a & 4095)}));
    Ps& slot = earliest(read_slots_);
    issue = std::max(issue, slot);
    bool burst_ok = true;
    Ps done = dma(false, a, data + off, n, issue, &burst_ok);
    if (!burst_ok) {
      *ok = false;
      return std::max(last_done, done);
    }
    // The completion data shares the host-to-device link.
    const Ps arrive = std::max(done, down_free_);
    down_free_ = arrive + transfer_time_ps(n, cfg_.pcie_gbps / 8.0);
    done = down_free_;
    slot = done;
    last_done = std::max(last_done, done);
    off += n;
  }
  return last_done;
}

// ---- Interrupts

void Nic::schedule_irq(unsigned q) {
  const Ps due = core_.irq_due(q);
  if (due == NicCore::kNever) return;
  irq_kick_.notify(irq_kick_rank_.until(due));
}

void Nic::irq_thread() {
  for (;;) {
    sc_core::wait(irq_kick_);
    const Ps now = now_ps();
    Ps next = NicCore::kNever;
    for (unsigned q = 0; q < core_.queues(); ++q) {
      const Ps due = core_.irq_due(q);
      if (due <= now) raise_irq(q);
      else next = std::min(next, due);
    }
    if (next != NicCore::kNever) irq_kick_.notify(irq_kick_rank_.until(next));
  }
}

void Nic::raise_irq(unsigned q) {
  NicQueue& nq = core_.queue(q);
  core_.irq_raised(q);
  irqs_.add();
  if (nq.ctrl & NIC_Q_CTRL_MSI_EN) {
    uint32_t data = nq.msi_data;
    bool ok = true;
    dma(true, nq.msi_addr, &data, sizeof data, now_ps(), &ok);
    if (!ok) {
      msi_errors_.add();
      core_.queue_error(q, NIC_ERR_MSI, false, false);
    }
  } else if (irq_) {
    irq_->raise_line(cfg_.irq + q);
  }
  if (trace_) trace_->instant(basename(), "irq q" + std::to_string(q), now_ps(), {{"queue", q}});
}

void Nic::finalize() {
  const std::string p = std::string(basename()) + ".";
  static const char* const names[] = {"rx_packets",  "rx_bytes",      "tx_packets",  "tx_bytes",
                                      "rx_no_buffer", "rx_fifo_overflow", "rx_dma_fault", "tx_dma_fault",
                                      "desc_errors", "prog_errors"};
  static_assert(sizeof names / sizeof names[0] == static_cast<unsigned>(NicStat::kCount), "one name per statistic");
  for (unsigned i = 0; i < static_cast<unsigned>(NicStat::kCount); ++i) {
    Counter& c = stats_.counter(p + names[i]);
    c.add(core_.stat(static_cast<NicStat>(i)) - c.value());
  }
  if (rx_last_ > rx_first_)
    stats_.value(p + "rx_gbps") = 8.0 * static_cast<double>(core_.stat(NicStat::kRxBytes)) / ps_to_ns(rx_last_ - rx_first_);
  if (tx_last_ > tx_first_)
    stats_.value(p + "tx_gbps") = 8.0 * static_cast<double>(core_.stat(NicStat::kTxBytes)) / ps_to_ns(tx_last_ - tx_first_);
  if (window_end_ > window_start_) {
    const double ns = ps_to_ns(window_end_ - window_start_);
    stats_.value(p + "rx_gbps_in_window") = 8.0 * static_cast<double>(rx_window_bytes_) / ns;
    stats_.value(p + "tx_gbps_in_window") = 8.0 * static_cast<double>(tx_window_bytes_) / ns;
  }
}

// The largest frame is mtu + 14 (the Ethernet header; the FCS is not
// carried); a fixed-size frame must fit, and the imix mix has 1514-byte
// frames.
void NicConfig::validate() const {
  check::at_least_one(queues, "queues");
  check::rate(link_gbps, "link_gbps");
  check::rate(pcie_gbps, "pcie_gbps");
  check::require(std::isfinite(rx_load_percent) && rx_load_percent >= 0 && rx_load_percent <= 100, "rx_load_percent",
                 "must be between 0 and 100");
  const uint64_t max_frame = uint64_t{mtu} + kEthHeader;
  if (rx_frame_mix == FrameMix::kFixed)
    check::require(rx_frame_bytes <= max_frame, "rx_frame_bytes",
                   "larger than the largest frame, mtu + 14 = " + std::to_string(max_frame) + " bytes");
  if (rx_frame_mix == FrameMix::kImix)
    check::require(max_frame >= 1514, "mtu", "the imix frame mix needs 1514-byte frames: mtu must be at least 1500");
  check::require(rx_frame_bytes >= kEthHeader, "rx_frame_bytes", "must hold the 14-byte Ethernet header");
  check::at_least_one(rx_flows, "rx_flows");
  check::at_least_one(desc_batch, "desc_batch");
  check::require(burst_bytes >= 1 && burst_bytes <= 4096, "burst_bytes", "must be 1 to 4096 (a burst never crosses a 4 KiB page)");
  check::at_least_one(outstanding_reads, "outstanding_reads");
  check::at_least_one(outstanding_writes, "outstanding_writes");
  check::at_least_one(tx_frames_ahead, "tx_frames_ahead");
  check::time(per_packet_ns, "per_packet_ns");
  check::time(reg_latency_ns, "reg_latency_ns");
  atc.validate("atc");
}

}  // namespace smmu_vp

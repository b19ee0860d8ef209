#include "dma/dma_engine.h"

#include <algorithm>
#include <cstring>

#include <sysc/kernel/sc_spawn.h>

#include "common/ats_dma.h"
#include "common/payload.h"
#include "common/stream_id_extension.h"
#include "common/tlm_time.h"

namespace smmu_vp {

DmaEngine::DmaEngine(sc_core::sc_module_name name, const DmaConfig& cfg, IrqSink* irq,
                     StatsRegistry& stats, TraceSink* trace)
    : sc_module(validated_name(name, cfg)),
      regs("regs"),
      mem("mem"),
      cfg_(cfg),
      core_(cfg.channels, cfg.burst_bytes, cfg.stream_id),
      irq_(irq),
      trace_(trace),
      ch_(cfg.channels),
      bytes_total_(stats.counter(std::string(basename()) + ".bytes")),
      msi_errors_(stats.counter(std::string(basename()) + ".msi_errors")),
      go_while_busy_(stats.counter(std::string(basename()) + ".go_while_busy")),
      transfer_latency_(stats.histogram(std::string(basename()) + ".transfer_latency_ns", "ns", 1000.0)),
      stats_(stats),
      atc_(cfg.atc, stats, std::string(basename()) + ".atc") {
  regs.register_b_transport(this, &DmaEngine::b_transport);
  if (cfg.atc.enabled())
    ats_dma_ = std::make_unique<AtsDma>(atc_, StreamIdExtension(cfg.stream_id, 0, false), send_through(mem), stats,
                                        std::string(basename()) + ".atc");
  for (unsigned c = 0; c < cfg.channels; ++c) {
    const std::string p = std::string(basename()) + ".ch" + std::to_string(c);
    ch_[c].transfers = &stats.counter(p + ".transfers");
    ch_[c].bytes = &stats.counter(p + ".bytes");
    ch_[c].errors = &stats.counter(p + ".errors");
    sc_core::sc_spawn_options opts;
    opts.set_stack_size(64 * 1024);
    sc_core::sc_spawn([this, c]() { channel_thread(c); }, ("ch" + std::to_string(c)).c_str(), &opts);
  }
}

void DmaEngine::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  delay += ps_to_sc(ns_to_ps(cfg_.reg_latency_ns));
  const unsigned len = trans.get_data_length();
  if (trans.get_byte_enable_ptr() || trans.get_streaming_width() < len) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  DmaEngineCore::Access a = DmaEngineCore::Access::kOk;
  uint64_t v = 0;
  if (trans.is_read()) {
    a = core_.read(trans.get_address(), len, &v);
    if (a == DmaEngineCore::Access::kOk) std::memcpy(trans.get_data_ptr(), &v, len);
  } else if (trans.is_write()) {
    if (len <= 8) std::memcpy(&v, trans.get_data_ptr(), len);
    const uint64_t busy_before = core_.go_while_busy();
    int started = -1;
    a = core_.write(trans.get_address(), len, v, &started);
    if (core_.go_while_busy() != busy_before) go_while_busy_.add();
    // The channel starts when the register write lands, not before.
    if (started >= 0) {
      Channel& c = ch_[static_cast<unsigned>(started)];
      c.go.notify(c.go_rank.after(delay));
    }
  }
  switch (a) {
    case DmaEngineCore::Access::kOk: trans.set_response_status(tlm::TLM_OK_RESPONSE); break;
    case DmaEngineCore::Access::kBadAddress: trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE); break;
    case DmaEngineCore::Access::kBadSize: trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE); break;
  }
}

DmaEngine::~DmaEngine() = default;

Ps DmaEngine::issue(tlm::tlm_generic_payload& t, bool is_write, uint64_t addr, uint8_t* buf, unsigned len,
                    Ps at, bool* ok) {
  if (ats_dma_) {
    const StreamIdExtension* id = t.get_extension<StreamIdExtension>();
    if (id && id->stream_id == cfg_.stream_id && !id->substream_valid)
      return ats_dma_->access(t, is_write, addr, buf, len, at, ok);
  }
  prepare_access(t, is_write, addr, buf, len);
  const Ps now = now_ps();
  sc_core::sc_time delay = ps_to_sc(at > now ? at - now : 0);
  mem->b_transport(t, delay);
  *ok = t.is_response_ok();
  return now_ps() + sc_to_ps(delay);  // the time at return: a stalled translation waits
}

void DmaEngine::channel_thread(unsigned ch) {
  Channel& c = ch_[ch];
  tlm::tlm_generic_payload& t = c.trans;
  auto* ext = new StreamIdExtension();
  t.set_extension(ext);  // owned by the payload from here on
  c.bufs.assign(cfg_.max_outstanding, std::vector<uint8_t>(cfg_.burst_bytes));
  c.slot_free.assign(cfg_.max_outstanding, 0);
  std::vector<std::vector<uint8_t>>& bufs = c.bufs;
  std::vector<Ps>& slot_free = c.slot_free;
  const Ps quantum = sc_to_ps(tlm::tlm_global_quantum::instance().get());
  for (;;) {
    sc_core::wait(c.go);
    DmaChannelState& s = core_.channel(ch);
    const DmaChannelState job = s;  // registers are latched at GO
    *ext = StreamIdExtension(job.sid, job.ssid & DMA_SSID_MASK, (job.ssid & DMA_SSID_SSV) != 0);
    const Ps t_go = now_ps();
    first_go_ = std::min(first_go_, t_go);
    const TraceSink::SliceId slice =
        trace_ ? trace_->begin(std::string(basename()) + ".ch" + std::to_string(ch), "transfer", t_go,
                               {{"src", job.src}, {"dst", job.dst}, {"sid", job.sid}})
               : 0;
    const Ps start = t_go + ns_to_ps(cfg_.setup_ns);
    std::fill(slot_free.begin(), slot_free.end(), start);
    Ps done = start;
    uint32_t err = job.len == 0 ? DMA_ERR_LEN : DMA_ERR_NONE;
    uint64_t moved = 0;
    for (uint64_t off = 0, i = 0; err == DMA_ERR_NONE && off < job.len; off += cfg_.burst_bytes, ++i) {
      const unsigned n = static_cast<unsigned>(std::min<uint64_t>(cfg_.burst_bytes, job.len - off));
      const unsigned slot = static_cast<unsigned>(i % cfg_.max_outstanding);
      const Ps at = slot_free[slot];
      // Stay within one quantum of the kernel so other masters interleave fairly.
      const Ps now = now_ps();
      if (at > now + quantum) sc_core::wait(c.rank.until(at));
      bool ok;
      const Ps data_ready = issue(t, false, job.src + off, bufs[slot].data(), n, at, &ok);
      if (!ok) { err = DMA_ERR_READ; break; }
      const Ps written = issue(t, true, job.dst + off, bufs[slot].data(), n, data_ready, &ok);
      if (!ok) { err = DMA_ERR_WRITE; break; }
      slot_free[slot] = written;
      done = std::max(done, written);
      moved += n;
    }
    if (done > now_ps()) sc_core::wait(c.rank.until(done));
    const Ps t_done = now_ps();
    core_.complete(ch, err, static_cast<uint32_t>(moved));
    ch_[ch].transfers->add();
    ch_[ch].bytes->add(moved);
    bytes_total_.add(moved);
    if (err != DMA_ERR_NONE) ch_[ch].errors->add();
    transfer_latency_.record(t_done - t_go);
    last_done_ = std::max(last_done_, t_done);
    if (trace_) trace_->end(slice, t_done, {{"bytes", moved}}, err ? "transfer (error)" : "");
    signal_completion(ch);
  }
}

void DmaEngine::signal_completion(unsigned ch) {
  const DmaChannelState& s = core_.channel(ch);
  if ((s.ctrl & DMA_CTRL_IRQ_EN) && irq_) irq_->raise_line(cfg_.irq + ch);
  if (s.ctrl & DMA_CTRL_MSI_EN) {
    tlm::tlm_generic_payload t;
    StreamIdExtension ext(s.sid, s.ssid & DMA_SSID_MASK, (s.ssid & DMA_SSID_SSV) != 0);
    t.set_extension(&ext);
    uint32_t data = s.msi_data;
    bool ok;
    const Ps done = issue(t, true, s.msi_addr, reinterpret_cast<uint8_t*>(&data), 4, now_ps(), &ok);
    t.clear_extension(&ext);
    if (!ok) msi_errors_.add();
    // The channel is not reusable before its MSI write has been accepted.
    if (done > now_ps()) sc_core::wait(ch_[ch].rank.until(done));
  }
}

void DmaEngine::finalize() {
  const std::string p = std::string(basename());
  if (last_done_ > first_go_) {
    stats_.value(p + ".active_ns") = ps_to_ns(last_done_ - first_go_);
    stats_.value(p + ".bandwidth_gbps") =
        static_cast<double>(bytes_total_.value()) / ps_to_ns(last_done_ - first_go_);
  }
}

void DmaConfig::validate() const {
  check::at_least_one(channels, "channels");
  check::at_least_one(burst_bytes, "burst_bytes");
  check::at_least_one(max_outstanding, "max_outstanding");
  check::time(setup_ns, "setup_ns");
  check::time(reg_latency_ns, "reg_latency_ns");
  atc.validate("atc");
}

}  // namespace smmu_vp

#include "trace_player/trace_player.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <sysc/kernel/sc_spawn.h>

#include "common/payload.h"
#include "common/stream_id_extension.h"
#include "common/tlm_time.h"

namespace smmu_vp {

namespace {
constexpr uint64_t kPage = 4096;
}

TracePlayer::TracePlayer(sc_core::sc_module_name name, const TracePlayerConfig& cfg,
                         std::shared_ptr<const TraceImage> image, TracePlayerCore::Backdoor dram, StatsRegistry& stats,
                         TraceSink* trace)
    : sc_module(name),
      regs("regs"),
      mem("mem"),
      cfg_(cfg),
      core_(std::move(image), std::move(dram)),
      trace_(trace),
      stats_(stats),
      workers_(cfg.channels),
      accesses_(stats.counter(std::string(basename()) + ".accesses")),
      bytes_(stats.counter(std::string(basename()) + ".bytes")),
      latency_(stats.histogram(std::string(basename()) + ".access_latency_ns", "ns", 1000.0)),
      phases_(core_.image().phases, stats, basename()) {
  regs.register_b_transport(this, &TracePlayer::b_transport);
  // What the loader found, known before the run.
  const std::string p = std::string(basename()) + ".";
  const TraceImage& img = core_.image();
  stats.counter(p + "load_unmatched").add(img.unmatched);
  stats.counter(p + "load_overlapping").add(img.overlapping);
  stats.counter(p + "load_accesses_unmapped").add(img.accesses_unmapped);
  stats.counter(p + "load_accesses_synthesized").add(img.accesses_synthesized);
  stats.counter(p + "load_synthesized_late").add(img.synthesized_late);
  for (unsigned i = 0; i < cfg.channels; ++i) {
    Worker& w = workers_[i];
    w.trans.set_extension(new StreamIdExtension());  // owned by the payload
    w.rbuf.resize(cfg.burst_bytes);
    w.wbuf.assign(cfg.burst_bytes, 0);
    sc_core::sc_spawn_options opts;
    opts.set_stack_size(64 * 1024);
    sc_core::sc_spawn([this, i]() { worker_thread(i); }, ("ch" + std::to_string(i)).c_str(), &opts);
  }
}

void TracePlayer::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  delay += ps_to_sc(ns_to_ps(cfg_.reg_latency_ns));
  const unsigned len = trans.get_data_length();
  if (trans.get_byte_enable_ptr() || trans.get_streaming_width() < len) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  TracePlayerCore::Access a = TracePlayerCore::Access::kOk;
  uint64_t v = 0;
  if (trans.is_read()) {
    a = core_.read(trans.get_address(), len, &v);
    if (a == TracePlayerCore::Access::kOk) std::memcpy(trans.get_data_ptr(), &v, len);
  } else if (trans.is_write()) {
    if (len <= 8) std::memcpy(&v, trans.get_data_ptr(), len);
    TracePlayerCore::Effects fx;
    a = core_.write(trans.get_address(), len, v, &fx);
    // What the write sets in motion starts when it lands.
    if (fx.started) {
      core_.start(now_ps() + sc_to_ps(delay));
      start_.notify(start_rank_.after(delay));
      phases_.enter(0, now_ps() + sc_to_ps(delay));
    }
    if (fx.phase) phases_.enter(fx.phase_index, now_ps() + sc_to_ps(delay));
    if (fx.doorbell) doorbell_.notify(doorbell_rank_.after(delay));
  }
  switch (a) {
    case TracePlayerCore::Access::kOk: trans.set_response_status(tlm::TLM_OK_RESPONSE); break;
    case TracePlayerCore::Access::kBadAddress: trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE); break;
    case TracePlayerCore::Access::kBadSize: trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE); break;
  }
}

bool TracePlayer::play(Worker& w, uint32_t index, uint64_t addr, Ps* done) {
  const PlayerAccess& a = core_.access(index);
  auto* ext = w.trans.get_extension<StreamIdExtension>();
  *ext = StreamIdExtension(a.sid, 0, false);
  const Ps t0 = now_ps();
  Ps end = t0;
  for (uint64_t off = 0; off < a.size;) {
    const uint64_t at = addr + off;
    const unsigned n = static_cast<unsigned>(
        std::min<uint64_t>({cfg_.burst_bytes, a.size - off, kPage - (at & (kPage - 1))}));
    // The bursts of one access are issued together; each completes on its own.
    prepare_access(w.trans, a.write, at, a.write ? w.wbuf.data() : w.rbuf.data(), n);
    const Ps now = now_ps();
    sc_core::sc_time delay = ps_to_sc(t0 > now ? t0 - now : 0);
    mem->b_transport(w.trans, delay);
    end = std::max(end, now_ps() + sc_to_ps(delay));  // the time at return: a stalled translation waits
    if (!w.trans.is_response_ok()) {
      *done = end;
      return false;  // the device gives up the access at its first abort
    }
    bytes_.add(n);
    off += n;
  }
  *done = end;
  return true;
}

void TracePlayer::worker_thread(unsigned wi) {
  Worker& w = workers_[wi];
  for (;;) {
    const TracePlayerCore::Decision d = core_.next(now_ps());
    switch (d.kind) {
      case TracePlayerCore::Decision::kNotStarted: sc_core::wait(start_); break;
      case TracePlayerCore::Decision::kWaitTime: sc_core::wait(w.rank.until(d.at)); break;
      case TracePlayerCore::Decision::kWaitMap: sc_core::wait(doorbell_); break;
      case TracePlayerCore::Decision::kAllTaken: return;
      case TracePlayerCore::Decision::kIssue: {
        const Ps t0 = now_ps();
        first_issue_ = std::min(first_issue_, t0);
        const uint32_t phase = core_.access(d.index).phase;
        phases_.enter(phase, t0);
        if (trace_ && !replay_slice_) replay_slice_ = trace_->begin(basename(), "replay", first_issue_);
        Ps done = t0;
        const bool ok = play(w, d.index, d.addr, &done);
        if (done > now_ps()) sc_core::wait(w.rank.until(done));
        core_.complete(d.index, ok);
        accesses_.add();
        phases_.access_done(phase);
        latency_.record(done - t0);
        last_done_ = std::max(last_done_, done);
        if (trace_ && core_.done())
          trace_->end(replay_slice_, last_done_,
                      {{"accesses", core_.access_count()}, {"errors", core_.access_errors()}});
        break;
      }
    }
  }
}

void TracePlayer::finalize() {
  const std::string p = std::string(basename()) + ".";
  stats_.counter(p + "access_errors").add(core_.access_errors());
  stats_.counter(p + "accesses_skipped_unmapped").add(core_.skipped_unmapped());
  stats_.counter(p + "accesses_skipped_failed").add(core_.skipped_failed());
  stats_.counter(p + "accesses_skipped_no_table").add(core_.skipped_no_table());
  stats_.counter(p + "waits_for_map").add(core_.waits_for_map());
  stats_.counter(p + "register_errors").add(core_.bad_register_accesses());
  stats_.counter(p + "prog_errors").add(core_.prog_errors());
  stats_.value(p + "accesses_done") = static_cast<double>(core_.accesses_done());
  if (last_done_ > first_issue_) stats_.value(p + "active_ns") = ps_to_ns(last_done_ - first_issue_);
  phases_.finalize(now_ps());
}

}  // namespace smmu_vp

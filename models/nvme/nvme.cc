#include "nvme/nvme.h"

#include <algorithm>
#include <cstring>

#include "common/ats_dma.h"
#include "common/payload.h"
#include "common/stream_id_extension.h"
#include "common/tlm_time.h"

namespace smmu_vp {

namespace {
// The slot that frees first.
Ps& earliest(std::vector<Ps>& slots) { return *std::min_element(slots.begin(), slots.end()); }
Ps us_to_ps(double us) { return ns_to_ps(us * 1000.0); }

NvmeCore::Params core_params(const NvmeConfig& c, const char* name) {
  NvmeCore::Params p;
  p.queues = c.queues;
  p.vectors = c.vectors;
  p.capacity_bytes = c.capacity_gib << 30;
  p.lba_bytes = c.lba_bytes;
  // CAP.TO in 500 ms units, rounded up.
  p.ready_timeout = static_cast<uint32_t>((c.enable_us + 499999.0) / 500000.0);
  p.serial = std::string("SVP-") + name;
  return p;
}
}  // namespace

Nvme::Nvme(sc_core::sc_module_name name, const NvmeConfig& cfg, IrqSink* irq, StatsRegistry& stats, TraceSink* trace)
    : sc_module(validated_name(name, cfg)),
      regs("regs"),
      mem("mem"),
      cfg_(cfg),
      core_(core_params(cfg, basename())),
      irq_(irq),
      trace_(trace),
      stats_(stats),
      atc_(cfg.atc, stats, std::string(basename()) + ".atc"),
      rung_(cfg.queues + 1),
      read_slots_(cfg.outstanding, 0),
      write_slots_(cfg.outstanding, 0),
      media_slots_(cfg.parallelism, 0),
      irqs_(stats.counter(std::string(basename()) + ".irqs")),
      msi_errors_(stats.counter(std::string(basename()) + ".msi_errors")),
      dropped_(stats.counter(std::string(basename()) + ".dropped_completions")),
      latency_(stats.histogram(std::string(basename()) + ".command_latency_ns", "ns", 1000.0)) {
  regs.register_b_transport(this, &Nvme::b_transport);
  trans_.set_extension(new StreamIdExtension(cfg.stream_id, 0, false));  // owned by the payload
  if (cfg.atc.enabled())
    ats_dma_ = std::make_unique<AtsDma>(atc_, *trans_.get_extension<StreamIdExtension>(), send_through(mem), stats,
                                        std::string(basename()) + ".atc");
  SC_THREAD(control_thread);
  SC_THREAD(submission_thread);
  SC_THREAD(io_thread);
  SC_THREAD(completion_thread);
}

void Nvme::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  delay += ps_to_sc(ns_to_ps(cfg_.reg_latency_ns));
  const unsigned len = trans.get_data_length();
  if (trans.get_byte_enable_ptr() || trans.get_streaming_width() < len || len > 8) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  NvmeCore::Access a = NvmeCore::Access::kOk;
  uint64_t v = 0;
  if (trans.is_read()) {
    a = core_.read(trans.get_address(), len, &v);
    if (a == NvmeCore::Access::kOk) std::memcpy(trans.get_data_ptr(), &v, len);
  } else if (trans.is_write()) {
    std::memcpy(&v, trans.get_data_ptr(), len);
    NvmeCore::Effects fx;
    a = core_.write(trans.get_address(), len, v, &fx);
    // What the write sets in motion starts when it lands.
    if (fx.cc_changed) ctrl_kick_.notify(ctrl_kick_rank_.after(delay));
    if (fx.reset) cq_kick_.notify(cq_kick_rank_.after(delay));  // completions of deleted queues are dropped
    if (fx.sq >= 0) {
      const unsigned q = static_cast<unsigned>(fx.sq);
      std::vector<Ps>& r = rung_[q];
      const uint32_t size = core_.sq(q)->size;
      if (r.size() != size) r.assign(size, 0);
      const Ps t = now_ps() + sc_to_ps(delay);
      for (uint32_t i = fx.sq_from; i != fx.sq_to; i = (i + 1) % size) r[i] = t;
      sq_kick_.notify(sq_kick_rank_.after(delay));
    }
    if (fx.cq_doorbell) cq_kick_.notify(cq_kick_rank_.after(delay));
    for (unsigned vec = 0; vec < 32; ++vec)
      if ((fx.unmasked_pending >> vec) & 1u) raise_wired(vec, now_ps() + sc_to_ps(delay));
  }
  switch (a) {
    case NvmeCore::Access::kOk: trans.set_response_status(tlm::TLM_OK_RESPONSE); break;
    case NvmeCore::Access::kBadAddress: trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE); break;
    case NvmeCore::Access::kBadSize: trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE); break;
  }
}

Nvme::~Nvme() = default;

Ps Nvme::dma(bool is_write, uint64_t addr, void* data, unsigned len, Ps at, bool* ok) {
  if (ats_dma_) return ats_dma_->access(trans_, is_write, addr, static_cast<uint8_t*>(data), len, at, ok);
  prepare_access(trans_, is_write, addr, data, len);
  const Ps now = now_ps();
  sc_core::sc_time delay = ps_to_sc(at > now ? at - now : 0);
  mem->b_transport(trans_, delay);
  *ok = trans_.is_response_ok();
  return now_ps() + sc_to_ps(delay);  // the time at return: a stalled translation waits
}

// ---- Controller state (NVMe 2.0 3.5.1, 3.6)

void Nvme::control_thread() {
  for (;;) {
    sc_core::wait(ctrl_kick_);
    for (;;) {
      const NvmeCore::Transition t = core_.transition();
      if (t == NvmeCore::Transition::kNone) break;
      const uint64_t seq = core_.cc_seq();
      if (t == NvmeCore::Transition::kShuttingDown) {
        // Shutdown completes once every command fetched has its completion.
        if (inflight_ > 0) sc_core::wait(drained_ | ctrl_kick_);
        else core_.finish_transition();
        continue;
      }
      const Ps d = us_to_ps(t == NvmeCore::Transition::kEnabling ? cfg_.enable_us : kDisableUs);
      sc_core::wait(ctrl_rank_.until(now_ps() + d), ctrl_kick_);
      // A CC write in the meantime starts the decision again.
      if (core_.cc_seq() != seq) continue;
      core_.finish_transition();
      if (t == NvmeCore::Transition::kEnabling) sq_kick_.notify();
    }
  }
}

// ---- Submission: fetch and execute

void Nvme::submission_thread() {
  for (;;) {
    const int qi = core_.running() ? core_.next_sq(rr_) : -1;
    if (qi < 0) {
      sc_core::wait(sq_kick_);
      continue;
    }
    // One batch from the next SQ with new entries. Fetches do not wait for
    // each other: they are bounded by the read slots like any read.
    const unsigned q = static_cast<unsigned>(qi);
    rr_ = q;
    const NvmeSq* s = core_.sq(q);
    const NvmeCq* cq = core_.cq(s->cqid);
    uint32_t first = 0;
    const uint32_t n = core_.fetch(q, cfg_.sq_fetch_batch, &first);
    sq_buf_.resize(static_cast<size_t>(n) * NVME_SQE_BYTES);
    bool ok = true;
    const Ps fetched = read_host(s->entry_addr(first), sq_buf_.data(), n * NVME_SQE_BYTES, now_ps(), &ok);
    inflight_ += n;
    for (uint32_t i = 0; i < n; ++i) {
      auto cmd = std::make_unique<Command>();
      cmd->stage = Command::Stage::kDecode;
      cmd->fetched = ok;
      std::memcpy(&cmd->c, sq_buf_.data() + static_cast<size_t>(i) * NVME_SQE_BYTES, sizeof cmd->c);
      Pending& p = cmd->p;
      p.sqid = static_cast<uint16_t>(q);
      p.sq_gen = s->gen;
      p.cqid = s->cqid;
      p.cq_gen = cq->gen;
      p.rung = first + i < rung_[q].size() ? rung_[q][first + i] : now_ps();
      p.io = q != 0;
      p.cqe.sqhd = static_cast<uint16_t>((first + i + 1) % s->size);
      p.cqe.sqid = static_cast<uint16_t>(q);
      p.cqe.cid = NVME_CDW0_CID(cmd->c.cdw0);
      schedule(std::move(cmd), fetched);
    }
  }
}

void Nvme::decode(std::unique_ptr<Command> cmd) {
  Command& c = *cmd;
  Pending& p = c.p;
  p.at = now_ps();
  if (p.sqid == 0) {
    // Admin commands act now, in order; Identify's data then goes to the host.
    const NvmeCore::AdminResult r = core_.admin(c.c, &c.data);
    p.cqe.status = r.status;
    p.cqe.dw0 = r.dw0;
    if (r.status != NvmeCore::kSuccess || c.data.empty()) return complete(p);
    c.kind = Command::Kind::kAdminData;
  } else {
    c.d = core_.decode_io(c.c);
    p.cqe.status = c.d.status;
    // Flush: the drive has no volatile write cache (Identify VWC 0), nothing to do.
    if (c.d.status != NvmeCore::kSuccess || c.d.opcode == NVME_CMD_FLUSH) return complete(p);
    c.kind = c.d.opcode == NVME_CMD_READ ? Command::Kind::kRead : Command::Kind::kWrite;
    c.data.resize(c.d.bytes);
  }
  c.stage = Command::Stage::kPrp;
  step(std::move(cmd));
}

void Nvme::schedule(std::unique_ptr<Command> cmd, Ps at) {
  const sc_core::sc_time d = io_kick_rank_.until(at);
  steps_.emplace(std::make_pair(at, step_seq_++), std::move(cmd));
  io_kick_.notify(d);
}

void Nvme::io_thread() {
  for (;;) {
    if (steps_.empty()) {
      sc_core::wait(io_kick_);
      continue;
    }
    const Ps at = steps_.begin()->first.first;
    if (at > now_ps()) {
      sc_core::wait(io_rank_.until(at), io_kick_);
      continue;
    }
    auto node = steps_.extract(steps_.begin());
    step(std::move(node.mapped()));
  }
}

bool Nvme::alive(const Pending& p) const {
  const NvmeCq* cq = core_.cq(p.cqid);
  const NvmeSq* sq = core_.sq(p.sqid);
  return core_.running() && cq && cq->gen == p.cq_gen && sq && sq->gen == p.sq_gen;
}

void Nvme::step(std::unique_ptr<Command> cmd) {
  Command& c = *cmd;
  if (!alive(c.p)) {
    // Its queue was deleted, or the controller reset or failed: abandoned.
    dropped_.add();
    retire();
    return;
  }
  const Ps now = now_ps();
  using Stage = Command::Stage;
  using Kind = Command::Kind;
  switch (c.stage) {
    case Stage::kDecode:
      if (!c.fetched) {
        // The entry's read was aborted: no completion can say so (NVMe 2.0
        // 3.1.4.6, CSTS.CFS); the controller stops.
        core_.fatal_error();
        dropped_.add();
        retire();
        return;
      }
      return decode(std::move(cmd));
    case Stage::kPrp: {
      uint16_t status = NvmeCore::kSuccess;
      c.last = walk_prps(c.c, c.data.size(), now, &c.segs, &status);
      if (status != NvmeCore::kSuccess) return finish(c, status, c.last);
      c.stage = c.kind == Kind::kWrite ? Stage::kFromHost : c.kind == Kind::kRead ? Stage::kMedia : Stage::kToHost;
      return schedule(std::move(cmd), c.last);
    }
    case Stage::kFromHost:
    case Stage::kToHost: {
      const bool to_host = c.stage == Stage::kToHost;
      bool ok = true;
      if (!transfer(c, to_host, &ok)) {
        // More bursts than slots: the rest when a slot frees, after what
        // other commands have queued meanwhile.
        std::vector<Ps>& slots = to_host ? write_slots_ : read_slots_;
        return schedule(std::move(cmd), std::max(now, earliest(slots)));
      }
      if (!ok) return finish(c, core_.fail(NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR), c.last);
      if (c.stage == Stage::kFromHost) {
        // The data is in the drive; the media takes it.
        core_.media_write(c.d.offset, c.data.data(), c.d.bytes);
        c.stage = Stage::kMedia;
        return schedule(std::move(cmd), c.last);
      }
      if (c.kind == Kind::kRead) core_.count(NvmeStat::kBytesRead, c.d.bytes);
      return finish(c, NvmeCore::kSuccess, c.last);
    }
    case Stage::kMedia: {
      const Ps t = media(c.kind == Kind::kWrite, c.d.bytes, now);
      if (c.kind == Kind::kWrite) {
        core_.count(NvmeStat::kBytesWritten, c.d.bytes);
        return finish(c, NvmeCore::kSuccess, t);
      }
      core_.media_read(c.d.offset, c.data.data(), c.d.bytes);
      c.stage = Stage::kToHost;
      return schedule(std::move(cmd), t);
    }
  }
}

void Nvme::finish(Command& cmd, uint16_t status, Ps at) {
  cmd.p.cqe.status = status;
  cmd.p.at = at;
  complete(cmd.p);
}

Ps Nvme::walk_prps(const nvme_sqe& c, uint64_t len, Ps at, std::vector<PrpSegment>* segs, uint16_t* status) {
  // List pages are read one after the other: each may point to the next.
  Ps t = at;
  const PrpListReader read_list = [&](uint64_t addr, uint32_t entries, uint64_t* out) {
    bool ok = true;
    t = read_host(addr, out, entries * 8u, t, &ok);
    return ok;
  };
  switch (prp_segments(c.prp1, c.prp2, len, NvmeCore::kPageBytes, read_list, segs)) {
    case PrpResult::kOk: break;
    case PrpResult::kOffsetInvalid: *status = core_.fail(NVME_SCT_GENERIC, NVME_SC_PRP_OFFSET_INVALID); break;
    case PrpResult::kListAborted: *status = core_.fail(NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR); break;
  }
  return t;
}

bool Nvme::transfer(Command& cmd, bool to_host, bool* ok) {
  const Ps now = now_ps();
  Ps issue = now;
  *ok = true;
  for (unsigned burst = 0; cmd.seg < cmd.segs.size() && burst < cfg_.outstanding; ++burst) {
    // A segment lies in one page, so no burst crosses one.
    const PrpSegment& s = cmd.segs[cmd.seg];
    const uint32_t n = std::min(cfg_.burst_bytes, s.len - cmd.seg_off);
    uint8_t* data = cmd.data.data() + cmd.moved;
    Ps done;
    if (to_host) {
      Ps& slot = earliest(write_slots_);
      issue = std::max({issue, slot, up_free_});
      up_free_ = issue + transfer_time_ps(n, cfg_.pcie_gbps / 8.0);
      done = dma(true, s.addr + cmd.seg_off, data, n, issue, ok);
      if (*ok) slot = done;
    } else {
      done = read_host(s.addr + cmd.seg_off, data, n, now, ok);
    }
    cmd.last = std::max(cmd.last, done);
    if (!*ok) return true;  // the rest of the command is abandoned
    cmd.moved += n;
    if ((cmd.seg_off += n) == s.len) {
      ++cmd.seg;
      cmd.seg_off = 0;
    }
  }
  return cmd.seg == cmd.segs.size();
}

Ps Nvme::read_host(uint64_t addr, void* data, uint32_t len, Ps at, bool* ok) {
  Ps& slot = earliest(read_slots_);
  const Ps issue = std::max(at, slot);
  const Ps done = dma(false, addr, data, len, issue, ok);
  if (!*ok) return done;
  // The completion data comes over the host-to-device link.
  const Ps arrive = std::max(done, down_free_);
  down_free_ = arrive + transfer_time_ps(len, cfg_.pcie_gbps / 8.0);
  slot = down_free_;
  return down_free_;
}

Ps Nvme::media(bool write, uint64_t bytes, Ps at) {
  // A command waits for one of `parallelism` slots, spends the access
  // latency, then moves its bytes at the media bandwidth, which all commands
  // share; the slot is busy until then.
  Ps& slot = earliest(media_slots_);
  const Ps start = std::max(at, slot);
  const Ps latency = us_to_ps(write ? cfg_.write_latency_us : cfg_.read_latency_us);
  const double mbps = write ? cfg_.write_mbps : cfg_.read_mbps;  // MB/s = bytes/us
  const Ps xfer_start = std::max(start + latency, media_free_);
  media_free_ = xfer_start + transfer_time_ps(bytes, mbps / 1000.0);
  slot = media_free_;
  media_busy_ += media_free_ - start;
  if (window_end_ > window_start_) {
    const Ps a = std::max(start, window_start_), b = std::min(media_free_, window_end_);
    if (b > a) media_window_busy_ += b - a;
  }
  return media_free_;
}

// ---- Completions and interrupts

void Nvme::retire() {
  if (--inflight_ == 0) drained_.notify();
}

void Nvme::complete(Pending p) {
  p.seq = seq_++;
  const sc_core::sc_time d = cq_kick_rank_.until(p.at);
  pending_.push(p);
  cq_kick_.notify(d);
}

void Nvme::completion_thread() {
  for (;;) {
    const Ps now = now_ps();
    while (!pending_.empty() && pending_.top().at <= now) {
      due_[pending_.top().cqid].push_back(pending_.top());
      pending_.pop();
    }
    for (auto& [cqid, list] : due_) {
      unsigned posted = 0;
      Ps last = now;
      while (!list.empty()) {
        Pending& p = list.front();
        uint64_t addr = 0;
        if (!alive(p)) {
          // Its queue was deleted, or the controller reset or failed, meanwhile.
          dropped_.add();
        } else if (!core_.post(cqid, &p.cqe, &addr)) {
          break;  // full: wait for the host to consume (a CQ head doorbell)
        } else {
          const Ps issue = std::max(now, up_free_);
          up_free_ = issue + transfer_time_ps(NVME_CQE_BYTES, cfg_.pcie_gbps / 8.0);
          bool ok = true;
          const Ps done = dma(true, addr, &p.cqe, NVME_CQE_BYTES, issue, &ok);
          if (!ok) core_.fatal_error();  // a completion the host will never see
          if (p.io) {
            latency_.record(done - std::min(done, p.rung));
            if (io_done_++ == 0 || p.rung < io_first_) io_first_ = p.rung;
            io_last_ = std::max(io_last_, done);
          }
          last = std::max(last, done);
          ++posted;
        }
        list.pop_front();
        retire();
      }
      // One interrupt per batch posted at the same time.
      const NvmeCq* cq = core_.cq(cqid);
      if (posted && cq && cq->ien) raise(cq->iv, last);
    }
    if (!pending_.empty()) sc_core::wait(cq_rank_.until(pending_.top().at), cq_kick_);
    else sc_core::wait(cq_kick_);
  }
}

void Nvme::raise(unsigned vector, Ps at) {
  irqs_.add();
  const NvmeVector& v = core_.vector(vector);
  if (v.msi()) {
    uint32_t data = v.data;
    bool ok = true;
    dma(true, v.addr, &data, sizeof data, at, &ok);
    if (!ok) msi_errors_.add();
  } else {
    raise_wired(vector, at);
  }
  if (trace_) trace_->instant(basename(), "irq v" + std::to_string(vector), at, {{"vector", vector}});
}

void Nvme::raise_wired(unsigned vector, Ps at) {
  if (core_.wired_masked(vector)) {
    core_.latch_wired(vector);  // raised when INTMC clears the mask
    return;
  }
  if (irq_) irq_->raise_line(cfg_.irq + vector, ps_to_sc(at - std::min(at, now_ps())));
}

void Nvme::finalize() {
  const std::string p = std::string(basename()) + ".";
  static const char* const names[] = {
      "reads",          "writes",         "flushes",          "admin",
      "bytes_read",     "bytes_written",  "data_transfer_errors", "invalid_opcode",
      "invalid_field",  "invalid_namespace", "invalid_queue",  "invalid_vector",
      "lba_out_of_range", "prp_offset_invalid", "doorbell_errors", "fatal"};
  static_assert(sizeof names / sizeof names[0] == static_cast<unsigned>(NvmeStat::kCount), "one name per statistic");
  for (unsigned i = 0; i < static_cast<unsigned>(NvmeStat::kCount); ++i) {
    Counter& c = stats_.counter(p + names[i]);
    c.add(core_.stat(static_cast<NvmeStat>(i)) - c.value());
  }
  if (io_done_ && io_last_ > io_first_) {
    const double us = ps_to_ns(io_last_ - io_first_) / 1000.0;
    stats_.value(p + "iops") = static_cast<double>(io_done_) * 1e6 / us;
    stats_.value(p + "read_mbps") = static_cast<double>(core_.stat(NvmeStat::kBytesRead)) / us;
    stats_.value(p + "write_mbps") = static_cast<double>(core_.stat(NvmeStat::kBytesWritten)) / us;
    // The share of the medium's `parallelism` slots in use over the same time.
    stats_.value(p + "media_utilisation") =
        static_cast<double>(media_busy_) / (static_cast<double>(io_last_ - io_first_) * media_slots_.size());
  }
  if (window_end_ > window_start_)
    stats_.value(p + "media_utilisation_in_window") =
        static_cast<double>(media_window_busy_) / (static_cast<double>(window_end_ - window_start_) * media_slots_.size());
}

void NvmeConfig::validate() const {
  check::at_least_one(queues, "queues");
  check::require(vectors >= 1 && vectors <= NVME_MAX_VECTORS, "vectors",
                 "must be 1 to " + std::to_string(NVME_MAX_VECTORS) + " (the MSI-X table's entries)");
  check::at_least_one(capacity_gib, "capacity_gib");
  check::require(lba_bytes == 512 || lba_bytes == 4096, "lba_bytes", "must be 512 or 4096, not " + std::to_string(lba_bytes));
  check::time(read_latency_us, "read_latency_us");
  check::time(write_latency_us, "write_latency_us");
  check::at_least_one(parallelism, "parallelism");
  check::rate(read_mbps, "read_mbps");
  check::rate(write_mbps, "write_mbps");
  check::rate(pcie_gbps, "pcie_gbps");
  check::time(reg_latency_ns, "reg_latency_ns");
  check::time(enable_us, "enable_us");
  check::require(burst_bytes >= 1 && burst_bytes <= 4096, "burst_bytes", "must be 1 to 4096 (a burst never crosses a 4 KiB page)");
  check::at_least_one(outstanding, "outstanding");
  check::at_least_one(sq_fetch_batch, "sq_fetch_batch");
  atc.validate("atc");
}

}  // namespace smmu_vp

#include "smmu/smmu_impl.h"

#include <algorithm>
#include <cstring>

#include "common/payload.h"
#include "common/stream_id_extension.h"
#include "common/tlm_time.h"

namespace smmu_vp::smmu {

// The SMMU's own memory accesses (tables, queues, MSIs) through its
// downstream socket, timed like any other master's.
class SmmuImpl::DownstreamPort : public MemoryPort {
 public:
  explicit DownstreamPort(tlm_utils::simple_initiator_socket<Smmu>& socket) : socket_(socket) {}

  bool read(uint64_t pa, void* data, unsigned len, Ps at, Ps* done) override {
    return access(false, pa, data, len, at, done);
  }
  bool write(uint64_t pa, const void* data, unsigned len, Ps at, Ps* done) override {
    return access(true, pa, const_cast<void*>(data), len, at, done);
  }

 private:
  bool access(bool is_write, uint64_t pa, void* data, unsigned len, Ps at, Ps* done) {
    prepare_access(t_, is_write, pa, data, len);
    const Ps now = now_ps();
    sc_core::sc_time delay = ps_to_sc(at > now ? at - now : 0);
    socket_->b_transport(t_, delay);
    *done = now + sc_to_ps(delay);
    return t_.is_response_ok();
  }

  tlm_utils::simple_initiator_socket<Smmu>& socket_;
  tlm::tlm_generic_payload t_;
};

// Untimed accesses through the downstream socket's debug transport, for the
// debug checks (stale entries, command queues): they must look at memory
// without disturbing timing.
class SmmuImpl::UntimedPort : public MemoryPort {
 public:
  explicit UntimedPort(tlm_utils::simple_initiator_socket<Smmu>& socket) : socket_(socket) {}

  bool read(uint64_t pa, void* data, unsigned len, Ps at, Ps* done) override {
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_READ_COMMAND);
    t.set_address(pa);
    t.set_data_ptr(static_cast<unsigned char*>(data));
    t.set_data_length(len);
    t.set_streaming_width(len);
    *done = at;
    return socket_->transport_dbg(t) == len;
  }
  bool write(uint64_t pa, const void* data, unsigned len, Ps at, Ps* done) override {
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_WRITE_COMMAND);
    t.set_address(pa);
    t.set_data_ptr(static_cast<unsigned char*>(const_cast<void*>(data)));
    t.set_data_length(len);
    t.set_streaming_width(len);
    *done = at;
    return socket_->transport_dbg(t) == len;
  }

 private:
  tlm_utils::simple_initiator_socket<Smmu>& socket_;
};

// The main command queue's registers, for the consumer.
class SmmuImpl::MainCmdqRegs : public CommandQueueRegs {
 public:
  MainCmdqRegs(SmmuRegisterFile& r, const bool& sfm) : r_(r), sfm_(sfm) {}
  bool enabled() const override { return r_.cmdqen(); }
  bool stopped() const override {
    return sfm_ || (r_.gerror_active() & reg::gerror::kCmdqErr.mask32()) != 0;
  }
  uint64_t base() const override { return r_.cmdq_base_addr(); }
  QueueIndex prod() const override { return r_.cmdq_prod(); }
  QueueIndex cons() const override { return r_.cmdq_cons(); }
  void set_cons(uint32_t index) override { r_.set_cmdq_cons(index); }
  uint32_t raise_error(uint32_t cerror) override {
    // CONS.ERR here; the consumer's raise_gerror hook activates CMDQ_ERR and
    // signals the GERROR interrupt (IHI 0070 7.5.1).
    return r_.set_cmdq_error(cerror) ? reg::gerror::kCmdqErr.mask32() : 0;
  }

 private:
  SmmuRegisterFile& r_;
  const bool& sfm_;  // Service Failure Mode: no more commands (IHI 0070 12.3)
};

// One ECMDQ interface's registers: errors are per queue (CONS.ERR) and
// reported together through GERROR.CMDQP_ERR (IHI 0070 3.5.6).
class SmmuImpl::EcmdqQueueRegs : public CommandQueueRegs {
 public:
  EcmdqQueueRegs(EcmdqRegisters& r, unsigned q, const bool& sfm) : r_(r), q_(q), sfm_(sfm) {}
  bool enabled() const override { return r_.enabled(q_); }
  bool stopped() const override { return sfm_ || r_.error_pending(q_); }
  uint64_t base() const override { return r_.base_addr(q_); }
  QueueIndex prod() const override { return r_.prod(q_); }
  QueueIndex cons() const override { return r_.cons(q_); }
  void set_cons(uint32_t index) override { r_.set_cons(q_, index); }
  uint32_t raise_error(uint32_t cerror) override {
    return r_.raise_error(q_, cerror) ? reg::gerror::kCmdqpErr.mask32() : 0;
  }

 private:
  EcmdqRegisters& r_;
  unsigned q_;
  const bool& sfm_;
};

namespace {
std::string stat(const char* module, const char* leaf) { return std::string(module) + "." + leaf; }
// The command queues' timing, with the DTI round to the TBUs (if any).
CommandQueueTiming cmdq_timing(const SmmuConfig& cfg) {
  CommandQueueTiming t = cfg.cmdq;
  const DistributedConfig& d = cfg.translation.distributed;
  t.tbus = static_cast<unsigned>(d.tbus.size());
  t.dti_message_ns = d.dti.message_ns;
  t.dti_latency_ns = d.dti.latency_ns;
  return t;
}

}  // namespace

SmmuImpl::SmmuImpl(Smmu& owner, const SmmuConfig& cfg, IrqSink* irq, StatsRegistry& stats, TraceSink* trace)
    : owner_(owner),
      cfg_(cfg),
      regfile_(cfg.features),
      mem_(std::make_unique<DownstreamPort>(owner.downstream)),
      translator_(std::make_unique<Translator>(*mem_, cfg.features, cfg.translation, stats, name())),
      events_(*mem_),
      executor_(*translator_, cfg.features, &stats, std::string(name()) + ".cmdq"),
      cmd_lanes_(std::string(name()) + ".cmd_lanes", std::max(1u, cfg.cmdq.lanes)),
      ecmdq_(cfg.features),
      irq_(irq),
      trace_(trace),
      reg_latency_(ps_to_sc(ns_to_ps(cfg.reg_latency_ns))),
      bypass_latency_(ns_to_ps(cfg.bypass_latency_ns)),
      stats_(stats),
      transactions_(stats.counter(stat(name(), "transactions"))),
      bypass_transactions_(stats.counter(stat(name(), "bypass_transactions"))),
      aborted_transactions_(stats.counter(stat(name(), "aborted_transactions"))),
      missing_stream_id_(stats.counter(stat(name(), "missing_stream_id"))),
      events_written_(stats.counter(stat(name(), "events.written"))),
      events_lost_(stats.counter(stat(name(), "events.lost"))),
      irqs_(stats.counter(stat(name(), "wired_irqs"))),
      msis_(stats.counter(stat(name(), "msis"))) {
  CommandQueueConsumer::Hooks hooks;
  hooks.raise_gerror = [this](uint32_t bits, Ps at) { raise_gerror(bits, at); };
  hooks.sync_wired_irq = [this](Ps at) {
    if (!irq_) return;
    irqs_.add();
    const Ps now = now_ps();
    irq_->raise_line(cfg_.sync_irq, ps_to_sc(at > now ? at - now : 0));
  };
  hooks.send_event = [this]() {
    if (send_event_) send_event_();
  };
  hooks.translations_drained = [this](Ps t) { return translator_->drained_by(t); };
  hooks.cons_changed = [this](const TimeRank& rank, Ps at) {
    if (!watches_.empty()) check_watches(rank.until(at));
  };
  hooks.executed = [this](const Command& cmd, Ps at) {
    if (observer_) observer_->on_command(cmd, at);
  };
  hooks.coherent_write = [this](uint64_t pa, unsigned len) { return coherent_write_ ? coherent_write_(pa, len) : Ps{0}; };
  if (cfg.features.ats) {
    ats_stats_ = std::make_unique<AtsStats>(stats, name());
    hooks.atc_invalidate = [this](const Command& cmd, Ps at) { return atc_invalidate(cmd, at); };
    if (cfg.features.pri) hooks.pri_response = [this](const Command& cmd, Ps at) { pri_response(cmd, at); };
  }
  if (cfg.features.stall_model != reg::idr0::kStallModelNoStall)
    hooks.stall_command = [this](const Command& cmd, Ps at) { stall_command(cmd, at); };
  cmdq_regs_ = std::make_unique<MainCmdqRegs>(regfile_, sfm_);
  cmdq_ = std::make_unique<CommandQueueConsumer>("cmdq", *cmdq_regs_, *mem_, executor_, cmd_lanes_, cfg.features,
                                                 cmdq_timing(cfg), hooks, stats, std::string(name()) + ".cmdq", trace);
  // One consumer per ECMDQ, so that a CMD_SYNC waits in its own queue only.
  for (unsigned q = 0; q < ecmdq_.queues(); ++q) {
    const std::string queue = "ecmdq" + std::to_string(q);
    ecmdq_regs_.push_back(std::make_unique<EcmdqQueueRegs>(ecmdq_, q, sfm_));
    ecmdq_consumers_.push_back(std::make_unique<CommandQueueConsumer>(
        queue.c_str(), *ecmdq_regs_.back(), *mem_, executor_, cmd_lanes_, cfg.features, cmdq_timing(cfg), hooks, stats,
        std::string(name()) + "." + queue, trace));
  }
  ecmdq_.set_listener([this](unsigned q, uint32_t old_wr, uint32_t new_wr) {
    ecmdq_consumers_[q]->prod_written(old_wr, new_wr);
  });
  executor_.set_e2h_source([this]() { return regfile_.e2h(); });
  regfile_.set_listener(this);
  if (cfg.stale_check || cfg.cmdq_check) untimed_ = std::make_unique<UntimedPort>(owner.downstream);
  if (cfg.stale_check) translator_->enable_stale_check(*untimed_);
  if (cfg.cmdq_check) {
    cmdq_->enable_check(*untimed_, stats);
    for (auto& q : ecmdq_consumers_) q->enable_check(*untimed_, stats);
  }
}

SmmuImpl::~SmmuImpl() = default;

std::vector<std::string> SmmuImpl::cmdq_check_reports() const {
  std::vector<std::string> out;
  auto add = [&](const CommandQueueConsumer& q) {
    if (const CmdqChecker* c = q.checker(); c && c->violations()) {
      out.insert(out.end(), c->reports().begin(), c->reports().end());
      if (c->violations() > c->reports().size())
        out.push_back(std::to_string(c->violations() - c->reports().size()) + " more like these");
    }
  };
  add(*cmdq_);
  for (const auto& q : ecmdq_consumers_) add(*q);
  return out;
}

void SmmuImpl::reg_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  delay += reg_latency_;
  const unsigned len = trans.get_data_length();
  const uint64_t off = trans.get_address();
  if (trans.get_byte_enable_ptr() || trans.get_streaming_width() < len || (len != 4 && len != 8)) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  bool ok = false;
  // Reads change nothing and take reg_latency_ns whatever else happens:
  // watchable() promises it, for the cores that poll CONS asleep.
  // The ECMDQ interfaces in the command queue control pages, else pages 0/1.
  const bool ecmdq = ecmdq_.contains(off);
  if (trans.is_read()) {
    const uint64_t v = ecmdq ? ecmdq_.read(off, len, &ok) : regfile_.read(off, len, &ok);
    if (ok) std::memcpy(trans.get_data_ptr(), &v, len);
  } else if (trans.is_write()) {
    uint64_t v = 0;
    std::memcpy(&v, trans.get_data_ptr(), len);
    if (ecmdq) ecmdq_.write(off, len, v, &ok);
    else regfile_.write(off, len, v, &ok);
    check_watches(sc_core::SC_ZERO_TIME);  // e.g. a queue disabled, an error acknowledged
  } else {
    ok = true;
  }
  trans.set_response_status(ok ? tlm::TLM_OK_RESPONSE
                               : (off >= regfile_.register_space_size() ? tlm::TLM_ADDRESS_ERROR_RESPONSE
                                                                        : tlm::TLM_BURST_ERROR_RESPONSE));
}

bool SmmuImpl::watchable(uint64_t offset, unsigned size) const {
  return size == 4 && (offset == reg::kCmdqCons || ecmdq_.is_cons(offset));
}

void SmmuImpl::check_watches(const sc_core::sc_time& delay) {
  if (watches_.empty()) return;
  watches_.check(
      [this](uint64_t off, unsigned size) {
        bool ok = false;
        return ecmdq_.contains(off) ? ecmdq_.read(off, size, &ok) : regfile_.read(off, size, &ok);
      },
      delay);
}

Ps SmmuImpl::forward(tlm::tlm_generic_payload& trans, uint64_t pa, unsigned offset, unsigned len, Ps at, bool* ok) {
  prepare_access(fwd_, trans.is_write(), pa, trans.get_data_ptr() + offset, len);
  const Ps now = now_ps();
  sc_core::sc_time delay = ps_to_sc(at > now ? at - now : 0);
  owner_.downstream->b_transport(fwd_, delay);
  *ok = fwd_.is_response_ok();
  if (!*ok) trans.set_response_status(fwd_.get_response_status());
  return now + sc_to_ps(delay);
}

const StreamTableConfig& SmmuImpl::stream_table() {
  StreamTableMemo& m = stream_table_;
  const uint64_t base = regfile_.strtab_base_raw();
  const uint32_t cfg = regfile_.strtab_base_cfg_raw();
  if (!m.valid || m.base_raw != base || m.cfg_raw != cfg) {
    m.st.base = regfile_.strtab_base();
    m.st.two_level = regfile_.strtab_fmt() == StrtabFormat::kTwoLevel;
    m.st.split = regfile_.strtab_split();
    m.st.log2size = regfile_.strtab_log2size();
    m.valid = true;
    m.base_raw = base;
    m.cfg_raw = cfg;
  }
  return m.st;
}

void SmmuImpl::translate_transport(int port, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  transactions_.add();
  Ps now = now_ps();  // moves only when a stalled transaction waited
  // Keeps the slot timelines short (and translations cheap) on long runs.
  if (transactions_.value() % 64 == 0) translator_->retire(now);
  Ps t = now + sc_to_ps(delay);
  const unsigned len = trans.get_data_length();
  if (trans.get_byte_enable_ptr()) {
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  auto abort = [&](Ps when) {
    aborted_transactions_.add();
    trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    delay = ps_to_sc(when - now);
  };

  // Service Failure Mode terminates every client transaction (IHI 0070 12.3).
  if (sfm_) return abort(t);

  if (AtsExtension* ats = trans.get_extension<AtsExtension>()) return ats_transport(port, trans, *ats, t, delay);

  // SMMUEN = 0: GBPA decides (IHI 0070 6.3.14).
  if (!regfile_.smmuen()) {
    if (regfile_.gbpa_abort()) return abort(t);
    bypass_transactions_.add();
    bool ok;
    t = forward(trans, trans.get_address(), 0, len, t + bypass_latency_, &ok);
    if (ok) trans.set_response_status(tlm::TLM_OK_RESPONSE);
    delay = ps_to_sc(t - now);
    return;
  }

  const StreamIdExtension* ext = trans.get_extension<StreamIdExtension>();
  if (!ext) {
    // A master that does not say who it is cannot be given a configuration.
    missing_stream_id_.add();
    return abort(t);
  }
  if (observer_) observer_->on_access(ext->stream_id, trans.get_address(), len, trans.is_write(), t);
  const StreamTableConfig st = stream_table();

  // An access that crosses out of a translation goes on in the next one.
  for (unsigned off = 0; off < len;) {
    TranslationRequest req;
    req.port = static_cast<unsigned>(port);
    req.sid = ext->stream_id;
    req.ssv = ext->substream_valid;
    req.ssid = ext->substream_id;
    req.addr = trans.get_address() + off;
    req.access.write = trans.is_write();
    req.access.privileged = ext->privileged;
    req.access.instruction = ext->instruction;
    req.at = t;
    const TranslationResult r = translator_->translate(st, req);
    t = r.done;
    if (!r.ok() && r.kind == TranslationResult::Kind::kFault && r.stall) {
      // 3.12.2: stalled until software resumes or terminates it; retried
      // as though it had just arrived.
      const bool retry = stall(r, &t);
      now = now_ps();  // TLM-2.0: the delay returned counts from the time of the return
      if (retry) continue;
      return abort(t);
    }
    if (!r.ok()) {
      if (r.kind == TranslationResult::Kind::kFault) {
        if (trace_)
          trace_->instant(name(), std::string("fault ") + event_name(r.event.id), t,
                          {{"sid", r.event.sid}, {"addr", r.event.input_addr}});
        if (r.record) record_event(r.event, t);
        else unrecorded().add();
        if (observer_) observer_->on_fault(r.event.sid, r.event.input_addr, trans.is_write(), t);
      }
      return abort(t);
    }
    const unsigned chunk = static_cast<unsigned>(std::min<uint64_t>(len - off, r.span));
    bool ok;
    t = forward(trans, r.pa, off, chunk, t, &ok);
    if (!ok) {
      delay = ps_to_sc(t - now);
      return;
    }
    off += chunk;
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  delay = ps_to_sc(t - now);
}

Counter& SmmuImpl::unrecorded() {
  if (!unrecorded_) unrecorded_ = &stats_.counter(stat(name(), "events.unrecorded"));
  return *unrecorded_;
}

// IHI 0070 7.4: records go to the event queue when it is enabled; a full
// queue loses them and flags the overflow; a write abort is a global error.
bool SmmuImpl::record_event(const EventRecord& rec, Ps at) {
  if (sfm_) return false;  // no event recording in Service Failure Mode (IHI 0070 12.3)
  // IHI 0070 7.2.1, 7.5: while GERROR.EVENTQ_ABT_ERR is active (not yet
  // acknowledged in GERRORN) the queue is not writable: the record is lost.
  if (regfile_.gerror_active() & reg::gerror::kEventqAbtErr.mask32()) {
    events_lost_.add();
    return false;
  }
  EventQueueWriter::Queue q;
  q.enabled = regfile_.evtqen();
  q.base = regfile_.eventq_base_addr();
  q.prod = regfile_.eventq_prod();
  q.cons = regfile_.eventq_cons();
  const EventQueueWriter::Result r = events_.post(q, rec, at);
  switch (r.outcome) {
    case EventQueueWriter::Outcome::kWritten:
      regfile_.set_eventq_prod(r.prod.value());
      events_written_.add();
      if (regfile_.eventq_irqen())
        signal_irq(regfile_.eventq_irq_cfg(), cfg_.eventq_irq, reg::gerror::kMsiEventqAbtErr.mask32(), r.done);
      return true;
    case EventQueueWriter::Outcome::kLostFull:
      regfile_.signal_eventq_overflow();
      events_lost_.add();
      break;
    case EventQueueWriter::Outcome::kLostDisabled:
      events_lost_.add();
      break;
    case EventQueueWriter::Outcome::kAbort:
      events_lost_.add();
      raise_gerror(reg::gerror::kEventqAbtErr.mask32(), r.done);
      break;
  }
  return false;
}

void SmmuImpl::on_cmdq_prod(uint32_t cmdq_prod) {
  cmdq_->prod_written(last_cmdq_prod_, cmdq_prod);
  last_cmdq_prod_ = cmdq_prod;
}

void SmmuImpl::on_gerrorn(uint32_t, uint32_t) {
  cmdq_->wake();
  eventq_writable_.notify(sc_core::SC_ZERO_TIME);  // EVENTQ_ABT_ERR may be acknowledged
}

void SmmuImpl::on_cr0(uint32_t old_cr0, uint32_t new_cr0) {
  cmdq_->wake();
  eventq_writable_.notify(sc_core::SC_ZERO_TIME);
  // 3.12.2: clearing SMMUEN terminates every stalled transaction.
  if (reg::cr0::kSmmuEn.test(old_cr0) && !reg::cr0::kSmmuEn.test(new_cr0)) resolve_stalls(nullptr, false, now_ps());
}

void SmmuImpl::on_eventq_cons(uint32_t) { eventq_writable_.notify(sc_core::SC_ZERO_TIME); }

// IHI 0070 7.5: every source activates its GERROR bit (toggle, unless
// already active); 7.5.1: activating an error triggers the GERROR interrupt
// when IRQ_CTRL.GERROR_IRQEN is 1 (an MSI as GERROR_IRQ_CFG0/1/2 say, else the
// wired line), except MSI_GERROR_ABT_ERR, which must not send another MSI.
void SmmuImpl::raise_gerror(uint32_t bits, Ps at) {
  const uint32_t newly = regfile_.raise_gerror(bits);
  if ((newly & ~reg::gerror::kMsiGerrorAbtErr.mask32()) != 0 && regfile_.gerror_irqen())
    signal_irq(regfile_.gerror_irq_cfg(), cfg_.gerror_irq, reg::gerror::kMsiGerrorAbtErr.mask32(), at);
}

void SmmuImpl::enter_service_failure_mode() {
  if (sfm_) return;
  sfm_ = true;
  if (trace_) trace_->instant(name(), "Service Failure Mode", now_ps(), {});
  raise_gerror(reg::gerror::kSfmErr.mask32(), now_ps());
}

void SmmuImpl::signal_irq(const IrqConfig& msi, unsigned wired_line, uint32_t msi_abort_bit, Ps at) {
  if (cfg_.features.msi && msi.addr != 0) {
    Ps done;
    const uint32_t data = msi.data;
    msis_.add();
    // A failed MSI is itself a global error (MSI_*_ABT_ERR, IHI 0070 7.5),
    // with its own GERROR interrupt unless it was the GERROR MSI that failed.
    if (!mem_->write(msi.addr, &data, 4, at, &done)) raise_gerror(msi_abort_bit, done);
    return;
  }
  if (!irq_) return;
  irqs_.add();
  const Ps now = now_ps();
  irq_->raise_line(wired_line, ps_to_sc(at > now ? at - now : 0));
}

void SmmuImpl::finalize(Ps end) {
  translator_->finish(end);
  if (end)
    stats_.value(stat(name(), "cmdq.lane_utilisation")) =
        static_cast<double>(cmd_lanes_.busy_time()) / (static_cast<double>(end) * cmd_lanes_.slots());
  if (cmd_lanes_.has_window())
    stats_.value(stat(name(), "cmdq.lane_utilisation_in_window")) = cmd_lanes_.window_utilisation();
}

void SmmuImpl::finish_trace(Ps end) {
  cmdq_->finish_trace(end);
  for (auto& c : ecmdq_consumers_) c->finish_trace(end);
}

Counter& SmmuImpl::counter_on_first_use(Counter*& c, const char* group, const char* leaf) {
  if (!c) c = &stats_.counter(std::string(name()) + "." + group + "." + leaf);
  return *c;
}

}  // namespace smmu_vp::smmu

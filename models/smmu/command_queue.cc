#include "smmu/command_queue.h"

#include <algorithm>

#include "common/tlm_time.h"

namespace smmu_vp::smmu {

CommandQueueConsumer::CommandQueueConsumer(sc_core::sc_module_name name, CommandQueueRegs& regs, MemoryPort& mem,
                                           CommandExecutor& executor, Resource& lanes, const SmmuFeatures& features,
                                           const CommandQueueTiming& timing, Hooks hooks, StatsRegistry& stats,
                                           const std::string& p, TraceSink* trace)
    : sc_module(name),
      regs_(regs),
      mem_(mem),
      executor_(executor),
      features_(features),
      timing_(timing),
      hooks_(std::move(hooks)),
      trace_(trace),
      track_(p),
      lanes_(lanes),
      fetches_(stats.counter(p + ".fetches")),
      commands_(stats.counter(p + ".commands")),
      syncs_(stats.counter(p + ".syncs")),
      errors_ill_(stats.counter(p + ".errors.CERROR_ILL")),
      errors_abt_(stats.counter(p + ".errors.CERROR_ABT")),
      stats_(stats),
      lane_waits_(stats.counter(p + ".lane_waits")),
      lane_wait_(stats.histogram(p + ".lane_wait_ns", "ns", 1000.0)),
      occupancy_(stats.histogram(p + ".occupancy", "entries", 1.0)),
      latency_(stats.histogram(p + ".command_latency_ns", "ns", 1000.0)),
      sync_latency_(stats.histogram(p + ".sync_latency_ns", "ns", 1000.0)) {
  SC_THREAD(run);
}

void CommandQueueConsumer::enable_check(MemoryPort& untimed, StatsRegistry& stats) {
  checker_ = std::make_unique<CmdqChecker>(track_, untimed, stats);
}

void CommandQueueConsumer::prod_written(uint32_t old_prod, uint32_t new_prod) {
  const unsigned log2 = regs_.prod().log2size();
  if (checker_) {
    const sc_core::sc_process_handle writer = sc_core::sc_get_current_process_handle();
    checker_->prod_written(QueueIndex(log2, old_prod), QueueIndex(log2, new_prod), regs_.cons(),
                           writer.valid() ? writer.name() : "software");
  }
  // Remember when each newly visible slot was published, for latencies.
  if (issued_at_.size() != (1u << log2)) issued_at_.assign(1u << log2, 0);
  QueueIndex i(log2, old_prod);
  const QueueIndex end(log2, new_prod);
  const Ps now = now_ps();
  for (uint32_t n = 0; i != end && n < i.entries(); ++n, i = i.advanced()) issued_at_[i.index()] = now;
  kick_.notify(sc_core::SC_ZERO_TIME);
}

void CommandQueueConsumer::run() {
  for (;;) {
    sync_ahead();
    sc_core::wait(kick_);
    consume();
  }
}

void CommandQueueConsumer::wait_until(Ps t) {
  t = std::max(t, now());
  if (rank_.alone_until(t)) {
    ahead_ = t;
    return;
  }
  sc_core::wait(rank_.until(t));
}

void CommandQueueConsumer::sync_ahead() {
  if (ahead_ > now_ps()) sc_core::wait(rank_.until(ahead_));
}

Ps CommandQueueConsumer::cost_of(const ExecResult& r) const {
  // A scan costs per entry of the main TLB; micro-TLB copies go with it,
  // and each TBU scans its own in parallel, within the DTI round.
  const double scanned = static_cast<double>(r.tlb_entries - r.micro_tlb_entries - r.tbu_tlb_entries);
  const double tbus = timing_.tbu_round_ns();  // 0 without TBUs
  switch (r.cls) {
    case CommandClass::kCfgi: return ns_to_ps(timing_.cfgi_ns + tbus);
    case CommandClass::kTlbi: {
      const double base = r.whole_context && timing_.tlbi_context_ns > 0 ? timing_.tlbi_context_ns : timing_.tlbi_ns;
      return ns_to_ps(base + timing_.tlbi_per_entry_ns * scanned + tbus);
    }
    case CommandClass::kTlbiRange:
      return ns_to_ps(timing_.tlbi_range_ns + timing_.tlbi_per_entry_ns * scanned + tbus);
    case CommandClass::kPrefetch: return ns_to_ps(timing_.prefetch_ns);
    case CommandClass::kSync: return ns_to_ps(timing_.sync_ns);
    default: return ns_to_ps(timing_.other_ns);
  }
}

void CommandQueueConsumer::stop_with_error(uint32_t cerror, const char* why) {
  if (cerror == reg::cerror::kAtcInvSync) {
    if (!errors_atc_) errors_atc_ = &stats_.counter(track_ + ".errors.CERROR_ATC_INV_SYNC");
    errors_atc_->add();
  } else {
    (cerror == reg::cerror::kIll ? errors_ill_ : errors_abt_).add();
  }
  sync_ahead();
  if (trace_) trace_->instant(track_, why, now_ps(), {{"cons", regs_.cons().value()}});
  // IHI 0070 7.1: CONS stays on the failing command; the error becomes
  // visible in GERROR and consumption stops until software acknowledges it.
  if (const uint32_t gerror_bit = regs_.raise_error(cerror)) {
    if (hooks_.cons_changed) hooks_.cons_changed(rank_, now());  // CONS.ERR
    hooks_.raise_gerror(gerror_bit, now_ps());
  }
}

void CommandQueueConsumer::publish_cons(uint32_t index) {
  regs_.set_cons(index);
  if (hooks_.cons_changed) hooks_.cons_changed(rank_, now());
}

// IHI 0070 4.7.3: the SYNC completes after every earlier command, and every
// translation that could use state they invalidated; then CONS passes it and
// its completion is signalled as CS says.
bool CommandQueueConsumer::complete_sync(const Command& sync, Ps issued) {
  const Ps now = this->now();
  // The slice shows the SYNC executing (its wait for what it orders); its
  // time in the queue before that is an arg, since SYNCs published before
  // the previous one completed would otherwise overlap it on the track.
  const TraceSink::SliceId slice =
      trace_ ? trace_->begin(track_ + ".sync", "CMD_SYNC", now, {{"queued_ps", now - issued}}) : 0;
  Ps done = std::max(now, last_completion_);
  if (hooks_.translations_drained) done = std::max(done, hooks_.translations_drained(now));
  if (atc_timed_out_) {
    // IHI 0070 3.9.1.4, 7.1: the SMMU gives up on the invalidation and the
    // SYNC fails with CERROR_ATC_INV_SYNC; CONS stays on it, and after the
    // error is acknowledged it is fetched again and no longer waits for the
    // invalidations it failed on (which is what the model chooses: the
    // specification leaves the retried SYNC's outcome open).
    wait_until(std::max(done, atc_done_));
    atc_timed_out_ = false;
    atc_done_ = 0;
    stop_with_error(reg::cerror::kAtcInvSync, "CERROR_ATC_INV_SYNC");
    if (trace_) trace_->end(slice, now_ps());
    return false;
  }
  done = std::max(done, atc_done_);
  done += ns_to_ps(timing_.sync_ns);
  if (timing_.tbus && invalidated_since_sync_) {
    done += ns_to_ps(timing_.tbu_round_ns());  // a DTI sync to every TBU
    executor_.sync_tbus();
    invalidated_since_sync_ = false;
  }
  // A real wait: what follows (the MSI write, an interrupt) wakes others.
  sc_core::wait(rank_.until(done));
  publish_cons(regs_.cons().advanced().value());
  syncs_.add();
  sync_latency_.record(done - issued);
  latency_.record(done - issued);
  switch (sync.cs) {
    case SyncCs::kIrq:
      if (features_.msi) {
        if (sync.msi_addr == 0) break;  // IHI 0070 4.7.3: no MSI without an address
        Ps wrote;
        const uint32_t data = sync.msi_data;
        // A failed MSI write is GERROR.MSI_CMDQ_ABT_ERR (IHI 0070 7.5).
        if (!mem_.write(sync.msi_addr, &data, 4, done, &wrote)) {
          hooks_.raise_gerror(reg::gerror::kMsiCmdqAbtErr.mask32(), done);
        } else if (timing_.msi_coherent && hooks_.coherent_write) {
          // The pollers' copies are given up before the next command.
          const Ps snoop = hooks_.coherent_write(sync.msi_addr, 4);
          if (snoop) wait_until(done + snoop);
        }
      } else if (hooks_.sync_wired_irq) {
        hooks_.sync_wired_irq(done);
      }
      break;
    case SyncCs::kSev:
      if (hooks_.send_event) hooks_.send_event();
      break;
    default: break;
  }
  if (trace_) trace_->end(slice, done);
  return true;
}

void CommandQueueConsumer::close_lane_slices(Ps upto) {
  auto done = [&](const LaneSlice& l) {
    if (l.end > upto) return false;
    trace_->end(l.id, l.end);
    return true;
  };
  lane_slices_.erase(std::remove_if(lane_slices_.begin(), lane_slices_.end(), done), lane_slices_.end());
}

void CommandQueueConsumer::finish_trace(Ps end) {
  if (trace_) close_lane_slices(end);
}

void CommandQueueConsumer::consume() {
  for (;;) {
    if (!regs_.enabled() || regs_.stopped()) return;
    const QueueIndex prod = regs_.prod(), cons = regs_.cons();
    if (queue_empty(prod, cons)) return;
    if (issued_at_.size() != cons.entries()) issued_at_.assign(cons.entries(), now());
    lanes_.retire(now());
    close_lane_slices(now());

    // One read of as many commands as are there, up to the batch, without
    // wrapping within a read.
    const uint32_t used = queue_used(prod, cons);
    occupancy_.record(used);
    const uint32_t n = std::min({std::max(1u, timing_.fetch_batch), used, cons.entries() - cons.index()});
    std::vector<uint64_t>& words = fetch_buffer_;  // reused: no allocation per fetch
    words.resize(2 * n);
    Ps fetched;
    fetches_.add();
    const uint64_t addr = regs_.base() + static_cast<uint64_t>(cons.index()) * 16;
    const bool ok = mem_.read(addr, words.data(), n * 16, now(), &fetched);
    wait_until(fetched);
    if (!ok) return stop_with_error(reg::cerror::kAbt, "CERROR_ABT");

    for (uint32_t i = 0; i < n; ++i) {
      const QueueIndex at = regs_.cons();
      const Ps issued = issued_at_[at.index()];
      wait_until(now() + ns_to_ps(timing_.decode_ns));
      if (checker_) checker_->check(at.index(), at.entries(), &words[2 * i]);
      const CommandDecode d = decode_command({words[2 * i], words[2 * i + 1]}, features_);
      if (!d.ok()) return stop_with_error(reg::cerror::kIll, "CERROR_ILL");
      if (checker_) checker_->consumed(regs_.base() + static_cast<uint64_t>(at.index()) * 16);
      commands_.add();
      if (hooks_.executed) hooks_.executed(d.command, now());
      if (d.command.opcode == Opcode::kCmdSync) {
        if (!complete_sync(d.command, issued)) return;
        continue;
      }
      // The effect on the caches is immediate; the lane says when the
      // command has completed, which is what a later SYNC waits for.
      const ExecResult r = executor_.execute(d.command);
      if (d.command.opcode == Opcode::kPriResp && hooks_.pri_response) hooks_.pri_response(d.command, now());
      if ((d.command.opcode == Opcode::kResume || d.command.opcode == Opcode::kStallTerm) && hooks_.stall_command)
        hooks_.stall_command(d.command, now());
      if (r.cls == CommandClass::kAtc && hooks_.atc_invalidate) {
        // Sent now; a later CMD_SYNC waits for the endpoint's completion.
        const Hooks::AtcOutcome o = hooks_.atc_invalidate(d.command, now());
        atc_done_ = std::max(atc_done_, o.done);
        atc_timed_out_ = atc_timed_out_ || o.timed_out;
      }
      if (r.cls == CommandClass::kCfgi || r.cls == CommandClass::kTlbi || r.cls == CommandClass::kTlbiRange)
        invalidated_since_sync_ = true;
      const Resource::Grant g = lanes_.reserve(now(), cost_of(r));
      last_completion_ = std::max(last_completion_, g.end);
      latency_.record(g.end - issued);
      // Dispatching waits for a free lane; queues sharing the lanes take turns.
      if (g.waited) {
        lane_waits_.add();
        lane_wait_.record(g.waited);
      }
      wait_until(g.start);
      publish_cons(at.advanced().value());
      if (trace_) {
        // Open until the lane is done with it: a run may end before.
        if (lane_tracks_.size() <= g.slot) lane_tracks_.resize(g.slot + 1);
        std::string& track = lane_tracks_[g.slot];
        if (track.empty()) track = track_ + ".lane" + std::to_string(g.slot);
        lane_slices_.push_back({trace_->begin(track, opcode_name(d.command.opcode), g.start), g.end});
      }
    }
  }
}

}  // namespace smmu_vp::smmu

// The SMMU's stall model (IHI 0070 3.12.2, 4.7.1, 4.7.2): a transaction whose
// translation-related fault a stage is configured to stall (CD.S, STE.S2S)
// waits in the SMMU, its fault recorded with Stall = 1 and a STAG, until
// CMD_RESUME retries or terminates it, CMD_STALL_TERM terminates every one
// of its stream, or SMMUEN = 0 terminates them all. Part of SmmuImpl.
#include <algorithm>

#include "common/tlm_time.h"
#include "smmu/smmu_impl.h"

namespace smmu_vp::smmu {

bool SmmuImpl::stall(const TranslationResult& r, Ps* t) {
  // Only a client thread can be held; a client that cannot wait, or one
  // beyond STALL_MAX stalled transactions, is terminated as the terminate
  // model would (its fault recorded without Stall).
  const sc_core::sc_process_handle caller = sc_core::sc_get_current_process_handle();
  if (!caller.valid() || caller.proc_kind() != sc_core::SC_THREAD_PROC_ ||
      stalls_.size() >= cfg_.features.stall_max) {
    counter_on_first_use(stall_not_possible_, "stalls", "terminated_not_possible").add();
    record_event(r.event, *t);
    return false;
  }
  Stalled s;
  s.sid = r.event.sid;
  auto in_use = [&](uint16_t stag) {
    return std::any_of(stalls_.begin(), stalls_.end(), [&](const Stalled* o) { return o->stag == stag; });
  };
  while (in_use(next_stag_)) ++next_stag_;  // a STAG is not reused while its stall lasts
  s.stag = next_stag_++;
  stalls_.push_back(&s);  // it counts against STALL_MAX from now on
  auto leave = [&] { stalls_.erase(std::find(stalls_.begin(), stalls_.end(), &s)); };
  if (*t > now_ps()) sc_core::wait(ps_to_sc(*t - now_ps()));  // the fault happens at *t
  if (s.resolved) {  // SMMUEN went to 0 meanwhile
    leave();
    return false;
  }
  EventRecord rec = r.event;
  rec.stall = true;
  rec.stag = s.stag;
  if (!record_event(rec, now_ps())) {
    // The record could not be written: retry the transaction as though it
    // had just arrived once the queue may be writable again (3.12.2).
    leave();
    sc_core::wait(eventq_writable_);
    *t = now_ps();
    return true;
  }
  counter_on_first_use(stalled_, "stalls", "stalled").add();
  const Ps start = now_ps();
  while (!s.resolved) sc_core::wait(s.event);
  leave();
  *t = std::max(now_ps(), s.at);
  if (!stall_ns_) stall_ns_ = &stats_.histogram(std::string(name()) + ".stalls.stall_ns", "ns", 1000.0);
  stall_ns_->record(*t - start);
  if (!s.retry) counter_on_first_use(stall_terminated_, "stalls", "terminated").add();
  return s.retry;
}

void SmmuImpl::resolve(Stalled& s, bool retry, Ps at) {
  if (s.resolved) return;
  s.resolved = true;
  s.retry = retry;
  s.at = at;
  const Ps now = now_ps();
  s.event.notify(ps_to_sc(at > now ? at - now : 0));
}

void SmmuImpl::resolve_stalls(const uint32_t* sid, bool retry, Ps at) {
  for (Stalled* s : stalls_)
    if (!sid || s->sid == *sid) resolve(*s, retry, at);
}

// 4.7.1 CMD_RESUME: only the transaction of this StreamID and STAG; none
// matching, and the command does nothing. 4.7.2 CMD_STALL_TERM: every one of
// the stream. Both are IGNORED with SMMUEN = 0 (there are no stalls then).
void SmmuImpl::stall_command(const Command& cmd, Ps at) {
  if (!regfile_.smmuen()) return;
  if (cmd.opcode == Opcode::kStallTerm) {
    resolve_stalls(&cmd.sid, false, at);
    return;
  }
  for (Stalled* s : stalls_)
    if (s->sid == cmd.sid && s->stag == cmd.stag && !s->resolved) {
      resolve(*s, cmd.resume_retry, at);
      return;
    }
  counter_on_first_use(stall_unmatched_, "stalls", "resume_unmatched").add();
}

}  // namespace smmu_vp::smmu

// The SMMU's side of PCIe ATS (IHI 0070 3.9.1): Translation Requests,
// translated transactions and ATC invalidations. Part of SmmuImpl.
#include <algorithm>

#include "common/stream_id_extension.h"
#include "common/tlm_time.h"
#include "smmu/ats_completion.h"
#include "smmu/pri_queue.h"
#include "smmu/smmu_impl.h"

namespace smmu_vp::smmu {

SmmuImpl::AtsStats::AtsStats(StatsRegistry& s, const std::string& smmu)
    : translation_requests(s.counter(smmu + ".ats.translation_requests")),
      success(s.counter(smmu + ".ats.success")),
      no_access(s.counter(smmu + ".ats.no_access")),
      unsupported(s.counter(smmu + ".ats.unsupported_request")),
      completer_abort(s.counter(smmu + ".ats.completer_abort")),
      translated(s.counter(smmu + ".ats.translated")),
      translated_aborted(s.counter(smmu + ".ats.translated_aborted")),
      atc_invalidations(s.counter(smmu + ".ats.atc_invalidations")),
      atc_inv_timeouts(s.counter(smmu + ".ats.atc_inv_timeouts")),
      request_latency(s.histogram(smmu + ".ats.translation_request_ns", "ns", 1000.0)),
      atc_inv_latency(s.histogram(smmu + ".ats.atc_inv_latency_ns", "ns", 1000.0)) {}

void SmmuImpl::attach_ats_device(uint32_t sid, AtsDevice* device) {
  if (device) ats_devices_[sid] = device;
  else ats_devices_.erase(sid);
}

void SmmuImpl::ats_transport(int port, tlm::tlm_generic_payload& trans, AtsExtension& ats, Ps t,
                             sc_core::sc_time& delay) {
  const Ps now = now_ps();
  if (ats.kind == AtsExtension::Kind::kTranslationRequest) {
    delay = ps_to_sc(translation_request(port, trans, ats, t) - now);
    return;
  }
  if (ats.kind == AtsExtension::Kind::kPageRequest) {
    delay = ps_to_sc(page_request(trans, ats, t) - now);
    return;
  }
  auto abort = [&](Ps when) {
    if (ats_stats_) ats_stats_->translated_aborted.add();
    aborted_transactions_.add();
    trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    delay = ps_to_sc(when - now);
  };
  const StreamIdExtension* sid = trans.get_extension<StreamIdExtension>();
  // An SMMU without ATS, or a master that does not say who it is: the
  // translated transaction cannot be allowed.
  if (!ats_stats_ || !sid) return abort(t);
  TranslationRequest req;
  req.port = static_cast<unsigned>(port);
  req.sid = sid->stream_id;
  req.addr = trans.get_address();
  req.access.write = trans.is_write();  // PnU = InD = SSV = 0 (3.9.1.3)
  req.at = t;
  // IHI 0070 3.9.1.3: with SMMUEN = 0 a translated transaction is
  // terminated with F_TRANSL_FORBIDDEN, whatever GBPA says.
  if (!regfile_.smmuen()) {
    EventRecord e;
    e.id = EventId::kTranslForbidden;
    e.sid = req.sid;
    e.rnw = !req.access.write;
    e.input_addr = req.addr;
    record_event(e, t);
    return abort(t);
  }
  if (regfile_.atschk()) {
    const TranslationResult r = translator_->check_translated(stream_table(), req);
    t = r.done;
    if (r.kind == TranslationResult::Kind::kFault && r.record) record_event(r.event, t);
    if (!r.ok()) return abort(t);
  }
  // 3.9.1.1: an address beyond the output address size is terminated (the
  // model's IMPLEMENTATION DEFINED choice), without an event.
  const unsigned len = trans.get_data_length();
  const unsigned oas = cfg_.features.oas_bits;
  if (len == 0 || ((req.addr + len - 1) >> oas) != 0) return abort(t);
  ats_stats_->translated.add();
  bool ok;
  t = forward(trans, req.addr, 0, len, t, &ok);
  if (ok) trans.set_response_status(tlm::TLM_OK_RESPONSE);
  delay = ps_to_sc(t - now);
}

// IHI 0070 3.9.1.2: the request is answered in the extension; the TLM
// transaction itself succeeds and moves no data.
Ps SmmuImpl::translation_request(int port, tlm::tlm_generic_payload& trans, AtsExtension& ats, Ps t) {
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  const StreamIdExtension* sid = trans.get_extension<StreamIdExtension>();
  TranslationRequest req;
  req.port = static_cast<unsigned>(port);
  req.addr = trans.get_address();
  req.at = t;
  if (sid) {
    req.sid = sid->stream_id;
    req.ssv = sid->substream_valid;
    req.ssid = sid->substream_id;
    // 13.7: without a PASID the request is unprivileged data.
    req.access.privileged = sid->substream_valid && sid->privileged;
  }
  TranslationResult r;
  r.kind = TranslationResult::Kind::kAbort;  // UR, no event
  r.done = t;
  if (ats_stats_ && sid) {
    ats_stats_->translation_requests.add();
    if (!regfile_.smmuen()) {
      // 3.9.1.2, 6.3.9.6: with SMMUEN = 0, UR and F_BAD_ATS_TREQ.
      r.kind = TranslationResult::Kind::kFault;
      r.event.id = EventId::kBadAtsTreq;
      r.event.sid = req.sid;
      r.event.ssv = req.ssv;
      r.event.ssid = req.ssid;
      r.event.input_addr = req.addr;
    } else {
      r = translator_->translate_ats(stream_table(), req);
    }
  }
  const bool record = ats_completion(req, r, stu_log2(cfg_.features), cfg_.features.oas_bits, &ats);
  if (record) record_event(r.event, r.done);
  if (ats_stats_) {
    switch (ats.status) {
      case AtsExtension::Status::kSuccess:
        (ats.read || ats.write ? ats_stats_->success : ats_stats_->no_access).add();
        break;
      case AtsExtension::Status::kUnsupportedRequest: ats_stats_->unsupported.add(); break;
      case AtsExtension::Status::kCompleterAbort: ats_stats_->completer_abort.add(); break;
    }
    ats_stats_->request_latency.record(r.done - t);
  }
  return r.done;
}

// IHI 0070 4.5.1, 3.9.1.4: the Invalidation Request goes to the endpoint
// behind the StreamID; a later CMD_SYNC waits for its completion. IGNORED
// with SMMUEN = 0, and a StreamID without an ATS endpoint has nothing to
// invalidate.
CommandQueueConsumer::Hooks::AtcOutcome SmmuImpl::atc_invalidate(const Command& cmd, Ps at) {
  CommandQueueConsumer::Hooks::AtcOutcome o;
  o.done = at;
  const auto it = ats_devices_.find(cmd.sid);
  if (!regfile_.smmuen() || it == ats_devices_.end()) return o;
  const AtsDevice::Invalidation inv = atc_invalidation(cmd, cfg_.features);
  const AtsTiming& timing = cfg_.ats;
  const Ps sent = send_ats_message(at);
  const Ps link = ns_to_ps(timing.pcie_latency_ns);
  const Ps give_up = at + ns_to_ps(timing.atc_inv_timeout_us * 1000.0);
  ats_stats_->atc_invalidations.add();
  const std::optional<Ps> answered = it->second->atc_invalidate(inv, sent + link);
  if (!answered || *answered + link > give_up) {
    ats_stats_->atc_inv_timeouts.add();
    o.done = give_up;
    o.timed_out = true;
    return o;
  }
  o.done = *answered + link;
  ats_stats_->atc_inv_latency.record(o.done - at);
  return o;
}

// IHI 0070 chapter 8: a Page Request goes into the PRI queue. The SMMU
// answers it itself with ResponseFailure while the queue is off (PRIQEN = 0,
// SMMUEN = 0) or PRIQ_ABT_ERR is active (8.2), and with Success for a Last
// request it has to discard in an overflow (8.1: the endpoint then asks
// again). The model's automatic responses carry no PASID.
Ps SmmuImpl::page_request(tlm::tlm_generic_payload& trans, AtsExtension& ats, Ps t) {
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  ats.accepted = false;
  const StreamIdExtension* sid = trans.get_extension<StreamIdExtension>();
  if (!sid) return t;
  PageRequestRecord rec;
  rec.sid = sid->stream_id;
  rec.ssv = sid->substream_valid && cfg_.features.ssidsize > 0;
  rec.ssid = rec.ssv ? sid->substream_id : 0;
  rec.priv = rec.ssv && sid->privileged;  // 8: X and Priv are 0 without a PASID
  rec.exec = rec.ssv && ats.exec;
  rec.read = true;
  rec.write = ats.want_write;
  rec.last = ats.last;
  rec.prg_index = ats.prg_index & 0x1FF;
  rec.addr = trans.get_address() & ~uint64_t{0xFFF};
  AtsDevice::PrgResponse auto_resp;
  auto_resp.sid = rec.sid;
  auto_resp.prg_index = rec.prg_index;
  auto_resp.automatic = true;
  auto answer = [&](PrgResponseCode code) {
    auto_resp.code = code;
    if (ats_stats_) counter_on_first_use(ats_stats_->prg_auto_responses, "ats", "prg_auto_responses").add();
    send_prg_response(auto_resp, t);
  };
  if (!cfg_.features.pri) {  // nothing here takes Page Requests
    answer(PrgResponseCode::kResponseFailure);
    return t;
  }
  counter_on_first_use(ats_stats_->page_requests, "ats", "page_requests").add();
  if (sfm_ || !regfile_.smmuen() || !regfile_.priqen() ||
      (regfile_.gerror_active() & reg::gerror::kPriqAbtErr.mask32())) {
    answer(PrgResponseCode::kResponseFailure);
    return t;
  }
  if (regfile_.priq_overflow_pending()) {  // 8.1: nothing is written while it lasts
    if (rec.last) answer(PrgResponseCode::kSuccess);
    return t;
  }
  EventQueueWriter::Queue q;
  q.enabled = true;
  q.base = regfile_.priq_base_addr();
  q.prod = regfile_.priq_prod();
  q.cons = regfile_.priq_cons();
  const std::array<uint64_t, 2> words = rec.encode();
  const EventQueueWriter::Result r = events_.post_record(q, words.data(), PageRequestRecord::kBytes, t);
  switch (r.outcome) {
    case EventQueueWriter::Outcome::kWritten:
      regfile_.set_priq_prod(r.prod.value());
      ats.accepted = true;
      counter_on_first_use(ats_stats_->page_requests_queued, "ats", "page_requests_queued").add();
      if (regfile_.priq_irqen() && (rec.last || !regfile_.priq_irq_last_only()))
        signal_irq(regfile_.priq_irq_cfg(), cfg_.priq_irq, reg::gerror::kMsiPriqAbtErr.mask32(), r.done);
      return r.done;
    case EventQueueWriter::Outcome::kLostFull:
      regfile_.signal_priq_overflow();
      if (rec.last) answer(PrgResponseCode::kSuccess);
      return t;
    case EventQueueWriter::Outcome::kLostDisabled:
      answer(PrgResponseCode::kResponseFailure);
      return t;
    case EventQueueWriter::Outcome::kAbort:
      // 8.2: PRIQ_ABT_ERR; the request is lost, and the model answers it as
      // the ones after it will be, so that the endpoint is not left waiting.
      raise_gerror(reg::gerror::kPriqAbtErr.mask32(), r.done);
      answer(PrgResponseCode::kResponseFailure);
      return r.done;
  }
  return t;
}

// 4.5.2: the PRG Response goes to the endpoint behind the StreamID; IGNORED
// with SMMUEN = 0. SSV without SubstreamIDs behaves as 0.
void SmmuImpl::pri_response(const Command& cmd, Ps at) {
  if (!regfile_.smmuen()) return;
  AtsDevice::PrgResponse r;
  r.sid = cmd.sid;
  r.ssv = cmd.ssv && cfg_.features.ssidsize > 0;
  r.ssid = r.ssv ? cmd.ssid : 0;
  r.prg_index = cmd.prg_index;
  r.code = prg_code_of_resp(cmd.pri_resp);
  counter_on_first_use(ats_stats_->prg_responses, "ats", "prg_responses").add();
  send_prg_response(r, at);
}

Ps SmmuImpl::send_ats_message(Ps at) {
  ats_port_.retire(now_ps());
  return ats_port_.reserve(at, ns_to_ps(cfg_.ats.message_ns)).end;
}

// A message to the endpoint: out on the SMMU's port, then across the link.
void SmmuImpl::send_prg_response(const AtsDevice::PrgResponse& r, Ps at) {
  const auto it = ats_devices_.find(r.sid);
  if (it == ats_devices_.end()) return;
  const Ps sent = send_ats_message(at);
  it->second->prg_response(r, sent + ns_to_ps(cfg_.ats.pcie_latency_ns));
}

}  // namespace smmu_vp::smmu

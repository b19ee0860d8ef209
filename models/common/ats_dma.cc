#include "common/ats_dma.h"

#include <algorithm>

#include "common/payload.h"

namespace smmu_vp {

namespace {
constexpr uint64_t kStu = 4096;  // what an access without a translation covers at most
}  // namespace

AtsDma::AtsDma(DeviceAtc& atc, const StreamIdExtension& id, Send send, StatsRegistry& stats,
               const std::string& prefix)
    : atc_(atc), send_(std::move(send)) {
  request_.set_extension(new StreamIdExtension(id));  // owned by the payload
  request_ext_ = new smmu::AtsExtension(smmu::AtsExtension::Kind::kTranslationRequest);
  request_.set_extension(request_ext_);
  if (atc.config().pri) {
    page_requests_ = &stats.counter(prefix + ".page_requests");
    page_faults_failed_ = &stats.counter(prefix + ".page_faults_failed");
    page_fault_ns_ = &stats.histogram(prefix + ".page_fault_ns", "ns", 1000.0);
    atc.set_response_sink([this](const smmu::AtsDevice::PrgResponse& r, Ps arrives) { on_response(r, arrives); });
  }
}

void AtsDma::on_response(const smmu::AtsDevice::PrgResponse& r, Ps arrives) {
  if (!waiting_ || r.prg_index != prg_) return;  // not the group we wait for
  answered_ = true;
  code_ = r.code;
  answered_at_ = arrives;
  response_.notify(sc_core::SC_ZERO_TIME);
}

Ps AtsDma::page_request(uint64_t addr, bool write, Ps at, bool* success) {
  // One group outstanding: another thread of the device that faults waits
  // for it to be answered first.
  while (waiting_) sc_core::wait(response_);
  prg_ = static_cast<uint16_t>((prg_ + 1) & 0x1FF);
  waiting_ = true;
  answered_ = false;
  smmu::AtsExtension& e = *request_ext_;
  e.kind = smmu::AtsExtension::Kind::kPageRequest;
  e.prg_index = prg_;
  e.last = true;
  e.want_write = write;
  request_.set_command(tlm::TLM_IGNORE_COMMAND);
  request_.set_address(addr & ~uint64_t{0xFFF});
  request_.set_data_length(0);
  request_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  page_requests_->add();
  Ps t = send_(request_, at) + ns_to_ps(atc_.config().request_rtt_ns) / 2;
  e.kind = smmu::AtsExtension::Kind::kTranslationRequest;
  // The response may have come back at once (the SMMU's own); else wait.
  while (!answered_) sc_core::wait(response_);
  waiting_ = false;
  response_.notify(sc_core::SC_ZERO_TIME);  // a thread queued behind this one
  t = std::max(t, answered_at_);
  if (t > now_ps()) sc_core::wait(ps_to_sc(t - now_ps()));
  *success = code_ == smmu::PrgResponseCode::kSuccess;
  if (!*success) page_faults_failed_->add();
  page_fault_ns_->record(t - at);
  return t;
}

Ps AtsDma::request(uint64_t addr, Ps at) {
  request_.set_command(tlm::TLM_IGNORE_COMMAND);
  request_.set_address(addr);
  request_.set_data_ptr(nullptr);
  request_.set_data_length(0);
  request_.set_streaming_width(0);
  request_.set_byte_enable_ptr(nullptr);
  request_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  const Ps answered = send_(request_, at);
  if (request_.is_response_ok()) atc_.fill(*request_ext_);
  if (request_ext_->status == smmu::AtsExtension::Status::kUnsupportedRequest) usable_ = false;
  return answered + ns_to_ps(atc_.config().request_rtt_ns);
}

Ps AtsDma::access(tlm::tlm_generic_payload& trans, bool is_write, uint64_t addr, uint8_t* data, unsigned len, Ps at,
                  bool* ok) {
  *ok = true;
  Ps t = at, last = at;
  const Ps lookup = ns_to_ps(atc_.config().lookup_ns);
  for (unsigned off = 0; off < len;) {
    const uint64_t a = addr + off;
    std::optional<DeviceAtc::Hit> hit;
    if (usable_) {
      t += lookup;
      hit = atc_.lookup(a, is_write);
      if (!hit) {
        t = request(a, t);
        hit = atc_.peek(a, is_write);
      }
      // PRI: no translation yet; software may make the page present.
      bool paged_in = false;
      if (!hit && usable_ && atc_.config().pri) t = page_request(a, is_write, t, &paged_in);
      if (paged_in) {
        t = request(a, t);
        hit = atc_.peek(a, is_write);
      }
    }
    unsigned chunk;
    Ps done;
    if (hit) {
      chunk = static_cast<unsigned>(std::min<uint64_t>(len - off, hit->bytes_left));
      prepare_access(trans, is_write, hit->pa, data + off, chunk);
      trans.set_extension(&translated_);
      done = send_(trans, t);
      trans.clear_extension(&translated_);
      atc_.used(a, done);
    } else {
      chunk = static_cast<unsigned>(std::min<uint64_t>(len - off, kStu - (a & (kStu - 1))));
      prepare_access(trans, is_write, a, data + off, chunk);
      done = send_(trans, t);
    }
    last = std::max(last, done);
    if (!trans.is_response_ok()) {
      *ok = false;
      return last;
    }
    off += chunk;
  }
  return last;
}

}  // namespace smmu_vp

#include "smmu/event_queue.h"

namespace smmu_vp::smmu {

// IHI 0070 7.3: record layout.
std::array<uint64_t, 4> EventRecord::encode() const {
  std::array<uint64_t, 4> w{};
  // 7.3.6 F_BAD_ATS_TREQ and 7.3.8 F_TRANSL_FORBIDDEN define only the
  // stream, the address and (F_TRANSL_FORBIDDEN) RnW; the rest of their
  // dword 1 is RES0 here (F_BAD_ATS_TREQ's requested R/W/X/Priv and Span are
  // not written).
  if (id == EventId::kBadAtsTreq || id == EventId::kTranslForbidden) {
    set_bits(w, 7, 0, static_cast<uint8_t>(id));
    if (id == EventId::kBadAtsTreq) {
      set_bits(w, 11, 11, ssv);
      set_bits(w, 31, 12, ssid);
    } else {
      set_bits(w, 99, 99, rnw);
    }
    set_bits(w, 63, 32, sid);
    w[2] = input_addr;
    return w;
  }
  set_bits(w, 7, 0, static_cast<uint8_t>(id));
  set_bits(w, 11, 11, ssv);
  set_bits(w, 31, 12, ssid);
  set_bits(w, 63, 32, sid);
  set_bits(w, 79, 64, stag);
  set_bits(w, 95, 95, stall);
  set_bits(w, 97, 97, pnu);
  set_bits(w, 98, 98, ind);
  set_bits(w, 99, 99, rnw);
  set_bits(w, 103, 103, s2);
  set_bits(w, 105, 104, static_cast<uint8_t>(cls));
  set_bits(w, 108, 108, ttrnw);
  w[2] = input_addr;
  if (has_fetch_addr()) set_bits(w, 243, 195, fetch_addr >> 3);
  else set_bits(w, 243, 204, ipa >> 12);
  return w;
}

EventRecord EventRecord::decode(const std::array<uint64_t, 4>& w) {
  EventRecord r;
  r.id = static_cast<EventId>(bits(w, 7, 0));
  r.ssv = bits(w, 11, 11);
  r.ssid = static_cast<uint32_t>(bits(w, 31, 12));
  r.sid = static_cast<uint32_t>(bits(w, 63, 32));
  r.stag = static_cast<uint16_t>(bits(w, 79, 64));
  r.stall = bits(w, 95, 95);
  r.pnu = bits(w, 97, 97);
  r.ind = bits(w, 98, 98);
  r.rnw = bits(w, 99, 99);
  r.s2 = bits(w, 103, 103);
  r.cls = static_cast<FaultClass>(bits(w, 105, 104));
  r.ttrnw = bits(w, 108, 108);
  r.input_addr = w[2];
  if (r.has_fetch_addr()) r.fetch_addr = bits(w, 243, 195) << 3;
  else r.ipa = bits(w, 243, 204) << 12;
  return r;
}

// IHI 0070 7.4: a record that does not fit is discarded.
EventQueueWriter::Result EventQueueWriter::post(const Queue& q, const EventRecord& rec, Ps at) {
  const std::array<uint64_t, 4> w = rec.encode();
  return post_record(q, w.data(), EventRecord::kBytes, at);
}

EventQueueWriter::Result EventQueueWriter::post_record(const Queue& q, const void* record, unsigned bytes, Ps at) {
  if (!q.enabled) return {Outcome::kLostDisabled, q.prod, at};
  if (queue_full(q.prod, q.cons)) return {Outcome::kLostFull, q.prod, at};
  const uint64_t addr = q.base + static_cast<uint64_t>(q.prod.index()) * bytes;
  Ps done = at;
  if (!mem_.write(addr, record, bytes, at, &done)) return {Outcome::kAbort, q.prod, done};
  return {Outcome::kWritten, q.prod.advanced(), done};
}

}  // namespace smmu_vp::smmu

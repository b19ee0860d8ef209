// The DMA of a PCIe endpoint that uses ATS (PCIe 6.0 10.2; IHI 0070 3.9.1):
// each access looks up the endpoint's ATC; on a miss the endpoint sends a
// Translation Request to the SMMU and waits for the completion; an access
// with a translation goes out translated (split where a translation ends),
// one without goes out untranslated, for the SMMU to translate (or fault) as
// usual. An endpoint whose request gets UR (its STE does not allow ATS, or
// the SMMU has none) stops asking and sends its DMA untranslated from then
// on: the model has no configuration space for the driver to turn ATS on
// and off in the endpoint, so the driver's STE.EATS stands for it. The
// device model keeps its own payload (with its StreamID) and its way of
// sending it; this is what the NIC and NVMe models share.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <systemc>
#include <tlm>

#include "common/device_atc.h"
#include "common/stream_id_extension.h"
#include "common/sim_time.h"
#include "common/stats.h"
#include "common/tlm_time.h"
#include "smmu/ats.h"

namespace smmu_vp {

class AtsDma {
 public:
  // Sends `p` issued at `at` and returns when it completed.
  using Send = std::function<Ps(tlm::tlm_generic_payload& p, Ps at)>;
  // `id`: the device's StreamID extension, copied for its Translation
  // Requests. `stats` and `prefix` (e.g. "nic0.atc") name the PRI counters,
  // created only with cfg.pri.
  AtsDma(DeviceAtc& atc, const StreamIdExtension& id, Send send, StatsRegistry& stats, const std::string& prefix);

  // One access of `len` bytes at the untranslated `addr`, issued at `at`
  // through `trans` (the device's payload, its extensions kept). Returns
  // when the last part completed; *ok is false when a part was refused.
  Ps access(tlm::tlm_generic_payload& trans, bool is_write, uint64_t addr, uint8_t* data, unsigned len, Ps at,
            bool* ok);

 private:
  // A Translation Request for `addr` at `at`: fills the ATC; returns when
  // the completion is back at the endpoint.
  Ps request(uint64_t addr, Ps at);
  // PRI: a Page Request for `addr` at `at`, then a wait in the calling
  // SystemC thread for its PRG Response. Returns when it arrived, and
  // whether it said Success.
  Ps page_request(uint64_t addr, bool write, Ps at, bool* success);
  void on_response(const smmu::AtsDevice::PrgResponse& r, Ps arrives);

  DeviceAtc& atc_;
  Send send_;
  // Cleared by a UR: the stream's STE does not let it use ATS, and the
  // endpoint stops asking, as one whose ATS Enable is clear would.
  bool usable_ = true;
  tlm::tlm_generic_payload request_;  // carries its own StreamID and ATS extensions
  smmu::AtsExtension* request_ext_;
  smmu::AtsExtension translated_{smmu::AtsExtension::Kind::kTranslated};
  // PRI: the group awaited, and its response once it came.
  uint16_t prg_ = 0;
  bool waiting_ = false, answered_ = false;
  smmu::PrgResponseCode code_ = smmu::PrgResponseCode::kResponseFailure;
  Ps answered_at_ = 0;
  sc_core::sc_event response_;
  Counter* page_requests_ = nullptr;
  Counter* page_faults_failed_ = nullptr;
  Histogram* page_fault_ns_ = nullptr;
};

// A Send through an initiator socket's blocking transport, `at` being a
// time not before the caller's current simulation time.
template <class Socket>
AtsDma::Send send_through(Socket& socket) {
  return [&socket](tlm::tlm_generic_payload& p, Ps at) {
    const Ps now = now_ps();
    sc_core::sc_time delay = ps_to_sc(at > now ? at - now : 0);
    socket->b_transport(p, delay);
    return now_ps() + sc_to_ps(delay);  // the time at return: a stalled translation waits
  };
}

}  // namespace smmu_vp

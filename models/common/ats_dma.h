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

#include <tlm>

#include "common/device_atc.h"
#include "common/stream_id_extension.h"
#include "common/sim_time.h"
#include "common/tlm_time.h"
#include "smmu/ats.h"

namespace smmu_vp {

class AtsDma {
 public:
  // Sends `p` issued at `at` and returns when it completed.
  using Send = std::function<Ps(tlm::tlm_generic_payload& p, Ps at)>;
  // `id`: the device's StreamID extension, copied for its Translation Requests.
  AtsDma(DeviceAtc& atc, const StreamIdExtension& id, Send send);

  // One access of `len` bytes at the untranslated `addr`, issued at `at`
  // through `trans` (the device's payload, its extensions kept). Returns
  // when the last part completed; *ok is false when a part was refused.
  Ps access(tlm::tlm_generic_payload& trans, bool is_write, uint64_t addr, uint8_t* data, unsigned len, Ps at,
            bool* ok);

 private:
  // A Translation Request for `addr` at `at`: fills the ATC; returns when
  // the completion is back at the endpoint.
  Ps request(uint64_t addr, Ps at);

  DeviceAtc& atc_;
  Send send_;
  // Cleared by a UR: the stream's STE does not let it use ATS, and the
  // endpoint stops asking, as one whose ATS Enable is clear would.
  bool usable_ = true;
  tlm::tlm_generic_payload request_;  // carries its own StreamID and ATS extensions
  smmu::AtsExtension* request_ext_;
  smmu::AtsExtension translated_{smmu::AtsExtension::Kind::kTranslated};
};

// A Send through an initiator socket's blocking transport, `at` being a
// time not before the caller's current simulation time.
template <class Socket>
AtsDma::Send send_through(Socket& socket) {
  return [&socket](tlm::tlm_generic_payload& p, Ps at) {
    const Ps now = now_ps();
    sc_core::sc_time delay = ps_to_sc(at > now ? at - now : 0);
    socket->b_transport(p, delay);
    return now + sc_to_ps(delay);
  };
}

}  // namespace smmu_vp

// StreamID / SubstreamID carried by every transaction a DMA master issues.
// The SMMU (IHI 0070 3.2) selects the STE by StreamID and the CD by SubstreamID;
// until an SMMU sits between masters and memory the extension is carried and ignored.
#pragma once

#include <cstdint>
#include <tlm>

namespace smmu_vp {

class StreamIdExtension : public tlm::tlm_extension<StreamIdExtension> {
 public:
  StreamIdExtension() = default;
  StreamIdExtension(uint32_t sid, uint32_t ssid, bool ssid_valid)
      : stream_id(sid), substream_id(ssid), substream_valid(ssid_valid) {}

  tlm::tlm_extension_base* clone() const override { return new StreamIdExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const StreamIdExtension&>(other);
  }

  uint32_t stream_id = 0;
  uint32_t substream_id = 0;
  bool substream_valid = false;  // SSV: substream_id is meaningful
  bool privileged = false;       // PnU of the access
  bool instruction = false;      // InD of the access
};

}  // namespace smmu_vp

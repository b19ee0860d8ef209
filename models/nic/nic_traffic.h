// The wire side of the NIC, without SystemC: Ethernet framing on the line,
// and the RX traffic generator (frames at an offered load, round-robin over
// flows, fixed size or a simple IMIX).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "common/sim_time.h"
#include "nic/nic_regs.h"

namespace smmu_vp {

// What a frame costs on the wire beyond the bytes the NIC moves by DMA
// (IEEE 802.3: 7-byte preamble + 1-byte SFD, 4-byte FCS, 12-byte minimum
// inter-frame gap).
constexpr uint32_t kEthWireOverhead = 8 + 4 + 12;
constexpr uint32_t kEthMinFrame = 60;  // 64 on the wire with the FCS
constexpr uint32_t kEthHeader = 14;

// Time `frame_bytes` (without FCS) occupy a line of `gbps`.
inline Ps wire_time_ps(uint32_t frame_bytes, double gbps) {
  return transfer_time_ps(frame_bytes + kEthWireOverhead, gbps / 8.0);
}

enum class FrameMix { kFixed, kImix };

struct RxFrame {
  Ps first_byte = 0;  // arrival of the first byte
  Ps last_byte = 0;   // arrival of the last byte: the NIC has the whole frame
  uint32_t bytes = 0;
  uint32_t flow = 0;
  uint32_t seq = 0;
};

class RxTrafficGenerator {
 public:
  struct Params {
    double link_gbps = 100.0;
    double load_percent = 100.0;  // of the line rate
    uint32_t frame_bytes = 1514;  // kFixed
    FrameMix mix = FrameMix::kFixed;
    uint32_t flows = 64;
  };

  explicit RxTrafficGenerator(const Params& p) : p_(p), seq_(p.flows ? p.flows : 1, 0) {}

  // Frames start at `t0` (when receive is enabled).
  void start(Ps t0) {
    next_ = t0;
    count_ = 0;
  }

  RxFrame next() {
    RxFrame f;
    f.bytes = size_of(count_);
    f.flow = static_cast<uint32_t>(count_ % seq_.size());
    f.seq = seq_[f.flow]++;
    f.first_byte = next_;
    const Ps on_wire = wire_time_ps(f.bytes, p_.link_gbps);
    // The last data byte arrives before the FCS and the gap.
    f.last_byte = next_ + transfer_time_ps(f.bytes + 8, p_.link_gbps / 8.0);
    // At a load below the line rate the gaps grow, frames keep their length.
    next_ += p_.load_percent >= 100.0 ? on_wire : static_cast<Ps>(static_cast<double>(on_wire) * 100.0 / p_.load_percent);
    ++count_;
    return f;
  }

  // Fills `buf` (f.bytes long) with the frame the generator defines
  // (nic_regs.h): Ethernet header, generator header, pattern.
  static void fill(const RxFrame& f, uint8_t* buf) {
    std::memset(buf, 0xFF, 6);  // broadcast destination
    static const uint8_t src[6] = {0x02, 0x00, 0x5e, 0x00, 0x00, 0x01};
    std::memcpy(buf + 6, src, 6);
    buf[12] = NIC_FRAME_ETHERTYPE >> 8;
    buf[13] = NIC_FRAME_ETHERTYPE & 0xFF;
    nic_frame_hdr h{f.flow, f.seq, f.first_byte / kPsPerNs};
    std::memcpy(buf + NIC_FRAME_HDR_OFFSET, &h, sizeof h);
    nic_frame_fill_payload(buf, f.bytes, f.flow, f.seq);
  }

  uint64_t frames() const { return count_; }

 private:
  // Simple IMIX (7:4:1 of 64, 594 and 1518 bytes on the wire with FCS),
  // interleaved so that every 12 frames carry the whole mix.
  uint32_t size_of(uint64_t n) const {
    if (p_.mix == FrameMix::kFixed) return p_.frame_bytes;
    static const uint32_t pattern[12] = {60, 590, 60, 60, 590, 60, 1514, 60, 590, 60, 590, 60};
    return pattern[n % 12];
  }

  Params p_;
  std::vector<uint32_t> seq_;
  Ps next_ = 0;
  uint64_t count_ = 0;
};

}  // namespace smmu_vp

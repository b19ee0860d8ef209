#include "smmu/pri_queue.h"

namespace smmu_vp::smmu {

namespace {
uint64_t bit(bool b, unsigned n) { return static_cast<uint64_t>(b) << n; }
bool test(uint64_t w, unsigned n) { return (w >> n) & 1; }
}  // namespace

std::array<uint64_t, 2> PageRequestRecord::encode() const {
  std::array<uint64_t, 2> w{};
  w[0] = uint64_t{sid} | (uint64_t{ssid & 0xFFFFF} << 32) | bit(priv, 58) | bit(exec, 59) | bit(read, 60) |
         bit(write, 61) | bit(last, 62) | bit(ssv, 63);
  w[1] = (prg_index & 0x1FFu) | (addr & ~uint64_t{0xFFF});
  return w;
}

PageRequestRecord PageRequestRecord::decode(const std::array<uint64_t, 2>& w) {
  PageRequestRecord r;
  r.sid = static_cast<uint32_t>(w[0]);
  r.ssid = static_cast<uint32_t>((w[0] >> 32) & 0xFFFFF);
  r.priv = test(w[0], 58);
  r.exec = test(w[0], 59);
  r.read = test(w[0], 60);
  r.write = test(w[0], 61);
  r.last = test(w[0], 62);
  r.ssv = test(w[0], 63);
  r.prg_index = static_cast<uint16_t>(w[1] & 0x1FF);
  r.addr = w[1] & ~uint64_t{0xFFF};
  return r;
}

PrgResponseCode prg_code_of_resp(uint8_t resp) {
  switch (resp) {
    case 0b10: return PrgResponseCode::kSuccess;
    case 0b01: return PrgResponseCode::kInvalidRequest;
    default: return PrgResponseCode::kResponseFailure;
  }
}

}  // namespace smmu_vp::smmu

// A PRI Page Request as the SMMU writes it to the PRI queue (IHI 0070
// chapter 8): 16 bytes, the fields of the PCIe Page Request message. Field
// positions as Linux's arm-smmu-v3 reads them (PRIQ_0_*, PRIQ_1_*).
#pragma once

#include <array>
#include <cstdint>

#include "smmu/ats.h"

namespace smmu_vp::smmu {

struct PageRequestRecord {
  static constexpr unsigned kBytes = 16;
  uint32_t sid = 0;       // [31:0]
  uint32_t ssid = 0;      // [51:32], UNKNOWN without SSV
  bool priv = false;      // [58]
  bool exec = false;      // [59]
  bool read = false;      // [60]
  bool write = false;     // [61]
  bool last = false;      // [62]: the last request of its group
  bool ssv = false;       // [63]
  uint16_t prg_index = 0; // dword 1 [8:0]
  uint64_t addr = 0;      // dword 1 [63:12]: the page

  std::array<uint64_t, 2> encode() const;
  static PageRequestRecord decode(const std::array<uint64_t, 2>& w);
};

// CMD_PRI_RESP's Resp (4.5.2) to the code it sends: 0b00 ResponseFailure,
// 0b01 InvalidRequest, 0b10 Success (0b11 is ILLEGAL and never decoded).
PrgResponseCode prg_code_of_resp(uint8_t resp);

}  // namespace smmu_vp::smmu

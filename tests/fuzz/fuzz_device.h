// Shared by the device register harnesses: an offset and access size drawn
// from the input, mostly aligned and inside the device's register block
// (where the registers are), sometimes anywhere.
#pragma once

#include <cstdint>

#include "fuzz_input.h"

namespace smmu_vp::fuzz {

struct RegAccess {
  uint64_t offset;
  unsigned len;
};

inline RegAccess reg_access(Input& in, uint64_t block) {
  const uint8_t how = in.u8();
  uint64_t off = in.u32();
  switch (how & 3) {
    case 0: off = (off % block) & ~3ull; break;
    case 1: off = (off % block) & ~7ull; break;
    case 2: off %= block + 16; break;
    default: break;
  }
  static const unsigned kLens[8] = {4, 4, 8, 4, 8, 1, 2, 0};
  return {off, kLens[(how >> 2) & 7]};
}

}  // namespace smmu_vp::fuzz

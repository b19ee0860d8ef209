// What the trace player's tests share: an access of the player's image.
#pragma once

#include <cstdint>

#include "trace_player/trace_player_core.h"

namespace smmu_vp {

inline PlayerAccess player_access(uint64_t t, uint32_t slot, uint64_t offset, uint64_t size = 64, bool write = false,
                                  uint32_t sid = 3) {
  PlayerAccess a;
  a.time_ns = t;
  a.sid = sid;
  a.slot = slot;
  a.offset = offset;
  a.size = size;
  a.write = write;
  return a;
}

}  // namespace smmu_vp

// Reads the oldest event record the SMMU has written and the driver has not
// consumed yet (IHI 0070 7.3), so that a test can check who faulted where.
#pragma once

#include <cstdint>

#include "drivers/smmu/arm_smmu.h"
#include "drivers/smmu/smmu_hw.h"

namespace smmu_vp::test {

struct EventRecord {
  bool valid = false;
  uint32_t id = 0, sid = 0;
  uint64_t addr = 0;
};

// Call from an app on a simulated core, before smmu_handle_events: the
// driver's smmu_peek_event, decoded.
inline EventRecord oldest_event(const smmu_device& s) {
  EventRecord r;
  uint64_t rec[SMMU_EVT_DWORDS];
  if (!smmu_peek_event(&s, rec)) return r;
  r.valid = true;
  r.id = static_cast<uint32_t>(rec[0] & SMMU_EVT0_ID_MASK);
  r.sid = static_cast<uint32_t>(rec[0] >> SMMU_EVT0_SID_SHIFT);
  r.addr = rec[2];
  return r;
}

}  // namespace smmu_vp::test

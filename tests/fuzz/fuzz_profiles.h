// SMMU feature profiles the SMMU harnesses share beside v3.0 and v3.3.
#pragma once

#include "smmu/features.h"

namespace smmu_vp::fuzz {

// v3.3 with ATS, PRI and the stall model (STALL_MODEL 0b00).
inline smmu::SmmuFeatures with_ats_pri_stall() {
  smmu::SmmuFeatures f = smmu::SmmuFeatures::v3_3_profile();
  f.ats = f.pri = true;
  f.priqs = 8;
  f.stall_model = 0;
  f.stall_max = 16;
  return f;
}

}  // namespace smmu_vp::fuzz

// The short results table printed on stdout after a run.
#pragma once

#include <ostream>

#include "platform.h"

namespace smmu_vp {

void print_summary(std::ostream& os, Platform& platform, const RunResult& result);

}  // namespace smmu_vp

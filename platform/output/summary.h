// The short results table printed on stdout after a run.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "platform.h"

namespace smmu_vp {

void print_summary(std::ostream& os, Platform& platform, const RunResult& result);

// Every hardware error class a run met, one line each: bus errors by core,
// SMMU events by type, command errors, lost events, and each device's error
// and fault counters, and every physical invariant the results break
// (invariants.h). The summary prints them as its "problems" section;
// `smmu-vp run --strict` fails the run when there is any.
std::vector<std::string> run_problems(const Platform& platform);

}  // namespace smmu_vp

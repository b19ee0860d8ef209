// Parameter tables of the platform's own components (platform.cpu, .dram,
// .interconnect, .intc, .smmu in docs/config.md): each parameter declared once
// (config/params.h), its default written in the model's configuration struct.
// run_config.cc puts them together with what is not a plain parameter (the
// cost table, the devices, cross-field checks).
#pragma once

#include "config/params.h"
#include "cpu/cpu_cluster.h"
#include "cpu/interrupt_controller.h"
#include "memory/dram_core.h"
#include "memory/router.h"
#include "smmu/smmu.h"

namespace smmu_vp::config {

// platform.cpu, except the cost table (costs).
const ParamTable<CpuConfig>& cpu_params();
const ParamTable<DramConfig>& dram_params();
const ParamTable<InterconnectConfig>& interconnect_params();
const ParamTable<IntcConfig>& intc_params();
// Reading it selects the feature profile and applies the feature switches on
// top; whether the result is a valid SMMU is for the caller to check.
const ParamTable<smmu::SmmuConfig>& smmu_params();

}  // namespace smmu_vp::config

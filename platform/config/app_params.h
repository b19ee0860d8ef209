// The apps of a scenario (scenario.apps in docs/config.md): which app runs on
// which cores with which parameters, checked against what each app declares
// (hal_app.params), and the reference of those parameters. run_config.cc reads
// the rest of the document.
#pragma once

#include <string>
#include <vector>

#include "config/run_config.h"

struct hal_app;

namespace smmu_vp::config {

// Reads scenario.apps of the validated rc.resolved into rc.apps (rc.cpu is
// read already): every app one of `apps`, every core existing and taken once,
// every parameter declared and in range. The parameters an app leaves out
// take their defaults, in rc.resolved too. Throws ConfigError at the path.
void read_apps(RunConfig& rc, const std::vector<const hal_app*>& apps);

// Markdown: every app's parameters, the last section of the config reference.
std::string render_app_params_reference(const std::vector<const hal_app*>& apps);

}  // namespace smmu_vp::config

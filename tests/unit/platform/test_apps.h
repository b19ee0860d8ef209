// Apps for tests of what reads a RunConfig's apps (bounds, invariants): a
// name and nothing to run, and an assignment of one to cores.
#pragma once

#include <utility>
#include <vector>

#include "config/run_config.h"
#include "hal/hal.h"

namespace smmu_vp::test {

inline int noop_main(void) { return 0; }
inline const hal_app kFio = {"fio", "", noop_main, nullptr};
inline const hal_app kNetRx = {"net_rx", "", noop_main, nullptr};
inline const hal_app kOther = {"other", "", noop_main, nullptr};

// The app's first instance on `cores` (its results under sw.<app>.).
inline config::AppAssignment assign(const hal_app* app, std::vector<unsigned> cores) {
  config::AppAssignment a;
  a.app = app;
  a.name = app->name;
  a.cores = std::move(cores);
  return a;
}

}  // namespace smmu_vp::test

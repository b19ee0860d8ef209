// Builds and runs a platform in-process from inline JSON and test apps. One
// platform per test (per process): SystemC elaborates once per process.
#pragma once

#include <fstream>
#include <memory>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "apps/apps.h"
#include "config/run_config.h"
#include "platform.h"

namespace smmu_vp::test {

inline nlohmann::json base_platform() {
  std::ifstream in(SMMU_VP_SOURCE_DIR "/platform/platforms/base.json");
  return nlohmann::json::parse(in);
}

// A scenario document on the shipped base platform.
inline nlohmann::json scenario(nlohmann::json apps, double max_time_us = 1e5) {
  return {{"platform", base_platform()},
          {"scenario", {{"name", "test"}, {"apps", std::move(apps)}, {"stop", {{"max_time_us", max_time_us}}}}}};
}

inline std::vector<const hal_app*> with_builtin(std::vector<const hal_app*> extra) {
  for (unsigned i = 0; i < sw_app_count; ++i) extra.push_back(sw_apps[i]);
  return extra;
}

struct TestRun {
  std::unique_ptr<Platform> platform;
  RunResult result;
  const StatsRegistry& stats() const { return platform->stats(); }
  uint64_t counter(const std::string& path) const {
    const Counter* c = stats().find_counter(path);
    return c ? c->value() : 0;
  }
  const Histogram* histogram(const std::string& path) const { return stats().find_histogram(path); }
  // A value an app set (hal_stat_set); NaN when there is none.
  double value(const std::string& path) const {
    const double* v = stats().find_value(path);
    return v ? *v : std::numeric_limits<double>::quiet_NaN();
  }
};

inline TestRun run(const nlohmann::json& doc, const std::vector<const hal_app*>& apps,
                   const std::vector<std::string>& overrides = {}) {
  TestRun t;
  auto cfg = config::build_run_config(doc, SMMU_VP_SOURCE_DIR, overrides, with_builtin(apps));
  auto log = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  t.platform = std::make_unique<Platform>(cfg, nullptr, log);
  t.result = t.platform->run();
  return t;
}

}  // namespace smmu_vp::test

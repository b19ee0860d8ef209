// Human-readable sizes and durations for the run summary.
#pragma once

#include <string>

#include <fmt/format.h>

namespace smmu_vp {

inline std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024.0 && u < 4) {
    b /= 1024.0;
    ++u;
  }
  return fmt::format(u ? "{:.2f} {}" : "{:.0f} {}", b, units[u]);
}

inline std::string human_ns(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:.3f} us", ns / 1e3);
  return fmt::format("{:.1f} ns", ns);
}

}  // namespace smmu_vp

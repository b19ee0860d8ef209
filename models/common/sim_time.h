// Simulated time in the model cores: integer picoseconds, independent of the
// SystemC kernel so that cores can be unit-tested without it.
#pragma once

#include <cstdint>

namespace smmu_vp {

using Ps = uint64_t;

constexpr Ps kPsPerNs = 1000;
constexpr Ps ns_to_ps(double ns) { return static_cast<Ps>(ns * 1000.0 + 0.5); }
constexpr double ps_to_ns(Ps ps) { return static_cast<double>(ps) / 1000.0; }

// Time to move `bytes` at `bytes_per_ns` (GB/s), rounded up to whole picoseconds.
constexpr Ps transfer_time_ps(uint64_t bytes, double bytes_per_ns) {
  if (bytes_per_ns <= 0.0) return 0;
  const double ps = static_cast<double>(bytes) * 1000.0 / bytes_per_ns;
  const Ps whole = static_cast<Ps>(ps);
  return (static_cast<double>(whole) < ps) ? whole + 1 : whole;
}

}  // namespace smmu_vp

// Stats registry shared by every model: counters, log-linear histograms with
// percentiles, and computed values, named by dotted paths ("dram.bytes_read")
// that become the hierarchy of stats.json.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace smmu_vp {

class Counter {
 public:
  void add(uint64_t n = 1) { value_ += n; }
  uint64_t value() const { return value_; }

 private:
  uint64_t value_ = 0;
};

// Values are recorded as unsigned integers in a base unit and reported divided
// by `scale` in `unit` (e.g. recorded in ps, reported in ns with scale 1000).
// Buckets are exact below 64 and then 32 per power of two, so a percentile is
// within 1/32 (about 3%) of the true sample; min, max, count and mean are exact.
class Histogram {
 public:
  Histogram(std::string unit, double scale) : unit_(std::move(unit)), scale_(scale) {}

  void record(uint64_t value);
  uint64_t count() const { return count_; }
  uint64_t min_raw() const { return count_ ? min_ : 0; }
  uint64_t max_raw() const { return max_; }
  // Reported in the histogram's unit.
  double min() const { return static_cast<double>(min_raw()) / scale_; }
  double max() const { return static_cast<double>(max_) / scale_; }
  double mean() const;
  double sum() const { return sum_ / scale_; }
  double percentile(double p) const;  // p in [0, 100]
  const std::string& unit() const { return unit_; }

  static size_t bucket_of(uint64_t value);
  static uint64_t bucket_low(size_t bucket);
  static uint64_t bucket_high(size_t bucket);  // inclusive

 private:
  std::string unit_;
  double scale_;
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  double sum_ = 0;
};

class StatsRegistry {
 public:
  StatsRegistry();
  ~StatsRegistry();
  StatsRegistry(const StatsRegistry&) = delete;
  StatsRegistry& operator=(const StatsRegistry&) = delete;

  // Get or create. References stay valid for the registry's lifetime.
  // A path already used by another kind, or used as a prefix of another, throws.
  Counter& counter(const std::string& path);
  Histogram& histogram(const std::string& path, const std::string& unit = "ns",
                       double scale = 1.0);
  double& value(const std::string& path);

  bool has(const std::string& path) const;
  const Counter* find_counter(const std::string& path) const;
  // A counter's value; 0 when nothing registered it (a device that never counted).
  uint64_t counter_value(const std::string& path) const;
  // A value's; 0.0 when none was set.
  double value_or_zero(const std::string& path) const;
  const Histogram* find_histogram(const std::string& path) const;
  const double* find_value(const std::string& path) const;
  // Every path registered, sorted.
  std::vector<std::string> paths() const;

  // Nested JSON: counters as integers, values as numbers, histograms as objects
  // {unit, count, min, mean, p50, p90, p99, max, sum}.
  nlohmann::json to_json() const;
  static nlohmann::json histogram_json(const Histogram& h);

 private:
  enum class Kind { kCounter, kHistogram, kValue };
  void claim(const std::string& path, Kind kind);

  std::map<std::string, Kind> kinds_;
  std::map<std::string, std::unique_ptr<Counter>> counters_;
  std::map<std::string, std::unique_ptr<Histogram>> histograms_;
  std::map<std::string, std::unique_ptr<double>> values_;
};

}  // namespace smmu_vp

#include "common/stats.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace smmu_vp {

namespace {
constexpr unsigned kExactLimitLog2 = 6;  // values below 64 have their own bucket
constexpr uint64_t kExactLimit = 1ull << kExactLimitLog2;
constexpr unsigned kSubBucketsLog2 = 5;  // 32 buckets per power of two above that
constexpr uint64_t kSubBuckets = 1ull << kSubBucketsLog2;

unsigned floor_log2(uint64_t v) { return 63u - static_cast<unsigned>(__builtin_clzll(v)); }
}  // namespace

size_t Histogram::bucket_of(uint64_t v) {
  if (v < kExactLimit) return static_cast<size_t>(v);
  const unsigned e = floor_log2(v);
  const unsigned shift = e - kSubBucketsLog2;
  const uint64_t sub = (v >> shift) - kSubBuckets;  // in [0, 32)
  return static_cast<size_t>(kExactLimit + (e - kExactLimitLog2) * kSubBuckets + sub);
}

uint64_t Histogram::bucket_low(size_t b) {
  if (b < kExactLimit) return b;
  const uint64_t k = b - kExactLimit;
  const unsigned e = static_cast<unsigned>(k / kSubBuckets) + kExactLimitLog2;
  const uint64_t sub = k % kSubBuckets + kSubBuckets;
  return sub << (e - kSubBucketsLog2);
}

uint64_t Histogram::bucket_high(size_t b) {
  if (b < kExactLimit) return b;
  const uint64_t k = b - kExactLimit;
  const unsigned e = static_cast<unsigned>(k / kSubBuckets) + kExactLimitLog2;
  return bucket_low(b) + (1ull << (e - kSubBucketsLog2)) - 1;
}

void Histogram::record(uint64_t value) {
  const size_t b = bucket_of(value);
  if (b >= buckets_.size()) buckets_.resize(b + 1, 0);
  ++buckets_[b];
  ++count_;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  sum_ += static_cast<double>(value);
}

double Histogram::mean() const { return count_ ? sum_ / static_cast<double>(count_) / scale_ : 0.0; }

double Histogram::percentile(double p) const {
  if (count_ == 0) return 0.0;
  p = std::clamp(p, 0.0, 100.0);
  // Nearest rank: the smallest sample with at least p% of samples at or below it.
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_))));
  uint64_t seen = 0;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen >= rank) {
      // Report the bucket's midpoint, never outside what was really observed.
      const double mid = (static_cast<double>(bucket_low(b)) + static_cast<double>(bucket_high(b))) / 2.0;
      const double v = std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
      return v / scale_;
    }
  }
  return max();
}

StatsRegistry::StatsRegistry() = default;
StatsRegistry::~StatsRegistry() = default;

void StatsRegistry::claim(const std::string& path, Kind kind) {
  if (path.empty() || path.front() == '.' || path.back() == '.' ||
      path.find("..") != std::string::npos)
    throw std::invalid_argument("stats: malformed path '" + path + "'");
  auto it = kinds_.find(path);
  if (it != kinds_.end()) {
    if (it->second != kind) throw std::invalid_argument("stats: '" + path + "' already registered as another kind");
    return;
  }
  // A leaf cannot also be an interior node of the hierarchy.
  const std::string as_prefix = path + ".";
  auto next = kinds_.lower_bound(as_prefix);
  if (next != kinds_.end() && next->first.compare(0, as_prefix.size(), as_prefix) == 0)
    throw std::invalid_argument("stats: '" + path + "' is already a group (" + next->first + ")");
  for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1)) {
    if (kinds_.count(path.substr(0, dot)))
      throw std::invalid_argument("stats: '" + path.substr(0, dot) + "' is a leaf, cannot hold '" + path + "'");
  }
  kinds_.emplace(path, kind);
}

Counter& StatsRegistry::counter(const std::string& path) {
  auto it = counters_.find(path);
  if (it != counters_.end()) return *it->second;
  claim(path, Kind::kCounter);
  return *counters_.emplace(path, std::make_unique<Counter>()).first->second;
}

Histogram& StatsRegistry::histogram(const std::string& path, const std::string& unit, double scale) {
  auto it = histograms_.find(path);
  if (it != histograms_.end()) return *it->second;
  claim(path, Kind::kHistogram);
  return *histograms_.emplace(path, std::make_unique<Histogram>(unit, scale)).first->second;
}

double& StatsRegistry::value(const std::string& path) {
  auto it = values_.find(path);
  if (it != values_.end()) return *it->second;
  claim(path, Kind::kValue);
  return *values_.emplace(path, std::make_unique<double>(0.0)).first->second;
}

bool StatsRegistry::has(const std::string& path) const { return kinds_.count(path) != 0; }

const Counter* StatsRegistry::find_counter(const std::string& path) const {
  auto it = counters_.find(path);
  return it == counters_.end() ? nullptr : it->second.get();
}

uint64_t StatsRegistry::counter_value(const std::string& path) const {
  const Counter* c = find_counter(path);
  return c ? c->value() : 0;
}

double StatsRegistry::value_or_zero(const std::string& path) const {
  const double* v = find_value(path);
  return v ? *v : 0.0;
}
const Histogram* StatsRegistry::find_histogram(const std::string& path) const {
  auto it = histograms_.find(path);
  return it == histograms_.end() ? nullptr : it->second.get();
}
const double* StatsRegistry::find_value(const std::string& path) const {
  auto it = values_.find(path);
  return it == values_.end() ? nullptr : it->second.get();
}

std::vector<std::string> StatsRegistry::paths() const {
  std::vector<std::string> out;
  out.reserve(kinds_.size());
  for (const auto& [path, kind] : kinds_) out.push_back(path);
  return out;
}

nlohmann::json StatsRegistry::histogram_json(const Histogram& h) {
  return nlohmann::json{{"unit", h.unit()},         {"count", h.count()},
                        {"min", h.min()},           {"mean", h.mean()},
                        {"p50", h.percentile(50)},  {"p90", h.percentile(90)},
                        {"p99", h.percentile(99)},  {"p999", h.percentile(99.9)},
                        {"max", h.max()},
                        {"sum", h.sum()}};
}

nlohmann::json StatsRegistry::to_json() const {
  nlohmann::json root = nlohmann::json::object();
  for (const auto& [path, kind] : kinds_) {
    // Walk by object keys: every component, digits included, is a key.
    nlohmann::json* node = &root;
    size_t start = 0;
    for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', start)) {
      node = &(*node)[path.substr(start, dot - start)];
      start = dot + 1;
    }
    nlohmann::json& leaf = (*node)[path.substr(start)];
    switch (kind) {
      case Kind::kCounter: leaf = counters_.at(path)->value(); break;
      case Kind::kHistogram: leaf = histogram_json(*histograms_.at(path)); break;
      case Kind::kValue: leaf = *values_.at(path); break;
    }
  }
  return root;
}

}  // namespace smmu_vp

// Counters, log-linear histograms and the registry that names them.
#include "common/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace smmu_vp {
namespace {

TEST(Counter, StartsAtZeroAndAdds) {
  Counter c;
  EXPECT_EQ(c.value(), 0u);
  c.add();
  c.add(41);
  EXPECT_EQ(c.value(), 42u);
}

TEST(HistogramBuckets, ExactBelow64) {
  for (uint64_t v = 0; v < 64; ++v) {
    EXPECT_EQ(Histogram::bucket_of(v), v);
    EXPECT_EQ(Histogram::bucket_low(v), v);
    EXPECT_EQ(Histogram::bucket_high(v), v);
  }
}

// Every bucket's [low, high] holds exactly the values that map to it: buckets
// tile the whole 64-bit range with no gaps and no overlaps.
TEST(HistogramBuckets, ContiguousUpToTopOfRange) {
  const size_t last = Histogram::bucket_of(UINT64_MAX);
  EXPECT_EQ(Histogram::bucket_high(last), UINT64_MAX);
  EXPECT_EQ(Histogram::bucket_low(0), 0u);
  for (size_t b = 0; b < last; ++b) {
    ASSERT_LE(Histogram::bucket_low(b), Histogram::bucket_high(b)) << "bucket " << b;
    ASSERT_EQ(Histogram::bucket_high(b) + 1, Histogram::bucket_low(b + 1)) << "bucket " << b;
    ASSERT_EQ(Histogram::bucket_of(Histogram::bucket_low(b)), b);
    ASSERT_EQ(Histogram::bucket_of(Histogram::bucket_high(b)), b);
  }
}

// A bucket is at most 1/32 of its lower bound wide: that is the accuracy
// promise of the percentiles.
TEST(HistogramBuckets, RelativeWidthAtMostOneThirtySecond) {
  for (size_t b = 64; b <= Histogram::bucket_of(UINT64_MAX); ++b) {
    const uint64_t width = Histogram::bucket_high(b) - Histogram::bucket_low(b) + 1;
    ASSERT_LE(width, Histogram::bucket_low(b) / 32) << "bucket " << b;
  }
}

TEST(HistogramBuckets, ValuesFallInsideTheirBucket) {
  std::vector<uint64_t> values;
  for (uint64_t v = 0; v < 100000; ++v) values.push_back(v);
  for (unsigned s = 0; s < 64; ++s) {
    const uint64_t p = 1ull << s;
    values.insert(values.end(), {p - 1, p, p + 1});
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) values.push_back(rng() >> (rng() % 64));
  values.push_back(UINT64_MAX);
  for (uint64_t v : values) {
    const size_t b = Histogram::bucket_of(v);
    ASSERT_LE(Histogram::bucket_low(b), v) << v;
    ASSERT_GE(Histogram::bucket_high(b), v) << v;
  }
}

TEST(Histogram, EmptyReportsZeros) {
  Histogram h("ns", 1.0);
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min_raw(), 0u);
  EXPECT_EQ(h.max_raw(), 0u);
  EXPECT_EQ(h.mean(), 0.0);
  EXPECT_EQ(h.percentile(50), 0.0);
  EXPECT_EQ(h.sum(), 0.0);
}

// Nearest-rank percentile of sorted samples: the smallest sample with at
// least p% of the samples at or below it.
uint64_t exact_percentile(const std::vector<uint64_t>& sorted, double p) {
  const double n = static_cast<double>(sorted.size());
  const size_t rank = std::max<size_t>(1, static_cast<size_t>(std::ceil(p / 100.0 * n)));
  return sorted[rank - 1];
}

void check_against_exact(const std::vector<uint64_t>& samples) {
  Histogram h("ps", 1.0);
  for (uint64_t v : samples) h.record(v);
  std::vector<uint64_t> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  for (double p : {0.0, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 100.0}) {
    const double exact = static_cast<double>(exact_percentile(sorted, p));
    EXPECT_NEAR(h.percentile(p), exact, exact / 32.0) << "p" << p;
  }
  // min, max and mean are exact, not bucketed.
  EXPECT_EQ(h.min_raw(), sorted.front());
  EXPECT_EQ(h.max_raw(), sorted.back());
  EXPECT_EQ(h.count(), samples.size());
  uint64_t sum = 0;  // small enough to be exact in a double
  for (uint64_t v : samples) sum += v;
  EXPECT_DOUBLE_EQ(h.sum(), static_cast<double>(sum));
  EXPECT_DOUBLE_EQ(h.mean(), static_cast<double>(sum) / static_cast<double>(samples.size()));
}

TEST(Histogram, PercentilesWithinBucketErrorUniform) {
  std::mt19937_64 rng(1);
  std::vector<uint64_t> v;
  for (int i = 0; i < 20000; ++i) v.push_back(rng() % 1000000000);
  check_against_exact(v);
}

TEST(Histogram, PercentilesWithinBucketErrorLongTail) {
  // Latencies: mostly small, a few orders of magnitude larger.
  std::mt19937_64 rng(2);
  std::lognormal_distribution<double> dist(8.0, 2.0);
  std::vector<uint64_t> v;
  for (int i = 0; i < 20000; ++i) v.push_back(static_cast<uint64_t>(std::min(dist(rng), 1e12)));
  check_against_exact(v);
}

TEST(Histogram, PercentilesExactForSmallValues) {
  std::vector<uint64_t> v;
  for (uint64_t i = 1; i <= 50; ++i) v.push_back(i);
  Histogram h("x", 1.0);
  for (uint64_t x : v) h.record(x);
  EXPECT_EQ(h.percentile(50), 25.0);
  EXPECT_EQ(h.percentile(100), 50.0);
  EXPECT_EQ(h.percentile(0), 1.0);
  EXPECT_EQ(h.percentile(1), 1.0);   // rank ceil(0.5) = 1
  EXPECT_EQ(h.percentile(99), 50.0);  // rank ceil(49.5) = 50
  // Out-of-range p is clamped.
  EXPECT_EQ(h.percentile(-5), 1.0);
  EXPECT_EQ(h.percentile(500), 50.0);
}

// A percentile is never reported outside what was observed, even though the
// bucket midpoint may be.
TEST(Histogram, PercentileClampedToObservedRange) {
  Histogram h("ns", 1.0);
  h.record(1000001);  // bucket [999424, 1015807], midpoint 1007615.5
  for (double p : {0.0, 50.0, 100.0}) EXPECT_EQ(h.percentile(p), 1000001.0);
}

TEST(Histogram, ScaleConvertsReportedValues) {
  Histogram h("ns", 1000.0);  // recorded in ps, reported in ns
  h.record(1500);
  h.record(2500);
  EXPECT_EQ(h.unit(), "ns");
  EXPECT_EQ(h.min_raw(), 1500u);
  EXPECT_DOUBLE_EQ(h.min(), 1.5);
  EXPECT_DOUBLE_EQ(h.max(), 2.5);
  EXPECT_DOUBLE_EQ(h.mean(), 2.0);
  EXPECT_DOUBLE_EQ(h.sum(), 4.0);
  EXPECT_DOUBLE_EQ(h.percentile(0), 1.5);    // clamped to min
  EXPECT_DOUBLE_EQ(h.percentile(100), 2.5);  // clamped to max
}

TEST(StatsRegistry, SamePathSameObject) {
  StatsRegistry s;
  Counter& a = s.counter("dram.reads");
  a.add(3);
  EXPECT_EQ(&s.counter("dram.reads"), &a);
  EXPECT_EQ(s.counter("dram.reads").value(), 3u);
  Histogram& h = s.histogram("dram.lat", "ns", 1000.0);
  EXPECT_EQ(&s.histogram("dram.lat"), &h);
  double& v = s.value("dram.util");
  EXPECT_EQ(v, 0.0);
  EXPECT_EQ(&s.value("dram.util"), &v);
}

TEST(StatsRegistry, FindByKind) {
  StatsRegistry s;
  s.counter("a.c").add(2);
  s.histogram("a.h").record(5);
  s.value("a.v") = 0.5;
  ASSERT_NE(s.find_counter("a.c"), nullptr);
  EXPECT_EQ(s.find_counter("a.c")->value(), 2u);
  ASSERT_NE(s.find_histogram("a.h"), nullptr);
  EXPECT_EQ(s.find_histogram("a.h")->count(), 1u);
  ASSERT_NE(s.find_value("a.v"), nullptr);
  EXPECT_EQ(*s.find_value("a.v"), 0.5);
  // Lookups of the wrong kind or unknown paths find nothing (and create nothing).
  EXPECT_EQ(s.find_counter("a.h"), nullptr);
  EXPECT_EQ(s.find_histogram("a.v"), nullptr);
  EXPECT_EQ(s.find_value("a.c"), nullptr);
  EXPECT_EQ(s.find_counter("nope"), nullptr);
  EXPECT_FALSE(s.has("nope"));
  EXPECT_TRUE(s.has("a.v"));
  EXPECT_FALSE(s.has("a"));  // groups are not registered paths
  EXPECT_EQ(s.paths(), (std::vector<std::string>{"a.c", "a.h", "a.v"}));
}

TEST(StatsRegistry, NestedJson) {
  StatsRegistry s;
  s.counter("dram.reads").add(7);
  s.counter("dma0.ch0.bytes").add(4096);
  s.value("dram.utilization") = 0.25;
  Histogram& h = s.histogram("dram.read_latency_ns", "ns", 1000.0);
  h.record(80000);
  h.record(90000);
  s.counter("top").add(1);

  const nlohmann::json j = s.to_json();
  EXPECT_EQ(j["dram"]["reads"], 7);
  EXPECT_TRUE(j["dram"]["reads"].is_number_unsigned());
  EXPECT_EQ(j["dma0"]["ch0"]["bytes"], 4096);
  EXPECT_EQ(j["dram"]["utilization"], 0.25);
  EXPECT_EQ(j["top"], 1);
  const auto& hj = j["dram"]["read_latency_ns"];
  EXPECT_EQ(hj["unit"], "ns");
  EXPECT_EQ(hj["count"], 2);
  EXPECT_DOUBLE_EQ(hj["min"].get<double>(), 80.0);
  EXPECT_DOUBLE_EQ(hj["max"].get<double>(), 90.0);
  EXPECT_DOUBLE_EQ(hj["mean"].get<double>(), 85.0);
  EXPECT_DOUBLE_EQ(hj["sum"].get<double>(), 170.0);
  for (const char* k : {"p50", "p90", "p99"}) EXPECT_TRUE(hj.contains(k)) << k;
  EXPECT_EQ(j.size(), 3u);  // dram, dma0, top
}

// Path components are object keys even when they look like numbers (e.g. a
// firmware stat named "lat.0"), and a group may mix numeric and named children.
TEST(StatsRegistry, NumericPathComponentsStayObjectKeys) {
  StatsRegistry s;
  s.counter("cores.1.busy").add(2);
  s.counter("cores.0.busy").add(1);
  s.counter("cores.total").add(3);
  nlohmann::json j;
  ASSERT_NO_THROW(j = s.to_json());
  EXPECT_TRUE(j["cores"].is_object()) << j.dump();
  EXPECT_EQ(j["cores"]["1"]["busy"], 2) << j.dump();
  EXPECT_EQ(j["cores"]["total"], 3) << j.dump();
}

TEST(StatsRegistry, EmptyRegistryIsEmptyObject) {
  StatsRegistry s;
  EXPECT_EQ(s.to_json(), nlohmann::json::object());
}

TEST(StatsRegistry, KindConflictThrows) {
  StatsRegistry s;
  s.counter("x.y");
  EXPECT_THROW(s.histogram("x.y"), std::invalid_argument);
  EXPECT_THROW(s.value("x.y"), std::invalid_argument);
  s.value("x.v");
  EXPECT_THROW(s.counter("x.v"), std::invalid_argument);
  EXPECT_THROW(s.histogram("x.v"), std::invalid_argument);
  s.histogram("x.h");
  EXPECT_THROW(s.counter("x.h"), std::invalid_argument);
  EXPECT_THROW(s.value("x.h"), std::invalid_argument);
}

TEST(StatsRegistry, LeafCannotBeGroupAndViceVersa) {
  StatsRegistry s;
  s.counter("dram.reads");
  // "dram.reads" is a leaf: nothing can live under it.
  EXPECT_THROW(s.counter("dram.reads.hits"), std::invalid_argument);
  EXPECT_THROW(s.value("dram.reads.x.y"), std::invalid_argument);
  // "dram" is a group: it cannot become a leaf.
  EXPECT_THROW(s.counter("dram"), std::invalid_argument);
  EXPECT_THROW(s.histogram("dram"), std::invalid_argument);
  // A shared name prefix without the dot is not a conflict.
  EXPECT_NO_THROW(s.counter("dram.readsx"));
  EXPECT_NO_THROW(s.counter("dra"));
  EXPECT_NO_THROW(s.counter("dram2.reads"));
  // Failed registrations leave nothing behind.
  EXPECT_FALSE(s.has("dram.reads.hits"));
  EXPECT_FALSE(s.has("dram"));
  EXPECT_NO_THROW(s.to_json());
}

TEST(StatsRegistry, MalformedPathsThrow) {
  StatsRegistry s;
  for (const char* p : {"", ".a", "a.", "a..b", "."}) {
    EXPECT_THROW(s.counter(p), std::invalid_argument) << "'" << p << "'";
    EXPECT_THROW(s.histogram(p), std::invalid_argument) << "'" << p << "'";
    EXPECT_THROW(s.value(p), std::invalid_argument) << "'" << p << "'";
  }
  EXPECT_TRUE(s.paths().empty());
}

}  // namespace
}  // namespace smmu_vp

// DramCore: timing (bandwidth never exceeded, latency never undercut), its
// statistics and the backing store.
#include "memory/dram_core.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>

#include <gtest/gtest.h>

namespace smmu_vp {
namespace {

// Bandwidth 32 B/ns keeps transfer times exact: 64 bytes take 2000 ps.
DramConfig small_config() {
  DramConfig c;
  c.size = 1 << 20;
  c.read_latency_ns = 80.0;
  c.write_latency_ns = 60.0;
  c.bandwidth_gbps = 32.0;
  return c;
}

TEST(DramCore, RejectsBadConfig) {
  StatsRegistry stats;
  DramConfig c = small_config();
  c.size = 0;
  EXPECT_THROW(DramCore("d0", c, stats), std::invalid_argument);
  c = small_config();
  c.bandwidth_gbps = 0.0;
  EXPECT_THROW(DramCore("d1", c, stats), std::invalid_argument);
}

TEST(DramCore, IdleReadAndWriteLatency) {
  StatsRegistry stats;
  DramCore d("dram", small_config(), stats);
  // Idle bus: completion = arrival + latency + transfer time.
  EXPECT_EQ(d.access(0, 1000, false, 64), 1000u + 80000u + 2000u);
  EXPECT_EQ(d.access(0, 500000, true, 64), 500000u + 60000u + 2000u);
  EXPECT_EQ(d.access(0, 900000, false, 4096), 900000u + 80000u + 128000u);
}

TEST(DramCore, QueuedAccessWaitsForTheBus) {
  StatsRegistry stats;
  DramCore d("dram", small_config(), stats);
  EXPECT_EQ(d.access(0, 0, false, 64), 82000u);
  // Same arrival: gets the bus when the first releases it, at 2000 ps.
  EXPECT_EQ(d.access(0, 0, false, 64), 2000u + 82000u);
  EXPECT_EQ(d.access(0, 0, true, 64), 4000u + 62000u);
  const Histogram* wait = stats.find_histogram("dram.queue_wait_ns");
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->count(), 3u);
  EXPECT_DOUBLE_EQ(wait->max(), 4.0);  // reported in ns
  EXPECT_DOUBLE_EQ(wait->sum(), 6.0);
}

// Back-to-back accesses saturate the bus but never exceed its bandwidth.
TEST(DramCore, BandwidthBoundBackToBack) {
  StatsRegistry stats;
  const DramConfig cfg = small_config();
  DramCore d("dram", cfg, stats);
  Ps last = 0;
  uint64_t bytes = 0;
  for (int i = 0; i < 5000; ++i) {
    last = std::max(last, d.access(0, 0, i % 3 == 0, 256));
    bytes += 256;
  }
  const double achieved = static_cast<double>(bytes) / ps_to_ns(last);
  EXPECT_LE(achieved, cfg.bandwidth_gbps);
  EXPECT_GT(achieved, 0.95 * cfg.bandwidth_gbps);  // and the bus was kept busy
  EXPECT_EQ(d.bus().busy_time(), bytes * 1000 / 32);
}

// Random sizes, kinds and out-of-order arrivals: bandwidth is still bounded
// and no access completes faster than latency plus its own transfer.
TEST(DramCore, BandwidthAndLatencyBoundsRandom) {
  StatsRegistry stats;
  const DramConfig cfg = small_config();
  DramCore d("dram", cfg, stats);
  std::mt19937_64 rng(3);
  Ps first_arrival = UINT64_MAX, last_done = 0;
  uint64_t bytes = 0;
  for (int i = 0; i < 5000; ++i) {
    const Ps arrival = rng() % 100000000;  // within 100 us, no order
    const bool write = rng() % 2;
    const uint64_t len = 1 + rng() % 4096;
    const Ps done = d.access(0, arrival, write, len);
    const Ps min_latency = ns_to_ps(write ? cfg.write_latency_ns : cfg.read_latency_ns) +
                           transfer_time_ps(len, cfg.bandwidth_gbps);
    ASSERT_GE(done - arrival, min_latency) << "access " << i;
    first_arrival = std::min(first_arrival, arrival);
    last_done = std::max(last_done, done);
    bytes += len;
  }
  EXPECT_LE(static_cast<double>(bytes) / ps_to_ns(last_done - first_arrival), cfg.bandwidth_gbps);
}

TEST(DramCore, StatsCounters) {
  StatsRegistry stats;
  DramCore d("mem", small_config(), stats);
  d.access(0, 0, false, 64);
  d.access(0, 0, false, 64);
  d.access(0, 0, false, 32);
  d.access(0, 0, true, 128);
  d.access(0, 0, true, 128);
  EXPECT_EQ(stats.find_counter("mem.reads")->value(), 3u);
  EXPECT_EQ(stats.find_counter("mem.writes")->value(), 2u);
  EXPECT_EQ(stats.find_counter("mem.bytes_read")->value(), 160u);
  EXPECT_EQ(stats.find_counter("mem.bytes_written")->value(), 256u);
  const Histogram* rl = stats.find_histogram("mem.read_latency_ns");
  const Histogram* wl = stats.find_histogram("mem.write_latency_ns");
  ASSERT_NE(rl, nullptr);
  ASSERT_NE(wl, nullptr);
  EXPECT_EQ(rl->count(), 3u);
  EXPECT_EQ(wl->count(), 2u);
  EXPECT_DOUBLE_EQ(rl->min(), 82.0);  // first read: 80 ns + 2 ns transfer, in ns
  EXPECT_GE(wl->min(), 60.0);
  EXPECT_EQ(d.bus().requests(), 5u);
}

TEST(DramCore, FinalizeDerivedFigures) {
  StatsRegistry stats;
  DramCore d("dram", small_config(), stats);
  d.access(0, 0, false, 3200);  // 100 ns of bus time
  d.access(0, 0, true, 3200);
  d.finalize(1000000);  // 1 us run
  EXPECT_DOUBLE_EQ(*stats.find_value("dram.configured_bandwidth_gbps"), 32.0);
  EXPECT_DOUBLE_EQ(*stats.find_value("dram.bandwidth_gbps"), 6400.0 / 1000.0);
  EXPECT_DOUBLE_EQ(*stats.find_value("dram.utilization"), 0.2);
}

TEST(DramCore, FinalizeAtTimeZeroOnlyRecordsConfig) {
  StatsRegistry stats;
  DramCore d("dram", small_config(), stats);
  d.finalize(0);  // no division by zero
  EXPECT_NE(stats.find_value("dram.configured_bandwidth_gbps"), nullptr);
  EXPECT_EQ(stats.find_value("dram.bandwidth_gbps"), nullptr);
  EXPECT_EQ(stats.find_value("dram.utilization"), nullptr);
}

TEST(DramCore, BackingStoreZeroedAndWritable) {
  StatsRegistry stats;
  const DramConfig cfg = small_config();
  DramCore d("dram", cfg, stats);
  uint8_t* m = d.data();
  ASSERT_NE(m, nullptr);
  for (uint64_t off : {uint64_t{0}, uint64_t{4095}, uint64_t{4096}, cfg.size / 2, cfg.size - 1})
    EXPECT_EQ(m[off], 0) << off;
  m[0] = 0xAB;
  m[cfg.size - 1] = 0xCD;
  EXPECT_EQ(d.data()[0], 0xAB);
  EXPECT_EQ(d.data()[cfg.size - 1], 0xCD);
}

TEST(DramCore, LargeDramCostsNothingUntilTouched) {
  // 4 GiB reserved lazily: construction must not need the memory.
  StatsRegistry stats;
  DramConfig cfg = small_config();
  cfg.size = 4ull << 30;
  DramCore d("big", cfg, stats);
  EXPECT_EQ(d.data()[cfg.size - 1], 0);
}

TEST(DramCore, Contains) {
  StatsRegistry stats;
  const DramConfig cfg = small_config();
  DramCore d("dram", cfg, stats);
  EXPECT_TRUE(d.contains(0, cfg.size));
  EXPECT_TRUE(d.contains(cfg.size - 1, 1));
  EXPECT_TRUE(d.contains(100, 0));
  EXPECT_FALSE(d.contains(0, cfg.size + 1));
  EXPECT_FALSE(d.contains(cfg.size - 1, 2));
  EXPECT_FALSE(d.contains(cfg.size, 0));
  EXPECT_FALSE(d.contains(cfg.size, 1));
  EXPECT_FALSE(d.contains(UINT64_MAX, 1));
  EXPECT_FALSE(d.contains(8, UINT64_MAX));  // no overflow in offset + len
}

}  // namespace
}  // namespace smmu_vp

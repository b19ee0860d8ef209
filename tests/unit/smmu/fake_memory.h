// Test double for the SMMU cores' MemoryPort: a little-endian byte array at
// [base, base + size) answering every access after a fixed latency, with
// ranges that answer with an external abort (as a bus error response would).
// Accesses outside the array abort too. Every access is logged, so tests can
// check what was read, where, and when.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "common/sim_time.h"
#include "smmu/memory_port.h"

namespace smmu_vp::smmu::test {

class FakeMemory : public MemoryPort {
 public:
  struct Access {
    uint64_t pa;
    unsigned len;
    bool write;
    Ps at;
    Ps done;
    bool ok;
  };

  FakeMemory(uint64_t base, uint64_t size, Ps latency)
      : base_(base), latency_(latency), bytes_(static_cast<size_t>(size), 0) {}

  // --- MemoryPort: timed accesses -------------------------------------------
  bool read(uint64_t pa, void* data, unsigned len, Ps at, Ps* done) override {
    const bool ok = accessible(pa, len);
    if (ok)
      std::memcpy(data, &bytes_[static_cast<size_t>(pa - base_)], len);
    else
      std::memset(data, 0, len);
    *done = at + latency_;
    log_.push_back({pa, len, false, at, *done, ok});
    return ok;
  }

  bool write(uint64_t pa, const void* data, unsigned len, Ps at, Ps* done) override {
    const bool ok = accessible(pa, len);
    if (ok) std::memcpy(&bytes_[static_cast<size_t>(pa - base_)], data, len);
    *done = at + latency_;
    log_.push_back({pa, len, true, at, *done, ok});
    return ok;
  }

  // --- Configuration ----------------------------------------------------------
  void set_latency(Ps latency) { latency_ = latency; }
  Ps latency() const { return latency_; }
  // Any access touching [lo, lo + size) aborts.
  void add_error_range(uint64_t lo, uint64_t size) { errors_.push_back({lo, size}); }
  void clear_error_ranges() { errors_.clear(); }

  uint64_t base() const { return base_; }
  uint64_t size() const { return bytes_.size(); }
  bool contains(uint64_t pa, uint64_t len) const {
    return pa >= base_ && len <= bytes_.size() && pa - base_ <= bytes_.size() - len;
  }

  // --- Untimed backdoor (not logged, ignores error ranges) -------------------
  void poke(uint64_t pa, const void* data, size_t len) {
    check(pa, len);
    std::memcpy(&bytes_[static_cast<size_t>(pa - base_)], data, len);
  }
  void peek(uint64_t pa, void* data, size_t len) const {
    check(pa, len);
    std::memcpy(data, &bytes_[static_cast<size_t>(pa - base_)], len);
  }
  void poke64(uint64_t pa, uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
    poke(pa, b, 8);
  }
  uint64_t peek64(uint64_t pa) const {
    uint8_t b[8];
    peek(pa, b, 8);
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
    return v;
  }
  void fill(uint64_t pa, uint8_t value, size_t len) {
    check(pa, len);
    std::memset(&bytes_[static_cast<size_t>(pa - base_)], value, len);
  }

  // --- Access log ---------------------------------------------------------------
  const std::vector<Access>& log() const { return log_; }
  void clear_log() { log_.clear(); }
  size_t reads() const {
    return static_cast<size_t>(std::count_if(log_.begin(), log_.end(), [](const Access& a) { return !a.write; }));
  }
  size_t writes() const { return log_.size() - reads(); }

 private:
  struct Range {
    uint64_t lo, size;
  };

  bool accessible(uint64_t pa, unsigned len) const {
    if (!contains(pa, len)) return false;
    for (const Range& r : errors_)
      if (pa < r.lo + r.size && r.lo < pa + len) return false;
    return true;
  }
  void check(uint64_t pa, size_t len) const {
    if (!contains(pa, len)) throw std::out_of_range("FakeMemory: backdoor access outside the array");
  }

  uint64_t base_;
  Ps latency_;
  std::vector<uint8_t> bytes_;
  std::vector<Range> errors_;
  std::vector<Access> log_;
};

}  // namespace smmu_vp::smmu::test

// Sleeping polls of device registers (hal_read_poll32, CpuCore::read_poll;
// docs/architecture.md, "Polling a register").
//
// A core that polls a register the plain way synchronises with the kernel at
// every read. A sleeping poll instead leaves a RegisterWatch with the device
// behind the address; the device evaluates the poll's condition on every new
// value of the register, at the simulated time of the change, and wakes the
// core only when a read would end the poll. The core then resumes at the
// first read of the loop's grid that would see it: same times, same values,
// same statistics as the loop.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include <systemc>

namespace smmu_vp {

// A poll of one register, as the device sees it.
class RegisterWatch {
 public:
  RegisterWatch(uint64_t offset, unsigned size, std::function<bool(uint64_t)> ends_poll)
      : offset_(offset), size_(size), ends_poll_(std::move(ends_poll)) {}
  virtual ~RegisterWatch() = default;
  RegisterWatch(const RegisterWatch&) = delete;
  RegisterWatch& operator=(const RegisterWatch&) = delete;

  uint64_t offset() const { return offset_; }  // within the device's register block
  unsigned size() const { return size_; }
  // Whether a read returning `value` would end the poll.
  bool ends_poll(uint64_t value) const { return ends_poll_(value); }
  // The register took such a value at `delay` from now: the changing
  // process's own time and rank (common/tlm_time.h, TimeRank::until).
  virtual void ended(const sc_core::sc_time& delay) = 0;

 private:
  uint64_t offset_;
  unsigned size_;
  std::function<bool(uint64_t)> ends_poll_;
};

// A device whose registers a core can poll asleep.
class WatchableRegisters {
 public:
  virtual ~WatchableRegisters() = default;
  // Whether [offset, offset + size) can be watched: a read of it takes the
  // same time whatever else happens and changes nothing but the reader's
  // time (no counter, no side effect), and every change of the value it
  // returns is reported to its watches.
  virtual bool watchable(uint64_t offset, unsigned size) const = 0;
  virtual void watch(RegisterWatch& w) = 0;
  virtual void unwatch(RegisterWatch& w) = 0;
};

// The interconnect as a polling core reaches it.
class RegisterPollBus {
 public:
  virtual ~RegisterPollBus() = default;
  // The device behind [addr, addr + size) when it can watch it, with the
  // register's offset in it; nullptr otherwise (the core polls the plain way).
  virtual WatchableRegisters* watchable(uint64_t addr, unsigned size, uint64_t* offset) = 0;
  // `n` reads a poll made asleep: counted as made.
  virtual void count_reads_slept_through(uint64_t n) = 0;
};

// A device's watches, checked after anything that may change a register.
class RegisterWatchList {
 public:
  bool empty() const { return watches_.empty(); }
  size_t size() const { return watches_.size(); }
  void add(RegisterWatch& w) { watches_.push_back(&w); }
  void remove(RegisterWatch& w) { watches_.erase(std::remove(watches_.begin(), watches_.end(), &w), watches_.end()); }
  // `read(offset, size)`: the value a read would return now; the change
  // happened `delay` from now.
  template <typename Read>
  void check(Read&& read, const sc_core::sc_time& delay) const {
    for (RegisterWatch* w : watches_)
      if (w->ends_poll(read(w->offset(), w->size()))) w->ended(delay);
  }

 private:
  std::vector<RegisterWatch*> watches_;
};

}  // namespace smmu_vp

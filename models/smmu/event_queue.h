// Event records (IHI 0070 7.3) and the event queue's producer side (7.4):
// where a record goes, what happens when the queue is full (the record is
// lost and PROD.OVFLG is toggled to differ from CONS.OVACKFLG), and when the
// queue cannot be written at all.
#pragma once

#include <array>
#include <cstdint>

#include "common/sim_time.h"
#include "smmu/descriptors.h"
#include "smmu/memory_port.h"

namespace smmu_vp::smmu {

struct EventRecord {
  EventId id = EventId::kNone;
  uint32_t sid = 0;
  bool ssv = false;
  uint32_t ssid = 0;
  // Transaction attributes (dword 1).
  uint16_t stag = 0;
  bool stall = false;
  bool pnu = false;  // privileged
  bool ind = false;  // instruction
  bool rnw = true;   // 1 = read
  bool s2 = false;   // the fault was at stage 2
  FaultClass cls = FaultClass::kInput;
  bool ttrnw = true; // for CLASS=TT: the table access was a read
  uint64_t input_addr = 0;
  uint64_t ipa = 0;  // [51:12], for stage-2 faults

  static constexpr unsigned kBytes = 32;
  std::array<uint64_t, 4> encode() const;
  static EventRecord decode(const std::array<uint64_t, 4>& w);
};

// Queue pointers as the registers hold them: the low log2size bits index the
// queue, the next bit is the wrap bit, bit 31 is OVFLG (PROD) / OVACKFLG (CONS).
struct QueuePointers {
  static constexpr uint32_t kOverflowFlag = 1u << 31;

  explicit QueuePointers(unsigned log2size) : log2size(log2size) {}
  unsigned log2size;

  uint32_t index(uint32_t p) const { return p & ((1u << log2size) - 1); }
  uint32_t wrap(uint32_t p) const { return (p >> log2size) & 1u; }
  uint32_t index_and_wrap(uint32_t p) const { return p & ((2u << log2size) - 1); }
  bool empty(uint32_t prod, uint32_t cons) const { return index_and_wrap(prod) == index_and_wrap(cons); }
  bool full(uint32_t prod, uint32_t cons) const {
    return index(prod) == index(cons) && wrap(prod) != wrap(cons);
  }
  // prod advanced by one entry, keeping its flag bits.
  uint32_t next(uint32_t p) const {
    return (p & ~((2u << log2size) - 1)) | ((index_and_wrap(p) + 1) & ((2u << log2size) - 1));
  }
};

class EventQueueWriter {
 public:
  struct Queue {
    bool enabled = false;  // CR0.EVTQEN acknowledged
    uint64_t base = 0;     // EVENTQ_BASE.ADDR
    unsigned log2size = 0; // EVENTQ_BASE.LOG2SIZE
    uint32_t prod = 0;     // EVENTQ_PROD, with OVFLG
    uint32_t cons = 0;     // EVENTQ_CONS, with OVACKFLG
  };
  enum class Outcome {
    kWritten,      // record in memory, prod advanced
    kLostFull,     // queue full: record discarded, overflow flagged
    kLostDisabled, // queue not enabled: record discarded
    kAbort,        // the write got an external abort (GERROR.EVENTQ_ABT_ERR)
  };
  struct Result {
    Outcome outcome;
    uint32_t prod;  // new EVENTQ_PROD value
    Ps done;        // when the record write completed
  };

  explicit EventQueueWriter(MemoryPort& mem) : mem_(mem) {}

  Result post(const Queue& q, const EventRecord& rec, Ps at);

 private:
  MemoryPort& mem_;
};

}  // namespace smmu_vp::smmu

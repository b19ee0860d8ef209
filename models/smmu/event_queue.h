// Event records (IHI 0070 7.3) and the event queue's producer side (7.4):
// where a record goes, and whether it could be written at all. A record that
// finds the queue full is lost, never overwrites one; flagging the overflow
// (EVENTQ_PROD.OVFLG) is the register file's job (signal_eventq_overflow).
#pragma once

#include <array>
#include <cstdint>

#include "common/sim_time.h"
#include "smmu/descriptors.h"
#include "smmu/memory_port.h"
#include "smmu/registers.h"

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
  // F_STE_FETCH, F_CD_FETCH, F_WALK_EABT: the address of the access that
  // aborted, [51:3], in dword 3 where other records keep the IPA.
  uint64_t fetch_addr = 0;
  bool has_fetch_addr() const {
    return id == EventId::kSteFetch || id == EventId::kCdFetch || id == EventId::kWalkEabt;
  }

  static constexpr unsigned kBytes = 32;
  std::array<uint64_t, 4> encode() const;
  static EventRecord decode(const std::array<uint64_t, 4>& w);
};

class EventQueueWriter {
 public:
  struct Queue {
    bool enabled = false;  // CR0.EVTQEN acknowledged
    uint64_t base = 0;     // EVENTQ_BASE.ADDR
    QueueIndex prod{0, 0}; // EVENTQ_PROD.WR, with the queue's LOG2SIZE
    QueueIndex cons{0, 0}; // EVENTQ_CONS.RD
  };
  enum class Outcome {
    kWritten,      // record in memory, prod advanced
    kLostFull,     // queue full: record discarded (the caller flags the overflow)
    kLostDisabled, // queue not enabled: record discarded
    kAbort,        // the write got an external abort (GERROR.EVENTQ_ABT_ERR)
  };
  struct Result {
    Outcome outcome;
    QueueIndex prod;  // new EVENTQ_PROD.WR
    Ps done;        // when the record write completed
  };

  explicit EventQueueWriter(MemoryPort& mem) : mem_(mem) {}

  Result post(const Queue& q, const EventRecord& rec, Ps at);
  // The same for a record of `bytes` (a power of two) in any queue the SMMU
  // produces into: the PRI queue's 16-byte page requests too.
  Result post_record(const Queue& q, const void* record, unsigned bytes, Ps at);

 private:
  MemoryPort& mem_;
};

}  // namespace smmu_vp::smmu

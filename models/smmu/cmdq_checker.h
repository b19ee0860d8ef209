// A debug check of how software fills a command queue (docs/smmu.md,
// "Command-queue checker"), costing host time only, off unless
// platform.smmu.cmdq_check is set:
// - PROD never moves backwards, nor past CONS plus the queue's size (IHI
//   0070 3.5: a queue holds at most its size of commands);
// - every command the SMMU consumes was written after the SMMU last consumed
//   that slot. Once a command is consumed the checker overwrites its slot,
//   untimed, with a poison command no driver writes, and keeps what it held;
//   a poisoned slot consumed again was never rewritten, and the SMMU is given
//   what it held, the stale command real hardware would read.
// Each violation is counted (<queue>.check_errors, a problem in the run's
// summary) and the first few are described, naming the queue, the slot and
// the process that last wrote PROD.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/stats.h"
#include "smmu/memory_port.h"
#include "smmu/registers.h"

namespace smmu_vp::smmu {

class CmdqChecker {
 public:
  // `queue` names the queue in reports and statistics (e.g. "smmu.cmdq");
  // `untimed` reaches memory without simulated time (debug transport).
  CmdqChecker(std::string queue, MemoryPort& untimed, StatsRegistry& stats);

  // Software wrote PROD, from `old_prod` to `new_prod`, while CONS was `cons`;
  // `writer` is who wrote it.
  void prod_written(QueueIndex old_prod, QueueIndex new_prod, QueueIndex cons, const std::string& writer);
  // The SMMU read `words` from slot `slot` of a queue of `entries` and is
  // about to decode them: a poisoned slot is a violation, and `words` become
  // the stale command it held.
  void check(uint32_t slot, uint32_t entries, uint64_t words[2]);
  // The command at `addr` was accepted: its slot is poisoned. (A command
  // refused with CERROR_ILL stays as it is, for the driver to read.)
  void consumed(uint64_t addr);

  uint64_t violations() const { return violations_; }
  const std::vector<std::string>& reports() const { return reports_; }

  // The poison: opcode 0xFF (reserved, IHI 0070 4.1) and a pattern no
  // driver builds.
  static constexpr uint64_t kPoison0 = 0x5EC0'DE00'DEAD'00FFull;
  static constexpr uint64_t kPoison1 = 0xC0FF'EE00'5EC0'DE00ull;

 private:
  void violation(std::string what);

  std::string queue_;
  MemoryPort& mem_;
  StatsRegistry& stats_;
  Counter* errors_ = nullptr;  // created at the first violation: a clean run's statistics keep their shape
  std::string last_writer_ = "nobody yet";
  std::vector<std::array<uint64_t, 2>> held_;  // per slot: the command consumed there last
  uint64_t violations_ = 0;
  std::vector<std::string> reports_;
};

}  // namespace smmu_vp::smmu

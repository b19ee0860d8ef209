#include "smmu/cmdq_checker.h"

#include <sstream>

namespace smmu_vp::smmu {

namespace {
constexpr size_t kMaxReports = 8;  // the first few say what went wrong; the count says how often

std::string hex(uint32_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}
}  // namespace

CmdqChecker::CmdqChecker(std::string queue, MemoryPort& untimed, StatsRegistry& stats)
    : queue_(std::move(queue)), mem_(untimed), stats_(stats) {}

void CmdqChecker::violation(std::string what) {
  if (!errors_) errors_ = &stats_.counter(queue_ + ".check_errors");
  errors_->add();
  ++violations_;
  if (reports_.size() < kMaxReports) reports_.push_back(queue_ + ": " + std::move(what));
}

void CmdqChecker::prod_written(QueueIndex old_prod, QueueIndex new_prod, QueueIndex cons, const std::string& writer) {
  const uint32_t entries = cons.entries();
  const uint32_t span = 2 * entries;  // index and wrap bit
  const uint32_t advance = (new_prod.value() - old_prod.value()) & (span - 1);
  const uint32_t used = queue_used(old_prod, cons);
  if (used + advance > entries) {
    if (advance > entries)
      // More than a whole queue forward cannot be told from backwards.
      violation(writer + " moved PROD backwards (or more than the queue's " + std::to_string(entries) +
                " entries forward), from " + hex(old_prod.value()) + " to " + hex(new_prod.value()) + " (CONS " +
                hex(cons.value()) + ")");
    else
      violation(writer + " moved PROD to " + hex(new_prod.value()) + ", past CONS " + hex(cons.value()) +
                " plus the queue's " + std::to_string(entries) + " entries");
  }
  last_writer_ = writer;
}

void CmdqChecker::check(uint32_t slot, uint32_t entries, uint64_t words[2]) {
  if (held_.size() != entries) held_.assign(entries, {kPoison0, kPoison1});
  if (words[0] == kPoison0 && words[1] == kPoison1) {
    violation("slot " + std::to_string(slot) +
              " consumed without a command written since the SMMU last consumed it (PROD last written by " +
              last_writer_ + ")");
    words[0] = held_[slot][0];
    words[1] = held_[slot][1];
  }
  held_[slot] = {words[0], words[1]};
}

void CmdqChecker::consumed(uint64_t addr) {
  const uint64_t poison[2] = {kPoison0, kPoison1};
  Ps done;
  mem_.write(addr, poison, sizeof poison, 0, &done);
}

}  // namespace smmu_vp::smmu

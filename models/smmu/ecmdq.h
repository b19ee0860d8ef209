// ECMDQ interfaces (SMMUv3.3, IHI 0070 3.5.6, 6.3.107-6.3.109): per-queue
// ECMDQ_BASE/PROD/CONS in the command queue control pages, which this model
// places right after page 1 (registers.h). A queue is enabled when PROD.EN and
// CONS.ENACK are both 1; on an error the SMMU toggles CONS.ERR and the queue
// stops until software makes PROD.ERRACK equal to it.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "smmu/features.h"
#include "smmu/registers.h"

namespace smmu_vp::smmu {

class EcmdqRegisters {
 public:
  explicit EcmdqRegisters(const SmmuFeatures& features);

  unsigned queues() const { return static_cast<unsigned>(q_.size()); }
  // The register-space window of the control pages.
  uint64_t window_base() const { return reg::kEcmdqPagesOffset; }
  uint64_t window_size() const { return uint64_t{pages_} * reg::kPageSize; }
  bool contains(uint64_t off) const { return off >= window_base() && off - window_base() < window_size(); }
  // Whether a window offset is a queue's CONS register.
  bool is_cons(uint64_t off) const {
    unsigned q;
    uint64_t r;
    return decode(off, &q, &r) && r == reg::kEcmdqCons;
  }

  // 32- and 64-bit accesses at window offsets; *ok false for a bad size or
  // alignment. Locations that are not queue registers are RES0.
  uint64_t read(uint64_t off, unsigned size, bool* ok) const;
  void write(uint64_t off, unsigned size, uint64_t value, bool* ok);

  // Called after software moved a queue's PROD (with the old and new WR) or
  // changed its enable or error acknowledge.
  void set_listener(std::function<void(unsigned q, uint32_t old_wr, uint32_t new_wr)> fn) {
    listener_ = std::move(fn);
  }

  // ---- SMMU side
  bool enabled(unsigned q) const;
  uint64_t base_addr(unsigned q) const;
  unsigned log2size(unsigned q) const;  // capped at IDR1.CMDQS
  QueueIndex prod(unsigned q) const { return QueueIndex(log2size(q), q_[q].prod); }
  QueueIndex cons(unsigned q) const { return QueueIndex(log2size(q), q_[q].cons); }
  void set_cons(unsigned q, uint32_t index);  // RD with wrap; ENACK and ERR kept
  // An error is pending while CONS.ERR differs from PROD.ERRACK.
  bool error_pending(unsigned q) const;
  // Toggles CONS.ERR with the reason (reg::cerror); false if already pending.
  bool raise_error(unsigned q, uint32_t reason);

 private:
  struct Queue {
    uint64_t base = 0;
    uint32_t prod = 0;  // EN, ERRACK, WR as written
    uint32_t cons = 0;  // ENACK, ERR_REASON, ERR, RD
  };
  // Queue and register of a window offset; false when it is none.
  bool decode(uint64_t off, unsigned* q, uint64_t* reg) const;
  uint32_t read32(uint64_t off) const;
  void write32(uint64_t off, uint32_t v);

  SmmuFeatures f_;
  unsigned pages_;
  std::vector<Queue> q_;
  std::function<void(unsigned, uint32_t, uint32_t)> listener_;
};

}  // namespace smmu_vp::smmu

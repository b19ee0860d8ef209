#include "smmu/ecmdq.h"

#include <algorithm>

namespace smmu_vp::smmu {

using namespace reg;

EcmdqRegisters::EcmdqRegisters(const SmmuFeatures& features)
    : f_(features), pages_(features.ecmdq_pages()), q_(features.ecmdq_pages() * features.ecmdq_queues_per_page()) {}

bool EcmdqRegisters::decode(uint64_t off, unsigned* q, uint64_t* r) const {
  if (!contains(off)) return false;
  const uint64_t rel = off - window_base();
  const unsigned page = static_cast<unsigned>(rel / kPageSize);
  const uint64_t stride = ecmdq_queue_stride(f_.ecmdq_log2_queues);
  const uint64_t in_page = rel % kPageSize;
  *q = page * f_.ecmdq_queues_per_page() + static_cast<unsigned>(in_page / stride);
  *r = in_page % stride;
  return *r == kEcmdqBase || *r == kEcmdqBase + 4 || *r == kEcmdqProd || *r == kEcmdqCons;
}

bool EcmdqRegisters::enabled(unsigned q) const {
  return ecmdq_prod::kEn.test(q_[q].prod) && ecmdq_cons::kEnAck.test(q_[q].cons);
}

uint64_t EcmdqRegisters::base_addr(unsigned q) const {
  // ADDR[55:5], aligned to the queue's size (IHI 0070 6.3.107).
  const uint64_t bytes = std::max<uint64_t>(16ull << log2size(q), 32);
  return queue_base::kAddr.get(q_[q].base) << queue_base::kAddr.lo & ~(bytes - 1);
}

unsigned EcmdqRegisters::log2size(unsigned q) const {
  return std::min<unsigned>(static_cast<unsigned>(queue_base::kLog2Size.get(q_[q].base)), f_.cmdqs);
}

void EcmdqRegisters::set_cons(unsigned q, uint32_t index) {
  const uint32_t keep = ecmdq_cons::kEnAck.mask32() | ecmdq_cons::kErrReason.mask32() | ecmdq_cons::kErr.mask32();
  q_[q].cons = (q_[q].cons & keep) | (index & QueueIndex::span_mask(log2size(q)));
}

bool EcmdqRegisters::error_pending(unsigned q) const {
  return ecmdq_cons::kErr.test(q_[q].cons) != ecmdq_prod::kErrAck.test(q_[q].prod);
}

bool EcmdqRegisters::raise_error(unsigned q, uint32_t reason) {
  if (error_pending(q)) return false;
  uint32_t c = q_[q].cons ^ ecmdq_cons::kErr.mask32();
  c = (c & ~ecmdq_cons::kErrReason.mask32()) | ecmdq_cons::kErrReason.place(reason);
  q_[q].cons = c;
  return true;
}

uint32_t EcmdqRegisters::read32(uint64_t off) const {
  unsigned q;
  uint64_t r;
  if (!decode(off, &q, &r)) return 0;
  switch (r) {
    case kEcmdqBase: return static_cast<uint32_t>(q_[q].base);
    case kEcmdqBase + 4: return static_cast<uint32_t>(q_[q].base >> 32);
    case kEcmdqProd: return q_[q].prod;
    case kEcmdqCons: return q_[q].cons;
    default: return 0;
  }
}

void EcmdqRegisters::write32(uint64_t off, uint32_t v) {
  unsigned q;
  uint64_t r;
  if (!decode(off, &q, &r)) return;  // RES0: writes ignored
  Queue& s = q_[q];
  const bool idle = !ecmdq_prod::kEn.test(s.prod) && !ecmdq_cons::kEnAck.test(s.cons);
  switch (r) {
    case kEcmdqBase:
      if (idle) s.base = (s.base & ~0xFFFFFFFFull) | v;  // only while the queue is off
      return;
    case kEcmdqBase + 4:
      if (idle) s.base = (s.base & 0xFFFFFFFFull) | (static_cast<uint64_t>(v) << 32);
      return;
    case kEcmdqCons:
      if (idle) s.cons = (s.cons & ~ecmdq_cons::kRd.mask32()) | (v & ecmdq_cons::kRd.mask32());  // RD only
      return;
    case kEcmdqProd: {
      const uint32_t old_wr = s.prod & QueueIndex::span_mask(log2size(q));
      s.prod = v & (ecmdq_prod::kEn.mask32() | ecmdq_prod::kErrAck.mask32() | ecmdq_prod::kWr.mask32());
      // The enable handshake completes at once (IHI 0070 6.3.109: ENACK follows EN).
      const uint32_t enack = ecmdq_prod::kEn.test(s.prod) ? ecmdq_cons::kEnAck.mask32() : 0;
      s.cons = (s.cons & ~ecmdq_cons::kEnAck.mask32()) | enack;
      if (listener_) listener_(q, old_wr, s.prod & QueueIndex::span_mask(log2size(q)));
      return;
    }
    default: return;
  }
}

uint64_t EcmdqRegisters::read(uint64_t off, unsigned size, bool* ok) const {
  *ok = (size == 4 || size == 8) && off % size == 0;
  if (!*ok) return 0;
  uint64_t v = read32(off);
  if (size == 8) v |= static_cast<uint64_t>(read32(off + 4)) << 32;
  return v;
}

void EcmdqRegisters::write(uint64_t off, unsigned size, uint64_t value, bool* ok) {
  *ok = (size == 4 || size == 8) && off % size == 0;
  if (!*ok) return;
  write32(off, static_cast<uint32_t>(value));
  if (size == 8) write32(off + 4, static_cast<uint32_t>(value >> 32));
}

}  // namespace smmu_vp::smmu

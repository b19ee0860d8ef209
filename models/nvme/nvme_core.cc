#include "nvme/nvme_core.h"

#include <algorithm>
#include <cstring>

namespace smmu_vp {

namespace {
constexpr uint32_t kCcWritable = NVME_CC_EN | (7u << NVME_CC_CSS_SHIFT) | NVME_CC_MPS_MASK | (7u << NVME_CC_AMS_SHIFT) |
                                 NVME_CC_SHN_MASK | (0xFu << NVME_CC_IOSQES_SHIFT) | (0xFu << NVME_CC_IOCQES_SHIFT);
constexpr uint32_t kShstOccurring = 1u << 2;  // CSTS.SHST 01b (NVMe 2.0 3.1.4.6)
constexpr uint32_t kNsidAll = 0xFFFFFFFFu;

void set_lo(uint64_t& r, uint32_t x) { r = (r & ~0xFFFFFFFFull) | x; }
void set_hi(uint64_t& r, uint32_t x) { r = (r & 0xFFFFFFFFull) | (static_cast<uint64_t>(x) << 32); }
uint32_t field(uint32_t v, unsigned shift, uint32_t mask) { return (v >> shift) & mask; }

void put16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }
void put32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
void put64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
// ASCII, padded with spaces (NVMe 2.0 1.5: ASCII string fields).
void put_ascii(uint8_t* p, size_t n, const std::string& s) {
  std::memset(p, ' ', n);
  std::memcpy(p, s.data(), std::min(n, s.size()));
}
bool valid_vector_reg(uint64_t reg) { return reg <= NVME_MSIX_CTRL; }
}  // namespace

// ---- PRPs (NVMe 2.0 4.1.1)

PrpResult prp_segments(uint64_t prp1, uint64_t prp2, uint64_t len, uint32_t page, const PrpListReader& read_list,
                       std::vector<PrpSegment>* out) {
  out->clear();
  if (len == 0) return PrpResult::kOk;
  if (prp1 & 3u) return PrpResult::kOffsetInvalid;  // the offset is dword aligned
  const uint64_t first = std::min<uint64_t>(len, page - prp1 % page);
  out->push_back({prp1, static_cast<uint32_t>(first)});
  uint64_t left = len - first;
  if (left == 0) return PrpResult::kOk;
  if (left <= page) {  // exactly one more page: PRP2 is its address
    if (prp2 % page) return PrpResult::kOffsetInvalid;
    out->push_back({prp2, static_cast<uint32_t>(left)});
    return PrpResult::kOk;
  }
  // PRP2 points to a PRP list, which may start at an offset in its page.
  if (prp2 & 7u) return PrpResult::kOffsetInvalid;
  uint64_t list = prp2;
  std::vector<uint64_t> entries;
  while (left > 0) {
    const uint64_t pages = (left + page - 1) / page;
    const uint32_t room = static_cast<uint32_t>((page - list % page) / 8);
    const bool chain = pages > room;  // the page's last entry points to the next list page
    const uint32_t n = chain ? room : static_cast<uint32_t>(pages);
    entries.resize(n);
    if (!read_list(list, n, entries.data())) return PrpResult::kListAborted;
    const uint32_t data = chain ? n - 1 : n;
    for (uint32_t i = 0; i < data; ++i) {
      if (entries[i] % page) return PrpResult::kOffsetInvalid;
      const uint64_t chunk = std::min<uint64_t>(page, left);
      out->push_back({entries[i], static_cast<uint32_t>(chunk)});
      left -= chunk;
    }
    if (chain) {
      list = entries[n - 1];
      if (list % page) return PrpResult::kOffsetInvalid;
    }
  }
  return PrpResult::kOk;
}

// ---- Registers

NvmeCore::NvmeCore(const Params& p)
    : params_(p),
      granted_sqs_(p.queues),
      granted_cqs_(p.queues),
      sq_(p.queues + 1),
      cq_(p.queues + 1),
      vec_(p.vectors) {
  // CAP (NVMe 2.0 3.1.4.1): MQES, CQR, TO, DSTRD 0, NVM command set, MPSMIN = MPSMAX = 0 (4 KiB).
  cap_ = static_cast<uint64_t>(kMaxQueueEntries - 1) | NVME_CAP_CQR |
         (static_cast<uint64_t>(std::min<uint32_t>(std::max<uint32_t>(p.ready_timeout, 1), 255)) << 24) |
         NVME_CAP_CSS_NVM;
}

NvmeCore::Access NvmeCore::read(uint64_t off, unsigned len, uint64_t* value) const {
  if ((len != 4 && len != 8) || off % len) return Access::kBadSize;
  if (off >= register_block_size()) return Access::kBadAddress;
  if (len == 8 && off != NVME_REG_CAP && off != NVME_REG_ASQ && off != NVME_REG_ACQ &&
      !(off >= NVME_REG_MSIX_BASE && (off - NVME_REG_MSIX_BASE) % NVME_MSIX_ENTRY_BYTES == NVME_MSIX_ADDR_LO))
    return Access::kBadSize;
  bool ok = true;
  uint64_t v = read32(off, &ok);
  if (len == 8) v |= static_cast<uint64_t>(read32(off + 4, &ok)) << 32;
  *value = v;
  return ok ? Access::kOk : Access::kBadAddress;
}

NvmeCore::Access NvmeCore::write(uint64_t off, unsigned len, uint64_t value, Effects* fx) {
  if ((len != 4 && len != 8) || off % len) return Access::kBadSize;
  if (off >= register_block_size()) return Access::kBadAddress;
  if (len == 8 && off != NVME_REG_CAP && off != NVME_REG_ASQ && off != NVME_REG_ACQ &&
      !(off >= NVME_REG_MSIX_BASE && (off - NVME_REG_MSIX_BASE) % NVME_MSIX_ENTRY_BYTES == NVME_MSIX_ADDR_LO))
    return Access::kBadSize;
  bool ok = true;
  write32(off, static_cast<uint32_t>(value), &ok, fx);
  if (len == 8) write32(off + 4, static_cast<uint32_t>(value >> 32), &ok, fx);
  return ok ? Access::kOk : Access::kBadAddress;
}

uint32_t NvmeCore::read32(uint64_t off, bool* ok) const {
  switch (off) {
    case NVME_REG_CAP: return static_cast<uint32_t>(cap_);
    case NVME_REG_CAP + 4: return static_cast<uint32_t>(cap_ >> 32);
    case NVME_REG_VS: return NVME_VS_2_0;
    case NVME_REG_INTMS:
    case NVME_REG_INTMC: return intm_;
    case NVME_REG_CC: return cc_;
    case NVME_REG_CSTS: return csts_;
    case NVME_REG_AQA: return aqa_;
    case NVME_REG_ASQ: return static_cast<uint32_t>(asq_);
    case NVME_REG_ASQ + 4: return static_cast<uint32_t>(asq_ >> 32);
    case NVME_REG_ACQ: return static_cast<uint32_t>(acq_);
    case NVME_REG_ACQ + 4: return static_cast<uint32_t>(acq_ >> 32);
    default: break;
  }
  if (off < NVME_REG_MSIX_BASE) return 0;  // reserved properties RAZ; doorbells are write-only, read as 0
  const uint64_t v = (off - NVME_REG_MSIX_BASE) / NVME_MSIX_ENTRY_BYTES;
  const uint64_t reg = (off - NVME_REG_MSIX_BASE) % NVME_MSIX_ENTRY_BYTES;
  if (v >= vec_.size() || !valid_vector_reg(reg)) {
    *ok = false;
    return 0;
  }
  const NvmeVector& e = vec_[v];
  switch (reg) {
    case NVME_MSIX_ADDR_LO: return static_cast<uint32_t>(e.addr);
    case NVME_MSIX_ADDR_HI: return static_cast<uint32_t>(e.addr >> 32);
    case NVME_MSIX_DATA: return e.data;
    default: return e.ctrl;
  }
}

void NvmeCore::write32(uint64_t off, uint32_t v, bool* ok, Effects* fx) {
  switch (off) {
    case NVME_REG_CC: write_cc(v, fx); return;
    case NVME_REG_INTMS: intm_ |= v; return;
    case NVME_REG_INTMC:
      fx->unmasked_pending |= intm_ & v & intm_pending_;
      intm_pending_ &= ~(intm_ & v);
      intm_ &= ~v;
      return;
    case NVME_REG_AQA: aqa_ = v & 0x0FFF0FFFu; return;
    case NVME_REG_ASQ: set_lo(asq_, v); return;
    case NVME_REG_ASQ + 4: set_hi(asq_, v); return;
    case NVME_REG_ACQ: set_lo(acq_, v); return;
    case NVME_REG_ACQ + 4: set_hi(acq_, v); return;
    default: break;
  }
  if (off < NVME_REG_DBS) return;  // CAP, VS, CSTS read-only; NSSR unsupported (CAP.NSSRS 0); reserved
  if (off < NVME_REG_MSIX_BASE) {
    doorbell(off, v, fx);
    return;
  }
  const uint64_t vi = (off - NVME_REG_MSIX_BASE) / NVME_MSIX_ENTRY_BYTES;
  const uint64_t reg = (off - NVME_REG_MSIX_BASE) % NVME_MSIX_ENTRY_BYTES;
  if (vi >= vec_.size() || !valid_vector_reg(reg)) {
    *ok = false;
    return;
  }
  NvmeVector& e = vec_[vi];
  switch (reg) {
    case NVME_MSIX_ADDR_LO: set_lo(e.addr, v); break;
    case NVME_MSIX_ADDR_HI: set_hi(e.addr, v); break;
    case NVME_MSIX_DATA: e.data = v; break;
    default: e.ctrl = v & NVME_MSIX_CTRL_MASKED; break;
  }
}

// ---- Controller state: enable, disable, shutdown (NVMe 2.0 3.5.1, 3.6)

void NvmeCore::write_cc(uint32_t v, Effects* fx) {
  const uint32_t was = cc_;
  cc_ = v & kCcWritable;
  const bool en_was = (was & NVME_CC_EN) != 0, en_now = (cc_ & NVME_CC_EN) != 0;
  if (!en_was && en_now) {
    // A disable the host did not wait for (CSTS.RDY still 1) ends here.
    csts_ &= ~NVME_CSTS_RDY;
    ++cc_seq_;
    fx->cc_changed = true;
    // Settings are checked as the controller comes up; bad ones leave it
    // failed (CSTS.CFS, RDY stays 0) until the host clears EN.
    if (!enable_settings_valid()) fatal_error();
  } else if (en_was && !en_now) {
    ++cc_seq_;
    fx->cc_changed = true;
    fx->reset = true;
    reset();
  }
  if (en_now && (cc_ & NVME_CC_SHN_MASK) && !(was & NVME_CC_SHN_MASK) && !shutdown_requested_) {
    // Normal or abrupt: either completes once the commands in flight are done.
    shutdown_requested_ = true;
    csts_ = (csts_ & ~NVME_CSTS_SHST_MASK) | kShstOccurring;
    ++cc_seq_;
    fx->cc_changed = true;
  }
}

bool NvmeCore::enable_settings_valid() const {
  const uint32_t mps = field(cc_, NVME_CC_MPS_SHIFT, 0xF);
  const uint32_t asqs = aqa_ & 0xFFFu, acqs = (aqa_ >> 16) & 0xFFFu;  // 0's based
  return field(cc_, NVME_CC_CSS_SHIFT, 7) == 0 &&                       // NVM command set
         mps >= NVME_CAP_MPSMIN(cap_) && mps <= NVME_CAP_MPSMAX(cap_) &&  // 4 KiB pages only
         field(cc_, NVME_CC_AMS_SHIFT, 7) == 0 &&                        // round robin
         field(cc_, NVME_CC_IOSQES_SHIFT, 0xF) == 6 && field(cc_, NVME_CC_IOCQES_SHIFT, 0xF) == 4 &&
         asqs >= 1 && acqs >= 1 &&  // at least 2 entries each
         asq_ % kPageBytes == 0 && acq_ % kPageBytes == 0;
}

void NvmeCore::reset() {
  for (NvmeSq& q : sq_) q = NvmeSq{};
  for (NvmeCq& q : cq_) q = NvmeCq{};
  granted_sqs_ = granted_cqs_ = params_.queues;
  csts_ &= ~(NVME_CSTS_CFS | NVME_CSTS_SHST_MASK);
  shutdown_requested_ = false;
  intm_ = intm_pending_ = 0;
  // CSTS.RDY clears when the module finishes the disable (transition()).
}

NvmeCore::Transition NvmeCore::transition() const {
  const bool en = enabled(), rdy = ready();
  if (en && !rdy && !fatal()) return Transition::kEnabling;
  if (!en && rdy) return Transition::kDisabling;
  if (en && rdy && shutdown_requested_ && (csts_ & NVME_CSTS_SHST_MASK) != NVME_CSTS_SHST_COMPLETE)
    return Transition::kShuttingDown;
  return Transition::kNone;
}

void NvmeCore::finish_transition() {
  switch (transition()) {
    case Transition::kEnabling: {
      // The admin queues as AQA/ASQ/ACQ give them; the admin CQ interrupts on vector 0.
      NvmeSq& s = sq_[0];
      s = NvmeSq{};
      s.valid = true;
      s.gen = next_gen_++;
      s.base = asq_;
      s.size = (aqa_ & 0xFFFu) + 1;
      NvmeCq& c = cq_[0];
      c = NvmeCq{};
      c.valid = true;
      c.gen = next_gen_++;
      c.base = acq_;
      c.size = ((aqa_ >> 16) & 0xFFFu) + 1;
      c.ien = true;
      c.sqs = 1;
      csts_ |= NVME_CSTS_RDY;
      break;
    }
    case Transition::kDisabling: csts_ &= ~NVME_CSTS_RDY; break;
    case Transition::kShuttingDown: csts_ = (csts_ & ~NVME_CSTS_SHST_MASK) | NVME_CSTS_SHST_COMPLETE; break;
    case Transition::kNone: break;
  }
}

void NvmeCore::fatal_error() {
  if (fatal()) return;
  csts_ |= NVME_CSTS_CFS;
  count(NvmeStat::kFatal);
}

// ---- Doorbells (NVMe 2.0 3.1.4.22-23)

void NvmeCore::doorbell(uint64_t off, uint32_t v, Effects* fx) {
  const uint64_t index = (off - NVME_REG_DBS) / (4u << NVME_CAP_DSTRD(cap_));
  const unsigned qid = static_cast<unsigned>(index / 2);
  const uint32_t value = v & 0xFFFFu;
  if (!running()) {
    doorbell_error(qid);
    return;
  }
  if (index & 1) {
    NvmeCq* q = cq(qid);
    // The head may move forward over entries the controller posted, no further.
    if (!q || value >= q->size || (value + q->size - q->head) % q->size > q->posted()) {
      doorbell_error(qid);
      return;
    }
    q->head = value;
    fx->cq_doorbell = true;
  } else {
    NvmeSq* q = sq(qid);
    // The tail may move forward, not back over entries already submitted.
    if (!q || value >= q->size || (value + q->size - q->head) % q->size < q->unfetched()) {
      doorbell_error(qid);
      return;
    }
    fx->sq = static_cast<int>(qid);
    fx->sq_from = q->tail;
    fx->sq_to = value;
    q->tail = value;
  }
}

void NvmeCore::doorbell_error(unsigned qid) {
  // Ignored and counted. A bad write to a live admin queue's doorbell leaves
  // the controller unable to trust its admin queues: fatal.
  count(NvmeStat::kDoorbellErrors);
  if (qid == 0 && running()) fatal_error();
}

// ---- Queues

int NvmeCore::next_sq(unsigned after) const {
  const unsigned n = static_cast<unsigned>(sq_.size());
  for (unsigned i = 1; i <= n; ++i) {
    const unsigned q = (after + i) % n;
    if (sq_[q].valid && sq_[q].unfetched() > 0) return static_cast<int>(q);
  }
  return -1;
}

uint32_t NvmeCore::fetch(unsigned qid, uint32_t max, uint32_t* first) {
  NvmeSq* q = sq(qid);
  if (!q) return 0;
  const uint32_t n = std::min({max, q->unfetched(), q->size - q->head});
  *first = q->head;
  q->head = (q->head + n) % q->size;
  return n;
}

bool NvmeCore::post(unsigned cqid, nvme_cqe* cqe, uint64_t* addr) {
  NvmeCq* q = cq(cqid);
  if (!q || q->full()) return false;
  cqe->status = static_cast<uint16_t>((cqe->status & ~NVME_CQE_PHASE) | (q->phase ? NVME_CQE_PHASE : 0u));
  *addr = q->entry_addr(q->tail);
  if (++q->tail == q->size) {
    q->tail = 0;
    q->phase = !q->phase;
  }
  return true;
}

// ---- Commands

uint16_t NvmeCore::fail(uint8_t sct, uint8_t sc) {
  uint16_t status = NVME_STATUS(sct, sc);
  const bool transfer = sct == NVME_SCT_GENERIC && sc == NVME_SC_DATA_TRANSFER_ERROR;
  if (!transfer) status |= NVME_STATUS_DNR;
  NvmeStat s = NvmeStat::kInvalidField;
  if (sct == NVME_SCT_GENERIC) {
    switch (sc) {
      case NVME_SC_INVALID_OPCODE: s = NvmeStat::kInvalidOpcode; break;
      case NVME_SC_DATA_TRANSFER_ERROR: s = NvmeStat::kDataTransferErrors; break;
      case NVME_SC_INVALID_NAMESPACE: s = NvmeStat::kInvalidNamespace; break;
      case NVME_SC_PRP_OFFSET_INVALID: s = NvmeStat::kPrpOffsetInvalid; break;
      case NVME_SC_LBA_OUT_OF_RANGE: s = NvmeStat::kLbaOutOfRange; break;
      default: s = NvmeStat::kInvalidField; break;
    }
  } else {
    s = sc == NVME_SC_INVALID_VECTOR ? NvmeStat::kInvalidVector : NvmeStat::kInvalidQueue;
  }
  count(s);
  return status;
}

NvmeCore::AdminResult NvmeCore::admin(const nvme_sqe& c, std::vector<uint8_t>* data) {
  data->clear();
  count(NvmeStat::kAdmin);
  // PRPs only (no SGLs), no fused operations.
  if (NVME_CDW0_PSDT(c.cdw0) != 0 || ((c.cdw0 >> 8) & 3u) != 0)
    return failed(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
  switch (NVME_CDW0_OPC(c.cdw0)) {
    case NVME_ADMIN_DELETE_SQ: return delete_sq(c);
    case NVME_ADMIN_CREATE_SQ: return create_sq(c);
    case NVME_ADMIN_DELETE_CQ: return delete_cq(c);
    case NVME_ADMIN_CREATE_CQ: return create_cq(c);
    case NVME_ADMIN_IDENTIFY: return identify(c, data);
    case NVME_ADMIN_SET_FEATURES: return features(c, true);
    case NVME_ADMIN_GET_FEATURES: return features(c, false);
    default: return failed(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE);
  }
}

NvmeCore::AdminResult NvmeCore::create_cq(const nvme_sqe& c) {
  // Create I/O Completion Queue (NVMe 2.0 5.4).
  const unsigned qid = c.cdw10 & 0xFFFFu;
  const uint32_t entries = (c.cdw10 >> 16) + 1;
  const bool pc = c.cdw11 & 1u, ien = (c.cdw11 >> 1) & 1u;
  const unsigned iv = c.cdw11 >> 16;
  if (qid == 0 || qid > granted_cqs_ || cq_[qid].valid) return failed(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QID);
  if (entries < 2 || entries > kMaxQueueEntries)
    return failed(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QSIZE);
  if (!pc) return failed(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);  // CAP.CQR: contiguous queues only
  if (iv >= params_.vectors) return failed(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_VECTOR);
  if (c.prp1 % kPageBytes) return failed(NVME_SCT_GENERIC, NVME_SC_PRP_OFFSET_INVALID);
  NvmeCq& q = cq_[qid];
  q = NvmeCq{};
  q.valid = true;
  q.gen = next_gen_++;
  q.base = c.prp1;
  q.size = entries;
  q.ien = ien;
  q.iv = static_cast<uint16_t>(iv);
  return {};
}

NvmeCore::AdminResult NvmeCore::create_sq(const nvme_sqe& c) {
  // Create I/O Submission Queue (NVMe 2.0 5.5).
  const unsigned qid = c.cdw10 & 0xFFFFu;
  const uint32_t entries = (c.cdw10 >> 16) + 1;
  const bool pc = c.cdw11 & 1u;
  const unsigned cqid = c.cdw11 >> 16;
  if (qid == 0 || qid > granted_sqs_ || sq_[qid].valid) return failed(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QID);
  if (entries < 2 || entries > kMaxQueueEntries)
    return failed(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QSIZE);
  if (!pc) return failed(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
  if (cqid == 0 || !cq(cqid)) return failed(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CQ_INVALID);
  if (c.prp1 % kPageBytes) return failed(NVME_SCT_GENERIC, NVME_SC_PRP_OFFSET_INVALID);
  NvmeSq& q = sq_[qid];
  q = NvmeSq{};
  q.valid = true;
  q.gen = next_gen_++;
  q.base = c.prp1;
  q.size = entries;
  q.cqid = static_cast<uint16_t>(cqid);
  ++cq_[cqid].sqs;
  return {};
}

NvmeCore::AdminResult NvmeCore::delete_sq(const nvme_sqe& c) {
  // Delete I/O Submission Queue (NVMe 2.0 5.7).
  const unsigned qid = c.cdw10 & 0xFFFFu;
  if (qid == 0 || !sq(qid)) return failed(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QID);
  --cq_[sq_[qid].cqid].sqs;
  sq_[qid] = NvmeSq{};
  return {};
}

NvmeCore::AdminResult NvmeCore::delete_cq(const nvme_sqe& c) {
  // Delete I/O Completion Queue (NVMe 2.0 5.6): its SQs must go first.
  const unsigned qid = c.cdw10 & 0xFFFFu;
  if (qid == 0 || !cq(qid)) return failed(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QID);
  if (cq_[qid].sqs > 0) return failed(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_DELETION);
  cq_[qid] = NvmeCq{};
  return {};
}

NvmeCore::AdminResult NvmeCore::features(const nvme_sqe& c, bool set) {
  // Only Number of Queues (NVMe 2.0 5.27.1.5).
  if ((c.cdw10 & 0xFFu) != NVME_FEAT_NUM_QUEUES) return failed(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
  if (set) {
    const uint32_t nsqr = c.cdw11 & 0xFFFFu, ncqr = c.cdw11 >> 16;  // 0's based
    if (nsqr == 0xFFFFu || ncqr == 0xFFFFu) return failed(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
    granted_sqs_ = std::min(nsqr + 1, params_.queues);
    granted_cqs_ = std::min(ncqr + 1, params_.queues);
  }
  return {kSuccess, NVME_NUM_QUEUES(granted_sqs_, granted_cqs_)};
}

NvmeCore::AdminResult NvmeCore::identify(const nvme_sqe& c, std::vector<uint8_t>* data) {
  switch (c.cdw10 & 0xFFu) {
    case NVME_IDENTIFY_CONTROLLER:
      data->assign(NVME_IDENTIFY_BYTES, 0);
      identify_controller(data->data());
      return {};
    case NVME_IDENTIFY_NAMESPACE:
      if (c.nsid != 1) return failed(NVME_SCT_GENERIC, NVME_SC_INVALID_NAMESPACE);
      data->assign(NVME_IDENTIFY_BYTES, 0);
      identify_namespace(data->data());
      return {};
    default: return failed(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
  }
}

void NvmeCore::identify_controller(uint8_t* out) const {
  std::memset(out, 0, NVME_IDENTIFY_BYTES);
  put16(out + NVME_IDCTRL_VID, kVendorId);
  put16(out + 2, kVendorId);  // SSVID
  put_ascii(out + NVME_IDCTRL_SN, 20, params_.serial);
  put_ascii(out + NVME_IDCTRL_MN, 40, "smmu-vp NVMe");
  put_ascii(out + 64, 8, "1.0");  // FR
  out[NVME_IDCTRL_MDTS] = kMdts;
  put32(out + 80, NVME_VS_2_0);  // VER
  out[NVME_IDCTRL_SQES] = 0x66;  // 64-byte entries, required and maximum
  out[NVME_IDCTRL_CQES] = 0x44;  // 16-byte entries
  put32(out + NVME_IDCTRL_NN, 1);
  put16(out + 2048, 2500);  // power state 0: MP 25.00 W
}

void NvmeCore::identify_namespace(uint8_t* out) const {
  std::memset(out, 0, NVME_IDENTIFY_BYTES);
  put64(out + NVME_IDNS_NSZE, lba_count());
  put64(out + NVME_IDNS_NCAP, lba_count());
  put64(out + 16, lba_count());  // NUSE
  out[25] = 0;                   // NLBAF: one format (0's based)
  out[NVME_IDNS_FLBAS] = 0;
  uint32_t lbads = 0;
  while ((1u << lbads) < params_.lba_bytes) ++lbads;
  put32(out + NVME_IDNS_LBAF0, lbads << 16);  // MS 0, LBADS, RP 0 (best)
}

NvmeCore::IoCommand NvmeCore::decode_io(const nvme_sqe& c) {
  IoCommand r;
  r.opcode = NVME_CDW0_OPC(c.cdw0);
  switch (r.opcode) {
    case NVME_CMD_FLUSH: count(NvmeStat::kFlushes); break;
    case NVME_CMD_WRITE: count(NvmeStat::kWrites); break;
    case NVME_CMD_READ: count(NvmeStat::kReads); break;
    default: r.status = fail(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE); return r;
  }
  if (NVME_CDW0_PSDT(c.cdw0) != 0 || ((c.cdw0 >> 8) & 3u) != 0) {
    r.status = fail(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
    return r;
  }
  if (c.nsid != 1 && !(r.opcode == NVME_CMD_FLUSH && c.nsid == kNsidAll)) {
    r.status = fail(NVME_SCT_GENERIC, NVME_SC_INVALID_NAMESPACE);
    return r;
  }
  if (r.opcode == NVME_CMD_FLUSH) return r;
  // Read / Write (NVM Command Set 3.3.4, 3.3.6): SLBA, NLB 0's based.
  const uint64_t slba = c.cdw10 | (static_cast<uint64_t>(c.cdw11) << 32);
  const uint64_t nlb = (c.cdw12 & 0xFFFFu) + 1ull;
  r.bytes = nlb * params_.lba_bytes;
  if (r.bytes > kMaxTransferBytes) {  // beyond MDTS
    r.status = fail(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
    return r;
  }
  if (slba >= lba_count() || nlb > lba_count() - slba) {
    r.status = fail(NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE);
    return r;
  }
  r.offset = slba * params_.lba_bytes;
  return r;
}

// ---- Data

void NvmeCore::media_read(uint64_t offset, uint8_t* out, uint64_t len) const {
  while (len > 0) {
    const uint64_t in_block = offset % kPageBytes;
    const uint64_t n = std::min<uint64_t>(len, kPageBytes - in_block);
    auto it = blocks_.find(offset / kPageBytes);
    if (it == blocks_.end()) std::memset(out, 0, n);
    else std::memcpy(out, it->second.data() + in_block, n);
    out += n;
    offset += n;
    len -= n;
  }
}

void NvmeCore::media_write(uint64_t offset, const uint8_t* in, uint64_t len) {
  while (len > 0) {
    const uint64_t in_block = offset % kPageBytes;
    const uint64_t n = std::min<uint64_t>(len, kPageBytes - in_block);
    auto [it, fresh] = blocks_.try_emplace(offset / kPageBytes);
    if (fresh) it->second.fill(0);
    std::memcpy(it->second.data() + in_block, in, n);
    in += n;
    offset += n;
    len -= n;
  }
}

}  // namespace smmu_vp

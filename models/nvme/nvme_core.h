// Controller state of the NVMe drive, without SystemC: the properties
// (registers) and vector table of nvme_regs.h, the enable / disable /
// shutdown state machine, submission and completion queues with their
// doorbells and phase tags, admin command execution, I/O command checks, the
// PRP walk and the drive's data (a sparse store). The SystemC module
// (nvme.h) fetches entries, moves data, keeps the time and raises interrupts.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "nvme/nvme_regs.h"

namespace smmu_vp {

// A submission queue as the controller sees it (NVMe 2.0 3.3.1).
struct NvmeSq {
  bool valid = false;
  uint32_t gen = 0;     // creation number: work of a deleted queue is recognised and dropped
  uint64_t base = 0;    // physically contiguous (CAP.CQR)
  uint32_t size = 0;    // entries
  uint32_t head = 0;    // next entry the controller fetches
  uint32_t tail = 0;    // doorbell: one past the last entry the host submitted
  uint16_t cqid = 0;

  uint32_t unfetched() const { return size ? (tail + size - head) % size : 0; }
  uint64_t entry_addr(uint32_t i) const { return base + static_cast<uint64_t>(i) * NVME_SQE_BYTES; }
};

// A completion queue (NVMe 2.0 3.3.1): the controller posts at tail with the
// phase tag `phase`, which flips each time tail wraps; the host consumes up
// to its head doorbell. One slot stays empty: full when tail + 1 == head.
struct NvmeCq {
  bool valid = false;
  uint32_t gen = 0;
  uint64_t base = 0;
  uint32_t size = 0;
  uint32_t tail = 0;
  uint32_t head = 0;
  bool phase = true;  // the phase tag the next entry carries (1 on the first pass)
  bool ien = false;   // interrupts enabled
  uint16_t iv = 0;    // interrupt vector
  unsigned sqs = 0;   // submission queues completing here

  uint32_t posted() const { return size ? (tail + size - head) % size : 0; }
  bool full() const { return size == 0 || posted() == size - 1; }
  uint64_t entry_addr(uint32_t i) const { return base + static_cast<uint64_t>(i) * NVME_CQE_BYTES; }
};

// One entry of the MSI-X-style vector table (nvme_regs.h).
struct NvmeVector {
  uint64_t addr = 0;
  uint32_t data = 0;
  uint32_t ctrl = NVME_MSIX_CTRL_MASKED;
  bool msi() const { return !(ctrl & NVME_MSIX_CTRL_MASKED) && addr != 0; }
};

// Counters (the module names them "<device>.<name>").
enum class NvmeStat : unsigned {
  kReads, kWrites, kFlushes, kAdmin, kBytesRead, kBytesWritten,
  kDataTransferErrors, kInvalidOpcode, kInvalidField, kInvalidNamespace, kInvalidQueue, kInvalidVector,
  kLbaOutOfRange, kPrpOffsetInvalid, kDoorbellErrors, kFatal, kCount
};

// ---- PRPs (NVMe 2.0 4.1.1), as a pure function.
struct PrpSegment {
  uint64_t addr;
  uint32_t len;  // never crosses a page
};
enum class PrpResult { kOk, kOffsetInvalid, kListAborted };
// Reads `entries` 8-byte PRP entries at `addr` (never across a page) into
// `out`; false when the read was aborted.
using PrpListReader = std::function<bool(uint64_t addr, uint32_t entries, uint64_t* out)>;
// The pages a transfer of `len` bytes described by PRP1/PRP2 covers, in
// order. PRP1 may start anywhere dword-aligned in its page; when the rest
// fits in one page PRP2 is that page, otherwise PRP2 points (qword-aligned,
// possibly with an offset) to a PRP list whose last entry in each page, when
// more entries follow, points to the next list page. Every entry but PRP1
// and the list pointer in PRP2 must be page-aligned (else kOffsetInvalid).
PrpResult prp_segments(uint64_t prp1, uint64_t prp2, uint64_t len, uint32_t page, const PrpListReader& read_list,
                       std::vector<PrpSegment>* out);

class NvmeCore {
 public:
  static constexpr uint32_t kPageBytes = 4096;  // CAP.MPSMIN = MPSMAX = 0
  static constexpr uint32_t kMaxQueueEntries = 4096;  // CAP.MQES + 1
  static constexpr uint8_t kMdts = 10;  // largest transfer 2^10 pages = 4 MiB
  static constexpr uint64_t kMaxTransferBytes = static_cast<uint64_t>(kPageBytes) << kMdts;
  static constexpr uint16_t kVendorId = 0x5356;  // "VS": not a registered PCI vendor ID
  static constexpr uint16_t kSuccess = 0;

  struct Params {
    unsigned queues = 16;   // I/O queue pairs (qid 1 .. queues)
    unsigned vectors = 17;  // vector table entries, <= NVME_MAX_VECTORS
    uint64_t capacity_bytes = 1ull << 30;
    uint32_t lba_bytes = 4096;
    uint32_t ready_timeout = 1;  // CAP.TO, 500 ms units
    std::string serial = "SVP0";
  };
  explicit NvmeCore(const Params& p);

  static uint64_t register_block_size() { return NVME_REG_BLOCK_SIZE; }

  enum class Access { kOk, kBadAddress, kBadSize };
  // What a register write set in motion.
  struct Effects {
    bool cc_changed = false;    // CC.EN or CC.SHN moved: see transition()
    bool reset = false;         // CC.EN 1 -> 0: queues deleted, work in flight dropped
    int sq = -1;                // an SQ tail doorbell accepted: entries from .. to-1 submitted
    uint32_t sq_from = 0, sq_to = 0;
    bool cq_doorbell = false;   // a CQ head doorbell accepted: room for completions
    uint32_t unmasked_pending = 0;  // INTMC cleared these vectors' masks with an interrupt pending
  };
  // 32-bit accesses anywhere; 64-bit to CAP, ASQ, ACQ and a vector's address.
  Access read(uint64_t offset, unsigned len, uint64_t* value) const;
  Access write(uint64_t offset, unsigned len, uint64_t value, Effects* fx);

  // ---- Controller state (NVMe 2.0 3.5.1, 3.6).
  enum class Transition { kNone, kEnabling, kDisabling, kShuttingDown };
  // What the controller has to finish after the host's last CC write.
  Transition transition() const;
  // Bumped by every CC write that changes EN or SHN.
  uint64_t cc_seq() const { return cc_seq_; }
  // Enabling: the admin queues go live and CSTS.RDY = 1. Disabling: RDY = 0.
  // Shutting down: CSTS.SHST = complete.
  void finish_transition();
  bool enabled() const { return (cc_ & NVME_CC_EN) != 0; }
  bool ready() const { return (csts_ & NVME_CSTS_RDY) != 0; }
  bool fatal() const { return (csts_ & NVME_CSTS_CFS) != 0; }
  uint32_t csts() const { return csts_; }
  uint64_t cap() const { return cap_; }
  // A fatal error the controller cannot report in a completion queue (a
  // queue entry's fetch or write aborted, admin queue doorbell corrupted):
  // CSTS.CFS, counted; the controller stops until reset.
  void fatal_error();
  // Whether the controller takes commands (ready, not failed).
  bool running() const { return ready() && !fatal() && enabled(); }

  // ---- Queues.
  unsigned max_io_queues() const { return params_.queues; }
  NvmeSq* sq(unsigned qid) { return qid < sq_.size() && sq_[qid].valid ? &sq_[qid] : nullptr; }
  NvmeCq* cq(unsigned qid) { return qid < cq_.size() && cq_[qid].valid ? &cq_[qid] : nullptr; }
  const NvmeSq* sq(unsigned qid) const { return qid < sq_.size() && sq_[qid].valid ? &sq_[qid] : nullptr; }
  const NvmeCq* cq(unsigned qid) const { return qid < cq_.size() && cq_[qid].valid ? &cq_[qid] : nullptr; }
  // The first SQ after `after` (round robin, the admin queue included) with
  // entries not yet fetched, or -1.
  int next_sq(unsigned after) const;
  // Takes up to `max` entries from the SQ's head, not across its end: returns
  // how many, the index of the first in *first; the head moves past them.
  uint32_t fetch(unsigned qid, uint32_t max, uint32_t* first);
  // Posts a completion on CQ cqid: sets its phase tag, gives the slot's
  // address, moves the tail (flipping the phase at the wrap). False when the
  // queue is full (the host has not consumed) or does not exist.
  bool post(unsigned cqid, nvme_cqe* cqe, uint64_t* addr);

  // ---- Commands.
  // Executes an admin command (NVMe 2.0 5). Identify puts its 4096 bytes in
  // *data (for the caller to transfer to PRP1/PRP2); others leave it empty.
  struct AdminResult {
    uint16_t status = kSuccess;  // NVME_STATUS(...) | DNR; phase 0
    uint32_t dw0 = 0;
  };
  AdminResult admin(const nvme_sqe& c, std::vector<uint8_t>* data);
  // An I/O command decoded and checked (NVM Command Set 3): for Read/Write,
  // the byte range on the drive.
  struct IoCommand {
    uint8_t opcode = 0;
    uint16_t status = kSuccess;
    uint64_t offset = 0;  // bytes
    uint64_t bytes = 0;
  };
  IoCommand decode_io(const nvme_sqe& c);
  // A failed status, counted by kind: DNR added except for a data transfer
  // error (which a retry may get past).
  uint16_t fail(uint8_t sct, uint8_t sc);

  // ---- The drive's data: 4 KiB blocks, zero until written.
  void media_read(uint64_t offset, uint8_t* out, uint64_t len) const;
  void media_write(uint64_t offset, const uint8_t* in, uint64_t len);
  size_t stored_blocks() const { return blocks_.size(); }
  uint64_t lba_count() const { return params_.capacity_bytes / params_.lba_bytes; }
  uint32_t lba_bytes() const { return params_.lba_bytes; }

  // ---- Interrupts.
  unsigned vectors() const { return params_.vectors; }
  const NvmeVector& vector(unsigned v) const { return vec_[v]; }
  // INTMS/INTMC mask wired interrupts of vectors 0..31; a masked one is
  // latched and raised when INTMC clears its mask.
  bool wired_masked(unsigned v) const { return v < 32 && (intm_ >> v) & 1u; }
  void latch_wired(unsigned v) { intm_pending_ |= 1u << v; }

  void count(NvmeStat s, uint64_t n = 1) { stats_[static_cast<unsigned>(s)] += n; }
  uint64_t stat(NvmeStat s) const { return stats_[static_cast<unsigned>(s)]; }

  // The Identify data structures (NVMe 2.0 5.17; NVM Command Set 4.1.5.1).
  void identify_controller(uint8_t* out) const;
  void identify_namespace(uint8_t* out) const;

 private:
  uint32_t read32(uint64_t offset, bool* ok) const;
  void write32(uint64_t offset, uint32_t v, bool* ok, Effects* fx);
  void write_cc(uint32_t v, Effects* fx);
  bool enable_settings_valid() const;
  void reset();
  void doorbell(uint64_t offset, uint32_t v, Effects* fx);
  void doorbell_error(unsigned qid);
  AdminResult create_cq(const nvme_sqe& c);
  AdminResult create_sq(const nvme_sqe& c);
  AdminResult delete_sq(const nvme_sqe& c);
  AdminResult delete_cq(const nvme_sqe& c);
  AdminResult features(const nvme_sqe& c, bool set);
  AdminResult identify(const nvme_sqe& c, std::vector<uint8_t>* data);
  AdminResult failed(uint8_t sct, uint8_t sc) { return {fail(sct, sc), 0}; }

  Params params_;
  uint64_t cap_;
  uint32_t cc_ = 0;
  uint32_t csts_ = 0;
  uint32_t aqa_ = 0;
  uint64_t asq_ = 0, acq_ = 0;
  uint32_t intm_ = 0, intm_pending_ = 0;
  uint64_t cc_seq_ = 0;
  bool shutdown_requested_ = false;
  uint32_t next_gen_ = 1;
  // Queues allocated by Set Features Number of Queues (NVMe 2.0 5.27.1.5).
  unsigned granted_sqs_, granted_cqs_;
  std::vector<NvmeSq> sq_;
  std::vector<NvmeCq> cq_;
  std::vector<NvmeVector> vec_;
  std::unordered_map<uint64_t, std::array<uint8_t, kPageBytes>> blocks_;
  std::array<uint64_t, static_cast<unsigned>(NvmeStat::kCount)> stats_{};
};

}  // namespace smmu_vp

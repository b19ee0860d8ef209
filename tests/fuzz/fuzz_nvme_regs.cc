// fuzz_nvme_regs: the NVMe controller core (models/nvme/nvme_core.h) with a
// fuzzer-controlled host memory: register reads and writes of any size (CC
// enable/shutdown, AQA/ASQ/ACQ, INTMS/INTMC, the vector table, SQ tail and
// CQ head doorbells), and the work the SystemC module does between them:
// finishing a CC transition, fetching submission-queue entries from host
// memory, executing admin commands (queue creation/deletion, features,
// identify) and checking I/O commands, walking their PRP entries and PRP
// lists in host memory, moving the data to and from the media, and posting
// completions. Timing, interrupts and the bus belong to the SystemC module.
// Checks: PRP segments never cross a page and add up to the transfer;
// queue pointers stay inside their queues.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_device.h"
#include "nvme/nvme_core.h"

using namespace smmu_vp;

namespace {

constexpr uint64_t kHostBase = 0x10000;
constexpr size_t kHostBytes = 32 << 10;
std::vector<uint8_t> host(kHostBytes);

bool host_range(uint64_t pa, uint64_t len) {
  return pa >= kHostBase && len <= kHostBytes && pa - kHostBase <= kHostBytes - len;
}
bool host_read(uint64_t pa, void* out, uint64_t len) {
  if (!host_range(pa, len)) return false;
  std::memcpy(out, host.data() + (pa - kHostBase), len);
  return true;
}
bool host_write(uint64_t pa, const void* in, uint64_t len) {
  if (!host_range(pa, len)) return false;
  std::memcpy(host.data() + (pa - kHostBase), in, len);
  return true;
}

// What nvme.cc does with one fetched entry, untimed.
void execute(NvmeCore& c, unsigned qid, const NvmeSq& sq, uint32_t index) {
  nvme_sqe e{};
  if (!host_read(sq.entry_addr(index), &e, sizeof e)) {
    c.fatal_error();  // the entry could not be fetched
    return;
  }
  nvme_cqe cqe{};
  cqe.sqid = static_cast<uint16_t>(qid);
  cqe.cid = NVME_CDW0_CID(e.cdw0);
  const uint16_t cqid = sq.cqid;
  std::vector<uint8_t> data;
  uint64_t bytes = 0;
  bool write = false;
  if (qid == 0) {
    const NvmeCore::AdminResult r = c.admin(e, &data);
    cqe.status = r.status;
    cqe.dw0 = r.dw0;
    bytes = data.size();
  } else {
    const NvmeCore::IoCommand d = c.decode_io(e);
    cqe.status = d.status;
    if (d.status == NvmeCore::kSuccess && d.opcode != NVME_CMD_FLUSH) {
      bytes = d.bytes;
      write = d.opcode == NVME_CMD_WRITE;
      if (bytes > 256 * 1024) bytes = 0;  // big transfers: checked, not moved (speed)
      data.resize(bytes);
      if (bytes && !write) c.media_read(d.offset, data.data(), bytes);
    }
    if (bytes && cqe.status == NvmeCore::kSuccess) {
      std::vector<PrpSegment> segs;
      const PrpListReader list = [](uint64_t addr, uint32_t n, uint64_t* out) {
        return host_read(addr, out, n * 8ull);
      };
      const PrpResult pr = prp_segments(e.prp1, e.prp2, bytes, NvmeCore::kPageBytes, list, &segs);
      if (pr == PrpResult::kOk) {
        uint64_t sum = 0, at = 0;
        bool ok = true;
        for (const PrpSegment& s : segs) {
          if (s.len == 0 || s.len > NvmeCore::kPageBytes ||
              (s.addr % NvmeCore::kPageBytes) + s.len > NvmeCore::kPageBytes)
            std::abort();  // a segment crosses a page
          sum += s.len;
          ok &= write ? host_read(s.addr, data.data() + at, s.len) : host_write(s.addr, data.data() + at, s.len);
          at += s.len;
        }
        if (sum != bytes) std::abort();
        if (!ok) cqe.status = c.fail(NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR);
        else if (write) c.media_write(d.offset, data.data(), bytes);
      } else {
        cqe.status = c.fail(NVME_SCT_GENERIC, pr == PrpResult::kOffsetInvalid ? NVME_SC_PRP_OFFSET_INVALID
                                                                             : NVME_SC_DATA_TRANSFER_ERROR);
      }
    }
  }
  uint64_t addr = 0;
  if (c.post(cqid, &cqe, &addr) && !host_write(addr, &cqe, sizeof cqe)) c.fatal_error();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  std::memset(host.data(), 0, host.size());
  // The host memory's first bytes come from the input: queues, entries, PRP lists.
  const size_t n = std::min<size_t>(in.u16() % 4096, in.left());
  for (size_t i = 0; i < n; ++i) host[i] = in.u8();
  NvmeCore::Params p;
  p.queues = 1 + in.pick(4);
  p.vectors = 1 + in.pick(5);
  p.capacity_bytes = 1 << 20;
  NvmeCore c(p);
  unsigned rr = 0;
  while (!in.empty()) {
    const uint8_t op = in.u8();
    switch (op & 7) {
      case 0: {
        const fuzz::RegAccess a = fuzz::reg_access(in, NvmeCore::register_block_size());
        uint64_t v = 0;
        if (c.read(a.offset, a.len, &v) != NvmeCore::Access::kOk && v != 0) std::abort();
        break;
      }
      case 1:
      case 2:
      case 3: {
        fuzz::RegAccess a = fuzz::reg_access(in, NvmeCore::register_block_size());
        uint64_t v = in.u64();
        if (op & 0x80) v = kHostBase + (v % kHostBytes & ~0xfffull);  // ASQ/ACQ in host memory
        if (op & 0x40) {  // a doorbell, with a small index
          a = {NVME_REG_DBS + (in.u8() % 16) * 4ull, 4};
          v &= 0xff;
        }
        NvmeCore::Effects fx;
        c.write(a.offset, a.len, v, &fx);
        break;
      }
      case 4:
        if (c.transition() != NvmeCore::Transition::kNone) c.finish_transition();
        break;
      case 5: {  // host memory changes (the driver writing entries)
        const size_t at = in.u16() % (kHostBytes - 8);
        const uint64_t v = in.u64();
        std::memcpy(host.data() + at, &v, 8);
        break;
      }
      default: {  // fetch and execute a batch
        const int qi = c.running() ? c.next_sq(rr) : -1;
        if (qi < 0) break;
        rr = static_cast<unsigned>(qi);
        const NvmeSq sq = *c.sq(rr);
        uint32_t first = 0;
        const uint32_t got = c.fetch(rr, 1 + in.pick(4), &first);
        for (uint32_t i = 0; i < got && c.sq(rr) && c.running(); ++i) execute(c, rr, sq, first + i);
        break;
      }
    }
    for (unsigned q = 0; q <= p.queues; ++q) {
      if (const NvmeSq* s = c.sq(q))
        if (s->size == 0 || s->head >= s->size || s->tail >= s->size) std::abort();
      if (const NvmeCq* cq = c.cq(q))
        if (cq->size == 0 || cq->head >= cq->size || cq->tail >= cq->size) std::abort();
    }
  }
  return 0;
}

// The NVMe drive's SystemC module against a plain memory and a host thread
// that plays the driver: bring-up, Identify, I/O queues, data written and
// read back through PRP lists, a faulting transfer, MSI and wired
// interrupts, a full completion queue, media bandwidth and parallelism.
// Each test elaborates its own modules: one test per process (ctest).
#include <gtest/gtest.h>

#include "bench_memory.h"

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "common/payload.h"
#include "common/tlm_time.h"
#include "nvme/nvme.h"

namespace smmu_vp {
namespace {

constexpr uint64_t kMemBase = 0x8000'0000;
constexpr uint64_t kMemSize = 4 << 20;
constexpr uint64_t kAsq = kMemBase, kAcq = kMemBase + 0x1000;
constexpr uint64_t kIoSq = kMemBase + 0x2000, kIoCq = kMemBase + 0x3000;
constexpr uint64_t kMsi = kMemBase + 0x4000;
constexpr uint64_t kIdent = kMemBase + 0x5000;
constexpr uint64_t kList = kMemBase + 0x6000;
constexpr uint32_t kAdminEntries = 16, kIoEntries = 64;
constexpr uint32_t kCc = NVME_CC_EN | (6u << NVME_CC_IOSQES_SHIFT) | (4u << NVME_CC_IOCQES_SHIFT);

// Scattered data pages: writes from every other page, reads into every third.
uint64_t write_page(unsigned i) { return kMemBase + 0x10'0000 + i * 0x2000ull; }
uint64_t read_page(unsigned i) { return kMemBase + 0x20'0000 + i * 0x3000ull; }

struct Memory : test::BenchMemory {
  // MSI writes to kMsi are recorded in `watched` (data, time in ns).
  explicit Memory(sc_core::sc_module_name n) : test::BenchMemory(n, kMemBase, kMemSize) { watch = kMsi; }
};

using Irqs = test::BenchIrqs;

double now_ns() { return sc_core::sc_time_stamp().to_seconds() * 1e9; }

// Plays the driver: register accesses through a socket, queues in memory.
struct Host : test::BenchHost<Host> {
  using BenchHost::BenchHost;
  Memory* m = nullptr;
  uint32_t asq_tail = 0, acq_head = 0, iosq_tail = 0, iocq_head = 0, io_entries = kIoEntries;
  bool acq_phase = true, iocq_phase = true;
  uint16_t next_cid = 1;
  double poll_ns = 50;

  // Admin queues, CC.EN, then CSTS.RDY polled; returns the time it took, ns.
  double enable() {
    wr(NVME_REG_AQA, NVME_AQA_ASQS(kAdminEntries) | NVME_AQA_ACQS(kAdminEntries));
    access(true, NVME_REG_ASQ, kAsq, 8);
    access(true, NVME_REG_ACQ, kAcq, 8);
    const double t0 = now_ns();
    wr(NVME_REG_CC, kCc);
    while (!(rd(NVME_REG_CSTS) & NVME_CSTS_RDY)) {
      EXPECT_EQ(rd(NVME_REG_CSTS) & NVME_CSTS_CFS, 0u);
      if (now_ns() - t0 > 1e6) return -1;
      sc_core::wait(200, sc_core::SC_NS);
    }
    return now_ns() - t0;
  }

  // Waits for the completion at a CQ's head (phase tag), consumes it.
  nvme_cqe reap(uint64_t cq, uint32_t entries, uint32_t& head, bool& phase, uint16_t qid) {
    const double t0 = now_ns();
    for (;;) {
      const nvme_cqe e = m->get<nvme_cqe>(cq + head * NVME_CQE_BYTES);
      if ((e.status & NVME_CQE_PHASE) == (phase ? 1u : 0u)) {
        if (++head == entries) {
          head = 0;
          phase = !phase;
        }
        wr(NVME_CQ_HEAD_DB(qid, 0), head);
        return e;
      }
      if (now_ns() - t0 > 20e6) {
        ADD_FAILURE() << "no completion on CQ " << qid;
        return nvme_cqe{};
      }
      sc_core::wait(sc_core::sc_time(poll_ns, sc_core::SC_NS));
    }
  }

  nvme_cqe admin(nvme_sqe s) {
    s.cdw0 = (s.cdw0 & 0xFFFFu) | (static_cast<uint32_t>(next_cid++) << 16);
    m->put(kAsq + asq_tail * NVME_SQE_BYTES, s);
    asq_tail = (asq_tail + 1) % kAdminEntries;
    wr(NVME_SQ_TAIL_DB(0, 0), asq_tail);
    const nvme_cqe e = reap(kAcq, kAdminEntries, acq_head, acq_phase, 0);
    EXPECT_EQ(e.cid, NVME_CDW0_CID(s.cdw0));
    EXPECT_EQ(e.sqid, 0u);
    EXPECT_EQ(e.sqhd, asq_tail);
    return e;
  }

  // Queues an I/O command on SQ 1 without ringing; ring() rings for all queued.
  void queue_io(nvme_sqe s) {
    s.cdw0 = (s.cdw0 & 0xFFFFu) | (static_cast<uint32_t>(next_cid++) << 16);
    m->put(kIoSq + iosq_tail * NVME_SQE_BYTES, s);
    iosq_tail = (iosq_tail + 1) % kIoEntries;
  }
  void ring() { wr(NVME_SQ_TAIL_DB(1, 0), iosq_tail); }
  nvme_cqe reap_io() { return reap(kIoCq, io_entries, iocq_head, iocq_phase, 1); }
  nvme_cqe io(const nvme_sqe& s) {
    queue_io(s);
    ring();
    return reap_io();
  }

  // I/O CQ 1 (vector, IEN) and SQ 1.
  void create_io_queues(uint16_t vector, bool ien = true, uint32_t cq_entries = kIoEntries) {
    io_entries = cq_entries;
    nvme_sqe cq{};
    cq.cdw0 = NVME_ADMIN_CREATE_CQ;
    cq.prp1 = kIoCq;
    cq.cdw10 = NVME_QUEUE_CDW10(1, cq_entries);
    cq.cdw11 = NVME_CQ_CDW11(vector, ien);
    EXPECT_EQ(admin(cq).status >> 1, 0u);
    nvme_sqe sq{};
    sq.cdw0 = NVME_ADMIN_CREATE_SQ;
    sq.prp1 = kIoSq;
    sq.cdw10 = NVME_QUEUE_CDW10(1, kIoEntries);
    sq.cdw11 = NVME_SQ_CDW11(1);
    EXPECT_EQ(admin(sq).status >> 1, 0u);
  }
};

// PRP1/PRP2 for data at `first_offset` into pages[0], continuing in the next
// pages; a list at kList when more than two pages.
void prps(Memory& m, nvme_sqe& s, const std::vector<uint64_t>& pages, uint32_t first_offset, uint64_t len) {
  s.prp1 = pages[0] + first_offset;
  const uint64_t first = 4096 - first_offset;
  const uint64_t rest = len > first ? (len - first + 4095) / 4096 : 0;
  if (rest == 1) s.prp2 = pages[1];
  if (rest > 1) {
    for (uint64_t i = 0; i < rest; ++i) m.put<uint64_t>(kList + 8 * i, pages[1 + i]);
    s.prp2 = kList;
  }
}

nvme_sqe rw(uint8_t opc, uint64_t slba, uint32_t blocks) {
  nvme_sqe s{};
  s.cdw0 = opc;
  s.nsid = 1;
  s.cdw10 = static_cast<uint32_t>(slba);
  s.cdw11 = static_cast<uint32_t>(slba >> 32);
  s.cdw12 = blocks - 1;
  return s;
}

uint16_t sc_of(const nvme_cqe& e) { return NVME_STATUS_SC(e.status); }

struct Bench {
  Memory mem{"mem"};
  Irqs irqs;
  StatsRegistry stats;
  NvmeConfig cfg;
  std::unique_ptr<Nvme> nvme;
  Host host{"host"};

  Bench() {
    cfg.capacity_gib = 1;
    cfg.irq = 100;
  }
  void build() {
    nvme = std::make_unique<Nvme>("nvme0", cfg, &irqs, stats, nullptr);
    nvme->mem.bind(mem.socket);
    host.socket.bind(nvme->regs);
    host.m = &mem;
  }
  uint64_t stat(NvmeStat s) { return nvme->core().stat(s); }
};

TEST(NvmeModel, BringUpSetsReadyAfterTheEnableTime) {
  Bench b;
  b.cfg.enable_us = 10;
  b.build();
  double took = 0;
  uint64_t cap = 0;
  b.host.body = [&](Host& h) {
    cap = h.access(false, NVME_REG_CAP, 0, 8);
    EXPECT_EQ(h.rd(NVME_REG_VS), NVME_VS_2_0);
    took = h.enable();
    EXPECT_EQ(h.rd(NVME_REG_CSTS), NVME_CSTS_RDY);
    // Disable: RDY clears after a short time.
    h.wr(NVME_REG_CC, 0);
    sc_core::wait(2, sc_core::SC_US);
    EXPECT_EQ(h.rd(NVME_REG_CSTS), 0u);
  };
  sc_core::sc_start(100, sc_core::SC_US);
  EXPECT_EQ(NVME_CAP_MQES(cap), 4095u);
  EXPECT_NE(cap & NVME_CAP_CQR, 0u);
  EXPECT_GE(took, 10'000.0);
  EXPECT_LT(took, 11'000.0);
}

TEST(NvmeModel, BadSettingsSetFatalStatusAndBadAccessesGetBusErrors) {
  Bench b;
  b.build();
  b.host.body = [&](Host& h) {
    h.wr(NVME_REG_AQA, 0);  // admin queues of 1 entry
    h.wr(NVME_REG_CC, kCc);
    sc_core::wait(50, sc_core::SC_US);
    EXPECT_EQ(h.rd(NVME_REG_CSTS), NVME_CSTS_CFS);
    uint64_t v = 0;
    EXPECT_EQ(h.access_status(false, NVME_REG_CC + 1, &v, 4), tlm::TLM_BURST_ERROR_RESPONSE);
    EXPECT_EQ(h.access_status(false, NVME_REG_CSTS, &v, 8), tlm::TLM_BURST_ERROR_RESPONSE);
    EXPECT_EQ(h.access_status(true, NVME_REG_BLOCK_SIZE + 4, &v, 4), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(h.access_status(true, NVME_MSIX_REG(b.cfg.vectors, 0), &v, 4), tlm::TLM_ADDRESS_ERROR_RESPONSE);
  };
  sc_core::sc_start(100, sc_core::SC_US);
  EXPECT_EQ(b.stat(NvmeStat::kFatal), 1u);
}

TEST(NvmeModel, IdentifyDataLandsInMemory) {
  Bench b;
  b.cfg.capacity_gib = 4;
  b.build();
  b.host.body = [&](Host& h) {
    ASSERT_GT(h.enable(), 0);
    nvme_sqe s{};
    s.cdw0 = NVME_ADMIN_IDENTIFY;
    s.cdw10 = NVME_IDENTIFY_CONTROLLER;
    s.prp1 = kIdent;
    nvme_cqe e = h.admin(s);
    EXPECT_EQ(e.status >> 1, 0u);
    EXPECT_EQ(b.mem.get<uint16_t>(kIdent + NVME_IDCTRL_VID), NvmeCore::kVendorId);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(b.mem.at(kIdent + NVME_IDCTRL_MN)), 12), "smmu-vp NVMe");
    EXPECT_EQ(std::string(reinterpret_cast<char*>(b.mem.at(kIdent + NVME_IDCTRL_SN)), 9), "SVP-nvme0");
    EXPECT_EQ(*b.mem.at(kIdent + NVME_IDCTRL_SQES), 0x66);
    EXPECT_EQ(*b.mem.at(kIdent + NVME_IDCTRL_CQES), 0x44);
    EXPECT_EQ(*b.mem.at(kIdent + NVME_IDCTRL_MDTS), NvmeCore::kMdts);
    EXPECT_EQ(b.mem.get<uint32_t>(kIdent + NVME_IDCTRL_NN), 1u);
    s.cdw10 = NVME_IDENTIFY_NAMESPACE;
    s.nsid = 1;
    s.prp1 = kIdent + 0x800;  // the second half of a page and the first of the next: PRP2
    s.prp2 = kIdent + 0x1000;
    e = h.admin(s);
    EXPECT_EQ(e.status >> 1, 0u);
    EXPECT_EQ(b.mem.get<uint64_t>(kIdent + 0x800 + NVME_IDNS_NSZE), (4ull << 30) / 4096);
    EXPECT_EQ((b.mem.get<uint32_t>(kIdent + 0x800 + NVME_IDNS_LBAF0) >> 16) & 0xFF, 12u);
    // A bad command is answered, with the status and DNR.
    s.cdw0 = 0x7F;
    e = h.admin(s);
    EXPECT_EQ(sc_of(e), NVME_SC_INVALID_OPCODE);
    EXPECT_NE(e.status & NVME_STATUS_DNR, 0u);
  };
  sc_core::sc_start(1, sc_core::SC_MS);
  EXPECT_EQ(b.stat(NvmeStat::kAdmin), 3u);
  EXPECT_EQ(b.stat(NvmeStat::kInvalidOpcode), 1u);
  // Vector 0 (the admin CQ) is masked in the table: wired line irq + 0, once per completion.
  EXPECT_EQ(b.irqs.lines, std::vector<unsigned>(3, 100u));
}

TEST(NvmeModel, WriteThenReadBack128KiBThroughPrpLists) {
  Bench b;
  b.build();
  const uint32_t len = 128 * 1024;
  b.host.body = [&](Host& h) {
    ASSERT_GT(h.enable(), 0);
    nvme_sqe nq{};
    nq.cdw0 = NVME_ADMIN_SET_FEATURES;
    nq.cdw10 = NVME_FEAT_NUM_QUEUES;
    nq.cdw11 = NVME_NUM_QUEUES(1, 1);
    nvme_cqe e = h.admin(nq);
    EXPECT_EQ(e.dw0, NVME_NUM_QUEUES(1, 1));
    h.create_io_queues(1);
    // Write from 33 scattered pages, starting 512 bytes into the first.
    std::vector<uint64_t> wpages, rpages;
    for (unsigned i = 0; i < 33; ++i) wpages.push_back(write_page(i));
    for (unsigned i = 0; i < 32; ++i) rpages.push_back(read_page(i));
    std::vector<uint8_t> data(len);
    for (uint32_t i = 0; i < len; ++i) data[i] = static_cast<uint8_t>((i * 131) ^ (i >> 9));
    uint32_t off = 0;
    for (unsigned p = 0; off < len; ++p) {
      const uint32_t start = p == 0 ? 512 : 0, n = std::min(4096 - start, len - off);
      std::memcpy(b.mem.at(wpages[p] + start), data.data() + off, n);
      off += n;
    }
    nvme_sqe w = rw(NVME_CMD_WRITE, 1000, len / 4096);
    prps(b.mem, w, wpages, 512, len);
    e = h.io(w);
    EXPECT_EQ(e.status >> 1, 0u);
    EXPECT_EQ(e.sqid, 1u);
    EXPECT_EQ(e.sqhd, 1u);
    // Read it back into 32 other pages.
    nvme_sqe r = rw(NVME_CMD_READ, 1000, len / 4096);
    prps(b.mem, r, rpages, 0, len);
    e = h.io(r);
    EXPECT_EQ(e.status >> 1, 0u);
    EXPECT_EQ(e.sqhd, 2u);
    unsigned bad = 0;
    for (uint32_t i = 0; i < len; ++i)
      if (*b.mem.at(rpages[i / 4096] + i % 4096) != data[i]) ++bad;
    EXPECT_EQ(bad, 0u);
    // Blocks never written read as zeros.
    r = rw(NVME_CMD_READ, 5000, 2);
    prps(b.mem, r, rpages, 0, 8192);
    EXPECT_EQ(h.io(r).status >> 1, 0u);
    EXPECT_EQ(b.mem.get<uint64_t>(rpages[0]), 0u);
    EXPECT_EQ(b.mem.get<uint64_t>(rpages[1] + 4088), 0u);
    // Flush: nothing to write back, completes.
    nvme_sqe f{};
    f.cdw0 = NVME_CMD_FLUSH;
    f.nsid = 1;
    EXPECT_EQ(h.io(f).status >> 1, 0u);
    // Beyond the namespace.
    r = rw(NVME_CMD_READ, (1ull << 30) / 4096 - 1, 2);
    prps(b.mem, r, rpages, 0, 8192);
    e = h.io(r);
    EXPECT_EQ(sc_of(e), NVME_SC_LBA_OUT_OF_RANGE);
    EXPECT_NE(e.status & NVME_STATUS_DNR, 0u);
  };
  sc_core::sc_start(5, sc_core::SC_MS);
  EXPECT_EQ(b.stat(NvmeStat::kWrites), 1u);
  EXPECT_EQ(b.stat(NvmeStat::kReads), 3u);
  EXPECT_EQ(b.stat(NvmeStat::kFlushes), 1u);
  EXPECT_EQ(b.stat(NvmeStat::kBytesWritten), len);
  EXPECT_EQ(b.stat(NvmeStat::kBytesRead), len + 8192u);
  EXPECT_EQ(b.stat(NvmeStat::kLbaOutOfRange), 1u);
  EXPECT_EQ(b.nvme->core().stored_blocks(), 32u);
  b.nvme->finalize();
  EXPECT_EQ(b.stats.find_counter("nvme0.writes")->value(), 1u);
  EXPECT_GT(*b.stats.find_value("nvme0.iops"), 0.0);
  EXPECT_EQ(b.stats.find_histogram("nvme0.command_latency_ns")->count(), 5u);  // I/O commands only
}

TEST(NvmeModel, AFaultingDestinationGivesADataTransferError) {
  Bench b;
  b.build();
  b.host.body = [&](Host& h) {
    ASSERT_GT(h.enable(), 0);
    h.create_io_queues(1);
    std::vector<uint64_t> rpages;
    for (unsigned i = 0; i < 8; ++i) rpages.push_back(read_page(i));
    b.mem.fault_lo = read_page(5);  // as if the SMMU aborted the writes to one page
    b.mem.fault_hi = read_page(5) + 4096;
    nvme_sqe r = rw(NVME_CMD_READ, 0, 8);
    prps(b.mem, r, rpages, 0, 8 * 4096);
    nvme_cqe e = h.io(r);
    EXPECT_EQ(NVME_STATUS_SCT(e.status), NVME_SCT_GENERIC);
    EXPECT_EQ(sc_of(e), NVME_SC_DATA_TRANSFER_ERROR);
    EXPECT_EQ(e.status & NVME_STATUS_DNR, 0u);  // a retry may succeed once the mapping is fixed
    // A PRP list in the faulting range: the same.
    b.mem.fault_lo = kList;
    b.mem.fault_hi = kList + 4096;
    e = h.io(r);
    EXPECT_EQ(sc_of(e), NVME_SC_DATA_TRANSFER_ERROR);
    // The drive goes on.
    b.mem.fault_lo = b.mem.fault_hi = 0;
    e = h.io(r);
    EXPECT_EQ(e.status >> 1, 0u);
    EXPECT_EQ(h.rd(NVME_REG_CSTS), NVME_CSTS_RDY);
  };
  sc_core::sc_start(5, sc_core::SC_MS);
  EXPECT_EQ(b.stat(NvmeStat::kDataTransferErrors), 2u);
  EXPECT_EQ(b.stat(NvmeStat::kReads), 3u);
  EXPECT_EQ(b.stat(NvmeStat::kBytesRead), 8u * 4096);
  EXPECT_GE(b.mem.faults, 2u);
}

TEST(NvmeModel, MsiWriteReachesTheConfiguredAddressWithItsData) {
  Bench b;
  b.build();
  std::vector<double> completed_ns;
  b.host.body = [&](Host& h) {
    ASSERT_GT(h.enable(), 0);
    h.create_io_queues(3);
    h.access(true, NVME_MSIX_REG(3, NVME_MSIX_ADDR_LO), kMsi, 8);
    h.wr(NVME_MSIX_REG(3, NVME_MSIX_DATA), 0xABCD);
    h.wr(NVME_MSIX_REG(3, NVME_MSIX_CTRL), 0);  // unmask
    const size_t wired = b.irqs.lines.size();
    std::vector<uint64_t> pages = {read_page(0)};
    nvme_sqe r = rw(NVME_CMD_READ, 0, 1);
    prps(b.mem, r, pages, 0, 4096);
    h.io(r);
    completed_ns.push_back(now_ns());
    EXPECT_EQ(b.irqs.lines.size(), wired);  // no wired line for an MSI vector
    // Masked again: the wired line irq + 3.
    h.wr(NVME_MSIX_REG(3, NVME_MSIX_CTRL), NVME_MSIX_CTRL_MASKED);
    h.io(r);
    ASSERT_EQ(b.irqs.lines.size(), wired + 1);
    EXPECT_EQ(b.irqs.lines.back(), 103u);
    // INTMS holds a wired vector back until INTMC.
    h.wr(NVME_REG_INTMS, 1u << 3);
    h.io(r);
    EXPECT_EQ(b.irqs.lines.size(), wired + 1);
    h.wr(NVME_REG_INTMC, 1u << 3);
    ASSERT_EQ(b.irqs.lines.size(), wired + 2);
    EXPECT_EQ(b.irqs.lines.back(), 103u);
  };
  sc_core::sc_start(2, sc_core::SC_MS);
  ASSERT_EQ(b.mem.watched.size(), 1u);
  EXPECT_EQ(b.mem.watched[0].first, 0xABCDu);
  EXPECT_EQ(b.mem.get<uint32_t>(kMsi), 0xABCDu);
  // Sent as the CQE landed (the host, polling, may see the CQE a write latency earlier).
  EXPECT_NEAR(b.mem.watched[0].second, completed_ns[0], 1000.0);
  // Two queue creations on the admin CQ, three reads on CQ 1.
  EXPECT_EQ(b.stats.find_counter("nvme0.irqs")->value(), 5u);
}

TEST(NvmeModel, AnAbortedQueueEntryReadIsFatalUntilReset) {
  Bench b;
  b.build();
  b.host.body = [&](Host& h) {
    ASSERT_GT(h.enable(), 0);
    h.create_io_queues(1);
    b.mem.fault_lo = kIoSq;  // the SQ's page faults
    b.mem.fault_hi = kIoSq + 4096;
    nvme_sqe f{};
    f.cdw0 = NVME_CMD_FLUSH;
    f.nsid = 1;
    h.queue_io(f);
    h.ring();
    sc_core::wait(5, sc_core::SC_US);
    EXPECT_EQ(h.rd(NVME_REG_CSTS), NVME_CSTS_RDY | NVME_CSTS_CFS);
    EXPECT_EQ(b.mem.get<nvme_cqe>(kIoCq).status, 0u);  // nothing posted
    // The host resets the controller and starts again.
    b.mem.fault_lo = b.mem.fault_hi = 0;
    h.wr(NVME_REG_CC, 0);
    sc_core::wait(2, sc_core::SC_US);
    EXPECT_EQ(h.rd(NVME_REG_CSTS), 0u);
    std::memset(b.mem.at(kAcq), 0, 4096);
    h.asq_tail = h.acq_head = 0;
    h.acq_phase = true;
    ASSERT_GT(h.enable(), 0);
    nvme_sqe id{};
    id.cdw0 = NVME_ADMIN_IDENTIFY;
    id.cdw10 = NVME_IDENTIFY_CONTROLLER;
    id.prp1 = kIdent;
    EXPECT_EQ(h.admin(id).status >> 1, 0u);
  };
  sc_core::sc_start(1, sc_core::SC_MS);
  EXPECT_EQ(b.stat(NvmeStat::kFatal), 1u);
  EXPECT_EQ(b.stats.find_counter("nvme0.dropped_completions")->value(), 1u);
}

TEST(NvmeModel, AFullCompletionQueueHoldsCompletionsUntilTheHostConsumes) {
  Bench b;
  b.build();
  b.host.body = [&](Host& h) {
    ASSERT_GT(h.enable(), 0);
    h.create_io_queues(1, false, 4);  // 4 entries: 3 completions fit
    nvme_sqe f{};
    f.cdw0 = NVME_CMD_FLUSH;
    f.nsid = 1;
    for (int i = 0; i < 6; ++i) h.queue_io(f);
    h.ring();
    sc_core::wait(20, sc_core::SC_US);
    // Three posted with phase 1, the fourth slot still empty: no overwrite.
    for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(b.mem.get<nvme_cqe>(kIoCq + 16 * i).status & 1u, 1u) << i;
    EXPECT_EQ(b.mem.get<nvme_cqe>(kIoCq + 48).status & 1u, 0u);
    const uint16_t first_cid = b.mem.get<nvme_cqe>(kIoCq).cid;
    // The host consumes them all, in order; the rest follow.
    for (uint16_t i = 0; i < 6; ++i) {
      const nvme_cqe e = h.reap_io();
      EXPECT_EQ(e.cid, first_cid + i);
      EXPECT_EQ(e.status >> 1, 0u);
    }
    EXPECT_EQ(h.iocq_head, 2u);
    EXPECT_FALSE(h.iocq_phase);  // wrapped once
  };
  sc_core::sc_start(2, sc_core::SC_MS);
  EXPECT_EQ(b.stat(NvmeStat::kFlushes), 6u);
  EXPECT_EQ(b.stat(NvmeStat::kDoorbellErrors), 0u);
}

// Submits n reads of `blocks` 4 KiB blocks at once on SQ 1; returns the time
// from the doorbell to the last completion, ns.
double timed_reads(Bench& b, Host& h, unsigned n, uint32_t blocks) {
  std::vector<uint64_t> pages;
  for (unsigned i = 0; i < 33; ++i) pages.push_back(read_page(i));
  for (unsigned i = 0; i < n; ++i) {
    nvme_sqe r = rw(NVME_CMD_READ, i * blocks, blocks);
    prps(b.mem, r, pages, 0, blocks * 4096ull);
    h.queue_io(r);
  }
  const double t0 = now_ns();
  h.ring();
  for (unsigned i = 0; i < n; ++i) EXPECT_EQ(h.reap_io().status >> 1, 0u);
  return now_ns() - t0;
}

TEST(NvmeModel, ReadsAreBoundByTheMediaBandwidth) {
  Bench b;
  b.cfg.parallelism = 64;  // not the limit here
  b.cfg.read_mbps = 1000;
  b.cfg.read_latency_us = 20;
  b.build();
  const unsigned n = 16;
  const uint32_t blocks = 32;  // 128 KiB
  double took = 0;
  b.host.body = [&](Host& h) {
    ASSERT_GT(h.enable(), 0);
    h.create_io_queues(1, false);
    h.poll_ns = 200;
    took = timed_reads(b, h, n, blocks);
  };
  sc_core::sc_start(20, sc_core::SC_MS);
  const double bytes = n * blocks * 4096.0;
  const double floor_ns = bytes / 1000.0 * 1000.0;  // 1000 MB/s = 1 byte/ns
  EXPECT_GE(took, floor_ns);
  // The first latency and the last transfer to the host on top, little more.
  EXPECT_LT(took, floor_ns + 20'000 + 60'000);
  const Histogram* h = b.stats.find_histogram("nvme0.command_latency_ns");
  ASSERT_NE(h, nullptr);
  EXPECT_GE(h->min(), 20'000.0);
}

// With parallelism 1 two reads take twice as long as one; with 2 about as long.
class NvmeParallelism : public ::testing::TestWithParam<unsigned> {};

TEST_P(NvmeParallelism, TwoReadsAgainstOne) {
  Bench b;
  b.cfg.parallelism = GetParam();
  b.build();
  double one = 0, two = 0;
  b.host.body = [&](Host& h) {
    ASSERT_GT(h.enable(), 0);
    h.create_io_queues(1, false);
    one = timed_reads(b, h, 1, 1);
    two = timed_reads(b, h, 2, 1);
  };
  sc_core::sc_start(5, sc_core::SC_MS);
  EXPECT_GE(one, 20'000.0);  // the read latency at least
  if (GetParam() == 1) {
    EXPECT_GE(two, 1.9 * one);
    EXPECT_LE(two, 2.1 * one);
  } else {
    EXPECT_LT(two, 1.2 * one);
  }
}

INSTANTIATE_TEST_SUITE_P(Slots, NvmeParallelism, ::testing::Values(1u, 2u));

TEST(NvmeModel, ShutdownCompletesAfterTheCommandsInFlight) {
  Bench b;
  b.build();
  b.host.body = [&](Host& h) {
    ASSERT_GT(h.enable(), 0);
    h.create_io_queues(1, false);
    std::vector<uint64_t> pages = {read_page(0)};
    nvme_sqe r = rw(NVME_CMD_READ, 0, 1);
    prps(b.mem, r, pages, 0, 4096);
    h.queue_io(r);
    h.ring();
    const double t0 = now_ns();
    h.wr(NVME_REG_CC, kCc | NVME_CC_SHN_NORMAL);
    while ((h.rd(NVME_REG_CSTS) & NVME_CSTS_SHST_MASK) != NVME_CSTS_SHST_COMPLETE) sc_core::wait(1, sc_core::SC_US);
    EXPECT_GE(now_ns() - t0, 20'000.0);  // the read had to finish
    EXPECT_EQ(h.reap_io().status >> 1, 0u);
  };
  sc_core::sc_start(1, sc_core::SC_MS);
}

}  // namespace
}  // namespace smmu_vp

// fuzz_smmu_regs: the SMMU register file (models/smmu/register_file.h):
// reads and writes of any size at any offset (mostly inside the register
// space, mostly aligned, so that real registers are hit), the completions the
// SMMU model performs (CR0/IRQ_CTRL/GBPA acknowledgement, GERROR, queue
// pointer updates) with deferred or immediate acknowledgement, and every
// derived accessor after each step; one file has ATS, PRI and stalls (the
// PRI queue's registers, ATSCHK). Checks: a refused access reads as zero
// and changes nothing a read can see; an accepted write of a read-only
// register leaves it unchanged.
#include <cstdint>
#include <cstdlib>

#include "fuzz_input.h"
#include "fuzz_profiles.h"
#include "smmu/register_file.h"

using namespace smmu_vp;
using namespace smmu_vp::smmu;

namespace {

// Reads everything the SMMU model derives from the registers.
uint64_t derived(const SmmuRegisterFile& r) {
  uint64_t h = r.cr0() ^ r.cr0ack() ^ r.cr1() ^ r.cr2() ^ r.gbpa() ^ r.gbpa_effective() ^ r.irq_ctrl() ^
               r.irq_ctrlack() ^ r.gerror() ^ r.gerrorn();
  h ^= r.gerror_irq_cfg().addr ^ r.eventq_irq_cfg().addr ^ r.strtab_base() ^ r.strtab_split() ^
       r.strtab_log2size() ^ static_cast<uint64_t>(r.strtab_fmt());
  h ^= r.cmdq_base_addr() ^ r.cmdq_log2size() ^ r.cmdq_prod().value() ^ r.cmdq_cons().value() ^ r.cmdq_error();
  h ^= r.eventq_base_addr() ^ r.eventq_log2size() ^ r.eventq_prod().value() ^ r.eventq_cons().value();
  h ^= r.eventq_overflow_pending() ^ r.smmuen() ^ r.e2h() ^ r.recinvsid() ^ r.gbpa_abort();
  h ^= r.priq_base_addr() ^ r.priq_log2size() ^ r.priq_prod().value() ^ r.priq_cons().value() ^
       r.priq_overflow_pending() ^ r.priqen() ^ r.priq_irqen() ^ r.priq_irq_last_only() ^ r.priq_irq_cfg().addr ^
       r.atschk();
  return h;
}

struct Files {
  SmmuRegisterFile v30{SmmuFeatures::v3_0_profile()};
  SmmuRegisterFile v33{SmmuFeatures::v3_3_profile()};
  SmmuRegisterFile pri{fuzz::with_ats_pri_stall()};  // ATSCHK, the PRI queue's registers
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Files files;
  fuzz::Input in(data, size);
  const uint8_t mode = in.u8();
  SmmuRegisterFile& r = (mode & 0x10) ? files.pri : mode & 1 ? files.v33 : files.v30;
  r.reset();
  SmmuRegisterFile::AckPolicy p;
  p.defer_cr0 = mode & 2;
  p.defer_irq_ctrl = mode & 4;
  p.defer_gbpa = mode & 8;
  r.set_ack_policy(p);
  const uint64_t space = r.register_space_size();

  while (!in.empty()) {
    const uint8_t op = in.u8();
    uint64_t off = in.u32();
    switch (op >> 6) {
      case 0: off %= 0x100; break;    // page 0's first registers, where most are
      case 1: off %= space; break;
      case 2: off = (off % space) & ~7ull; break;
      default: break;                 // anywhere, even far outside
    }
    static const unsigned kSizes[8] = {4, 8, 4, 8, 1, 2, 3, 16};
    const unsigned len = kSizes[(op >> 3) & 7];
    switch (op & 7) {
      case 0:
      case 1: {
        bool ok = true;
        const uint64_t v = r.read(off, len, &ok);
        if (!ok && v != 0) std::abort();
        break;
      }
      case 2:
      case 3: {
        const uint64_t v = in.u64();
        const uint64_t before = derived(r);
        bool ok = true;
        r.write(off, len, v, &ok);
        if (!ok && derived(r) != before) std::abort();  // a refused write changes nothing
        break;
      }
      case 4:
        switch (in.pick(3)) {
          case 0: r.complete_cr0_update(in.u32()); break;
          case 1: r.complete_irq_ctrl_update(in.u32()); break;
          default: r.complete_gbpa_update(); break;
        }
        break;
      case 5:
        r.raise_gerror(in.u32());
        break;
      case 6:
        switch (in.pick(6)) {
          case 0: r.set_cmdq_cons(in.u32()); break;
          case 1: r.set_cmdq_error(in.u32()); break;
          case 2: r.set_eventq_prod(in.u32()); break;
          case 3: r.set_priq_prod(in.u32()); break;
          case 4: r.signal_priq_overflow(); break;
          default: r.signal_eventq_overflow(); break;
        }
        break;
      default:
        break;
    }
    (void)derived(r);
  }
  return 0;
}

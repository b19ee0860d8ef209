// The register-level steps the SMMU-alone integration tests share: direct
// register accesses, the usual bring-up (a 64-entry command queue and event
// queue, a linear stream table of 64 STEs, then CR0) and publishing
// commands into the command queue with one PROD write. (smmu_test_driver.h
// is the other kind: a driver on the HAL, for tests of a whole platform.)
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>

#include <systemc>

#include "smmu/commands.h"
#include "smmu/register_file.h"
#include "smmu/registers.h"
#include "smmu/smmu.h"
#include "smmu_test_memory.h"

namespace smmu_vp::test {

// SMMUEN, CMDQEN and, unless told otherwise, EVENTQEN.
inline uint32_t cr0_on(bool eventq = true) {
  namespace cr0 = smmu::reg::cr0;
  return cr0::kSmmuEn.mask32() | cr0::kCmdqEn.mask32() | (eventq ? cr0::kEventqEn.mask32() : 0u);
}

class SmmuRegisterDriver {
 public:
  SmmuRegisterDriver(smmu::Smmu& smmu, SmmuTestMemory& mem, uint64_t cmdq, uint64_t evtq, uint64_t strtab)
      : smmu_(smmu), mem_(mem), cmdq_(cmdq), evtq_(evtq), strtab_(strtab) {}

  void wr(uint64_t off, uint64_t v, unsigned size = 4) {
    bool ok = false;
    smmu_.registers().write(off, size, v, &ok);
    ASSERT_TRUE(ok) << std::hex << off;
  }
  uint32_t rd(uint64_t off) {
    bool ok = false;
    return static_cast<uint32_t>(smmu_.registers().read(off, 4, &ok));
  }

  // Ends elaboration, points the queues and the stream table at their
  // memory (LOG2SIZE 6 each) and writes `cr0`.
  void bring_up(uint32_t cr0) {
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    wr(smmu::reg::kCmdqBase, cmdq_ | 6, 8);
    wr(smmu::reg::kEventqBase, evtq_ | 6, 8);
    wr(smmu::reg::kStrtabBase, strtab_, 8);
    wr(smmu::reg::kStrtabBaseCfg, 6);
    wr(smmu::reg::kCr0, cr0);
  }

  // Event queue records written so far (PROD's index) and record `i`.
  uint32_t events() { return smmu_.registers().eventq_prod().index(); }
  smmu::EventRecord event(unsigned i) const { return mem_.event(evtq_, i); }

  // Writes the commands after the last ones and publishes them all with
  // one PROD write; the caller runs simulated time.
  void publish(std::initializer_list<smmu::CommandWords> cmds) {
    for (const smmu::CommandWords& c : cmds) {
      mem_.poke(cmdq_ + 16 * (prod_ & 63), c.data(), 16);
      prod_ = (prod_ + 1) & 127;
    }
    wr(smmu::reg::kCmdqProd, prod_);
  }

 private:
  smmu::Smmu& smmu_;
  SmmuTestMemory& mem_;
  uint64_t cmdq_, evtq_, strtab_;
  uint32_t prod_ = 0;  // with its wrap bit
};

}  // namespace smmu_vp::test

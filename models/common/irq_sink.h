// What a device model raises its wired interrupts on. Models depend on this
// interface, not on the interrupt controller that implements it; message-
// signalled interrupts are not here: a device sends an MSI as a 32-bit write
// through its own master port, like any other DMA.
#pragma once

#include <systemc>

namespace smmu_vp {

class IrqSink {
 public:
  virtual ~IrqSink() = default;
  // Raises wired line `line` at the caller's time plus `delay`. Returns false
  // for a line that does not exist (the caller counts it).
  virtual bool raise_line(unsigned line, const sc_core::sc_time& delay = sc_core::SC_ZERO_TIME) = 0;
};

}  // namespace smmu_vp

// An IrqSink for a platform that wires interrupts as signals: line i of the
// sink drives out[i]. A raise is a pulse: high `delay` after the call, low
// `width` later (held high while pulses overlap), so a level- or
// edge-sensitive interrupt controller of the platform sees it either way.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include <systemc>

#include "common/irq_sink.h"

namespace smmu_vp {

class IrqSignals : public sc_core::sc_module, public IrqSink {
 public:
  sc_core::sc_vector<sc_core::sc_out<bool>> out;

  IrqSignals(sc_core::sc_module_name name, unsigned lines,
             const sc_core::sc_time& width = sc_core::sc_time(1, sc_core::SC_NS));

  // Throws InvalidConfig for a zero width.
  // Returns false for a line beyond `lines`, as IrqSink asks.
  bool raise_line(unsigned line, const sc_core::sc_time& delay = sc_core::SC_ZERO_TIME) override;
  // Pulses raised on `line` so far.
  uint64_t raised(unsigned line) const { return line < lines_.size() ? lines_[line].raised : 0; }

 private:
  // The one process that drives out[line] (a signal takes one driver): at
  // each start or end of a pulse, high while a pulse is in progress.
  void drive(unsigned line);

  struct Line {
    std::unique_ptr<sc_core::sc_event_queue> edges;  // every start and end
    std::multiset<sc_core::sc_time> starts, ends;    // pulses not yet begun / ended
    unsigned high = 0;                               // pulses in progress
    uint64_t raised = 0;
  };
  sc_core::sc_time width_;
  std::vector<Line> lines_;
};

}  // namespace smmu_vp

// An IrqSink for a platform that wires interrupts as signals: line i of the
// sink drives out[i]. A raise is a pulse: high `delay` after the call, low
// `width` later. Pulses of one line that overlap or touch (one raised for
// the time another ends) merge into one high period: a level-sensitive
// controller sees the line high throughout, an edge-sensitive one sees one
// edge for them all, as with a wired-OR line; raised() counts every raise.
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

  // Throws InvalidConfig for a zero width, before the module exists.
  IrqSignals(sc_core::sc_module_name name, unsigned lines,
             const sc_core::sc_time& width = sc_core::sc_time(1, sc_core::SC_NS));

  // Returns false for a line beyond `lines`, as IrqSink asks.
  bool raise_line(unsigned line, const sc_core::sc_time& delay = sc_core::SC_ZERO_TIME) override;
  // Pulses raised on `line` so far.
  uint64_t raised(unsigned line) const { return line < lines_.size() ? lines_[line].raised : 0; }

 private:
  static const sc_core::sc_module_name& checked(const sc_core::sc_module_name& name, const sc_core::sc_time& width);
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

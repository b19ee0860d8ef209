// Interrupt controller module: wired inputs (raise_line, called by device
// models), the MSI doorbell register (TLM target), and one wake-up event per
// core that WFI/WFE wait on.
//
// Register block (offsets from the controller's base):
//   0x000 TYPER   RO  number of interrupt lines
//   0x040 SETSPI  WO  32-bit write of a line number raises that line (MSI
//                      doorbell); an out-of-range number is counted and ignored
#pragma once

#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "common/irq_sink.h"
#include "common/stats.h"
#include "common/tlm_time.h"
#include "common/trace.h"
#include "cpu/interrupt_controller_core.h"

namespace smmu_vp {

struct IntcConfig {
  uint64_t base = 0x08000000;  // where the platform maps the register block
  unsigned lines = 256;        // wired interrupt lines
  double reg_latency_ns = 10.0;
};

class InterruptController : public sc_core::sc_module, public IrqSink {
 public:
  static constexpr uint64_t kRegTyper = 0x000;
  static constexpr uint64_t kRegSetSpi = 0x040;
  static constexpr uint64_t kRegBlockSize = 0x1000;

  tlm_utils::simple_target_socket<InterruptController> socket;

  InterruptController(sc_core::sc_module_name name, unsigned lines, unsigned cpus,
                      double reg_latency_ns, StatsRegistry& stats, TraceSink* trace);

  // A wired interrupt from a device, at the caller's time plus `delay`.
  // Returns false for a line that does not exist.
  bool raise_line(unsigned line, const sc_core::sc_time& delay = sc_core::SC_ZERO_TIME) override;

  InterruptControllerCore& core() { return core_; }
  // Figures only known at the end of a run, into the stats registry.
  void finalize();
  sc_core::sc_event& wake_event(unsigned cpu) { return *wake_[cpu]; }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void raise(unsigned line, Ps at, const char* how);

  InterruptControllerCore core_;
  sc_core::sc_time reg_latency_;
  std::vector<std::unique_ptr<sc_core::sc_event>> wake_;
  std::vector<TimeRank> wake_rank_;  // the same-time order of each core's wake-up
  TraceSink* trace_;
  Counter& wired_;
  Counter& msi_;
  Counter& msi_invalid_;
  Counter& coalesced_;
};

}  // namespace smmu_vp

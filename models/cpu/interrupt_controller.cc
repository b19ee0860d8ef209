#include "cpu/interrupt_controller.h"

#include <cstring>
#include <string>

#include "common/tlm_time.h"

namespace smmu_vp {

InterruptController::InterruptController(sc_core::sc_module_name name, unsigned lines, unsigned cpus,
                                         double reg_latency_ns, StatsRegistry& stats, TraceSink* trace)
    : sc_module(name),
      socket("socket"),
      core_(lines, cpus),
      reg_latency_(ps_to_sc(ns_to_ps(reg_latency_ns))),
      trace_(trace),
      wired_(stats.counter(std::string(basename()) + ".wired_irqs")),
      msi_(stats.counter(std::string(basename()) + ".msi_writes")),
      msi_invalid_(stats.counter(std::string(basename()) + ".msi_invalid")),
      coalesced_(stats.counter(std::string(basename()) + ".coalesced")) {
  socket.register_b_transport(this, &InterruptController::b_transport);
  for (unsigned c = 0; c < cpus; ++c) wake_.push_back(std::make_unique<sc_core::sc_event>());
  wake_rank_.resize(cpus);
}

void InterruptController::raise(unsigned line, Ps at, const char* how) {
  core_.raise(line, at);
  const unsigned cpu = core_.target(line);
  wake_[cpu]->notify(wake_rank_[cpu].until(at));
  if (trace_) trace_->instant(basename(), std::string(how) + " irq " + std::to_string(line), at, {{"line", line}});
}

bool InterruptController::raise_line(unsigned line, const sc_core::sc_time& delay) {
  if (line >= core_.lines()) return false;
  wired_.add();
  raise(line, now_ps() + sc_to_ps(delay), "wired");
  return true;
}

void InterruptController::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  delay += reg_latency_;
  const uint64_t addr = trans.get_address();
  const unsigned len = trans.get_data_length();
  if (len != 4 || trans.get_byte_enable_ptr()) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  uint32_t v = 0;
  if (trans.is_read()) {
    if (addr == kRegTyper) v = core_.lines();
    else if (addr != kRegSetSpi) { trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE); return; }
    std::memcpy(trans.get_data_ptr(), &v, 4);
  } else if (trans.is_write()) {
    if (addr != kRegSetSpi) {
      // TYPER is read-only: the write is ignored, as on hardware.
      if (addr != kRegTyper) { trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE); return; }
    } else {
      std::memcpy(&v, trans.get_data_ptr(), 4);
      msi_.add();
      if (v >= core_.lines()) msi_invalid_.add();
      else raise(v, now_ps() + sc_to_ps(delay), "msi");
    }
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

void InterruptController::finalize() { coalesced_.add(core_.coalesced() - coalesced_.value()); }

}  // namespace smmu_vp

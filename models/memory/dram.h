// DRAM target: TLM-2.0 front end of DramCore. b_transport annotates the access
// time on the caller's delay; DMI grants CPU-side direct access to the whole
// array with the configured latencies; transport_dbg is untimed.
#pragma once

#include <cstdint>
#include <functional>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "memory/dram_core.h"

namespace smmu_vp {

class Dram : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Dram> socket;

  Dram(sc_core::sc_module_name name, const DramConfig& cfg, StatsRegistry& stats);

  DramCore& core() { return core_; }
  // Called after every write into the array (b_transport and transport_dbg)
  // with the bytes written, at the simulated time they change: the cores'
  // polls watch their words through it (CpuCluster::memory_written).
  void set_write_observer(std::function<void(const uint8_t* p, uint64_t len)> fn) { write_observer_ = std::move(fn); }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);
  // Copies data for a payload; false when out of range or unsupported.
  bool copy(tlm::tlm_generic_payload& trans);

  DramCore core_;
  Counter& errors_;
  std::function<void(const uint8_t*, uint64_t)> write_observer_;
};

}  // namespace smmu_vp

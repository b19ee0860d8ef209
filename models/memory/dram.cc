#include "memory/dram.h"

#include <cstring>

#include "common/tlm_time.h"

namespace smmu_vp {

Dram::Dram(sc_core::sc_module_name name, const DramConfig& cfg, StatsRegistry& stats)
    : sc_module(validated_name(name, cfg)),
      socket("socket"),
      core_(basename(), cfg, stats),
      errors_(stats.counter(std::string(basename()) + ".errors")) {
  socket.register_b_transport(this, &Dram::b_transport);
  socket.register_get_direct_mem_ptr(this, &Dram::get_direct_mem_ptr);
  socket.register_transport_dbg(this, &Dram::transport_dbg);
}

bool Dram::copy(tlm::tlm_generic_payload& trans) {
  const uint64_t addr = trans.get_address();
  const unsigned len = trans.get_data_length();
  if (!core_.contains(addr, len)) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return false;
  }
  if (trans.get_streaming_width() < len) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return false;
  }
  uint8_t* mem = core_.data() + addr;
  uint8_t* data = trans.get_data_ptr();
  const uint8_t* be = trans.get_byte_enable_ptr();
  const unsigned be_len = trans.get_byte_enable_length();
  if (trans.is_write()) {
    if (be) {
      for (unsigned i = 0; i < len; ++i)
        if (be[i % be_len] == TLM_BYTE_ENABLED) mem[i] = data[i];
    } else {
      std::memcpy(mem, data, len);
    }
    if (write_observer_) write_observer_(mem, len);
  } else if (trans.is_read()) {
    if (be) {
      for (unsigned i = 0; i < len; ++i)
        if (be[i % be_len] == TLM_BYTE_ENABLED) data[i] = mem[i];
    } else {
      std::memcpy(data, mem, len);
    }
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  return true;
}

void Dram::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (!copy(trans)) {
    errors_.add();
    return;
  }
  if (trans.is_read() || trans.is_write()) {
    const Ps now = now_ps();
    const Ps arrival = now + sc_to_ps(delay);
    const Ps done = core_.access(now, arrival, trans.is_write(), trans.get_data_length());
    delay += ps_to_sc(done - arrival);
  }
  trans.set_dmi_allowed(true);
}

bool Dram::get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
  dmi.allow_read_write();
  dmi.set_dmi_ptr(core_.data());
  dmi.set_start_address(0);
  dmi.set_end_address(core_.config().size - 1);
  dmi.set_read_latency(ps_to_sc(ns_to_ps(core_.config().read_latency_ns)));
  dmi.set_write_latency(ps_to_sc(ns_to_ps(core_.config().write_latency_ns)));
  return true;
}

unsigned int Dram::transport_dbg(tlm::tlm_generic_payload& trans) {
  return copy(trans) ? trans.get_data_length() : 0;
}

}  // namespace smmu_vp

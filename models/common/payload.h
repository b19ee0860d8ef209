// Preparing a TLM generic payload for one plain access: every initiator in
// the platform (cores, DMA engines, the SMMU) issues them the same way.
#pragma once

#include <cstdint>
#include <tlm>

namespace smmu_vp {

// A read or write of `len` bytes at `addr` from/to `data`: no byte enables,
// no streaming, no DMI hint, response not yet given. Extensions are kept.
inline void prepare_access(tlm::tlm_generic_payload& t, bool is_write, uint64_t addr, void* data, unsigned len) {
  t.set_command(is_write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  t.set_address(addr);
  t.set_data_ptr(static_cast<unsigned char*>(data));
  t.set_data_length(len);
  t.set_streaming_width(len);
  t.set_byte_enable_ptr(nullptr);
  t.set_dmi_allowed(false);
  t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

}  // namespace smmu_vp

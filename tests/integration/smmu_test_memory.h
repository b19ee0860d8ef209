// The memory the SMMU-alone integration tests put behind the SMMU's
// downstream socket: `size` bytes from `base`, anything else an address
// error; the test pokes tables into it and peeks at what the SMMU wrote.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "smmu/event_queue.h"

namespace smmu_vp::test {

struct SmmuTestMemory : sc_core::sc_module {
  tlm_utils::simple_target_socket<SmmuTestMemory> socket{"socket"};
  uint64_t base, size;
  std::vector<uint8_t> bytes;
  std::vector<std::pair<uint64_t, uint32_t>> writes;  // (address, word) of every 4-byte write

  SmmuTestMemory(sc_core::sc_module_name n, uint64_t base_, uint64_t size_)
      : sc_module(n), base(base_), size(size_), bytes(size_) {
    socket.register_b_transport(this, &SmmuTestMemory::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time&) {
    const uint64_t a = t.get_address();
    const unsigned len = t.get_data_length();
    if (a < base || a + len > base + size) {
      t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    if (t.is_write()) {
      std::memcpy(&bytes[a - base], t.get_data_ptr(), len);
      if (len == 4) writes.emplace_back(a, *reinterpret_cast<uint32_t*>(t.get_data_ptr()));
    } else {
      std::memcpy(t.get_data_ptr(), &bytes[a - base], len);
    }
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  void poke(uint64_t a, const void* p, size_t n) { std::memcpy(&bytes[a - base], p, n); }
  uint64_t peek64(uint64_t a) const {
    uint64_t v;
    std::memcpy(&v, &bytes[a - base], 8);
    return v;
  }
  // Record `i` of the event queue at `queue`.
  smmu::EventRecord event(uint64_t queue, unsigned i) const {
    std::array<uint64_t, 4> w;
    for (unsigned d = 0; d < 4; ++d) w[d] = peek64(queue + smmu::EventRecord::kBytes * i + 8 * d);
    return smmu::EventRecord::decode(w);
  }
};

}  // namespace smmu_vp::test

// A plain memory target for device-model bench tests: bytes at [base, base +
// size), fixed read and write latencies, an address range that aborts as an
// SMMU fault would, counters, and the 32-bit writes to one watched address
// (an MSI doorbell) with their times. Also a wired-interrupt sink that
// records the lines raised, and the host that plays the driver: a thread
// running the test's body, with register accesses through a socket.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "common/irq_sink.h"
#include "common/payload.h"
#include "common/tlm_time.h"

namespace smmu_vp::test {

struct BenchMemory : sc_core::sc_module {
  tlm_utils::simple_target_socket<BenchMemory> socket{"socket"};
  uint64_t base, size;
  std::vector<uint8_t> bytes;
  double write_latency_ns = 50, read_latency_ns = 80;
  uint64_t fault_lo = 0, fault_hi = 0;  // aborted range
  uint64_t reads = 0, writes = 0, faults = 0, page_crossings = 0;
  uint32_t largest = 0;                              // largest transaction, bytes
  uint64_t watch = ~0ull;                            // 32-bit writes here are recorded in `watched`
  std::vector<std::pair<uint32_t, double>> watched;  // data, time (ns)

  BenchMemory(sc_core::sc_module_name n, uint64_t base_addr, uint64_t bytes_size)
      : sc_module(n), base(base_addr), size(bytes_size), bytes(bytes_size) {
    socket.register_b_transport(this, &BenchMemory::transport);
  }

  void transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    const uint64_t a = t.get_address();
    const unsigned len = t.get_data_length();
    if (a < base || a + len > base + size || (a < fault_hi && a + len > fault_lo)) {
      ++faults;
      t.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    if (a / 4096 != (a + len - 1) / 4096) ++page_crossings;
    largest = std::max(largest, len);
    uint8_t* p = at(a);
    if (t.is_write()) {
      std::memcpy(p, t.get_data_ptr(), len);
      ++writes;
      delay += ps_to_sc(ns_to_ps(write_latency_ns));
      if (a == watch && len == 4) {
        uint32_t d;
        std::memcpy(&d, p, 4);
        watched.emplace_back(d, (sc_core::sc_time_stamp() + delay).to_seconds() * 1e9);
      }
    } else {
      std::memcpy(t.get_data_ptr(), p, len);
      ++reads;
      delay += ps_to_sc(ns_to_ps(read_latency_ns));
    }
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  uint8_t* at(uint64_t a) { return &bytes[a - base]; }
  template <class T>
  T get(uint64_t a) {
    T v;
    std::memcpy(&v, at(a), sizeof v);
    return v;
  }
  template <class T>
  void put(uint64_t a, const T& v) {
    std::memcpy(at(a), &v, sizeof v);
  }
};

struct BenchIrqs : IrqSink {
  std::vector<unsigned> lines;
  std::vector<double> times_ns;  // when each was raised
  bool raise_line(unsigned line, const sc_core::sc_time& delay) override {
    lines.push_back(line);
    times_ns.push_back((sc_core::sc_time_stamp() + delay).to_seconds() * 1e9);
    return true;
  }
};

// Derived: the test's host, with its device's helpers (CRTP, so that the
// body gets them).
template <class Derived>
struct BenchHost : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<BenchHost> socket{"socket"};
  std::function<void(Derived&)> body;

  SC_HAS_PROCESS(BenchHost);
  explicit BenchHost(sc_core::sc_module_name n) : sc_module(n) { SC_THREAD(run); }
  void run() {
    if (body) body(static_cast<Derived&>(*this));
  }
  // The response status; a read's value through *v.
  tlm::tlm_response_status access_status(bool write, uint64_t off, uint64_t* v, unsigned len) {
    tlm::tlm_generic_payload t;
    prepare_access(t, write, off, v, len);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    socket->b_transport(t, d);
    sc_core::wait(d);
    return t.get_response_status();
  }
  uint64_t access(bool write, uint64_t off, uint64_t v, unsigned len = 4) {
    EXPECT_EQ(access_status(write, off, &v, len), tlm::TLM_OK_RESPONSE) << std::hex << off;
    return v;
  }
  uint32_t rd(uint64_t off) { return static_cast<uint32_t>(access(false, off, 0)); }
  void wr(uint64_t off, uint32_t v) { access(true, off, v); }
};

}  // namespace smmu_vp::test

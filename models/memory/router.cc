#include "memory/router.h"

#include "common/tlm_time.h"

namespace smmu_vp {

Router::Router(sc_core::sc_module_name name, double hop_latency_ns, StatsRegistry& stats)
    : sc_module(name),
      upstream("upstream"),
      downstream("downstream"),
      hop_latency_(ps_to_sc(ns_to_ps(hop_latency_ns))),
      transactions_(stats.counter(std::string(basename()) + ".transactions")),
      decode_errors_(stats.counter(std::string(basename()) + ".decode_errors")) {
  upstream.register_b_transport(this, &Router::b_transport);
  upstream.register_get_direct_mem_ptr(this, &Router::get_direct_mem_ptr);
  upstream.register_transport_dbg(this, &Router::transport_dbg);
  downstream.register_invalidate_direct_mem_ptr(this, &Router::invalidate_direct_mem_ptr);
}

void Router::map(const std::string& range_name, uint64_t base, uint64_t size,
                 tlm::tlm_target_socket<>& target, WatchableRegisters* regs) {
  map_.add({range_name, base, size, next_port_});
  downstream.bind(target);
  watchable_.push_back(regs);
  ++next_port_;
}

void Router::b_transport(int, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  transactions_.add();
  const uint64_t addr = trans.get_address();
  const AddressRange* r = map_.decode(addr, trans.get_data_length());
  if (!r) {
    decode_errors_.add();
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  delay += hop_latency_;
  trans.set_address(addr - r->base);
  downstream[r->port]->b_transport(trans, delay);
  trans.set_address(addr);
}

WatchableRegisters* Router::watchable(uint64_t addr, unsigned size, uint64_t* offset) {
  const AddressRange* r = map_.decode(addr, size);
  if (!r || !watchable_[r->port] || !watchable_[r->port]->watchable(addr - r->base, size)) return nullptr;
  *offset = addr - r->base;
  return watchable_[r->port];
}

void Router::count_reads_slept_through(uint64_t n) { transactions_.add(n); }

bool Router::get_direct_mem_ptr(int, tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi) {
  const uint64_t addr = trans.get_address();
  const AddressRange* r = map_.decode(addr);
  if (!r) return false;
  trans.set_address(addr - r->base);
  const bool ok = downstream[r->port]->get_direct_mem_ptr(trans, dmi);
  trans.set_address(addr);
  if (!ok) return false;
  // Back to global addresses, clipped to the range the router gives this target.
  const uint64_t start = dmi.get_start_address() + r->base;
  uint64_t end = dmi.get_end_address() + r->base;
  if (end > r->last()) end = r->last();
  dmi.set_start_address(start);
  dmi.set_end_address(end);
  dmi.set_read_latency(dmi.get_read_latency() + hop_latency_);
  dmi.set_write_latency(dmi.get_write_latency() + hop_latency_);
  return true;
}

unsigned int Router::transport_dbg(int, tlm::tlm_generic_payload& trans) {
  const uint64_t addr = trans.get_address();
  const AddressRange* r = map_.decode(addr, trans.get_data_length());
  if (!r) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  trans.set_address(addr - r->base);
  const unsigned n = downstream[r->port]->transport_dbg(trans);
  trans.set_address(addr);
  return n;
}

void Router::invalidate_direct_mem_ptr(int port, sc_dt::uint64 start, sc_dt::uint64 end) {
  for (const auto& r : map_.ranges()) {
    if (static_cast<int>(r.port) != port) continue;
    const uint64_t gstart = r.base + start;
    const uint64_t gend = (end >= r.size - 1) ? r.last() : r.base + end;
    for (unsigned i = 0; i < upstream.size(); ++i) upstream[i]->invalidate_direct_mem_ptr(gstart, gend);
  }
}

}  // namespace smmu_vp

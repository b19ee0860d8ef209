// Address router: decodes the platform address map, forwards each transaction
// to the target owning the range with the address made relative to the range's
// base, and adds one interconnect hop of latency. Addresses no range claims get
// TLM_ADDRESS_ERROR_RESPONSE. DMI and debug accesses are forwarded with the
// same translation; DMI invalidations are mapped back and broadcast upstream.
#pragma once

#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "common/register_watch.h"
#include "common/stats.h"
#include "memory/address_map.h"

namespace smmu_vp {

struct InterconnectConfig {
  double latency_ns = 2.0;  // one pass through the router (Router's hop latency)
};

class Router : public sc_core::sc_module, public RegisterPollBus {
 public:
  tlm_utils::multi_passthrough_target_socket<Router> upstream;
  tlm_utils::multi_passthrough_initiator_socket<Router> downstream;

  Router(sc_core::sc_module_name name, double hop_latency_ns, StatsRegistry& stats);

  // Claims [base, base + size) for `target`, binding a new downstream port.
  // Throws std::invalid_argument on overlap. `regs`: the target's registers
  // a core may poll asleep (hal_read_poll32), if it has such.
  void map(const std::string& range_name, uint64_t base, uint64_t size,
           tlm::tlm_target_socket<>& target, WatchableRegisters* regs = nullptr);

  // RegisterPollBus: a read through the router takes its hop and counts as
  // one of its transactions.
  WatchableRegisters* watchable(uint64_t addr, unsigned size, uint64_t* offset) override;
  void count_reads_slept_through(uint64_t n) override;

  const AddressMap& address_map() const { return map_; }

 private:
  void b_transport(int id, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(int id, tlm::tlm_generic_payload& trans);
  void invalidate_direct_mem_ptr(int port, sc_dt::uint64 start, sc_dt::uint64 end);

  AddressMap map_;
  unsigned next_port_ = 0;
  std::vector<WatchableRegisters*> watchable_;  // by port
  sc_core::sc_time hop_latency_;
  Counter& transactions_;
  Counter& decode_errors_;
};

}  // namespace smmu_vp

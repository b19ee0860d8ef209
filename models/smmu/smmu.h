// SMMUv3 SystemC module: the register pages, one upstream target socket that
// every master port binds to, and one downstream initiator socket for
// translated traffic and for the SMMU's own table, queue and MSI accesses.
// This header is the model's public face (installed; docs/embedding.md):
// the behaviour lives behind SmmuImpl (smmu_impl.h) and the plain cores it
// drives (SmmuRegisterFile, Translator, EventQueueWriter, the command queue
// consumers), none of which a platform needs to see.
//
// Responses (IHI 0070 3.12, terminate model): a transaction that is aborted
// (GBPA.ABORT, STE.Config = abort, a fault or a configuration error) gets
// TLM_GENERIC_ERROR_RESPONSE; no data is moved.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "common/irq_sink.h"
#include "common/register_watch.h"
#include "common/sim_time.h"
#include "common/stats.h"
#include "common/trace.h"
#include "smmu/ats.h"
#include "smmu/smmu_config.h"

namespace smmu_vp::smmu {

class SmmuImpl;
class SmmuObserver;
class SmmuRegisterFile;
class Translator;

class Smmu : public sc_core::sc_module, public WatchableRegisters {
 public:
  tlm_utils::simple_target_socket<Smmu> regs;
  tlm_utils::multi_passthrough_target_socket<Smmu> upstream;
  tlm_utils::simple_initiator_socket<Smmu> downstream;

  // Throws InvalidConfig (cfg.validate()) for a configuration the model
  // cannot be built with. `irq` may be nullptr (interrupts by MSI only),
  // `trace` too (no timeline).
  Smmu(sc_core::sc_module_name name, const SmmuConfig& cfg, IrqSink* irq, StatsRegistry& stats,
       TraceSink* trace);
  ~Smmu() override;

  // Bytes of register space from page 0 to map (grows with the ECMDQ pages).
  uint64_t register_space_size() const;
  // What the command-queue checker (SmmuConfig::cmdq_check) found, every
  // queue's; empty when it is off or found nothing.
  std::vector<std::string> cmdq_check_reports() const;
  // What CMD_SYNC with CS = SIG_SEV does: the platform wires it to the cores.
  void set_event_sender(std::function<void()> send_event);
  // cmdq.msi_coherent: what a coherent write by the SMMU to memory costs it
  // (the platform's CPU caches, CpuCluster::device_write_ns).
  void set_coherent_write(std::function<Ps(uint64_t pa, unsigned len)> fn);
  // The run ended at `end`: the command queues close the trace slices of
  // commands done by then (CommandQueueConsumer::finish_trace).
  void finish_trace(Ps end);
  // The run ended at `end`: publishes what is known only then (the slot
  // pools' and the command lanes' utilisation).
  void finalize(Ps end);
  // A measurement window: the slot pools and command lanes also sum their
  // use inside it (the *_in_window statistics).
  void set_window(Ps start, Ps end);
  // Service Failure Mode (IHI 0070 12.3): what the SMMU does when it has lost
  // internal consistency (an uncorrected error in its own state). Entry is
  // IMPLEMENTATION DEFINED and the model has no internal error of its own, so
  // a platform or test injects it here. From then on every client
  // transaction is terminated (no event), no command is consumed and no
  // event is recorded; GERROR.SFM_ERR is activated with its interrupt.
  // Acknowledging it in GERRORN does not leave SFM: only a reset (a new
  // simulation) does.
  void enter_service_failure_mode();
  bool in_service_failure_mode() const;
  // With features.ats: the endpoint with an ATC behind StreamID `sid`, to
  // which CMD_ATC_INV for that StreamID is sent (ats.h); nullptr detaches.
  // A StreamID without one has nothing to invalidate.
  void attach_ats_device(uint32_t sid, AtsDevice* device);

  // WatchableRegisters: a core may poll CMDQ_CONS and an ECMDQ's CONS asleep
  // (hal_read_poll32): their reads take reg_latency_ns, count nothing, and
  // they change only by the consumers and by register writes.
  bool watchable(uint64_t offset, unsigned size) const override;
  void watch(RegisterWatch& w) override;
  void unwatch(RegisterWatch& w) override;
  size_t watches() const;

  // For our platform's own tools and tests (the internal headers
  // register_file.h, translator.h and smmu_observer.h say what they are).
  SmmuRegisterFile& registers();
  Translator& translator();
  void set_observer(SmmuObserver* observer);  // nullptr: none (the default)

 private:
  void reg_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void translate_transport(int port, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);

  std::unique_ptr<SmmuImpl> impl_;
};

}  // namespace smmu_vp::smmu

#include "smmu/smmu.h"

#include "smmu/smmu_impl.h"

namespace smmu_vp::smmu {

Smmu::Smmu(sc_core::sc_module_name name, const SmmuConfig& cfg, IrqSink* irq, StatsRegistry& stats,
           TraceSink* trace)
    : sc_module(validated_name(name, cfg)), regs("regs"), upstream("upstream"), downstream("downstream") {
  impl_ = std::make_unique<SmmuImpl>(*this, cfg, irq, stats, trace);
  regs.register_b_transport(this, &Smmu::reg_transport);
  upstream.register_b_transport(this, &Smmu::translate_transport);
}

Smmu::~Smmu() = default;

void Smmu::reg_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  impl_->reg_transport(trans, delay);
}
void Smmu::translate_transport(int port, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  impl_->translate_transport(port, trans, delay);
}

uint64_t Smmu::register_space_size() const { return impl_->register_space_size(); }
std::vector<std::string> Smmu::cmdq_check_reports() const { return impl_->cmdq_check_reports(); }
void Smmu::set_event_sender(std::function<void()> send_event) { impl_->set_event_sender(std::move(send_event)); }
void Smmu::set_coherent_write(std::function<Ps(uint64_t pa, unsigned len)> fn) {
  impl_->set_coherent_write(std::move(fn));
}
void Smmu::finish_trace(Ps end) { impl_->finish_trace(end); }
void Smmu::finalize(Ps end) { impl_->finalize(end); }
void Smmu::set_window(Ps start, Ps end) { impl_->set_window(start, end); }
void Smmu::enter_service_failure_mode() { impl_->enter_service_failure_mode(); }
bool Smmu::in_service_failure_mode() const { return impl_->in_service_failure_mode(); }
void Smmu::attach_ats_device(uint32_t sid, AtsDevice* device) { impl_->attach_ats_device(sid, device); }
bool Smmu::watchable(uint64_t offset, unsigned size) const { return impl_->watchable(offset, size); }
void Smmu::watch(RegisterWatch& w) { impl_->watches().add(w); }
void Smmu::unwatch(RegisterWatch& w) { impl_->watches().remove(w); }
size_t Smmu::watches() const { return impl_->watches().size(); }
SmmuRegisterFile& Smmu::registers() { return impl_->registers(); }
Translator& Smmu::translator() { return impl_->translator(); }
void Smmu::set_observer(SmmuObserver* observer) { impl_->set_observer(observer); }

}  // namespace smmu_vp::smmu

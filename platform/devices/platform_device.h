// What the platform binds and runs of a built device (DeviceType::create,
// config/device_type.h): its register and master sockets, its end-of-run
// hook, and the environment it is built in.
#pragma once

#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

#include <tlm>

#include "common/irq_sink.h"
#include "common/sim_time.h"
#include "common/stats.h"
#include "common/trace.h"
#include "config/device_type.h"
#include "smmu/ats.h"

namespace smmu_vp {

// A built device: the sockets the platform binds and the end-of-run hook.
class PlatformDevice {
 public:
  virtual ~PlatformDevice() = default;
  virtual tlm::tlm_target_socket<>& regs() = 0;
  virtual tlm::tlm_initiator_socket<>& mem() = 0;
  // End-of-run figures into the stats registry.
  virtual void finalize() {}
  // An app's measurement window, for a device that sums its use inside it.
  virtual void set_window(Ps /*start*/, Ps /*end*/) {}
  // A PCIe device using ATS: its ATC, which its SMMU sends CMD_ATC_INV to.
  virtual smmu::AtsDevice* ats_device() { return nullptr; }
};

// Whether a device module sums its use over a measurement window.
template <class M, class = void>
constexpr bool kHasWindow = false;
template <class M>
constexpr bool kHasWindow<M, std::void_t<decltype(std::declval<M&>().set_window(Ps{}, Ps{}))>> = true;

// Whether a device module can use ATS (has an ATC).
template <class M, class = void>
constexpr bool kHasAts = false;
template <class M>
constexpr bool kHasAts<M, std::void_t<decltype(std::declval<M&>().ats_device())>> = true;

// The usual PlatformDevice: a SystemC module with sockets `regs` and `mem`
// and a finalize(), built from its arguments.
template <class Module>
class ModuleDevice : public PlatformDevice {
 public:
  template <class... Args>
  explicit ModuleDevice(Args&&... args) : module_(std::forward<Args>(args)...) {}
  tlm::tlm_target_socket<>& regs() override { return module_.regs; }
  tlm::tlm_initiator_socket<>& mem() override { return module_.mem; }
  void finalize() override { module_.finalize(); }
  void set_window(Ps start, Ps end) override {
    if constexpr (kHasWindow<Module>) module_.set_window(start, end);
  }
  smmu::AtsDevice* ats_device() override {
    if constexpr (kHasAts<Module>) return module_.ats_device();
    return nullptr;
  }

 private:
  Module module_;
};

struct DeviceEnv {
  IrqSink* irq;
  StatsRegistry& stats;
  TraceSink* trace;
  // Host pointer to DRAM [pa, pa + len), null when the range is not all
  // DRAM: for untimed loader steps (the trace player's LOAD), not for DMA.
  std::function<uint8_t*(uint64_t pa, uint64_t len)> dram_backdoor;
};

}  // namespace smmu_vp

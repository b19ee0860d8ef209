#include "devices/dma_device.h"

#include <fmt/format.h>

#include "config/params.h"
#include "devices/atc_params.h"
#include "util/human.h"

namespace smmu_vp {

namespace {

const config::ParamTable<DmaConfig>& dma_params() {
  static const config::ParamTable<DmaConfig> t = [] {
    config::ParamTable<DmaConfig> p;
    p.add("channels", &DmaConfig::channels, 1, 64, "", "Independent channels, each a register set and an engine.");
    p.add("burst_bytes", &DmaConfig::burst_bytes, 4, 4096, "bytes", "Size of each read and write burst.");
    p.add("max_outstanding", &DmaConfig::max_outstanding, 1, 256, "bursts", "Bursts in flight per channel.");
    p.add("setup_ns", &DmaConfig::setup_ns, 0, 1e9, "ns", "Time from GO to the first burst.");
    p.add("reg_latency_ns", &DmaConfig::reg_latency_ns, 0, 1e6, "ns", "Register access latency.");
    p.group("atc", &DmaConfig::atc, atc_params(), kAtcHelp);
    return p;
  }();
  return t;
}

std::string dma_summary(const DeviceConfig& d, const StatsRegistry& s) {
  const Counter* bytes = s.find_counter(d.name + ".bytes");
  const Histogram* transfers = s.find_histogram(d.name + ".transfer_latency_ns");
  if ((!bytes || !bytes->value()) && (!transfers || !transfers->count())) return "";  // unused in this run
  const double* gbps = s.find_value(d.name + ".bandwidth_gbps");
  std::string line = fmt::format("  {}: {} copied, {:.2f} GB/s while active", d.name,
                                 human_bytes(bytes ? static_cast<double>(bytes->value()) : 0.0), gbps ? *gbps : 0.0);
  if (const Histogram* h = s.find_histogram(d.name + ".transfer_latency_ns"))
    line += fmt::format(", {} transfers, latency p50 {} p99 {}", h->count(), human_ns(h->percentile(50)),
                        human_ns(h->percentile(99)));
  return line + "\n" + atc_summary(d.name, s);
}

DeviceType dma_device_type() {
  DeviceType t;
  t.type = "dma";
  t.help = "Generic DMA engine (register map in docs/devices.md).";
  t.irq_help = "Wired interrupt of channel 0; channel n raises irq + n.";
  t.fields = dma_params().fields();
  t.layout = [](DeviceConfig& d) {
    const unsigned channels = static_cast<unsigned>(d.params.at("channels").get<uint64_t>());
    d.size = DmaEngineCore::register_block_size(channels);
    d.irq_lines = channels;
    validate_device_config(d, dma_config(d));
  };
  t.create = [](const DeviceConfig& d, DeviceEnv& env) -> std::unique_ptr<PlatformDevice> {
    return std::make_unique<ModuleDevice<DmaEngine>>(d.name.c_str(), dma_config(d), env.irq, env.stats, env.trace);
  };
  t.summary = dma_summary;
  return t;
}

}  // namespace

DmaConfig dma_config(const DeviceConfig& d) {
  DmaConfig c;
  dma_params().read(d.params, c);
  c.stream_id = d.stream_id;
  c.irq = d.irq;
  return c;
}

REGISTER_DEVICE_TYPE(dma_device_type);

}  // namespace smmu_vp

#include "devices/nic_device.h"

#include <fmt/format.h>

#include "config/params.h"
#include "devices/atc_params.h"
#include "util/human.h"

namespace smmu_vp {

namespace {

const config::ParamTable<NicConfig>& nic_params() {
  static const config::ParamTable<NicConfig> t = [] {
    config::ParamTable<NicConfig> p;
    using C = NicConfig;
    p.add("queues", &C::queues, 1, 64, "queue pairs", "RX/TX queue pairs, each with its rings, interrupt vector and moderation.");
    p.add("link_gbps", &C::link_gbps, 0.001, 1600, "Gbit/s", "Line rate; every frame also occupies 24 bytes of preamble, FCS and inter-frame gap on the wire.");
    p.add("mtu", &C::mtu, 68, 9600, "bytes", "Largest payload after the Ethernet header; the largest frame is mtu + 14 bytes.");
    p.add("rx_load_percent", &C::rx_load_percent, 0, 100, "%", "Offered RX load generated on the wire, in percent of the line rate; 0 receives nothing.");
    p.add("rx_frame_bytes", &C::rx_frame_bytes, 60, 9614, "bytes", "Size of every generated frame without FCS (rx_frame_mix fixed); at most mtu + 14.");
    p.choice("rx_frame_mix", &C::rx_frame_mix, {{"fixed", FrameMix::kFixed}, {"imix", FrameMix::kImix}},
             "Generated frame sizes: `fixed` (rx_frame_bytes) or `imix` (7:4:1 of 60, 590 and 1514 bytes, the simple IMIX).");
    p.add("rx_flows", &C::rx_flows, 1, 1 << 20, "flows", "Flows in the generated traffic, frames round-robin over them; RSS hashes flows over the enabled RX queues (with few flows some queues get more than others, as with real RSS).");
    p.add("desc_batch", &C::desc_batch, 1, 256, "descriptors", "Descriptors read by one fetch; the next fetch starts when half of the batch is used.");
    p.add("burst_bytes", &C::burst_bytes, 64, 4096, "bytes", "Largest payload DMA transaction; a burst never crosses a 4 KiB page.");
    p.add("outstanding_reads", &C::outstanding_reads, 1, 1024, "transactions", "Descriptor and TX payload reads in flight.");
    p.add("outstanding_writes", &C::outstanding_writes, 1, 1024, "transactions", "RX payload writes in flight; when they are slow to complete, the RX FIFO fills.");
    p.add("rx_fifo_bytes", &C::rx_fifo_bytes, 2048, 1 << 30, "bytes", "On-chip RX FIFO between the wire and DMA; a frame that does not fit is dropped (rx_fifo_overflow).");
    p.add("tx_frames_ahead", &C::tx_frames_ahead, 1, 256, "frames", "TX frames read from memory ahead of the wire (the TX FIFO); 1 reads each frame only when the previous one starts on the wire.");
    p.add("per_packet_ns", &C::per_packet_ns, 0, 1e6, "ns", "Engine time per frame (parsing, RSS hash, descriptor logic), in each direction.");
    p.add("pcie_gbps", &C::pcie_gbps, 0.001, 10000, "Gbit/s", "Host link bandwidth in each direction (PCIe Gen4 x16 carries about 252 Gbit/s of payload).");
    p.add("reg_latency_ns", &C::reg_latency_ns, 0, 1e6, "ns", "Register access latency (a PCIe round trip for reads).");
    p.group("atc", &C::atc, atc_params(), kAtcHelp);
    return p;
  }();
  return t;
}

std::string nic_summary(const DeviceConfig& d, const StatsRegistry& s) {
  const std::string p = d.name + ".";
  // A NIC the run never enabled says nothing.
  if (!s.counter_value(p + "rx_offered") && !s.counter_value(p + "tx_packets") && !s.counter_value(p + "prog_errors") &&
      !s.counter_value(p + "desc_errors") && !s.counter_value(p + "tx_dma_fault"))
    return "";
  const double* rx = s.find_value(p + "rx_gbps");
  const double* tx = s.find_value(p + "tx_gbps");
  std::string out = fmt::format(
      "  {}: rx {} frames ({}, {:.2f} Gbit/s while receiving), tx {} frames ({}, {:.2f} Gbit/s), {} interrupts\n",
      d.name, s.counter_value(p + "rx_packets"), human_bytes(static_cast<double>(s.counter_value(p + "rx_bytes"))),
      rx ? *rx : 0.0, s.counter_value(p + "tx_packets"),
      human_bytes(static_cast<double>(s.counter_value(p + "tx_bytes"))), tx ? *tx : 0.0, s.counter_value(p + "irqs"));
  const uint64_t drops[] = {s.counter_value(p + "rx_no_buffer"), s.counter_value(p + "rx_fifo_overflow"),
                            s.counter_value(p + "rx_dma_fault")};
  out += fmt::format("  {}: rx drops: {} no buffer, {} FIFO overflow, {} DMA fault; tx DMA faults {}\n", d.name,
                     drops[0], drops[1], drops[2], s.counter_value(p + "tx_dma_fault"));
  const uint64_t errors =
      s.counter_value(p + "desc_errors") + s.counter_value(p + "prog_errors") + s.counter_value(p + "msi_errors");
  if (errors)
    out += fmt::format(
        "  {}: ERRORS: {} bad descriptors, {} programming errors, {} failed MSIs (ERR_STATUS/Q_ERR "
        "registers, docs/devices.md)\n",
        d.name, s.counter_value(p + "desc_errors"), s.counter_value(p + "prog_errors"),
        s.counter_value(p + "msi_errors"));
  if (const Histogram* h = s.find_histogram(p + "rx_dma_latency_ns"); h && h->count())
    out += fmt::format("  {}: rx payload DMA latency p50 {} p99 {} max {}\n", d.name, human_ns(h->percentile(50)),
                       human_ns(h->percentile(99)), human_ns(h->max()));
  out += atc_summary(d.name, s);
  return out;
}

DeviceType nic_device_type() {
  DeviceType t;
  t.type = "nic";
  t.help = "Multi-queue Ethernet controller with an RX traffic generator and a TX sink on its wire (registers, "
           "descriptors and timing in docs/devices.md).";
  t.irq_help = "Wired interrupt of queue 0 when its MSI is not enabled; queue q raises irq + q.";
  t.fields = nic_params().fields();
  t.layout = [](DeviceConfig& d) {
    const unsigned queues = static_cast<unsigned>(d.params.at("queues").get<uint64_t>());
    d.size = Nic::register_block_size(queues);
    d.irq_lines = queues;
    validate_device_config(d, nic_config(d));
  };
  t.create = [](const DeviceConfig& d, DeviceEnv& env) -> std::unique_ptr<PlatformDevice> {
    return std::make_unique<ModuleDevice<Nic>>(d.name.c_str(), nic_config(d), env.irq, env.stats, env.trace);
  };
  t.summary = nic_summary;
  return t;
}

}  // namespace

NicConfig nic_config(const DeviceConfig& d) {
  NicConfig c;
  nic_params().read(d.params, c);
  c.stream_id = d.stream_id;
  c.irq = d.irq;
  return c;
}

REGISTER_DEVICE_TYPE(nic_device_type);

}  // namespace smmu_vp

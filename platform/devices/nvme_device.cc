#include "devices/nvme_device.h"

#include <fmt/format.h>

#include "config/params.h"
#include "devices/atc_params.h"
#include "util/human.h"

namespace smmu_vp {

namespace {

const config::ParamTable<NvmeConfig>& nvme_params() {
  static const config::ParamTable<NvmeConfig> t = [] {
    config::ParamTable<NvmeConfig> p;
    using C = NvmeConfig;
    p.add("queues", &C::queues, 1, 1023, "queue pairs", "I/O submission/completion queue pairs the controller supports (qid 1 .. queues); Set Features Number of Queues grants at most this many.");
    p.add("vectors", &C::vectors, 1, NVME_MAX_VECTORS, "vectors", "Interrupt vectors (entries of the vector table, and wired lines irq .. irq + vectors - 1); a completion queue's IV must be below this.");
    p.add("capacity_gib", &C::capacity_gib, 1, 1 << 20, "GiB", "Namespace 1's size (NSZE = NCAP); the data is kept sparsely, so only what is written takes host memory.");
    p.add("lba_bytes", &C::lba_bytes, 512, 4096, "bytes", "Logical block size: 512 or 4096 (LBA format 0).");
    p.add("read_latency_us", &C::read_latency_us, 0, 1e6, "us", "Media access time of each Read before its data moves (the datasheet's typical latency).");
    p.add("write_latency_us", &C::write_latency_us, 0, 1e6, "us", "Media access time of each Write once its data is in the drive.");
    p.add("parallelism", &C::parallelism, 1, 4096, "commands", "Reads and writes at the media at once (dies and channels working in parallel); further ones wait for a slot. 4 KiB random IOPS are at most parallelism / (latency + 4 KiB at the media bandwidth).");
    p.add("read_mbps", &C::read_mbps, 1, 1e6, "MB/s", "Media read bandwidth, shared by every command (sequential read rating).");
    p.add("write_mbps", &C::write_mbps, 1, 1e6, "MB/s", "Media write bandwidth, shared by every command (sequential write rating).");
    p.add("pcie_gbps", &C::pcie_gbps, 0.001, 10000, "Gbit/s", "Host link bandwidth in each direction (PCIe Gen3 x4 carries about 31.5 Gbit/s).");
    p.add("reg_latency_ns", &C::reg_latency_ns, 0, 1e6, "ns", "Register access latency (a PCIe round trip for reads).");
    p.add("enable_us", &C::enable_us, 0, 1e7, "us", "Time from CC.EN = 1 to CSTS.RDY = 1 (CAP.TO follows it); real drives take milliseconds.");
    p.add("burst_bytes", &C::burst_bytes, 64, 4096, "bytes", "Largest data DMA transaction; a burst never crosses a 4 KiB page.");
    p.add("outstanding", &C::outstanding, 1, 1024, "transactions", "DMA reads in flight (queue entries, PRP lists, Write data), and as many data writes (Read data, Identify).");
    p.add("sq_fetch_batch", &C::sq_fetch_batch, 1, 64, "entries", "Submission queue entries read by one fetch (never across the queue's end).");
    p.group("atc", &C::atc, atc_params(), kAtcHelp);
    return p;
  }();
  return t;
}

std::string nvme_summary(const DeviceConfig& d, const StatsRegistry& s) {
  const std::string p = d.name + ".";
  const uint64_t reads = s.counter_value(p + "reads"), writes = s.counter_value(p + "writes"),
                 flushes = s.counter_value(p + "flushes");
  const uint64_t admin = s.counter_value(p + "admin"), fatal = s.counter_value(p + "fatal"),
                 dberr = s.counter_value(p + "doorbell_errors");
  // A drive the run never used says nothing.
  if (!reads && !writes && !flushes && !admin && !fatal && !dberr) return "";
  const double* iops = s.find_value(p + "iops");
  const double* rmbps = s.find_value(p + "read_mbps");
  const double* wmbps = s.find_value(p + "write_mbps");
  std::string out = fmt::format(
      "  {}: {} reads ({}, {:.0f} MB/s), {} writes ({}, {:.0f} MB/s), {} flushes, {} admin; {:.0f} IOPS, {} "
      "interrupts\n",
      d.name, reads, human_bytes(static_cast<double>(s.counter_value(p + "bytes_read"))), rmbps ? *rmbps : 0.0, writes,
      human_bytes(static_cast<double>(s.counter_value(p + "bytes_written"))), wmbps ? *wmbps : 0.0, flushes, admin,
      iops ? *iops : 0.0, s.counter_value(p + "irqs"));
  if (const Histogram* h = s.find_histogram(p + "command_latency_ns"); h && h->count())
    out += fmt::format("  {}: command latency (doorbell to completion) p50 {} p99 {} max {}\n", d.name,
                       human_ns(h->percentile(50)), human_ns(h->percentile(99)), human_ns(h->max()));
  const uint64_t transfer = s.counter_value(p + "data_transfer_errors");
  const uint64_t invalid = s.counter_value(p + "invalid_opcode") + s.counter_value(p + "invalid_field") +
                           s.counter_value(p + "invalid_namespace") + s.counter_value(p + "invalid_queue") +
                           s.counter_value(p + "invalid_vector") + s.counter_value(p + "lba_out_of_range") +
                           s.counter_value(p + "prp_offset_invalid");
  if (transfer || invalid || dberr || fatal || s.counter_value(p + "msi_errors"))
    out += fmt::format(
        "  {}: ERRORS: {} data transfer errors, {} invalid commands, {} bad doorbells, {} controller "
        "fatal (CSTS.CFS), {} failed MSIs (docs/devices.md#nvme)\n",
        d.name, transfer, invalid, dberr, fatal, s.counter_value(p + "msi_errors"));
  out += atc_summary(d.name, s);
  return out;
}

DeviceType nvme_device_type() {
  DeviceType t;
  t.type = "nvme";
  t.help = "NVMe drive: one namespace, admin and I/O queues, PRPs, a media model with latency, parallelism and "
           "bandwidth (registers, commands and timing in docs/devices.md).";
  t.irq_help = "Wired interrupt of vector 0 (the admin queue) when its vector-table entry is masked or has no address; "
               "vector v raises irq + v.";
  t.fields = nvme_params().fields();
  t.layout = [](DeviceConfig& d) {
    d.size = Nvme::register_block_size();
    d.irq_lines = static_cast<unsigned>(d.params.at("vectors").get<uint64_t>());
    validate_device_config(d, nvme_config(d));
  };
  t.create = [](const DeviceConfig& d, DeviceEnv& env) -> std::unique_ptr<PlatformDevice> {
    return std::make_unique<ModuleDevice<Nvme>>(d.name.c_str(), nvme_config(d), env.irq, env.stats, env.trace);
  };
  t.summary = nvme_summary;
  return t;
}

}  // namespace

NvmeConfig nvme_config(const DeviceConfig& d) {
  NvmeConfig c;
  nvme_params().read(d.params, c);
  c.stream_id = d.stream_id;
  c.irq = d.irq;
  return c;
}

REGISTER_DEVICE_TYPE(nvme_device_type);

}  // namespace smmu_vp

// "type": "trace_player": the trace player (models/trace_player) as a
// platform device. Its trace file is read and turned into the image while
// the configuration is checked (layout), so that a missing or malformed
// trace is a configuration error naming the file and line (exit 2).
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "config/params.h"
#include "devices/platform_device.h"
#include "devices/trace_player_image.h"
#include "devices/trace_player_phases.h"
#include "dmatrace/dma_trace.h"
#include "util/human.h"
#include "trace_player/trace_player.h"

namespace smmu_vp {

namespace {

constexpr uint32_t kOwnSid = 0xffffffffu;

struct TracePlayerParams {
  std::string trace;
  uint32_t default_sid = kOwnSid;
  TracePlayerConfig model;
  SynthConfig synth;
};

const std::vector<std::pair<std::string, DeviceClass>> kClassNames = {
    {"generic", DeviceClass::kGeneric}, {"nvme", DeviceClass::kNvme}, {"nic", DeviceClass::kNic},
    {"block", DeviceClass::kBlock}};

const config::ParamTable<TracePlayerParams>& trace_player_params() {
  static const config::ParamTable<TracePlayerParams> t = [] {
    config::ParamTable<TracePlayerParams> p;
    using P = TracePlayerParams;
    using M = TracePlayerConfig;
    p.custom("trace",
             config::leaf(config::Type::kString, config::json(), "path",
                          "Trace file in the smmu-vp-trace format (traces/README.md), plain or gzip; a relative path "
                          "starts at the scenario file's directory. Read when the configuration is checked."),
             [](const config::json& v, P& s) { s.trace = v.get<std::string>(); });
    p.add("default_sid", &P::default_sid, 0, 0xffffffffu, "",
          "StreamID of the records that have none; 4294967295 (the default): the device's own stream_id.");
    p.within(&P::model)
        .add("channels", &M::channels, 1, 256, "accesses",
             "Device accesses in flight; they are taken in trace order and may complete out of order.")
        .add("burst_bytes", &M::burst_bytes, 4, 4096, "bytes",
             "Largest transaction an access is split into; a burst never crosses a 4 KiB page.")
        .add("reg_latency_ns", &M::reg_latency_ns, 0, 1e6, "ns", "Register access latency.");
    // Accesses made up for a trace without any (trace_player_synth.h, docs/traces.md).
    using SC = SynthConfig;
    using T = DeviceClassTiming;
    p.within(&P::synth)
        .choice("synthesize", &SC::mode, {{"auto", SC::Mode::kAuto}, {"on", SC::Mode::kOn}, {"off", SC::Mode::kOff}},
                "Device accesses made up from the DMA-API calls, between each mapping and its unmap (the device "
                "moves the buffer once, page by page): auto (default) when the trace has no device access at all, "
                "as an imported ftrace capture; on: also beside the trace's own; off: never.")
        .choice("default_class", &SC::default_class, kClassNames,
                "Device class of the devices device_classes does not name: its bandwidth and start delay.");
    std::vector<std::string> class_names;
    for (const auto& [n, c] : kClassNames) class_names.push_back(n);
    p.custom("device_classes",
             config::map_of(config::choice("generic", class_names, "A device class."), config::json::object(),
                            "Device class by the device's name in the trace (as `smmu-vp trace stats` lists them, "
                            "e.g. \"0000:01:00.0\") or its StreamID in decimal."),
             [](const config::json& v, P& s) {
               for (auto it = v.begin(); it != v.end(); ++it)
                 for (const auto& [n, c] : kClassNames)
                   if (it.value() == n) s.synth.classes[it.key()] = c;
             });
    auto rate = [&](const char* name, T SC::*cls, const char* what) {
      p.within(&P::synth).within(cls).add(name, &T::gbytes_per_s, 0.001, 1000, "GB/s",
                                          (std::string("Bandwidth of a ") + what + " in synthesized accesses.").c_str());
    };
    auto delay = [&](const char* name, T SC::*cls, const char* what) {
      p.within(&P::synth).within(cls).add(name, &T::delay_ns, 0, 1e9, "ns",
                                          (std::string("From a map to a ") + what + "'s first synthesized access.").c_str());
    };
    p.within(&P::synth)
        .address("synth_max_bytes", &SC::max_bytes, 4096, 1ull << 40, "bytes",
                 "Most of a mapping a synthesized device moves: a larger mapping (VFIO's guest memory, a GPU's "
                 "buffer) is not one transfer, and the device moves only its first this many bytes.")
        .add("synth_max_accesses", &SC::max_accesses, 1, 4294967294.0, "accesses",
             "Most synthesized accesses in all (40 bytes each): more is a configuration error, not a run out of "
             "memory.");
    rate("synth_generic_gbytes_per_s", &SC::generic, "generic device");
    delay("synth_generic_delay_ns", &SC::generic, "generic device");
    rate("synth_nvme_gbytes_per_s", &SC::nvme, "NVMe drive");
    delay("synth_nvme_delay_ns", &SC::nvme, "NVMe drive");
    rate("synth_nic_gbytes_per_s", &SC::nic, "NIC");
    delay("synth_nic_delay_ns", &SC::nic, "NIC");
    rate("synth_block_gbytes_per_s", &SC::block, "block device (virtio-blk)");
    delay("synth_block_delay_ns", &SC::block, "block device (virtio-blk)");
    return p;
  }();
  return t;
}

std::string resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return base_dir + "/" + path;
}

// Reads the trace and builds its image; problems are configuration errors.
// The records go into the image as they are read, so the load holds the
// image and little more; an image that outgrows the DMA region it must be
// loaded into is refused while it is read (a decompression bomb stops there).
std::shared_ptr<const TraceImage> load_trace(const DeviceConfig& d, const TracePlayerParams& p) {
  const std::string where = "/platform/devices/" + d.name + "/trace";
  const std::string file = resolve(p.trace, d.base_dir);
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(file, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw config::ConfigError(where, file + ": not a regular file (a FIFO, device or directory is not read)");
  const uint32_t sid = p.default_sid == kOwnSid ? d.stream_id : p.default_sid;
  TraceImageBuilder image(sid, p.synth);
  try {
    dmatrace::TraceReader reader(file);
    dmatrace::Record r;
    while (reader.next(r)) {
      try {
        image.add(r);
      } catch (const TraceImageError& e) {
        throw config::ConfigError(where, file + ":" + std::to_string(reader.line()) + ": " + e.what());
      }
      if (d.dma_region_bytes && image.image_bytes() > d.dma_region_bytes)
        throw config::ConfigError(
            where, fmt::format("{}:{}: here the trace's image outgrows the {} DMA region it is loaded into (64 bytes "
                               "per record, 16 per map_sg segment): raise platform.dram.dma_region.size (and "
                               "dram.size) or replay a shorter trace",
                               file, reader.line(), human_bytes(static_cast<double>(d.dma_region_bytes))));
    }
  } catch (const dmatrace::TraceError& e) {
    throw config::ConfigError(where, e.what());  // "file:line: what"
  }
  try {
    return std::make_shared<const TraceImage>(image.finish());
  } catch (const TraceImageError& e) {
    throw config::ConfigError(where, file + ": " + e.what());
  }
}

std::string trace_player_summary(const DeviceConfig& d, const StatsRegistry& s) {
  const std::string p = d.name + ".";
  const uint64_t skipped = s.counter_value(p + "accesses_skipped_unmapped") +
                           s.counter_value(p + "accesses_skipped_failed") +
                           s.counter_value(p + "accesses_skipped_no_table");
  const uint64_t load = s.counter_value(p + "load_unmatched") + s.counter_value(p + "load_overlapping") +
                        s.counter_value(p + "load_accesses_unmapped");
  std::string out;
  if (s.counter_value(p + "accesses") || skipped) {
    out += fmt::format(
        "  {}: {} accesses ({}), {} errors, {} skipped ({} to nothing mapped in the trace, {} whose "
        "map failed, {} without a slot table), {} waited for a map\n",
        d.name, s.counter_value(p + "accesses"), human_bytes(static_cast<double>(s.counter_value(p + "bytes"))),
        s.counter_value(p + "access_errors"), skipped, s.counter_value(p + "accesses_skipped_unmapped"),
        s.counter_value(p + "accesses_skipped_failed"), s.counter_value(p + "accesses_skipped_no_table"),
        s.counter_value(p + "waits_for_map"));
    if (const Histogram* h = s.find_histogram(p + "access_latency_ns"); h && h->count())
      out += fmt::format("  {}: access latency p50 {} p99 {} max {}\n", d.name, human_ns(h->percentile(50)),
                         human_ns(h->percentile(99)), human_ns(h->max()));
  }
  if (const uint64_t made = s.counter_value(p + "load_accesses_synthesized"))
    out += fmt::format(
        "  {}: {} device accesses synthesized from the DMA-API calls (synthesize {}; {} moved to "
        "just before their unmap)\n",
        d.name, made, d.params.value("synthesize", std::string("auto")), s.counter_value(p + "load_synthesized_late"));
  if (load)
    out += fmt::format(
        "  {}: trace problems: {} unmaps/syncs/frees of nothing mapped, {} maps over a live mapping, "
        "{} accesses to nothing mapped\n",
        d.name, s.counter_value(p + "load_unmatched"), s.counter_value(p + "load_overlapping"),
        s.counter_value(p + "load_accesses_unmapped"));
  if (d.prepared) out += trace_player_phase_summary(d.name, *std::static_pointer_cast<const TraceImage>(d.prepared), s);
  return out;
}

// stats.json's <player>.phases: the per-phase results under the phases' names.
nlohmann::json trace_player_results(const DeviceConfig& d, const StatsRegistry& s) {
  if (!d.prepared) return nullptr;
  nlohmann::json list = trace_player_phase_results(d.name, *std::static_pointer_cast<const TraceImage>(d.prepared), s);
  if (list.is_null()) return nullptr;
  return {{"phases", std::move(list)}};
}

DeviceType trace_player_device_type() {
  DeviceType t;
  t.type = "trace_player";
  t.help = "Trace player: loads a DMA/IOMMU trace's image into DRAM for the replay app and issues the trace's device "
           "accesses through the SMMU (registers and behaviour in docs/devices.md).";
  t.irq_help = "Not used: the trace player raises no interrupt.";
  t.fields = trace_player_params().fields();
  t.layout = [](DeviceConfig& d) {
    d.size = TP_REG_SIZE;
    d.irq_lines = 0;
    TracePlayerParams p;
    trace_player_params().read(d.params, p);
    d.prepared = load_trace(d, p);
  };
  t.create = [](const DeviceConfig& d, DeviceEnv& env) -> std::unique_ptr<PlatformDevice> {
    TracePlayerParams p;
    trace_player_params().read(d.params, p);
    // layout() read the trace; a DeviceConfig built another way reads it now.
    std::shared_ptr<const TraceImage> image = d.prepared ? std::static_pointer_cast<const TraceImage>(d.prepared)
                                                         : load_trace(d, p);
    return std::make_unique<ModuleDevice<TracePlayer>>(d.name.c_str(), p.model, std::move(image), env.dram_backdoor,
                                                       env.stats, env.trace);
  };
  t.summary = trace_player_summary;
  t.results = trace_player_results;
  return t;
}

}  // namespace

REGISTER_DEVICE_TYPE(trace_player_device_type);

}  // namespace smmu_vp

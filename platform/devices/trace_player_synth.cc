#include "devices/trace_player_synth.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace smmu_vp {

namespace {

constexpr uint64_t kPage = 4096;

uint64_t add_saturating(uint64_t a, double b) {
  const double sum = static_cast<double>(a) + b;
  return sum >= 1.8e19 ? ~0ull : static_cast<uint64_t>(sum);
}

}  // namespace

DeviceClass SynthConfig::class_of(const std::string& dev, uint32_t sid) const {
  if (!dev.empty())
    if (auto it = classes.find(dev); it != classes.end()) return it->second;
  if (auto it = classes.find(std::to_string(sid)); it != classes.end()) return it->second;
  return default_class;
}

const DeviceClassTiming& SynthConfig::timing(DeviceClass c) const {
  switch (c) {
    case DeviceClass::kNvme: return nvme;
    case DeviceClass::kNic: return nic;
    case DeviceClass::kBlock: return block;
    case DeviceClass::kGeneric: break;
  }
  return generic;
}

SynthResult synthesize_accesses(const std::vector<MappingSpan>& spans, const SynthConfig& cfg) {
  SynthResult out;
  for (const MappingSpan& s : spans) {
    if (s.size == 0 || (!s.reads && !s.writes)) continue;
    const DeviceClassTiming& t = cfg.timing(s.cls);
    const double ns_per_byte = t.gbytes_per_s > 0 ? 1.0 / t.gbytes_per_s : 0.0;
    const uint64_t size = std::min(s.size, cfg.max_bytes);
    uint64_t offset = 0;
    while (offset < size) {
      // Pages of IOVA: the first may start inside one.
      const uint64_t in_page = (s.iova + offset) % kPage;
      const uint64_t len = std::min(kPage - in_page, size - offset);
      uint64_t at = add_saturating(s.open_ns, t.delay_ns + static_cast<double>(offset) * ns_per_byte);
      if (at >= s.close_ns) {
        at = s.close_ns;
        ++out.late;
      }
      for (bool write : {false, true}) {
        if (write ? !s.writes : !s.reads) continue;
        if (out.accesses.size() >= std::min<uint64_t>(cfg.max_accesses, 0xfffffffeull))
          throw std::length_error("more than " + std::to_string(cfg.max_accesses) +
                                  " synthesized device accesses (synth_max_accesses; synth_max_bytes bounds each "
                                  "mapping's)");
        PlayerAccess a;
        a.time_ns = at;
        a.sid = s.sid;
        a.slot = s.slot;
        a.offset = offset;
        a.size = len;
        a.write = write;
        out.accesses.push_back(a);
      }
      offset += len;
    }
  }
  std::stable_sort(out.accesses.begin(), out.accesses.end(),
                   [](const PlayerAccess& a, const PlayerAccess& b) { return a.time_ns < b.time_ns; });
  return out;
}

}  // namespace smmu_vp

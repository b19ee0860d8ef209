// Device accesses made up for a trace that has none (issue 32): ftrace sees
// the DMA-API calls but not the device's own reads and writes, so an
// imported trace would replay the CPU side only and leave the SMMU's
// translation side (TLB, walks, the stale-entry window) idle.
//
// The assumption, documented in docs/traces.md: between a mapping and its
// unmap the device moves the whole buffer (up to max_bytes) once, page by page (4 KiB of IOVA,
// one translation each), starting `delay_ns` after the map at the class's
// bandwidth. It reads a to_device buffer, writes a from_device one, and
// reads then writes each page of a bidirectional one; an iommu_map (no
// direction in the event) is read. A page that would come after the unmap
// is moved just before it, as the driver unmaps only once the device is
// done (counted as `late`). Coherent allocations get none: their use is not
// visible in the DMA API.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trace_player/trace_player_core.h"

namespace smmu_vp {

// What kind of device a StreamID is, for its bandwidth and start delay.
enum class DeviceClass : uint8_t { kGeneric = 0, kNvme = 1, kNic = 2, kBlock = 3 };

struct DeviceClassTiming {
  double gbytes_per_s = 4.0;  // bytes per ns
  double delay_ns = 1000.0;   // from the map to the first page
};

struct SynthConfig {
  enum class Mode : uint8_t { kOff, kOn, kAuto };
  // kAuto: only when the trace holds no device access at all (an imported
  // capture); recorded traces keep their own accesses.
  Mode mode = Mode::kAuto;
  // By DeviceClass. Named guesses (docs/traces.md): a generic DMA master; a
  // PCIe Gen3 x4 NVMe drive's sequential rate and a media read; a 100 Gbit/s
  // NIC; QEMU's virtio-blk.
  DeviceClassTiming generic{4.0, 1000.0};
  DeviceClassTiming nvme{3.5, 10000.0};
  DeviceClassTiming nic{12.5, 1000.0};
  DeviceClassTiming block{2.0, 20000.0};
  // A device's class by its name in the trace (e.g. "0000:01:00.0") or its
  // StreamID in decimal; the rest get default_class.
  std::map<std::string, DeviceClass> classes;
  DeviceClass default_class = DeviceClass::kGeneric;
  // A mapping larger than this (VFIO's guest memory, a GPU's buffer) is not
  // one transfer: the device moves its first max_bytes. It also bounds what a
  // few lines of trace can make (a map of 1 TiB: 2^28 accesses).
  uint64_t max_bytes = 2ull << 20;
  // More accesses than this in all (40 bytes each in the player) is an
  // error naming the parameter, not a run out of memory.
  uint64_t max_accesses = 16ull << 20;

  DeviceClass class_of(const std::string& dev, uint32_t sid) const;
  const DeviceClassTiming& timing(DeviceClass c) const;
};

// One mapping the replay makes, as the synthesis sees it.
struct MappingSpan {
  uint64_t open_ns = 0;
  uint64_t close_ns = ~0ull;  // its unmap; ~0: never unmapped in the trace
  uint64_t iova = 0;          // the trace's, for the page boundaries
  uint64_t size = 0;
  uint32_t sid = 0;
  uint32_t slot = 0;
  bool reads = false, writes = false;
  DeviceClass cls = DeviceClass::kGeneric;
};

struct SynthResult {
  std::vector<PlayerAccess> accesses;  // in time order, stably
  uint64_t late = 0;                   // pages moved to just before their unmap
};

// The accesses of every span. Throws std::length_error past max_accesses.
SynthResult synthesize_accesses(const std::vector<MappingSpan>& spans, const SynthConfig& cfg);

}  // namespace smmu_vp

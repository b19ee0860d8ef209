// The trace player's register file and access scheduler, without SystemC
// (docs/devices.md#trace-player, trace_player_regs.h): LOAD copies the image
// into DRAM through a backdoor; after START the device accesses are taken in
// trace order, each when its time has come (TIMED) or at once (ASAP) and when
// the slot it uses is mapped, as the slot table in DRAM says. Accesses may
// complete out of order; ACCESSES_DONE is the in-order low-water mark.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/sim_time.h"
#include "trace_player/trace_player_regs.h"

namespace smmu_vp {

// One device access of the trace, as the player issues it.
struct PlayerAccess {
  uint64_t time_ns = 0;  // since the trace's first record
  uint32_t sid = 0;
  uint32_t slot = TP_NO_SLOT;  // the mapping it falls in; TP_NO_SLOT: none (skipped)
  uint64_t offset = 0;         // from the mapping's trace iova
  uint64_t size = 0;
  bool write = false;
  uint32_t phase = 0;  // the phase it belongs to (TraceImage::phases)
};

// A phase of the trace (dmatrace/phases.h): phase 0 holds the records before
// the first phase marker, phase N those after the Nth.
struct TracePhase {
  std::string name;      // phase 0: dmatrace::kLeadingPhaseName
  uint64_t time_ns = 0;  // its marker's time, since the trace's first record (phase 0: 0)
  uint32_t records = 0;  // image records in it
  uint32_t accesses = 0; // device accesses in it (synthesized ones included)
};

// What the player holds: the DRAM image (header, records, segments) and the
// accesses it issues itself, with what the loader found wrong.
struct TraceImage {
  std::vector<uint8_t> bytes;  // as laid out in trace_player_regs.h, 8-byte multiple
  std::vector<PlayerAccess> accesses;
  uint32_t records = 0;
  uint32_t segments = 0;
  uint32_t slots = 0;
  uint32_t flags = 0;  // TP_IMAGE_*
  uint64_t duration_ns = 0;
  uint32_t unmatched = 0;          // unmap/sync/free of nothing mapped
  uint32_t overlapping = 0;        // maps over a live mapping of the same StreamID
  uint32_t accesses_unmapped = 0;  // accesses to nothing mapped
  uint32_t commands_dropped = 0;   // SMMU command records, not in the image
  uint32_t accesses_synthesized = 0;  // made up for a trace without any (platform/devices/trace_player_synth.h)
  uint64_t synthesized_late = 0;      // of those, moved to just before their unmap
  // Empty when the trace has no phase marker; else phase 0 and one per marker.
  std::vector<TracePhase> phases;
};

class TracePlayerCore {
 public:
  // Host pointer to DRAM [pa, pa + len), or null when the range is not all DRAM.
  using Backdoor = std::function<uint8_t*(uint64_t pa, uint64_t len)>;

  TracePlayerCore(std::shared_ptr<const TraceImage> image, Backdoor dram);

  enum class Access { kOk, kBadAddress, kBadSize };
  struct Effects {
    bool started = false;   // START: the caller calls start() with the time it landed
    bool doorbell = false;  // MAP_DOORBELL: waiting accesses look again
    bool phase = false;     // PHASE: the replay began phase `phase_index`
    uint32_t phase_index = 0;
  };
  // 32-bit registers take 4-byte accesses; 64-bit ones 8 bytes, or 4 at
  // either half. Anything else is refused and counted.
  Access read(uint64_t offset, unsigned len, uint64_t* value);
  Access write(uint64_t offset, unsigned len, uint64_t value, Effects* fx);

  // Trace time 0 is `now`.
  void start(Ps now);

  // What the next access in trace order needs.
  struct Decision {
    enum Kind {
      kNotStarted,  // before START
      kAllTaken,    // every access has been taken
      kWaitTime,    // TIMED: not before `at`
      kWaitMap,     // its slot is PENDING: wait for MAP_DOORBELL
      kIssue,       // taken: issue it (index, addr), then complete()
    } kind = kNotStarted;
    uint32_t index = 0;
    Ps at = 0;
    uint64_t addr = 0;
  };
  // Skips (and completes) the accesses that cannot go (no slot, FAILED slot,
  // slot table unreadable) on the way.
  Decision next(Ps now);
  // The taken access `index` finished; ok=false: it got an error response.
  void complete(uint32_t index, bool ok);

  const TraceImage& image() const { return *image_; }
  const PlayerAccess& access(uint32_t index) const { return image_->accesses[index]; }
  uint32_t access_count() const { return static_cast<uint32_t>(image_->accesses.size()); }
  uint32_t status() const { return status_; }
  bool done() const { return (status_ & TP_STATUS_DONE) != 0; }
  uint64_t accesses_done() const { return low_water_; }
  uint64_t access_errors() const { return access_errors_; }
  uint64_t skipped_unmapped() const { return skipped_unmapped_; }  // no slot in the trace
  uint64_t skipped_failed() const { return skipped_failed_; }      // the replay's map failed
  uint64_t skipped_no_table() const { return skipped_no_table_; }  // slot entry outside DRAM
  uint64_t waits_for_map() const { return waits_for_map_; }        // accesses that waited for a slot
  uint64_t bad_register_accesses() const { return bad_register_accesses_; }
  uint64_t prog_errors() const { return prog_errors_; }  // ignored writes (e.g. MODE while running)

 private:
  bool reg64(uint64_t base) const;
  void take(uint32_t index);  // marks taken: the next one is looked at
  void finish(uint32_t index);

  std::shared_ptr<const TraceImage> image_;
  Backdoor dram_;
  uint64_t image_base_ = 0, remap_base_ = 0;
  uint32_t status_ = 0;
  uint32_t mode_ = TP_MODE_TIMED;
  uint32_t time_scale_ = 100;
  Ps start_ = 0;
  uint32_t next_ = 0;  // first access not taken
  uint32_t counted_wait_ = TP_NO_SLOT;  // the access whose wait for a slot is counted
  std::vector<bool> completed_;
  uint64_t low_water_ = 0;
  uint64_t access_errors_ = 0;
  uint64_t skipped_unmapped_ = 0, skipped_failed_ = 0, skipped_no_table_ = 0;
  uint64_t waits_for_map_ = 0;
  uint64_t bad_register_accesses_ = 0;
  uint64_t prog_errors_ = 0;
};

}  // namespace smmu_vp

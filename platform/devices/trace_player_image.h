// The trace player's image (trace_player_regs.h) built from a trace's
// records: the DRAM image the replay app reads, and the device accesses the
// player issues itself, with the slots that tie them to their mappings.
//
//  - Records are stably sorted by time (a file may be out of order); times
//    become relative to the first record kept.
//  - SMMU command records (dmatrace::Op::kCommand) are dropped: they are
//    informational and a replay ignores them (counted in commands_dropped).
//  - Markers (dmatrace::Op::kMark) are not records of the image either: a
//    phase marker opens a phase (TraceImage::phases, TP_IMAGE_HAS_PHASES),
//    and every record and access gets the phase it falls in, by time (ties:
//    file order); the image's time 0 stays its first record's.
//  - Every map, map_sg, alloc and iommu_map opens a new slot, numbered in
//    order. Per StreamID, an interval index of the live mappings (by trace
//    iova) resolves unmap, unmap_sg, sync, free, iommu_unmap, access and
//    fault records to the slot containing their iova, and their offset in it;
//    an iommu_unmap also ends every other mapping in its range.
//    Nothing contains it: TP_NO_SLOT, counted as unmatched (accesses as
//    accesses_unmapped; faults are not counted).
//  - A map over a live mapping of the same StreamID counts as overlapping and
//    the older mapping stops being live; unmaps, free and iommu_unmap end the
//    liveness of the mapping they name.
//  - When some DMA-API mapping exists (TP_IMAGE_HAS_DMA_API), the iommu_map
//    and iommu_unmap records are what those DMA-API calls did in the IOMMU:
//    the app does not replay them, so they get no slot and stay out of the
//    index (else they would take over the DMA-API mappings' ranges).
//  - map_sg segments go to the segment array (aux: the first, nsegs). An
//    unmap_sg's aux is its wait like any unmap's; the replay unmaps what the
//    slot's map_sg mapped, so unmap_sg segments are not kept (nsegs 0).
//  - Records without a StreamID get default_sid.
//  - With synthesis on (trace_player_synth.h), every slot's mapping gets
//    device accesses made up between its map and its unmap, merged into the
//    accesses in time order; the unmaps then wait for those too.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "devices/trace_player_synth.h"
#include "dmatrace/dma_trace.h"
#include "trace_player/trace_player_core.h"

namespace smmu_vp {

// A trace the image cannot represent; `record` is the index in the input.
class TraceImageError : public std::runtime_error {
 public:
  TraceImageError(uint64_t record, const std::string& what)
      : std::runtime_error(what), record_(record) {}
  uint64_t record() const { return record_; }

 private:
  uint64_t record_;
};

// Builds the image from records given one at a time, in file order, holding
// only the image's own 64 bytes per record (and 16 per segment) until
// finish(): a trace's load takes memory in proportion to its records, and a
// caller can stop a trace whose image grows past a bound (image_bytes()).
class TraceImageBuilder {
 public:
  explicit TraceImageBuilder(uint32_t default_sid) : default_sid_(default_sid) { synth_.mode = SynthConfig::Mode::kOff; }
  TraceImageBuilder(uint32_t default_sid, SynthConfig synth) : default_sid_(default_sid), synth_(std::move(synth)) {}
  // Throws TraceImageError (record(): the index of `r` in the input) for a
  // map_sg of more than 65535 segments, or more records or segments than
  // 32-bit counts hold.
  void add(const dmatrace::Record& r);
  // Bytes of the image of the records added so far.
  uint64_t image_bytes() const;
  // The image; the builder is empty afterwards. O(n log n) when the records
  // were not in time order, O(n) when they were.
  TraceImage finish();

 private:
  // The synthesis's spans and the unmap record of each slot, once resolved.
  void add_synthesized(TraceImage& img, const std::vector<MappingSpan>& spans, const std::vector<uint32_t>& close_record);

  uint32_t default_sid_;
  SynthConfig synth_;
  std::vector<uint8_t> class_;    // per record, with synthesis on: the DeviceClass of a mapping's device
  // The records in file order, times absolute and slots not yet resolved, in
  // chunks of 1 MiB: no copy as they grow, and each chunk goes back to the
  // system once finish() has moved its records into the image.
  static constexpr size_t kChunk = 16384;
  std::vector<std::unique_ptr<tp_record[]>> chunks_;
  uint64_t n_ = 0;
  tp_record& rec(uint64_t i) { return chunks_[i / kChunk][i % kChunk]; }
  std::vector<tp_segment> segs_;  // map_sg segments, in file order
  uint64_t added_ = 0;            // records given, SMMU commands included
  uint64_t accesses_ = 0;         // device accesses among them
  uint32_t commands_dropped_ = 0;
  bool dma_api_ = false;
  bool in_time_order_ = true;
  // Phase markers (dmatrace/phases.h): time, kept records before it in the file, name.
  struct Mark {
    uint64_t time_ns;
    uint64_t before;
    std::string name;
  };
  std::vector<Mark> marks_;
};

// All at once (the tests' form).
TraceImage build_trace_image(const std::vector<dmatrace::Record>& records, uint32_t default_sid);

// The record's op in the image.
uint8_t tp_op_of(dmatrace::Op op);

}  // namespace smmu_vp

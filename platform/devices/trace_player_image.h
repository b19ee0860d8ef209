// The trace player's image (trace_player_regs.h) built from a trace's
// records: the DRAM image the replay app reads, and the device accesses the
// player issues itself, with the slots that tie them to their mappings.
//
//  - Records are stably sorted by time (a file may be out of order); times
//    become relative to the first record kept.
//  - SMMU command records (dmatrace::Op::kCommand) are dropped: they are
//    informational and a replay ignores them (counted in commands_dropped).
//  - Every map, map_sg, alloc and iommu_map opens a new slot, numbered in
//    order. Per StreamID, an interval index of the live mappings (by trace
//    iova) resolves unmap, unmap_sg, sync, free, iommu_unmap, access and
//    fault records to the slot containing their iova, and their offset in it.
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
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

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

// Throws TraceImageError for a map_sg of more than 65535 segments,
// or more records or segments than 32-bit counts hold. O(n log n).
TraceImage build_trace_image(std::vector<dmatrace::Record> records, uint32_t default_sid);

// The record's op in the image.
uint8_t tp_op_of(dmatrace::Op op);

}  // namespace smmu_vp

/*
 * Trace player: the register map and the in-memory trace image shared by the
 * model (models/trace_player/) and the replay app (sw/apps/trace_replay.c).
 * docs/traces.md tells the whole workflow; traces/README.md the file format.
 *
 * The player is a test device, not a real one: it holds a trace (loaded from
 * a file when the platform is built) and
 *  - on LOAD, copies the trace's image into DRAM at IMAGE_BASE (a loader
 *    step before the measured run, untimed), where the replay app reads the
 *    DMA-API records and replays them on its cores;
 *  - after START, issues the trace's device accesses through the SMMU as a
 *    DMA master, each with its record's StreamID, at the record's time (or as
 *    soon as possible), at the IOVA the replay's own mapping gave the buffer:
 *    it reads that from the slot table (REMAP_BASE) the app fills in.
 *
 * Slots: every mapping record (map, map_sg, alloc, iommu_map) opens a new
 * slot, numbered in trace order; the records that use the mapping (unmap,
 * sync, free, device accesses) name its slot and their offset from the
 * mapping's trace address. The app writes the replayed address into the slot
 * and its state (TP_SLOT_*), then writes MAP_DOORBELL so that a device access
 * waiting for the slot goes on.
 */
#ifndef SMMU_VP_TRACE_PLAYER_REGS_H
#define SMMU_VP_TRACE_PLAYER_REGS_H

#include <stdint.h>

#define TP_ID_VALUE 0x5450524cu /* "TPRL" */
#define TP_VERSION_VALUE 1u

/* Registers (offsets; 32-bit unless marked 64). */
#define TP_REG_ID 0x00
#define TP_REG_VERSION 0x04
#define TP_REG_RECORDS 0x08      /* RO: records in the image */
#define TP_REG_ACCESS_COUNT 0x0c /* RO: device-access records */
#define TP_REG_IMAGE_BYTES 0x10  /* RO, 64: DRAM the image needs (8-byte aligned) */
#define TP_REG_IMAGE_BASE 0x18   /* RW, 64: where the app put it */
#define TP_REG_REMAP_BASE 0x20   /* RW, 64: the slot table, image.slots x struct tp_slot */
#define TP_REG_CTRL 0x28         /* WO: TP_CTRL_* */
#define TP_REG_STATUS 0x2c       /* RO: TP_STATUS_* */
#define TP_REG_MODE 0x30         /* RW: TP_MODE_*, before START */
#define TP_REG_TIME_SCALE 0x34   /* RW: percent of the trace's time gaps (100: as recorded) */
#define TP_REG_MAP_DOORBELL 0x38 /* WO: a slot changed, look again */
#define TP_REG_ACCESSES_DONE 0x40 /* RO, 64: accesses 0 .. n-1 (trace order) have all completed */
#define TP_REG_ACCESS_ERRORS 0x48 /* RO, 64: accesses that got an error response */
#define TP_REG_PHASE 0x50         /* WO: the replay has begun phase N (TP_IMAGE_HAS_PHASES) */
#define TP_REG_SIZE 0x100

#define TP_CTRL_LOAD (1u << 0)  /* copy the image to IMAGE_BASE */
#define TP_CTRL_START (1u << 1) /* time 0 of the trace is now; accesses begin */

#define TP_STATUS_LOADED (1u << 0)
#define TP_STATUS_RUNNING (1u << 1)
#define TP_STATUS_DONE (1u << 2)      /* every access issued and completed */
#define TP_STATUS_LOAD_ERROR (1u << 3) /* IMAGE_BASE outside DRAM or too small */

#define TP_MODE_TIMED 0u /* each record at its time (scaled by TIME_SCALE) */
#define TP_MODE_ASAP 1u  /* each record as soon as what it depends on is done */

/* ---- The image in DRAM: header, records[records], segs[segments]. */
#define TP_IMAGE_MAGIC 0x474d4954u /* "TIMG" */
#define TP_NO_SLOT 0xffffffffu
#define TP_NO_ADDR (~(uint64_t)0)
#define TP_NO_CPU (-1)

/* Header flags. */
#define TP_IMAGE_HAS_DMA_API (1u << 0) /* some DMA-API map: iommu_map/unmap records are implied, not replayed */
/* The trace has phase markers (docs/traces.md, "Phases"): each record's
 * `phase` says which phase it is in; the app reports its calls per phase and
 * writes PHASE when it begins one, which opens that phase's window of the
 * player's per-phase counters. */
#define TP_IMAGE_HAS_PHASES (1u << 1)

struct tp_image_header {
  uint32_t magic;
  uint32_t version;
  uint32_t records;
  uint32_t segments;
  uint32_t slots;
  uint32_t flags;
  uint64_t duration_ns; /* last record's time */
  /* Problems the loader found (also in the player's stats): */
  uint32_t unmatched;   /* unmap/sync/free of nothing mapped: slot TP_NO_SLOT */
  uint32_t overlapping; /* maps over a live mapping of the same StreamID */
};

/* Record ops: the same order as the file format's (traces/README.md). */
enum tp_op {
  TP_OP_MAP = 0,
  TP_OP_UNMAP = 1,
  TP_OP_MAP_SG = 2,
  TP_OP_UNMAP_SG = 3,
  TP_OP_SYNC_FOR_CPU = 4,
  TP_OP_SYNC_FOR_DEVICE = 5,
  TP_OP_ALLOC = 6,
  TP_OP_FREE = 7,
  TP_OP_IOMMU_MAP = 8,
  TP_OP_IOMMU_UNMAP = 9,
  TP_OP_ACCESS = 10,
  TP_OP_ATTACH = 11,
  TP_OP_DETACH = 12,
  TP_OP_FAULT = 13,
  TP_OP_COMMAND = 14,
  TP_OP_MARK = 15, /* not in the image: a phase marker sets its records' phase */
};

/* Directions: Linux's enum dma_data_direction. For TP_OP_ACCESS and
 * TP_OP_FAULT, dir is 1 for a write, 0 for a read. */
struct tp_record {
  uint64_t time_ns; /* since the first record */
  uint64_t iova;    /* the trace's address (TP_NO_ADDR: not known) */
  uint64_t pa;      /* the trace's physical address (TP_NO_ADDR: not known) */
  uint64_t size;
  uint64_t offset;  /* users of a slot: iova minus the mapping's trace iova */
  uint32_t sid;
  int32_t cpu;      /* TP_NO_CPU: not known */
  uint32_t slot;    /* the slot it opens (mappings) or uses; TP_NO_SLOT */
  /* map_sg: index of the first segment (nsegs of them); unmap, unmap_sg,
   * free, iommu_unmap: the unmap waits until ACCESSES_DONE >= wait_accesses
   * (the last access to the slot before it, plus one; 0: none) -- an unmap_sg
   * has no segments of its own (nsegs 0): it unmaps what its slot's map_sg
   * mapped; attach: the domain's ASID (0xffffffff: not known). */
  uint32_t aux;
  uint16_t nsegs;
  uint8_t op;  /* enum tp_op */
  uint8_t dir;
  uint32_t phase; /* 0: before the first phase marker; N: after the Nth */
};

struct tp_segment {
  uint64_t pa;
  uint64_t len;
};

/* The slot table the app fills in (REMAP_BASE), one per slot. */
#define TP_SLOT_PENDING 0u  /* not mapped yet: an access waits */
#define TP_SLOT_MAPPED 1u   /* iova is the replayed address of the mapping */
#define TP_SLOT_UNMAPPED 2u /* unmapped again: an access still goes (use after unmap) */
#define TP_SLOT_FAILED 3u   /* the replayed map failed: accesses are skipped */
/* PENDING, and an access waits for it: the player writes this; the app, on
 * finding it when it fills the slot, writes MAP_DOORBELL. The table is
 * replay bookkeeping, not modelled traffic: both sides access it untimed, and
 * only a waiting player costs the app a register write. */
#define TP_SLOT_WAITING 4u
struct tp_slot {
  uint64_t iova;
  uint64_t state;
};

#endif

// Vocabulary shared by the SMMU's translation cores: granules, the kind of
// access being translated, and how a translation can fail.
#pragma once

#include <cstdint>

namespace smmu_vp::smmu {

// Translation granule (IHI 0070 and Arm ARM D8). Values are log2 of the size.
enum class Granule : uint8_t { k4K = 12, k16K = 14, k64K = 16 };

inline unsigned granule_shift(Granule g) { return static_cast<unsigned>(g); }
inline uint64_t granule_bytes(Granule g) { return 1ull << granule_shift(g); }

// What the client device asked for (IHI 0070 3.9: RnW, PnU, InD).
struct AccessType {
  bool write = false;
  bool instruction = false;
  bool privileged = false;
};

// Translation-stage faults, with the event IDs they are reported as
// (IHI 0070 7.3). External aborts on a table walk are F_WALK_EABT.
enum class FaultType : uint8_t {
  kNone = 0,
  kTranslation = 0x10,   // F_TRANSLATION
  kAddressSize = 0x11,   // F_ADDR_SIZE
  kAccessFlag = 0x12,    // F_ACCESS
  kPermission = 0x13,    // F_PERMISSION
  kWalkExternalAbort = 0x0B,  // F_WALK_EABT
};

// Which stage a fault was raised at, and for a stage-2 fault during a
// stage-1 walk, that the faulting access was a table read (CLASS = TT).
enum class FaultClass : uint8_t { kCd = 0, kTranslationTable = 1, kInput = 2 };

}  // namespace smmu_vp::smmu

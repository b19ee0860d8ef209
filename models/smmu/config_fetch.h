// Finding and checking a stream's configuration in memory: the STE through a
// linear or two-level stream table (IHI 0070 3.3.2, 5.1), then the CD through
// a linear or two-level CD table (3.3.3, 5.4). Every read goes through the
// MemoryPort and is timed; errors come back as the event the SMMU records.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/sim_time.h"
#include "smmu/descriptors.h"
#include "smmu/memory_port.h"

namespace smmu_vp::smmu {

// STRTAB_BASE / STRTAB_BASE_CFG as the walk needs them.
struct StreamTableConfig {
  uint64_t base = 0;
  bool two_level = false;  // FMT = 1
  unsigned split = 0;      // SID bits resolved by the level-2 tables
  unsigned log2size = 0;   // the table covers SIDs below 2^log2size
};

struct FetchResult {
  EventId error = EventId::kNone;
  std::string why;
  Ps done = 0;
  uint64_t fetch_addr = 0;  // the failing access, for F_*_FETCH records
  bool ok() const { return error == EventId::kNone; }
};

class ConfigFetcher {
 public:
  // Translates an IPA used as a CD-table address when stage 2 is enabled
  // (IHI 0070 3.3.3: stage-1 configuration pointers are IPAs under nesting).
  // Returns false with *error set to the event to report.
  using Stage2Translate = std::function<bool(uint64_t ipa, uint64_t* pa, Ps* t, EventId* error)>;

  ConfigFetcher(MemoryPort& mem, const SmmuCaps& caps) : mem_(mem), caps_(caps) {}

  // The STE of `sid`, decoded and checked.
  FetchResult fetch_ste(const StreamTableConfig& st, uint32_t sid, Ps at, DecodedSte* ste, SteWords* raw = nullptr);

  // The CD to use for a transaction with (ssv, ssid) under `ste`. When the
  // STE says that a transaction without a substream bypasses stage 1
  // (S1DSS = bypass), *stage1_bypass is set and no CD is read.
  FetchResult fetch_cd(const DecodedSte& ste, bool ssv, uint32_t ssid, Ps at, const Stage2Translate& s2,
                       DecodedCd* cd, bool* stage1_bypass, CdWords* raw = nullptr);

 private:
  bool read64(uint64_t pa, uint64_t* v, Ps* t);
  bool read_block(uint64_t pa, uint64_t* words, unsigned n, Ps* t);

  MemoryPort& mem_;
  SmmuCaps caps_;
};

}  // namespace smmu_vp::smmu

// The SMMU's translation table walker, without SystemC: walks AArch64
// VMSAv8-64 tables for stage 1 (CD.TTB0), stage 2 (STE.S2TTB) and nested
// translations, with the SMMU's fault rules, timed descriptor reads through a
// MemoryPort, an optional walk cache and statistics.
//
// Time: every lookup is one 8-byte descriptor read through the MemoryPort,
// issued when the previous one has completed (the first at `at`), followed by
// `step_ns` of walker work (decoding the descriptor, forming the next
// address). A walk that makes n reads, stage 2 reads of a nested walk
// included, completes at `at + sum(read latencies) + n * step_ns`; a walk
// that reads nothing (configuration error, input address out of range)
// completes at `at`. Walk cache lookups take no time of their own. Walks are
// independent: contention between concurrent walks (walker slots) belongs to
// the caller, which decides when a walk starts.
//
// Not modelled yet (the CD/STE decoders reject or ignore the fields): TTB1 and
// the upper VA range (CD.T1SZ/TG1/EPD1; an address above the TTB0 range
// faults), top-byte ignore (CD.TBI0), CD.EPD0, WXN/UWXN/PAN, E0PD,
// StreamWorlds other than NS-EL1 (EL2/EL3 ignore AP[1]), STE.INSTCFG/PRIVCFG
// overrides, HTTU (CD.HA/HD, STE.S2HA/S2HD: AF and DBM are never written),
// big-endian tables, Secure state (NS, NSTable), 52-bit addresses.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "common/sim_time.h"
#include "common/stats.h"
#include "smmu/memory_port.h"
#include "smmu/smmu_config.h"
#include "smmu/translation_types.h"
#include "smmu/walk_cache.h"

namespace smmu_vp::smmu {


// Why a configuration cannot be walked. The CD decoder turns a stage 1 error
// into C_BAD_CD, the STE decoder a stage 2 error into C_BAD_STE (IHI 0070 5.4
// CD.T0SZ/TTB0/IPS, 5.2 STE.S2T0SZ/S2SL0/S2TTB/S2PS: "ILLEGAL").
enum class ConfigError : uint8_t {
  kNone = 0,
  kT0szOutOfRange,   // T0SZ below 16 (or 64 - SMMU OAS for stage 2) or above 48 (47 for 64K)
  kBadAddressSize,   // output size not in [32, 48], or stage 2 PS above the SMMU OAS
  kTtbOutOfRange,    // TTB has bits at or above the output address size
  kSl0Invalid,       // reserved SL0 encoding for the granule, or needs a larger PA size
  kSl0Inconsistent,  // SL0 and T0SZ: more than 16 concatenated tables, or no bit to resolve
};

const char* to_string(ConfigError e);

// Data and instruction permissions for privileged and unprivileged accesses.
struct Permissions {
  bool priv_read = false, priv_write = false, priv_exec = false;
  bool unpriv_read = false, unpriv_write = false, unpriv_exec = false;

  static Permissions all() { return {true, true, true, true, true, true}; }
  // A write is checked as a data write whatever InD says (IHI 0070 5.2,
  // STE.INSTCFG applies to reads only); an instruction read needs execute
  // permission only (execute-only memory is allowed, as on the PE).
  bool allows(const AccessType& a) const {
    if (a.write) return a.privileged ? priv_write : unpriv_write;
    if (a.instruction) return a.privileged ? priv_exec : unpriv_exec;
    return a.privileged ? priv_read : unpriv_read;
  }
  bool user_accessible() const { return unpriv_read || unpriv_write || unpriv_exec; }
  Permissions operator&(const Permissions& o) const;
  bool operator==(const Permissions& o) const;
};

struct WalkResult {
  FaultType fault = FaultType::kNone;
  ConfigError config_error = ConfigError::kNone;
  // 1 or 2 when fault != kNone; for a config error, 1 for the CD fields
  // (C_BAD_CD) and 2 for the STE fields (C_BAD_STE).
  unsigned fault_stage = 0;
  FaultClass fault_class = FaultClass::kInput;      // meaningful for stage 2 faults (CLASS: TT or IN)
  unsigned level = 0;        // faulting level (of fault_stage), or level of the stage 1 leaf
                             // (stage 2 leaf for walk_stage2)
  unsigned s2_level = 0;     // nested: level of the stage 2 leaf of the output
  uint64_t output_address = 0;  // PA
  uint64_t ipa = 0;             // stage 1 output for nested walks; faulting IPA for stage 2 faults
  bool ipa_valid = false;
  uint64_t fetch_address = 0;   // PA of the descriptor read that aborted (F_WALK_EABT)

  // Size of the translation the TLB may cache: log2 bytes of the smaller of
  // the stage 1 and stage 2 leaves (both kept too).
  unsigned block_shift = 0;
  unsigned s1_block_shift = 0;
  unsigned s2_block_shift = 0;

  Permissions perms;     // combined: s1_perms & s2_perms
  Permissions s1_perms;  // all() when stage 1 is not walked
  Permissions s2_perms;  // all() when stage 2 is not walked

  // Stage 1 attributes of the leaf.
  uint8_t attr_indx = 0;
  uint8_t sh = 0;
  bool global = false;  // nG == 0
  bool ns = false;
  bool contiguous = false;
  // Stage 2 attributes of the leaf.
  uint8_t s2_mem_attr = 0;
  uint8_t s2_sh = 0;
  bool s2_contiguous = false;

  Ps done = 0;  // completion time of the walk (== `at` if nothing was read)
  // Descriptor reads by [stage - 1][level], including the stage 2 walks a
  // nested stage 1 walk made.
  std::array<std::array<uint32_t, 4>, 2> reads{};

  bool ok() const { return fault == FaultType::kNone && config_error == ConfigError::kNone; }
  uint64_t block_size() const { return 1ull << block_shift; }
  unsigned reads_at(unsigned stage) const;
  unsigned total_reads() const { return reads_at(1) + reads_at(2); }
};

class PageTableWalker {
 public:
  // CD fields for the TTB0 range (IHI 0070 5.4), already decoded.
  struct Stage1Config {
    uint64_t ttb = 0;        // CD.TTB0: PA, or IPA when nested
    unsigned t0sz = 16;      // CD.T0SZ
    Granule granule = Granule::k4K;  // CD.TG0
    unsigned oas_bits = 48;  // effective IPS: min(CD.IPS, SMMU_IDR5.OAS), in bits
    bool affd = false;       // CD.AFFD: true = AF == 0 is not a fault
    bool had = false;        // CD.HAD0: ignore APTable/UXNTable/PXNTable
    uint16_t asid = 0;       // CD.ASID (walk cache tag)
    uint16_t vmid = 0;       // STE.S2VMID (walk cache tag)
  };

  // STE stage 2 fields (IHI 0070 5.2), already decoded.
  struct Stage2Config {
    uint64_t ttb = 0;        // STE.S2TTB
    unsigned t0sz = 16;      // STE.S2T0SZ
    unsigned sl0 = 2;        // STE.S2SL0 (VTCR_EL2.SL0 encoding)
    Granule granule = Granule::k4K;  // STE.S2TG
    unsigned ps_bits = 48;   // effective S2PS: min(S2PS, OAS), in bits
    unsigned pa_max_bits = 48;  // SMMU_IDR5.OAS in bits: bounds S2T0SZ and SL0
    bool affd = false;       // STE.S2AFFD
    bool ptw = false;        // STE.S2PTW: stage 1 table reads to Device at stage 2 fault
    uint16_t vmid = 0;       // STE.S2VMID
  };

  // `cache` and `stats` are optional and must outlive the walker. Stats paths:
  // <prefix>.walks.{s1,s2,nested_s2}, <prefix>.faults.{translation,
  // address_size,access_flag,permission,walk_eabt,config}, <prefix>.reads.
  // {s1,s2}.l{0..3}, <prefix>.latency_ns (histogram of done - at).
  PageTableWalker(MemoryPort& mem, const WalkTiming& timing = {}, WalkCache* cache = nullptr,
                  StatsRegistry* stats = nullptr, const std::string& stats_prefix = "ptw");

  static ConfigError check(const Stage1Config& c);
  static ConfigError check(const Stage2Config& c);
  // Initial lookup levels of valid configurations.
  static unsigned start_level(const Stage1Config& c);
  static unsigned start_level(const Stage2Config& c);

  // Stage 1 of `va` for `access`, starting at simulated time `at`. With
  // `nested`, every stage 1 table address is an IPA translated by stage 2
  // before it is read (a stage 2 fault there has CLASS = TT), and the stage 1
  // output is translated by stage 2 (CLASS = IN).
  WalkResult walk_stage1(const Stage1Config& c, uint64_t va, const AccessType& access, Ps at,
                         const Stage2Config* nested = nullptr);
  // Stage 2 only (STE.Config = 0b110): `ipa` is the incoming address.
  WalkResult walk_stage2(const Stage2Config& c, uint64_t ipa, const AccessType& access, Ps at);

  void set_cache(WalkCache* cache) { cache_ = cache; }
  const WalkTiming& timing() const { return timing_; }

 private:
  struct Regime;
  struct Leaf;
  struct S2Outcome;

  static Regime regime_of(const Stage1Config& c);
  static Regime regime_of(const Stage2Config& c);

  // Walks one stage for input address `ia` from time *t. For stage 1 with
  // `s2`, each table address is translated by stage 2 first. Returns false
  // with the fault recorded in *r.
  bool walk_tables(const Regime& rg, uint64_t ia, const Regime* s2, Ps* t, WalkResult* r, Leaf* leaf);
  // Full stage 2 translation (walk, AF, permissions) of `ipa` for `access`.
  // `table_walk` marks a stage 1 table read (S2PTW applies).
  bool translate_s2(const Regime& s2, uint64_t ipa, const AccessType& access, bool table_walk, Ps* t,
                    WalkResult* r, S2Outcome* out);
  bool read_descriptor(uint64_t pa, Ps* t, uint64_t* desc);

  static Permissions s1_permissions(uint64_t desc, uint8_t table_attrs);
  static Permissions s2_permissions(uint64_t desc);
  void finish(WalkResult* r, Ps at, Ps t);

  MemoryPort& mem_;
  WalkTiming timing_;
  Ps step_ps_;
  WalkCache* cache_;

  std::array<Counter*, 2> walks_{};
  Counter* nested_s2_walks_ = nullptr;
  std::array<std::array<Counter*, 4>, 2> reads_{};
  Counter* f_translation_ = nullptr;
  Counter* f_addr_size_ = nullptr;
  Counter* f_access_ = nullptr;
  Counter* f_permission_ = nullptr;
  Counter* f_eabt_ = nullptr;
  Counter* f_config_ = nullptr;
  Histogram* latency_ = nullptr;
};

}  // namespace smmu_vp::smmu

// An endpoint's Address Translation Cache (PCIe 6.0 10.2): the translations
// a PCIe device obtained from the SMMU with ATS Translation Requests, so that
// its DMA goes out already translated (IHI 0070 3.9.1). Fully associative
// with LRU (or FIFO) replacement: entries cover naturally aligned ranges of any size
// the SMMU returned (a page, a block, the whole space), which a set index by
// page number could not hold. A plain core, no SystemC: the device model
// (NIC, NVMe, the DMA engine) looks up, fills and uses it, and the SMMU reaches it as an
// AtsDevice for CMD_ATC_INV. Entries carry no PASID, so an invalidation
// with one removes them too (more than needed, never less).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/sim_time.h"
#include "common/stats.h"
#include "smmu/ats.h"

namespace smmu_vp {

struct AtcConfig {
  // 0: the endpoint does not use ATS (its DMA is untranslated, the default).
  unsigned entries = 0;
  // Which entry a fill replaces when the ATC is full: the least recently
  // used, or the oldest fill.
  enum class Replacement : uint8_t { kLru, kFifo };
  Replacement replacement = Replacement::kLru;
  double lookup_ns = 2.0;        // one lookup, hit or miss
  // The endpoint's work for one Invalidation Request before it answers (its
  // ATC scan), besides waiting for accesses that still use a removed entry.
  double invalidate_ns = 100.0;
  // A Translation Request's round trip over the link, on top of the SMMU's
  // own time for it: the endpoint waits for the completion.
  double request_rtt_ns = 800.0;
  // PRI: an access the SMMU gave no translation for sends a Page Request
  // and waits for the PRG Response, then asks again (PCIe 6.0 10.4). Needs
  // software that answers the PRI queue: without it the device waits for
  // ever. Off: such an access goes untranslated (and faults).
  bool pri = false;

  bool enabled() const { return entries > 0; }
  // Throws InvalidConfig naming `at`.<field>.
  void validate(const std::string& at) const;
};

class DeviceAtc : public smmu::AtsDevice {
 public:
  // Statistics under `prefix` (e.g. "nic0.atc"), created only when enabled.
  DeviceAtc(const AtcConfig& cfg, StatsRegistry& stats, const std::string& prefix);

  struct Hit {
    uint64_t pa = 0;          // output address of the looked-up byte
    uint64_t bytes_left = 0;  // from it to the end of the entry's range
  };
  // The translation of `addr` for a read or a write: nothing on a miss, and
  // nothing for an access the entry's R or W does not allow (the endpoint
  // then asks again or goes untranslated). Counts a lookup.
  std::optional<Hit> lookup(uint64_t addr, bool write);
  // The same without counting a lookup or touching LRU (right after a fill).
  std::optional<Hit> peek(uint64_t addr, bool write);
  // An access through the translation of `addr` ends at `until`: an
  // invalidation that removes the entry completes no earlier.
  void used(uint64_t addr, Ps until);
  // Keeps a Success completion with R or W (others are not cached).
  void fill(const smmu::AtsExtension& completion);

  // PRG Responses go to whoever waits for them (AtsDma with PRI).
  using ResponseSink = std::function<void(const PrgResponse&, Ps arrives)>;
  void set_response_sink(ResponseSink sink) { response_sink_ = std::move(sink); }
  void prg_response(const PrgResponse& r, Ps arrives) override {
    if (response_sink_) response_sink_(r, arrives);
  }

  // AtsDevice: removes the entries the invalidation covers; answers after
  // invalidate_ns and after the last access that used one of them, or one
  // the ATC evicted or replaced earlier (it may have covered the range).
  std::optional<Ps> atc_invalidate(const Invalidation& inv, Ps arrives) override;

  const AtcConfig& config() const { return cfg_; }
  size_t size() const;  // valid entries

 private:
  struct Entry {
    bool valid = false;
    uint64_t base = 0;  // untranslated, aligned to the size
    unsigned size_log2 = 0;
    uint64_t pa = 0;    // translated, aligned
    bool read = false;
    bool write = false;
    uint64_t last_touch = 0;  // LRU clock
    uint64_t filled = 0;      // FIFO clock
    Ps last_use_end = 0;
    bool covers(uint64_t a) const { return valid && (size_log2 >= 64 || ((a ^ base) >> size_log2) == 0); }
    uint64_t end() const { return size_log2 >= 64 ? ~uint64_t{0} : base + (uint64_t{1} << size_log2) - 1; }
  };
  Entry* find(uint64_t addr);
  // What an access through `e` (nullptr: none covers it) gets.
  static std::optional<Hit> hit_of(const Entry* e, uint64_t addr, bool write);
  void drop(Entry& e);  // evicts or replaces it, keeping its accesses' end

  AtcConfig cfg_;
  ResponseSink response_sink_;
  std::vector<Entry> entries_;
  uint64_t clock_ = 0;
  Ps dropped_use_end_ = 0;  // latest access end of an entry no longer held
  Counter* lookups_ = nullptr;
  Counter* hits_ = nullptr;
  Counter* fills_ = nullptr;
  Counter* evictions_ = nullptr;
  Counter* invalidations_ = nullptr;
  Counter* invalidated_ = nullptr;
};

}  // namespace smmu_vp

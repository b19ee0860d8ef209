// Set-associative SMMU TLB: see tlb.h for the indexing scheme and the
// invalidation semantics (IHI 0070 4.4).
#include "smmu/tlb.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "common/stats.h"

namespace smmu_vp::smmu {

const char* to_string(StageKind k) {
  switch (k) {
    case StageKind::kStage1: return "s1";
    case StageKind::kStage2: return "s2";
    case StageKind::kNested: return "nested";
  }
  return "?";
}

const char* to_string(TlbRegime r) {
  switch (r) {
    case TlbRegime::kEl1: return "el1";
    case TlbRegime::kEl2: return "el2";
    case TlbRegime::kEl2E2H: return "el2-e2h";
  }
  return "?";
}

std::optional<uint8_t> leaf_level(Granule g, unsigned size_log2) {
  const unsigned shift = granule_shift(g);
  if (size_log2 < shift) return std::nullopt;
  const unsigned per_level = shift - 3;  // bits resolved by one table level
  const unsigned above = size_log2 - shift;
  if (above % per_level != 0) return std::nullopt;
  const unsigned up = above / per_level;
  if (up > 3) return std::nullopt;
  return static_cast<uint8_t>(3 - up);
}

uint64_t TlbiRange::bytes(unsigned num, unsigned scale, Granule tg) {
  // NUM is 5 bits and SCALE at most 6 bits (values above 39 behave as 39).
  if (num > 31 || scale > 63)
    throw std::invalid_argument("TlbiRange::bytes: NUM or SCALE out of range");
  if (scale > 39) scale = 39;
  return (static_cast<uint64_t>(num) + 1) << (scale + granule_shift(tg));
}

namespace {

bool is_stage1_kind(StageKind k) { return k == StageKind::kStage1 || k == StageKind::kNested; }

// Tag predicates of the address-based commands (the address test is separate).
std::function<bool(const TlbEntry&)> scope_match(TlbiScope scope, uint16_t vmid, uint16_t asid,
                                                 bool e2h) {
  switch (scope) {
    case TlbiScope::kNhVa:
      return [vmid, asid](const TlbEntry& e) {
        return e.regime == TlbRegime::kEl1 && is_stage1_kind(e.stage) && e.vmid == vmid &&
               (e.global || e.asid == asid);
      };
    case TlbiScope::kNhVaa:
      return [vmid](const TlbEntry& e) {
        return e.regime == TlbRegime::kEl1 && is_stage1_kind(e.stage) && e.vmid == vmid;
      };
    case TlbiScope::kEl2Va:
      if (e2h)
        return [asid](const TlbEntry& e) {
          return e.regime == TlbRegime::kEl2E2H && (e.global || e.asid == asid);
        };
      return [](const TlbEntry& e) { return e.regime == TlbRegime::kEl2; };
    case TlbiScope::kEl2Vaa:
      if (e2h) return [](const TlbEntry& e) { return e.regime == TlbRegime::kEl2E2H; };
      return [](const TlbEntry& e) { return e.regime == TlbRegime::kEl2; };
    case TlbiScope::kS2Ipa:
      return [vmid](const TlbEntry& e) {
        return e.regime == TlbRegime::kEl1 && e.stage == StageKind::kStage2 && e.vmid == vmid;
      };
  }
  return [](const TlbEntry&) { return false; };
}

}  // namespace

Tlb::Tlb(const TlbConfig& cfg, StatsRegistry* stats, const std::string& prefix)
    : cfg_(cfg), sets_(0), rng_(cfg.seed) {
  if (cfg.entries == 0 || cfg.ways == 0 || cfg.entries % cfg.ways != 0)
    throw std::invalid_argument("Tlb: entries must be a non-zero multiple of ways");
  sets_ = cfg.entries / cfg.ways;
  sets_pow2_ = (sets_ & (sets_ - 1)) == 0;
  slots_.resize(cfg.entries);
  stamps_.resize(cfg.entries);
  if (stats) {
    c_lookups_ = &stats->counter(prefix + ".lookups");
    c_hits_ = &stats->counter(prefix + ".hits");
    c_misses_ = &stats->counter(prefix + ".misses");
    c_inserts_ = &stats->counter(prefix + ".inserts");
    c_evictions_ = &stats->counter(prefix + ".evictions");
    c_invalidated_ = &stats->counter(prefix + ".invalidated");
  }
}

size_t Tlb::count_removed(size_t n) {
  if (n) bump(c_invalidated_, stats_.invalidated, n);
  return n;
}

uint64_t Tlb::ctx_hash(StageKind stage, TlbRegime regime, uint16_t vmid, bool tagged,
                      uint16_t asid) const {
  if (!cfg_.index_by_context) return 0;
  uint64_t key = static_cast<uint64_t>(stage) | static_cast<uint64_t>(regime) << 2 |
                 static_cast<uint64_t>(tagged) << 4 | static_cast<uint64_t>(vmid) << 8;
  if (tagged) key |= static_cast<uint64_t>(asid) << 24;
  // SplitMix64 finaliser: spreads neighbouring ASIDs/VMIDs over the sets.
  key = (key ^ (key >> 30)) * 0xBF58476D1CE4E5B9ull;
  key = (key ^ (key >> 27)) * 0x94D049BB133111EBull;
  return mod_sets(key ^ (key >> 31));
}

uint64_t Tlb::ctx_hash(const TlbEntry& e) const {
  return ctx_hash(e.stage, e.regime, e.vmid, asid_tagged(e), e.asid);
}

unsigned Tlb::set_index(uint64_t addr, unsigned size_log2, uint64_t ctx) const {
  // ctx < sets_, so the sum cannot overflow after reducing the page number.
  return static_cast<unsigned>(mod_sets(mod_sets(addr >> size_log2) + ctx));
}

unsigned Tlb::set_of(const TlbEntry& entry) const {
  const TlbEntry e = normalise(entry);
  return set_index(e.input_addr, e.size_log2, ctx_hash(e));
}

bool Tlb::asid_tagged(const TlbEntry& e) {
  return e.stage != StageKind::kStage2 && e.regime != TlbRegime::kEl2 && !e.global;
}

TlbEntry Tlb::normalise(const TlbEntry& in) {
  TlbEntry e = in;
  if (e.size_log2 < granule_shift(e.granule) || e.size_log2 > 63)
    throw std::invalid_argument("Tlb::insert: size_log2 must be from the granule to 63");
  if (e.level > 3) throw std::invalid_argument("Tlb::insert: level must be 0..3");
  if (e.stage != StageKind::kStage1 && e.regime != TlbRegime::kEl1)
    throw std::invalid_argument("Tlb::insert: stage 2 and nested entries are EL1 only");
  const uint64_t mask = ~(e.size() - 1);
  e.input_addr &= mask;
  e.output_addr &= mask;
  if (e.regime != TlbRegime::kEl1) e.vmid = 0;
  if (e.regime == TlbRegime::kEl2) {
    e.asid = 0;
    e.global = true;
  }
  switch (e.stage) {
    case StageKind::kStage1: e.ipa = 0; break;
    case StageKind::kStage2:
      e.asid = 0;
      e.global = false;
      e.ipa = e.input_addr;
      break;
    case StageKind::kNested: e.ipa &= mask; break;
  }
  return e;
}

bool Tlb::tags_match(const TlbEntry& e, StageKind stage, uint16_t vmid, uint16_t asid,
                     TlbRegime regime) {
  if (e.stage != stage || e.regime != regime) return false;
  if (regime == TlbRegime::kEl1 && e.vmid != vmid) return false;
  if (stage == StageKind::kStage2) return true;
  return e.global || e.asid == asid;
}

bool Tlb::same_identity(const TlbEntry& a, const TlbEntry& b) {
  return a.stage == b.stage && a.regime == b.regime && a.vmid == b.vmid && a.asid == b.asid &&
         a.global == b.global && a.size_log2 == b.size_log2 && a.input_addr == b.input_addr;
}

std::optional<std::pair<size_t, TlbHit>> Tlb::find(StageKind stage, uint16_t vmid, uint16_t asid,
                                                   uint64_t addr, TlbRegime regime) const {
  if (regime != TlbRegime::kEl1) vmid = 0;
  const bool can_be_tagged = stage != StageKind::kStage2 && regime != TlbRegime::kEl2;
  const uint64_t tagged_ctx = can_be_tagged ? ctx_hash(stage, regime, vmid, true, asid) : 0;
  const uint64_t untagged_ctx = ctx_hash(stage, regime, vmid, false, 0);
  for (uint64_t classes = size_classes_; classes; classes &= classes - 1) {
    const unsigned c = static_cast<unsigned>(__builtin_ctzll(classes));
    unsigned probe_sets[2];
    unsigned probes = 0;
    if (can_be_tagged && size_class_count_[c] > untagged_count_[c])
      probe_sets[probes++] = set_index(addr, c, tagged_ctx);
    if (untagged_count_[c] > 0) {
      const unsigned set = set_index(addr, c, untagged_ctx);
      if (probes == 0 || probe_sets[0] != set) probe_sets[probes++] = set;
    }
    for (unsigned p = 0; p < probes; ++p) {
      const size_t first = static_cast<size_t>(probe_sets[p]) * cfg_.ways;
      for (size_t i = first; i < first + cfg_.ways; ++i) {
        const Slot& s = slots_[i];
        if (!s.valid || s.entry.size_log2 != c || !s.entry.contains(addr)) continue;
        if (!tags_match(s.entry, stage, vmid, asid, regime)) continue;
        return std::make_pair(i, hit_at(i, addr));
      }
    }
  }
  return std::nullopt;
}

TlbHit Tlb::hit_at(size_t i, uint64_t addr) const {
  const TlbEntry& e = slots_[i].entry;
  TlbHit hit;
  hit.entry = e;
  const uint64_t offset = addr - e.input_addr;
  hit.pa = e.output_addr + offset;
  if (e.stage == StageKind::kNested) hit.ipa = e.ipa + offset;
  if (e.stage == StageKind::kStage2) hit.ipa = addr;
  return hit;
}

std::optional<TlbHit> Tlb::lookup(StageKind stage, uint16_t vmid, uint16_t asid, uint64_t addr,
                                  TlbRegime regime) {
  bump(c_lookups_, stats_.lookups);
  const uint64_t page = addr >> 12;
  const LastHit& m = last_hit_;
  if (m.valid && m.page == page && m.stage == stage && m.vmid == vmid && m.asid == asid && m.regime == regime) {
    bump(c_hits_, stats_.hits);
    stamps_[m.slot].last_use = ++clock_;
    return hit_at(m.slot, addr);
  }
  auto found = find(stage, vmid, asid, addr, regime);
  if (!found) {
    bump(c_misses_, stats_.misses);
    return std::nullopt;
  }
  bump(c_hits_, stats_.hits);
  stamps_[found->first].last_use = ++clock_;
  last_hit_ = LastHit{true, stage, regime, vmid, asid, page, found->first};
  return found->second;
}

std::optional<TlbHit> Tlb::peek(StageKind stage, uint16_t vmid, uint16_t asid, uint64_t addr,
                                TlbRegime regime) const {
  auto found = find(stage, vmid, asid, addr, regime);
  if (!found) return std::nullopt;
  return found->second;
}

void Tlb::place(size_t slot, const TlbEntry& e) {
  last_hit_.valid = false;
  Slot& s = slots_[slot];
  s.valid = true;
  s.entry = e;
  ++valid_;
  if (size_class_count_[e.size_log2]++ == 0) size_classes_ |= 1ull << e.size_log2;
  if (!asid_tagged(e)) ++untagged_count_[e.size_log2];
  stamps_[slot].last_use = stamps_[slot].filled = ++clock_;
}

void Tlb::remove(size_t slot) {
  last_hit_.valid = false;
  Slot& s = slots_[slot];
  s.valid = false;
  --valid_;
  if (!asid_tagged(s.entry)) --untagged_count_[s.entry.size_log2];
  if (--size_class_count_[s.entry.size_log2] == 0) size_classes_ &= ~(1ull << s.entry.size_log2);
}

std::optional<TlbEntry> Tlb::insert(const TlbEntry& entry) {
  const TlbEntry e = normalise(entry);
  bump(c_inserts_, stats_.inserts);
  const unsigned set = set_index(e.input_addr, e.size_log2, ctx_hash(e));
  const size_t first = static_cast<size_t>(set) * cfg_.ways;
  const size_t end = first + cfg_.ways;
  for (size_t i = first; i < end; ++i) {
    if (slots_[i].valid && same_identity(slots_[i].entry, e)) {
      remove(i);
      place(i, e);
      return std::nullopt;
    }
  }
  for (size_t i = first; i < end; ++i) {
    if (!slots_[i].valid) {
      place(i, e);
      return std::nullopt;
    }
  }
  const size_t victim = first + pick_victim(cfg_.replacement, &stamps_[first], cfg_.ways, rng_);
  std::optional<TlbEntry> evicted = slots_[victim].entry;
  bump(c_evictions_, stats_.evictions);
  remove(victim);
  place(victim, e);
  return evicted;
}

size_t Tlb::invalidate_where(const TagMatch& match) {
  size_t n = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].valid && match(slots_[i].entry)) {
      remove(i);
      ++n;
    }
  }
  return count_removed(n);
}

size_t Tlb::invalidate_overlapping(uint64_t lo, uint64_t hi, const TagMatch& match,
                                   const std::optional<ProbeContexts>& contexts) {
  if (!contexts)
    return invalidate_where([&](const TlbEntry& e) { return e.overlaps(lo, hi) && match(e); });
  size_t n = 0;
  auto scan_set = [&](unsigned set, unsigned c) {
    const size_t first = static_cast<size_t>(set) * cfg_.ways;
    for (size_t i = first; i < first + cfg_.ways; ++i) {
      const Slot& s = slots_[i];
      if (s.valid && s.entry.size_log2 == c && s.entry.overlaps(lo, hi) && match(s.entry)) {
        remove(i);
        ++n;
      }
    }
  };
  // Snapshot: removals may clear bits of size_classes_.
  for (uint64_t classes = size_classes_; classes; classes &= classes - 1) {
    const unsigned c = static_cast<unsigned>(__builtin_ctzll(classes));
    const uint64_t pages_minus_one = (hi >> c) - (lo >> c);
    if (pages_minus_one >= sets_ - 1u) {
      for (unsigned set = 0; set < sets_; ++set) scan_set(set, c);
      continue;
    }
    // Fewer pages than sets: consecutive page numbers hit distinct sets. A set
    // probed twice (two contexts sharing it) finds nothing more the second time.
    for (uint64_t ctx : *contexts) {
      const unsigned first_set = set_index(lo, c, ctx);
      for (uint64_t p = 0; p <= pages_minus_one; ++p)
        scan_set(static_cast<unsigned>(mod_sets(first_set + p)), c);
    }
  }
  return count_removed(n);
}

size_t Tlb::invalidate_nested_by_ipa(uint16_t vmid, uint64_t lo, uint64_t hi) {
  return invalidate_where([&](const TlbEntry& e) {
    return e.stage == StageKind::kNested && e.regime == TlbRegime::kEl1 && e.vmid == vmid &&
           e.ipa <= hi && lo <= e.ipa + (e.size() - 1);
  });
}

// --- Commands ---------------------------------------------------------------

size_t Tlb::invalidate_all() {
  return invalidate_where([](const TlbEntry&) { return true; });
}

size_t Tlb::invalidate_nsnh_all() {
  return invalidate_where([](const TlbEntry& e) { return e.regime == TlbRegime::kEl1; });
}

size_t Tlb::invalidate_vmid(uint16_t vmid) {
  return invalidate_where(
      [vmid](const TlbEntry& e) { return e.regime == TlbRegime::kEl1 && e.vmid == vmid; });
}

size_t Tlb::invalidate_stage1_all_for_vmid(uint16_t vmid) {
  return invalidate_where([vmid](const TlbEntry& e) {
    return e.regime == TlbRegime::kEl1 && is_stage1_kind(e.stage) && e.vmid == vmid;
  });
}

size_t Tlb::invalidate_asid(uint16_t vmid, uint16_t asid) {
  return invalidate_where([vmid, asid](const TlbEntry& e) {
    return e.regime == TlbRegime::kEl1 && is_stage1_kind(e.stage) && e.vmid == vmid &&
           !e.global && e.asid == asid;
  });
}

size_t Tlb::invalidate_el2_all() {
  return invalidate_where([](const TlbEntry& e) { return e.regime != TlbRegime::kEl1; });
}

size_t Tlb::invalidate_el2_asid(uint16_t asid) {
  return invalidate_where([asid](const TlbEntry& e) {
    return e.regime == TlbRegime::kEl2E2H && !e.global && e.asid == asid;
  });
}


// Insertion into a sorted set of at most four.
void Tlb::ProbeContexts::add(uint64_t h) {
  unsigned i = 0;
  while (i < count && hash[i] < h) ++i;
  if (i < count && hash[i] == h) return;
  for (unsigned j = count; j > i; --j) hash[j] = hash[j - 1];
  hash[i] = h;
  ++count;
}

std::optional<Tlb::ProbeContexts> Tlb::probe_contexts(TlbiScope scope, uint16_t vmid, uint16_t asid,
                                                      bool e2h) const {
  ProbeContexts out;
  switch (scope) {
    case TlbiScope::kNhVa:
      for (StageKind k : {StageKind::kStage1, StageKind::kNested}) {
        out.add(ctx_hash(k, TlbRegime::kEl1, vmid, true, asid));
        out.add(ctx_hash(k, TlbRegime::kEl1, vmid, false, 0));
      }
      break;
    case TlbiScope::kNhVaa:
      if (cfg_.index_by_context) return std::nullopt;  // every ASID
      out.add(0);
      break;
    case TlbiScope::kEl2Va:
      if (e2h) {
        out.add(ctx_hash(StageKind::kStage1, TlbRegime::kEl2E2H, 0, true, asid));
        out.add(ctx_hash(StageKind::kStage1, TlbRegime::kEl2E2H, 0, false, 0));
      } else {
        out.add(ctx_hash(StageKind::kStage1, TlbRegime::kEl2, 0, false, 0));
      }
      break;
    case TlbiScope::kEl2Vaa:
      if (e2h) {
        if (cfg_.index_by_context) return std::nullopt;  // every ASID
        out.add(0);
      } else {
        out.add(ctx_hash(StageKind::kStage1, TlbRegime::kEl2, 0, false, 0));
      }
      break;
    case TlbiScope::kS2Ipa:
      out.add(ctx_hash(StageKind::kStage2, TlbRegime::kEl1, vmid, false, 0));
      break;
  }
  return out;
}

size_t Tlb::invalidate_scope(TlbiScope scope, uint16_t vmid, uint16_t asid, bool e2h,
                             uint64_t lo, uint64_t hi, const TagMatch& extra) {
  const auto tags = scope_match(scope, vmid, asid, e2h);
  size_t n = invalidate_overlapping(
      lo, hi, [&](const TlbEntry& e) { return tags(e) && (!extra || extra(e)); },
      probe_contexts(scope, vmid, asid, e2h));
  if (scope == TlbiScope::kS2Ipa && cfg_.s2_ipa_invalidates_nested)
    n += invalidate_nested_by_ipa(vmid, lo, hi);
  return n;
}

size_t Tlb::invalidate_va(uint16_t vmid, uint16_t asid, uint64_t va, bool /*leaf_only*/) {
  return invalidate_scope(TlbiScope::kNhVa, vmid, asid, false, va, va, nullptr);
}

size_t Tlb::invalidate_vaa(uint16_t vmid, uint64_t va, bool /*leaf_only*/) {
  return invalidate_scope(TlbiScope::kNhVaa, vmid, 0, false, va, va, nullptr);
}

size_t Tlb::invalidate_el2_va(uint16_t asid, uint64_t va, bool e2h, bool /*leaf_only*/) {
  return invalidate_scope(TlbiScope::kEl2Va, 0, asid, e2h, va, va, nullptr);
}

size_t Tlb::invalidate_el2_vaa(uint64_t va, bool e2h, bool /*leaf_only*/) {
  return invalidate_scope(TlbiScope::kEl2Vaa, 0, 0, e2h, va, va, nullptr);
}

size_t Tlb::invalidate_s2_ipa(uint16_t vmid, uint64_t ipa, bool /*leaf_only*/) {
  return invalidate_scope(TlbiScope::kS2Ipa, vmid, 0, false, ipa, ipa, nullptr);
}

size_t Tlb::invalidate_range(const TlbiRange& r) {
  if (r.ttl > 3) throw std::invalid_argument("Tlb::invalidate_range: TTL is 0..3");
  if (r.size == 0) return 0;
  const uint64_t lo = r.base;
  // No wrap at the top of the address space (IHI 0070 4.4.1.1).
  const uint64_t hi = (r.size - 1 > std::numeric_limits<uint64_t>::max() - lo)
                          ? std::numeric_limits<uint64_t>::max()
                          : lo + (r.size - 1);
  // 16K with TTL == 1 is reserved without IDR5.DS and treated as TTL == 0.
  const uint8_t ttl = (r.tg == Granule::k16K && r.ttl == 1) ? 0 : r.ttl;
  const Granule tg = r.tg;
  return invalidate_scope(r.scope, r.vmid, r.asid, r.e2h, lo, hi, [tg, ttl](const TlbEntry& e) {
    return e.granule == tg && (ttl == 0 || e.level == ttl);
  });
}

void Tlb::for_each(const std::function<void(const TlbEntry&)>& fn) const {
  for (const Slot& s : slots_)
    if (s.valid) fn(s.entry);
}

void Tlb::for_each_slot(
    const std::function<void(unsigned set, unsigned way, const TlbEntry&)>& fn) const {
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].valid)
      fn(static_cast<unsigned>(i / cfg_.ways), static_cast<unsigned>(i % cfg_.ways),
         slots_[i].entry);
}

}  // namespace smmu_vp::smmu

#include "smmu/page_table_walker.h"

#include <algorithm>

#include "smmu/translation_table.h"

namespace smmu_vp::smmu {

const char* to_string(ConfigError e) {
  switch (e) {
    case ConfigError::kNone: return "none";
    case ConfigError::kT0szOutOfRange: return "T0SZ out of range";
    case ConfigError::kBadAddressSize: return "bad output address size";
    case ConfigError::kTtbOutOfRange: return "TTB beyond the output address size";
    case ConfigError::kSl0Invalid: return "invalid SL0 for the granule";
    case ConfigError::kSl0Inconsistent: return "SL0 inconsistent with T0SZ";
  }
  return "?";
}

// ---------------------------------------------------------------------------
// Permissions
// ---------------------------------------------------------------------------
Permissions Permissions::operator&(const Permissions& o) const {
  Permissions p;
  p.priv_read = priv_read && o.priv_read;
  p.priv_write = priv_write && o.priv_write;
  p.priv_exec = priv_exec && o.priv_exec;
  p.unpriv_read = unpriv_read && o.unpriv_read;
  p.unpriv_write = unpriv_write && o.unpriv_write;
  p.unpriv_exec = unpriv_exec && o.unpriv_exec;
  return p;
}

bool Permissions::operator==(const Permissions& o) const {
  return priv_read == o.priv_read && priv_write == o.priv_write && priv_exec == o.priv_exec &&
         unpriv_read == o.unpriv_read && unpriv_write == o.unpriv_write && unpriv_exec == o.unpriv_exec;
}

unsigned WalkResult::reads_at(unsigned stage) const {
  unsigned n = 0;
  for (uint32_t v : reads[stage - 1]) n += v;
  return n;
}

// ---------------------------------------------------------------------------
// Internal types
// ---------------------------------------------------------------------------
struct PageTableWalker::Regime {
  unsigned stage = 1;
  Granule g = Granule::k4K;
  unsigned ias = 48;    // input address size
  unsigned start = 0;   // initial lookup level
  uint64_t ttb = 0;     // aligned to the initial table
  unsigned oas = 48;    // output address size: IPS (stage 1) or PS (stage 2)
  bool affd = false;
  bool had = false;     // stage 1: hierarchical attributes disabled
  bool ptw = false;     // stage 2: S2PTW
  uint16_t asid = 0;
  uint16_t vmid = 0;
};

struct PageTableWalker::Leaf {
  uint64_t desc = 0;
  unsigned level = 0;
  uint64_t oa = 0;       // output address of the input address (not just the block base)
  unsigned shift = 0;    // log2 of the block or page size
  uint8_t table_attrs = 0;
};

struct PageTableWalker::S2Outcome {
  uint64_t pa = 0;
  unsigned level = 0;
  unsigned shift = 0;
  uint64_t desc = 0;
  Permissions perms;
};

namespace {
// Stage 2 access made for a stage 1 table read: a data read. Stage 2 makes no
// privilege distinction for data, so `privileged` does not matter.
const AccessType kTableRead{};

uint64_t load_le64(const uint8_t* b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}
}  // namespace

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------
ConfigError PageTableWalker::check(const Stage1Config& c) {
  if (c.oas_bits < 32 || c.oas_bits > tt::kMaxAddressBits) return ConfigError::kBadAddressSize;
  if (c.t0sz < tt::kMinT0sz || c.t0sz > tt::max_t0sz(c.granule)) return ConfigError::kT0szOutOfRange;
  if ((c.ttb >> c.oas_bits) != 0) return ConfigError::kTtbOutOfRange;
  return ConfigError::kNone;
}

ConfigError PageTableWalker::check(const Stage2Config& c) {
  if (c.pa_max_bits < 32 || c.pa_max_bits > tt::kMaxAddressBits || c.ps_bits < 32 || c.ps_bits > c.pa_max_bits)
    return ConfigError::kBadAddressSize;
  const unsigned min_t0sz = std::max(tt::kMinT0sz, 64 - c.pa_max_bits);
  if (c.t0sz < min_t0sz || c.t0sz > tt::max_t0sz(c.granule)) return ConfigError::kT0szOutOfRange;
  unsigned start = 0;
  if (!tt::s2_start_level(c.granule, c.sl0, c.pa_max_bits, &start)) return ConfigError::kSl0Invalid;
  if (!tt::s2_start_level_consistent(c.granule, 64 - c.t0sz, start)) return ConfigError::kSl0Inconsistent;
  if ((c.ttb >> c.ps_bits) != 0) return ConfigError::kTtbOutOfRange;
  return ConfigError::kNone;
}

unsigned PageTableWalker::start_level(const Stage1Config& c) { return tt::s1_start_level(c.granule, 64 - c.t0sz); }

unsigned PageTableWalker::start_level(const Stage2Config& c) {
  unsigned start = 0;
  tt::s2_start_level(c.granule, c.sl0, c.pa_max_bits, &start);
  return start;
}

PageTableWalker::Regime PageTableWalker::regime_of(const Stage1Config& c) {
  Regime rg;
  rg.stage = 1;
  rg.g = c.granule;
  rg.ias = 64 - c.t0sz;
  rg.start = start_level(c);
  // TTB bits below the initial table's size are treated as zero (IHI 0070
  // 5.4 CD.TTB0).
  rg.ttb = c.ttb & ~(tt::start_table_bytes(rg.g, rg.ias, rg.start) - 1);
  rg.oas = c.oas_bits;
  rg.affd = c.affd;
  rg.had = c.had;
  rg.asid = c.asid;
  rg.vmid = c.vmid;
  return rg;
}

PageTableWalker::Regime PageTableWalker::regime_of(const Stage2Config& c) {
  Regime rg;
  rg.stage = 2;
  rg.g = c.granule;
  rg.ias = 64 - c.t0sz;
  rg.start = start_level(c);
  // Concatenated initial tables are aligned to their total size (5.2 STE.S2TTB).
  rg.ttb = c.ttb & ~(tt::start_table_bytes(rg.g, rg.ias, rg.start) - 1);
  rg.oas = c.ps_bits;
  rg.affd = c.affd;
  rg.ptw = c.ptw;
  rg.vmid = c.vmid;
  return rg;
}

// ---------------------------------------------------------------------------
// Walker
// ---------------------------------------------------------------------------
PageTableWalker::PageTableWalker(MemoryPort& mem, const WalkTiming& timing, WalkCache* cache,
                                 StatsRegistry* stats, const std::string& p)
    : mem_(mem), timing_(timing), step_ps_(ns_to_ps(timing.step_ns)), cache_(cache) {
  if (!stats) return;
  walks_[0] = &stats->counter(p + ".walks.s1");
  walks_[1] = &stats->counter(p + ".walks.s2");
  nested_s2_walks_ = &stats->counter(p + ".walks.nested_s2");
  for (unsigned s = 0; s < 2; ++s)
    for (unsigned l = 0; l < 4; ++l)
      reads_[s][l] = &stats->counter(p + ".reads.s" + std::to_string(s + 1) + ".l" + std::to_string(l));
  f_translation_ = &stats->counter(p + ".faults.translation");
  f_addr_size_ = &stats->counter(p + ".faults.address_size");
  f_access_ = &stats->counter(p + ".faults.access_flag");
  f_permission_ = &stats->counter(p + ".faults.permission");
  f_eabt_ = &stats->counter(p + ".faults.walk_eabt");
  f_config_ = &stats->counter(p + ".faults.config");
  latency_ = &stats->histogram(p + ".latency_ns", "ns", 1000.0);
}

bool PageTableWalker::read_descriptor(uint64_t pa, Ps* t, uint64_t* desc) {
  uint8_t b[8] = {};
  Ps done = *t;
  const bool ok = mem_.read(pa, b, 8, *t, &done);
  *t = std::max(done, *t) + step_ps_;
  *desc = load_le64(b);
  return ok;
}

Permissions PageTableWalker::s1_permissions(uint64_t d, uint8_t table_attrs) {
  // AP[2:1] (Arm ARM "Data access permissions for stage 1"), restricted by
  // APTable; UXN/PXN restricted by UXNTable/PXNTable. A location writable
  // unprivileged is never executable privileged.
  const bool read_only = tt::bit(d, tt::kAp2Bit) || (table_attrs & tt::kTableReadOnly);
  const bool unpriv = tt::bit(d, tt::kAp1Bit) && !(table_attrs & tt::kTableNoUnpriv);
  const bool uxn = tt::bit(d, tt::kUxnBit) || (table_attrs & tt::kTableUxn);
  const bool pxn = tt::bit(d, tt::kPxnBit) || (table_attrs & tt::kTablePxn);
  Permissions p;
  p.priv_read = true;
  p.priv_write = !read_only;
  p.unpriv_read = unpriv;
  p.unpriv_write = unpriv && !read_only;
  p.unpriv_exec = !uxn;
  p.priv_exec = !pxn && !p.unpriv_write;
  return p;
}

Permissions PageTableWalker::s2_permissions(uint64_t d) {
  // S2AP[0] read, S2AP[1] write; XN[1:0] (FEAT_XNX): 00 executable,
  // 01 not at EL1 (privileged), 10 never, 11 not at EL0 (unprivileged).
  const bool r = tt::bit(d, tt::kS2ApReadBit);
  const bool w = tt::bit(d, tt::kS2ApWriteBit);
  const unsigned xn = tt::s2_xn(d);
  Permissions p;
  p.priv_read = p.unpriv_read = r;
  p.priv_write = p.unpriv_write = w;
  p.priv_exec = xn == 0 || xn == 3;
  p.unpriv_exec = xn == 0 || xn == 1;
  return p;
}

bool PageTableWalker::walk_tables(const Regime& rg, uint64_t ia, const Regime* s2, Ps* t, WalkResult* r,
                                  Leaf* leaf) {
  auto fail = [&](FaultType f, unsigned level) {
    r->fault = f;
    r->fault_stage = rg.stage;
    r->level = level;
    return false;
  };
  // Input address beyond TxSZ: level 0 Translation fault, nothing read.
  if ((ia >> rg.ias) != 0) return fail(FaultType::kTranslation, 0);

  unsigned level = rg.start;
  uint64_t table = rg.ttb;
  uint8_t attrs = 0;
  WalkCache::Tag tag;
  tag.stage = static_cast<uint8_t>(rg.stage);
  tag.vmid = rg.vmid;
  tag.asid = rg.stage == 1 ? rg.asid : 0;
  tag.granule = rg.g;
  if (cache_) {
    WalkCache::Hit hit;
    if (cache_->lookup(tag, ia, rg.start, &hit)) {
      level = hit.level;
      table = hit.table;
      attrs = hit.table_attrs;
    }
  }

  for (;;) {
    const uint64_t desc_addr = table + 8 * tt::table_index(rg.g, rg.ias, rg.start, level, ia);
    uint64_t pa = desc_addr;
    if (s2) {
      if (nested_s2_walks_) nested_s2_walks_->add();
      S2Outcome o;
      if (!translate_s2(*s2, desc_addr, kTableRead, true, t, r, &o)) return false;
      pa = o.pa;
    }
    ++r->reads[rg.stage - 1][level];
    if (reads_[rg.stage - 1][level]) reads_[rg.stage - 1][level]->add();
    uint64_t d = 0;
    if (!read_descriptor(pa, t, &d)) {
      r->fetch_address = pa;
      return fail(FaultType::kWalkExternalAbort, level);
    }

    const tt::DescKind kind = tt::classify(d, level);
    if (kind == tt::DescKind::kInvalid || kind == tt::DescKind::kReserved ||
        (kind == tt::DescKind::kBlock && !tt::block_allowed(rg.g, level)))
      return fail(FaultType::kTranslation, level);

    if (kind == tt::DescKind::kTable) {
      const uint64_t next = tt::table_address(d, rg.g);
      if ((next >> rg.oas) != 0) return fail(FaultType::kAddressSize, level);
      if (rg.stage == 1 && !rg.had) attrs |= tt::table_attrs(d);
      ++level;
      table = next;
      if (cache_) cache_->insert(tag, level, ia, next, attrs);
      continue;
    }

    // Block or page.
    const uint64_t base = tt::output_address(d, rg.g, level);
    if ((base >> rg.oas) != 0) return fail(FaultType::kAddressSize, level);
    if (!tt::af(d) && !rg.affd) return fail(FaultType::kAccessFlag, level);
    leaf->desc = d;
    leaf->level = level;
    leaf->shift = tt::level_shift(rg.g, level);
    leaf->oa = base | (ia & ((1ull << leaf->shift) - 1));
    leaf->table_attrs = attrs;
    return true;
  }
}

bool PageTableWalker::translate_s2(const Regime& s2, uint64_t ipa, const AccessType& access, bool table_walk,
                                   Ps* t, WalkResult* r, S2Outcome* out) {
  const FaultClass cls = table_walk ? FaultClass::kTranslationTable : FaultClass::kInput;
  Leaf leaf;
  if (!walk_tables(s2, ipa, nullptr, t, r, &leaf)) {
    r->fault_class = cls;
    r->ipa = ipa;
    r->ipa_valid = true;
    return false;
  }
  const Permissions perms = s2_permissions(leaf.desc);
  // S2PTW: a stage 1 table walk to stage 2 Device memory is a stage 2
  // Permission fault (IHI 0070 5.2 STE.S2PTW).
  const bool ptw_fault = table_walk && s2.ptw && tt::s2_is_device(leaf.desc);
  if (ptw_fault || !perms.allows(access)) {
    r->fault = FaultType::kPermission;
    r->fault_stage = 2;
    r->level = leaf.level;
    r->fault_class = cls;
    r->ipa = ipa;
    r->ipa_valid = true;
    return false;
  }
  out->pa = leaf.oa;
  out->level = leaf.level;
  out->shift = leaf.shift;
  out->desc = leaf.desc;
  out->perms = perms;
  return true;
}

void PageTableWalker::finish(WalkResult* r, Ps at, Ps t) {
  r->done = t;
  if (latency_) latency_->record(t - at);
  if (r->config_error != ConfigError::kNone) {
    if (f_config_) f_config_->add();
    return;
  }
  Counter* c = nullptr;
  switch (r->fault) {
    case FaultType::kNone: break;
    case FaultType::kTranslation: c = f_translation_; break;
    case FaultType::kAddressSize: c = f_addr_size_; break;
    case FaultType::kAccessFlag: c = f_access_; break;
    case FaultType::kPermission: c = f_permission_; break;
    case FaultType::kWalkExternalAbort: c = f_eabt_; break;
  }
  if (c) c->add();
}

WalkResult PageTableWalker::walk_stage1(const Stage1Config& c, uint64_t va, const AccessType& access, Ps at,
                                        const Stage2Config* nested) {
  WalkResult r;
  r.s1_perms = Permissions::all();
  r.s2_perms = Permissions::all();
  if (walks_[0]) walks_[0]->add();
  Ps t = at;
  // The STE is decoded before the CD, so a bad stage 2 configuration wins.
  if (nested) {
    const ConfigError e2 = check(*nested);
    if (e2 != ConfigError::kNone) {
      r.config_error = e2;
      r.fault_stage = 2;
      finish(&r, at, t);
      return r;
    }
  }
  const ConfigError e1 = check(c);
  if (e1 != ConfigError::kNone) {
    r.config_error = e1;
    r.fault_stage = 1;
    finish(&r, at, t);
    return r;
  }

  const Regime s1 = regime_of(c);
  Regime s2;
  if (nested) s2 = regime_of(*nested);

  Leaf leaf;
  if (!walk_tables(s1, va, nested ? &s2 : nullptr, &t, &r, &leaf)) {
    finish(&r, at, t);
    return r;
  }
  r.s1_perms = s1_permissions(leaf.desc, leaf.table_attrs);
  r.level = leaf.level;
  r.s1_block_shift = leaf.shift;
  r.attr_indx = static_cast<uint8_t>(tt::attr_indx(leaf.desc));
  r.sh = static_cast<uint8_t>(tt::shareability(leaf.desc));
  r.global = !tt::not_global(leaf.desc);
  r.ns = tt::bit(leaf.desc, tt::kNsBit);
  r.contiguous = tt::contiguous(leaf.desc);
  // Stage 1 permission faults come before anything stage 2 says about the
  // output address.
  if (!r.s1_perms.allows(access)) {
    r.fault = FaultType::kPermission;
    r.fault_stage = 1;
    finish(&r, at, t);
    return r;
  }

  if (nested) {
    r.ipa = leaf.oa;
    r.ipa_valid = true;
    if (nested_s2_walks_) nested_s2_walks_->add();
    S2Outcome o;
    if (!translate_s2(s2, leaf.oa, access, false, &t, &r, &o)) {
      finish(&r, at, t);
      return r;
    }
    r.output_address = o.pa;
    r.s2_level = o.level;
    r.s2_block_shift = o.shift;
    r.s2_perms = o.perms;
    r.s2_mem_attr = static_cast<uint8_t>(tt::s2_mem_attr(o.desc));
    r.s2_sh = static_cast<uint8_t>(tt::shareability(o.desc));
    r.s2_contiguous = tt::contiguous(o.desc);
    r.block_shift = std::min(r.s1_block_shift, r.s2_block_shift);
  } else {
    r.output_address = leaf.oa;
    r.block_shift = r.s1_block_shift;
  }
  r.perms = r.s1_perms & r.s2_perms;
  finish(&r, at, t);
  return r;
}

WalkResult PageTableWalker::walk_stage2(const Stage2Config& c, uint64_t ipa, const AccessType& access, Ps at) {
  WalkResult r;
  r.s1_perms = Permissions::all();
  r.s2_perms = Permissions::all();
  if (walks_[1]) walks_[1]->add();
  Ps t = at;
  const ConfigError e = check(c);
  if (e != ConfigError::kNone) {
    r.config_error = e;
    r.fault_stage = 2;
    finish(&r, at, t);
    return r;
  }
  const Regime s2 = regime_of(c);
  r.ipa = ipa;
  r.ipa_valid = true;
  S2Outcome o;
  if (!translate_s2(s2, ipa, access, false, &t, &r, &o)) {
    finish(&r, at, t);
    return r;
  }
  r.output_address = o.pa;
  r.level = o.level;
  r.s2_level = o.level;
  r.s2_block_shift = o.shift;
  r.block_shift = o.shift;
  r.s2_perms = o.perms;
  r.perms = r.s1_perms & r.s2_perms;
  r.s2_mem_attr = static_cast<uint8_t>(tt::s2_mem_attr(o.desc));
  r.s2_sh = static_cast<uint8_t>(tt::shareability(o.desc));
  r.s2_contiguous = tt::contiguous(o.desc);
  finish(&r, at, t);
  return r;
}

}  // namespace smmu_vp::smmu

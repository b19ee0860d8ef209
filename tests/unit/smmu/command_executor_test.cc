// CommandExecutor on a real Translator: for every command, exactly which TLB
// (main and micro-TLBs), walk cache and configuration cache entries go and
// which stay (IHI 0070 4.3, 4.4); then, end to end with translations walked
// from tables in memory, the Linux driver's range invalidations, Leaf and the
// walk cache, micro-TLBs of several ports, and CFGI against stale STEs/CDs.
#include "smmu/command_executor.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "common/stats.h"
#include "fake_memory.h"
#include "smmu/translator.h"
#include "table_builder.h"

namespace smmu_vp::smmu {
namespace {

constexpr uint64_t kKiB = 1ull << 10;
constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kBase = 0x8000'0000;

using Labels = std::set<std::string>;

// ---------------------------------------------------------------------------
// Part 1: a world of cache entries inserted directly, and every command.

TlbEntry tlb_entry(StageKind stage, TlbRegime regime, uint16_t vmid, uint16_t asid, bool global, uint64_t va,
                   unsigned size_log2 = 12, Granule g = Granule::k4K, uint64_t ipa = 0) {
  TlbEntry e;
  e.stage = stage;
  e.regime = regime;
  e.vmid = vmid;
  e.asid = asid;
  e.global = global;
  e.granule = g;
  e.size_log2 = static_cast<uint8_t>(size_log2);
  e.level = leaf_level(g, size_log2).value_or(3);
  e.input_addr = va;
  e.output_addr = 0x1'0000'0000ull + va;
  e.ipa = stage == StageKind::kStage2 ? va : ipa;
  e.perms = {true, true, false, false, true};
  return e;
}

TlbEntry s1(uint16_t vmid, uint16_t asid, uint64_t va, unsigned size_log2 = 12, Granule g = Granule::k4K) {
  return tlb_entry(StageKind::kStage1, TlbRegime::kEl1, vmid, asid, false, va, size_log2, g);
}
TlbEntry s1_global(uint16_t vmid, uint64_t va) {
  return tlb_entry(StageKind::kStage1, TlbRegime::kEl1, vmid, 0, true, va);
}
TlbEntry nested(uint16_t vmid, uint16_t asid, bool global, uint64_t va, uint64_t ipa) {
  return tlb_entry(StageKind::kNested, TlbRegime::kEl1, vmid, global ? 0 : asid, global, va, 12, Granule::k4K, ipa);
}
TlbEntry s2(uint16_t vmid, uint64_t ipa) { return tlb_entry(StageKind::kStage2, TlbRegime::kEl1, vmid, 0, false, ipa); }
TlbEntry el2(uint64_t va) { return tlb_entry(StageKind::kStage1, TlbRegime::kEl2, 0, 0, true, va); }
TlbEntry e2h(uint16_t asid, bool global, uint64_t va) {
  return tlb_entry(StageKind::kStage1, TlbRegime::kEl2E2H, 0, global ? 0 : asid, global, va);
}

// An entry's identity as the TLB stores it.
using TlbKey = std::tuple<int, int, uint16_t, uint32_t, uint64_t, unsigned, int>;
TlbKey key_of(const TlbEntry& e) {
  return {static_cast<int>(e.stage), static_cast<int>(e.regime), e.vmid, e.global ? 0x1'0000u : e.asid,
          e.input_addr, e.size_log2, static_cast<int>(e.granule)};
}

const std::vector<std::pair<std::string, TlbEntry>>& tlb_world() {
  static const std::vector<std::pair<std::string, TlbEntry>> w = {
      {"t:s1.a1.p0", s1(0, 1, 0x1000'0000)},
      {"t:s1.a1.p1", s1(0, 1, 0x1000'1000)},
      {"t:s1.a1.p9", s1(0, 1, 0x1000'9000)},
      {"t:s1.a2.p0", s1(0, 2, 0x1000'0000)},
      {"t:s1.g.p2", s1_global(0, 0x1000'2000)},
      {"t:s1.a1.blk", s1(0, 1, 0x4000'0000, 21)},                    // 2 MiB block, level 2
      {"t:s1.a1.64k", s1(0, 1, 0x1001'0000, 16, Granule::k64K)},      // 64K granule page
      {"t:n.v5.a1.p0", nested(5, 1, false, 0x1000'0000, 0x8000'0000)},
      {"t:n.v5.g.p2", nested(5, 0, true, 0x1000'2000, 0x8000'2000)},
      {"t:n.v6.a1.p0", nested(6, 1, false, 0x1000'0000, 0x1000'0000)},  // its IPA is s2.v6.p0's
      {"t:s2.v5.p0", s2(5, 0x1000'0000)},
      {"t:s2.v5.p1", s2(5, 0x1000'1000)},
      {"t:s2.v6.p0", s2(6, 0x1000'0000)},
      {"t:el2.p0", el2(0x1000'0000)},
      {"t:e2h.a1.p0", e2h(1, false, 0x1000'0000)},
      {"t:e2h.a2.p0", e2h(2, false, 0x1000'0000)},
      {"t:e2h.g.p2", e2h(0, true, 0x1000'2000)},
  };
  return w;
}

struct WalkSpec {
  std::string label;
  WalkCache::Tag tag;
  unsigned level;
  uint64_t ia;
};

WalkCache::Tag wtag(uint8_t stage, uint16_t vmid, uint16_t asid) {
  WalkCache::Tag t;
  t.stage = stage;
  t.vmid = vmid;
  t.asid = asid;
  t.granule = Granule::k4K;
  return t;
}

// Level 3 tables: each covers the 2 MiB around its address.
const std::vector<WalkSpec>& walk_world() {
  static const std::vector<WalkSpec> w = {
      {"w:s1.v0.a1@10", wtag(1, 0, 1), 3, 0x1000'0000}, {"w:s1.v0.a1@70", wtag(1, 0, 1), 3, 0x7000'0000},
      {"w:s1.v0.a2@10", wtag(1, 0, 2), 3, 0x1000'0000}, {"w:s1.v5.a1@10", wtag(1, 5, 1), 3, 0x1000'0000},
      {"w:s2.v5@10", wtag(2, 5, 0), 3, 0x1000'0000},    {"w:s2.v5@70", wtag(2, 5, 0), 3, 0x7000'0000},
      {"w:s2.v6@10", wtag(2, 6, 0), 3, 0x1000'0000},
  };
  return w;
}

const std::vector<uint32_t> kStes = {1, 2, 3, 0x40, 0x41, 0x43, 0x44};
const std::vector<std::pair<uint32_t, uint32_t>> kCdSet = {{1, 0}, {1, 5}, {2, 0}, {0x41, 0}};

std::string ste_label(uint32_t sid) {
  char b[32];
  snprintf(b, sizeof b, "c:ste%x", sid);
  return b;
}
std::string cd_label(uint32_t sid, uint32_t ssid) {
  char b[32];
  snprintf(b, sizeof b, "c:cd%x.%x", sid, ssid);
  return b;
}

Labels all_labels(char kind) {
  Labels l;
  if (kind == 't')
    for (const auto& [label, e] : tlb_world()) l.insert(label);
  if (kind == 'w')
    for (const WalkSpec& w : walk_world()) l.insert(w.label);
  if (kind == 'c') {
    for (uint32_t sid : kStes) l.insert(ste_label(sid));
    for (const auto& [sid, ssid] : kCdSet) l.insert(cd_label(sid, ssid));
  }
  return l;
}

Labels only(const Labels& l, char kind) {
  Labels r;
  for (const std::string& s : l)
    if (s[0] == kind) r.insert(s);
  return r;
}

Labels minus(const Labels& a, const Labels& b) {
  Labels r;
  for (const std::string& s : a)
    if (!b.count(s)) r.insert(s);
  return r;
}

TranslatorConfig world_config(bool s2_ipa_nested = false) {
  TranslatorConfig c;
  c.tlb.entries = 1024;
  c.tlb.ways = 8;
  c.tlb.s2_ipa_invalidates_nested = s2_ipa_nested;
  c.micro_tlb_entries = 32;
  c.walk_cache.entries = 256;
  c.walk_cache.ways = 8;
  return c;
}

// A Translator whose caches hold the world above: every TLB entry in the main
// TLB and in the micro-TLBs of ports 0 and 1, the walk cache tables, STEs and
// CDs.
class World {
 public:
  explicit World(const SmmuFeatures& f = SmmuFeatures::v3_3_profile(), bool s2_ipa_nested = false)
      : mem_(kBase, 1 << 20, 1000), features_(f), tr_(mem_, f, world_config(s2_ipa_nested), stats_, "smmu"),
        ex_(tr_, f, &stats_, "smmu.cmdq") {
    ex_.set_e2h_source([this] { return e2h; });
    for (Tlb* t : tlbs())
      for (const auto& [label, e] : tlb_world()) t->insert(e);
    for (const WalkSpec& w : walk_world()) tr_.walk_cache().insert(w.tag, w.level, w.ia, 0x9000'0000, 0);
    const CachedDescriptor d{1, 2, 3, 4, 5, 6, 7, 8};
    for (uint32_t sid : kStes) tr_.config_cache().insert_ste(sid, d);
    for (const auto& [sid, ssid] : kCdSet) tr_.config_cache().insert_cd(sid, ssid, d);
    // Everything fits: nothing was evicted.
    for (Tlb* t : tlbs()) EXPECT_EQ(t->size(), tlb_world().size());
    EXPECT_EQ(tr_.walk_cache().valid_entries(), walk_world().size());
  }

  std::vector<Tlb*> tlbs() { return {&tr_.tlb(), tr_.micro_tlb(0), tr_.micro_tlb(1)}; }

  ExecResult run(const CommandWords& w) {
    const CommandDecode d = decode_command(w, features(), {});
    EXPECT_TRUE(d.ok()) << d.reason;
    return ex_.execute(d.command);
  }

  Labels tlb_present(const Tlb& t) const {
    std::map<TlbKey, std::string> by_key;
    for (const auto& [label, e] : tlb_world()) by_key[key_of(e)] = label;
    Labels l;
    t.for_each([&](const TlbEntry& e) {
      auto it = by_key.find(key_of(e));
      EXPECT_NE(it, by_key.end()) << "unknown entry in the TLB";
      if (it != by_key.end()) l.insert(it->second);
    });
    return l;
  }
  Labels walk_present() {
    Labels l;
    for (const WalkSpec& w : walk_world()) {
      WalkCache::Hit h;
      if (tr_.walk_cache().lookup(w.tag, w.ia, 0, &h) && h.level == w.level) l.insert(w.label);
    }
    return l;
  }
  Labels config_present() {
    Labels l;
    for (uint32_t sid : kStes)
      if (tr_.config_cache().contains_ste(sid)) l.insert(ste_label(sid));
    for (const auto& [sid, ssid] : kCdSet)
      if (tr_.config_cache().contains_cd(sid, ssid)) l.insert(cd_label(sid, ssid));
    return l;
  }

  const SmmuFeatures& features() const { return features_; }
  Translator& translator() { return tr_; }
  StatsRegistry& stats() { return stats_; }

  bool e2h = false;

 private:
  StatsRegistry stats_;
  test::FakeMemory mem_;
  SmmuFeatures features_;
  Translator tr_;
  CommandExecutor ex_;
};

struct Case {
  std::string name;
  CommandWords cmd;
  Labels removed;  // t:..., w:..., c:... labels
  CommandClass cls;
  bool e2h = false;
};

// Runs the command on a fresh world and checks exactly `removed` went.
void check(const Case& c, const SmmuFeatures& f = SmmuFeatures::v3_3_profile()) {
  SCOPED_TRACE(c.name);
  World w(f);
  w.e2h = c.e2h;
  const ExecResult r = w.run(c.cmd);
  EXPECT_EQ(r.cls, c.cls);
  EXPECT_EQ(r.sync, c.cls == CommandClass::kSync);
  const Labels gone_t = only(c.removed, 't'), gone_w = only(c.removed, 'w'), gone_c = only(c.removed, 'c');
  for (Tlb* t : w.tlbs()) EXPECT_EQ(w.tlb_present(*t), minus(all_labels('t'), gone_t));
  EXPECT_EQ(r.tlb_entries, 3 * gone_t.size());
  EXPECT_EQ(r.micro_tlb_entries, 2 * gone_t.size());
  EXPECT_EQ(w.walk_present(), minus(all_labels('w'), gone_w));
  EXPECT_EQ(r.walk_cache_entries, gone_w.size());
  EXPECT_EQ(w.config_present(), minus(all_labels('c'), gone_c));
  EXPECT_EQ(r.config_entries, gone_c.size());
}

TEST(CommandExecutor, ConfigurationInvalidation) {
  const CommandClass k = CommandClass::kCfgi;
  const std::vector<Case> cases = {
      // 4.3.1: the STE and every CD cached through it, for either Leaf.
      {"CFGI_STE leaf", cmd_cfgi_ste(1, true), {"c:ste1", "c:cd1.0", "c:cd1.5"}, k},
      {"CFGI_STE", cmd_cfgi_ste(1, false), {"c:ste1", "c:cd1.0", "c:cd1.5"}, k},
      {"CFGI_STE not cached", cmd_cfgi_ste(4, true), {}, k},
      // 4.3.2: aligned blocks of 2^(Range+1) StreamIDs.
      {"CFGI_STE_RANGE 4", cmd_cfgi_ste_range(0x42, 1), {"c:ste40", "c:ste41", "c:ste43", "c:cd41.0"}, k},
      {"CFGI_STE_RANGE 2", cmd_cfgi_ste_range(0x41, 0), {"c:ste40", "c:ste41", "c:cd41.0"}, k},
      // 4.3.6: Range 31 is CFGI_ALL.
      {"CFGI_ALL", cmd_cfgi_all(), all_labels('c'), k},
      // 4.3.3, 4.3.4: CDs only; the STE stays.
      {"CFGI_CD", cmd_cfgi_cd(1, 5, true), {"c:cd1.5"}, k},
      {"CFGI_CD ssid 0", cmd_cfgi_cd(1, 0, false), {"c:cd1.0"}, k},
      {"CFGI_CD_ALL", cmd_cfgi_cd_all(1), {"c:cd1.0", "c:cd1.5"}, k},
  };
  for (const Case& c : cases) check(c);
}

TEST(CommandExecutor, StageOneInvalidation) {
  const CommandClass k = CommandClass::kTlbi, kr = CommandClass::kTlbiRange;
  const Labels vmid0_s1 = {"t:s1.a1.p0", "t:s1.a1.p1", "t:s1.a1.p9", "t:s1.a2.p0",
                           "t:s1.g.p2",  "t:s1.a1.blk", "t:s1.a1.64k"};
  Labels nh_all0 = vmid0_s1;
  nh_all0.insert({"w:s1.v0.a1@10", "w:s1.v0.a1@70", "w:s1.v0.a2@10"});
  const std::vector<Case> cases = {
      // 4.4.2.1: stage 1 and nested entries of the VMID, global ones too.
      {"NH_ALL 0", cmd_tlbi_nh_all(0), nh_all0, k},
      {"NH_ALL 5", cmd_tlbi_nh_all(5), {"t:n.v5.a1.p0", "t:n.v5.g.p2", "w:s1.v5.a1@10"}, k},
      // 4.4.2.2: non-global entries of (VMID, ASID).
      {"NH_ASID 1/0",
       cmd_tlbi_nh_asid(1, 0),
       {"t:s1.a1.p0", "t:s1.a1.p1", "t:s1.a1.p9", "t:s1.a1.blk", "t:s1.a1.64k", "w:s1.v0.a1@10", "w:s1.v0.a1@70"},
       k},
      {"NH_ASID 1/5", cmd_tlbi_nh_asid(1, 5), {"t:n.v5.a1.p0", "w:s1.v5.a1@10"}, k},
      // 4.4.2.4: by VA for the ASID, plus global entries; Leaf = 1 leaves the
      // walk cache, Leaf = 0 removes the tables on the walk.
      {"NH_VA leaf", cmd_tlbi_nh_va(1, 0, 0x1000'0000, true), {"t:s1.a1.p0"}, k},
      {"NH_VA", cmd_tlbi_nh_va(1, 0, 0x1000'0000, false), {"t:s1.a1.p0", "w:s1.v0.a1@10"}, k},
      {"NH_VA global", cmd_tlbi_nh_va(2, 0, 0x1000'2000, true), {"t:s1.g.p2"}, k},
      {"NH_VA inside a block", cmd_tlbi_nh_va(1, 0, 0x4012'3000, true), {"t:s1.a1.blk"}, k},
      {"NH_VA nested", cmd_tlbi_nh_va(1, 5, 0x1000'0000, true), {"t:n.v5.a1.p0"}, k},
      // 4.4.2.3: every ASID.
      {"NH_VAA",
       cmd_tlbi_nh_vaa(0, 0x1000'0000, false),
       {"t:s1.a1.p0", "t:s1.a2.p0", "w:s1.v0.a1@10", "w:s1.v0.a2@10"},
       k},
      {"NH_VAA nested global", cmd_tlbi_nh_vaa(5, 0x1000'2000, true), {"t:n.v5.g.p2"}, k},
      // 4.4.1.1: ranges, limited to TG and, with TTL != 0, to its level.
      {"NH_VA 2 pages", cmd_tlbi_nh_va(1, 0, 0x1000'0000, true, 1, 0, 1, 0), {"t:s1.a1.p0", "t:s1.a1.p1"}, kr},
      {"NH_VA 32 pages TTL 3, not the 64K page",
       cmd_tlbi_nh_va(1, 0, 0x1000'0000, false, 0, 5, 1, 3),
       {"t:s1.a1.p0", "t:s1.a1.p1", "t:s1.a1.p9", "t:s1.g.p2", "w:s1.v0.a1@10"},
       kr},
      {"NH_VA block TTL 2", cmd_tlbi_nh_va(1, 0, 0x4000'0000, true, 0, 9, 1, 2), {"t:s1.a1.blk"}, kr},
      {"NH_VA block TTL 3 is not level 2", cmd_tlbi_nh_va(1, 0, 0x4000'0000, true, 0, 9, 1, 3), {}, kr},
      {"NH_VA 64K", cmd_tlbi_nh_va(1, 0, 0x1000'0000, true, 1, 0, 3, 0), {"t:s1.a1.64k"}, kr},
      {"NH_VAA 3 pages",
       cmd_tlbi_nh_vaa(0, 0x1000'0000, true, 2, 0, 1, 0),
       {"t:s1.a1.p0", "t:s1.a1.p1", "t:s1.a2.p0", "t:s1.g.p2"},
       kr},
  };
  for (const Case& c : cases) check(c);
}

TEST(CommandExecutor, El2Invalidation) {
  const CommandClass k = CommandClass::kTlbi, kr = CommandClass::kTlbiRange;
  // The walk cache has no regime tag: EL2 commands also take the stage 1
  // tables of VMID 0 in their ASID/VA scope (over-invalidation, 4.4).
  const std::vector<Case> cases = {
      // 4.4.2.7
      {"EL2_ALL",
       cmd_tlbi_el2_all(),
       {"t:el2.p0", "t:e2h.a1.p0", "t:e2h.a2.p0", "t:e2h.g.p2", "w:s1.v0.a1@10", "w:s1.v0.a1@70", "w:s1.v0.a2@10"},
       k},
      // 4.4.2.10
      {"EL2_ASID", cmd_tlbi_el2_asid(1), {"t:e2h.a1.p0", "w:s1.v0.a1@10", "w:s1.v0.a1@70"}, k},
      // 4.4.2.8: by SMMU_CR2.E2H.
      {"EL2_VA e2h", cmd_tlbi_el2_va(1, 0x1000'0000, true), {"t:e2h.a1.p0"}, k, true},
      {"EL2_VA e2h global", cmd_tlbi_el2_va(2, 0x1000'2000, true), {"t:e2h.g.p2"}, k, true},
      {"EL2_VA no e2h ignores the ASID", cmd_tlbi_el2_va(7, 0x1000'0000, true), {"t:el2.p0"}, k, false},
      {"EL2_VA e2h non-leaf", cmd_tlbi_el2_va(1, 0x1000'0000, false), {"t:e2h.a1.p0", "w:s1.v0.a1@10"}, k, true},
      // 4.4.2.9
      {"EL2_VAA e2h",
       cmd_tlbi_el2_vaa(0x1000'0000, false),
       {"t:e2h.a1.p0", "t:e2h.a2.p0", "w:s1.v0.a1@10", "w:s1.v0.a2@10"},
       k,
       true},
      {"EL2_VAA no e2h", cmd_tlbi_el2_vaa(0x1000'0000, true), {"t:el2.p0"}, k, false},
      {"EL2_VA range e2h", cmd_tlbi_el2_va(1, 0x1000'0000, true, 2, 0, 1, 3), {"t:e2h.a1.p0", "t:e2h.g.p2"}, kr, true},
  };
  for (const Case& c : cases) check(c);
}

TEST(CommandExecutor, StageTwoAndAllInvalidation) {
  const CommandClass k = CommandClass::kTlbi, kr = CommandClass::kTlbiRange;
  Labels el1 = minus(all_labels('t'), {"t:el2.p0", "t:e2h.a1.p0", "t:e2h.a2.p0", "t:e2h.g.p2"});
  Labels nsnh = el1;
  for (const std::string& l : all_labels('w')) nsnh.insert(l);
  const std::vector<Case> cases = {
      // 4.4.3.2: every EL1 entry of the VMID at both stages.
      {"S12_VMALL 5",
       cmd_tlbi_s12_vmall(5),
       {"t:n.v5.a1.p0", "t:n.v5.g.p2", "t:s2.v5.p0", "t:s2.v5.p1", "w:s1.v5.a1@10", "w:s2.v5@10", "w:s2.v5@70"},
       k},
      // 4.4.3.1: stage 2-only entries; nested ones are not required to go.
      {"S2_IPA leaf", cmd_tlbi_s2_ipa(5, 0x1000'0000, true), {"t:s2.v5.p0"}, k},
      {"S2_IPA", cmd_tlbi_s2_ipa(5, 0x1000'0000, false), {"t:s2.v5.p0", "w:s2.v5@10"}, k},
      {"S2_IPA keeps nested", cmd_tlbi_s2_ipa(6, 0x1000'0000, true), {"t:s2.v6.p0"}, k},
      {"S2_IPA 2 pages", cmd_tlbi_s2_ipa(5, 0x1000'0000, true, 1, 0, 1, 3), {"t:s2.v5.p0", "t:s2.v5.p1"}, kr},
      // 4.4.4.1: every EL1 entry, both stages; EL2 entries stay.
      {"NSNH_ALL", cmd_tlbi_nsnh_all(), nsnh, k},
  };
  for (const Case& c : cases) check(c);
}

TEST(CommandExecutor, CommandsWithoutEffect) {
  check({"PREFETCH_CONFIG", cmd_prefetch_config(1), {}, CommandClass::kPrefetch});
  check({"PREFETCH_ADDR", cmd_prefetch_addr(1, 0x1000'0000, 3), {}, CommandClass::kPrefetch});
  check({"CMD_SYNC", cmd_sync(SyncCs::kSev), {}, CommandClass::kSync});
  // ATC_INV is legal only with ATS; the executor leaves the SMMU's caches
  // alone (the consumer sends it to the endpoint's ATC).
  SmmuFeatures ats = SmmuFeatures::v3_3_profile();
  ats.ats = true;
  check({"ATC_INV", cmd_atc_inv(1, 0x1000'0000, 52), {}, CommandClass::kAtc}, ats);
  // The classes of commands that are never legal here.
  Command c;
  c.opcode = Opcode::kResume;
  EXPECT_EQ(command_class(c), CommandClass::kOther);
  c.opcode = Opcode::kPriResp;
  EXPECT_EQ(command_class(c), CommandClass::kOther);
}

TEST(CommandExecutor, StageOneOnlySmmuMatchesVmidZero) {
  // 4.4.2: the VMID of CMD_TLBI_NH_* is only matched when stage 2 exists.
  SmmuFeatures f = SmmuFeatures::v3_3_profile();
  f.stage2 = false;
  f.hyp = false;
  check({"NH_VA vmid 7", cmd_tlbi_nh_va(1, 7, 0x1000'0000, true), {"t:s1.a1.p0"}, CommandClass::kTlbi}, f);
  check({"NH_ASID vmid 7",
         cmd_tlbi_nh_asid(2, 7),
         {"t:s1.a2.p0", "w:s1.v0.a2@10"},
         CommandClass::kTlbi},
        f);
}

TEST(CommandExecutor, S2IpaCanOverInvalidateNested) {
  World w(SmmuFeatures::v3_3_profile(), /*s2_ipa_nested=*/true);
  const ExecResult r = w.run(cmd_tlbi_s2_ipa(6, 0x1000'0000, true));
  // The main TLB is configured to take nested entries whose IPA matches.
  EXPECT_EQ(w.tlb_present(w.translator().tlb()), minus(all_labels('t'), {"t:s2.v6.p0", "t:n.v6.a1.p0"}));
  EXPECT_GE(r.tlb_entries, 2u + 2u);  // main: 2, each micro-TLB: at least the stage 2 entry
}

TEST(CommandExecutor, Statistics) {
  World w;
  w.run(cmd_tlbi_nh_asid(1, 0));
  w.run(cmd_cfgi_ste(1, true));
  w.run(cmd_sync(SyncCs::kNone));
  StatsRegistry& s = w.stats();
  auto counter = [&](const std::string& p) {
    const Counter* c = s.find_counter(p);
    return c ? c->value() : ~0ull;
  };
  EXPECT_EQ(counter("smmu.cmdq.executed.CMD_TLBI_NH_ASID"), 1u);
  EXPECT_EQ(counter("smmu.cmdq.executed.CMD_CFGI_STE"), 1u);
  EXPECT_EQ(counter("smmu.cmdq.executed.CMD_SYNC"), 1u);
  EXPECT_EQ(counter("smmu.cmdq.invalidated.tlb"), 15u);  // 5 entries x 3 TLBs
  EXPECT_EQ(counter("smmu.cmdq.invalidated.micro_tlb"), 10u);
  EXPECT_EQ(counter("smmu.cmdq.invalidated.walk_cache"), 2u);
  EXPECT_EQ(counter("smmu.cmdq.invalidated.config_cache"), 3u);
  const Histogram* h = s.find_histogram("smmu.cmdq.invalidated_per_command");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->count(), 2u);  // the SYNC is not an invalidation
  // The caches count what the commands removed too.
  EXPECT_EQ(w.translator().tlb().stats().invalidated, 5u);
}

// ---------------------------------------------------------------------------
// Part 2: translations walked from tables in memory.

constexpr uint64_t kStrtab = kBase;             // 64 STEs
constexpr uint64_t kCdArea = kBase + 0x1'0000;   // CDs
constexpr uint64_t kPoolA = kBase + 0x10'0000;   // stage 1 tables, ASID 1
constexpr uint64_t kPoolB = kBase + 0x30'0000;   // stage 1 tables, ASID 2
constexpr uint64_t kPoolS2 = kBase + 0x50'0000;  // stage 2 tables, VMID 7
constexpr uint64_t kVa = 0x4000'0000;            // 1024 pages of ASID 1 from here
constexpr unsigned kPages = 1024;
constexpr uint64_t kBlock = 0x4060'0000;         // a 2 MiB block of ASID 1
constexpr uint64_t kIpa = 0x1000'0000;           // 16 stage 2 pages from here
constexpr Ps kLatency = 10'000;

class ExecutorTranslations : public ::testing::Test {
 protected:
  ExecutorTranslations()
      : mem_(kBase, 16 * kMiB, kLatency),
        a_(mem_, 1, 12, 48, 0, kPoolA, kPoolA + 2 * kMiB),
        b_(mem_, 1, 12, 48, 0, kPoolB, kPoolB + 2 * kMiB),
        s2_(mem_, 2, 12, 40, 1, kPoolS2, kPoolS2 + 2 * kMiB),
        tr_(mem_, features_, config(), stats_, "smmu"),
        ex_(tr_, features_, &stats_, "smmu.cmdq") {
    for (unsigned i = 0; i < kPages; ++i) a_.map(kVa + i * 4 * kKiB, 0x9000'0000 + i * 4 * kKiB, 3);
    a_.map(kBlock, 0x9060'0000, 2);
    for (unsigned i = 0; i < 64; ++i) b_.map(kVa + i * 4 * kKiB, 0xA000'0000 + i * 4 * kKiB, 3);
    for (unsigned i = 0; i < 16; ++i) s2_.map(kIpa + i * 4 * kKiB, 0xB000'0000 + i * 4 * kKiB, 3);
    put_ste(1, s1_ste(kCdArea));
    put_cd(kCdArea, cd(a_, 1));
    put_ste(2, s1_ste(kCdArea + 0x40));
    put_cd(kCdArea + 0x40, cd(b_, 2));
    DecodedSte s;
    s.config = ste::kS2Trans;
    s.s2_vmid = 7;
    s.s2_t0sz = 24;  // 40-bit IPAs from level 1
    s.s2_sl0 = 1;
    s.s2_granule = Granule::k4K;
    s.s2_ps_bits = 48;
    s.s2_ttb = s2_.ttb();
    put_ste(3, s);
  }

  static TranslatorConfig config() {
    TranslatorConfig c;
    c.tlb.entries = 4096;
    c.tlb.ways = 8;
    c.micro_tlb_entries = 64;
    return c;
  }
  static DecodedSte s1_ste(uint64_t cd_ptr) {
    DecodedSte s;
    s.config = ste::kS1Trans;
    s.s1_context_ptr = cd_ptr;
    return s;
  }
  static DecodedCd cd(const test::TableBuilder& b, uint16_t asid) {
    DecodedCd c;
    c.t0sz = 16;
    c.granule = Granule::k4K;
    c.ips_bits = 48;
    c.asid = asid;
    c.ttb0 = b.ttb();
    return c;
  }
  void put_ste(uint32_t sid, const DecodedSte& s) {
    const SteWords w = encode_ste(s);
    mem_.poke(kStrtab + sid * 64ull, w.data(), sizeof w);
  }
  void put_cd(uint64_t addr, const DecodedCd& c) {
    const CdWords w = encode_cd(c);
    mem_.poke(addr, w.data(), sizeof w);
  }

  TranslationResult translate(uint32_t sid, uint64_t addr, unsigned port = 0) {
    TranslationRequest r;
    r.sid = sid;
    r.addr = addr;
    r.port = port;
    r.at = now_;
    TranslationResult res = tr_.translate(kStreamTable, r);
    now_ = std::max(now_, res.done);
    return res;
  }
  ExecResult run(const CommandWords& w) {
    const CommandDecode d = decode_command(w, features_);
    EXPECT_TRUE(d.ok()) << d.reason;
    return ex_.execute(d.command);
  }
  // Every page of ASID 1 (port 0), the block, and the ASID 2 pages (port 1).
  void warm() {
    for (unsigned i = 0; i < kPages; ++i) ASSERT_TRUE(translate(1, kVa + i * 4 * kKiB).ok());
    ASSERT_TRUE(translate(1, kBlock).ok());
    for (unsigned i = 0; i < 64; ++i) ASSERT_TRUE(translate(2, kVa + i * 4 * kKiB, 1).ok());
    ASSERT_EQ(tr_.tlb().stats().evictions, 0u);
  }
  bool cached(uint16_t asid, uint64_t va) { return tr_.tlb().peek(StageKind::kStage1, 0, asid, va).has_value(); }

  const StreamTableConfig kStreamTable{kStrtab, false, 0, 6};
  SmmuFeatures features_ = SmmuFeatures::v3_3_profile();
  StatsRegistry stats_;
  test::FakeMemory mem_;
  test::TableBuilder a_, b_, s2_;
  Translator tr_;
  CommandExecutor ex_;
  Ps now_ = 0;
};

TEST_F(ExecutorTranslations, LinuxLeafRangesRemoveExactlyTheirPages) {
  for (uint64_t pages : {1, 31, 32, 33, 512, 1000}) {
    SCOPED_TRACE(pages);
    tr_.tlb().invalidate_all();
    tr_.micro_tlb(0)->invalidate_all();
    tr_.micro_tlb(1)->invalidate_all();
    warm();
    const uint64_t first = 8;  // start off a 32-page boundary
    const uint64_t lo = kVa + first * 4 * kKiB, hi = lo + std::min<uint64_t>(pages, kPages - first) * 4 * kKiB;
    size_t removed = 0;
    for (const Command& c : linux_range_tlbi(1, 0, lo, hi - lo, 4 * kKiB, true, true))
      removed += run(c.raw).tlb_entries;
    for (unsigned i = 0; i < kPages; ++i) {
      const uint64_t va = kVa + i * 4 * kKiB;
      EXPECT_EQ(cached(1, va), va < lo || va >= hi) << std::hex << va;
    }
    EXPECT_TRUE(cached(1, kBlock));
    for (unsigned i = 0; i < 64; ++i) EXPECT_TRUE(cached(2, kVa + i * 4 * kKiB));  // the other ASID
    // The micro-TLBs hold the last 64 translations of each port; none in range survives.
    tr_.micro_tlb(0)->for_each([&](const TlbEntry& e) { EXPECT_FALSE(e.input_addr >= lo && e.input_addr < hi); });
    EXPECT_EQ(tr_.micro_tlb(1)->size(), 64u);
    EXPECT_GE(removed, (hi - lo) / (4 * kKiB));
    // Translations in the range walk again, outside hit.
    EXPECT_FALSE(translate(1, lo).tlb_hit);
    EXPECT_TRUE(translate(1, hi == kVa + kPages * 4 * kKiB ? kVa : hi).tlb_hit);
  }
}

TEST_F(ExecutorTranslations, LinuxNonLeafRangeTakesItsExtraPageAndTheWalkCache) {
  warm();
  const uint64_t lo = kVa + 64 * 4 * kKiB;
  const std::vector<Command> cmds = linux_range_tlbi(1, 0, lo, 33 * 4 * kKiB, 4 * kKiB, false, true);
  ASSERT_EQ(cmds.size(), 1u);
  const ExecResult r = run(cmds[0].raw);
  EXPECT_EQ(r.cls, CommandClass::kTlbiRange);
  EXPECT_GT(r.walk_cache_entries, 0u);
  for (unsigned i = 60; i < 110; ++i) {
    const uint64_t va = kVa + i * 4 * kKiB;
    EXPECT_EQ(cached(1, va), i < 64 || i >= 64 + 34) << i;  // 33 pages and one more
  }
  // The tables on the walk went too: a walk in the range reads all four levels.
  const size_t reads = mem_.reads();
  EXPECT_FALSE(translate(1, lo).tlb_hit);
  EXPECT_EQ(mem_.reads() - reads, 4u);
}

TEST_F(ExecutorTranslations, LeafKeepsTheWalkCacheNonLeafDoesNot) {
  warm();
  // Leaf = 1: the level 3 table stays cached, a new walk reads one descriptor.
  run(cmd_tlbi_nh_va(1, 0, kVa, true));
  size_t reads = mem_.reads();
  EXPECT_FALSE(translate(1, kVa).tlb_hit);
  EXPECT_EQ(mem_.reads() - reads, 1u);
  // Leaf = 0: every table on the walk goes; the walk reads four.
  run(cmd_tlbi_nh_va(1, 0, kVa + 4 * kKiB, false));
  reads = mem_.reads();
  EXPECT_FALSE(translate(1, kVa + 4 * kKiB).tlb_hit);
  EXPECT_EQ(mem_.reads() - reads, 4u);
}

TEST_F(ExecutorTranslations, MicroTlbsOfEveryPortAreInvalidated) {
  ASSERT_TRUE(translate(1, kVa, 0).ok());
  ASSERT_TRUE(translate(1, kVa, 2).ok());  // ASID 1 through port 2 as well
  ASSERT_TRUE(translate(2, kVa, 1).ok());
  ASSERT_TRUE(translate(1, kVa, 0).tlb_hit);
  EXPECT_EQ(tr_.micro_tlb(0)->size(), 1u);
  EXPECT_EQ(tr_.micro_tlb(2)->size(), 1u);
  const ExecResult r = run(cmd_tlbi_nh_asid(1, 0));
  EXPECT_EQ(r.tlb_entries, 3u);  // main, port 0, port 2
  EXPECT_EQ(r.micro_tlb_entries, 2u);
  EXPECT_EQ(tr_.micro_tlb(0)->size(), 0u);
  EXPECT_EQ(tr_.micro_tlb(2)->size(), 0u);
  EXPECT_EQ(tr_.micro_tlb(1)->size(), 1u);  // ASID 2
  EXPECT_FALSE(translate(1, kVa, 2).tlb_hit);
  EXPECT_TRUE(translate(2, kVa, 1).tlb_hit);
}

TEST_F(ExecutorTranslations, BlocksGoByAnyAddressInside) {
  ASSERT_TRUE(translate(1, kBlock + 0x12'3456).ok());
  ASSERT_TRUE(translate(1, kBlock).tlb_hit);
  EXPECT_EQ(run(cmd_tlbi_nh_va(1, 0, kBlock + 0x1F'F000, true)).tlb_entries, 2u);  // main and port 0
  EXPECT_FALSE(translate(1, kBlock).tlb_hit);
}

TEST_F(ExecutorTranslations, StageTwoEntriesByIpa) {
  for (unsigned i = 0; i < 4; ++i) ASSERT_TRUE(translate(3, kIpa + i * 4 * kKiB).ok());
  ASSERT_TRUE(translate(1, kVa).ok());
  // A stage 1 TLBI does not touch stage 2 entries, and S2_IPA not stage 1 ones.
  EXPECT_EQ(run(cmd_tlbi_nh_vaa(7, kIpa, true)).tlb_entries, 0u);
  // Pages 1 and 2, in the main TLB and port 0's micro-TLB.
  EXPECT_EQ(run(cmd_tlbi_s2_ipa(7, kIpa + 4 * kKiB, true, 1, 0, 1, 3)).tlb_entries, 4u);
  EXPECT_TRUE(translate(3, kIpa).tlb_hit);
  EXPECT_FALSE(translate(3, kIpa + 4 * kKiB).tlb_hit);
  EXPECT_FALSE(translate(3, kIpa + 8 * kKiB).tlb_hit);
  EXPECT_TRUE(translate(3, kIpa + 12 * kKiB).tlb_hit);
  EXPECT_TRUE(translate(1, kVa).tlb_hit);
  // S12_VMALL takes the whole VMID.
  EXPECT_GT(run(cmd_tlbi_s12_vmall(7)).tlb_entries, 0u);
  EXPECT_FALSE(translate(3, kIpa).tlb_hit);
}

TEST_F(ExecutorTranslations, CfgiMakesChangedStesAndCdsVisible) {
  ASSERT_TRUE(translate(1, kVa).ok());
  // The CD now points at ASID 2's tables: the cached CD still serves.
  put_cd(kCdArea, cd(b_, 2));
  run(cmd_tlbi_nh_asid(1, 0));
  EXPECT_EQ(translate(1, kVa).pa, 0x9000'0000u);
  EXPECT_EQ(run(cmd_cfgi_cd(1, 0, true)).config_entries, 1u);
  EXPECT_EQ(translate(1, kVa).pa, 0xA000'0000u);
  // The STE becomes abort: served from the cache until CFGI_STE.
  DecodedSte abort_ste;
  abort_ste.config = ste::kAbort;
  put_ste(1, abort_ste);
  EXPECT_TRUE(translate(1, kVa).ok());
  EXPECT_EQ(run(cmd_cfgi_ste(1, true)).config_entries, 2u);  // STE and its CD
  EXPECT_EQ(translate(1, kVa).kind, TranslationResult::Kind::kAbort);
  // CFGI_ALL empties the configuration cache.
  ASSERT_TRUE(translate(2, kVa).ok());
  EXPECT_EQ(run(cmd_cfgi_all()).config_entries, 3u);  // STE 1 (abort), STE 2 and its CD
  EXPECT_EQ(tr_.config_cache().ste_size() + tr_.config_cache().cd_size(), 0u);
}

}  // namespace
}  // namespace smmu_vp::smmu

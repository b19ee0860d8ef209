// fuzz_smmu_commands: SMMU command decoding (models/smmu/commands.h
// decode_command) and execution (command_executor.h) against a Translator's
// TLB, micro-TLBs, walk cache and configuration cache. The input is a
// sequence of steps; each step first may plant a cache entry built from its
// bytes (so that invalidations have something to remove), then decodes a
// 16-byte command (its opcode byte optionally forced to a real opcode, so
// most commands get past decoding) and executes it if decoding accepted it.
// Checks: decode never accepts what its own encoder disagrees with on the
// opcode; an executed command's counts add up; CMD_TLBI_NSNH_ALL and
// CMD_CFGI_ALL leave the caches they cover empty.
// With the ATS profile (v3.3 with IDR0.ATS), steps may also fill a device
// ATC, and a decoded CMD_ATC_INV goes to it as the SMMU sends it
// (atc_invalidation): afterwards nothing in the ATC covers the first or the
// last byte of the span.
// The Translators (one per feature profile, with micro-TLBs) and executors
// are built once per process and reset (Translator::reset) per input.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <memory>

#include "common/device_atc.h"
#include "common/stats.h"
#include "fuzz_input.h"
#include "fuzz_profiles.h"
#include "smmu/ats_completion.h"
#include "smmu/command_executor.h"
#include "smmu/commands.h"
#include "smmu/translator.h"

using namespace smmu_vp;
using namespace smmu_vp::smmu;

namespace {

// No walks happen here: memory is never read.
class NoMemory : public MemoryPort {
 public:
  bool read(uint64_t, void* data, unsigned len, Ps at, Ps* done) override {
    std::memset(data, 0, len);
    *done = at;
    return false;
  }
  bool write(uint64_t, const void*, unsigned, Ps at, Ps* done) override {
    *done = at;
    return false;
  }
};

struct World {
  explicit World(const SmmuFeatures& f) : features(f) {
    TranslatorConfig cfg;
    cfg.tlb.entries = 64;  // small caches: evictions and full sets happen
    cfg.tlb.ways = 4;
    cfg.walk_cache.entries = 16;
    cfg.walk_cache.ways = 4;
    cfg.micro_tlb_entries = 8;
    translator = std::make_unique<Translator>(mem, features, cfg, stats, "smmu");
    translator->micro_tlb(0);  // two micro-TLBs exist from the start
    translator->micro_tlb(1);
    executor = std::make_unique<CommandExecutor>(*translator, features, &stats, "smmu.cmdq");
  }
  SmmuFeatures features;
  NoMemory mem;
  StatsRegistry stats;
  std::unique_ptr<Translator> translator;
  std::unique_ptr<CommandExecutor> executor;
};

// 0: v3.0, 1: v3.3, 2: v3.3 with ATS.
World& world(unsigned profile) {
  static World v30(SmmuFeatures::v3_0_profile());
  static World v33(SmmuFeatures::v3_3_profile());
  static World ats(fuzz::with_ats_pri_stall());  // ATC_INV, PRI_RESP, RESUME, STALL_TERM decode
  return profile == 2 ? ats : profile ? v33 : v30;
}

// A Success completion for the ATC: a naturally aligned range of 4 KiB to 1 GiB.
AtsExtension completion(fuzz::Input& in) {
  AtsExtension c;
  c.status = AtsExtension::Status::kSuccess;
  c.size_log2 = 12 + in.pick(19);
  const uint64_t mask = ~((uint64_t{1} << c.size_log2) - 1);
  c.untranslated_addr = in.u64() & mask & 0x0000'00ff'ffff'ffffull;
  c.translated_addr = in.u64() & mask & ((uint64_t{1} << 48) - 1);
  c.read = true;
  c.write = in.bit();
  return c;
}

// A TLB entry as the walker could produce it: a leaf size its granule and
// level allow, addresses aligned to it; tags from a small set so commands match.
TlbEntry tlb_entry(fuzz::Input& in) {
  static const Granule kGranules[3] = {Granule::k4K, Granule::k16K, Granule::k64K};
  TlbEntry e;
  e.stage = static_cast<StageKind>(in.pick(3));
  e.regime = e.stage == StageKind::kStage1 ? static_cast<TlbRegime>(in.pick(3)) : TlbRegime::kEl1;
  e.vmid = in.u8() & 3;
  e.asid = in.u8() & 3;
  e.global = in.bit();
  e.granule = kGranules[in.pick(3)];
  const unsigned g = granule_shift(e.granule);
  e.level = static_cast<uint8_t>(e.granule == Granule::k4K ? 1 + in.pick(3) : 2 + in.pick(2));
  e.size_log2 = static_cast<uint8_t>(g + (3 - e.level) * (g - 3));
  const uint64_t mask = ~((1ull << e.size_log2) - 1) & ((1ull << 48) - 1);
  e.input_addr = in.u64() & mask & 0x0000'00ff'ffff'ffffull;  // 40 bits: commands hit them
  e.output_addr = in.u64() & mask;
  e.ipa = e.stage == StageKind::kStage2 ? e.input_addr : (in.u64() & mask);
  e.perms = {true, in.bit(), false, false, in.bit()};
  return e;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const uint8_t mode = in.u8();
  const unsigned profile = (mode & 1) ? ((mode & 8) ? 2 : 1) : 0;
  World& w = world(profile);
  w.translator->reset();
  StatsRegistry atc_stats;
  AtcConfig atc_cfg;
  atc_cfg.entries = 16;
  DeviceAtc atc(atc_cfg, atc_stats, "atc");
  DecodeOptions opt;
  opt.reject_nonzero_res0 = !(mode & 2);
  const bool e2h = mode & 4;
  w.executor->set_e2h_source([e2h] { return e2h; });
  const std::vector<Opcode>& ops = all_opcodes();

  while (!in.empty()) {
    const uint8_t ctl = in.u8();
    switch ((ctl >> 2) & 3) {  // plant an entry first
      case 1: {
        const TlbEntry e = tlb_entry(in);
        if (ctl & 0x10)
          w.translator->micro_tlb(ctl >> 7)->insert(e);
        else
          w.translator->tlb().insert(e);
        break;
      }
      case 2: {
        WalkCache::Tag t;
        t.stage = static_cast<uint8_t>(1 + in.bit());
        t.vmid = in.u8() & 3;
        t.asid = t.stage == 1 ? in.u8() & 3 : 0;
        t.granule = Granule::k4K;
        const unsigned level = 1 + in.pick(3);
        w.translator->walk_cache().insert(t, level, in.u64() & ((1ull << 40) - 1), in.u64() & ~0xfffull & ((1ull << 48) - 1), in.u8() & 0x1f);
        break;
      }
      case 3: {
        CachedDescriptor d{};
        d[0] = in.u64();
        const uint32_t sid = in.u8() & 0x3f;
        if (ctl & 0x10)
          w.translator->config_cache().insert_cd(sid, in.u8() & 7, d);
        else
          w.translator->config_cache().insert_ste(sid, d);
        break;
      }
      default:
        if (profile == 2) atc.fill(completion(in));
        break;
    }
    CommandWords words{in.u64(), in.u64()};
    if (ctl & 1) words[0] = (words[0] & ~0xffull) | static_cast<uint8_t>(ops[words[0] % ops.size()]);
    if (ctl & 2) words[0] &= ~(1ull << 10);  // SSec = 0: the Non-secure queue
    const CommandDecode d = decode_command(words, w.features, opt);
    if (d.command.raw != words) std::abort();
    if (!d.ok()) {
      if (d.reason.empty()) std::abort();  // CERROR_ILL always says why
      continue;
    }
    if (static_cast<uint8_t>(d.command.opcode) != (words[0] & 0xff)) std::abort();
    const ExecResult r = w.executor->execute(d.command);
    if (r.micro_tlb_entries > r.tlb_entries) std::abort();
    if (r.cls != command_class(d.command)) std::abort();
    if (d.command.opcode == Opcode::kTlbiNsnhAll) {
      bool left = false;
      w.translator->for_each_tlb([&](Tlb& t) {
        t.for_each([&](const TlbEntry& e) { left |= e.regime == TlbRegime::kEl1; });
      });
      if (left || w.translator->walk_cache().valid_entries() != 0) std::abort();
    }
    if (d.command.opcode == Opcode::kAtcInv) {
      const AtsDevice::Invalidation inv = atc_invalidation(d.command, w.features);
      if (!inv.all() && (inv.addr & (inv.bytes() - 1)) != 0) std::abort();  // the span is aligned
      atc.atc_invalidate(inv, 0);
      const uint64_t last = inv.all() ? ~uint64_t{0} : inv.addr + inv.bytes() - 1;
      if (atc.peek(inv.addr, false) || atc.peek(last, false)) std::abort();
      if (inv.all() && atc.size() != 0) std::abort();
    }
    if (d.command.is_cfgi_all() &&
        (w.translator->config_cache().ste_size() || w.translator->config_cache().cd_size()))
      std::abort();
  }
  return 0;
}

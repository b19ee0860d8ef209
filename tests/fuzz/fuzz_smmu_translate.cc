// fuzz_smmu_translate: STE and CD decoding, the page-table walker and the
// translator (models/smmu/translator.h) over a memory image the harness
// builds from the input so that most inputs get deep: a linear stream table
// whose STE (stage 1) points to a CD, whose TTB0 points to VMSAv8-64 stage-1
// tables (granule, T0SZ and hence start level from the input) holding a few
// mappings (mostly level-3 pages, some blocks) with valid descriptors; then
// fuzzer-chosen bits of the STE, the CD, and table and leaf descriptors are
// flipped, and a run of translations (mostly to mapped addresses, any access
// type, TLB hits and misses) goes through the Translator.
// The share of inputs that make a level-3 descriptor read is printed now and
// then and at exit ("level 3 reached"); it is the measure of how deep the
// harness gets. The Translators (one per feature profile) are built once per
// process and reset per input.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "common/stats.h"
#include "fuzz_input.h"
#include "fuzz_profiles.h"
#include "smmu/ats_completion.h"
#include "smmu/descriptors.h"
#include "smmu/translator.h"

using namespace smmu_vp;
using namespace smmu_vp::smmu;

namespace {

constexpr uint64_t kBase = 0x8000'0000;
constexpr uint64_t kBytes = 512 << 10;
constexpr uint64_t kStrtab = kBase;           // 16 STEs
constexpr uint64_t kCd = kBase + 0x1000;
constexpr uint64_t kPool = kBase + 0x10000;   // translation tables (64K-aligned)
constexpr unsigned kSids = 16;

// A byte array with every access in range answered after 10 ns.
class Memory : public MemoryPort {
 public:
  Memory() : bytes_(kBytes) {}
  bool read(uint64_t pa, void* data, unsigned len, Ps at, Ps* done) override {
    *done = at + 10'000;
    if (!in_range(pa, len)) {
      std::memset(data, 0, len);
      return false;
    }
    std::memcpy(data, &bytes_[pa - kBase], len);
    return true;
  }
  bool write(uint64_t pa, const void* data, unsigned len, Ps at, Ps* done) override {
    *done = at + 10'000;
    if (!in_range(pa, len)) return false;
    std::memcpy(&bytes_[pa - kBase], data, len);
    return true;
  }
  void put64(uint64_t pa, uint64_t v) { std::memcpy(&bytes_[pa - kBase], &v, 8); }
  uint64_t get64(uint64_t pa) const {
    uint64_t v;
    std::memcpy(&v, &bytes_[pa - kBase], 8);
    return v;
  }
  void put(uint64_t pa, const void* d, size_t n) { std::memcpy(&bytes_[pa - kBase], d, n); }
  void clear(uint64_t upto) { std::memset(bytes_.data(), 0, upto - kBase); }

 private:
  static bool in_range(uint64_t pa, uint64_t len) { return pa >= kBase && len <= kBytes && pa - kBase <= kBytes - len; }
  std::vector<uint8_t> bytes_;
};

struct World {
  explicit World(const SmmuFeatures& f) {
    TranslatorConfig cfg;
    cfg.tlb.entries = 64;
    cfg.walk_cache.entries = 16;
    translator = std::make_unique<Translator>(mem, f, cfg, stats, "smmu");
    l3_reads = &stats.counter("smmu.ptw.reads.s1.l3");
  }
  Memory mem;
  StatsRegistry stats;
  std::unique_ptr<Translator> translator;
  Counter* l3_reads;
  uint64_t dirty = kPool;  // memory below this was written by the last input
};

// Stage-1 tables for one granule and input size, allocated from the pool.
class Tables {
 public:
  Tables(Memory& mem, unsigned gshift, unsigned ias) : mem_(mem), g_(gshift), ias_(ias) {
    start_ = 3;
    while (start_ > 0 && ias_ > lowest_bit(start_) + (g_ - 3)) --start_;
    root_ = alloc();
  }
  unsigned start() const { return start_; }
  uint64_t root() const { return root_; }
  uint64_t top() const { return next_; }
  unsigned lowest_bit(unsigned level) const { return g_ + (3 - level) * (g_ - 3); }

  // Descriptor slot of `va` at `level`, creating tables on the way; 0 when a
  // leaf is in the way or the pool is full.
  uint64_t slot(uint64_t va, unsigned level) {
    uint64_t table = root_;
    for (unsigned l = start_; l < level; ++l) {
      const uint64_t s = table + 8 * index(l, va);
      uint64_t d = mem_.get64(s);
      if ((d & 3) != 3) {
        if (d != 0) return 0;
        const uint64_t t = alloc();
        if (!t) return 0;
        mem_.put64(s, t | 3);
        d = t | 3;
      }
      table = d & ((1ull << 48) - 1) & ~((1ull << g_) - 1);
      // An earlier mapping may have flipped a bit of this table descriptor.
      if (table < kPool || table >= next_) return 0;
    }
    return table + 8 * index(level, va);
  }

 private:
  uint64_t index(unsigned level, uint64_t va) const {
    const unsigned width = level == start_ ? ias_ - lowest_bit(level) : g_ - 3;
    return (va >> lowest_bit(level)) & ((1ull << width) - 1);
  }
  uint64_t alloc() {
    const uint64_t a = next_;
    if (a + (1ull << g_) > kBase + kBytes) return 0;
    next_ += 1ull << g_;
    return a;
  }
  Memory& mem_;
  unsigned g_, ias_, start_;
  uint64_t root_ = 0, next_ = kPool;
};

struct Share {
  uint64_t inputs = 0, level3 = 0;
  void print() const {
    if (inputs)
      std::fprintf(stderr, "fuzz_smmu_translate: level 3 reached by %llu of %llu inputs (%.1f%%)\n",
                   static_cast<unsigned long long>(level3), static_cast<unsigned long long>(inputs),
                   100.0 * static_cast<double>(level3) / static_cast<double>(inputs));
  }
};
Share share;

// Flips the bit `b % 512` of a 64-byte descriptor.
void flip(std::array<uint64_t, 8>& w, unsigned b) { w[(b / 64) % 8] ^= 1ull << (b % 64); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World v30(SmmuFeatures::v3_0_profile());
  static World v33(SmmuFeatures::v3_3_profile());
  static World ats(fuzz::with_ats_pri_stall());  // Translation Requests, translated transactions, CD.S
  static bool registered = (std::atexit([] { share.print(); }), true);
  (void)registered;
  fuzz::Input in(data, size);
  const uint8_t mode = in.u8();
  const bool with_ats = (mode & 0x41) == 0x41;
  World& w = with_ats ? ats : mode & 1 ? v33 : v30;
  w.translator->reset();

  // Granule (mostly 4K) and T0SZ: the input size and so the start level.
  static const unsigned kG[4] = {12, 12, 14, 16};
  const unsigned g = kG[(mode >> 1) & 3];
  const unsigned t0sz = 16 + in.pick(g == 16 ? 24 : 25);
  const unsigned ias = 64 - t0sz;
  Tables tables(w.mem, g, ias);
  w.mem.clear(w.dirty);  // what the last input wrote: STE/CD area and its tables
  const Granule granule = g == 12 ? Granule::k4K : g == 14 ? Granule::k16K : Granule::k64K;

  // Mappings, mostly pages at level 3.
  struct Map {
    uint64_t va, pa, size;
  };
  std::vector<Map> maps;
  bool mutated = false;
  const unsigned nmaps = 1 + in.pick(6);
  for (unsigned i = 0; i < nmaps; ++i) {
    const uint8_t how = in.u8();
    unsigned level = 3;
    if ((how & 7) == 7) level = g == 12 ? 1 + in.pick(2) : 2;  // a block (1 GiB/2 MiB, 32 MiB, 512 MiB)
    if (level < tables.start()) level = 3;
    const uint64_t bs = 1ull << tables.lowest_bit(level);
    const uint64_t va = (in.u64() & ((1ull << ias) - 1)) & ~(bs - 1);
    const uint64_t pa = (in.u64() & ((1ull << 40) - 1)) & ~(bs - 1);
    const uint64_t s = tables.slot(va, level);
    if (!s || w.mem.get64(s) != 0) continue;
    uint64_t d = pa | (level == 3 ? 3 : 1) | (1ull << 10) /*AF*/ | (3ull << 8) /*SH*/ | (1ull << 6) /*AP[1]*/;
    if (how & 0x08) d |= 1ull << 7;   // read-only
    if (how & 0x10) d |= 1ull << 11;  // nG
    if (how & 0x20) d |= 1ull << 54;  // UXN
    // Fuzzer-chosen bits of the leaf and of one table descriptor above it.
    if (how & 0x40) {
      d ^= 1ull << in.pick(64);
      mutated = true;
    }
    w.mem.put64(s, d);
    if (how & 0x80 && level > tables.start()) {
      const uint64_t up = tables.slot(va, level - 1 - in.pick(level - tables.start()));
      if (up) w.mem.put64(up, w.mem.get64(up) ^ (1ull << in.pick(64)));
      mutated = true;
    }
    maps.push_back({va, pa, bs});
  }

  // STE (stage 1) and CD, then a few bits flipped in them.
  DecodedSte ste;
  ste.config = ste::kS1Trans;
  ste.s1_context_ptr = kCd;
  if (with_ats) ste.eats = mode & 0x80 ? ste::kEatsFull : ste::kEatsOff;
  DecodedCd cd;
  cd.stall = with_ats && (mode & 0x20);
  cd.t0sz = t0sz;
  cd.granule = granule;
  cd.ips_bits = 48;
  cd.asid = in.u8() & 3;
  cd.ttb0 = tables.root();
  SteWords sw = encode_ste(ste);
  CdWords cw = encode_cd(cd);
  const unsigned flips = in.u8();
  mutated |= (flips & 15) != 0;
  for (unsigned i = 0; i < (flips & 3); ++i) flip(sw, in.u16());
  for (unsigned i = 0; i < ((flips >> 2) & 3); ++i) flip(cw, in.u16());
  const uint32_t sid = in.u8() % kSids;
  w.mem.put(kStrtab + sid * 64ull, sw.data(), sizeof sw);
  w.mem.put(kCd, cw.data(), sizeof cw);
  w.dirty = tables.top();
  const StreamTableConfig st{kStrtab, false, 0, 4};

  const uint64_t l3_before = w.l3_reads->value();
  Ps now = 0;
  while (!in.empty()) {
    const uint8_t how = in.u8();
    TranslationRequest r;
    r.sid = how & 0x80 ? in.u8() % 20 : sid;  // sometimes past the table
    r.port = 0;
    r.access.write = how & 1;
    r.access.instruction = how & 2;
    r.access.privileged = how & 4;
    if (!maps.empty() && (how & 0x18) != 0x18) {
      const Map& m = maps[in.u8() % maps.size()];
      r.addr = m.va + (in.u64() % m.size);
    } else {
      r.addr = in.u64() & ((1ull << (ias + 1)) - 1);  // sometimes above the input range
    }
    r.at = now;
    if (with_ats && (how & 0x60) == 0x20) {
      // A Translation Request, answered as 3.9.1.2 says.
      const TranslationResult res = w.translator->translate_ats(st, r);
      if (res.done < r.at) std::abort();
      AtsExtension e;
      const bool record = ats_completion(r, res, 12, 48, &e);
      if (record && res.event.id != EventId::kBadAtsTreq) std::abort();  // only F_BAD_ATS_TREQ is recorded
      if (e.status == AtsExtension::Status::kSuccess) {
        if (e.size_log2 < 12 || e.size_log2 > 48) std::abort();
        const uint64_t mask = (uint64_t{1} << e.size_log2) - 1;
        if ((e.translated_addr & mask) || (e.untranslated_addr & mask)) std::abort();  // aligned to its size
        if (e.size_log2 < 48 && (r.addr & ~mask) != e.untranslated_addr) std::abort();
      }
      now = res.done;
      continue;
    }
    if (with_ats && (how & 0x60) == 0x40) {
      // A translated transaction with CR0.ATSCHK = 1: passes only with EATS.
      const TranslationResult res = w.translator->check_translated(st, r);
      if (res.done < r.at) std::abort();
      if (res.ok() && (res.pa != r.addr || (!mutated && !(mode & 0x80)))) std::abort();
      now = res.done;
      continue;
    }
    const TranslationResult res = w.translator->translate(st, r);
    if (res.done < r.at) std::abort();
    if (res.stall && !with_ats) std::abort();  // only an SMMU with the stall model stalls
    if (res.kind == TranslationResult::Kind::kTranslated) {
      // Without mutated bits, a translation of a mapped address gives the PA we mapped it to.
      if (!mutated && r.sid == sid)
        for (const Map& m : maps)
          if (r.addr - m.va < m.size && res.pa != m.pa + (r.addr - m.va)) std::abort();
      if (res.span == 0) std::abort();
    }
    now = res.done;
    if ((how & 0x60) == 0x60) w.translator->retire(now);
  }
  ++share.inputs;
  if (w.l3_reads->value() != l3_before) ++share.level3;
  if ((share.inputs & (share.inputs - 1)) == 0 && share.inputs >= (1u << 16)) share.print();
  return 0;
}

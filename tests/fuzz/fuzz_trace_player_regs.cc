// fuzz_trace_player_regs: the trace player's register file and access
// scheduler (models/trace_player/trace_player_core.h) with a fuzzer-made
// image (its accesses: slot, offset, size, time) and a fuzzer-controlled
// DRAM behind the backdoor (LOAD copies the image there; the slot table the
// scheduler reads lives there too). Driven as the SystemC module drives it:
// register reads and writes of any size, START, next() at advancing times,
// complete() of issued accesses in any order, DRAM bytes changed between
// steps (the app updating slots). The device's own bus accesses belong to
// the SystemC module. Checks: ACCESSES_DONE never exceeds the access count
// and never goes back; DONE only when every access completed.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "fuzz_device.h"
#include "trace_player/trace_player_core.h"

using namespace smmu_vp;

namespace {
constexpr uint64_t kDramBase = 0x8000'0000;
constexpr size_t kDramBytes = 16 << 10;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::vector<uint8_t> dram(kDramBytes);
  std::memset(dram.data(), 0, dram.size());
  fuzz::Input in(data, size);

  auto image = std::make_shared<TraceImage>();
  const unsigned n = in.pick(16);
  image->slots = in.pick(8);
  image->bytes.resize(8 * (1 + in.pick(64)));
  for (unsigned i = 0; i < n; ++i) {
    PlayerAccess a;
    a.time_ns = i * 100ull + in.u8();
    a.sid = in.u8() & 3;
    a.slot = in.bit() ? TP_NO_SLOT : in.u8() % (image->slots + 1);  // sometimes one past the table
    a.offset = in.u16();
    a.size = in.u16();
    a.write = in.bit();
    image->accesses.push_back(a);
  }
  image->records = n;
  const TracePlayerCore::Backdoor backdoor = [](uint64_t pa, uint64_t len) -> uint8_t* {
    if (pa < kDramBase || len > kDramBytes || pa - kDramBase > kDramBytes - len) return nullptr;
    return dram.data() + (pa - kDramBase);
  };
  TracePlayerCore c(image, backdoor);

  Ps now = 0;
  uint64_t done_before = 0;
  std::vector<uint32_t> issued;
  while (!in.empty()) {
    const uint8_t op = in.u8();
    switch (op & 7) {
      case 0: {
        const fuzz::RegAccess a = fuzz::reg_access(in, TP_REG_SIZE);
        uint64_t v = 0;
        if (c.read(a.offset, a.len, &v) != TracePlayerCore::Access::kOk && v != 0) std::abort();
        break;
      }
      case 1:
      case 2: {
        fuzz::RegAccess a = fuzz::reg_access(in, TP_REG_SIZE);
        uint64_t v = in.u64();
        // Base registers: mostly inside DRAM, so that LOAD and the slot table work.
        if ((a.offset & ~7ull) == TP_REG_IMAGE_BASE || (a.offset & ~7ull) == TP_REG_REMAP_BASE)
          if (op & 0x80) v = kDramBase + (v % kDramBytes & ~7ull);
        TracePlayerCore::Effects fx;
        c.write(a.offset, a.len, v, &fx);
        if (fx.started) c.start(now);
        break;
      }
      case 3: {  // the app writes DRAM (e.g. a slot's state and address)
        const size_t at = in.u16() % (kDramBytes - 8);
        const uint64_t v = in.u64();
        std::memcpy(dram.data() + at, &v, 8);
        break;
      }
      case 4:
      case 5: {
        now += in.u16() * 1000ull;
        const TracePlayerCore::Decision d = c.next(now);
        if (d.kind == TracePlayerCore::Decision::kIssue) {
          if (d.index >= c.access_count()) std::abort();
          issued.push_back(d.index);
        }
        break;
      }
      default:
        if (!issued.empty()) {
          const size_t i = in.u8() % issued.size();
          c.complete(issued[i], in.bit());
          issued.erase(issued.begin() + static_cast<long>(i));
        }
        break;
    }
    if (c.accesses_done() > c.access_count() || c.accesses_done() < done_before) std::abort();
    done_before = c.accesses_done();
    if (c.done() && (c.accesses_done() != c.access_count() || !issued.empty())) std::abort();
  }
  return 0;
}

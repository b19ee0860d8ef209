// fuzz_nic_regs: the NIC's register file and queue state (models/nic/
// nic_core.h), driven as the SystemC module drives it: register reads and
// writes of any size (ring setup, doorbells, interrupt moderation, W1C error
// registers, statistics), interleaved with the module's calls (completions,
// interrupt due/raised, queue errors, RSS lookups). The DMA itself lives in
// the SystemC module and is not reachable here. Checks: a refused access
// changes no register; ring pointers stay inside their ring.
#include <cstdint>
#include <cstdlib>

#include "fuzz_device.h"
#include "nic/nic_core.h"

using namespace smmu_vp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const unsigned queues = 1 + in.pick(4);
  NicCore c(queues, 100000, 1514, 1 + in.pick(16));  // cheap to build: one per input
  const uint64_t block = NicCore::register_block_size(queues);
  Ps now = 0;
  while (!in.empty()) {
    const uint8_t op = in.u8();
    const unsigned q = (op >> 4) % queues;
    switch (op & 7) {
      case 0:
      case 1: {
        const fuzz::RegAccess a = fuzz::reg_access(in, block);
        uint64_t v = 0;
        if (c.read(a.offset, a.len, &v) != NicCore::Access::kOk && v != 0) std::abort();
        break;
      }
      case 2:
      case 3:
      case 4: {
        const fuzz::RegAccess a = fuzz::reg_access(in, block);
        NicCore::Effects fx;
        c.write(a.offset, a.len, in.u64(), &fx);
        break;
      }
      case 5:
        now += in.u16() * 1000ull;
        c.complete(q, now);
        if (c.irq_due(q) != NicCore::kNever && c.irq_due(q) <= now + 1'000'000'000ull) c.irq_raised(q);
        break;
      case 6:
        c.queue_error(q, in.u32(), in.bit(), in.bit());
        break;
      default: {
        const int rq = c.rss_queue(in.u32());
        if (rq >= static_cast<int>(queues)) std::abort();
        break;
      }
    }
    for (unsigned i = 0; i < queues; ++i) {
      const NicQueue& nq = c.queue(i);
      for (const NicRing* r : {&nq.rx, &nq.tx})
        if (r->enabled && (r->size == 0 || r->head >= r->size || r->tail >= r->size)) std::abort();
    }
  }
  return 0;
}

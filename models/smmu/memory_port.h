// Timed memory access for the SMMU's model cores: table walks, STE/CD fetches,
// queue reads and event writes. The SystemC module implements it with
// b_transport on its downstream socket (so every descriptor read pays DRAM
// latency and contention); unit tests implement it over a byte array.
#pragma once

#include <cstdint>

#include "common/sim_time.h"

namespace smmu_vp::smmu {

class MemoryPort {
 public:
  virtual ~MemoryPort() = default;
  // Access `len` bytes at physical address `pa`, issued at simulated time
  // `at`. Returns false on an external abort (no memory there, or an error
  // response); *done receives the completion time either way.
  virtual bool read(uint64_t pa, void* data, unsigned len, Ps at, Ps* done) = 0;
  virtual bool write(uint64_t pa, const void* data, unsigned len, Ps at, Ps* done) = 0;
};

}  // namespace smmu_vp::smmu

// A little-endian reader over a fuzz input: takes bytes from the front and
// gives zeros once the input runs out, so a harness never reads past it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace smmu_vp::fuzz {

class Input {
 public:
  Input(const uint8_t* data, size_t size) : p_(data), n_(size) {}
  size_t left() const { return n_; }
  bool empty() const { return n_ == 0; }
  uint8_t u8() {
    if (!n_) return 0;
    --n_;
    return *p_++;
  }
  uint16_t u16() { return static_cast<uint16_t>(u8() | u8() << 8); }
  uint32_t u32() { return u16() | static_cast<uint32_t>(u16()) << 16; }
  uint64_t u64() { return u32() | static_cast<uint64_t>(u32()) << 32; }
  bool bit() { return u8() & 1; }
  // One of n choices (n > 0).
  unsigned pick(unsigned n) { return u8() % n; }

 private:
  const uint8_t* p_;
  size_t n_;
};

}  // namespace smmu_vp::fuzz

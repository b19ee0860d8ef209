// Whole-file inputs for the harnesses that test a file-reading loop: the
// input as a file (a memfd, so nothing is created per input), plain or as a
// gzip stream made from it, whole or cut short.
#pragma once

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace smmu_vp::fuzz {

// `bytes` gzip-compressed (zlib's gzip wrapper, as gzip(1) writes it).
inline std::string gzip(const uint8_t* data, size_t size) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::string out(deflateBound(&z, size) + 32, '\0');
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A file holding `bytes`, as a path the readers open; one per harness
// process (`name`), overwritten by each call.
inline std::string memfd_file(const char* name, const void* bytes, size_t size) {
  static const int fd = memfd_create(name, 0);
  if (fd < 0) std::abort();
  if (ftruncate(fd, 0) != 0) std::abort();
  if (size && pwrite(fd, bytes, size, 0) != static_cast<ssize_t>(size)) std::abort();
  return "/proc/self/fd/" + std::to_string(fd);
}

// The file a reader sees for `data`, chosen by `mode`: bit 0 gzip; bit 1
// (with gzip) the stream cut short, to 0/8 .. 7/8 of its length by bits 2-4.
inline std::string input_file(const char* name, const uint8_t* data, size_t size, uint8_t mode) {
  if (!(mode & 1)) return memfd_file(name, data, size);
  std::string z = gzip(data, size);
  if (mode & 2) z.resize(z.size() * ((mode >> 2) & 7) / 8);  // cut short: 0/8 .. 7/8 of the stream
  return memfd_file(name, z.data(), z.size());
}

}  // namespace smmu_vp::fuzz

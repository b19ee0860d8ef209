// TraceWriter: writes an "smmu-vp-trace" version 1 file, times in ns. Lines
// are formatted into one large buffer that goes to the file a block at a time,
// through zlib (gzip, level 6) when the name ends in ".gz" and stdio otherwise.
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "dmatrace/dma_trace.h"

namespace smmu_vp::dmatrace {
namespace {

constexpr size_t kFlushAt = 1u << 20;  // buffered bytes before a write
constexpr unsigned kZlibBuffer = 1u << 18;

bool ends_with_gz(const std::string& path) {
  return path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

}  // namespace

struct TraceWriter::Impl {
  std::string path;
  gzFile gz = nullptr;
  std::FILE* file = nullptr;
  std::string buf;
  uint64_t records = 0;

  [[noreturn]] void error(const std::string& what) const { throw TraceError(path, 0, what); }

  bool open() const { return gz || file; }

  // Writes the buffer; returns what went wrong, or "".
  std::string write_buffer() {
    std::string failure;
    if (gz) {
      // gzwrite takes an unsigned length: a large buffer goes in pieces.
      size_t done = 0;
      while (done < buf.size() && failure.empty()) {
        const unsigned n = static_cast<unsigned>(std::min<size_t>(buf.size() - done, 1u << 30));
        if (gzwrite(gz, buf.data() + done, n) != static_cast<int>(n)) {
          int errnum = Z_OK;
          const char* msg = gzerror(gz, &errnum);
          failure = std::string("write failed: ") + (errnum == Z_ERRNO ? std::strerror(errno) : msg);
        }
        done += n;
      }
    } else if (!buf.empty() && std::fwrite(buf.data(), 1, buf.size(), file) != buf.size()) {
      failure = std::string("write failed: ") + std::strerror(errno);
    }
    buf.clear();
    return failure;
  }

  void flush() {
    const std::string failure = write_buffer();
    if (!failure.empty()) error(failure);
  }

  // Flushes and closes; the handle is released even when that fails, so a
  // second close() (or the destructor) does nothing.
  void close() {
    if (!open()) return;
    std::string failure = write_buffer();
    if (gz) {
      const int rc = gzclose(gz);
      gz = nullptr;
      if (rc != Z_OK && failure.empty()) failure = "closing failed (zlib error " + std::to_string(rc) + ")";
    } else {
      const bool bad = std::ferror(file) != 0;
      const int rc = std::fclose(file);
      file = nullptr;
      if ((rc != 0 || bad) && failure.empty()) failure = std::string("closing failed: ") + std::strerror(errno);
    }
    if (!failure.empty()) error(failure);
  }
};

TraceWriter::TraceWriter(const std::string& path) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.path = path;
  errno = 0;
  if (ends_with_gz(path)) {
    // Level 1: a fast writer keeps import and recording near their plain-file
    // speed; traces still shrink about 10x (level 6 gains only 20 % more).
    m.gz = gzopen(path.c_str(), "wb1");
    if (m.gz) gzbuffer(m.gz, kZlibBuffer);
  } else {
    m.file = std::fopen(path.c_str(), "wb");
  }
  if (!m.open()) m.error(std::string("cannot open for writing: ") + (errno ? std::strerror(errno) : "out of memory"));
  m.buf.reserve(kFlushAt + 4096);
  m.buf += "smmu-vp-trace ";
  m.buf += std::to_string(kFormatVersion);
  m.buf += " ns\n";
}

TraceWriter::~TraceWriter() {
  try {
    impl_->close();
  } catch (const TraceError& e) {
    // Not thrown from a destructor; a trace that is cut short must not go unnoticed.
    std::fprintf(stderr, "smmu-vp: %s\n", e.what());
  }
}

void TraceWriter::write(const Record& r) {
  Impl& m = *impl_;
  if (!m.open()) m.error("write after close");
  format_record(r, m.buf);
  m.buf += '\n';
  ++m.records;
  if (m.buf.size() >= kFlushAt) m.flush();
}

void TraceWriter::comment(const std::string& text) {
  Impl& m = *impl_;
  if (!m.open()) m.error("write after close");
  // One comment line per line of text: a newline must not start a record.
  size_t start = 0;
  while (true) {
    const size_t nl = text.find('\n', start);
    std::string_view part(text.data() + start, (nl == std::string::npos ? text.size() : nl) - start);
    if (!part.empty() && part.back() == '\r') part.remove_suffix(1);
    m.buf += part.empty() ? "#" : "# ";
    m.buf.append(part);
    m.buf += '\n';
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  if (m.buf.size() >= kFlushAt) m.flush();
}

void TraceWriter::close() { impl_->close(); }

uint64_t TraceWriter::records() const { return impl_->records; }

}  // namespace smmu_vp::dmatrace

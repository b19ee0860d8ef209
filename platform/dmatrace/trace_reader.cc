// TraceReader: streams the records of an "smmu-vp-trace" file. zlib's gzread
// reads gzip and plain files alike (it detects the gzip magic), in large
// blocks; the reader splits the lines itself and parses each in place.
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "dmatrace/dma_trace.h"

namespace smmu_vp::dmatrace {
namespace {

constexpr size_t kMinBlock = 4096;            // ReaderOptions::block_bytes floor
constexpr size_t kMaxLine = 64u << 20;        // longer: not a trace (or a broken one)
constexpr size_t kMaxHeaderLine = 4096;       // a header is ~20 bytes; binary files stop here
constexpr const char kMagic[] = "smmu-vp-trace";

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
  size_t b = 0;
  while (b < s.size() && is_blank(s[b])) ++b;
  size_t e = s.size();
  while (e > b && is_blank(s[e - 1])) --e;
  return s.substr(b, e - b);
}

}  // namespace

struct TraceReader::Impl {
  std::string path;
  ReaderOptions opt;
  gzFile gz = nullptr;
  std::vector<char> buf;
  size_t pos = 0;   // next unread byte in buf
  size_t end = 0;   // bytes of buf filled
  bool eof = false;
  uint64_t line = 0;
  uint64_t skipped = 0;
  double ns_per_unit = 1.0;
  bool header_read = false;
  size_t block = 0;  // bytes per read (ReaderOptions::block_bytes, clamped)
  std::string pending_error;  // a read failure to report once the data before it is used

  ~Impl() {
    if (gz) gzclose(gz);
  }

  [[noreturn]] void error(uint64_t at, const std::string& what) const { throw TraceError(path, at, what); }

  // Reads the next block after keeping the unread tail [pos, end).
  void refill() {
    if (!pending_error.empty()) error(line + 1, pending_error);
    const size_t tail = end - pos;
    if (pos) std::memmove(buf.data(), buf.data() + pos, tail);
    pos = 0;
    end = tail;
    if (buf.size() < tail + block) buf.resize(tail + block);
    const int n = gzread(gz, buf.data() + end, static_cast<unsigned>(block));
    int errnum = Z_OK;
    const char* msg = gzerror(gz, &errnum);
    if (n < 0 || errnum != Z_OK) {
      // A gzip stream cut short shows only here: gzread returns what it could
      // decode, and gzerror says Z_BUF_ERROR.
      std::string why = errnum == Z_ERRNO ? std::strerror(errno) : (msg && *msg ? msg : "read error");
      if (errnum == Z_BUF_ERROR) why = "truncated gzip stream (" + why + ")";
      why = "read failed: " + why;
      // The lines decoded before the failure are still delivered; the error
      // comes where the data ends (the line that was cut).
      if (n <= 0) error(line + 1, why);
      pending_error = why;
    }
    if (n == 0) eof = true;
    end += static_cast<size_t>(n);
  }

  // The next line without its '\n', or false at the end of the file.
  bool next_line(std::string_view& out, size_t max_len) {
    while (true) {
      const char* b = buf.data() + pos;
      const void* nl = std::memchr(b, '\n', end - pos);
      if (nl) {
        const size_t len = static_cast<size_t>(static_cast<const char*>(nl) - b);
        out = std::string_view(b, len);
        pos += len + 1;
        ++line;
        return true;
      }
      if (end - pos > max_len) {
        if (!header_read) error(line + 1, "not an smmu-vp-trace file: no header line at its start");
        error(line + 1, "line longer than " + std::to_string(max_len) + " bytes");
      }
      if (eof) {
        if (pos == end) return false;
        out = std::string_view(b, end - pos);  // the last line has no '\n'
        pos = end;
        ++line;
        return true;
      }
      refill();
    }
  }

  void read_header() {
    std::string_view l;
    while (true) {
      if (!next_line(l, kMaxHeaderLine)) error(line ? line : 1, "empty file: no \"smmu-vp-trace <version> <unit>\" header");
      l = trim(l);
      if (!l.empty()) break;
    }
    // Three space-separated words; anything else is not our format.
    std::string_view words[4];
    size_t nwords = 0;
    size_t i = 0;
    while (i < l.size() && nwords < 4) {
      while (i < l.size() && is_blank(l[i])) ++i;
      const size_t b = i;
      while (i < l.size() && !is_blank(l[i])) ++i;
      if (i > b) words[nwords++] = l.substr(b, i - b);
    }
    if (nwords != 3 || words[0] != kMagic)
      error(line, "not an smmu-vp-trace file: the first line must be \"smmu-vp-trace <version> <unit>\"");
    unsigned version = 0;
    for (char c : words[1]) {
      if (c < '0' || c > '9' || version > 100000)
        error(line, "not an smmu-vp-trace file: bad version '" + std::string(words[1].substr(0, 32)) + "'");
      version = version * 10 + static_cast<unsigned>(c - '0');
    }
    if (version != kFormatVersion)
      error(line, "smmu-vp-trace version " + std::string(words[1]) + " is not supported: this build reads version " +
                      std::to_string(kFormatVersion));
    if (words[2] == "ps") {
      ns_per_unit = 0.001;
    } else if (words[2] == "ns") {
      ns_per_unit = 1.0;
    } else if (words[2] == "us") {
      ns_per_unit = 1000.0;
    } else {
      error(line, "unknown time unit '" + std::string(words[2].substr(0, 32)) + "' (ps, ns or us)");
    }
    header_read = true;
  }
};

TraceReader::TraceReader(const std::string& path, ReaderOptions opt) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.path = path;
  m.opt = opt;
  errno = 0;
  m.gz = gzopen(path.c_str(), "rb");
  if (!m.gz) throw TraceError(path, 0, std::string("cannot open: ") + (errno ? std::strerror(errno) : "out of memory"));
  m.block = std::clamp<size_t>(opt.block_bytes, kMinBlock, size_t{1} << 30);
  gzbuffer(m.gz, static_cast<unsigned>(m.block));
  m.buf.resize(2 * m.block);
  m.read_header();
}

TraceReader::~TraceReader() = default;

bool TraceReader::next(Record& out) {
  Impl& m = *impl_;
  std::string_view l;
  while (m.next_line(l, kMaxLine)) {
    // Only trailing blanks and a leading indent are trimmed; the parser skips
    // the spaces between fields itself.
    size_t b = 0;
    while (b < l.size() && is_blank(l[b])) ++b;
    if (b == l.size()) continue;
    if (l[b] == '#') {
      keep_note(l.substr(b));
      continue;
    }
    try {
      parse_record(l.substr(b), m.ns_per_unit, out);
      return true;
    } catch (const std::invalid_argument& e) {
      if (!m.opt.skip_malformed) throw TraceError(m.path, m.line, e.what());
      ++m.skipped;
    }
  }
  return false;
}

void TraceReader::keep_note(std::string_view comment) {
  std::vector<std::string>* notes = impl_->opt.notes;
  constexpr std::string_view kNote = "# smmu-vp ";
  if (!notes || notes->size() >= 64 || comment.substr(0, kNote.size()) != kNote) return;
  notes->emplace_back(trim(comment.substr(2, 1024)));
}

uint64_t TraceReader::line() const { return impl_->line; }

uint64_t TraceReader::malformed_skipped() const { return impl_->skipped; }

}  // namespace smmu_vp::dmatrace

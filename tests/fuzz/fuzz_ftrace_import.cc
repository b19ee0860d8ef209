// fuzz_ftrace_import: the Linux ftrace importer (platform/dmatrace/
// ftrace_import.h), FtraceImporter::parse_line on every line of the input,
// twice: with skip_malformed off (a malformed line of a known event throws
// TraceError, the next line goes on with the same importer, as a caller that
// reports and continues would) and on (nothing may throw). The first byte
// picks the import options (device numbering, a configured device, domain
// recovery). Every record the importer gives must format and parse back in
// our format.
// One input in 8 (the first byte's bits 5-7 all set; the second picks the
// options and the file's form) goes instead as a whole file through
// import_ftrace (plain or gzip, whole or cut short, with a 4 KiB read buffer
// so that long lines are reachable); it may only end in a TraceError, and a
// successful import must read back with TraceReader.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "dmatrace/dma_trace.h"
#include "dmatrace/ftrace_import.h"
#include "fuzz_file.h"

using namespace smmu_vp::dmatrace;

namespace {

void check_record(const Record& r) {
  std::string line;
  format_record(r, line);
  Record back;
  try {
    parse_record(std::string_view(line), 1.0, back);
  } catch (const std::invalid_argument&) {
    std::abort();  // the importer made a record our own format cannot hold
  }
  if (back != r) std::abort();
}

void run(const char* text, size_t size, uint8_t mode, bool skip_malformed) {
  ImportOptions opt;
  opt.skip_malformed = skip_malformed;
  opt.number_devices = mode & 1;
  opt.default_sid = (mode >> 1) & 7;
  if (mode & 0x10) opt.device_sids["0000:01:00.0"] = 2;
  opt.recover_domains = !(mode & 0x20);  // domain_recovery.h
  FtraceImporter imp(opt, "<fuzz>");
  Record rec;
  uint64_t line_no = 0;
  size_t pos = 0;
  while (pos < size) {
    const char* b = text + pos;
    const char* nl = static_cast<const char*>(std::memchr(b, '\n', size - pos));
    const size_t len = nl ? static_cast<size_t>(nl - b) : size - pos;
    pos += len + 1;
    ++line_no;
    try {
      if (imp.parse_line(b, len, line_no, rec)) check_record(rec);
    } catch (const TraceError&) {
      if (skip_malformed) std::abort();  // skip_malformed promises no throw
    }
  }
  const ImportStats& s = imp.stats();
  if (s.lines != line_no || s.records > s.lines) std::abort();
}

// Where the whole-file imports write: a directory of this process.
const std::string& out_dir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/fuzz_ftrace_import.XXXXXX";
    if (!mkdtemp(tmpl)) std::abort();
    return std::string(tmpl);
  }();
  return dir;
}

void import_whole(const uint8_t* data, size_t size, uint8_t mode) {
  ImportOptions opt;
  opt.number_devices = mode & 1;
  opt.skip_malformed = mode & 2;
  opt.read_buffer_bytes = 4096;
  const std::string in = smmu_vp::fuzz::input_file("fuzz_ftrace_import", data, size, static_cast<uint8_t>(mode >> 3));
  const std::string out = out_dir() + ((mode & 4) ? "/out.trace.gz" : "/out.trace");
  ImportStats st;
  try {
    st = import_ftrace(in, out, opt);
  } catch (const TraceError&) {
    if (access(out.c_str(), F_OK) == 0) std::abort();  // a failed import leaves no output
    return;
  }
  uint64_t n = 0;
  try {
    TraceReader r(out);
    Record rec;
    while (r.next(rec)) ++n;
  } catch (const TraceError&) {
    std::abort();  // what the importer wrote, the reader must read
  }
  if (n != st.records) std::abort();
  unlink(out.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if ((data[0] & 0xe0) == 0xe0) {
    if (size >= 2) import_whole(data + 2, size - 2, data[1]);
    return 0;
  }
  const char* text = reinterpret_cast<const char*>(data + 1);
  run(text, size - 1, data[0], false);
  run(text, size - 1, data[0], true);
  return 0;
}

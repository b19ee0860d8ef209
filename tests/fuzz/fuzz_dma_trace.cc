// fuzz_dma_trace: our trace format (platform/dmatrace/dma_trace.h).
//   Most inputs: parse_record on every line of the input (the reader's hot
//   path, no file), in the three time units; a record that parses must format
//   and parse back to itself (the writer/reader round trip).
//   Inputs whose first byte is a multiple of 8 (one in 8): the whole input
//   through TraceReader (header check, line splitting, CRLF, comments, gzip
//   detection, skip_malformed by bit 4) from a memfd, so no file is created
//   per input, as plain text or as a gzip stream, whole or cut short (bits
//   5-7), with 4 KiB blocks (ReaderOptions::block_bytes: a reader allocates
//   its blocks and zlib buffer on every open); the records read go through
//   the trace player's image builder as a replay loads them, with device
//   accesses synthesized (bit 3) or not; `mark` records (phase markers) give
//   the records and accesses their phases there.
// Allowed outcomes: std::invalid_argument from parse_record, TraceError from
// the reader, TraceImageError from the image builder. Anything else is a bug.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "devices/trace_player_image.h"
#include "dmatrace/dma_trace.h"
#include "fuzz_file.h"

using namespace smmu_vp::dmatrace;

namespace {

void read_whole(const uint8_t* data, size_t size, uint8_t mode) {
  ReaderOptions opt;
  opt.skip_malformed = mode & 16;
  opt.block_bytes = 4096;
  const std::string file = smmu_vp::fuzz::input_file("fuzz_dma_trace", data, size, static_cast<uint8_t>(mode >> 5));
  // Device accesses made up as for an imported trace (trace_player_synth.h)
  // by bit 3: off, or auto with a class for StreamID 1.
  smmu_vp::SynthConfig synth;
  synth.mode = (mode & 8) ? smmu_vp::SynthConfig::Mode::kAuto : smmu_vp::SynthConfig::Mode::kOff;
  synth.classes["1"] = smmu_vp::DeviceClass::kNvme;
  smmu_vp::TraceImageBuilder image(7, synth);
  try {
    TraceReader r(file, opt);
    Record rec;
    uint64_t n = 0;
    while (r.next(rec)) {
      ++n;
      image.add(rec);
    }
    if (r.line() < n) std::abort();  // a record per line at most
    const smmu_vp::TraceImage img = image.finish();
    if (img.bytes.size() != sizeof(tp_image_header) + img.records * sizeof(tp_record) + img.segments * sizeof(tp_segment))
      std::abort();
    // Accesses in time order, each of a slot that exists, and of a phase
    // that exists (phase markers), phases never going back.
    for (size_t i = 0; i < img.accesses.size(); ++i) {
      if (i && img.accesses[i].time_ns < img.accesses[i - 1].time_ns) std::abort();
      if (img.accesses[i].slot != TP_NO_SLOT && img.accesses[i].slot >= img.slots) std::abort();
      if (img.accesses[i].phase >= std::max<size_t>(img.phases.size(), 1)) std::abort();
      if (i && img.accesses[i].phase < img.accesses[i - 1].phase) std::abort();
    }
    if (img.phases.empty() != !(img.flags & TP_IMAGE_HAS_PHASES)) std::abort();
  } catch (const TraceError&) {
  } catch (const smmu_vp::TraceImageError&) {
  }
}

void round_trip(const Record& r) {
  std::string line;
  format_record(r, line);
  Record back;
  try {
    parse_record(std::string_view(line), 1.0, back);
  } catch (const std::invalid_argument& e) {
    // What the writer writes, the reader must read.
    std::abort();
  }
  // The time may have been rounded on the way in (ps/us units); the rest is exact.
  if (back != r) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 8 == 0) {
    read_whole(data + 1, size - 1, data[0]);
    return 0;
  }
  static const double kUnits[3] = {0.001, 1.0, 1000.0};
  const double unit = kUnits[data[0] % 3];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  Record rec;  // reused, as the reader does
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty() || line[0] == '#') continue;
    try {
      parse_record(line, unit, rec);
    } catch (const std::invalid_argument&) {
      continue;
    }
    round_trip(rec);
  }
  return 0;
}

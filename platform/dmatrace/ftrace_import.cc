// Linux ftrace text -> our trace records (ftrace_import.h). Hand-written
// scanning: one pass over each line, std::from_chars for the numbers, no
// allocation once the Record's strings and the scratch vectors have grown.
//
// The layouts read, per event (TP_printk of the kernel's headers):
//  include/trace/events/iommu.h
//   map                 "IOMMU: iova=0x%016llx - 0x%016llx paddr=0x%016llx size=%zu"
//                       older kernels: "IOMMU: iova=0x%016llx paddr=0x%016llx size=%zu";
//                       some vendor (Android) trees add "dev=%s " before iova
//   unmap               "IOMMU: iova=0x%016llx - 0x%016llx size=%zu unmapped_size=%zu"
//                       older kernels: without "- 0x%016llx"
//   io_page_fault       "IOMMU:%s %s iova=0x%016llx flags=0x%04x" (driver, device)
//   attach_device_to_domain, detach_device_from_domain   "IOMMU: device=%s"
//  include/trace/events/dma.h (Linux 6.12, where the dma: events appeared)
//   dma_map_page, dma_map_resource     "%s dir=%s dma_addr=%llx size=%zu phys_addr=%llx attrs=%s"
//   dma_unmap_page, dma_unmap_resource "%s dir=%s dma_addr=%llx size=%zu attrs=%s"
//   dma_alloc           "%s dir=%s dma_addr=%llx size=%zu virt_addr=%p flags=%s attrs=%s"
//   dma_free            "%s dir=%s dma_addr=%llx size=%zu virt_addr=%p attrs=%s"
//   dma_map_sg          "%s dir=%s dma_addrs=%s sizes=%s phys_addrs=%s attrs=%s"
//   dma_unmap_sg        "%s dir=%s phys_addrs=%s attrs=%s"
//   dma_sync_single_for_{cpu,device}   "%s dir=%s dma_addr=%llx size=%zu"
//   dma_sync_sg_for_{cpu,device}       "%s dir=%s dma_addrs=%s sizes=%s"
//  include/trace/events/dma.h (later kernels, up to the current master)
//   dma_map_phys, dma_unmap_phys       as dma_map_page, dma_unmap_page (which they replace)
//   dma_alloc_pages     as dma_alloc;  dma_free_pages as dma_free
//   dma_alloc_sgt       "%s dir=%s dma_addr=%llx size=%zu phys_addrs=%s flags=%s attrs=%s"
//   dma_free_sgt        "%s dir=%s dma_addr=%llx size=%zu phys_addrs=%s"
//   dma_map_sg          "%s dir=%s nents=%d/%d ents=%d/%d%s dma_addrs=%s sizes=%s phys_addrs=%s attrs=%s"
//                       (the %s after ents is " [TRUNCATED]" when a list passed 128 entries)
//  trace_marker (kernel/trace/trace.c, a program's write to the trace_marker file)
//   tracing_mark_write  "tracing_mark_write: <text>"; trace-cmd report: "print: tracing_mark_write: <text>"
// Arrays (__print_array) print as "{0x1000,0x2000}" (the kernel and
// libtraceevent alike); sizes are hex there. dma_map_sg_err and
// dma_alloc_sgt_err report failures (nothing mapped): counted as unknown events.
#include "dmatrace/ftrace_import.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>

namespace smmu_vp::dmatrace {

namespace {

enum class Kind : uint8_t {
  kIommuMap,
  kIommuUnmap,
  kIommuFault,
  kIommuDevice,
  kDmaMap,
  kDmaUnmap,
  kDmaMapSg,
  kDmaUnmapSg,
  kDmaAlloc,
  kDmaAllocSgt,
  kDmaFree,
  kDmaFreeSgt,
  kDmaSyncSingle,
  kDmaSyncSg,
  kMark,
};

// A malformed field of a known event: turned into a TraceError (or counted).
struct Bad {
  const char* field;
  std::string why;
};

constexpr bool is_space(char c) { return c == ' ' || c == '\t'; }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }

const char* skip_spaces(const char* p, const char* e) {
  while (p < e && is_space(*p)) ++p;
  return p;
}

std::string quoted(std::string_view v) {
  constexpr size_t kMax = 40;
  std::string s = "'";
  s.append(v.substr(0, kMax));
  if (v.size() > kMax) s += "...";
  return s + "'";
}

// "%llx" / "0x%016llx": hex, the 0x optional.
uint64_t parse_hex(std::string_view v, const char* field) {
  std::string_view d = v;
  if (d.size() > 2 && d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) d.remove_prefix(2);
  uint64_t x = 0;
  const auto [ptr, ec] = std::from_chars(d.data(), d.data() + d.size(), x, 16);
  if (d.empty() || ec == std::errc::invalid_argument || ptr != d.data() + d.size())
    throw Bad{field, "expected a hex number, got " + quoted(v)};
  if (ec == std::errc::result_out_of_range) throw Bad{field, "more than 64 bits: " + quoted(v)};
  return x;
}

// "%zu" / "%d".
uint64_t parse_dec(std::string_view v, const char* field) {
  uint64_t x = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x, 10);
  if (v.empty() || ec == std::errc::invalid_argument || ptr != v.data() + v.size())
    throw Bad{field, "expected a decimal number, got " + quoted(v)};
  if (ec == std::errc::result_out_of_range) throw Bad{field, "more than 64 bits: " + quoted(v)};
  return x;
}

// A decimal column our records hold in a narrower signed field (the CPU in
// an int32_t, the pid in an int64_t): larger values are refused, not wrapped.
uint64_t parse_dec_max(std::string_view v, const char* field, uint64_t max) {
  const uint64_t x = parse_dec(v, field);
  if (x > max) throw Bad{field, quoted(v) + " is larger than " + std::to_string(max)};
  return x;
}

// __print_array: "{0x1,0x2}" (a space after the comma accepted). Elements
// with 0x are hex, others decimal.
void parse_array(std::string_view v, const char* field, std::vector<uint64_t>& out) {
  out.clear();
  if (v.size() < 2 || v.front() != '{' || v.back() != '}')
    throw Bad{field, "expected a list like {0x1000,0x2000}, got " + quoted(v)};
  const char* p = v.data() + 1;
  const char* e = v.data() + v.size() - 1;
  p = skip_spaces(p, e);
  if (p == e) return;
  for (;;) {
    p = skip_spaces(p, e);
    const char* q = p;
    while (q < e && *q != ',' && !is_space(*q)) ++q;
    const std::string_view el(p, static_cast<size_t>(q - p));
    const bool hex = el.size() > 2 && el[0] == '0' && (el[1] == 'x' || el[1] == 'X');
    out.push_back(hex ? parse_hex(el, field) : parse_dec(el, field));
    q = skip_spaces(q, e);
    if (q == e) return;
    if (*q != ',') throw Bad{field, "expected ',' between the elements of " + quoted(v)};
    p = q + 1;
  }
}

// decode_dma_data_direction: __print_symbolic prints the name, or the value in
// hex when it has none.
bool parse_dir(std::string_view v, Dir& d) {
  if (v == "BIDIRECTIONAL") d = Dir::kBidirectional;
  else if (v == "TO_DEVICE") d = Dir::kToDevice;
  else if (v == "FROM_DEVICE") d = Dir::kFromDevice;
  else if (v == "NONE") d = Dir::kNone;
  else return false;
  return true;
}

// "12345.678901" (6 decimals: the trace file and trace-cmd's default) or 9
// (trace-cmd --ts-... / ns clocks); an integer for counter clocks. -> ns.
bool parse_time(const char* p, const char* e, uint64_t& ns) {
  const char* dot = static_cast<const char*>(memchr(p, '.', static_cast<size_t>(e - p)));
  uint64_t secs = 0;
  const char* ie = dot ? dot : e;
  auto [ptr, ec] = std::from_chars(p, ie, secs, 10);
  if (p == ie || ec != std::errc() || ptr != ie) return false;
  if (!dot) {
    ns = secs;
    return true;
  }
  const char* f = dot + 1;
  const size_t nd = static_cast<size_t>(e - f);
  if (nd == 0 || nd > 9) return false;
  uint64_t frac = 0;
  auto [fp, fec] = std::from_chars(f, e, frac, 10);
  if (fec != std::errc() || fp != e) return false;
  static constexpr uint64_t kScale[10] = {1000000000, 100000000, 10000000, 1000000, 100000,
                                          10000,      1000,      100,      10,      1};
  if (secs > (UINT64_MAX - frac * kScale[nd]) / 1000000000ull) return false;
  ns = secs * 1000000000ull + frac * kScale[nd];
  return true;
}

// The events imported, and what they become.
const struct {
  std::string_view name;
  Kind kind;
  Op op;
} kEvents[] = {
    {"map", Kind::kIommuMap, Op::kIommuMap},
    {"unmap", Kind::kIommuUnmap, Op::kIommuUnmap},
    {"io_page_fault", Kind::kIommuFault, Op::kFault},
    {"attach_device_to_domain", Kind::kIommuDevice, Op::kAttach},
    {"detach_device_from_domain", Kind::kIommuDevice, Op::kDetach},
    {"dma_map_page", Kind::kDmaMap, Op::kMap},
    {"dma_map_resource", Kind::kDmaMap, Op::kMap},
    {"dma_map_phys", Kind::kDmaMap, Op::kMap},
    {"dma_unmap_page", Kind::kDmaUnmap, Op::kUnmap},
    {"dma_unmap_resource", Kind::kDmaUnmap, Op::kUnmap},
    {"dma_unmap_phys", Kind::kDmaUnmap, Op::kUnmap},
    {"dma_map_sg", Kind::kDmaMapSg, Op::kMapSg},
    {"dma_unmap_sg", Kind::kDmaUnmapSg, Op::kUnmapSg},
    {"dma_alloc", Kind::kDmaAlloc, Op::kAlloc},
    {"dma_alloc_pages", Kind::kDmaAlloc, Op::kAlloc},
    {"dma_alloc_sgt", Kind::kDmaAllocSgt, Op::kAlloc},
    {"dma_free", Kind::kDmaFree, Op::kFree},
    {"dma_free_pages", Kind::kDmaFree, Op::kFree},
    {"dma_free_sgt", Kind::kDmaFreeSgt, Op::kFree},
    {"dma_sync_single_for_cpu", Kind::kDmaSyncSingle, Op::kSyncForCpu},
    {"dma_sync_single_for_device", Kind::kDmaSyncSingle, Op::kSyncForDevice},
    {"dma_sync_sg_for_cpu", Kind::kDmaSyncSg, Op::kSyncForCpu},
    {"dma_sync_sg_for_device", Kind::kDmaSyncSg, Op::kSyncForDevice},
    {"tracing_mark_write", Kind::kMark, Op::kMark},
};
constexpr size_t kEventCount = sizeof kEvents / sizeof kEvents[0];

int find_event(std::string_view name) {
  for (size_t i = 0; i < kEventCount; ++i)
    if (kEvents[i].name == name) return static_cast<int>(i);
  return -1;
}

// The fields of one event, as "key=value" tokens; tokens without '=' (the
// device name, "IOMMU:", "-", the end of the IOVA range, "[TRUNCATED]") are
// kept apart in order.
struct Fields {
  static constexpr int kMax = 16;
  std::string_view key[kMax], val[kMax];
  std::string_view bare[kMax];
  int n = 0, nbare = 0;

  Fields(const char* p, const char* e) {
    for (;;) {
      p = skip_spaces(p, e);
      if (p >= e) return;
      const char* t = p;
      while (t < e && !is_space(*t) && *t != '=') ++t;
      if (t < e && *t == '=') {
        const char* v = t + 1;
        const char* ve = v;
        if (ve < e && *ve == '{') {  // an array may hold spaces
          const char* close = static_cast<const char*>(memchr(ve, '}', static_cast<size_t>(e - ve)));
          ve = close ? close + 1 : e;
        } else {
          while (ve < e && !is_space(*ve)) ++ve;
        }
        if (n < kMax) {
          key[n] = std::string_view(p, static_cast<size_t>(t - p));
          val[n] = std::string_view(v, static_cast<size_t>(ve - v));
          ++n;
        }
        p = ve;
      } else {
        if (nbare < kMax) bare[nbare++] = std::string_view(p, static_cast<size_t>(t - p));
        p = t;
      }
    }
  }
  const std::string_view* find(std::string_view k) const {
    for (int i = 0; i < n; ++i)
      if (key[i] == k) return &val[i];
    return nullptr;
  }
  std::string_view get(const char* k) const {
    const std::string_view* v = find(k);
    if (!v) throw Bad{k, "missing"};
    return *v;
  }
};

}  // namespace

FtraceImporter::FtraceImporter(ImportOptions opt, std::string source)
    : opt_(std::move(opt)), source_(std::move(source)), event_count_(kEventCount, nullptr),
      next_sid_(opt_.default_sid + 1) {
  for (const auto& [name, sid] : opt_.device_sids) explicit_sids_.insert(sid);
}

uint32_t FtraceImporter::device(std::string_view name, Record& out) {
  out.dev.assign(name.data(), name.size());
  // Lines come in runs of the same device: try the last one first.
  if (last_device_ < devices_.size() && devices_[last_device_].first == name) {
    out.sid = devices_[last_device_].second;
    return static_cast<uint32_t>(last_device_);
  }
  for (size_t i = 0; i < devices_.size(); ++i)
    if (devices_[i].first == name) {
      last_device_ = i;
      out.sid = devices_[i].second;
      return static_cast<uint32_t>(i);
    }
  uint32_t sid = opt_.default_sid;
  if (auto it = opt_.device_sids.find(out.dev); it != opt_.device_sids.end()) {
    sid = it->second;
  } else if (opt_.number_devices) {
    while (explicit_sids_.count(next_sid_) || next_sid_ == opt_.default_sid) ++next_sid_;
    sid = next_sid_++;
  }
  devices_.emplace_back(out.dev, sid);
  stats_.device_sids[out.dev] = sid;
  last_device_ = devices_.size() - 1;
  out.sid = sid;
  return static_cast<uint32_t>(last_device_);
}

void FtraceImporter::recover_domain(Record& out) {
  const size_t d = out.op == Op::kIommuMap ? domains_.map(out.iova, out.size, out.pid)
                                           : domains_.unmap(out.iova, out.size, out.pid);
  stats_.recovery = domains_.stats();
  if (d == DomainRecovery::kNone) {
    out.sid = opt_.default_sid;  // mapped before the capture: no domain holds it
    return;
  }
  device(domains_.name(d), out);
}

bool FtraceImporter::parse_line(const char* line, size_t len, uint64_t line_no, Record& out) {
  ++stats_.lines;
  const char* e = line + len;
  while (e > line && (e[-1] == '\n' || e[-1] == '\r')) --e;
  const char* s = skip_spaces(line, e);
  if (s == e || *s == '#') {
    ++stats_.other_lines;
    return false;
  }

  // The CPU column "[003]": the first '[' after a space that holds only digits.
  const char* cpu_open = nullptr;
  const char* cpu_close = nullptr;
  for (const char* p = s; p < e;) {
    const char* b = static_cast<const char*>(memchr(p, '[', static_cast<size_t>(e - p)));
    if (!b) break;
    const char* d = b + 1;
    while (d < e && is_digit(*d)) ++d;
    if (b > s && is_space(b[-1]) && d > b + 1 && d < e && *d == ']') {
      cpu_open = b;
      cpu_close = d;
      break;
    }
    p = b + 1;
  }
  if (!cpu_open) {  // "cpus=4", "version = 6", "CPU:2 [LOST 5 EVENTS]", ...
    ++stats_.other_lines;
    return false;
  }

  // After the CPU: optional irq-flags column(s) ("d..1."), then "secs.usecs:".
  const char* p = cpu_close + 1;
  const char* ts = nullptr;
  const char* ts_end = nullptr;
  for (int col = 0; col < 4; ++col) {
    p = skip_spaces(p, e);
    const char* t = p;
    while (t < e && !is_space(*t)) ++t;
    if (t > p && t[-1] == ':' && is_digit(*p)) {
      ts = p;
      ts_end = t - 1;
      p = t;
      break;
    }
    p = t;
  }
  if (!ts) {
    ++stats_.other_lines;
    return false;
  }
  // The event name, up to ": " (or the end: an event with no fields).
  p = skip_spaces(p, e);
  const char* name = p;
  while (p < e && *p != ':' && !is_space(*p)) ++p;
  if (p == name || p == e || *p != ':') {
    ++stats_.other_lines;
    return false;
  }
  std::string_view ev_name(name, static_cast<size_t>(p - name));
  const char* fields = p + 1;
  // A trace_marker write: the trace file prints "tracing_mark_write: TEXT",
  // trace-cmd report "print: tracing_mark_write: TEXT" (the print event's
  // "%ps: %s"). Other print events (trace_printk) are not markers.
  if (ev_name == "print") {
    constexpr std::string_view kMarker = "tracing_mark_write:";
    const char* f = skip_spaces(fields, e);
    if (static_cast<size_t>(e - f) >= kMarker.size() && memcmp(f, kMarker.data(), kMarker.size()) == 0) {
      ev_name = kMarker.substr(0, kMarker.size() - 1);
      fields = f + kMarker.size();
    }
  }
  const int ev = find_event(ev_name);
  if (ev < 0) {
    ++stats_.unknown_events;
    return false;
  }
  const auto& def = kEvents[ev];
  // iommu's "map"/"unmap" are short names: only lines that look like the
  // iommu events' are theirs.
  if (def.kind == Kind::kIommuMap || def.kind == Kind::kIommuUnmap) {
    const char* f = skip_spaces(fields, e);
    if (e - f < 6 || memcmp(f, "IOMMU:", 6) != 0) {
      ++stats_.unknown_events;
      return false;
    }
  }

  try {
    out.time_ns = 0;
    out.op = def.op;
    out.cpu = -1;
    out.sid = kNoSid;
    out.dir = Dir::kNone;
    out.write = false;
    out.iova = kNoAddr;
    out.pa = kNoAddr;
    out.size = 0;
    out.asid = 0xffffffffu;
    out.pid = -1;
    out.dev.clear();
    out.text.clear();
    out.segs.clear();

    // task-pid: the pid is the digits after the last '-' before the CPU
    // column (and before the "(tgid)" column trace-cmd/record-tgid may add).
    const char* q = cpu_open;
    while (q > s && is_space(q[-1])) --q;
    if (q > s && q[-1] == ')') {
      const char* open = q - 1;
      while (open > s && *open != '(') --open;
      q = open;
      while (q > s && is_space(q[-1])) --q;
    }
    const char* pid_end = q;
    while (q > s && is_digit(q[-1])) --q;
    if (q == pid_end || q == s || q[-1] != '-')
      throw Bad{"pid", "expected <task>-<pid> before the CPU column, got " +
                           quoted(std::string_view(s, static_cast<size_t>(pid_end - s)))};
    out.pid = static_cast<int64_t>(parse_dec_max(std::string_view(q, static_cast<size_t>(pid_end - q)), "pid",
                                                  std::numeric_limits<int64_t>::max()));
    out.task.assign(s, static_cast<size_t>(q - 1 - s));
    out.cpu = static_cast<int32_t>(parse_dec_max(std::string_view(cpu_open + 1, static_cast<size_t>(cpu_close - cpu_open - 1)),
                                                 "cpu", std::numeric_limits<int32_t>::max()));
    if (!parse_time(ts, ts_end, out.time_ns))
      throw Bad{"timestamp", "expected <secs>.<usecs>, got " + quoted(std::string_view(ts, static_cast<size_t>(ts_end - ts)))};

    parse_fields(ev, fields, e, out);
  } catch (const Bad& b) {
    if (opt_.skip_malformed) {
      ++stats_.malformed_skipped;
      return false;
    }
    throw TraceError(source_, line_no, "event " + std::string(def.name) + ": field '" + b.field + "': " + b.why);
  }
  uint64_t*& count = event_count_[static_cast<size_t>(ev)];
  if (!count) count = &stats_.by_event[std::string(def.name)];
  ++*count;
  return true;
}

void FtraceImporter::parse_fields(int ev, const char* p, const char* e, Record& out) {
  const auto& def = kEvents[ev];
  if (def.kind == Kind::kMark) {
    // The marker's text as written, free text (no key=value fields); its own
    // leading spaces are lost (ftrace puts one after the colon, trace-cmd pads).
    const char* t = skip_spaces(p, e);
    while (e > t && is_space(e[-1])) --e;
    out.text.assign(t, static_cast<size_t>(e - t));
    return;
  }
  const Fields f(p, e);
  switch (def.kind) {
    case Kind::kIommuMap:
    case Kind::kIommuUnmap: {
      out.iova = parse_hex(f.get("iova"), "iova");
      if (def.kind == Kind::kIommuMap) {
        out.pa = parse_hex(f.get("paddr"), "paddr");
        out.size = parse_dec(f.get("size"), "size");
      } else {
        // What was unmapped; the request when the kernel did not say.
        const uint64_t req = parse_dec(f.get("size"), "size");
        const auto* un = f.find("unmapped_size");
        out.size = un ? parse_dec(*un, "unmapped_size") : req;
      }
      if (const auto* dev = f.find("dev")) device(*dev, out);
      else if (opt_.recover_domains) recover_domain(out);
      else out.sid = opt_.default_sid;
      return;
    }
    case Kind::kIommuFault: {
      // "IOMMU:<driver> <device>": the driver glued to "IOMMU:", maybe empty.
      if (f.nbare < 2 || f.bare[0].substr(0, 6) != "IOMMU:") throw Bad{"device", "expected 'IOMMU:<driver> <device>'"};
      device(f.bare[1], out);
      out.iova = parse_hex(f.get("iova"), "iova");
      out.write = (parse_hex(f.get("flags"), "flags") & 0x1) != 0;  // IOMMU_FAULT_WRITE
      return;
    }
    case Kind::kIommuDevice: {
      const std::string_view dev = f.get("device");
      if (dev.empty()) throw Bad{"device", "empty"};
      device(dev, out);
      if (out.op == Op::kAttach) domains_.attached(out.dev);
      return;
    }
    default:
      break;
  }

  // dma: events: "<device> dir=<DIR> ...".
  if (f.nbare < 1) throw Bad{"device", "missing (the line starts with a key=value)"};
  const uint32_t dev_index = device(f.bare[0], out);
  const std::string_view dir = f.get("dir");
  if (!parse_dir(dir, out.dir)) {
    // dma_alloc in Linux 6.12 prints a direction it never set: tolerate it there.
    if (def.kind != Kind::kDmaAlloc && def.kind != Kind::kDmaFree)
      throw Bad{"dir", "expected BIDIRECTIONAL, TO_DEVICE, FROM_DEVICE or NONE, got " + quoted(dir)};
    out.dir = Dir::kNone;
  }
  switch (def.kind) {
    case Kind::kDmaMap:
      out.iova = parse_hex(f.get("dma_addr"), "dma_addr");
      out.size = parse_dec(f.get("size"), "size");
      out.pa = parse_hex(f.get("phys_addr"), "phys_addr");
      return;
    case Kind::kDmaUnmap:
    case Kind::kDmaSyncSingle:
    case Kind::kDmaAlloc:
    case Kind::kDmaFree:
    case Kind::kDmaFreeSgt:
      out.iova = parse_hex(f.get("dma_addr"), "dma_addr");
      out.size = parse_dec(f.get("size"), "size");
      return;
    case Kind::kDmaAllocSgt:
      out.iova = parse_hex(f.get("dma_addr"), "dma_addr");
      out.size = parse_dec(f.get("size"), "size");
      parse_array(f.get("phys_addrs"), "phys_addrs", phys_addrs_);
      if (!phys_addrs_.empty()) out.pa = phys_addrs_[0];
      return;
    case Kind::kDmaSyncSg: {
      parse_array(f.get("dma_addrs"), "dma_addrs", dma_addrs_);
      parse_array(f.get("sizes"), "sizes", lengths_);
      if (dma_addrs_.size() != lengths_.size())
        throw Bad{"sizes", std::to_string(lengths_.size()) + " sizes for " + std::to_string(dma_addrs_.size()) + " dma_addrs"};
      if (!dma_addrs_.empty()) out.iova = dma_addrs_[0];
      for (uint64_t l : lengths_) out.size += l;
      return;
    }
    case Kind::kDmaMapSg: {
      // The newer layout's "nents=%d/%d ents=%d/%d": checked, the lists say the rest.
      if (const auto* n = f.find("nents")) {
        const size_t slash = n->find('/');
        if (slash == std::string_view::npos) throw Bad{"nents", "expected <traced>/<total>, got " + quoted(*n)};
        parse_dec(n->substr(0, slash), "nents");
        parse_dec(n->substr(slash + 1), "nents");
        const std::string_view en = f.get("ents");
        const size_t s2 = en.find('/');
        if (s2 == std::string_view::npos) throw Bad{"ents", "expected <traced>/<total>, got " + quoted(en)};
        parse_dec(en.substr(0, s2), "ents");
        parse_dec(en.substr(s2 + 1), "ents");
      }
      parse_array(f.get("dma_addrs"), "dma_addrs", dma_addrs_);
      parse_array(f.get("sizes"), "sizes", lengths_);
      parse_array(f.get("phys_addrs"), "phys_addrs", phys_addrs_);
      if (dma_addrs_.size() != lengths_.size())
        throw Bad{"sizes", std::to_string(lengths_.size()) + " sizes for " + std::to_string(dma_addrs_.size()) + " dma_addrs"};
      if (!dma_addrs_.empty()) out.iova = dma_addrs_[0];
      for (uint64_t l : lengths_) out.size += l;
      // The physical segments' own lengths are printed only when the mapping
      // kept one DMA segment per physical one; when an IOMMU merged them
      // (fewer DMA segments) the mapped size is shared out evenly.
      const size_t n = phys_addrs_.size();
      out.segs.resize(n);
      for (size_t i = 0; i < n; ++i) {
        out.segs[i].pa = phys_addrs_[i];
        if (n == lengths_.size()) out.segs[i].len = lengths_[i];
        else out.segs[i].len = i + 1 < n ? out.size / n : out.size - (out.size / n) * (n - 1);
      }
      if (n && out.iova != kNoAddr) {
        LiveSg& live = live_sg_[{dev_index, phys_addrs_[0]}];
        live.iova = out.iova;
        live.size = out.size;
        live.segs = out.segs;
      }
      return;
    }
    case Kind::kDmaUnmapSg: {
      parse_array(f.get("phys_addrs"), "phys_addrs", phys_addrs_);
      // dma_unmap_sg prints no IOVA: take the mapping's from its dma_map_sg.
      if (!phys_addrs_.empty()) {
        auto it = live_sg_.find({dev_index, phys_addrs_[0]});
        if (it != live_sg_.end()) {
          out.iova = it->second.iova;
          out.size = it->second.size;
          out.segs.swap(it->second.segs);
          live_sg_.erase(it);
          return;
        }
      }
      // Mapped before the capture began: the physical segments, lengths unknown.
      out.segs.resize(phys_addrs_.size());
      for (size_t i = 0; i < phys_addrs_.size(); ++i) out.segs[i] = Segment{phys_addrs_[i], 0};
      return;
    }
    default:
      return;
  }
}

namespace {

// "1 MiB", "4 KiB" or "5000 bytes": the read buffer in an error message.
std::string size_text(size_t b) {
  if (b % (1u << 20) == 0) return std::to_string(b >> 20) + " MiB";
  if (b % 1024 == 0) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " bytes";
}

// The input file: plain text is read straight into the caller's buffer (one
// copy less than zlib's transparent mode); gzip (by its magic number) through zlib.
class Input {
 public:
  explicit Input(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw TraceError(path, 0, std::string("cannot open: ") + std::strerror(errno));
    unsigned char magic[2] = {0, 0};
    const ssize_t got = ::pread(fd_, magic, 2, 0);
    if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
      gz_ = gzdopen(fd_, "rb");
      if (!gz_) {
        ::close(fd_);
        throw TraceError(path, 0, "cannot open: out of memory");
      }
      fd_ = -1;  // zlib owns it now
      gzbuffer(gz_, 1 << 18);
    }
  }
  ~Input() {
    if (gz_) gzclose(gz_);
    if (fd_ >= 0) ::close(fd_);
  }
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;

  // Up to `n` bytes; 0 at the end. `line` names where an error is.
  size_t read(char* p, size_t n, uint64_t line) {
    if (gz_) {
      const int got = gzread(gz_, p, static_cast<unsigned>(std::min<size_t>(n, 1u << 30)));
      if (got < 0) {
        int err = 0;
        const char* msg = gzerror(gz_, &err);
        throw TraceError(path_, line, std::string("read error: ") + (err == Z_ERRNO ? std::strerror(errno) : msg));
      }
      return static_cast<size_t>(got);
    }
    for (;;) {
      const ssize_t got = ::read(fd_, p, n);
      if (got >= 0) return static_cast<size_t>(got);
      if (errno != EINTR) throw TraceError(path_, line, std::string("read error: ") + std::strerror(errno));
    }
  }
  // After the last read: a gzip stream cut short is an error.
  void check_end(uint64_t line) {
    if (!gz_) return;
    int err = Z_OK;
    const char* msg = gzerror(gz_, &err);
    if (err != Z_OK && err != Z_STREAM_END)
      throw TraceError(path_, line, std::string("the compressed file is damaged or cut short: ") + msg);
  }

 private:
  std::string path_;
  int fd_ = -1;
  gzFile gz_ = nullptr;
};

}  // namespace

ImportStats import_ftrace(const std::string& in, const std::string& out, const ImportOptions& opt,
                          const std::function<void(uint64_t lines)>& progress) {
  Input src(in);
  // The rename below replaces what `out` names: only ever a regular file (a
  // device, a FIFO or a symlink given as the output is left alone).
  {
    std::error_code ec;
    const std::filesystem::file_status st = std::filesystem::symlink_status(out, ec);
    if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
      throw TraceError(out, 0, "not a regular file: the output must be a new or a regular file, never replaced otherwise");
  }
  // The records go to a temporary file beside `out` (same suffix, so the
  // writer still compresses a ".gz"), renamed once the input is all read.
  std::string tmp;
  constexpr std::string_view kGz = ".gz";
  if (out.size() > kGz.size() && out.compare(out.size() - kGz.size(), kGz.size(), kGz) == 0)
    tmp = out.substr(0, out.size() - kGz.size()) + ".tmp.gz";
  else
    tmp = out + ".tmp";
  struct TmpRemover {
    const std::string& path;
    bool armed = true;
    ~TmpRemover() {
      if (armed) {
        std::error_code ec;
        std::filesystem::remove(path, ec);
      }
    }
  };

  FtraceImporter imp(opt, in);
  Record rec;
  uint64_t records = 0;
  {
    TmpRemover remover{tmp};  // declared first: runs after the writer has closed
    std::unique_ptr<TraceWriter> writer;
    try {
      writer = std::make_unique<TraceWriter>(tmp);
    } catch (const TraceError& e) {
      throw TraceError(out, 0, std::string("cannot write the output (") + e.what() + ")");
    }
    TraceWriter& w = *writer;
    w.comment("imported from Linux ftrace text " + std::filesystem::path(in).filename().string() +
              " by smmu-vp trace import");

    std::vector<char> buf(std::max<size_t>(opt.read_buffer_bytes, 4096));
    size_t have = 0;  // bytes of an unfinished line kept at the front
    uint64_t line_no = 0;
    bool eof = false;
    while (!eof) {
      const size_t n = src.read(buf.data() + have, buf.size() - have, line_no + 1);
      eof = n == 0;
      const size_t total = have + n;
      const char* p = buf.data();
      const char* end = buf.data() + total;
      for (;;) {
        const char* nl = static_cast<const char*>(memchr(p, '\n', static_cast<size_t>(end - p)));
        if (!nl) break;
        ++line_no;
        if (imp.parse_line(p, static_cast<size_t>(nl - p), line_no, rec)) {
          w.write(rec);
          ++records;
        }
        if (progress && (line_no & 0xffff) == 0) progress(line_no);
        p = nl + 1;
      }
      have = static_cast<size_t>(end - p);
      if (eof) {
        if (have) {  // the last line, without its newline
          ++line_no;
          if (imp.parse_line(p, have, line_no, rec)) {
            w.write(rec);
            ++records;
          }
        }
        break;
      }
      // No ftrace line comes near the buffer's 1 MiB (a dma_map_sg event of a
      // thousand segments is tens of KiB): a longer one is not ftrace text.
      if (have == buf.size())
        throw TraceError(in, line_no + 1,
                         "a line longer than " + size_text(buf.size()) + ": not ftrace text (a binary file?)");
      if (have && p != buf.data()) std::memmove(buf.data(), p, have);
    }
    src.check_end(line_no);
    // Input with lines but not one of an ftrace event (random text, a
    // binary file) would give an empty trace that looks like a quiet one.
    const ImportStats& seen = imp.stats();
    if (line_no > 0 && records == 0 && seen.unknown_events == 0 && seen.malformed_skipped == 0)
      throw TraceError(in, 0,
                       "no ftrace event line in " + std::to_string(line_no) +
                           " lines: not ftrace text (/sys/kernel/tracing/trace or `trace-cmd report` output)");
    if (seen.recovery.maps || seen.recovery.unmaps) w.comment("smmu-vp " + domain_recovery_summary(seen.recovery));
    w.close();
    std::error_code ec;
    std::filesystem::rename(tmp, out, ec);
    if (ec) throw TraceError(out, 0, "cannot write: " + ec.message());
    remover.armed = false;
  }
  ImportStats st = imp.stats();
  st.records = records;
  return st;
}

}  // namespace smmu_vp::dmatrace

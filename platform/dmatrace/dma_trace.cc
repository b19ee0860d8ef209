// The record line of the "smmu-vp-trace" format (traces/README.md): op and
// direction names, one record to its text line and back, and TraceError.
// The parser scans the line by hand (no regex, no streams) because the reader
// calls it once per line of traces with millions of lines.
#include "dmatrace/dma_trace.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace smmu_vp::dmatrace {
namespace {

// In Op's order: the enumerator's value indexes the name.
constexpr std::array<const char*, kOpCount> kOpNames = {
    "map",   "unmap", "map_sg",    "unmap_sg",    "sync_for_cpu", "sync_for_device", "alloc",   "free",
    "iommu_map", "iommu_unmap", "access", "attach", "detach", "fault", "command", "mark",
};
constexpr std::array<const char*, 4> kDirNames = {"bidirectional", "to_device", "from_device", "none"};

std::optional<Op> op_from_view(std::string_view name) {
  for (unsigned i = 0; i < kOpCount; ++i)
    if (name == kOpNames[i]) return static_cast<Op>(i);
  return std::nullopt;
}

std::optional<Dir> dir_from_view(std::string_view name) {
  for (unsigned i = 0; i < kDirNames.size(); ++i)
    if (name == kDirNames[i]) return static_cast<Dir>(i);
  return std::nullopt;
}

// ---- Errors ---------------------------------------------------------------

// A value quoted in a message: clipped, so that a binary line does not make a
// megabyte-long message, and with control bytes shown as '?'.
std::string quote(std::string_view v) {
  constexpr size_t kMax = 64;
  std::string q = "'";
  for (size_t i = 0; i < v.size() && i < kMax; ++i) {
    const unsigned char c = static_cast<unsigned char>(v[i]);
    q += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
  }
  if (v.size() > kMax) q += "...";
  q += "'";
  return q;
}

[[noreturn]] void fail(std::string_view field, const std::string& what) {
  std::string m = "field '";
  m.append(field);
  m += "': ";
  m += what;
  throw std::invalid_argument(m);
}

// ---- Numbers --------------------------------------------------------------

// Decimal or 0x-prefixed hexadecimal, the whole value, at most 2^64 - 1.
uint64_t parse_u64(std::string_view field, std::string_view v) {
  int base = 10;
  std::string_view digits = v;
  if (v.size() >= 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    base = 16;
    digits = v.substr(2);
  }
  uint64_t x = 0;
  const char* end = digits.data() + digits.size();
  const auto [p, ec] = std::from_chars(digits.data(), end, x, base);
  if (digits.empty() || ec == std::errc::invalid_argument || p != end) fail(field, "not a number: " + quote(v));
  if (ec == std::errc::result_out_of_range) fail(field, "number too large (more than 2^64-1): " + quote(v));
  return x;
}

uint64_t parse_bounded(std::string_view field, std::string_view v, uint64_t max) {
  const uint64_t x = parse_u64(field, v);
  if (x > max) fail(field, "out of range (at most " + std::to_string(max) + "): " + quote(v));
  return x;
}

// The time in the header's unit -> ns, rounded half up. The common units are
// powers of ten of a ns, done in integers so that no digit is lost to floating
// point (a ps trace's times are exact to the ns whatever their size).
uint64_t parse_time(std::string_view v, double ns_per_unit) {
  const size_t dot = v.find('.');
  const std::string_view int_part = v.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : v.substr(dot + 1);
  const auto is_digits = [](std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
      if (c < '0' || c > '9') return false;
    return true;
  };
  if (!is_digits(int_part) || (dot != std::string_view::npos && !is_digits(frac)))
    fail("time", "not a non-negative decimal number: " + quote(v));
  uint64_t whole = 0;
  {
    const auto [p, ec] = std::from_chars(int_part.data(), int_part.data() + int_part.size(), whole);
    (void)p;
    if (ec != std::errc()) fail("time", "number too large: " + quote(v));
  }
  int exp10;  // ns_per_unit == 10^exp10
  if (ns_per_unit == 1.0) {
    exp10 = 0;
  } else if (ns_per_unit == 1000.0) {
    exp10 = 3;
  } else if (ns_per_unit == 0.001) {
    exp10 = -3;
  } else {
    // Another scale (not one a header names): floating point is the best we can do.
    double t = static_cast<double>(whole);
    if (!frac.empty()) t += std::strtod(std::string("0.").append(frac).c_str(), nullptr);
    const double ns = std::nearbyint(t * ns_per_unit);
    if (!(ns >= 0) || ns >= 18446744073709551616.0) fail("time", "out of range: " + quote(v));
    return static_cast<uint64_t>(ns);
  }
  // Nine fraction digits are more than rounding to the ns in any unit needs;
  // dropping the rest cannot cross a rounding boundary (it only lowers the value
  // by less than 1e-9 of a unit).
  if (frac.size() > 9) frac = frac.substr(0, 9);
  using u128 = unsigned __int128;
  u128 pow = 1;
  for (size_t i = 0; i < frac.size(); ++i) pow *= 10;
  uint64_t f = 0;
  if (!frac.empty()) std::from_chars(frac.data(), frac.data() + frac.size(), f);
  u128 value = static_cast<u128>(whole) * pow + f;  // in units of 10^-frac.size()
  u128 divisor = pow;
  if (exp10 > 0) {
    value *= 1000;
  } else if (exp10 < 0) {
    divisor *= 1000;
  }
  const u128 ns = (value + divisor / 2) / divisor;
  if (ns > std::numeric_limits<uint64_t>::max()) fail("time", "too large in ns: " + quote(v));
  return static_cast<uint64_t>(ns);
}

// ---- Strings --------------------------------------------------------------

bool needs_escape(unsigned char c) { return c <= ' ' || c >= 0x7f || c == '=' || c == '%' || c == ','; }

void append_escaped(std::string& out, const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (needs_escape(c)) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void decode_string(std::string_view field, std::string_view v, std::string& out) {
  out.clear();
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != '%') {
      out += v[i];
      continue;
    }
    const bool room = i + 2 < v.size();
    const int hi = room ? hex_digit(v[i + 1]) : -1;
    const int lo = room ? hex_digit(v[i + 2]) : -1;
    if (hi < 0 || lo < 0) fail(field, "bad percent escape in " + quote(v));
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
}

// ---- Formatting helpers ---------------------------------------------------

void append_dec(std::string& out, uint64_t x) {
  char buf[24];
  const auto [p, ec] = std::to_chars(buf, buf + sizeof buf, x);
  (void)ec;
  out.append(buf, p);
}

void append_sdec(std::string& out, int64_t x) {
  char buf[24];
  const auto [p, ec] = std::to_chars(buf, buf + sizeof buf, x);
  (void)ec;
  out.append(buf, p);
}

void append_hex(std::string& out, uint64_t x) {
  char buf[24];
  const auto [p, ec] = std::to_chars(buf, buf + sizeof buf, x, 16);
  (void)ec;
  out += "0x";
  out.append(buf, p);
}

// The fields each op must have (traces/README.md).
enum : unsigned {
  kReqIova = 1u << 0,
  kReqSize = 1u << 1,
  kReqSid = 1u << 2,
  kReqRw = 1u << 3,
  kReqCmd = 1u << 4,
  kReqText = 1u << 5,
};

unsigned required_fields(Op op) {
  switch (op) {
    case Op::kAccess: return kReqSid | kReqIova | kReqSize | kReqRw;
    case Op::kAttach:
    case Op::kDetach: return kReqSid;
    case Op::kFault: return kReqIova;
    case Op::kCommand: return kReqCmd;
    case Op::kMark: return kReqText;
    default: return kReqIova | kReqSize;
  }
}

// Keys, as bits for the duplicate and required checks.
enum Key : unsigned {
  kKeyCpu, kKeySid, kKeyDev, kKeyDir, kKeyIova, kKeyPa, kKeySize, kKeyRw,
  kKeyAsid, kKeyPid, kKeyTask, kKeyCmd, kKeySegs, kKeyText, kKeyUnknown,
};

Key key_of(std::string_view k) {
  switch (k.size()) {
    case 2:
      if (k == "pa") return kKeyPa;
      if (k == "rw") return kKeyRw;
      break;
    case 3:
      if (k == "cpu") return kKeyCpu;
      if (k == "sid") return kKeySid;
      if (k == "dev") return kKeyDev;
      if (k == "dir") return kKeyDir;
      if (k == "pid") return kKeyPid;
      if (k == "cmd") return kKeyCmd;
      break;
    case 4:
      if (k == "iova") return kKeyIova;
      if (k == "size") return kKeySize;
      if (k == "asid") return kKeyAsid;
      if (k == "task") return kKeyTask;
      if (k == "segs") return kKeySegs;
      if (k == "text") return kKeyText;
      break;
    default: break;
  }
  return kKeyUnknown;
}

void parse_segs(std::string_view v, std::vector<Segment>& segs) {
  segs.clear();
  if (v.empty()) return;  // unmap_sg may list none
  size_t start = 0;
  while (true) {
    const size_t comma = v.find(',', start);
    const std::string_view seg = v.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const size_t colon = seg.find(':');
    if (colon == std::string_view::npos) fail("segs", "segment " + quote(seg) + " is not PA:LEN");
    segs.push_back(Segment{parse_u64("segs", seg.substr(0, colon)), parse_u64("segs", seg.substr(colon + 1))});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

const char* op_name(Op op) {
  const auto i = static_cast<unsigned>(op);
  return i < kOpCount ? kOpNames[i] : "?";
}

std::optional<Op> op_from_name(const std::string& name) { return op_from_view(name); }

const char* dir_name(Dir d) {
  const auto i = static_cast<unsigned>(d);
  return i < kDirNames.size() ? kDirNames[i] : "?";
}

std::optional<Dir> dir_from_name(const std::string& name) { return dir_from_view(name); }

TraceError::TraceError(const std::string& file, uint64_t line, const std::string& what)
    : std::runtime_error(line ? file + ":" + std::to_string(line) + ": " + what : file + ": " + what), line_(line) {}

bool operator==(const Record& a, const Record& b) {
  return a.time_ns == b.time_ns && a.op == b.op && a.cpu == b.cpu && a.sid == b.sid && a.dir == b.dir &&
         a.write == b.write && a.iova == b.iova && a.pa == b.pa && a.size == b.size && a.asid == b.asid &&
         a.pid == b.pid && a.dev == b.dev && a.task == b.task && a.text == b.text && a.segs == b.segs;
}

// Fixed field order; a field is written when the op requires it or when it is
// not its default, so that a record survives format -> parse unchanged.
void format_record(const Record& r, std::string& out) {
  const Record def;
  const unsigned req = required_fields(r.op);
  append_dec(out, r.time_ns);
  out += ' ';
  out += op_name(r.op);
  if (r.cpu != def.cpu) {
    out += " cpu=";
    append_sdec(out, r.cpu);
  }
  if (r.pid != def.pid) {
    out += " pid=";
    append_sdec(out, r.pid);
  }
  if (!r.task.empty()) {
    out += " task=";
    append_escaped(out, r.task);
  }
  if (!r.dev.empty()) {
    out += " dev=";
    append_escaped(out, r.dev);
  }
  if ((req & kReqSid) || r.sid != def.sid) {
    out += " sid=";
    append_dec(out, r.sid);
  }
  if (r.asid != def.asid) {
    out += " asid=";
    append_dec(out, r.asid);
  }
  // One string, two keys: a marker's text is `text=`, any other record's `cmd=`.
  if ((req & (kReqCmd | kReqText)) || !r.text.empty()) {
    out += r.op == Op::kMark ? " text=" : " cmd=";
    append_escaped(out, r.text);
  }
  if (r.dir != def.dir) {
    out += " dir=";
    out += dir_name(r.dir);
  }
  if ((req & kReqRw) || r.write) out += r.write ? " rw=w" : " rw=r";
  if ((req & kReqIova) || r.iova != def.iova) {
    out += " iova=";
    append_hex(out, r.iova);
  }
  if (r.pa != def.pa) {
    out += " pa=";
    append_hex(out, r.pa);
  }
  if ((req & kReqSize) || r.size != def.size) {
    out += " size=";
    append_dec(out, r.size);
  }
  if (!r.segs.empty()) {
    out += " segs=";
    for (size_t i = 0; i < r.segs.size(); ++i) {
      if (i) out += ',';
      append_hex(out, r.segs[i].pa);
      out += ':';
      append_dec(out, r.segs[i].len);
    }
  }
}

std::string format_record(const Record& r) {
  std::string s;
  format_record(r, s);
  return s;
}

void parse_record(std::string_view line, double ns_per_unit, Record& out) {
  const char* p = line.data();
  const char* const end = p + line.size();
  const auto skip_space = [&] {
    while (p < end && is_space(*p)) ++p;
  };
  const auto token = [&] {
    const char* b = p;
    while (p < end && !is_space(*p)) ++p;
    return std::string_view(b, static_cast<size_t>(p - b));
  };

  skip_space();
  const std::string_view time = token();
  if (time.empty()) fail("time", "missing");
  skip_space();
  const std::string_view op = token();
  if (op.empty()) fail("op", "missing");
  const std::optional<Op> o = op_from_view(op);
  if (!o) fail("op", "unknown op " + quote(op));

  // Every member is set: `out` may hold the previous line's record.
  const Record def;
  out.time_ns = parse_time(time, ns_per_unit);
  out.op = *o;
  out.cpu = def.cpu;
  out.sid = def.sid;
  out.dir = def.dir;
  out.write = def.write;
  out.iova = def.iova;
  out.pa = def.pa;
  out.size = def.size;
  out.asid = def.asid;
  out.pid = def.pid;
  out.dev.clear();
  out.task.clear();
  out.text.clear();
  out.segs.clear();

  unsigned seen = 0;
  while (true) {
    skip_space();
    if (p == end) break;
    const std::string_view field = token();
    const size_t eq = field.find('=');
    if (eq == std::string_view::npos || eq == 0) fail(field.substr(0, eq), "expected key=value");
    const std::string_view k = field.substr(0, eq);
    const std::string_view v = field.substr(eq + 1);
    const Key key = key_of(k);
    if (key == kKeyUnknown) continue;  // a newer writer's field: version 1 readers skip it
    if (seen & (1u << key)) fail(k, "given twice");
    seen |= 1u << key;
    switch (key) {
      case kKeyCpu: out.cpu = static_cast<int32_t>(parse_bounded(k, v, std::numeric_limits<int32_t>::max())); break;
      case kKeySid: out.sid = static_cast<uint32_t>(parse_bounded(k, v, std::numeric_limits<uint32_t>::max())); break;
      case kKeyAsid: out.asid = static_cast<uint32_t>(parse_bounded(k, v, std::numeric_limits<uint32_t>::max())); break;
      case kKeyPid: out.pid = static_cast<int64_t>(parse_bounded(k, v, std::numeric_limits<int64_t>::max())); break;
      case kKeyIova: out.iova = parse_u64(k, v); break;
      case kKeyPa: out.pa = parse_u64(k, v); break;
      case kKeySize: out.size = parse_u64(k, v); break;
      case kKeyDir: {
        const std::optional<Dir> d = dir_from_view(v);
        if (!d) fail(k, "unknown direction " + quote(v) + " (to_device, from_device, bidirectional or none)");
        out.dir = *d;
        break;
      }
      case kKeyRw:
        if (v == "r") {
          out.write = false;
        } else if (v == "w") {
          out.write = true;
        } else {
          fail(k, "expected r or w, not " + quote(v));
        }
        break;
      case kKeyDev: decode_string(k, v, out.dev); break;
      case kKeyTask: decode_string(k, v, out.task); break;
      case kKeyCmd:
      case kKeyText:
        // Both fill `text`: a record gives one of them, not both.
        if (seen & (1u << (key == kKeyCmd ? kKeyText : kKeyCmd))) fail(k, "given with cmd= and text= (one of them)");
        decode_string(k, v, out.text);
        break;
      case kKeySegs: parse_segs(v, out.segs); break;
      case kKeyUnknown: break;
    }
  }

  const unsigned req = required_fields(out.op);
  const auto need = [&](unsigned bit, Key key, const char* name) {
    if ((req & bit) && !(seen & (1u << key))) fail(name, std::string("missing (required for ") + op_name(out.op) + ")");
  };
  need(kReqSid, kKeySid, "sid");
  need(kReqCmd, kKeyCmd, "cmd");
  need(kReqText, kKeyText, "text");
  need(kReqIova, kKeyIova, "iova");
  need(kReqSize, kKeySize, "size");
  need(kReqRw, kKeyRw, "rw");
}

Record parse_record(const std::string& line, double ns_per_unit) {
  Record r;
  parse_record(std::string_view(line), ns_per_unit, r);
  return r;
}

}  // namespace smmu_vp::dmatrace

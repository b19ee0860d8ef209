// Unit tests of the smmu-vp-trace format library (platform/dmatrace/
// dma_trace.h): record formatting and parsing, the reader (plain, gzip,
// malformed input, headers) and the writer, and the example files in
// traces/examples/.
#include "dmatrace/dma_trace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace smmu_vp::dmatrace {

// gtest prints a record as its trace line.
void PrintTo(const Record& r, std::ostream* os) { *os << format_record(r); }

namespace {

namespace fs = std::filesystem;

Op op_at(unsigned i) { return static_cast<Op>(i); }

// A record of `op` with its required fields and some optional ones set.
Record full_record(Op op) {
  Record r;
  r.time_ns = 123456789;
  r.op = op;
  r.cpu = 3;
  r.sid = 7;
  r.dir = Dir::kFromDevice;
  r.write = true;
  r.iova = 0xffff0000;
  r.pa = 0x80001000;
  r.size = 8192;
  r.asid = 5;
  r.pid = 4242;
  r.dev = "0000:01:00.0";
  r.task = "kworker/u16:3";
  if (op == Op::kCommand) r.text = "TLBI_NH_VA";
  if (op == Op::kMark) r.text = "phase nvme read, 4 KiB=100%";
  if (op == Op::kMapSg || op == Op::kUnmapSg) r.segs = {{0x80001000, 4096}, {0x80005000, 4096}};
  return r;
}

// Only the fields the op requires; everything else at its default.
Record minimal_record(Op op) {
  Record r;
  r.time_ns = 10;
  r.op = op;
  switch (op) {
    case Op::kAccess:
      r.sid = 1;
      r.iova = 0x1000;
      r.size = 64;
      break;
    case Op::kAttach:
    case Op::kDetach: r.sid = 2; break;
    case Op::kFault: r.iova = 0x2000; break;
    case Op::kCommand: r.text = "CMD_SYNC"; break;
    case Op::kMark: r.text = "phase x"; break;
    default:
      r.iova = 0x3000;
      r.size = 4096;
      break;
  }
  return r;
}

class TraceFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dmatrace_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string write_text(const std::string& name, const std::string& text) const {
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  static std::vector<Record> read_all(const std::string& p, ReaderOptions opt = {}) {
    TraceReader reader(p, opt);
    std::vector<Record> out;
    Record r;
    while (reader.next(r)) out.push_back(r);
    return out;
  }

  // The TraceError reading `text` throws (fails the test if none).
  TraceError read_error(const std::string& text) const {
    const std::string p = write_text("bad.trace", text);
    try {
      read_all(p);
    } catch (const TraceError& e) {
      return e;
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return TraceError(p, 0, "none");
  }

  fs::path dir_;
};

// ---- Names ----------------------------------------------------------------

TEST(DmaTraceNames, OpAndDirNamesRoundTrip) {
  const std::vector<std::string> expected = {
      "map",    "unmap",       "map_sg", "unmap_sg", "sync_for_cpu", "sync_for_device", "alloc",  "free",
      "iommu_map", "iommu_unmap", "access", "attach", "detach", "fault", "command", "mark"};
  ASSERT_EQ(expected.size(), kOpCount);
  for (unsigned i = 0; i < kOpCount; ++i) {
    EXPECT_EQ(op_name(op_at(i)), expected[i]);
    EXPECT_EQ(op_from_name(expected[i]), op_at(i));
  }
  EXPECT_FALSE(op_from_name("mapp").has_value());
  EXPECT_FALSE(op_from_name("").has_value());
  for (Dir d : {Dir::kBidirectional, Dir::kToDevice, Dir::kFromDevice, Dir::kNone})
    EXPECT_EQ(dir_from_name(dir_name(d)), d);
  EXPECT_STREQ(dir_name(Dir::kToDevice), "to_device");
  EXPECT_FALSE(dir_from_name("sideways").has_value());
}

// ---- Records --------------------------------------------------------------

TEST(DmaTraceRecord, EveryOpRoundTrips) {
  for (unsigned i = 0; i < kOpCount; ++i) {
    for (const Record& r : {full_record(op_at(i)), minimal_record(op_at(i))}) {
      const std::string line = format_record(r);
      SCOPED_TRACE(line);
      const Record back = parse_record(line);
      EXPECT_EQ(back, r);
      EXPECT_EQ(format_record(back), line);
    }
  }
}

TEST(DmaTraceRecord, FormatWritesFixedOrderAndOmitsDefaults) {
  EXPECT_EQ(format_record(minimal_record(Op::kMap)), "10 map iova=0x3000 size=4096");
  EXPECT_EQ(format_record(minimal_record(Op::kAccess)), "10 access sid=1 rw=r iova=0x1000 size=64");
  EXPECT_EQ(format_record(minimal_record(Op::kAttach)), "10 attach sid=2");
  EXPECT_EQ(format_record(minimal_record(Op::kFault)), "10 fault iova=0x2000");
  EXPECT_EQ(format_record(minimal_record(Op::kCommand)), "10 command cmd=CMD_SYNC");
  EXPECT_EQ(format_record(minimal_record(Op::kMark)), "10 mark text=phase%20x");
  EXPECT_EQ(format_record(full_record(Op::kMapSg)),
            "123456789 map_sg cpu=3 pid=4242 task=kworker/u16:3 dev=0000:01:00.0 sid=7 asid=5 dir=from_device "
            "rw=w iova=0xffff0000 pa=0x80001000 size=8192 segs=0x80001000:4096,0x80005000:4096");
}

TEST(DmaTraceRecord, ParseAcceptsAnyFieldOrderAndBothNumberBases) {
  const Record r = parse_record("  42 map size=0x1000 pa=2147487744 iova=4096 dir=to_device cpu=1  ");
  EXPECT_EQ(r.time_ns, 42u);
  EXPECT_EQ(r.op, Op::kMap);
  EXPECT_EQ(r.size, 0x1000u);
  EXPECT_EQ(r.pa, 0x80001000u);
  EXPECT_EQ(r.iova, 0x1000u);
  EXPECT_EQ(r.dir, Dir::kToDevice);
  EXPECT_EQ(r.cpu, 1);
  EXPECT_EQ(r.sid, kNoSid);
  const Record sg = parse_record("1 map_sg iova=0 size=0x3000 segs=0x1000:0x1000,8192:8192");
  ASSERT_EQ(sg.segs.size(), 2u);
  EXPECT_EQ(sg.segs[0], (Segment{0x1000, 0x1000}));
  EXPECT_EQ(sg.segs[1], (Segment{8192, 8192}));
  EXPECT_TRUE(parse_record("1 unmap_sg iova=0 size=0 segs=").segs.empty());
}

TEST(DmaTraceRecord, UnknownKeysAreIgnored) {
  const Record r = parse_record("5 map iova=0x1000 size=64 color=blue future=1=2");
  EXPECT_EQ(r, parse_record("5 map iova=0x1000 size=64"));
}

TEST(DmaTraceRecord, ParseReusesTheRecordWithoutLeftovers) {
  Record r;
  parse_record(format_record(full_record(Op::kMapSg)), 1.0, r);
  parse_record("7 fault iova=0x10", 1.0, r);
  Record want;
  want.time_ns = 7;
  want.op = Op::kFault;
  want.iova = 0x10;
  EXPECT_EQ(r, want);
}

TEST(DmaTraceRecord, HugeValues) {
  const Record r = parse_record("18446744073709551615 map iova=0xffffffffffffffff size=18446744073709551615 "
                                "pa=0xFFFFFFFFFFFFFFFF");
  EXPECT_EQ(r.time_ns, ~0ull);
  EXPECT_EQ(r.iova, ~0ull);
  EXPECT_EQ(r.size, ~0ull);
  EXPECT_EQ(r.pa, ~0ull);
  // Leading zeros do not count towards the 64 bits.
  EXPECT_EQ(parse_record("0 map iova=0x0000ffffffffffffffff size=1").iova, ~0ull);
  // Required fields are written even at the "unknown" value, so this survives.
  EXPECT_EQ(parse_record(format_record(r)), r);
  for (const char* line : {"0 map iova=0x10000000000000000 size=1", "0 map iova=0 size=18446744073709551616",
                           "18446744073709551616 map iova=0 size=1"}) {
    SCOPED_TRACE(line);
    EXPECT_THROW(parse_record(line), std::invalid_argument);
  }
  try {
    parse_record("0 map iova=0 size=0x10000000000000000");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("field 'size'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("too large"), std::string::npos) << e.what();
  }
  // Narrower fields have their own limits.
  EXPECT_EQ(parse_record("0 attach sid=4294967295 asid=4294967295").asid, 0xffffffffu);
  EXPECT_THROW(parse_record("0 attach sid=4294967296"), std::invalid_argument);
  EXPECT_THROW(parse_record("0 attach sid=1 cpu=2147483648"), std::invalid_argument);
}

TEST(DmaTraceRecord, TimeUnitsRoundToNanoseconds) {
  constexpr double kPs = 0.001, kNs = 1.0, kUs = 1000.0;
  EXPECT_EQ(parse_record("1499 fault iova=0", kPs).time_ns, 1u);
  EXPECT_EQ(parse_record("1500 fault iova=0", kPs).time_ns, 2u);
  EXPECT_EQ(parse_record("2499.9 fault iova=0", kPs).time_ns, 2u);
  EXPECT_EQ(parse_record("123456789123456789 fault iova=0", kPs).time_ns, 123456789123457u);
  EXPECT_EQ(parse_record("2.5 fault iova=0", kNs).time_ns, 3u);
  EXPECT_EQ(parse_record("2.4999999999999 fault iova=0", kNs).time_ns, 2u);
  EXPECT_EQ(parse_record("1.5 fault iova=0", kUs).time_ns, 1500u);
  EXPECT_EQ(parse_record("0.0005 fault iova=0", kUs).time_ns, 1u);
  EXPECT_EQ(parse_record("0.0004 fault iova=0", kUs).time_ns, 0u);
  EXPECT_EQ(parse_record("20.25 fault iova=0", kUs).time_ns, 20250u);
  EXPECT_THROW(parse_record("18446744073709552 fault iova=0", kUs), std::invalid_argument);
  for (const char* bad : {"-1 fault iova=0", "1. fault iova=0", ".5 fault iova=0", "1e3 fault iova=0"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_record(bad), std::invalid_argument);
  }
}

TEST(DmaTraceRecord, StringsArePercentEncoded) {
  Record r = minimal_record(Op::kIommuMap);
  r.task = "my task=1,50%\t\x01";
  r.dev = "nic 0";
  r.text = "";
  const std::string line = format_record(r);
  EXPECT_NE(line.find(" task=my%20task%3D1%2C50%25%09%01"), std::string::npos) << line;
  EXPECT_NE(line.find(" dev=nic%200"), std::string::npos) << line;
  EXPECT_EQ(parse_record(line), r);
  // '/' and ':' stay as they are.
  r.task = "kworker/u16:3";
  EXPECT_NE(format_record(r).find(" task=kworker/u16:3 "), std::string::npos);
  EXPECT_EQ(parse_record("1 iommu_map iova=0 size=1 task=a%2fb").task, "a/b");
  // A command with an empty name still names the field (it is required).
  Record c = minimal_record(Op::kCommand);
  c.text = "";
  EXPECT_EQ(format_record(c), "10 command cmd=");
  EXPECT_EQ(parse_record(format_record(c)), c);
}

// ---- Reader: the format's lines -------------------------------------------

TEST_F(TraceFileTest, CommentsBlankLinesAndNoFinalNewline) {
  const std::string p = write_text("t.trace",
                                   "\n  \nsmmu-vp-trace 1 ns\n# a comment\n\n   # indented comment\n"
                                   "1 fault iova=0x1\n\t\n2 fault iova=0x2");
  TraceReader reader(p);
  Record r;
  ASSERT_TRUE(reader.next(r));
  EXPECT_EQ(r.iova, 1u);
  EXPECT_EQ(reader.line(), 7u);
  ASSERT_TRUE(reader.next(r));
  EXPECT_EQ(r.iova, 2u);
  EXPECT_EQ(reader.line(), 9u);
  EXPECT_FALSE(reader.next(r));
  EXPECT_FALSE(reader.next(r));
}

TEST_F(TraceFileTest, CrlfAndTrailingWhitespace) {
  const std::string p = write_text("t.trace",
                                   "smmu-vp-trace 1 us\r\n# windows\r\n1.5 map iova=0x10 size=4 \t\r\n\r\n"
                                   "2 access sid=1 rw=w iova=0x20 size=8\r\n");
  const std::vector<Record> recs = read_all(p);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].time_ns, 1500u);
  EXPECT_EQ(recs[0].size, 4u);
  EXPECT_EQ(recs[1].time_ns, 2000u);
  EXPECT_TRUE(recs[1].write);
  EXPECT_EQ(recs[1].size, 8u);
}

TEST_F(TraceFileTest, HeaderTimeUnits) {
  EXPECT_EQ(read_all(write_text("ps.trace", "smmu-vp-trace 1 ps\n2500 fault iova=0\n"))[0].time_ns, 3u);
  EXPECT_EQ(read_all(write_text("ns.trace", "smmu-vp-trace 1 ns\n2500 fault iova=0\n"))[0].time_ns, 2500u);
  EXPECT_EQ(read_all(write_text("us.trace", "smmu-vp-trace  1\tus\n2500 fault iova=0\n"))[0].time_ns, 2500000u);
}

struct BadLine {
  const char* line;
  const char* field;  // the message must name it
};

const BadLine kBadLines[] = {
    {"10 map iova=0x1000 size=abc", "size"},
    {"10 map iova=0x1000", "size"},
    {"10 map size=4096", "iova"},
    {"10 map iova=0x size=1", "iova"},
    {"10 map iova=0x10000000000000000 size=1", "iova"},
    {"10 map iova=0x1000 size=1 size=2", "size"},
    {"10 map iova=0x1000 size=1 dir=sideways", "dir"},
    {"10 access sid=1 iova=0x1000 size=64", "rw"},
    {"10 access sid=1 iova=0x1000 size=64 rw=x", "rw"},
    {"10 access iova=0x1000 size=64 rw=r", "sid"},
    {"10 frobnicate iova=0x1000", "op"},
    {"10", "op"},
    {"abc map iova=0 size=1", "time"},
    {"-5 map iova=0 size=1", "time"},
    {"10 attach", "sid"},
    {"10 attach sid=4294967296", "sid"},
    {"10 command", "cmd"},
    {"10 fault", "iova"},
    {"10 map iova=0x1000 size=1 junk", "junk"},
    {"10 map_sg iova=0 size=1 segs=0x1000", "segs"},
    {"10 map_sg iova=0 size=1 segs=0x1000:1,,0x2000:1", "segs"},
    {"10 map iova=0x1000 size=1 task=a%zz", "task"},
    {"10 map iova=0x1000 size=1 cpu=-1", "cpu"},
};

TEST_F(TraceFileTest, MalformedLinesNameLineAndField) {
  for (const BadLine& bad : kBadLines) {
    SCOPED_TRACE(bad.line);
    const TraceError e = read_error(std::string("smmu-vp-trace 1 ns\n# c\n1 fault iova=0\n") + bad.line + "\n");
    EXPECT_EQ(e.line(), 4u);
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.trace:4: "), std::string::npos) << what;
    EXPECT_NE(what.find(std::string("field '") + bad.field + "'"), std::string::npos) << what;
  }
}

TEST_F(TraceFileTest, SkipMalformedCountsAndContinues) {
  std::string text = "smmu-vp-trace 1 ns\n";
  uint64_t good = 0;
  for (const BadLine& bad : kBadLines) {
    text += bad.line;
    text += "\n";
    text += std::to_string(good) + " fault iova=0x" + std::to_string(good) + "\n";
    ++good;
  }
  const std::string p = write_text("skip.trace", text);
  TraceReader reader(p, ReaderOptions{true});
  std::vector<Record> recs;
  Record r;
  while (reader.next(r)) recs.push_back(r);
  EXPECT_EQ(reader.malformed_skipped(), std::size(kBadLines));
  ASSERT_EQ(recs.size(), good);
  for (uint64_t i = 0; i < good; ++i) EXPECT_EQ(recs[i].time_ns, i);
  // Without the option the first bad line (line 2) stops the reading.
  EXPECT_EQ(read_error(text).line(), 2u);
}

// ---- Reader: headers and files --------------------------------------------

TEST_F(TraceFileTest, HeaderErrors) {
  struct Case {
    const char* text;
    uint64_t line;
    const char* says;
  };
  const Case cases[] = {
      {"", 1, "empty file"},
      {"0 map iova=0 size=1\n", 1, "not an smmu-vp-trace file"},
      {"# a comment first\nsmmu-vp-trace 1 ns\n", 1, "not an smmu-vp-trace file"},
      {"smmu-vp-trace\n", 1, "not an smmu-vp-trace file"},
      {"smmu-vp-trace 1 ns extra\n", 1, "not an smmu-vp-trace file"},
      {"smmu-vp-trace one ns\n", 1, "bad version"},
      {"smmu-vp-trace 2 ns\n0 fault iova=0\n", 1, "version 2 is not supported: this build reads version 1"},
      {"smmu-vp-trace 1 ms\n", 1, "unknown time unit 'ms'"},
      {"smmu-vp-trace 1 NS\n", 1, "unknown time unit 'NS'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const TraceError e = read_error(c.text);
    EXPECT_EQ(e.line(), c.line);
    EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
  }
}

TEST_F(TraceFileTest, BinaryGarbageIsAHeaderError) {
  std::string junk;
  uint32_t x = 12345;
  for (int i = 0; i < 100000; ++i) {
    x = x * 1103515245u + 12345u;
    junk += static_cast<char>(x >> 24);
  }
  junk[0] = '\x7f';  // not a gzip magic, not our header
  const TraceError e = read_error(junk);
  EXPECT_EQ(e.line(), 1u);
  EXPECT_NE(std::string(e.what()).find("not an smmu-vp-trace file"), std::string::npos) << e.what();
}

TEST_F(TraceFileTest, MissingFile) {
  const std::string p = path("no/such/file.trace");
  try {
    TraceReader reader(p);
    FAIL() << "opened a missing file";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.line(), 0u);
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
}

// ---- Writer and reader together -------------------------------------------

std::vector<Record> many_records(size_t n) {
  std::vector<Record> out;
  for (size_t i = 0; i < n; ++i) {
    Record r = i % 3 ? minimal_record(op_at(static_cast<unsigned>(i % kOpCount)))
                     : full_record(op_at(static_cast<unsigned>(i % kOpCount)));
    r.time_ns = i * 37;
    r.iova = i << 12;
    out.push_back(r);
  }
  return out;
}

TEST_F(TraceFileTest, PlainWriteReadBackAcrossBlocks) {
  // ~6 MB: lines straddle the reader's 1 MiB blocks and the writer's flushes.
  const std::vector<Record> recs = many_records(60000);
  const std::string p = path("plain.trace");
  {
    TraceWriter w(p);
    w.comment("written by dma_trace_test\nsecond line");
    for (const Record& r : recs) w.write(r);
    EXPECT_EQ(w.records(), recs.size());
    w.close();
    w.close();  // idempotent
    EXPECT_THROW(w.write(recs[0]), TraceError);
  }
  std::ifstream in(p);
  std::string first, second, third;
  std::getline(in, first);
  std::getline(in, second);
  std::getline(in, third);
  EXPECT_EQ(first, "smmu-vp-trace 1 ns");
  EXPECT_EQ(second, "# written by dma_trace_test");
  EXPECT_EQ(third, "# second line");
  EXPECT_GT(fs::file_size(p), 3u << 20);
  const std::vector<Record> back = read_all(p);
  ASSERT_EQ(back.size(), recs.size());
  for (size_t i = 0; i < recs.size(); ++i) ASSERT_EQ(back[i], recs[i]) << "record " << i;
}

TEST_F(TraceFileTest, GzipWriteReadBack) {
  const std::vector<Record> recs = many_records(20000);
  const std::string p = path("z.trace.gz");
  {
    TraceWriter w(p);  // closed by the destructor
    for (const Record& r : recs) w.write(r);
  }
  std::ifstream in(p, std::ios::binary);
  char magic[2] = {};
  in.read(magic, 2);
  EXPECT_EQ(static_cast<unsigned char>(magic[0]), 0x1fu);
  EXPECT_EQ(static_cast<unsigned char>(magic[1]), 0x8bu);
  EXPECT_EQ(read_all(p), recs);
  // The reader finds gzip by its content, not the name.
  const std::string renamed = path("z.trace");
  fs::copy_file(p, renamed);
  EXPECT_EQ(read_all(renamed).size(), recs.size());
}

// ReaderOptions::block_bytes: small blocks (and a request below the 4 KiB
// floor) read the same records, plain and gzip, with lines straddling blocks.
TEST_F(TraceFileTest, SmallBlocksReadTheSameRecords) {
  const std::vector<Record> recs = many_records(3000);
  for (const std::string name : {"small.trace", "small.trace.gz"}) {
    const std::string p = path(name);
    {
      TraceWriter w(p);
      for (const Record& r : recs) w.write(r);
    }
    ReaderOptions small;
    small.block_bytes = 4096;
    EXPECT_EQ(read_all(p, small), recs) << name;
    small.block_bytes = 1;  // clamped to 4096
    EXPECT_EQ(read_all(p, small), recs) << name;
  }
}

TEST_F(TraceFileTest, TruncatedGzipIsAnError) {
  const std::string p = path("cut.trace.gz");
  {
    TraceWriter w(p);
    for (const Record& r : many_records(20000)) w.write(r);
  }
  const uintmax_t full = fs::file_size(p);
  for (uintmax_t keep : {full / 2, full - 4}) {
    SCOPED_TRACE(keep);
    const std::string cut = path("cut_copy.trace.gz");
    fs::remove(cut);
    fs::copy_file(p, cut);
    fs::resize_file(cut, keep);
    uint64_t n = 0;
    try {
      TraceReader reader(cut);
      Record r;
      while (reader.next(r)) ++n;
      FAIL() << "read " << n << " records from a truncated file without an error";
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
      // The records before the cut were delivered; the error names the cut line.
      EXPECT_GT(n, 1000u);
      EXPECT_EQ(e.line(), n + 2) << e.what();
    }
  }
}

TEST_F(TraceFileTest, WriterCannotOpen) {
  EXPECT_THROW(TraceWriter{path("no/such/dir/x.trace")}, TraceError);
  EXPECT_THROW(TraceWriter{path("no/such/dir/x.trace.gz")}, TraceError);
}

// ---- Markers --------------------------------------------------------------

TEST(DmaTraceMark, TextIsEscapedAndRoundTrips) {
  Record r;
  r.time_ns = 5;
  r.op = Op::kMark;
  r.text = "phase a=b, 100% done\t";
  const std::string line = format_record(r);
  EXPECT_EQ(line, "5 mark text=phase%20a%3Db%2C%20100%25%20done%09");
  EXPECT_EQ(parse_record(line), r);
  // An empty marker is a marker still.
  r.text.clear();
  EXPECT_EQ(format_record(r), "5 mark text=");
  EXPECT_EQ(parse_record("5 mark text="), r);
}

TEST(DmaTraceMark, NeedsTextAndTakesOneOfCmdAndText) {
  const auto error_of = [](const std::string& line) -> std::string {
    try {
      parse_record(line);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error_of("5 mark"), "field 'text': missing (required for mark)");
  EXPECT_EQ(error_of("5 mark cmd=x"), "field 'text': missing (required for mark)");
  EXPECT_EQ(error_of("5 mark text=a cmd=b"), "field 'cmd': given with cmd= and text= (one of them)");
  EXPECT_EQ(error_of("5 command cmd=a text=b"), "field 'text': given with cmd= and text= (one of them)");
  EXPECT_EQ(error_of("5 command text=CMD_SYNC"), "field 'cmd': missing (required for command)");
  EXPECT_EQ(error_of("5 mark text=a%2"), "field 'text': bad percent escape in 'a%2'");
}

TEST_F(TraceFileTest, MarkRecordsRoundTripThroughWriterAndReader) {
  for (const char* name : {"m.trace", "m.trace.gz"}) {
    std::vector<Record> in;
    for (const char* text : {"phase one", "not a phase", "phase two"}) {
      Record r;
      r.time_ns = 100 * (in.size() + 1);
      r.op = Op::kMark;
      r.cpu = 1;
      r.pid = 7;
      r.task = "init";
      r.text = text;
      in.push_back(r);
      in.push_back(minimal_record(Op::kMap));
    }
    {
      TraceWriter w(path(name));
      for (const Record& r : in) w.write(r);
    }
    EXPECT_EQ(read_all(path(name)), in) << name;
  }
}

// ---- The shipped examples -------------------------------------------------

TEST(DmaTraceExamples, EveryOpHasAnExampleThatParses) {
  const fs::path dir = fs::path(SMMU_VP_SOURCE_DIR) / "traces" / "examples";
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.insert(entry.path().filename().string());
  for (unsigned i = 0; i < kOpCount; ++i) {
    const std::string name = std::string(op_name(op_at(i))) + ".trace";
    SCOPED_TRACE(name);
    ASSERT_EQ(files.count(name), 1u);
    files.erase(name);
    TraceReader reader((dir / name).string());
    Record r;
    unsigned n = 0;
    while (reader.next(r)) {
      ++n;
      EXPECT_EQ(r.op, op_at(i));
      EXPECT_EQ(parse_record(format_record(r)), r);
    }
    EXPECT_GE(n, 1u);
    EXPECT_LE(n, 3u);
    // Each example has a comment saying what it shows.
    std::ifstream in(dir / name);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("\n# "), std::string::npos);
  }
  EXPECT_TRUE(files.empty()) << "unexpected file in traces/examples: " << *files.begin();
}

}  // namespace
}  // namespace smmu_vp::dmatrace

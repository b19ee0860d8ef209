// TraceWriter: the Chrome/Perfetto JSON trace. The file must parse, and
// timestamps must keep picosecond precision in their microsecond units.
#include "output/trace_writer.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace smmu_vp {
namespace {

using nlohmann::json;

class TraceWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = ::testing::TempDir() + "trace_writer_" + info->name() + "_" + std::to_string(getpid()) + ".json";
  }
  void TearDown() override { std::remove(path_.c_str()); }

  std::string text() const {
    std::ifstream in(path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  json events() const {
    const json doc = json::parse(text());  // throws (fails the test) if not valid JSON
    EXPECT_EQ(doc.at("displayTimeUnit"), "ns");
    return doc.at("traceEvents");
  }

  std::string path_;
};

TEST_F(TraceWriterTest, EmptyTraceIsValidJson) {
  {
    TraceWriter w(path_);
    EXPECT_EQ(w.events(), 1u);  // the process name
  }  // the destructor closes it
  const json ev = events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0]["ph"], "M");
  EXPECT_EQ(ev[0]["name"], "process_name");
  EXPECT_EQ(ev[0]["pid"], 1);
  EXPECT_EQ(ev[0]["args"]["name"], "smmu-vp");
}

TEST_F(TraceWriterTest, SpansInstantsAndThreadNames) {
  TraceWriter w(path_);
  w.span("cpu0", "dma_copy", 1234567, 2000000, {{"bytes", 65536}});
  w.instant("intc", "wired irq 32", 5000, {{"line", 32}});
  w.span("cpu0", "spin", 0, 1, {});
  w.close();
  EXPECT_EQ(w.events(), 6u);  // process name, two thread names, three events

  const json ev = events();
  ASSERT_EQ(ev.size(), 6u);
  // A track gets a thread-name record before its first event ...
  EXPECT_EQ(ev[1]["ph"], "M");
  EXPECT_EQ(ev[1]["name"], "thread_name");
  EXPECT_EQ(ev[1]["tid"], 1);
  EXPECT_EQ(ev[1]["args"]["name"], "cpu0");

  EXPECT_EQ(ev[2]["ph"], "X");
  EXPECT_EQ(ev[2]["pid"], 1);
  EXPECT_EQ(ev[2]["tid"], 1);
  EXPECT_EQ(ev[2]["name"], "dma_copy");
  EXPECT_DOUBLE_EQ(ev[2]["ts"].get<double>(), 1.234567);  // us
  EXPECT_DOUBLE_EQ(ev[2]["dur"].get<double>(), 2.0);
  EXPECT_EQ(ev[2]["args"]["bytes"], 65536);

  EXPECT_EQ(ev[3]["name"], "thread_name");
  EXPECT_EQ(ev[3]["tid"], 2);
  EXPECT_EQ(ev[3]["args"]["name"], "intc");

  EXPECT_EQ(ev[4]["ph"], "i");
  EXPECT_EQ(ev[4]["s"], "t");  // thread-scoped instant
  EXPECT_EQ(ev[4]["tid"], 2);
  EXPECT_EQ(ev[4]["name"], "wired irq 32");
  EXPECT_DOUBLE_EQ(ev[4]["ts"].get<double>(), 0.005);
  EXPECT_EQ(ev[4]["args"]["line"], 32);
  EXPECT_FALSE(ev[4].contains("dur"));

  // ... and only once: the second cpu0 span reuses tid 1.
  EXPECT_EQ(ev[5]["ph"], "X");
  EXPECT_EQ(ev[5]["tid"], 1);
  EXPECT_DOUBLE_EQ(ev[5]["ts"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(ev[5]["dur"].get<double>(), 0.000001);
  EXPECT_TRUE(ev[5]["args"].is_object());
  EXPECT_TRUE(ev[5]["args"].empty());
}

// Timestamps are written as decimal text with six fractional digits, so no
// picosecond is lost even where a double could not hold the value.
TEST_F(TraceWriterTest, TimestampsKeepPicosecondPrecision) {
  TraceWriter w(path_);
  w.span("t", "a", 1234567, 1, {});
  w.span("t", "b", 123456789012345678ull, 999999, {});
  w.instant("t", "c", 1000000, {});
  w.instant("t", "d", 7, {});
  w.close();
  const std::string t = text();
  EXPECT_NE(t.find("\"ts\":1.234567,"), std::string::npos) << t;
  EXPECT_NE(t.find("\"dur\":0.000001,"), std::string::npos) << t;
  EXPECT_NE(t.find("\"ts\":123456789012.345678,"), std::string::npos) << t;
  EXPECT_NE(t.find("\"dur\":0.999999,"), std::string::npos) << t;
  EXPECT_NE(t.find("\"ts\":1.000000,"), std::string::npos) << t;
  EXPECT_NE(t.find("\"ts\":0.000007,"), std::string::npos) << t;
  EXPECT_NO_THROW(json::parse(t));
}

TEST_F(TraceWriterTest, NamesAreEscaped) {
  TraceWriter w(path_);
  const std::string track = "dev \"q\"\\0";
  const std::string name = "line\nbreak\ttab";
  w.instant(track, name, 1, {{"k\"ey", 1}});
  w.close();
  const json ev = events();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[1]["args"]["name"], track);
  EXPECT_EQ(ev[2]["name"], name);
  EXPECT_EQ(ev[2]["args"]["k\"ey"], 1);
}

TEST_F(TraceWriterTest, ManyTracksGetDistinctTids) {
  TraceWriter w(path_);
  for (int round = 0; round < 3; ++round)
    for (int t = 0; t < 10; ++t) w.span("track" + std::to_string(t), "e", 100 * round, 10, {});
  w.close();
  const json ev = events();
  std::map<std::string, int> tid_of;
  for (const auto& e : ev)
    if (e["name"] == "thread_name") tid_of[e["args"]["name"].get<std::string>()] = e["tid"].get<int>();
  ASSERT_EQ(tid_of.size(), 10u);
  std::set<int> tids;
  for (const auto& [track, tid] : tid_of) tids.insert(tid);
  EXPECT_EQ(tids.size(), 10u);
  // Every event's tid belongs to a named track.
  for (const auto& e : ev) {
    if (e["ph"] == "X") {
      EXPECT_EQ(tids.count(e["tid"].get<int>()), 1u);
    }
  }
}

TEST_F(TraceWriterTest, CloseIsIdempotentAndLaterEventsAreDropped) {
  TraceWriter w(path_);
  w.instant("a", "before", 1, {});
  w.close();
  w.close();
  w.instant("a", "after", 2, {});
  w.span("b", "after", 2, 3, {});
  const json ev = events();  // still valid JSON
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[2]["name"], "before");
}

// An open slice is written when it closes, as one complete event with the
// args of both ends; end() may rename it (a transfer that failed).
TEST_F(TraceWriterTest, BeginEndWritesOneCompleteEvent) {
  TraceWriter w(path_);
  const TraceSink::SliceId a = w.begin("dma0.ch0", "transfer", 1000000, {{"src", 7}});
  const TraceSink::SliceId b = w.begin("dma0.ch1", "transfer", 2000000, {});
  EXPECT_NE(a, 0u);
  EXPECT_NE(a, b);
  EXPECT_EQ(w.open_slices(), 2u);
  w.end(b, 2500000, {}, "transfer (error)");
  w.end(a, 4000000, {{"bytes", 64}}, "");
  w.end(a, 9000000, {}, "");  // closed already: ignored
  EXPECT_EQ(w.open_slices(), 0u);
  w.finish(10000000);  // nothing open: writes nothing
  w.close();
  const json ev = events();
  ASSERT_EQ(ev.size(), 5u);  // process, two thread names (given at begin), two slices
  EXPECT_EQ(ev[1]["args"]["name"], "dma0.ch0");
  EXPECT_EQ(ev[2]["args"]["name"], "dma0.ch1");
  EXPECT_EQ(ev[3]["ph"], "X");
  EXPECT_EQ(ev[3]["tid"], 2);
  EXPECT_EQ(ev[3]["name"], "transfer (error)");
  EXPECT_DOUBLE_EQ(ev[3]["dur"].get<double>(), 0.5);
  EXPECT_EQ(ev[4]["tid"], 1);
  EXPECT_EQ(ev[4]["name"], "transfer");
  EXPECT_DOUBLE_EQ(ev[4]["ts"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(ev[4]["dur"].get<double>(), 3.0);
  EXPECT_EQ(ev[4]["args"]["src"], 7);
  EXPECT_EQ(ev[4]["args"]["bytes"], 64);
  EXPECT_FALSE(ev[4]["args"].contains("unfinished"));
}

TEST_F(TraceWriterTest, DiscardedSliceIsNotWritten) {
  TraceWriter w(path_);
  const TraceSink::SliceId a = w.begin("cpu0", "wfe", 5, {});
  w.discard(a);
  w.end(a, 10, {}, "");
  w.finish(100);
  w.close();
  for (const auto& e : events()) EXPECT_NE(e["ph"], "X") << e.dump();
}

// finish() closes what is open at the run's end, in begin order, marked
// unfinished; a slice that began after the end gets no length.
TEST_F(TraceWriterTest, FinishClosesOpenSlicesAtTheEnd) {
  TraceWriter w(path_);
  w.begin("cpu0", "net_rx", 0, {});
  w.begin("cpu0", "wfe", 3000000, {});
  w.begin("cpu1", "late", 60000000, {});
  w.finish(50000000);
  EXPECT_EQ(w.open_slices(), 0u);
  w.finish(70000000);  // nothing left to close
  w.close();
  std::vector<json> x;
  for (const auto& e : events())
    if (e["ph"] == "X") x.push_back(e);
  ASSERT_EQ(x.size(), 3u);
  EXPECT_EQ(x[0]["name"], "net_rx");
  EXPECT_DOUBLE_EQ(x[0]["dur"].get<double>(), 50.0);
  EXPECT_EQ(x[1]["name"], "wfe");
  EXPECT_DOUBLE_EQ(x[1]["ts"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(x[1]["dur"].get<double>(), 47.0);
  EXPECT_EQ(x[2]["name"], "late");
  EXPECT_DOUBLE_EQ(x[2]["dur"].get<double>(), 0.0);
  for (const auto& e : x) EXPECT_EQ(e["args"]["unfinished"], 1);
}

// A core's own time may be ahead of the run's end: an open slice then
// reaches the end of what was written inside it, so the two still nest.
TEST_F(TraceWriterTest, FinishEnclosesSlicesEndingAfterTheEnd) {
  TraceWriter w(path_);
  w.begin("cpu0", "app", 0, {});
  w.span("cpu0", "irq 40", 900, 200, {});  // ends at 1100
  w.span("cpu1", "other", 0, 5000, {});    // another track: no effect
  w.finish(1000);
  w.close();
  for (const auto& e : events()) {
    if (e["ph"] == "X" && e["name"] == "app") {
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 0.0011);
    }
  }
}

TEST(TraceWriter, UncreatableFileThrows) {
  EXPECT_THROW(TraceWriter("/nonexistent-directory/for/sure/trace.json"), std::runtime_error);
}

}  // namespace
}  // namespace smmu_vp

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

TEST(TraceWriter, UncreatableFileThrows) {
  EXPECT_THROW(TraceWriter("/nonexistent-directory/for/sure/trace.json"), std::runtime_error);
}

}  // namespace
}  // namespace smmu_vp

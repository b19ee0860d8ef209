// The timeline (`run --trace`, traces/README.md "Timeline output"): what a
// viewer needs from trace.json. On every track slices nest or are disjoint
// (viewers draw one track as one stack); a run cut short still shows what was
// going on, closed at its end; a run without --trace leaves no stale file.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

using namespace cli_test;

namespace {

struct Slice {
  std::string name;
  double ts, end;  // us
  bool unfinished;
};

struct Timeline {
  std::map<std::string, std::vector<Slice>> tracks;  // by track name
};

Timeline read_timeline(const fs::path& trace_json) {
  const nlohmann::json doc = read_json(trace_json);
  std::map<int, std::string> names;
  for (const auto& e : doc.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == "thread_name") names[e.at("tid")] = e.at("args").at("name");
  Timeline t;
  std::map<std::string, int> open;  // "B"/"E" depth by track: they must pair
  for (const auto& e : doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "M") continue;
    EXPECT_TRUE(names.count(e.at("tid"))) << "event on an unnamed track: " << e.dump();
    const std::string track = names[e.at("tid")];
    if (ph == "B") ++open[track];
    if (ph == "E") {
      EXPECT_GE(--open[track], 0) << "E without B on " << track;
    }
    if (ph != "X") continue;
    const double ts = e.at("ts"), dur = e.at("dur");
    EXPECT_GE(dur, 0.0) << e.dump();
    t.tracks[track].push_back({e.at("name"), ts, ts + dur, e.at("args").value("unfinished", 0) == 1});
  }
  for (const auto& [track, depth] : open) EXPECT_EQ(depth, 0) << "unclosed B on " << track;
  return t;
}

// Slices partly overlapping on `track`, described (empty: none). Two slices
// may nest or be disjoint; touching ends count as disjoint.
std::vector<std::string> partial_overlaps(const std::string& track, std::vector<Slice> s) {
  // Outer before inner: by start, then longest first.
  std::sort(s.begin(), s.end(), [](const Slice& a, const Slice& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.end > b.end;
  });
  const double eps = 1e-7;  // well under the 1 ps the file resolves
  std::vector<const Slice*> stack;
  std::vector<std::string> bad;
  for (const Slice& x : s) {
    while (!stack.empty() && stack.back()->end <= x.ts + eps) stack.pop_back();
    if (!stack.empty() && x.end > stack.back()->end + eps)
      bad.push_back(track + ": " + x.name + " [" + std::to_string(x.ts) + ", " + std::to_string(x.end) +
                    "] partly overlaps " + stack.back()->name + " [" + std::to_string(stack.back()->ts) + ", " +
                    std::to_string(stack.back()->end) + "]");
    stack.push_back(&x);
  }
  return bad;
}

void expect_slices_nest(const Timeline& t) {
  for (const auto& [track, slices] : t.tracks) {
    const std::vector<std::string> bad = partial_overlaps(track, slices);
    EXPECT_TRUE(bad.empty()) << bad.size() << " partial overlaps, first: " << bad.front();
  }
}

size_t count(const Timeline& t, const std::string& track) {
  auto it = t.tracks.find(track);
  return it == t.tracks.end() ? 0 : it->second.size();
}

}  // namespace

// The checker itself, on made-up slices.
TEST(CliTimeline, PartialOverlapCheckerTellsNestingFromOverlap) {
  EXPECT_TRUE(partial_overlaps("t", {{"a", 0, 10, false}, {"b", 2, 5, false}, {"c", 5, 10, false}}).empty());
  EXPECT_TRUE(partial_overlaps("t", {{"a", 0, 1, false}, {"b", 1, 2, false}, {"c", 0, 0, false}}).empty());
  EXPECT_EQ(partial_overlaps("t", {{"a", 0, 10, false}, {"b", 5, 15, false}}).size(), 1u);
  EXPECT_EQ(partial_overlaps("t", {{"a", 0, 10, false}, {"b", 1, 3, false}, {"c", 2, 4, false}}).size(), 1u);
}

// The command queue's commands and SYNCs: one track per execution lane, one
// for SYNCs; before, a SYNC spanned the commands after it on one track.
TEST(CliTimeline, SmmuStressSlicesNestOnEveryTrack) {
  const fs::path d = temp_dir("timeline-stress");
  const Cmd r = sh("run " + kScenarios + "smmu_stress.json --set scenario.apps.0.params.iterations=20 --trace --quiet --out " +
                   d.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Timeline t = read_timeline(d / "trace.json");
  EXPECT_GT(count(t, "smmu.cmdq.lane0"), 0u);
  EXPECT_GT(count(t, "smmu.cmdq.sync"), 0u);
  EXPECT_EQ(count(t, "smmu.cmdq"), 0u);  // no slices there, only errors (instants)
  for (const auto& s : t.tracks.at("smmu.cmdq.sync")) EXPECT_EQ(s.name, "CMD_SYNC");
  for (const auto& s : t.tracks.at("smmu.cmdq.lane0")) EXPECT_NE(s.name, "CMD_SYNC");
  expect_slices_nest(t);
  // A completed run leaves nothing unfinished on the cores or the queue.
  for (const auto& [track, slices] : t.tracks)
    for (const auto& s : slices) EXPECT_FALSE(s.unfinished) << track << ": " << s.name;
}

TEST(CliTimeline, NicDefaultSlicesNestOnEveryTrack) {
  const fs::path d = temp_dir("timeline-nic");
  const Cmd r = sh("run " + kScenarios +
                   "default.json --set scenario.apps.0.params.warmup_us=100 --set scenario.apps.0.params.duration_us=100"
                   " --trace --quiet --out " + d.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Timeline t = read_timeline(d / "trace.json");
  EXPECT_GT(count(t, "cpu1"), 0u);
  EXPECT_GT(count(t, "smmu.cmdq.lane0"), 0u);
  expect_slices_nest(t);
}

// Cut short by the time limit, the run shows every core's program (and what
// it was doing) closed at the run's end and marked unfinished.
TEST(CliTimeline, TimeLimitedRunKeepsOpenSlicesClosedAtItsEnd) {
  const fs::path d = temp_dir("timeline-time-limit");
  const Cmd r = sh("run " + kScenarios + "default.json --set scenario.stop.max_time_us=50 --trace --quiet --out " +
                   d.string());
  ASSERT_EQ(r.exit_code, 4) << r.out;  // time limit
  const nlohmann::json stats = read_json(d / "stats.json");
  ASSERT_EQ(stats["run"]["status"], "time-limit");
  const double end_us = stats["run"]["simulated_time_ns"].get<double>() / 1000.0;
  const Timeline t = read_timeline(d / "trace.json");
  unsigned programs = 0;
  for (const auto& core : stats["run"]["cores"]) {
    const std::string track = "cpu" + std::to_string(core["cpu"].get<unsigned>());
    ASSERT_TRUE(t.tracks.count(track)) << track;
    bool found = false;
    for (const auto& s : t.tracks.at(track)) {
      if (s.name != core["app"]) continue;
      found = true;
      EXPECT_TRUE(s.unfinished) << track;
      EXPECT_NEAR(s.end, end_us, 1e-6) << track;
    }
    EXPECT_TRUE(found) << track << " has no " << core["app"] << " slice";
    ++programs;
  }
  EXPECT_GT(programs, 0u);
  expect_slices_nest(t);
}

// trace.json is this run's timeline or absent: never an earlier run's.
TEST(CliTimeline, RunWithoutTraceRemovesAStaleTraceFile) {
  const fs::path d = temp_dir("timeline-stale");
  const std::string run = "run " + kScenarios + "smmu_stress.json --set scenario.apps.0.params.iterations=2 --quiet --out " +
                          d.string();
  ASSERT_EQ(sh(run + " --trace").exit_code, 0);
  ASSERT_TRUE(fs::exists(d / "trace.json"));
  ASSERT_EQ(sh(run).exit_code, 0);
  EXPECT_FALSE(fs::exists(d / "trace.json"));
  EXPECT_TRUE(fs::exists(d / "stats.json"));
  // Nothing to remove is no error either.
  EXPECT_EQ(sh(run).exit_code, 0);
}

#include "output/trace_writer.h"

#include <algorithm>
#include <cinttypes>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace smmu_vp {

namespace {
// Trace timestamps are microseconds; picosecond resolution needs 6 decimals.
std::string us(Ps ps) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%06" PRIu64, ps / 1000000, ps % 1000000);
  return buf;
}

std::string args_json(const TraceArgs& args) {
  nlohmann::json a = nlohmann::json::object();
  for (const auto& [k, v] : args) a[k] = v;
  return a.dump();
}
}  // namespace

TraceWriter::TraceWriter(const std::string& path) : f_(std::fopen(path.c_str(), "w")) {
  if (!f_) throw std::runtime_error("cannot create trace file '" + path + "'");
  std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f_);
  event(R"({"ph":"M","pid":1,"name":"process_name","args":{"name":"smmu-vp"}})");
}

TraceWriter::~TraceWriter() { close(); }

void TraceWriter::close() {
  if (!f_) return;
  std::fputs("\n]}\n", f_);
  std::fclose(f_);
  f_ = nullptr;
}

void TraceWriter::event(const std::string& body) {
  if (!f_) return;
  if (!first_) std::fputs(",\n", f_);
  first_ = false;
  std::fputs(body.c_str(), f_);
  ++events_;
}

unsigned TraceWriter::tid(const std::string& track) {
  auto it = tracks_.find(track);
  if (it != tracks_.end()) return it->second;
  const unsigned id = static_cast<unsigned>(tracks_.size()) + 1;
  tracks_.emplace(track, id);
  track_end_.push_back(0);
  event(R"({"ph":"M","pid":1,"tid":)" + std::to_string(id) + R"(,"name":"thread_name","args":{"name":)" +
        nlohmann::json(track).dump() + "}}");
  return id;
}

void TraceWriter::complete(unsigned t, const std::string& name, Ps start, Ps duration, const TraceArgs& args) {
  Ps& last = track_end_[t - 1];
  last = std::max(last, start + duration);
  event(R"({"ph":"X","pid":1,"tid":)" + std::to_string(t) + R"(,"name":)" + nlohmann::json(name).dump() +
        R"(,"ts":)" + us(start) + R"(,"dur":)" + us(duration) + R"(,"args":)" + args_json(args) + "}");
}

void TraceWriter::span(const std::string& track, const std::string& name, Ps start, Ps duration,
                       const TraceArgs& args) {
  complete(tid(track), name, start, duration, args);
}

// Open slices are written as complete ("X") events when they close, like
// spans: viewers need not pair "B"/"E" events, and a slice never closed
// cannot leave an unmatched "B" behind.
TraceSink::SliceId TraceWriter::begin(const std::string& track, const std::string& name, Ps start,
                                      const TraceArgs& args) {
  const SliceId id = next_id_++;
  // The track gets its id (and name record) now, so tracks keep the order
  // in which their activity began.
  open_.emplace(id, Open{tid(track), name, start, args});
  return id;
}

void TraceWriter::end(SliceId id, Ps at, const TraceArgs& args, const std::string& name) {
  auto it = open_.find(id);
  if (it == open_.end()) return;
  Open& o = it->second;
  o.args.insert(o.args.end(), args.begin(), args.end());
  complete(o.tid, name.empty() ? o.name : name, o.start, at > o.start ? at - o.start : 0, o.args);
  open_.erase(it);
}

void TraceWriter::discard(SliceId id) { open_.erase(id); }

void TraceWriter::finish(Ps end) {
  for (auto& [id, o] : open_) {
    o.args.emplace_back("unfinished", 1);
    // A core's own time may run ahead of the kernel's (temporal
    // decoupling), so a slice inside this one may already end after `end`:
    // this one then reaches as far, to enclose it rather than cut it.
    const Ps at = std::max(end, track_end_[o.tid - 1]);
    complete(o.tid, o.name, o.start, at > o.start ? at - o.start : 0, o.args);
  }
  open_.clear();
}

void TraceWriter::instant(const std::string& track, const std::string& name, Ps at, const TraceArgs& args) {
  const unsigned t = tid(track);
  event(R"({"ph":"i","s":"t","pid":1,"tid":)" + std::to_string(t) + R"(,"name":)" + nlohmann::json(name).dump() +
        R"(,"ts":)" + us(at) + R"(,"args":)" + args_json(args) + "}");
}

}  // namespace smmu_vp

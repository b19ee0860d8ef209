// Writes TraceSink events to a file in the Chrome/Perfetto JSON trace format
// (one process, one thread per track), streaming so long runs stay small in
// memory (only slices still open are held). Load the file in ui.perfetto.dev or chrome://tracing.
#pragma once

#include <cstddef>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "common/trace.h"

namespace smmu_vp {

class TraceWriter : public TraceSink {
 public:
  // Throws std::runtime_error when the file cannot be created.
  explicit TraceWriter(const std::string& path);
  ~TraceWriter() override;
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void span(const std::string& track, const std::string& name, Ps start, Ps duration,
            const TraceArgs& args) override;
  void instant(const std::string& track, const std::string& name, Ps at, const TraceArgs& args) override;
  SliceId begin(const std::string& track, const std::string& name, Ps start, const TraceArgs& args) override;
  void end(SliceId id, Ps at, const TraceArgs& args, const std::string& name) override;
  void discard(SliceId id) override;
  void finish(Ps end) override;
  size_t open_slices() const { return open_.size(); }
  // Writes the closing bracket; called by the destructor if not before.
  void close();
  uint64_t events() const { return events_; }

 private:
  struct Open {
    unsigned tid;
    std::string name;
    Ps start;
    TraceArgs args;
  };
  unsigned tid(const std::string& track);
  void event(const std::string& body);
  void complete(unsigned tid, const std::string& name, Ps start, Ps duration, const TraceArgs& args);

  std::FILE* f_;
  std::map<std::string, unsigned> tracks_;
  // Open slices by id; ordered so that finish() writes them in begin order.
  std::map<SliceId, Open> open_;
  std::vector<Ps> track_end_;  // by tid - 1: the latest end of a slice written there
  SliceId next_id_ = 1;
  uint64_t events_ = 0;
  bool first_ = true;
};

}  // namespace smmu_vp

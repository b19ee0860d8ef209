// Writes TraceSink events to a file in the Chrome/Perfetto JSON trace format
// (one process, one thread per track), streaming so long runs stay small in
// memory. Load the file in ui.perfetto.dev or chrome://tracing.
#pragma once

#include <cstdio>
#include <map>
#include <string>

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
  // Writes the closing bracket; called by the destructor if not before.
  void close();
  uint64_t events() const { return events_; }

 private:
  unsigned tid(const std::string& track);
  void event(const std::string& body);

  std::FILE* f_;
  std::map<std::string, unsigned> tracks_;
  uint64_t events_ = 0;
  bool first_ = true;
};

}  // namespace smmu_vp

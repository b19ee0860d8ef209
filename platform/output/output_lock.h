// The output directory of a run, held for that run alone: a lock file
// (.smmu-vp.lock, flock) that a second run with the same --out finds taken.
// flock is released whenever the process ends, however it ends.
#pragma once

#include <filesystem>
#include <string>

namespace smmu_vp {

class OutputLock {
 public:
  // Takes the lock on `dir` (which must exist); held() says whether it did,
  // error() why not (in use by another run, naming its pid, or unopenable).
  explicit OutputLock(const std::filesystem::path& dir);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  bool held() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

}  // namespace smmu_vp

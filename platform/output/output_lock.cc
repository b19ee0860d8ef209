#include "output/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace smmu_vp {

OutputLock::OutputLock(const std::filesystem::path& dir) {
  const std::string path = (dir / ".smmu-vp.lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) {
    error_ = "cannot open " + path + ": " + std::strerror(errno);
    return;
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char owner[32] = {};
    const ssize_t n = ::pread(fd_, owner, sizeof owner - 1, 0);
    error_ = "output directory '" + dir.string() + "' is in use by another run" +
             (n > 0 ? std::string(" (pid ") + std::string(owner, static_cast<size_t>(n)) + ")" : std::string()) +
             ": wait for it, or give another --out";
    ::close(fd_);
    fd_ = -1;
    return;
  }
  // Who holds it, for the message above: a courtesy, not part of the lock.
  const std::string pid = std::to_string(getpid());
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
}

OutputLock::~OutputLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace smmu_vp

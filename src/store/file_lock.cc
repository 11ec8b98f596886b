#include "store/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace gfp::store {
namespace {

// Reads the pid the holder wrote, or returns an empty string if it is not readable.
std::string ReadHolderPid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return {};
  std::string text(buf, static_cast<std::size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return {};
  return text;
}

}  // namespace

std::filesystem::path WriterLock::LockPathFor(const std::filesystem::path& journal_path) {
  std::filesystem::path p = journal_path;
  p += ".lock";
  return p;
}

Result<WriterLock> WriterLock::Acquire(const std::filesystem::path& journal_path) {
  const std::filesystem::path lock_path = LockPathFor(journal_path);
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return FailedPrecondition("cannot open lock file " + lock_path.string() + " of journal " +
                              journal_path.string() + ": " + std::strerror(errno));
  }
  WriterLock lock(fd);  // closes fd on every error path below
  if (::fchmod(fd, 0600) != 0) {
    return FailedPrecondition("cannot set mode 0600 on lock file " + lock_path.string() + ": " +
                              std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      return FailedPrecondition("cannot lock " + lock_path.string() + ": " + std::strerror(errno));
    }
    const std::string pid = ReadHolderPid(fd);
    return AlreadyExists(
        "journal " + journal_path.string() + " is already open for writing by another process" +
        (pid.empty() ? std::string() : " (pid " + pid + ")") +
        "; only one writer may use a journal (lock file " + lock_path.string() + ")");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  // The pid is only a hint for the message above; failing to write it is not an error.
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t n = ::pwrite(fd, pid.data(), pid.size(), 0);
  }
  return lock;
}

WriterLock::WriterLock(WriterLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

WriterLock& WriterLock::operator=(WriterLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

WriterLock::~WriterLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace gfp::store

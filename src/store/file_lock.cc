#include "store/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "store/file_permissions.h"

namespace gfp::store {
namespace {

std::string Errno() { return std::strerror(errno); }

// What kind of non-regular file st describes, for messages.
const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "a special file";
}

Status RefuseKind(const std::filesystem::path& path, mode_t mode) {
  return FailedPrecondition("journal " + path.string() + " is " + KindOf(mode) +
                            ", not a regular file; refusing it");
}

// The pid of a process holding an flock on (dev, ino) according to /proc/locks, or "".
// Lines look like: "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF".
std::string FlockHolderPid(dev_t dev, ino_t ino) {
  std::ifstream in("/proc/locks");
  char wanted[64];
  std::snprintf(wanted, sizeof(wanted), "%02x:%02x:%llu", major(dev), minor(dev),
                static_cast<unsigned long long>(ino));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, kind, advisory, access, pid, file;
    fields >> id >> kind;
    if (kind == "->") fields >> kind;  // a waiter, listed under the holder
    fields >> advisory >> access >> pid >> file;
    if (kind == "FLOCK" && file == wanted) return pid;
  }
  return {};
}

// Opens the existing journal file without following a link and without blocking.
Result<int> OpenExisting(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP) return RefuseKind(path, S_IFLNK);
    return FailedPrecondition("cannot open journal " + path.string() + ": " + Errno());
  }
  return fd;
}

// Creates the journal file (0600 whatever the umask); -1 with errno EEXIST if it appeared.
Result<int> CreateNew(const std::filesystem::path& path) {
  GFP_RETURN_IF_ERROR(EnsurePrivateDirectory(path.parent_path()));
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return -1;
    return FailedPrecondition("cannot create journal " + path.string() + ": " + Errno());
  }
  return fd;
}

}  // namespace

Status CheckJournalFileType(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFound("journal " + path.string() + " does not exist");
    return FailedPrecondition("cannot inspect journal " + path.string() + ": " + Errno());
  }
  if (!S_ISREG(st.st_mode)) return RefuseKind(path, st.st_mode);
  return Status::Ok();
}

Result<WriterLock> WriterLock::Acquire(const std::filesystem::path& journal_path) {
  const std::string name = journal_path.string();
  struct stat st {};
  bool created = false;
  int fd = -1;
  if (::lstat(journal_path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return RefuseKind(journal_path, st.st_mode);
  } else if (errno == ENOENT) {
    GFP_ASSIGN_OR_RETURN(fd, CreateNew(journal_path));
    created = fd >= 0;
  } else {
    return FailedPrecondition("cannot inspect journal " + name + ": " + Errno());
  }
  if (fd < 0) {
    GFP_ASSIGN_OR_RETURN(fd, OpenExisting(journal_path));
  }
  WriterLock lock(fd, created, 0);  // closes fd on every error path below
  if (::fstat(fd, &st) != 0) {
    return FailedPrecondition("cannot inspect journal " + name + ": " + Errno());
  }
  if (!S_ISREG(st.st_mode)) return RefuseKind(journal_path, st.st_mode);  // swapped meanwhile
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      return FailedPrecondition("cannot lock journal " + name + ": " + Errno());
    }
    const std::string pid = FlockHolderPid(st.st_dev, st.st_ino);
    return AlreadyExists("journal " + name + " is already open for writing by another process" +
                         (pid.empty() ? std::string() : " (pid " + pid + ")") +
                         "; only one writer may use a journal (the lock is on the file itself, "
                         "so a hard link to it is the same journal)");
  }
  if ((st.st_mode & 07777) != 0600 && ::fchmod(fd, 0600) != 0) {
    return FailedPrecondition("cannot set mode 0600 on journal " + name + ": " + Errno());
  }
  lock.size_at_lock_ = static_cast<std::uint64_t>(st.st_size);
  return lock;
}

WriterLock::WriterLock(WriterLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      created_(other.created_),
      size_at_lock_(other.size_at_lock_) {}

WriterLock& WriterLock::operator=(WriterLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    created_ = other.created_;
    size_at_lock_ = other.size_at_lock_;
  }
  return *this;
}

WriterLock::~WriterLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace gfp::store

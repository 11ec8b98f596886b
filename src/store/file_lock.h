// One writer per journal: an exclusive, non-blocking flock on the journal file itself. The lock
// is on the inode, so a hard link or another path to the same file is the same lock; the kernel
// drops it when the process dies, so a crash never leaves a stale lock. flock and SQLite's POSIX
// (fcntl) locks do not interfere on Linux.
//
// The descriptor stays open for the lock's whole life on purpose: closing any descriptor of a
// file drops every POSIX lock this process holds on it, including SQLite's.
#pragma once

#include <cstdint>
#include <filesystem>

#include "common/status.h"

namespace gfp::store {

class WriterLock {
 public:
  // Checks the path first (lstat: a symbolic link, a directory, a FIFO or any other non-regular
  // file is refused before anything is created), then creates the parent directories (0700) and
  // the file (0600) only when no file exists, opens it without blocking (a FIFO swapped in at the
  // last moment cannot hang the open) and locks it. AlreadyExists at once (no waiting) when
  // another open file description holds the lock; the message names the holder's pid when
  // /proc/locks shows it.
  static Result<WriterLock> Acquire(const std::filesystem::path& journal_path);

  WriterLock(WriterLock&& other) noexcept;
  WriterLock& operator=(WriterLock&& other) noexcept;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  ~WriterLock();  // releases the lock

  // True when Acquire created the file (no file existed at the path).
  bool created() const { return created_; }
  // The file's size when it was locked (0 for a created file).
  std::uint64_t size_at_lock() const { return size_at_lock_; }
  // The locked file's descriptor (for /proc/<pid>/fd/<fd>: the file stays readable there after
  // it was deleted, as long as this process runs).
  int fd() const { return fd_; }

 private:
  WriterLock(int fd, bool created, std::uint64_t size)
      : fd_(fd), created_(created), size_at_lock_(size) {}
  int fd_ = -1;
  bool created_ = false;
  std::uint64_t size_at_lock_ = 0;
};

// Refuses what cannot be a journal file before SQLite touches it: a symbolic link (SQLite is
// told not to follow one), a directory, a FIFO (opening one would hang), a socket or a device;
// NotFound when nothing is there. Uses lstat only: no descriptor is opened (see above).
Status CheckJournalFileType(const std::filesystem::path& path);

}  // namespace gfp::store

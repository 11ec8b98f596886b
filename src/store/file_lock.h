// One writer per journal: an exclusive, non-blocking flock on "<journal>.lock". The kernel drops
// the lock when the process dies, so a crash never leaves a stale lock behind. The holder writes
// its pid into the file so a refused second writer can say who holds it.
#pragma once

#include <filesystem>

#include "common/status.h"

namespace gfp::store {

class WriterLock {
 public:
  // AlreadyExists at once (no waiting) when another open file description holds the lock.
  static Result<WriterLock> Acquire(const std::filesystem::path& journal_path);

  WriterLock(WriterLock&& other) noexcept;
  WriterLock& operator=(WriterLock&& other) noexcept;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  ~WriterLock();  // releases the lock; the lock file stays (removing it would race)

  static std::filesystem::path LockPathFor(const std::filesystem::path& journal_path);

 private:
  explicit WriterLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace gfp::store

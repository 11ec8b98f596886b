#include "store/scan_prefetch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <system_error>

namespace gfp::store {

std::unique_ptr<ScanPrefetch> ScanPrefetch::Start(const std::filesystem::path& file,
                                                  std::uint64_t last_seq, Options options) {
  if (last_seq == 0 || options.ahead <= 0 || options.chunk <= 0) return nullptr;
  // O_NONBLOCK: a FIFO put in the journal's place must not hang the listing here.
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
    ::close(fd);
    return nullptr;
  }
  std::unique_ptr<ScanPrefetch> prefetch(new ScanPrefetch(fd, st.st_size, last_seq, options));
  try {
    prefetch->thread_ = std::thread([p = prefetch.get()] { p->Run(); });
  } catch (const std::system_error&) {
    return nullptr;  // the destructor closes the file; there is no thread to stop
  }
  return prefetch;
}

ScanPrefetch::ScanPrefetch(int fd, off_t size, std::uint64_t last_seq, Options options)
    : fd_(fd), size_(size), last_seq_(last_seq), options_(options) {}

ScanPrefetch::~ScanPrefetch() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  ::close(fd_);
}

off_t ScanPrefetch::OffsetOf(std::uint64_t seq) const {
  if (seq <= 1) return 0;
  if (seq > last_seq_) return size_;
  const long double fraction = static_cast<long double>(seq - 1) / last_seq_;
  return static_cast<off_t>(fraction * static_cast<long double>(size_));
}

std::uint64_t ScanPrefetch::SeqAt(off_t offset) const {
  if (offset <= 0) return 0;
  const long double fraction = static_cast<long double>(offset) / static_cast<long double>(size_);
  return static_cast<std::uint64_t>(fraction * last_seq_) + 1;
}

void ScanPrefetch::Wake() {
  {
    std::lock_guard lock(mu_);
    idle_ = false;
  }
  cv_.notify_all();
}

void ScanPrefetch::Run() {
  std::unique_lock lock(mu_);
  bool started = false;
  while (!stop_) {
    const std::uint64_t seq = reached_.load();
    if (seq == 0) {  // not started: the first Reached wakes the thread (wake_at_ is 0)
      idle_ = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return stop_ || !idle_; });
      continue;
    }
    const off_t at = OffsetOf(seq);
    if (!started) {
      // A chunk before the estimate: the first events may lie a little earlier than it says.
      advised_from_.store(std::max<off_t>(0, at - options_.chunk));
      advised_to_.store(advised_from_.load());
      started = true;
    }
    const off_t from = std::max(advised_to_.load(), std::max<off_t>(0, at - options_.chunk));
    const off_t target = std::min(size_, at + options_.ahead);
    if (from < target) {
      wake_at_.store(std::numeric_limits<std::uint64_t>::max());  // busy: no wake-ups needed
      const off_t length = std::min(options_.chunk, target - from);
      lock.unlock();
      ::posix_fadvise(fd_, from, length, POSIX_FADV_WILLNEED);  // a hint: errors change nothing
      lock.lock();
      advised_to_.store(from + length);
      continue;
    }
    if (advised_to_.load() >= size_) break;  // all of the file is asked for
    // Sleep until the read comes within half a window of the advice's end, and at least to the
    // next event (an event may span more than half a window of the file: no spinning on it).
    // Stored before the check below and read after the reader's store (both sequentially
    // consistent): either this thread sees the reader's newer seq, or the reader sees this
    // threshold and wakes it.
    wake_at_.store(std::max(SeqAt(advised_to_.load() - options_.ahead / 2), seq + 1));
    if (reached_.load() >= wake_at_.load()) continue;
    idle_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return stop_ || !idle_; });
  }
  idle_ = true;
  wake_at_.store(std::numeric_limits<std::uint64_t>::max());
  cv_.notify_all();
}

bool ScanPrefetch::WaitIdleForTesting(std::chrono::milliseconds limit) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, limit, [&] { return idle_; });
}

}  // namespace gfp::store

// Reads a journal file into the page cache ahead of a read that moves through it in seq order
// (a filtered `journal history`), on a thread of its own: the read's page misses then find the
// pages already in memory instead of each waiting on the disk in turn.
//
// Why: a filtered history reads one event here and one there across the whole file. Its reads
// are too sparse for the kernel's readahead to run ahead of them, and each miss waits on the disk
// on the reading thread, which is the busier side of the listing. Measured on a 10 M event
// journal (1.6 GB) whose pages were not cached: 1.04-1.34 s without this, 0.74-1.05 s with it.
//
// Only a hint: the kernel reads the pages in (posix_fadvise WILLNEED); nothing is read through
// this class, so a file it cannot open or advise changes nothing but the time.
//
// Where the read is in the file is estimated from its seq: events are appended, so event s of a
// journal whose last seq is L lies about s/L of the way into the file (index pages are
// interleaved with them as they grow). The window runs from a little before that point to
// `ahead` bytes after it, so a long read never asks for much more than it will use next, and
// what was asked for is not pushed out of a small page cache before the read gets there.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

namespace gfp::store {

class ScanPrefetch {
 public:
  struct Options {
    // Measured on the journal above, cold: windows of 32 and 64 MiB both 0.74-0.87 s, 128 MiB
    // 0.79-1.08 s, 512 MiB and more 1.25-1.42 s (pages asked for too early were dropped again
    // before the read got there).
    off_t ahead = off_t{64} << 20;  // bytes asked for past the read's estimated place
    off_t chunk = off_t{4} << 20;   // bytes per posix_fadvise call
  };

  // Starts the thread for `file`, whose last event is `last_seq`; null when there is nothing to
  // do (an empty file, no events) or the file cannot be opened or the thread not started.
  static std::unique_ptr<ScanPrefetch> Start(const std::filesystem::path& file,
                                             std::uint64_t last_seq, Options options);
  static std::unique_ptr<ScanPrefetch> Start(const std::filesystem::path& file,
                                             std::uint64_t last_seq) {
    return Start(file, last_seq, Options{});
  }

  // Stops the thread (it may be inside one posix_fadvise call) and closes the file.
  ~ScanPrefetch();
  ScanPrefetch(const ScanPrefetch&) = delete;
  ScanPrefetch& operator=(const ScanPrefetch&) = delete;

  // The reader is at event `seq` (called for every event: one store and one load, and a wake-up
  // of the thread only when the read comes within half a window of where the advice has got to).
  void Reached(std::uint64_t seq) {
    reached_.store(seq);  // sequentially consistent, with wake_at_: see Run
    if (seq >= wake_at_.load()) Wake();
  }

  // Where the advice began and how far it has got (for tests); 0 before the first Reached.
  off_t AdvisedFrom() const { return advised_from_.load(); }
  off_t AdvisedTo() const { return advised_to_.load(); }
  // Waits until the thread has nothing left to advise for what was reached so far (for tests);
  // false when it still had work after `limit`.
  bool WaitIdleForTesting(std::chrono::milliseconds limit = std::chrono::seconds(10));

 private:
  ScanPrefetch(int fd, off_t size, std::uint64_t last_seq, Options options);
  void Run();
  void Wake();
  // Where event `seq` is estimated to lie in the file.
  off_t OffsetOf(std::uint64_t seq) const;
  // The next seq whose Reached must wake the thread: the read is then within half a window of
  // the advice's end.
  std::uint64_t SeqAt(off_t offset) const;

  const int fd_;
  const off_t size_;
  const std::uint64_t last_seq_;
  const Options options_;
  std::atomic<std::uint64_t> reached_{0};
  std::atomic<std::uint64_t> wake_at_{0};  // 0: the first Reached wakes the thread
  std::atomic<off_t> advised_from_{0};
  std::atomic<off_t> advised_to_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool idle_ = false;
  std::thread thread_;
};

}  // namespace gfp::store

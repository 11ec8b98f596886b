// store::ScanPrefetch asks for a window of the file ahead of the read's estimated place, never
// much more, follows the read to the end, and gives up quietly on what is not a regular file.
#include "store/scan_prefetch.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "journal_test_util.h"

namespace gfp::store {
namespace {

using testing::TempDir;

constexpr off_t kMiB = off_t{1} << 20;

// A sparse file of `size` bytes: no data to write, the window is all the test looks at.
std::filesystem::path SparseFile(const TempDir& dir, off_t size) {
  const std::filesystem::path path = dir / "journal.db";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::ftruncate(fd, size), 0);
  ::close(fd);
  return path;
}

ScanPrefetch::Options Window(off_t ahead, off_t chunk) {
  ScanPrefetch::Options o;
  o.ahead = ahead;
  o.chunk = chunk;
  return o;
}

TEST(ScanPrefetchTest, AsksForAWindowAheadOfTheReadAndNoFurther) {
  TempDir dir;
  // 1,000 events over 64 MiB: event s is estimated at (s - 1) / 1000 of the file.
  auto prefetch = ScanPrefetch::Start(SparseFile(dir, 64 * kMiB), 1000, Window(8 * kMiB, 1 * kMiB));
  ASSERT_NE(prefetch, nullptr);
  ASSERT_TRUE(prefetch->WaitIdleForTesting());
  EXPECT_EQ(prefetch->AdvisedTo(), 0) << "nothing before the read starts";

  prefetch->Reached(1);  // at 0: the window is [0, 8 MiB)
  ASSERT_TRUE(prefetch->WaitIdleForTesting());
  EXPECT_EQ(prefetch->AdvisedTo(), 8 * kMiB);

  // Still within half a window of the advice's end: nothing more is asked for.
  prefetch->Reached(60);  // at 3.8 MiB
  ASSERT_TRUE(prefetch->WaitIdleForTesting());
  EXPECT_EQ(prefetch->AdvisedTo(), 8 * kMiB);

  // Past it: the window follows the read, to 8 MiB beyond its place and not a chunk more.
  prefetch->Reached(501);  // at 32 MiB
  ASSERT_TRUE(prefetch->WaitIdleForTesting());
  EXPECT_EQ(prefetch->AdvisedTo(), 40 * kMiB);

  prefetch->Reached(1000);  // the last event: up to the end of the file, and the thread ends
  ASSERT_TRUE(prefetch->WaitIdleForTesting());
  EXPECT_EQ(prefetch->AdvisedTo(), 64 * kMiB);
}

// Two events in 64 MiB: one event spans more than half the window. The thread must go to sleep
// once its window is asked for, not spin waiting for a read that is already past its threshold.
TEST(ScanPrefetchTest, SleepsWhenAnEventSpansMoreThanHalfAWindow) {
  TempDir dir;
  auto prefetch = ScanPrefetch::Start(SparseFile(dir, 64 * kMiB), 2, Window(8 * kMiB, 1 * kMiB));
  ASSERT_NE(prefetch, nullptr);
  prefetch->Reached(1);
  ASSERT_TRUE(prefetch->WaitIdleForTesting(std::chrono::seconds(2))) << "the thread kept busy";
  EXPECT_EQ(prefetch->AdvisedTo(), 8 * kMiB);
  prefetch->Reached(2);  // at 32 MiB
  ASSERT_TRUE(prefetch->WaitIdleForTesting(std::chrono::seconds(2))) << "the thread kept busy";
  EXPECT_EQ(prefetch->AdvisedTo(), 40 * kMiB);
}

TEST(ScanPrefetchTest, StartsAChunkBeforeAReadThatStartsLate) {
  TempDir dir;
  auto prefetch = ScanPrefetch::Start(SparseFile(dir, 64 * kMiB), 1000, Window(8 * kMiB, 1 * kMiB));
  ASSERT_NE(prefetch, nullptr);
  prefetch->Reached(751);  // a history --since late in the file: at 48 MiB
  ASSERT_TRUE(prefetch->WaitIdleForTesting());
  EXPECT_EQ(prefetch->AdvisedFrom(), 47 * kMiB) << "a chunk before the estimate";
  EXPECT_EQ(prefetch->AdvisedTo(), 56 * kMiB);
}

TEST(ScanPrefetchTest, StopsWhileTheReadIsStillGoing) {
  TempDir dir;
  const auto started = std::chrono::steady_clock::now();
  {
    auto prefetch =
        ScanPrefetch::Start(SparseFile(dir, 64 * kMiB), 1000, Window(8 * kMiB, 1 * kMiB));
    ASSERT_NE(prefetch, nullptr);
    prefetch->Reached(100);
    ASSERT_TRUE(prefetch->WaitIdleForTesting());
  }  // the thread waits for a Reached that never comes: the destructor must still return
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

TEST(ScanPrefetchTest, NothingToDoForWhatIsNotAJournalFile) {
  TempDir dir;
  EXPECT_EQ(ScanPrefetch::Start(dir / "missing.db", 10), nullptr);
  EXPECT_EQ(ScanPrefetch::Start(SparseFile(dir, 0), 10), nullptr) << "an empty file";
  EXPECT_EQ(ScanPrefetch::Start(SparseFile(dir, kMiB), 0), nullptr) << "no events";
  EXPECT_EQ(ScanPrefetch::Start(dir.path(), 10), nullptr) << "a folder";

  const std::filesystem::path fifo = dir / "fifo.db";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(ScanPrefetch::Start(fifo, 10), nullptr) << "a FIFO, without hanging on its open";

  const std::filesystem::path link = dir / "link.db";
  std::filesystem::create_symlink(SparseFile(dir, kMiB), link);
  EXPECT_EQ(ScanPrefetch::Start(link, 10), nullptr) << "a symlink is not followed";
}

// The pages of [from, to) of `path` that are in the page cache.
std::size_t ResidentPages(const std::filesystem::path& path, off_t from, off_t to) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  void* map = ::mmap(nullptr, static_cast<std::size_t>(to), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return 0;
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident(static_cast<std::size_t>(to) / page);
  std::size_t count = 0;
  if (::mincore(map, static_cast<std::size_t>(to), resident.data()) == 0) {
    for (std::size_t i = static_cast<std::size_t>(from) / page; i < resident.size(); ++i) {
      count += resident[i] & 1;
    }
  }
  ::munmap(map, static_cast<std::size_t>(to));
  return count;
}

// What the advice is for: the pages of the window are read into the page cache.
TEST(ScanPrefetchTest, ThePagesOfTheWindowAreReadIn) {
  TempDir dir;
  const std::filesystem::path path = dir / "journal.db";
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    const std::string block(static_cast<std::size_t>(kMiB), 'x');
    for (int i = 0; i < 16; ++i) ASSERT_EQ(::write(fd, block.data(), block.size()), kMiB);
    ASSERT_EQ(::fsync(fd), 0);
    ASSERT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    ::close(fd);
  }
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t window_pages = static_cast<std::size_t>(4 * kMiB) / page;
  if (ResidentPages(path, 0, 16 * kMiB) > window_pages / 4) {
    GTEST_SKIP() << "this file system keeps its files in memory (tmpfs?): nothing to read in";
  }
  auto prefetch = ScanPrefetch::Start(path, 1000, Window(4 * kMiB, 1 * kMiB));
  ASSERT_NE(prefetch, nullptr);
  prefetch->Reached(1);
  ASSERT_TRUE(prefetch->WaitIdleForTesting());
  // The advice starts the reads; wait (bounded) for them to land.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ResidentPages(path, 0, 4 * kMiB) < window_pages &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(ResidentPages(path, 0, 4 * kMiB), window_pages);
  EXPECT_LT(ResidentPages(path, 8 * kMiB, 16 * kMiB), window_pages / 4)
      << "the second half of the file, beyond the window, is not asked for";
}

}  // namespace
}  // namespace gfp::store

// The fault VFS itself: what reaches the real file at a cut, and how injected errors fire.
#include "common/fault_vfs.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fault/powercut/sweep_options.h"

namespace gfp::faulttest {
namespace {

namespace fault = gfp::testing::fault;

class FaultVfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(fault::InstallFaultVfs(), "");
    ASSERT_EQ(fault::ResetFaultVfs(), 0);
    path_ = (dir_.path() / "file").string();
  }
  void TearDown() override { fault::ResetFaultVfs(); }

  // Opens `path_` through the default VFS (the shim).
  sqlite3_file* Open() {
    sqlite3_vfs* vfs = sqlite3_vfs_find(nullptr);
    buffer_.assign(static_cast<std::size_t>(vfs->szOsFile), 0);
    auto* file = reinterpret_cast<sqlite3_file*>(buffer_.data());
    const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MAIN_DB;
    EXPECT_EQ(vfs->xOpen(vfs, path_.c_str(), file, flags, nullptr), SQLITE_OK);
    return file;
  }
  static int Write(sqlite3_file* f, char c, int n, sqlite3_int64 offset) {
    const std::string bytes(static_cast<std::size_t>(n), c);
    return f->pMethods->xWrite(f, bytes.data(), n, offset);
  }
  std::uintmax_t RealSize() const { return std::filesystem::file_size(path_); }

  RunDir dir_;
  std::string path_;
  std::vector<char> buffer_;
};

TEST_F(FaultVfsTest, ReadsSeeUnsyncedWritesAndOnlySyncedOnesReachTheFile) {
  sqlite3_file* f = Open();
  ASSERT_EQ(Write(f, 'a', 100, 0), SQLITE_OK);
  EXPECT_EQ(RealSize(), 0u);
  char got[100] = {};
  ASSERT_EQ(f->pMethods->xRead(f, got, 100, 0), SQLITE_OK);
  EXPECT_EQ(got[99], 'a');
  sqlite3_int64 size = 0;
  ASSERT_EQ(f->pMethods->xFileSize(f, &size), SQLITE_OK);
  EXPECT_EQ(size, 100);
  ASSERT_EQ(f->pMethods->xSync(f, SQLITE_SYNC_FULL), SQLITE_OK);
  EXPECT_EQ(RealSize(), 100u);
  ASSERT_EQ(f->pMethods->xTruncate(f, 10), SQLITE_OK);
  ASSERT_EQ(f->pMethods->xFileSize(f, &size), SQLITE_OK);
  EXPECT_EQ(size, 10);
  EXPECT_EQ(f->pMethods->xRead(f, got, 100, 0), SQLITE_IOERR_SHORT_READ);
  EXPECT_EQ(RealSize(), 100u);
  f->pMethods->xClose(f);
}

TEST_F(FaultVfsTest, ACutDiscardsOrTearsTheUnsyncedWritesAndThenEverythingFails) {
  struct Case {
    fault::CutMode mode;
    std::uintmax_t min_size, max_size;
  };
  // 100 bytes synced, then 50 more pending, then the cut at the write of 100 bytes at 150.
  const Case cases[] = {{fault::CutMode::kDiscardUnsynced, 100, 100},
                        {fault::CutMode::kTearLast, 151, 249},
                        {fault::CutMode::kKeepPendingTearLast, 151, 249}};
  for (const Case& c : cases) {
    SCOPED_TRACE(fault::CutModeName(c.mode));
    std::filesystem::remove(path_);
    ASSERT_EQ(fault::ResetFaultVfs(), 0);
    fault::ArmPowerCut(4, c.mode, 12345);
    sqlite3_file* f = Open();
    ASSERT_EQ(Write(f, 'a', 100, 0), SQLITE_OK);                    // point 1
    ASSERT_EQ(f->pMethods->xSync(f, SQLITE_SYNC_FULL), SQLITE_OK);  // point 2
    ASSERT_EQ(Write(f, 'b', 50, 100), SQLITE_OK);                   // point 3
    EXPECT_EQ(Write(f, 'c', 100, 150), SQLITE_IOERR_WRITE);         // point 4: the cut
    EXPECT_TRUE(fault::PoweredOff());
    EXPECT_GE(RealSize(), c.min_size);
    EXPECT_LE(RealSize(), c.max_size);
    char got[1] = {};
    EXPECT_EQ(f->pMethods->xRead(f, got, 1, 0), SQLITE_IOERR_READ);
    EXPECT_EQ(f->pMethods->xSync(f, SQLITE_SYNC_FULL), SQLITE_IOERR_FSYNC);
    f->pMethods->xClose(f);
  }
}

TEST_F(FaultVfsTest, InjectedErrorsFireOnceOrUntilCleared) {
  sqlite3_file* f = Open();
  fault::ArmFault(fault::IoOp::kWrite, 2, SQLITE_FULL, /*sticky=*/false);
  EXPECT_EQ(Write(f, 'a', 10, 0), SQLITE_OK);
  EXPECT_EQ(Write(f, 'a', 10, 10), SQLITE_FULL);
  EXPECT_EQ(Write(f, 'a', 10, 20), SQLITE_OK);
  fault::ArmFault(fault::IoOp::kSync, 1, SQLITE_IOERR_FSYNC, /*sticky=*/true);
  EXPECT_EQ(f->pMethods->xSync(f, SQLITE_SYNC_FULL), SQLITE_IOERR_FSYNC);
  EXPECT_EQ(f->pMethods->xSync(f, SQLITE_SYNC_FULL), SQLITE_IOERR_FSYNC);
  EXPECT_EQ(RealSize(), 0u);  // a failed sync persists nothing
  fault::ClearFaults();
  EXPECT_EQ(f->pMethods->xSync(f, SQLITE_SYNC_FULL), SQLITE_OK);
  EXPECT_EQ(RealSize(), 30u);  // the failed write left a hole, read back as zeros
  EXPECT_EQ(fault::FaultsFired(), 3u);
  f->pMethods->xClose(f);
}

}  // namespace
}  // namespace gfp::faulttest

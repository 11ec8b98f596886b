#include "adapters/host/file_reading.h"

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "unit/host/fifo_guard.h"

namespace gfp::adapters::host {
namespace {

using gfp::testing::MakeFifo;
using gfp::testing::ReadWithFifoGuard;

TEST(HostFileReading, ReadsARegularFile) {
  gfp::testing::TempDir dir;
  auto content = ReadWholeFile(dir.Write("f", "hello\n"), 100);
  ASSERT_TRUE(content.ok()) << content.status().message();
  EXPECT_EQ(*content, "hello\n");
}

TEST(HostFileReading, FifoIsRefusedWithoutBlocking) {
  gfp::testing::TempDir dir;
  const auto fifo = MakeFifo(dir.path() / "fifo");
  auto content = ReadWithFifoGuard(fifo, [&] { return ReadWholeFile(fifo, 100); });
  ASSERT_FALSE(content.ok());
  EXPECT_EQ(content.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(content.status().message(), "not a regular file (a FIFO)");
}

TEST(HostFileReading, DirectoryIsRefused) {
  gfp::testing::TempDir dir;
  auto content = ReadWholeFile(dir.path(), 100);
  ASSERT_FALSE(content.ok());
  EXPECT_EQ(content.status().message(), "not a regular file (a directory)");
}

TEST(HostFileReading, SymlinkToARegularFileIsFollowed) {
  gfp::testing::TempDir dir;
  const auto target = dir.Write("target", "x");
  std::filesystem::create_symlink(target, dir.path() / "link");
  auto content = ReadWholeFile(dir.path() / "link", 100);
  ASSERT_TRUE(content.ok()) << content.status().message();
  EXPECT_EQ(*content, "x");
}

TEST(HostFileReading, CheckIsRegularFileSaysWhatIsThere) {
  gfp::testing::TempDir dir;
  EXPECT_TRUE(CheckIsRegularFile(dir.Write("f", "")).ok());
  const Status fifo = CheckIsRegularFile(MakeFifo(dir.path() / "fifo"));
  EXPECT_EQ(fifo.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(fifo.message(), "is not a regular file (a FIFO)");
  EXPECT_EQ(CheckIsRegularFile(dir.path()).message(), "is not a regular file (a directory)");
  EXPECT_EQ(CheckIsRegularFile("/dev/null").message(),
            "is not a regular file (a character device)");
  const Status absent = CheckIsRegularFile(dir.path() / "absent");
  EXPECT_EQ(absent.code(), ErrorCode::kNotFound);
  EXPECT_EQ(absent.message(), "does not exist");
}

TEST(HostFileReading, CheckIsDirectorySaysWhatIsThere) {
  gfp::testing::TempDir dir;
  EXPECT_TRUE(CheckIsDirectory(dir.path()).ok());
  EXPECT_EQ(CheckIsDirectory(dir.Write("f", "")).message(), "is not a directory (a regular file)");
  EXPECT_EQ(CheckIsDirectory(dir.path() / "absent").message(), "does not exist");
  EXPECT_EQ(CheckIsDirectory(dir.path() / "f" / "below").message(),
            "does not exist");  // ENOTDIR: nothing can be there
}

}  // namespace
}  // namespace gfp::adapters::host

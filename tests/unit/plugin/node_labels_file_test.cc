// NodeLabelsFile (written only when its text changes, failures logged once per reason and
// retried) and CheckNodeLabelsPath (serve's start-up check of --node-labels-file).
#include "plugin/labels/node_labels_file.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "adapters/host/atomic_file.h"
#include "common/temp_dir.h"

namespace gfp::plugin::labels {
namespace {

namespace fs = std::filesystem;
using Clock = NodeLabelsFile::Clock;

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ino_t Inode(const fs::path& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 ? info.st_ino : 0;
}

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class NodeLabelsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto logger = std::make_shared<spdlog::logger>(
        "", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_));
    logger->set_pattern("[%l] %v");
    previous_ = spdlog::default_logger();
    spdlog::set_default_logger(logger);
  }
  void TearDown() override { spdlog::set_default_logger(previous_); }

  fs::path Path() const { return dir_.path() / "features.d" / "gpu-fabric"; }
  fs::path Journal() const { return dir_.path() / "state" / "journal.db"; }

  gfp::testing::TempDir dir_;
  std::ostringstream log_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(NodeLabelsFileTest, NothingIsWrittenBeforeTheTableIsKnown) {
  fs::create_directories(Path().parent_path());
  std::ofstream(Path()) << "gpu-fabric.free-partitions.8=1\n";  // left by the previous run
  NodeLabelsFile file(Path(), Journal());
  file.Update({}, Clock::now());
  EXPECT_EQ(Read(Path()), "gpu-fabric.free-partitions.8=1\n");
  EXPECT_FALSE(fs::exists(Path().parent_path() / adapters::host::kStagingDirName));
}

TEST_F(NodeLabelsFileTest, WrittenAtFirstThenOnlyWhenACountChanges) {
  fs::create_directories(Path().parent_path());
  NodeLabelsFile file(Path(), Journal());
  const auto now = Clock::now();
  file.Update({{1, 8}, {8, 1}}, now);
  ASSERT_NE(Read(Path()).find("gpu-fabric.free-partitions.8=1\n"), std::string::npos);
  // Unchanged counts and an untouched file: not rewritten (NFD would rescan for nothing).
  const auto before = fs::last_write_time(Path());
  const auto inode = Inode(Path());
  for (int turn = 0; turn < 3; ++turn) file.Update({{1, 8}, {8, 1}}, now);
  EXPECT_EQ(fs::last_write_time(Path()), before) << "rewritten without a change";
  EXPECT_EQ(Inode(Path()), inode) << "rewritten without a change";
  file.Update({{1, 6}, {8, 0}}, now);
  const std::string text = Read(Path());
  EXPECT_NE(text.find("gpu-fabric.free-partitions.1=6\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpu-fabric.largest-free-partition=1\n"), std::string::npos) << text;
  EXPECT_TRUE(file.problem().empty());
}

// NFD reads what is in the file, not what serve wrote last: a removed, replaced or edited file is
// written again at the next turn, even though no count changed (seen red before the fix).
TEST_F(NodeLabelsFileTest, ARemovedOrEditedFileIsRestored) {
  fs::create_directories(Path().parent_path());
  NodeLabelsFile file(Path(), Journal());
  const auto now = Clock::now();
  file.Update({{8, 1}}, now);
  const std::string written = Read(Path());
  ASSERT_NE(written.find("gpu-fabric.free-partitions.8=1\n"), std::string::npos);

  fs::remove(Path());
  file.Update({{8, 1}}, now);
  EXPECT_EQ(Read(Path()), written) << "a removed file was not restored";

  std::ofstream(Path(), std::ios::app) << "gpu-fabric.free-partitions.8=7\n";
  file.Update({{8, 1}}, now);
  EXPECT_EQ(Read(Path()), written) << "an edited file was not restored";

  std::ofstream(Path(), std::ios::trunc) << "x";  // same inode, another size
  file.Update({{8, 1}}, now);
  EXPECT_EQ(Read(Path()), written) << "an overwritten file was not restored";
  EXPECT_EQ(Count(log_.str(), "was removed or changed by someone else; writing it again"), 3)
      << log_.str();
  EXPECT_TRUE(file.problem().empty());
}

// The labels path names the journal through a symlinked folder (given so at start, or swapped in
// while serve runs): the journal is never replaced (seen red: 426 bytes of labels in its place).
TEST_F(NodeLabelsFileTest, TheJournalIsNeverWrittenThroughASymlinkedFolder) {
  fs::create_directories(Journal().parent_path());
  std::ofstream(Journal()) << "SQLite format 3";
  fs::create_directory_symlink(Journal().parent_path(), dir_.path() / "features.d");
  NodeLabelsFile file(dir_.path() / "features.d" / "journal.db", Journal());
  file.Update({{8, 1}}, Clock::now());
  EXPECT_EQ(Read(Journal()), "SQLite format 3");
  EXPECT_NE(file.problem().find("is the journal's own file (--journal=" + Journal().string()),
            std::string::npos)
      << file.problem();

  fs::remove(dir_.path() / "features.d");
  fs::create_directories(dir_.path() / "features.d");
  NodeLabelsFile later(dir_.path() / "features.d" / "journal.db-wal", Journal());
  later.Update({{8, 1}}, Clock::now());
  ASSERT_TRUE(later.problem().empty()) << later.problem();  // a real folder: fine
  std::ofstream(Journal().string() + "-wal") << "wal frames";
  fs::rename(dir_.path() / "features.d", dir_.path() / "features.old");
  fs::create_directory_symlink(Journal().parent_path(), dir_.path() / "features.d");
  later.Update({{8, 2}}, Clock::now());
  EXPECT_EQ(Read(Journal().string() + "-wal"), "wal frames");
  EXPECT_NE(later.problem().find("is the journal's own file"), std::string::npos)
      << later.problem();
}

TEST_F(NodeLabelsFileTest, AFailureIsLoggedOncePerReasonRetriedAndItsEndLogged) {
  NodeLabelsFile file(Path(), Journal());  // features.d does not exist yet
  auto now = Clock::now();
  for (int turn = 0; turn < 30; ++turn) {
    file.Update({{1, 8}}, now);
    now += std::chrono::milliseconds(100);
  }
  EXPECT_FALSE(file.problem().empty());
  EXPECT_EQ(Count(log_.str(), "[warning]"), 1) << log_.str();
  EXPECT_NE(log_.str().find(Path().string()), std::string::npos) << log_.str();

  // Another reason: logged again, once.
  std::ofstream(Path().parent_path()) << "a file where the folder should be";
  for (int turn = 0; turn < 30; ++turn) {
    file.Update({{1, 8}}, now);
    now += std::chrono::milliseconds(100);
  }
  EXPECT_EQ(Count(log_.str(), "[warning]"), 2) << log_.str();

  // Fixed: not before the retry time, then written and the recovery said.
  fs::remove(Path().parent_path());
  fs::create_directories(Path().parent_path());
  file.Update({{1, 8}}, now - NodeLabelsFile::kRetryEvery);
  EXPECT_FALSE(fs::exists(Path())) << "retried before kRetryEvery";
  file.Update({{1, 8}}, now + NodeLabelsFile::kRetryEvery);
  EXPECT_NE(Read(Path()).find("gpu-fabric.free-partitions.1=8"), std::string::npos);
  EXPECT_TRUE(file.problem().empty());
  EXPECT_EQ(Count(log_.str(), "written again"), 1) << log_.str();
}

// ----- CheckNodeLabelsPath -----

class NodeLabelsPathTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(features_); }
  std::string Error(const fs::path& path) {
    const Status status = CheckNodeLabelsPath(path);
    EXPECT_FALSE(status.ok()) << path << " accepted";
    return status.message();
  }
  gfp::testing::TempDir dir_;
  fs::path features_ = dir_.path() / "features.d";
};

TEST_F(NodeLabelsPathTest, ANewOrExistingRegularFileInAWritableFolderIsAccepted) {
  EXPECT_TRUE(CheckNodeLabelsPath(features_ / "gpu-fabric").ok());
  std::ofstream(features_ / "gpu-fabric") << "x";
  EXPECT_TRUE(CheckNodeLabelsPath(features_ / "gpu-fabric").ok());
  EXPECT_TRUE(fs::is_empty(features_) == false);
  EXPECT_FALSE(fs::exists(features_ / adapters::host::kStagingDirName))
      << "the check created something";
}

TEST_F(NodeLabelsPathTest, FileNamesNfdWouldNotReadOrThatCannotBeFiles) {
  EXPECT_NE(Error(features_ / "").find("names a folder, not a file"), std::string::npos);
  EXPECT_NE(Error(features_ / ".").find("names a folder"), std::string::npos);
  EXPECT_NE(Error(features_ / "..").find("names a folder"), std::string::npos);
  EXPECT_NE(Error(features_ / ".gpu-fabric").find("hidden file name: NFD ignores"),
            std::string::npos);
  EXPECT_NE(Error(features_ / std::string(201, 'n')).find("file name of 201 characters"),
            std::string::npos);
  const std::string deep = features_.string() + std::string(4000, '/') + "gpu-fabric";
  EXPECT_NE(Error(deep).find("is too long ("), std::string::npos);
}

TEST_F(NodeLabelsPathTest, WhatIsAtThePath) {
  fs::create_directories(features_ / "a-folder");
  EXPECT_EQ(Error(features_ / "a-folder"), "is not a regular file (a directory)");
  ASSERT_EQ(::mkfifo((features_ / "a-fifo").c_str(), 0600), 0);
  EXPECT_EQ(Error(features_ / "a-fifo"), "is not a regular file (a FIFO)");
  std::ofstream(dir_.path() / "real") << "x";
  fs::create_symlink(dir_.path() / "real", features_ / "a-link");
  EXPECT_NE(Error(features_ / "a-link").find("is a symbolic link; give the real path"),
            std::string::npos);
  fs::create_symlink(dir_.path() / "absent", features_ / "dangling");
  EXPECT_NE(Error(features_ / "dangling").find("is a symbolic link"), std::string::npos);
}

TEST_F(NodeLabelsPathTest, TheFolder) {
  const fs::path missing = dir_.path() / "absent";
  EXPECT_EQ(
      Error(missing / "gpu-fabric").rfind(": folder " + missing.string() + " does not exist", 0),
      0u);
  std::ofstream(dir_.path() / "regular") << "x";
  EXPECT_EQ(Error(dir_.path() / "regular" / "gpu-fabric"),
            ": " + (dir_.path() / "regular").string() + " is not a directory (a regular file)");
}

// Root may write anywhere: the unwritable folder is checked as `nobody`, in a child process.
TEST_F(NodeLabelsPathTest, AFolderThatIsNotWritableIsRefused) {
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
  ASSERT_EQ(::chmod(features_.c_str(), 0755), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::getuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(10);
    if (::access(features_.c_str(), W_OK) == 0) ::_exit(20);  // writable anyway: cannot test
    const Status status = CheckNodeLabelsPath(features_ / "gpu-fabric");
    if (status.ok()) ::_exit(11);
    const std::string expected = ": folder " + features_.string() + " is not writable: ";
    ::_exit(status.message().rfind(expected, 0) == 0 ? 0 : 12);
  }
  int wait_status = 0;
  ASSERT_EQ(::waitpid(child, &wait_status, 0), child);
  ASSERT_TRUE(WIFEXITED(wait_status));
  if (WEXITSTATUS(wait_status) == 20) GTEST_SKIP() << "the folder is writable for this user";
  EXPECT_EQ(WEXITSTATUS(wait_status), 0) << "11: accepted, 12: another message";
}

}  // namespace
}  // namespace gfp::plugin::labels

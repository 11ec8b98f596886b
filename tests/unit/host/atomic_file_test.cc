// ReplaceFileAtomically: whole files only, through a hidden staging folder, failures leave the
// old file and no temporary behind. WriteFileAtomically: a new file linked into place whole with
// nothing else made; anything already at the path replaced as ReplaceFileAtomically does.
#include "adapters/host/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>

#include "common/temp_dir.h"

namespace gfp::adapters::host {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class AtomicFile : public ::testing::Test {
 protected:
  fs::path Target() const { return dir_.path() / "gpu-fabric"; }
  fs::path Staging() const { return dir_.path() / kStagingDirName; }
  fs::path Temp() const { return Staging() / "gpu-fabric.tmp"; }
  gfp::testing::TempDir dir_;
};

TEST_F(AtomicFile, WritesTheWholeContentReadableByOthers) {
  ASSERT_TRUE(ReplaceFileAtomically(Target(), "a=1\n").ok());
  EXPECT_EQ(Read(Target()), "a=1\n");
  struct stat info {};
  ASSERT_EQ(::stat(Target().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);
  EXPECT_FALSE(fs::exists(Temp())) << "the temporary file was left behind";
  // The only other entry of the folder is the hidden staging folder (NFD skips '.' names).
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_.path())) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{std::string(kStagingDirName), "gpu-fabric"}));
}

// nfd-worker rescans on the first inotify event in features.d and drops the others for a second:
// an update must show there as one event, the new file moved into place, and nothing before it.
TEST_F(AtomicFile, TheWatchedFolderSeesOnlyTheRenameIntoPlace) {
  ASSERT_TRUE(ReplaceFileAtomically(Target(), "a=1\n").ok());  // creates the staging folder
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_GE(::inotify_add_watch(fd, dir_.path().c_str(),
                                IN_ALL_EVENTS & ~(IN_ACCESS | IN_OPEN | IN_CLOSE_NOWRITE)),
            0);
  ASSERT_TRUE(ReplaceFileAtomically(Target(), "a=2\n").ok());
  std::vector<std::string> events;
  alignas(inotify_event) char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) {
    for (char* p = buffer; p < buffer + n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(p);
      events.push_back(std::string(event->len ? event->name : "") +
                       ((event->mask & IN_MOVED_TO) ? " moved in" : " other"));
      p += sizeof(inotify_event) + event->len;
    }
  }
  ::close(fd);
  EXPECT_EQ(events, (std::vector<std::string>{"gpu-fabric moved in"}));
}

// `write` replaces the file at `target` instead of rewriting it in place: a reader that opened
// the old one keeps reading it whole.
void ExpectAReaderOfTheOldFileKeepsIt(const std::function<Status(std::string_view)>& write,
                                      const fs::path& target) {
  ASSERT_TRUE(write("old=1\n").ok());
  std::ifstream reader(target, std::ios::binary);  // opened before the replacement
  ASSERT_TRUE(write("new=2\n").ok());
  std::stringstream s;
  s << reader.rdbuf();
  EXPECT_EQ(s.str(), "old=1\n") << "the file was rewritten in place, not replaced";
  EXPECT_EQ(Read(target), "new=2\n");
}

TEST_F(AtomicFile, AReaderOfTheOldFileKeepsTheWholeOldFile) {
  ExpectAReaderOfTheOldFileKeepsIt(
      [&](std::string_view content) { return ReplaceFileAtomically(Target(), content); }, Target());
}

TEST_F(AtomicFile, AMissingFolderIsNotFoundNamingThePath) {
  const fs::path target = dir_.path() / "absent" / "gpu-fabric";
  const Status status = ReplaceFileAtomically(target, "a=1\n");
  EXPECT_EQ(status.code(), ErrorCode::kNotFound);
  EXPECT_NE(status.message().find(target.string()), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("No such file or directory"), std::string::npos)
      << status.message();
}

TEST_F(AtomicFile, AStagingNameTakenByAFileOrSymlinkIsRefused) {
  std::ofstream(Staging()) << "not a folder";
  Status status = ReplaceFileAtomically(Target(), "a=1\n");
  EXPECT_EQ(status.code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("is not a folder"), std::string::npos) << status.message();
  EXPECT_FALSE(fs::exists(Target()));

  fs::remove(Staging());
  const fs::path elsewhere = dir_.path() / "elsewhere";
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(elsewhere, Staging());
  status = ReplaceFileAtomically(Target(), "a=1\n");
  EXPECT_EQ(status.code(), ErrorCode::kFailedPrecondition) << status.message();
  EXPECT_TRUE(fs::is_empty(elsewhere)) << "wrote through a symlinked staging folder";
  EXPECT_FALSE(fs::exists(Target()));
}

// A symlink or a hard link planted as the temporary file is unlinked, never written through
// (the hard link was overwritten before the temporary file was created with O_EXCL).
TEST_F(AtomicFile, ALinkPlantedAsTheTemporaryFileIsNotWrittenThrough) {
  fs::create_directories(Staging());
  fs::permissions(Staging(), fs::perms::owner_all);
  const fs::path victim = dir_.path() / "victim";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, Temp());
  Status status = ReplaceFileAtomically(Target(), "a=1\n");
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(Read(victim), "precious");
  EXPECT_EQ(Read(Target()), "a=1\n");

  fs::create_hard_link(victim, Temp());
  status = ReplaceFileAtomically(Target(), "a=2\n");
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(Read(victim), "precious") << "wrote through a planted hard link";
  EXPECT_EQ(Read(Target()), "a=2\n");
  EXPECT_FALSE(fs::exists(Temp()));
}

TEST_F(AtomicFile, AStagingFolderOthersMayWriteInIsRefused) {
  fs::create_directories(Staging());
  fs::permissions(Staging(), fs::perms::all);
  const Status status = ReplaceFileAtomically(Target(), "a=1\n");
  EXPECT_EQ(status.code(), ErrorCode::kFailedPrecondition) << status.message();
  EXPECT_NE(status.message().find("is not a private folder of this user"), std::string::npos)
      << status.message();
  EXPECT_FALSE(fs::exists(Target()));
}

TEST_F(AtomicFile, AFolderAtThePathFailsTheRenameAndLeavesNoTemporary) {
  fs::create_directories(Target() / "inside");
  const Status status = ReplaceFileAtomically(Target(), "a=1\n");
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("renaming"), std::string::npos) << status.message();
  EXPECT_TRUE(fs::is_directory(Target() / "inside"));
  EXPECT_FALSE(fs::exists(Temp()));
}

// Runs `write` (4096 bytes) in a child whose files may not grow past 16 bytes (EFBIG stands in
// for a full disk; the limit must not touch the test runner). The child's exit code: 0 when the
// write failed naming the step and `target`, 11 when it was accepted, 12/13 without step/path.
int WriteUnderAFileSizeLimit(const std::function<Status(const std::string&)>& write,
                             const fs::path& target) {
  const pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{16, 16};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
    const Status status = write(std::string(4096, 'x'));
    if (status.ok()) ::_exit(11);
    if (status.message().find("writing") == std::string::npos) ::_exit(12);
    if (status.message().find(target.string()) == std::string::npos) ::_exit(13);
    ::_exit(0);
  }
  int wait_status = 0;
  if (::waitpid(child, &wait_status, 0) != child || !WIFEXITED(wait_status)) return -1;
  return WEXITSTATUS(wait_status);
}

// A write that fails half-way leaves the old file whole and no temporary.
TEST_F(AtomicFile, AFailedWriteLeavesTheOldFileWhole) {
  ASSERT_TRUE(ReplaceFileAtomically(Target(), "old=1\n").ok());
  EXPECT_EQ(
      WriteUnderAFileSizeLimit(
          [&](const std::string& content) { return ReplaceFileAtomically(Target(), content); },
          Target()),
      0)
      << "11: accepted, 12/13: message without step/path";
  EXPECT_EQ(Read(Target()), "old=1\n");
  EXPECT_FALSE(fs::exists(Temp())) << "the half-written temporary file was left behind";
}

std::vector<std::string> Names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Under a umask that would hide it from its readers, a new file still gets 0644, and the folder
// holds the file alone: no staging folder, no temporary name.
TEST_F(AtomicFile, ANewFileIsLinkedIntoPlaceWholeAndAlone) {
  const mode_t previous = ::umask(077);
  const Status status = WriteFileAtomically(Target(), "a=1\n");
  ::umask(previous);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(Read(Target()), "a=1\n");
  struct stat info {};
  ASSERT_EQ(::lstat(Target().c_str(), &info), 0);
  EXPECT_TRUE(S_ISREG(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0644u);
  EXPECT_EQ(Names(dir_.path()), (std::vector<std::string>{"gpu-fabric"}));
}

TEST_F(AtomicFile, WriteFileAtomicallyReplacesAnExistingFileAndNeverFollowsALink) {
  ExpectAReaderOfTheOldFileKeepsIt(
      [&](std::string_view content) { return WriteFileAtomically(Target(), content); }, Target());

  const fs::path victim = dir_.path() / "victim";
  std::ofstream(victim) << "precious";
  fs::remove(Target());
  fs::create_symlink(victim, Target());
  ASSERT_TRUE(WriteFileAtomically(Target(), "a=3\n").ok());
  EXPECT_EQ(Read(victim), "precious") << "wrote through a symlink at the path";
  EXPECT_FALSE(fs::is_symlink(Target()));
  EXPECT_EQ(Read(Target()), "a=3\n");
}

TEST_F(AtomicFile, WriteFileAtomicallyNamesAMissingFolder) {
  const fs::path target = dir_.path() / "absent" / "gpu-fabric";
  const Status status = WriteFileAtomically(target, "a=1\n");
  EXPECT_EQ(status.code(), ErrorCode::kNotFound);
  EXPECT_NE(status.message().find(target.string()), std::string::npos) << status.message();
}

// A new file whose write fails half-way is never linked: nothing appears at the path or beside it.
TEST_F(AtomicFile, ANewFileThatFailsHalfWayNeverAppears) {
  EXPECT_EQ(WriteUnderAFileSizeLimit(
                [&](const std::string& content) { return WriteFileAtomically(Target(), content); },
                Target()),
            0)
      << "11: accepted, 12/13: message without step/path";
  EXPECT_TRUE(fs::is_empty(dir_.path())) << "a part of the file or a temporary was left";
}

}  // namespace
}  // namespace gfp::adapters::host

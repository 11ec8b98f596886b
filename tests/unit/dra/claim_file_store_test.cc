// A prepared claim's files on a real folder tree: written whole with the modes runtimes need,
// found missing or changed by a repeated Prepare, removed by Unprepare (twice is fine), and never
// written through a planted symlink or outside the two folders.
#include "plugin/dra/claim_file_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <fstream>
#include <set>

#include "unit/dra/claim_files_on_disk.h"

namespace gfp::plugin::dra {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using ClaimFileStoreTest = ClaimFilesOnDisk;

TEST_F(ClaimFileStoreTest, WrittenFilesAreWholeAndReadableByRuntimes) {
  ASSERT_FALSE(ClaimFilesPresent(files));
  ASSERT_TRUE(WriteClaimFiles(dirs, files).ok());
  EXPECT_TRUE(ClaimFilesPresent(files));
  for (const auto& f : files) {
    std::ifstream in(f.path);
    const std::string content((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(content, f.content) << f.path;
    EXPECT_EQ(Mode(f.path), 0644u) << f.path;
  }
  EXPECT_EQ(Mode(ClaimMetadataDir(claim, dirs)), 0755u);
  EXPECT_EQ(Mode(ClaimMetadataDir(claim, dirs) / "gpu0"), 0755u);
}

// A first Prepare makes the claim's files and their folders and nothing else: no staging folder
// beside any of them (a new inode each, which an Unprepare then deletes again).
TEST_F(ClaimFileStoreTest, AFirstWriteMakesOnlyTheFilesAndTheirFolders) {
  ASSERT_TRUE(WriteClaimFiles(dirs, files).ok());
  std::set<fs::path> expected;
  for (const auto& f : files) {
    for (fs::path at = f.path; at != dir.path(); at = at.parent_path()) expected.insert(at);
  }
  std::set<fs::path> found;
  for (const auto& entry : fs::recursive_directory_iterator(dir.path())) found.insert(entry);
  EXPECT_EQ(found, expected);
}

TEST_F(ClaimFileStoreTest, AMissingOrChangedFileIsSeen) {
  ASSERT_TRUE(WriteClaimFiles(dirs, files).ok());
  fs::remove(files[1].path);
  EXPECT_FALSE(ClaimFilesPresent(files));
  ASSERT_TRUE(WriteClaimFiles(dirs, files).ok());  // the repair
  EXPECT_TRUE(ClaimFilesPresent(files));
  std::ofstream(files[0].path, std::ios::app) << " ";
  EXPECT_FALSE(ClaimFilesPresent(files));
  fs::remove(files[2].path);
  ASSERT_EQ(::mkfifo(files[2].path.c_str(), 0644), 0);
  EXPECT_FALSE(ClaimFilesPresent(files)) << "a FIFO is not the file, and never blocks the check";
  ASSERT_TRUE(WriteClaimFiles(dirs, files).ok()) << "replaced by the real file";
  EXPECT_TRUE(ClaimFilesPresent(files));
}

TEST_F(ClaimFileStoreTest, UnprepareRemovesEverythingAndCanBeRepeated) {
  ASSERT_TRUE(WriteClaimFiles(dirs, files).ok());
  ASSERT_TRUE(RemoveClaimFiles(dirs, ClaimPaths(claim, dirs)).ok());
  for (const auto& f : files) EXPECT_FALSE(fs::exists(f.path)) << f.path;
  EXPECT_FALSE(fs::exists(ClaimMetadataDir(claim, dirs)));
  EXPECT_TRUE(fs::exists(dirs.cdi_dir)) << "the CDI folder itself stays";
  EXPECT_TRUE(RemoveClaimFiles(dirs, ClaimPaths(claim, dirs)).ok());
}

TEST_F(ClaimFileStoreTest, APlantedSymlinkIsNeitherFollowedNorRemovedThrough) {
  const fs::path elsewhere = dir.path() / "etc";
  fs::create_directories(elsewhere);
  fs::create_directories(ClaimMetadataDir(claim, dirs).parent_path());
  fs::create_directory_symlink(elsewhere, ClaimMetadataDir(claim, dirs));
  const Status status = WriteClaimFiles(dirs, files);
  EXPECT_EQ(status.code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("is not a folder (a symlink or a file is there"));
  EXPECT_TRUE(fs::is_empty(elsewhere));
  std::ofstream(elsewhere / "keep") << "x";
  ASSERT_TRUE(RemoveClaimFiles(dirs, ClaimPaths(claim, dirs)).ok());
  EXPECT_TRUE(fs::exists(elsewhere / "keep")) << "remove_all removed the link, not its target";
}

TEST_F(ClaimFileStoreTest, PathsOutsideTheTwoFoldersAreRefused) {
  const std::vector<ClaimFile> outside = {{dir.path() / "run/other.json", "{}"},
                                          {dirs.cdi_dir / "../escape.json", "{}"}};
  for (const auto& f : outside) {
    const Status status = WriteClaimFiles(dirs, {f});
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument) << f.path;
    EXPECT_THAT(status.message(), HasSubstr("is outside"));
    EXPECT_FALSE(fs::exists(f.path));
  }
  EXPECT_EQ(RemoveClaimFiles(dirs, {dir.path()}).code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(fs::exists(dir.path()));
}

}  // namespace
}  // namespace gfp::plugin::dra

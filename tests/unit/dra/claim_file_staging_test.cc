// A first Prepare's files staged ahead on a real folder tree: nothing shows before Publish, the
// published files are what WriteClaimFiles writes (content and modes), nothing is left when they
// are dropped, and anything in the way (a folder of the claim's name with files, a leftover CDI
// spec, a symlink, a staging folder others may write in) is refused, for WriteClaimFiles to
// repair or name.
#include "plugin/dra/claim_file_staging.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <set>

#include "plugin/dra/claim_file_store.h"
#include "unit/dra/claim_files_on_disk.h"

namespace gfp::plugin::dra {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class ClaimFileStagingTest : public ClaimFilesOnDisk {
 protected:
  void SetUp() override {
    ClaimFilesOnDisk::SetUp();
    // As on a node where serve runs: the CDI folder and the plugin folder (its socket's) exist.
    fs::create_directories(dirs.cdi_dir);
    fs::create_directories(dirs.plugin_dir);
  }
  std::unique_ptr<StagedClaimFiles> Staged() {
    auto staged = StagedClaimFiles::Stage(dirs, claim);
    EXPECT_TRUE(staged.ok()) << staged.status().message();
    return staged.ok() ? std::move(staged).value() : nullptr;
  }
  // Every name below `folder`, recursively, relative to it.
  static std::vector<std::string> Listed(const fs::path& folder) {
    std::vector<std::string> names;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(folder, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      names.push_back(fs::relative(it->path(), folder).string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  static ino_t Inode(const fs::path& path) {
    struct stat info {};
    EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
    return info.st_ino;
  }
  fs::path MetadataRoot() const { return dirs.plugin_dir / "dra-device-metadata"; }
};

TEST_F(ClaimFileStagingTest, NothingShowsBeforePublishAndThenEveryFileAsWriteClaimFilesWritesIt) {
  auto staged = Staged();
  ASSERT_NE(staged, nullptr);
  EXPECT_THAT(Listed(dirs.cdi_dir), IsEmpty());
  EXPECT_FALSE(fs::exists(MetadataRoot()));
  ASSERT_FALSE(ClaimFilesPresent(files));

  ASSERT_TRUE(staged->Publish().ok());
  EXPECT_TRUE(ClaimFilesPresent(files));
  for (const auto& f : files) EXPECT_EQ(Mode(f.path), 0644u) << f.path;
  EXPECT_EQ(Mode(ClaimMetadataDir(claim, dirs)), 0755u);
  EXPECT_EQ(Mode(ClaimMetadataDir(claim, dirs) / "gpu0"), 0755u);
  // The same tree as WriteClaimFiles makes, and nothing else.
  const std::vector<std::string> published = Listed(dir.path());
  staged.reset();
  EXPECT_EQ(Listed(dir.path()), published);
  EXPECT_THAT(Listed(ClaimStagingDir(dirs)), IsEmpty());
  gfp::testing::TempDir other;
  const ClaimFileDirs other_dirs{other.path() / "run/cdi",
                                 other.path() / "plugins/gpu-fabric-plugin.io"};
  ASSERT_TRUE(WriteClaimFiles(other_dirs, ClaimFiles(claim, other_dirs)).ok());
  std::vector<std::string> written = Listed(other.path());
  written.push_back("plugins/gpu-fabric-plugin.io/.claim-staging");
  std::sort(written.begin(), written.end());
  EXPECT_EQ(published, written);
}

TEST_F(ClaimFileStagingTest, StagedFilesNeverPublishedLeaveNothing) {
  auto staged = Staged();
  ASSERT_NE(staged, nullptr);
  EXPECT_EQ(Listed(ClaimStagingDir(dirs)).size(), 5u);  // the folder, 2 request folders, 2 files
  staged.reset();
  EXPECT_THAT(Listed(ClaimStagingDir(dirs)), IsEmpty());
  EXPECT_THAT(Listed(dirs.cdi_dir), IsEmpty());
  EXPECT_FALSE(fs::exists(MetadataRoot()));
}

TEST_F(ClaimFileStagingTest, AnEmptyFolderOfTheClaimsNameIsReplacedOneWithFilesIsRefused) {
  fs::create_directories(ClaimMetadataDir(claim, dirs));
  ASSERT_TRUE(Staged()->Publish().ok());
  EXPECT_TRUE(ClaimFilesPresent(files));

  ASSERT_TRUE(RemoveClaimFiles(dirs, ClaimPaths(claim, dirs)).ok());
  fs::create_directories(ClaimMetadataDir(claim, dirs) / "gpu0");
  std::ofstream(ClaimMetadataDir(claim, dirs) / "gpu0" / "metadata.json") << "old";
  const Status refused = Staged()->Publish();
  EXPECT_EQ(refused.code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr(ClaimMetadataDir(claim, dirs).string()));
  EXPECT_THAT(Listed(ClaimStagingDir(dirs)), IsEmpty());
  ASSERT_TRUE(WriteClaimFiles(dirs, files).ok());  // what the preparer does next
  EXPECT_TRUE(ClaimFilesPresent(files));
}

TEST_F(ClaimFileStagingTest, ALeftoverCdiSpecIsNotReplacedByPublish) {
  std::ofstream(files[0].path) << "an older spec";
  auto staged = Staged();
  ASSERT_NE(staged, nullptr);
  EXPECT_EQ(staged->Publish().code(), ErrorCode::kAlreadyExists);
  ASSERT_TRUE(WriteClaimFiles(dirs, files).ok());
  EXPECT_TRUE(ClaimFilesPresent(files));
}

TEST_F(ClaimFileStagingTest, NothingIsWrittenThroughASymlinkedMetadataRoot) {
  gfp::testing::TempDir elsewhere;
  fs::create_directory_symlink(elsewhere.path(), MetadataRoot());
  const Status refused = Staged()->Publish();
  EXPECT_EQ(refused.code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("is not a folder"));
  EXPECT_THAT(Listed(elsewhere.path()), IsEmpty());
}

// A Prepare the saga refuses must leave no folder behind, so staging makes no base folder: on a
// fresh host the first Prepare writes its files in place (WriteClaimFiles creates them).
TEST_F(ClaimFileStagingTest, AMissingBaseFolderIsNotCreated) {
  fs::remove(dirs.cdi_dir);
  auto staged = StagedClaimFiles::Stage(dirs, claim);
  ASSERT_FALSE(staged.ok());
  EXPECT_EQ(staged.status().code(), ErrorCode::kNotFound);
  EXPECT_THAT(staged.status().message(), HasSubstr("run/cdi"));
  EXPECT_FALSE(fs::exists(dirs.cdi_dir));
  EXPECT_THAT(Listed(ClaimStagingDir(dirs)), IsEmpty());

  fs::remove_all(dir.path() / "plugins");
  staged = StagedClaimFiles::Stage(dirs, claim);
  ASSERT_FALSE(staged.ok());
  EXPECT_EQ(staged.status().code(), ErrorCode::kNotFound);
  EXPECT_THAT(staged.status().message(), HasSubstr(".claim-staging"));
  EXPECT_FALSE(fs::exists(dir.path() / "plugins"));
}

// What a hostile user can put at the staging folder's name: a symlink to a folder of theirs, a
// FIFO. Staging is refused without writing through it (the files are then written in place),
// and the next start's clearing removes the thing itself, never what a link points to.
TEST_F(ClaimFileStagingTest, ASymlinkOrFifoAtTheStagingNameIsRefusedAndCleared) {
  gfp::testing::TempDir elsewhere;
  fs::create_directory_symlink(elsewhere.path(), ClaimStagingDir(dirs));
  auto staged = StagedClaimFiles::Stage(dirs, claim);
  ASSERT_FALSE(staged.ok());
  EXPECT_EQ(staged.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(Listed(elsewhere.path()), IsEmpty());
  std::ofstream(elsewhere.path() / "theirs") << "kept";
  ASSERT_TRUE(ClearClaimStaging(dirs).ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(ClaimStagingDir(dirs))));
  EXPECT_TRUE(fs::exists(elsewhere.path() / "theirs"));

  ASSERT_EQ(::mkfifo(ClaimStagingDir(dirs).c_str(), 0600), 0);
  staged = StagedClaimFiles::Stage(dirs, claim);
  ASSERT_FALSE(staged.ok());
  EXPECT_EQ(staged.status().code(), ErrorCode::kFailedPrecondition);
  ASSERT_TRUE(ClearClaimStaging(dirs).ok());
  EXPECT_TRUE(Staged()->Publish().ok());
  EXPECT_TRUE(ClaimFilesPresent(files));
}

TEST_F(ClaimFileStagingTest, AStagingFolderOthersMayWriteInIsRefused) {
  fs::create_directories(ClaimStagingDir(dirs));
  fs::permissions(ClaimStagingDir(dirs), fs::perms::all);
  auto staged = StagedClaimFiles::Stage(dirs, claim);
  ASSERT_FALSE(staged.ok());
  EXPECT_EQ(staged.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(staged.status().message(), HasSubstr("is not a private folder of this user"));
}

TEST_F(ClaimFileStagingTest, ClearingTheStagingFolderRemovesWhatAKilledProcessLeft) {
  fs::create_directories(ClaimStagingDir(dirs) / "claim.Xy12Zq" / "gpu0");
  std::ofstream(ClaimStagingDir(dirs) / "claim.Xy12Zq" / "gpu0" / "metadata.json") << "{}";
  ASSERT_TRUE(ClearClaimStaging(dirs).ok());
  EXPECT_FALSE(fs::exists(ClaimStagingDir(dirs)));
  ASSERT_TRUE(ClearClaimStaging(dirs).ok());  // nothing there: fine
  EXPECT_TRUE(Staged()->Publish().ok());      // and staging makes it again
  EXPECT_TRUE(ClaimFilesPresent(files));
}

TEST_F(ClaimFileStagingTest, WithAReserveThePublishedFoldersAreItsAndTheFilesTheSame) {
  InodeReserve reserve(dirs, ReserveSize::ForClaimOf(2));
  ASSERT_TRUE(reserve.Refill().ok());
  std::set<ino_t> reserved;
  for (const auto& name : Listed(ClaimStagingDir(dirs))) {
    reserved.insert(Inode(ClaimStagingDir(dirs) / name));
  }
  ASSERT_EQ(reserved.size(), 3u);
  auto staged = StagedClaimFiles::Stage(dirs, claim, &reserve);
  ASSERT_TRUE(staged.ok()) << staged.status().message();
  ASSERT_TRUE((*staged)->Publish().ok());
  // Every folder and file came from the reserve: nothing is left in it.
  EXPECT_FALSE(reserve.TakeFolder().has_value());
  EXPECT_FALSE(reserve.TakeStagingFile().has_value());
  EXPECT_FALSE(reserve.TakeCdiFile().has_value());
  const fs::path metadata = ClaimMetadataDir(claim, dirs);
  EXPECT_EQ(reserved,
            (std::set<ino_t>{Inode(metadata), Inode(metadata / "gpu0"), Inode(metadata / "gpu1")}));
  // The same files, modes and tree as without a reserve.
  EXPECT_TRUE(ClaimFilesPresent(files));
  for (const auto& f : files) EXPECT_EQ(Mode(f.path), 0644u) << f.path;
  for (const auto& folder : {metadata, metadata / "gpu0", metadata / "gpu1"}) {
    EXPECT_EQ(Mode(folder), 0755u) << folder;
  }
  EXPECT_THAT(Listed(ClaimStagingDir(dirs)), IsEmpty());
}

TEST_F(ClaimFileStagingTest, AReserveWhoseFoldersWereClearedStillStages) {
  InodeReserve reserve(dirs, ReserveSize::ForClaimOf(2));
  ASSERT_TRUE(reserve.Refill().ok());
  ASSERT_TRUE(ClearClaimStaging(dirs).ok());  // as a start-up clearing after the refill
  auto staged = StagedClaimFiles::Stage(dirs, claim, &reserve);
  ASSERT_TRUE(staged.ok()) << staged.status().message();
  ASSERT_TRUE((*staged)->Publish().ok());
  EXPECT_TRUE(ClaimFilesPresent(files));
}

}  // namespace
}  // namespace gfp::plugin::dra

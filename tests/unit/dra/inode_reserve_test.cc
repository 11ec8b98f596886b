// The inodes made ahead for a first Prepare's staged files: new empty folders (0755) in the
// private staging folder and unnamed files in the staging and CDI folders, nothing seen by
// anyone; taken one by one, topped up by Refill, which gives way to a waiting Prepare; short, with
// the reason, where a base folder is missing; its folders gone with it.
#include "plugin/dra/inode_reserve.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "plugin/dra/claim_file_staging.h"
#include "unit/dra/claim_files_on_disk.h"

namespace gfp::plugin::dra {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class InodeReserveTest : public ClaimFilesOnDisk {
 protected:
  void SetUp() override {
    ClaimFilesOnDisk::SetUp();
    fs::create_directories(dirs.cdi_dir);
    fs::create_directories(dirs.plugin_dir);
  }
  std::vector<fs::path> Entries(const fs::path& folder) const {
    std::vector<fs::path> out;
    for (const auto& entry : fs::directory_iterator(folder)) out.push_back(entry.path());
    return out;
  }
  static struct stat Fstat(const UniqueFd& fd) {
    struct stat info {};
    EXPECT_EQ(::fstat(fd.get(), &info), 0);
    return info;
  }
  static struct stat Stat(const fs::path& path) {
    struct stat info {};
    EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
    return info;
  }
};

TEST_F(InodeReserveTest, RefillMakesNewEmptyFoldersAndUnnamedFilesNoOneSees) {
  InodeReserve reserve(dirs, {3, 2, 2});
  EXPECT_FALSE(reserve.Full());
  ASSERT_TRUE(reserve.Refill().ok());
  EXPECT_TRUE(reserve.Full());
  const std::vector<fs::path> folders = Entries(ClaimStagingDir(dirs));
  ASSERT_EQ(folders.size(), 3u);
  for (const fs::path& folder : folders) {
    EXPECT_THAT(folder.filename().string(), StartsWith("spare."));
    EXPECT_TRUE(fs::is_directory(folder) && fs::is_empty(folder)) << folder;
    EXPECT_EQ(Mode(folder), 0755u) << folder;
  }
  EXPECT_TRUE(Entries(dirs.cdi_dir).empty());  // the CDI specs' files have no name yet
  for (int i = 0; i < 2; ++i) {
    auto staging_file = reserve.TakeStagingFile();
    auto cdi_file = reserve.TakeCdiFile();
    ASSERT_TRUE(staging_file && cdi_file);
    EXPECT_TRUE(S_ISREG(Fstat(*staging_file).st_mode));
    EXPECT_EQ(Fstat(*staging_file).st_nlink, 0u);  // unnamed
    EXPECT_EQ(Fstat(*staging_file).st_dev, Stat(ClaimStagingDir(dirs)).st_dev);
    EXPECT_EQ(Fstat(*cdi_file).st_nlink, 0u);
    EXPECT_EQ(Fstat(*cdi_file).st_dev, Stat(dirs.cdi_dir).st_dev);
  }
  EXPECT_FALSE(reserve.TakeStagingFile().has_value());
  EXPECT_FALSE(reserve.TakeCdiFile().has_value());
}

TEST_F(InodeReserveTest, WhatIsTakenIsMadeAnewByTheNextRefill) {
  InodeReserve reserve(dirs, {1, 0, 0});
  ASSERT_TRUE(reserve.Refill().ok());
  const auto taken = reserve.TakeFolder();
  ASSERT_TRUE(taken.has_value());
  EXPECT_FALSE(reserve.TakeFolder().has_value());
  EXPECT_FALSE(reserve.Full());
  ASSERT_TRUE(reserve.Refill().ok());
  const auto made = reserve.TakeFolder();
  ASSERT_TRUE(made.has_value());
  EXPECT_NE(*made, *taken);
  EXPECT_NE(Stat(*made).st_ino, Stat(*taken).st_ino);  // a new inode, never the old one
}

TEST_F(InodeReserveTest, AMissingBaseFolderLeavesItShortNamesWhyAndCreatesNoBaseFolder) {
  fs::remove_all(dirs.plugin_dir);
  fs::remove_all(dirs.cdi_dir);
  InodeReserve reserve(dirs, {2, 1, 1});
  const Status made = reserve.Refill();
  EXPECT_FALSE(made.ok());
  EXPECT_THAT(made.message(), HasSubstr(ClaimStagingDir(dirs).string()));
  EXPECT_FALSE(reserve.Full());
  EXPECT_FALSE(reserve.TakeFolder().has_value());
  EXPECT_FALSE(reserve.TakeStagingFile().has_value());
  EXPECT_FALSE(reserve.TakeCdiFile().has_value());
  EXPECT_FALSE(fs::exists(dirs.plugin_dir));
  EXPECT_FALSE(fs::exists(dirs.cdi_dir));
}

TEST_F(InodeReserveTest, ItsFoldersGoWithIt) {
  {
    InodeReserve reserve(dirs, {3, 1, 1});
    ASSERT_TRUE(reserve.Refill().ok());
    ASSERT_EQ(Entries(ClaimStagingDir(dirs)).size(), 3u);
  }
  EXPECT_TRUE(Entries(ClaimStagingDir(dirs)).empty());
  EXPECT_TRUE(Entries(dirs.cdi_dir).empty());
}

TEST_F(InodeReserveTest, ARefillStopsAsSoonAsAPrepareWaits) {
  InodeReserve reserve(dirs, {3, 2, 2});
  int asked = 0;
  ASSERT_TRUE(reserve.Refill([&] { return ++asked > 2; }).ok());
  EXPECT_EQ(Entries(ClaimStagingDir(dirs)).size(), 2u);  // two folders, then it gave way
  EXPECT_FALSE(reserve.TakeStagingFile().has_value());
  EXPECT_FALSE(reserve.TakeCdiFile().has_value());
  EXPECT_FALSE(reserve.Full());
  ASSERT_TRUE(reserve.Refill().ok());  // and the next refill makes the rest
  EXPECT_TRUE(reserve.Full());
  EXPECT_EQ(Entries(ClaimStagingDir(dirs)).size(), 3u);
}

}  // namespace
}  // namespace gfp::plugin::dra

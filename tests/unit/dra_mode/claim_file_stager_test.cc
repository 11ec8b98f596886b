// The stager thread: what it staged comes back through StagedFiles, which waits for it and
// removes it unless published; a claim that cannot be staged comes back null (written in place
// then); everything handed over is staged before the thread ends.
#include "plugin/dra_mode/claim_file_stager.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include "plugin/dra/claim_file_store.h"
#include "tests/common/temp_dir.h"

namespace gfp::plugin::dra_mode {
namespace {

namespace fs = std::filesystem;

class ClaimFileStagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dirs = {dir.path() / "cdi", dir.path() / "plugins/gpu-fabric-plugin.io"};
    fs::create_directories(dirs.cdi_dir);
    fs::create_directories(dirs.plugin_dir);
  }
  dra::PreparedClaim Claim(const std::string& name) const {
    return {"gpu-fabric-plugin.io",
            "node-a",
            "uid-" + name,
            "vms",
            name,
            "",
            {{"gpu0", "0000:1b:00.0", {"/dev/vfio/42", "/dev/vfio/vfio"}}}};
  }
  bool NothingStaged() const { return fs::is_empty(dra::ClaimStagingDir(dirs)); }

  gfp::testing::TempDir dir;
  dra::ClaimFileDirs dirs;
};

TEST_F(ClaimFileStagerTest, WhatItStagedComesBackAndIsRemovedWhenDropped) {
  ClaimFileStager stager;
  auto published = stager.Stage(dirs, Claim("vm-a")).Take();
  ASSERT_NE(published, nullptr);
  ASSERT_TRUE(published->Publish().ok());
  EXPECT_TRUE(dra::ClaimFilesPresent(dra::ClaimFiles(Claim("vm-a"), dirs)));

  { StagedFiles dropped = stager.Stage(dirs, Claim("vm-b")); }  // a Prepare that was refused
  EXPECT_TRUE(NothingStaged());
  EXPECT_FALSE(fs::exists(dra::ClaimMetadataDir(Claim("vm-b"), dirs)));
}

TEST_F(ClaimFileStagerTest, AClaimThatCannotBeStagedComesBackNull) {
  fs::remove(dirs.cdi_dir);
  ClaimFileStager stager;
  EXPECT_EQ(stager.Stage(dirs, Claim("vm-a")).Take(), nullptr);
  EXPECT_TRUE(NothingStaged());
}

TEST_F(ClaimFileStagerTest, EverythingHandedOverIsStagedBeforeTheThreadEnds) {
  std::vector<StagedFiles> pending;
  {
    ClaimFileStager stager;
    for (int i = 0; i < 20; ++i)
      pending.push_back(stager.Stage(dirs, Claim("vm-" + std::to_string(i))));
  }
  for (auto& staged : pending) {
    auto files = staged.Take();
    ASSERT_NE(files, nullptr);
    EXPECT_TRUE(files->Publish().ok());
  }
  EXPECT_TRUE(NothingStaged());
}

TEST_F(ClaimFileStagerTest, WithAReserveItMakesTheNextClaimsFoldersOnceQuiet) {
  // The inodes of the spare folders in the staging folder.
  const auto spares = [&] {
    std::set<ino_t> inodes;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dra::ClaimStagingDir(dirs), ec)) {
      struct stat info {};
      if (e.path().filename().string().starts_with("spare.") &&
          ::lstat(e.path().c_str(), &info) == 0) {
        inodes.insert(info.st_ino);
      }
    }
    return inodes;
  };
  const auto wait_for_spares = [&](std::size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (spares().size() != n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return spares();
  };
  ClaimFileStager stager(
      std::make_unique<dra::InodeReserve>(dirs, dra::ReserveSize::ForClaimOf(1)));
  const std::set<ino_t> before = wait_for_spares(2);  // made once the thread started, quiet
  ASSERT_EQ(before.size(), 2u);
  auto staged = stager.Stage(dirs, Claim("vm-a")).Take();
  ASSERT_NE(staged, nullptr);
  ASSERT_TRUE(staged->Publish().ok());
  EXPECT_TRUE(dra::ClaimFilesPresent(dra::ClaimFiles(Claim("vm-a"), dirs)));
  struct stat published {};
  ASSERT_EQ(::lstat(dra::ClaimMetadataDir(Claim("vm-a"), dirs).c_str(), &published), 0);
  EXPECT_TRUE(before.contains(published.st_ino));    // the claim's folder was a spare one
  const std::set<ino_t> after = wait_for_spares(2);  // made again once quiet after the staging
  ASSERT_EQ(after.size(), 2u);
  for (ino_t inode : after) EXPECT_FALSE(before.contains(inode)) << "a spare was not taken";
}

}  // namespace
}  // namespace gfp::plugin::dra_mode

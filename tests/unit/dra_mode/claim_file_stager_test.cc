// The stager thread: what it staged comes back through StagedFiles, which waits for it and
// removes it unless published; a claim that cannot be staged comes back null (written in place
// then); everything handed over is staged before the thread ends.
#include "plugin/dra_mode/claim_file_stager.h"

#include <gtest/gtest.h>

#include <filesystem>
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
  EXPECT_FALSE(fs::exists(dirs.plugin_dir / "dra-device-metadata" / "vms_vm-b"));
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

}  // namespace
}  // namespace gfp::plugin::dra_mode

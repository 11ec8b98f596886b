// The fixture of the tests that put a prepared claim's files on a real folder tree: the two base
// folders below a temporary folder, a claim of two requests, its files, and their modes.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <vector>

#include "common/temp_dir.h"
#include "plugin/dra/claim_files.h"

namespace gfp::plugin::dra {

class ClaimFilesOnDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    dirs = {dir.path() / "run/cdi", dir.path() / "plugins/gpu-fabric-plugin.io"};
    claim.driver = "gpu-fabric-plugin.io";
    claim.pool = "node-a";
    claim.uid = "6f1d2c3a-8b4e-4f60-9a71-2c5d8e9f0a1b";
    claim.namespace_name = "vms";
    claim.name = "vm-a-gpus";
    claim.pod_claim_name = "gpus";
    claim.gpus = {{"gpu0", "0000:1b:00.0", {"/dev/vfio/42", "/dev/vfio/vfio"}},
                  {"gpu1", "0000:43:00.0", {"/dev/vfio/43", "/dev/vfio/vfio"}}};
    files = ClaimFiles(claim, dirs);
  }
  static mode_t Mode(const std::filesystem::path& path) {
    struct stat info {};
    EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
    return info.st_mode & 07777;
  }

  gfp::testing::TempDir dir;
  ClaimFileDirs dirs;
  PreparedClaim claim;
  std::vector<ClaimFile> files;
};

}  // namespace gfp::plugin::dra

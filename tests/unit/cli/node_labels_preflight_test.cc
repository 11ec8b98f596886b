// serve's start-up check of --node-labels-file (SPEC §2.1, §8.2): needs --fabric-manager, never
// the journal, and every message starts with the flag and its value.
#include <gtest/gtest.h>

#include "cli/serve_preflight.h"
#include "common/temp_dir.h"

namespace gfp::cli {
namespace {

class NodeLabelsPreflight : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_.path() / "sys");
    std::filesystem::create_directories(dir_.path() / "dev");
    std::filesystem::create_directories(dir_.path() / "features.d");
    config_.sysfs_root = dir_.path() / "sys";
    config_.dev_root = dir_.path() / "dev";
    config_.journal = dir_.path() / "journal.db";
    config_.pci_module_mapping = dir_.Write("mapping.json", "{}");
    config_.fm_library = dir_.Write("libnvfm.so.1", "").string();
    config_.fm_address = "/run/fm.sock";
    config_.fabric_manager = true;
    config_.node_labels_file = dir_.path() / "features.d" / "gpu-fabric";
  }
  std::string Error() {
    const Status status = CheckServeConfig(config_);
    EXPECT_FALSE(status.ok()) << "accepted";
    return status.message();
  }
  std::string Flag() const { return "--node-labels-file=" + config_.node_labels_file.string(); }

  gfp::testing::TempDir dir_;
  plugin::ServeConfig config_;
};

TEST_F(NodeLabelsPreflight, AcceptedWithFabricManagerAndOffByDefault) {
  EXPECT_TRUE(CheckServeConfig(config_).ok()) << CheckServeConfig(config_).message();
  config_.node_labels_file.clear();
  config_.fabric_manager = false;
  EXPECT_TRUE(CheckServeConfig(config_).ok()) << CheckServeConfig(config_).message();
}

TEST_F(NodeLabelsPreflight, WithoutFabricManagerItIsAnError) {
  config_.fabric_manager = false;
  EXPECT_EQ(Error(), Flag() +
                         " needs --fabric-manager: the labels count Fabric Manager "
                         "partitions, and there are none without it");
}

TEST_F(NodeLabelsPreflight, TheJournalIsNeverTheLabelsFile) {
  const std::string own = " is the journal's own file (--journal=" + config_.journal.string() + ")";
  config_.node_labels_file = config_.journal;
  EXPECT_EQ(Error(), Flag() + own);
  config_.node_labels_file = dir_.path() / "x" / ".." / "journal.db-wal";
  EXPECT_EQ(Error(), Flag() + own);
  // Spelled through a symlinked folder: the same folder by device and inode (seen red: the
  // labels replaced the journal while serve ran on, ready).
  std::filesystem::create_directory_symlink(dir_.path(), dir_.path() / "features.d" / "up");
  for (const char* name :
       {"journal.db", "journal.db-wal", "journal.db-shm", "journal.db-journal"}) {
    config_.node_labels_file = dir_.path() / "features.d" / "up" / name;
    EXPECT_EQ(Error(), Flag() + own) << name;
  }
  config_.node_labels_file = dir_.path() / "features.d" / "up" / "gpu-fabric";
  EXPECT_TRUE(CheckServeConfig(config_).ok()) << "another name in the journal's folder is fine";
}

TEST_F(NodeLabelsPreflight, PathProblemsFollowTheFlag) {
  config_.node_labels_file = dir_.path() / "features.d";
  EXPECT_EQ(Error(), Flag() + " is not a regular file (a directory)");
  config_.node_labels_file = dir_.path() / "absent" / "gpu-fabric";
  EXPECT_EQ(Error().rfind(
                Flag() + ": folder " + (dir_.path() / "absent").string() + " does not exist", 0),
            0u);
  // A control character in the value is shown escaped: one line.
  config_.node_labels_file = dir_.path() / "absent\nforged" / "gpu-fabric";
  EXPECT_EQ(Error().find('\n'), std::string::npos);
}

}  // namespace
}  // namespace gfp::cli

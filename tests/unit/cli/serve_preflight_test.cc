#include "cli/serve_preflight.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "common/temp_dir.h"

namespace gfp::cli {
namespace {

// A configuration whose every path exists, in a temp dir.
class ServePreflight : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_.path() / "sys");
    std::filesystem::create_directories(dir_.path() / "dev");
    config_.sysfs_root = dir_.path() / "sys";
    config_.dev_root = dir_.path() / "dev";
    config_.journal = dir_.path() / "state" / "journal.db";
    config_.pci_ids = dir_.Write("pci.ids", "");
    config_.pci_module_mapping = dir_.Write("mapping.json", "{}");
    config_.fm_library = dir_.Write("libnvfm.so.1", "").string();
    config_.fm_address = "/run/fm.sock";
    config_.fabric_manager = true;
  }
  std::string Error() {
    const Status status = CheckServeConfig(config_);
    EXPECT_FALSE(status.ok()) << "accepted";
    return status.message();
  }
  std::string Dir() const { return dir_.path().string(); }

  gfp::testing::TempDir dir_;
  plugin::ServeConfig config_;
};

TEST_F(ServePreflight, AGoodConfigurationPassesAndCreatesNothing) {
  EXPECT_TRUE(CheckServeConfig(config_).ok()) << CheckServeConfig(config_).message();
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "state"));
}

TEST_F(ServePreflight, Roots) {
  config_.sysfs_root = dir_.path() / "absent";
  EXPECT_EQ(Error(), "--sysfs-root=" + Dir() + "/absent does not exist");
  config_.sysfs_root = config_.pci_ids;
  EXPECT_EQ(Error(), "--sysfs-root=" + Dir() + "/pci.ids is not a directory (a regular file)");
  config_.sysfs_root = dir_.path() / "sys";
  config_.dev_root = dir_.path() / "absent";
  EXPECT_EQ(Error(), "--dev-root=" + Dir() + "/absent does not exist");
}

TEST_F(ServePreflight, Journal) {
  config_.journal = dir_.path() / "sys";
  EXPECT_EQ(Error(), "--journal=" + Dir() + "/sys is not a regular file (a directory)");
  ASSERT_EQ(::mkfifo((dir_.path() / "fifo").c_str(), 0600), 0);
  config_.journal = dir_.path() / "fifo";
  EXPECT_EQ(Error(), "--journal=" + Dir() + "/fifo is not a regular file (a FIFO)");
  config_.journal = dir_.path() / "pci.ids" / "deeper" / "journal.db";
  EXPECT_EQ(Error(), "--journal=" + Dir() + "/pci.ids/deeper/journal.db: " + Dir() +
                         "/pci.ids is not a directory (a regular file)");
  // Missing parents are fine: the journal creates them.
  config_.journal = dir_.path() / "a" / "b" / "journal.db";
  EXPECT_TRUE(CheckServeConfig(config_).ok());
  // An existing journal file is fine too.
  config_.journal = config_.pci_ids;
  EXPECT_TRUE(CheckServeConfig(config_).ok());
}

TEST_F(ServePreflight, PciIds) {
  config_.pci_ids = dir_.path() / "absent.ids";
  EXPECT_EQ(Error(), "--pci-ids=" + Dir() + "/absent.ids does not exist");
  config_.pci_ids = dir_.path() / "sys";
  EXPECT_EQ(Error(), "--pci-ids=" + Dir() + "/sys is not a regular file (a directory)");
  config_.pci_ids.clear();  // the default search
  EXPECT_TRUE(CheckServeConfig(config_).ok());
}

TEST_F(ServePreflight, FabricManagerFilesOnlyWhenEnabled) {
  config_.pci_module_mapping = dir_.path() / "absent.json";
  EXPECT_EQ(Error(), "--pci-module-mapping=" + Dir() + "/absent.json does not exist");
  config_.pci_module_mapping = dir_.path() / "sys";
  EXPECT_EQ(Error(), "--pci-module-mapping=" + Dir() + "/sys is not a regular file (a directory)");
  config_.pci_module_mapping = dir_.path() / "mapping.json";
  config_.fm_library = Dir() + "/absent/libnvfm.so.1";
  EXPECT_EQ(Error(), "--fm-library=" + Dir() + "/absent/libnvfm.so.1 does not exist");
  config_.fm_library = "libnvfm.so.1";  // searched by the dynamic loader: not checked here
  EXPECT_TRUE(CheckServeConfig(config_).ok());
  config_.fm_address = "[::1]:6666";
  EXPECT_EQ(Error(),
            "--fm-address: Fabric Manager address \"[::1]:6666\" is IPv6, which the Fabric "
            "Manager SDK does not support (its addressInfo takes IPv4[:port] or a Unix socket "
            "path)");

  // Without Fabric Manager none of its flags is used, so none can stop the start.
  config_.fabric_manager = false;
  config_.pci_module_mapping = dir_.path() / "absent.json";
  config_.fm_library = Dir() + "/absent/libnvfm.so.1";
  EXPECT_TRUE(CheckServeConfig(config_).ok()) << CheckServeConfig(config_).message();
}

TEST_F(ServePreflight, PathsAreEchoedEscaped) {
  config_.sysfs_root = dir_.path() / "new\nline";
  EXPECT_EQ(Error(), "--sysfs-root=" + Dir() + "/new\\nline does not exist");
}

}  // namespace
}  // namespace gfp::cli

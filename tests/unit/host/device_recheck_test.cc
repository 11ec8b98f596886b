#include "adapters/host/device_recheck.h"

#include <gtest/gtest.h>

#include <fstream>

#include "adapters/host/pci_discovery.h"
#include "common/temp_dir.h"
#include "sim/node/fake_node.h"

namespace gfp::adapters::host {
namespace {

class HostDeviceRecheck : public ::testing::Test {
 protected:
  void SetUp() override {
    auto node = sim::BuildFakeNode(dir_.path(), {});
    ASSERT_TRUE(node.ok()) << node.status().message();
    node_ = *node;
    auto found = DiscoverVfioDevices(node_.sysfs_root);
    ASSERT_TRUE(found.ok());
    device_ = *found->Find("0000:1b:00.0");
  }
  gfp::testing::TempDir dir_;
  sim::FakeNode node_;
  PciDevice device_;
};

TEST_F(HostDeviceRecheck, UnchangedDevicePasses) {
  EXPECT_TRUE(CheckDeviceUnchanged(node_.sysfs_root, device_).ok());
  auto identity = ReadDeviceIdentity(node_.sysfs_root, device_.bdf);
  ASSERT_TRUE(identity.ok());
  EXPECT_EQ(identity->vendor, "10de");
  EXPECT_EQ(identity->iommu_group, device_.iommu_group);
  EXPECT_EQ(identity->driver, "vfio-pci");
}

TEST_F(HostDeviceRecheck, ChangedIommuGroupFails) {
  ASSERT_TRUE(node_.SetIommuGroup(device_.bdf, "99").ok());
  const Status status = CheckDeviceUnchanged(node_.sysfs_root, device_);
  EXPECT_EQ(status.code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "0000:1b:00.0: IOMMU group changed from " + device_.iommu_group + " to 99");
}

TEST_F(HostDeviceRecheck, ChangedVendorFails) {
  std::ofstream(node_.DeviceDir(device_.bdf) / "vendor", std::ios::trunc) << "0x8086\n";
  EXPECT_EQ(CheckDeviceUnchanged(node_.sysfs_root, device_).message(),
            "0000:1b:00.0: vendor changed from 10de to 8086");
}

TEST_F(HostDeviceRecheck, RemovedDeviceFails) {
  ASSERT_TRUE(node_.RemoveDevice(device_.bdf).ok());
  const Status status = CheckDeviceUnchanged(node_.sysfs_root, device_);
  EXPECT_EQ(status.code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(status.message(), "0000:1b:00.0: cannot read vendor: No such file or directory");
}

TEST_F(HostDeviceRecheck, RebindIsVisibleInIdentityButNotAGroupOrVendorChange) {
  ASSERT_TRUE(node_.RebindDriver(device_.bdf, "nvidia").ok());
  EXPECT_TRUE(CheckDeviceUnchanged(node_.sysfs_root, device_).ok());
  EXPECT_EQ(ReadDeviceIdentity(node_.sysfs_root, device_.bdf)->driver, "nvidia");
  ASSERT_TRUE(node_.RebindDriver(device_.bdf, "").ok());
  EXPECT_EQ(ReadDeviceIdentity(node_.sysfs_root, device_.bdf)->driver, std::nullopt);
}

}  // namespace
}  // namespace gfp::adapters::host

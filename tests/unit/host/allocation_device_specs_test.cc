#include "adapters/host/allocation_device_specs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "adapters/host/pci_discovery.h"
#include "adapters/host/vfio_nodes.h"
#include "common/temp_dir.h"
#include "sim/node/fake_node.h"

namespace gfp::adapters::host {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Paths(const std::vector<DeviceNodeSpec>& specs) {
  std::vector<std::string> paths;
  for (const auto& spec : specs) {
    EXPECT_EQ(spec.host_path, spec.container_path);
    EXPECT_EQ(spec.permissions, "mrw");
    paths.push_back(spec.host_path);
  }
  return paths;
}

class HostAllocationDeviceSpecs : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    auto node =
        sim::BuildFakeNode(dir_.path(), {sim::NodePreset::kHgxH100, GetParam(), true, true});
    ASSERT_TRUE(node.ok()) << node.status().message();
    node_ = *node;
    auto found = DiscoverVfioDevices(node_.sysfs_root);
    ASSERT_TRUE(found.ok());
    devices_ = found->devices;
  }
  gfp::testing::TempDir dir_;
  sim::FakeNode node_;
  std::vector<PciDevice> devices_;
};

TEST_P(HostAllocationDeviceSpecs, TwoGpus) {
  const bool iommufd = IommufdAvailable(node_.dev_root);
  ASSERT_EQ(iommufd, GetParam());
  // Request order, not PCI order: 0000:43 (group 41, vfio1) before 0000:1b (group 40, vfio0).
  const std::vector<std::string> request = {"0000:43:00.0", "0000:1b:00.0"};
  auto specs = ContainerDeviceSpecs(devices_, request, iommufd);
  ASSERT_TRUE(specs.ok()) << specs.status().message();
  if (iommufd) {
    EXPECT_THAT(Paths(*specs),
                ElementsAre("/dev/vfio/devices/vfio1", "/dev/vfio/vfio", "/dev/vfio/41",
                            "/dev/iommu", "/dev/vfio/devices/vfio0", "/dev/vfio/40"));
  } else {
    EXPECT_THAT(Paths(*specs), ElementsAre("/dev/vfio/vfio", "/dev/vfio/41", "/dev/vfio/40"));
  }
  // Never the --dev-root path: kubelet resolves these on the host.
  for (const auto& path : Paths(*specs)) {
    EXPECT_EQ(path.find(node_.dev_root.string()), std::string::npos) << path;
  }
}

TEST_P(HostAllocationDeviceSpecs, RepeatedDeviceIsDeduplicated) {
  const std::vector<std::string> request = {"0000:1b:00.0", "0000:1b:00.0"};
  auto specs = ContainerDeviceSpecs(devices_, request, GetParam());
  ASSERT_TRUE(specs.ok());
  EXPECT_EQ(specs->size(), GetParam() ? 4u : 2u);
}

TEST_P(HostAllocationDeviceSpecs, UnknownDeviceIsRejected) {
  const std::vector<std::string> request = {"0000:1b:00.0", "0000:05:00.0"};  // an NVSwitch
  auto specs = ContainerDeviceSpecs(devices_, request, GetParam());
  ASSERT_FALSE(specs.ok());
  EXPECT_EQ(specs.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(specs.status().message(), "invalid allocation request: unknown device: 0000:05:00.0");
}

std::string IommufdParamName(const ::testing::TestParamInfo<bool>& param) {
  return param.param ? "iommufd" : "legacy";
}

INSTANTIATE_TEST_SUITE_P(HostIommufd, HostAllocationDeviceSpecs, ::testing::Bool(),
                         IommufdParamName);

// A GPU and its audio function in one IOMMU group: the whole group goes to the VM.
TEST(HostAllocationDeviceSpecsGroup, IommufdListsEveryGroupMember) {
  std::vector<PciDevice> devices = {
      {"0000:18:00.0", "2331", "vfio-pci", "7", 0, "vfio3"},
      {"0000:18:00.1", "22bb", "vfio-pci", "7", 0, "vfio4"},
      {"0000:2a:00.0", "2331", "vfio-pci", "9", 1, "vfio5"},
  };
  const std::vector<std::string> request = {"0000:18:00.0", "0000:2a:00.0"};
  auto specs = ContainerDeviceSpecs(devices, request, true);
  ASSERT_TRUE(specs.ok());
  EXPECT_THAT(Paths(*specs),
              ElementsAre("/dev/vfio/devices/vfio3", "/dev/vfio/devices/vfio4", "/dev/vfio/vfio",
                          "/dev/vfio/7", "/dev/iommu", "/dev/vfio/devices/vfio5", "/dev/vfio/9"));

  devices[1].iommufd_device.reset();
  auto missing = ContainerDeviceSpecs(devices, request, true);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "could not determine iommufd device for device 0000:18:00.1: no vfio* entry under "
            "its vfio-dev/");
  // Without iommufd the missing cdev does not matter.
  EXPECT_TRUE(ContainerDeviceSpecs(devices, request, false).ok());
}

TEST(HostAllocationDeviceSpecsGroup, EmptyRequestGivesNoSpecs) {
  auto specs = ContainerDeviceSpecs({}, {}, true);
  ASSERT_TRUE(specs.ok());
  EXPECT_TRUE(specs->empty());
}

// mdev vGPUs on the fake A100 node (one IOMMU group per mdev, as on a real host): /dev/vfio/vfio
// and each mdev's group node, never the /dev/vfio directory (issue 21; the Go plugin hands out
// the directory, upstream-behaviour.md §1.10, which a runtime expands to every VM's group).
class HostMdevDeviceSpecs : public ::testing::Test {
 protected:
  void SetUp() override {
    auto node = sim::BuildVgpuNode(dir_.path(), {sim::VgpuNodePreset::kMdevA100, true, true});
    ASSERT_TRUE(node.ok()) << node.status().message();
    node_ = *node;
    ASSERT_GE(node_.mdevs.size(), 3u);
  }
  Result<std::vector<DeviceNodeSpec>> Specs(const std::vector<std::string>& uuids) const {
    return MdevContainerDeviceSpecs(node_.sysfs_root, node_.dev_root, uuids);
  }
  std::filesystem::path EntryOf(const sim::FakeMdev& mdev) const {
    return node_.sysfs_root / "bus" / "mdev" / "devices" / mdev.uuid;
  }
  // Points the mdev's iommu_group link at `target` (a real symlink, as the kernel makes).
  void RelinkGroup(const sim::FakeMdev& mdev, const std::filesystem::path& target) const {
    const auto link = EntryOf(mdev) / "iommu_group";
    ASSERT_TRUE(std::filesystem::remove(link));
    std::filesystem::create_symlink(target, link);
  }
  gfp::testing::TempDir dir_;
  sim::FakeNode node_;
};

TEST_F(HostMdevDeviceSpecs, TwoMdevsInTwoGroupsGetTheContainerNodeOnceAndBothGroupNodes) {
  const auto& a = node_.mdevs[2];
  const auto& b = node_.mdevs[0];
  ASSERT_NE(a.iommu_group, b.iommu_group);
  auto specs = Specs({a.uuid, b.uuid});
  ASSERT_TRUE(specs.ok()) << specs.status().message();
  // Request order, real /dev paths (never --dev-root), no directory.
  EXPECT_THAT(Paths(*specs), ElementsAre("/dev/vfio/vfio", "/dev/vfio/" + a.iommu_group,
                                         "/dev/vfio/" + b.iommu_group));
}

TEST_F(HostMdevDeviceSpecs, TwoMdevsSharingAGroupGetItsNodeOnce) {
  const auto& a = node_.mdevs[0];
  const auto& b = node_.mdevs[1];
  RelinkGroup(b, std::filesystem::read_symlink(EntryOf(a) / "iommu_group"));
  auto specs = Specs({a.uuid, b.uuid});
  ASSERT_TRUE(specs.ok()) << specs.status().message();
  EXPECT_THAT(Paths(*specs), ElementsAre("/dev/vfio/vfio", "/dev/vfio/" + a.iommu_group));
}

TEST_F(HostMdevDeviceSpecs, AnMdevWithoutIommuGroupFailsTheAllocateNamingIt) {
  const auto& gone = node_.mdevs[1];
  ASSERT_TRUE(std::filesystem::remove(EntryOf(gone) / "iommu_group"));
  auto specs = Specs({node_.mdevs[0].uuid, gone.uuid});
  ASSERT_FALSE(specs.ok());
  EXPECT_EQ(specs.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(specs.status().message(),
            "mdev " + gone.uuid + ": no iommu_group under " + EntryOf(gone).string());
}

TEST_F(HostMdevDeviceSpecs, AGroupThatIsNotDigitsIsRefused) {
  const auto& mdev = node_.mdevs[0];
  RelinkGroup(mdev, "../../../../etc");
  auto specs = Specs({mdev.uuid});
  ASSERT_FALSE(specs.ok());
  EXPECT_EQ(specs.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(specs.status().message(),
            "mdev " + mdev.uuid + ": iommu_group link points to \"etc\", not a group number");
  // Nor digits with something else: "12 " or "../12/.." would become another path.
  RelinkGroup(mdev, "../../../../kernel/iommu_groups/..");
  EXPECT_FALSE(Specs({mdev.uuid}).ok());
}

TEST_F(HostMdevDeviceSpecs, AGroupWhoseDevNodeIsMissingIsRefused) {
  const auto& mdev = node_.mdevs[1];
  ASSERT_TRUE(node_.RemoveVfioGroupNode(mdev.iommu_group).ok());
  auto specs = Specs({node_.mdevs[0].uuid, mdev.uuid});
  ASSERT_FALSE(specs.ok());
  EXPECT_EQ(specs.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(specs.status().message(), "mdev " + mdev.uuid + ": VFIO group node " +
                                          (node_.dev_root / "vfio" / mdev.iommu_group).string() +
                                          " is missing");
}

TEST_F(HostMdevDeviceSpecs, AnIdThatIsNotAnMdevUuidIsInvalidAndNoSpecsForNoMdevs) {
  auto specs = Specs({"../../../../etc"});
  ASSERT_FALSE(specs.ok());
  EXPECT_EQ(specs.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(specs.status().message(),
            "invalid allocation request: not an mdev UUID: ../../../../etc");
  auto none = Specs({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace gfp::adapters::host

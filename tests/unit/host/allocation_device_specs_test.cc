#include "adapters/host/allocation_device_specs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

// upstream-behaviour.md §1.10: an mdev container gets the /dev/vfio directory itself, mrw.
TEST(HostAllocationDeviceSpecsMdev, TheWholeVfioDirectoryOnce) {
  EXPECT_EQ(MdevContainerDeviceSpecs(),
            (std::vector<DeviceNodeSpec>{{"/dev/vfio", "/dev/vfio", "mrw"}}));
}

}  // namespace
}  // namespace gfp::adapters::host

#include "adapters/host/pci_discovery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "common/temp_dir.h"
#include "sim/node/fake_node.h"

namespace gfp::adapters::host {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class HostPciDiscovery : public ::testing::Test {
 protected:
  sim::FakeNode Build(sim::NodePreset preset, bool iommufd = false) {
    auto node = sim::BuildFakeNode(dir_.path() / "node", {preset, iommufd, true, true});
    EXPECT_TRUE(node.ok()) << node.status().message();
    return node.ok() ? *node : sim::FakeNode();
  }
  PciDiscovery Discover(const sim::FakeNode& node) {
    auto found = DiscoverVfioDevices(node.sysfs_root);
    EXPECT_TRUE(found.ok()) << found.status().message();
    return found.ok() ? *found : PciDiscovery();
  }
  // Builds an H100 node, lets `breakage` damage GPU 0000:1b:00.0, and returns the discovery.
  template <typename Breakage>
  PciDiscovery DiscoverWithBrokenFirstGpu(Breakage breakage) {
    node_ = Build(sim::NodePreset::kHgxH100);
    breakage(node_, node_.DeviceDir("0000:1b:00.0"));
    return Discover(node_);
  }
  static void WriteFile(const std::filesystem::path& path, const std::string& content) {
    std::ofstream(path, std::ios::trunc) << content;
  }

  gfp::testing::TempDir dir_;
  sim::FakeNode node_;
};

void ExpectMatchesFakeNode(const PciDiscovery& found, const sim::FakeNode& node) {
  ASSERT_EQ(found.devices.size(), node.gpus.size());
  for (std::size_t i = 0; i < node.gpus.size(); ++i) {
    const PciDevice& device = found.devices[i];
    const sim::FakeGpu& gpu = node.gpus[i];
    EXPECT_EQ(device.bdf, gpu.bdf);
    EXPECT_EQ(device.device_id, node.gpu_device_id);
    EXPECT_EQ(device.driver, "vfio-pci");
    EXPECT_EQ(device.iommu_group, gpu.iommu_group);
    EXPECT_EQ(device.numa_node, gpu.numa_node);
    EXPECT_EQ(device.iommufd_device, gpu.vfio_device);
  }
  for (const auto& sw : node.nvswitches) EXPECT_EQ(found.Find(sw.bdf), nullptr) << sw.bdf;
  for (const auto& other : node.other_devices) EXPECT_EQ(found.Find(other.bdf), nullptr);
  EXPECT_THAT(found.warnings, IsEmpty());
}

TEST_F(HostPciDiscovery, HgxH100) {
  const auto node = Build(sim::NodePreset::kHgxH100);
  const PciDiscovery found = Discover(node);
  ExpectMatchesFakeNode(found, node);
  EXPECT_EQ(found.devices.size(), 8u);
  EXPECT_EQ(node.nvswitches.size(), 4u);
  EXPECT_THAT(found.DeviceIds(), ElementsAre("2330"));
  // Sorted by BDF; NUMA split at bus 0x80.
  EXPECT_EQ(found.devices.front().bdf, "0000:1b:00.0");
  EXPECT_EQ(found.devices.back().bdf, "0000:df:00.0");
  EXPECT_EQ(found.Find("0000:61:00.0")->numa_node, 0);
  EXPECT_EQ(found.Find("0000:9d:00.0")->numa_node, 1);
}

TEST_F(HostPciDiscovery, HgxB200) {
  const auto node = Build(sim::NodePreset::kHgxB200);
  const PciDiscovery found = Discover(node);
  ExpectMatchesFakeNode(found, node);
  EXPECT_EQ(found.devices.size(), 8u);
  EXPECT_EQ(node.nvswitches.size(), 2u);
  EXPECT_THAT(found.DeviceIds(), ElementsAre("2901"));
}

TEST_F(HostPciDiscovery, HgxA100With16Gpus) {
  const auto node = Build(sim::NodePreset::kHgxA100x16);
  const PciDiscovery found = Discover(node);
  ExpectMatchesFakeNode(found, node);
  EXPECT_EQ(found.devices.size(), 16u);
  EXPECT_EQ(node.nvswitches.size(), 6u);
  std::set<std::string> groups;
  std::set<std::int64_t> numa;
  for (const auto& d : found.devices) {
    groups.insert(d.iommu_group);
    numa.insert(d.numa_node);
  }
  EXPECT_EQ(groups.size(), 16u);
  EXPECT_EQ(numa, (std::set<std::int64_t>{0, 1}));
}

TEST_F(HostPciDiscovery, GpuRebindToNvidiaIsSkippedSilently) {
  const auto found = DiscoverWithBrokenFirstGpu([](const sim::FakeNode& node, const auto&) {
    ASSERT_TRUE(node.RebindDriver("0000:1b:00.0", "nvidia").ok());
  });
  EXPECT_EQ(found.devices.size(), 7u);
  EXPECT_EQ(found.Find("0000:1b:00.0"), nullptr);
  EXPECT_THAT(found.warnings, IsEmpty());
}

TEST_F(HostPciDiscovery, NvgraceDriverIsAccepted) {
  const auto found = DiscoverWithBrokenFirstGpu([](const sim::FakeNode& node, const auto&) {
    ASSERT_TRUE(node.RebindDriver("0000:1b:00.0", "nvgrace_gpu_vfio_pci").ok());
  });
  ASSERT_EQ(found.devices.size(), 8u);
  EXPECT_EQ(found.Find("0000:1b:00.0")->driver, "nvgrace_gpu_vfio_pci");
}

TEST_F(HostPciDiscovery, MissingIommuGroupLink) {
  const auto found = DiscoverWithBrokenFirstGpu(
      [](const auto&, const auto& dev) { std::filesystem::remove(dev / "iommu_group"); });
  EXPECT_EQ(found.devices.size(), 7u);
  EXPECT_THAT(found.warnings, ElementsAre("0000:1b:00.0: skipped: cannot read iommu_group link: "
                                          "No such file or directory"));
}

TEST_F(HostPciDiscovery, IommuGroupThatIsNotANumber) {
  const auto found = DiscoverWithBrokenFirstGpu([](const sim::FakeNode& node, const auto&) {
    ASSERT_TRUE(node.SetIommuGroup("0000:1b:00.0", "..").ok());
  });
  EXPECT_THAT(found.warnings, ElementsAre("0000:1b:00.0: skipped: iommu_group link points to "
                                          "\"..\", not a group number"));
}

TEST_F(HostPciDiscovery, UnreadableVendor) {
  const auto found = DiscoverWithBrokenFirstGpu(
      [](const auto&, const auto& dev) { std::filesystem::remove(dev / "vendor"); });
  EXPECT_THAT(found.warnings,
              ElementsAre("0000:1b:00.0: skipped: cannot read vendor: No such file or directory"));
}

TEST_F(HostPciDiscovery, GarbageVendor) {
  const auto found = DiscoverWithBrokenFirstGpu(
      [](const auto&, const auto& dev) { WriteFile(dev / "vendor", "0xzz\n"); });
  EXPECT_THAT(found.warnings,
              ElementsAre("0000:1b:00.0: skipped: vendor \"0xzz\" is not a 4-digit hex id"));
}

TEST_F(HostPciDiscovery, MissingDriverLink) {
  const auto found = DiscoverWithBrokenFirstGpu([](const sim::FakeNode& node, const auto&) {
    ASSERT_TRUE(node.RebindDriver("0000:1b:00.0", "").ok());
  });
  EXPECT_THAT(found.warnings, ElementsAre("0000:1b:00.0: skipped: cannot read driver link: "
                                          "No such file or directory"));
}

TEST_F(HostPciDiscovery, DriverThatIsNotALink) {
  const auto found = DiscoverWithBrokenFirstGpu([](const sim::FakeNode& node, const auto& dev) {
    ASSERT_TRUE(node.RebindDriver("0000:1b:00.0", "").ok());
    WriteFile(dev / "driver", "vfio-pci\n");
  });
  EXPECT_THAT(found.warnings,
              ElementsAre("0000:1b:00.0: skipped: cannot read driver link: Invalid argument"));
}

TEST_F(HostPciDiscovery, UnreadableDeviceId) {
  const auto found = DiscoverWithBrokenFirstGpu(
      [](const auto&, const auto& dev) { std::filesystem::remove(dev / "device"); });
  EXPECT_THAT(found.warnings,
              ElementsAre("0000:1b:00.0: skipped: cannot read device: No such file or directory"));
}

TEST_F(HostPciDiscovery, GarbageDeviceId) {
  const auto found = DiscoverWithBrokenFirstGpu(
      [](const auto&, const auto& dev) { WriteFile(dev / "device", "0x23301\n"); });
  EXPECT_THAT(found.warnings,
              ElementsAre("0000:1b:00.0: skipped: device \"0x23301\" is not a 4-digit hex id"));
}

TEST_F(HostPciDiscovery, DeviceIdIsLowerCasedAndStripped) {
  const auto found = DiscoverWithBrokenFirstGpu(
      [](const auto&, const auto& dev) { WriteFile(dev / "device", "0X20B5\n"); });
  EXPECT_EQ(found.Find("0000:1b:00.0")->device_id, "20b5");
}

TEST_F(HostPciDiscovery, NumaNodeNegativeOrUnreadableIsZero) {
  node_ = Build(sim::NodePreset::kHgxH100);
  ASSERT_TRUE(node_.SetNumaNode("0000:9d:00.0", -1).ok());
  WriteFile(node_.DeviceDir("0000:c3:00.0") / "numa_node", "one\n");
  std::filesystem::remove(node_.DeviceDir("0000:d1:00.0") / "numa_node");
  ASSERT_TRUE(node_.SetNumaNode("0000:df:00.0", 3).ok());
  const auto found = Discover(node_);
  ASSERT_EQ(found.devices.size(), 8u);
  EXPECT_EQ(found.Find("0000:9d:00.0")->numa_node, 0);
  EXPECT_EQ(found.Find("0000:c3:00.0")->numa_node, 0);
  EXPECT_EQ(found.Find("0000:d1:00.0")->numa_node, 0);
  EXPECT_EQ(found.Find("0000:df:00.0")->numa_node, 3);
  // NUMA problems never skip a device; garbage is reported, -1 and a missing file are normal.
  EXPECT_THAT(found.warnings, ElementsAre("0000:c3:00.0: numa_node \"one\" is not a NUMA node id "
                                          "(0..1023); using NUMA node 0"));
}

TEST_F(HostPciDiscovery, AbsurdNumaNodeIsZeroWithAWarning) {
  node_ = Build(sim::NodePreset::kHgxH100);
  WriteFile(node_.DeviceDir("0000:1b:00.0") / "numa_node", "9223372036854775807\n");
  WriteFile(node_.DeviceDir("0000:43:00.0") / "numa_node", "1024\n");
  WriteFile(node_.DeviceDir("0000:52:00.0") / "numa_node", "99999999999999999999999\n");
  WriteFile(node_.DeviceDir("0000:61:00.0") / "numa_node", "1023\n");
  const auto found = Discover(node_);
  ASSERT_EQ(found.devices.size(), 8u);
  EXPECT_EQ(found.Find("0000:1b:00.0")->numa_node, 0);
  EXPECT_EQ(found.Find("0000:43:00.0")->numa_node, 0);
  EXPECT_EQ(found.Find("0000:52:00.0")->numa_node, 0);
  EXPECT_EQ(found.Find("0000:61:00.0")->numa_node, 1023);
  EXPECT_THAT(found.warnings,
              ElementsAre("0000:1b:00.0: numa_node \"9223372036854775807\" is not a NUMA node id "
                          "(0..1023); using NUMA node 0",
                          "0000:43:00.0: numa_node \"1024\" is not a NUMA node id (0..1023); "
                          "using NUMA node 0",
                          "0000:52:00.0: numa_node \"99999999999999999999999\" is not a NUMA node "
                          "id (0..1023); using NUMA node 0"));
}

TEST_F(HostPciDiscovery, AttributeContentIsEscapedInWarnings) {
  const auto found = DiscoverWithBrokenFirstGpu(
      [](const auto&, const auto& dev) { WriteFile(dev / "vendor", "0x\x1b[2J\n"); });
  EXPECT_THAT(found.warnings,
              ElementsAre("0000:1b:00.0: skipped: vendor \"0x\\x1b[2J\" is not a 4-digit hex id"));
}

TEST_F(HostPciDiscovery, IommufdDeviceIsFirstVfioEntryInSortedOrder) {
  node_ = Build(sim::NodePreset::kHgxH100);
  const auto vfio_dev = node_.DeviceDir("0000:1b:00.0") / "vfio-dev";
  std::filesystem::remove_all(vfio_dev);
  std::filesystem::create_directories(vfio_dev / "vfio7");
  std::filesystem::create_directories(vfio_dev / "vfio10");
  std::filesystem::create_directories(vfio_dev / "abc");
  std::filesystem::create_directories(vfio_dev / "vfio\n\x1b[2J");  // sorts first; not a cdev
  std::filesystem::create_directories(vfio_dev / "vfio");
  std::filesystem::remove_all(node_.DeviceDir("0000:43:00.0") / "vfio-dev");
  const auto found = Discover(node_);
  EXPECT_EQ(found.Find("0000:1b:00.0")->iommufd_device, "vfio10");
  EXPECT_EQ(found.Find("0000:43:00.0")->iommufd_device, std::nullopt);
  auto name = ReadIommufdDeviceName(node_.sysfs_root, "0000:43:00.0");
  ASSERT_FALSE(name.ok());
  EXPECT_EQ(name.status().message(),
            "cannot list " + (node_.sysfs_root / "bus/pci/devices/0000:43:00.0/vfio-dev").string() +
                ": No such file or directory");
}

TEST_F(HostPciDiscovery, NonCanonicalEntryNameIsSkippedWithWarning) {
  node_ = Build(sim::NodePreset::kHgxH100);
  std::filesystem::create_directory_symlink(node_.DeviceDir("0000:1b:00.0"),
                                            node_.sysfs_root / "bus/pci/devices/0000:1B:00.0");
  const auto found = Discover(node_);
  EXPECT_EQ(found.devices.size(), 8u);
  EXPECT_THAT(found.warnings,
              ElementsAre("0000:1B:00.0: skipped: name is not a PCI address (DDDD:BB:DD.F)"));
}

TEST_F(HostPciDiscovery, EntryNameIsEscapedInWarnings) {
  node_ = Build(sim::NodePreset::kHgxH100);
  std::filesystem::create_directory_symlink(
      node_.DeviceDir("0000:1b:00.0"), node_.sysfs_root / "bus/pci/devices/0000:1b:00.0\nforged");
  const auto found = Discover(node_);
  EXPECT_THAT(found.warnings, ElementsAre("0000:1b:00.0\\nforged: skipped: name is not a PCI "
                                          "address (DDDD:BB:DD.F)"));
}

TEST_F(HostPciDiscovery, MissingDevicesDirectoryIsAnError) {
  auto found = DiscoverVfioDevices(dir_.path() / "nosys");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(found.status().message(), "PCI discovery: cannot list " +
                                          (dir_.path() / "nosys/bus/pci/devices").string() +
                                          ": No such file or directory");
}

// A tree made by hand, without the fake node builder: plain directories instead of symlinks,
// an absolute driver link, an audio function in the GPU's IOMMU group, a stray file.
TEST_F(HostPciDiscovery, HandMadeTree) {
  const auto sys = dir_.path() / "sys";
  const auto devices = sys / "bus/pci/devices";
  auto make = [&](const std::string& bdf, const std::string& vendor, const std::string& device,
                  const std::string& driver, const std::string& group) {
    const auto d = devices / bdf;
    std::filesystem::create_directories(d);
    WriteFile(d / "vendor", vendor + "\n");
    WriteFile(d / "device", device + "\n");
    std::filesystem::create_directories(sys / "bus/pci/drivers" / driver);
    std::filesystem::create_directory_symlink(sys / "bus/pci/drivers" / driver, d / "driver");
    std::filesystem::create_directories(sys / "kernel/iommu_groups" / group);
    std::filesystem::create_directory_symlink(sys / "kernel/iommu_groups" / group,
                                              d / "iommu_group");
  };
  make("0000:18:00.0", "0x10de", "0x2331", "vfio-pci", "7");
  make("0000:18:00.1", "0x10de", "0x22bb", "vfio-pci", "7");  // HD-audio function, same group
  make("0000:00:02.0", "0x8086", "0x3e92", "i915", "0");
  WriteFile(devices / "0000:ff:00.0", "not a device dir\n");
  const auto found = DiscoverVfioDevices(sys);
  ASSERT_TRUE(found.ok()) << found.status().message();
  ASSERT_EQ(found->devices.size(), 2u);
  EXPECT_EQ(found->devices[0].bdf, "0000:18:00.0");
  EXPECT_EQ(found->devices[1].bdf, "0000:18:00.1");
  EXPECT_EQ(found->devices[1].iommu_group, "7");
  EXPECT_EQ(found->devices[1].numa_node, 0);  // no numa_node file at all
  EXPECT_THAT(found->DeviceIds(), ElementsAre("22bb", "2331"));
  EXPECT_THAT(found->warnings,
              ElementsAre("0000:ff:00.0: skipped: cannot read vendor: Not a directory"));
}

}  // namespace
}  // namespace gfp::adapters::host

// mdev discovery follows the Go plugin's createVgpuIDMap (upstream-behaviour.md §1.4).
#include "adapters/host/mdev_discovery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/kubelet_naming/vgpu_naming.h"
#include "common/temp_dir.h"
#include "fifo_guard.h"
#include "sim/node/fake_node.h"

namespace gfp::adapters::host {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr const char* kUuid = "11111111-2222-4333-8444-555555555555";

class HostMdevDiscovery : public ::testing::Test {
 protected:
  sim::FakeNode BuildPreset() {
    auto node = sim::BuildVgpuNode(dir_.path() / "node", {sim::VgpuNodePreset::kMdevA100});
    EXPECT_TRUE(node.ok()) << node.status().message();
    return node.ok() ? *node : sim::FakeNode();
  }
  MdevDiscovery Discover(const fs::path& sysfs) {
    auto found = DiscoverMdevDevices(sysfs);
    EXPECT_TRUE(found.ok()) << found.status().message();
    return found.ok() ? *found : MdevDiscovery();
  }
  // A hand-made sysfs: GPU `parent` with numa_node, and mdev `uuid` under it whose type
  // directory holds `name` (when given) for mdev_type/name.
  fs::path HandMade(const std::string& uuid, const std::string& parent, const char* name,
                    const std::string& numa = "1\n") {
    const fs::path sys = dir_.path() / "sys";
    const fs::path gpu = sys / "devices/pci0000:3b" / parent;
    dir_.Write("sys/devices/pci0000:3b/" + parent + "/numa_node", numa);
    fs::create_directories(sys / "bus/pci/devices");
    fs::create_symlink("../../../devices/pci0000:3b/" + parent, sys / "bus/pci/devices" / parent);
    fs::create_directories(gpu / "mdev_supported_types/nvidia-1");
    if (name)
      dir_.Write("sys/devices/pci0000:3b/" + parent + "/mdev_supported_types/nvidia-1/name", name);
    fs::create_directories(gpu / uuid);
    fs::create_symlink("../mdev_supported_types/nvidia-1", gpu / uuid / "mdev_type");
    fs::create_directories(sys / "bus/mdev/devices");
    fs::create_symlink("../../../devices/pci0000:3b/" + parent + "/" + uuid,
                       sys / "bus/mdev/devices" / uuid);
    return sys;
  }
  fs::path TypeNameFile(const std::string& parent) {
    return dir_.path() / "sys/devices/pci0000:3b" / parent / "mdev_supported_types/nvidia-1/name";
  }

  gfp::testing::TempDir dir_;
};

TEST_F(HostMdevDiscovery, MdevPresetGivesEveryMdevWithItsTypeParentAndNuma) {
  const sim::FakeNode node = BuildPreset();
  const MdevDiscovery found = Discover(node.sysfs_root);
  EXPECT_THAT(found.warnings, IsEmpty());
  ASSERT_EQ(found.devices.size(), node.mdevs.size());
  for (std::size_t i = 0; i < node.mdevs.size(); ++i) {
    EXPECT_EQ(found.devices[i].uuid, node.mdevs[i].uuid);
    EXPECT_EQ(found.devices[i].parent_bdf, node.mdevs[i].parent_bdf);
    EXPECT_EQ(found.devices[i].numa_node, node.FindGpu(node.mdevs[i].parent_bdf)->numa_node);
  }
  // §1.4: "GRID A100-4C" -> resource nvidia.com/GRID_A100-4C, one resource per type.
  EXPECT_THAT(found.TypeNames(), ElementsAre("GRID_A100-4C", "GRID_A100-8C"));
  EXPECT_EQ(found.devices.back().parent_bdf, "0000:bd:00.0");
  EXPECT_EQ(found.devices.back().numa_node, 1);
  EXPECT_EQ(kubelet_naming::MdevEnvKey(found.devices.front().type_name),
            "MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_A100-4C");
}

TEST_F(HostMdevDiscovery, NoMdevBusMeansNoMdevs) {
  auto node = sim::BuildFakeNode(dir_.path() / "node", {});
  ASSERT_TRUE(node.ok());
  const MdevDiscovery found = Discover(node->sysfs_root);
  EXPECT_THAT(found.devices, IsEmpty());
  EXPECT_THAT(found.warnings, IsEmpty());
}

TEST_F(HostMdevDiscovery, RemovedMdevOrParentIsGoneAndNoLongerPresent) {
  const sim::FakeNode node = BuildPreset();
  const MdevDiscovery before = Discover(node.sysfs_root);
  ASSERT_EQ(before.devices.size(), 15u);
  ASSERT_TRUE(CheckMdevUnchanged(node.sysfs_root, before.devices[0]).ok());
  ASSERT_TRUE(node.RemoveMdev(node.mdevs[0].uuid).ok());
  EXPECT_EQ(CheckMdevUnchanged(node.sysfs_root, before.devices[0]).message(),
            "mdev " + before.devices[0].uuid + " is gone");
  EXPECT_TRUE(CheckMdevUnchanged(node.sysfs_root, before.devices[1]).ok());
  ASSERT_TRUE(node.RemoveDevice("0000:0f:00.0").ok());
  EXPECT_EQ(CheckMdevUnchanged(node.sysfs_root, before.devices[2]).message(),
            "mdev " + before.devices[2].uuid + ": its parent GPU 0000:0f:00.0 is gone");
  EXPECT_FALSE(CheckMdevUnchanged(node.sysfs_root, before.devices[3]).ok());
  const MdevDiscovery after = Discover(node.sysfs_root);
  EXPECT_EQ(after.devices.size(), 12u);
  EXPECT_THAT(after.warnings, IsEmpty());
}

TEST_F(HostMdevDiscovery, AChangedTypeIsNamedByTheRecheck) {
  const fs::path sys = HandMade(kUuid, "0000:3b:00.0", "GRID T4-1Q\n");
  const MdevDiscovery found = Discover(sys);
  ASSERT_EQ(found.devices.size(), 1u);
  dir_.Write("sys/devices/pci0000:3b/0000:3b:00.0/mdev_supported_types/nvidia-1/name",
             "GRID T4-2Q\n");
  EXPECT_EQ(CheckMdevUnchanged(sys, found.devices[0]).message(),
            std::string("mdev ") + kUuid + ": type changed from GRID_T4-1Q to GRID_T4-2Q");
}

TEST_F(HostMdevDiscovery, ParentGoneButMdevEntryLeftIsNotPresent) {
  const fs::path sys = HandMade(kUuid, "0000:3b:00.0", "GRID T4-1Q\n");
  const MdevDiscovery found = Discover(sys);
  ASSERT_EQ(found.devices.size(), 1u);
  fs::remove(sys / "bus/pci/devices/0000:3b:00.0");
  EXPECT_EQ(CheckMdevUnchanged(sys, found.devices[0]).code(), ErrorCode::kFailedPrecondition);
  // Discovered that way, it is still taken (as Go does), on NUMA node 0, with a warning.
  const MdevDiscovery again = Discover(sys);
  ASSERT_EQ(again.devices.size(), 1u);
  EXPECT_THAT(again.warnings,
              ElementsAre(std::string(kUuid) +
                          ": parent 0000:3b:00.0 is not in bus/pci/devices; using NUMA node 0"));
}

// §1.4: parent = element [len-2] of the link; type "GRID T4-1Q" -> "GRID_T4-1Q" (no uppercase).
TEST_F(HostMdevDiscovery, HandMadeTreeFollowsTheGoRules) {
  const fs::path sys = HandMade(kUuid, "0000:3b:00.0", "GRID T4-1q\n", "-1\n");
  const MdevDiscovery found = Discover(sys);
  EXPECT_THAT(found.warnings, IsEmpty());
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_EQ(found.devices[0], (MdevDevice{kUuid, "GRID_T4-1q", "0000:3b:00.0", 0}));
}

TEST_F(HostMdevDiscovery, GarbledParentNumaIsNodeZeroWithAWarning) {
  const fs::path sys = HandMade(kUuid, "0000:3b:00.0", "GRID T4-1Q\n", "banana\n");
  const MdevDiscovery found = Discover(sys);
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_EQ(found.devices[0].numa_node, 0);
  EXPECT_THAT(found.warnings,
              ElementsAre(std::string(kUuid) +
                          ": parent 0000:3b:00.0: numa_node \"banana\" is not a NUMA node id "
                          "(0..1023); using NUMA node 0"));
}

TEST_F(HostMdevDiscovery, EntryThatIsNotAUuidIsSkippedEscaped) {
  const fs::path sys = HandMade(kUuid, "0000:3b:00.0", "GRID T4-1Q\n");
  fs::create_directories(sys / "bus/mdev/devices/not\na-uuid");
  const MdevDiscovery found = Discover(sys);
  EXPECT_EQ(found.devices.size(), 1u);
  EXPECT_THAT(found.warnings, ElementsAre("not\\na-uuid: skipped: not an mdev UUID (lower-case, "
                                          "as the kernel names them)"));
}

// An upper-case twin of a real entry was advertised as a second device (issue 21).
TEST_F(HostMdevDiscovery, AnUpperCaseTwinIsNotASecondDevice) {
  const std::string lower = "6a3e2b10-5c7d-4f1e-8a9b-00000000000f";
  const fs::path sys = HandMade(lower.c_str(), "0000:3b:00.0", "GRID T4-1Q\n");
  std::string upper = lower;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  fs::create_directory_symlink(sys / "bus/mdev/devices" / lower, sys / "bus/mdev/devices" / upper);
  const MdevDiscovery found = Discover(sys);
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_EQ(found.devices[0].uuid, lower);
  EXPECT_THAT(found.warnings, ElementsAre(upper + ": skipped: not an mdev UUID (lower-case, as "
                                                  "the kernel names them)"));
}

TEST_F(HostMdevDiscovery, MissingTypeNameIsSkippedWithAWarning) {
  const fs::path sys = HandMade(kUuid, "0000:3b:00.0", nullptr);
  const MdevDiscovery found = Discover(sys);
  EXPECT_THAT(found.devices, IsEmpty());
  ASSERT_EQ(found.warnings.size(), 1u);
  EXPECT_EQ(
      found.warnings[0],
      std::string(kUuid) + ": skipped: cannot read mdev_type/name: No such file or directory");
}

TEST_F(HostMdevDiscovery, TypeNameThatMakesNoResourceNameIsSkipped) {
  const fs::path sys = HandMade(kUuid, "0000:3b:00.0", "GRID/T4\x1b[31m\n");
  const MdevDiscovery found = Discover(sys);
  EXPECT_THAT(found.devices, IsEmpty());
  ASSERT_EQ(found.warnings.size(), 1u);
  EXPECT_THAT(found.warnings[0], HasSubstr("mdev_type/name \"GRID/T4\\x1b[31m\" does not make a "
                                           "resource name"));
}

TEST_F(HostMdevDiscovery, HugeOrFifoTypeNameIsSkippedNotReadWhole) {
  const fs::path sys = HandMade(kUuid, "0000:3b:00.0", "");
  dir_.Write(TypeNameFile("0000:3b:00.0").lexically_relative(dir_.path()).string(),
             std::string(1 << 20, 'A'));
  MdevDiscovery found = Discover(sys);
  EXPECT_THAT(found.devices, IsEmpty());
  ASSERT_EQ(found.warnings.size(), 1u);
  EXPECT_THAT(found.warnings[0], HasSubstr(": skipped: cannot read mdev_type/name: "));

  fs::remove(TypeNameFile("0000:3b:00.0"));
  gfp::testing::MakeFifo(TypeNameFile("0000:3b:00.0"));
  auto fifo = gfp::testing::ReadWithFifoGuard(TypeNameFile("0000:3b:00.0"),
                                              [&] { return DiscoverMdevDevices(sys); });
  ASSERT_TRUE(fifo.ok());
  EXPECT_THAT(fifo->devices, IsEmpty());
  EXPECT_THAT(fifo->warnings, ElementsAre(HasSubstr("not a regular file (a FIFO)")));
}

TEST_F(HostMdevDiscovery, LinksLeadingOutsideTheSysfsRootAreNotFollowed) {
  const fs::path sys = HandMade(kUuid, "0000:3b:00.0", "GRID T4-1Q\n");
  // mdev_type pointing at a directory outside sysfs that holds a plausible "name".
  dir_.Write("elsewhere/name", "GRID T4-1Q\n");
  const fs::path type_link = sys / "devices/pci0000:3b/0000:3b:00.0" / kUuid / "mdev_type";
  fs::remove(type_link);
  fs::create_symlink(dir_.path() / "elsewhere", type_link);
  MdevDiscovery found = Discover(sys);
  EXPECT_THAT(found.devices, IsEmpty());
  ASSERT_EQ(found.warnings.size(), 1u);
  EXPECT_THAT(found.warnings[0], HasSubstr(": skipped: mdev_type: leads outside "));

  // The bus entry itself pointing outside.
  const fs::path entry = sys / "bus/mdev/devices" / kUuid;
  fs::remove(entry);
  fs::create_symlink(dir_.path() / "elsewhere", entry);
  found = Discover(sys);
  EXPECT_THAT(found.devices, IsEmpty());
  EXPECT_THAT(found.warnings, ElementsAre(HasSubstr(": skipped: leads outside ")));
}

TEST_F(HostMdevDiscovery, LinkNotUnderAPciDeviceIsSkipped) {
  const fs::path sys = HandMade(kUuid, "0000:3b:00.0", "GRID T4-1Q\n");
  fs::create_directories(sys / "devices/virtual/x" / "22222222-2222-4333-8444-555555555555");
  fs::create_symlink("../../../devices/virtual/x/22222222-2222-4333-8444-555555555555",
                     sys / "bus/mdev/devices/22222222-2222-4333-8444-555555555555");
  const MdevDiscovery found = Discover(sys);
  EXPECT_EQ(found.devices.size(), 1u);
  EXPECT_THAT(found.warnings, ElementsAre(HasSubstr("does not lead to a directory under a PCI "
                                                    "device")));
}

}  // namespace
}  // namespace gfp::adapters::host

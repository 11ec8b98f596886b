// SR-IOV vGPU VF discovery follows PR 192 (upstream-behaviour.md §3.2).
#include "adapters/host/vgpu_vf_discovery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/host/pci_discovery.h"
#include "adapters/kubelet_naming/vgpu_naming.h"
#include "common/temp_dir.h"
#include "sim/node/fake_node.h"

namespace gfp::adapters::host {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

// §3.2: `^\s*([0-9]+)\s*:\s*(.+?)\s*$`, whitespace -> "_"; e.g. `1428 : NVIDIA H200X-141C`.
TEST(HostVgpuTypeCatalog, ParsesTheDriversFormatAndIgnoresTheRest) {
  const auto catalog = ParseVgpuTypeCatalog(
      "ID    : vGPU Name\n"
      "1428 : NVIDIA H200X-141C\n"
      "  1057  :   NVIDIA  H100XM-1-10C  \r\n"
      "12a : not an id\n"
      "99 :   \n"
      "nonsense\n"
      "7:a:b\n"
      "1428 : second one loses");
  EXPECT_THAT(catalog, ElementsAre(Pair("1057", "NVIDIA_H100XM-1-10C"),
                                   Pair("1428", "NVIDIA_H200X-141C"), Pair("7", "a:b")));
  EXPECT_THAT(ParseVgpuTypeCatalog(""), IsEmpty());
}

class HostVgpuVfDiscovery : public ::testing::Test {
 protected:
  void SetUp() override {
    auto node = sim::BuildVgpuNode(dir_.path() / "node", {sim::VgpuNodePreset::kVfH100});
    ASSERT_TRUE(node.ok()) << node.status().message();
    node_ = *node;
  }
  VgpuVfDiscovery Discover() {
    auto found = DiscoverVgpuVfs(node_.sysfs_root);
    EXPECT_TRUE(found.ok()) << found.status().message();
    return found.ok() ? *found : VgpuVfDiscovery();
  }
  void Write(const std::string& bdf, const std::string& file, const std::string& content) {
    std::ofstream(node_.DeviceDir(bdf) / file, std::ios::trunc) << content;
  }

  gfp::testing::TempDir dir_;
  sim::FakeNode node_;
};

TEST_F(HostVgpuVfDiscovery, PresetGivesTheConfiguredVfOfEachGpu) {
  const VgpuVfDiscovery found = Discover();
  EXPECT_THAT(found.warnings, IsEmpty());
  ASSERT_EQ(found.vfs.size(), 8u);  // PFs, NVSwitches and VFs of type "0" are not taken
  EXPECT_EQ(found.vfs[0], (VgpuVf{"0000:1b:00.4", "0000:1b:00.0", "1064", "NVIDIA_H100XM-80C",
                                  node_.vfs[0].iommu_group, 0, "2330", "vfio0"}));
  EXPECT_EQ(AsPciDevice(found.vfs[0]),
            (PciDevice{"0000:1b:00.4", "2330", "nvidia", node_.vfs[0].iommu_group, 0, "vfio0"}));
  EXPECT_EQ(found.vfs[7].bdf, "0000:df:00.4");
  EXPECT_EQ(found.vfs[7].parent_bdf, "0000:df:00.0");
  EXPECT_EQ(found.vfs[7].numa_node, 1);
  EXPECT_THAT(found.Profiles(), ElementsAre("NVIDIA_H100XM-80C"));
  EXPECT_EQ(kubelet_naming::VgpuVfEnvKey(found.Profiles()[0]),
            "PCI_RESOURCE_NVIDIA_COM_NVIDIA_H100XM-80C");
  // The VFs are on nvidia, not VFIO: passthrough discovery does not take them.
  auto vfio = DiscoverVfioDevices(node_.sysfs_root);
  ASSERT_TRUE(vfio.ok());
  EXPECT_THAT(vfio->devices, IsEmpty());
}

TEST_F(HostVgpuVfDiscovery, CurrentTypeDecidesWhetherAndHowAVfIsServed) {
  ASSERT_TRUE(node_.SetVfVgpuType("0000:1b:00.5", "1063").ok());
  ASSERT_TRUE(node_.SetVfVgpuType("0000:43:00.4", "0").ok());
  Write("0000:52:00.4", "nvidia/current_vgpu_type", "");
  Write("0000:61:00.4", "nvidia/current_vgpu_type", "  0 \n");
  const VgpuVfDiscovery found = Discover();
  EXPECT_THAT(found.warnings, IsEmpty());
  ASSERT_EQ(found.vfs.size(), 6u);
  EXPECT_EQ(found.vfs[1].bdf, "0000:1b:00.5");
  EXPECT_EQ(found.vfs[1].profile, "NVIDIA_H100XM-40C");
  EXPECT_THAT(found.Profiles(), ElementsAre("NVIDIA_H100XM-40C", "NVIDIA_H100XM-80C"));
}

TEST_F(HostVgpuVfDiscovery, VfsOwnCatalogIsReadToo) {
  Write("0000:1b:00.0", "nvidia/creatable_vgpu_types", "ID    : vGPU Name\n");
  Write("0000:1b:00.4", "nvidia/creatable_vgpu_types", "1064  : NVIDIA H100XM-80C\n");
  fs::remove(node_.DeviceDir("0000:43:00.0") / "nvidia/creatable_vgpu_types");
  Write("0000:43:00.4", "nvidia/creatable_vgpu_types", "1064 : NVIDIA H100XM-80C\n");
  const VgpuVfDiscovery found = Discover();
  EXPECT_THAT(found.warnings, IsEmpty());
  ASSERT_EQ(found.vfs.size(), 8u);
  EXPECT_EQ(found.vfs[0].profile, "NVIDIA_H100XM-80C");
  EXPECT_EQ(found.vfs[1].profile, "NVIDIA_H100XM-80C");
}

TEST_F(HostVgpuVfDiscovery, TypeInNoCatalogIsSkippedWithAWarning) {
  ASSERT_TRUE(node_.SetVfVgpuType("0000:1b:00.4", "4242").ok());
  const VgpuVfDiscovery found = Discover();
  EXPECT_EQ(found.vfs.size(), 7u);
  EXPECT_THAT(found.warnings,
              ElementsAre("0000:1b:00.4: skipped: vGPU type 4242 is not listed in "
                          "nvidia/creatable_vgpu_types of 0000:1b:00.4 or of its parent "
                          "0000:1b:00.0"));
}

TEST_F(HostVgpuVfDiscovery, GarbledAttributesAreSkippedWithWarnings) {
  Write("0000:1b:00.4", "nvidia/current_vgpu_type", "10\x1b[2J64\n");
  Write("0000:43:00.4", "nvidia/current_vgpu_type", std::string(1 << 20, '1'));
  fs::remove(node_.DeviceDir("0000:52:00.4") / "iommu_group");
  Write("0000:61:00.4", "numa_node", "lots\n");
  Write("0000:9d:00.4", "device", "zz\n");
  const VgpuVfDiscovery found = Discover();
  ASSERT_EQ(found.vfs.size(), 4u);  // a garbled numa_node only means node 0
  EXPECT_EQ(found.vfs[0].bdf, "0000:61:00.4");
  EXPECT_EQ(found.vfs[0].numa_node, 0);
  ASSERT_EQ(found.warnings.size(), 5u);
  EXPECT_EQ(found.warnings[0],
            "0000:1b:00.4: skipped: nvidia/current_vgpu_type \"10\\x1b[2J64\" is not a vGPU "
            "type id");
  EXPECT_THAT(found.warnings[1],
              HasSubstr("0000:43:00.4: skipped: cannot read nvidia/current_vgpu_type: "));
  EXPECT_EQ(found.warnings[2],
            "0000:52:00.4: skipped: cannot read iommu_group link: No such file or directory");
  EXPECT_EQ(found.warnings[3],
            "0000:61:00.4: numa_node \"lots\" is not a NUMA node id (0..1023); using NUMA node 0");
  EXPECT_EQ(found.warnings[4], "0000:9d:00.4: skipped: device \"zz\" is not a 4-digit hex id");
}

TEST_F(HostVgpuVfDiscovery, PhysfnLeadingOutsideTheSysfsRootIsNotFollowed) {
  // A "parent" outside sysfs whose catalog would name the type.
  const fs::path fake_pf = dir_.path() / "0000:1b:00.0";
  fs::create_directories(fake_pf / "nvidia");
  std::ofstream(fake_pf / "nvidia/creatable_vgpu_types") << "1064 : Evil\n";
  const fs::path link = node_.DeviceDir("0000:1b:00.4") / "physfn";
  fs::remove(link);
  fs::create_symlink(fake_pf, link);
  const VgpuVfDiscovery found = Discover();
  EXPECT_EQ(found.vfs.size(), 7u);
  ASSERT_EQ(found.warnings.size(), 1u);
  EXPECT_THAT(found.warnings[0], HasSubstr("0000:1b:00.4: skipped: physfn link: leads outside "));
}

TEST_F(HostVgpuVfDiscovery, OnlyVfsOnTheNvidiaDriverAreVgpus) {
  ASSERT_TRUE(node_.RebindDriver("0000:1b:00.4", "vfio-pci").ok());
  const VgpuVfDiscovery found = Discover();
  EXPECT_EQ(found.vfs.size(), 7u);
  EXPECT_THAT(found.warnings, IsEmpty());
}

TEST_F(HostVgpuVfDiscovery, RemovedParentTakesItsVfsAway) {
  ASSERT_TRUE(node_.RemoveDevice("0000:9d:00.0").ok());
  const VgpuVfDiscovery found = Discover();
  EXPECT_EQ(found.vfs.size(), 7u);
  for (const VgpuVf& vf : found.vfs) EXPECT_NE(vf.parent_bdf, "0000:9d:00.0");
}

TEST_F(HostVgpuVfDiscovery, RecheckNamesWhatChangedSinceDiscovery) {
  const VgpuVfDiscovery found = Discover();
  ASSERT_GE(found.vfs.size(), 3u);
  EXPECT_TRUE(CheckVfUnchanged(node_.sysfs_root, found.vfs[0]).ok());
  ASSERT_TRUE(node_.SetVfVgpuType("0000:1b:00.4", "1063").ok());
  EXPECT_EQ(CheckVfUnchanged(node_.sysfs_root, found.vfs[0]).message(),
            "0000:1b:00.4: vGPU type changed from 1064 to 1063");
  ASSERT_TRUE(node_.SetVfVgpuType(found.vfs[1].bdf, "0").ok());
  EXPECT_EQ(CheckVfUnchanged(node_.sysfs_root, found.vfs[1]).message(),
            found.vfs[1].bdf + ": no longer a vGPU VF with a vGPU type on the nvidia driver");
  ASSERT_TRUE(node_.SetIommuGroup(found.vfs[2].bdf, "999").ok());
  EXPECT_EQ(
      CheckVfUnchanged(node_.sysfs_root, found.vfs[2]).message(),
      found.vfs[2].bdf + ": IOMMU group changed from " + found.vfs[2].iommu_group + " to 999");
  ASSERT_TRUE(node_.RemoveDevice(found.vfs[3].parent_bdf).ok());
  EXPECT_EQ(CheckVfUnchanged(node_.sysfs_root, found.vfs[3]).code(),
            ErrorCode::kFailedPrecondition);
}

}  // namespace
}  // namespace gfp::adapters::host

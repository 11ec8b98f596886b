// The vGPU and Grace fake nodes look like the sysfs the kernel and the NVIDIA driver make.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "adapters/host/pci_discovery.h"
#include "adapters/host/pci_ids.h"
#include "adapters/kubelet_naming/resource_naming.h"
#include "common/temp_dir.h"
#include "sim/node/fake_node.h"

namespace gfp::sim {
namespace {

namespace fs = std::filesystem;
using ::testing::IsEmpty;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

FakeNode Build(const gfp::testing::TempDir& dir, VgpuNodePreset preset) {
  auto node = BuildVgpuNode(dir.path(), {preset, true, true});
  EXPECT_TRUE(node.ok()) << node.status().message();
  return node.ok() ? *node : FakeNode();
}

TEST(HostFakeVgpuNode, MdevNodeLaysOutMdevsUnderTheirParent) {
  gfp::testing::TempDir dir;
  const FakeNode node = Build(dir, VgpuNodePreset::kMdevA100);
  EXPECT_EQ(std::string(VgpuNodePresetName(VgpuNodePreset::kMdevA100)), "mdev-a100");
  ASSERT_EQ(node.mdevs.size(), 15u);
  const FakeMdev& mdev = node.mdevs.front();
  const fs::path entry = node.sysfs_root / "bus/mdev/devices" / mdev.uuid;
  ASSERT_TRUE(fs::is_symlink(entry));
  EXPECT_EQ(fs::read_symlink(entry).string(),
            "../../../devices/pci0000:07/0000:07:00.0/" + mdev.uuid);
  EXPECT_EQ(fs::read_symlink(entry / "mdev_type").string(), "../mdev_supported_types/nvidia-474");
  EXPECT_EQ(ReadAll(entry / "mdev_type/name"), "GRID A100-4C\n");
  EXPECT_EQ(fs::read_symlink(entry / "driver").filename(), "vfio_mdev");
  EXPECT_TRUE(fs::exists(node.dev_root / "vfio" / mdev.iommu_group));
  // As on a real host, every mdev has an IOMMU group of its own: a real link to
  // kernel/iommu_groups/<N> and the group's node under /dev/vfio (Allocate hands out that node).
  std::set<std::string> groups;
  for (const FakeMdev& m : node.mdevs) {
    const fs::path link = node.sysfs_root / "bus/mdev/devices" / m.uuid / "iommu_group";
    ASSERT_TRUE(fs::is_symlink(link)) << link;
    EXPECT_EQ(fs::read_symlink(link).filename().string(), m.iommu_group);
    EXPECT_EQ(fs::canonical(link),
              fs::canonical(node.sysfs_root / "kernel/iommu_groups" / m.iommu_group));
    EXPECT_TRUE(fs::is_regular_file(node.dev_root / "vfio" / m.iommu_group)) << m.iommu_group;
    groups.insert(m.iommu_group);
  }
  EXPECT_EQ(groups.size(), node.mdevs.size());
  EXPECT_EQ(node.mdevs.back().type_name, "GRID A100-8C");
  // The GPUs stay on nvidia (vGPU manager): nothing for passthrough discovery.
  EXPECT_EQ(fs::read_symlink(node.DeviceDir("0000:07:00.0") / "driver").filename(), "nvidia");
  auto found = adapters::host::DiscoverVfioDevices(node.sysfs_root);
  ASSERT_TRUE(found.ok());
  EXPECT_THAT(found->devices, IsEmpty());
}

TEST(HostFakeVgpuNode, VfNodeHasPhysfnLinksAndTheDriversVgpuFiles) {
  gfp::testing::TempDir dir;
  const FakeNode node = Build(dir, VgpuNodePreset::kVfH100);
  ASSERT_EQ(node.vfs.size(), 32u);
  const FakeVf& vf = node.vfs.front();
  EXPECT_EQ(vf.bdf, "0000:1b:00.4");
  EXPECT_EQ(vf.parent_bdf, "0000:1b:00.0");
  EXPECT_EQ(vf.profile, "NVIDIA H100XM-80C");
  const fs::path entry = node.sysfs_root / "bus/pci/devices" / vf.bdf;
  EXPECT_EQ(fs::read_symlink(entry / "physfn").string(), "../0000:1b:00.0");
  EXPECT_EQ(fs::read_symlink(node.DeviceDir("0000:1b:00.0") / "virtfn0").string(),
            "../0000:1b:00.4");
  EXPECT_EQ(ReadAll(entry / "nvidia/current_vgpu_type"), "1064\n");
  EXPECT_EQ(ReadAll(node.sysfs_root / "bus/pci/devices/0000:1b:00.5/nvidia/current_vgpu_type"),
            "0\n");
  const std::string catalog =
      ReadAll(node.sysfs_root / "bus/pci/devices/0000:1b:00.0/nvidia/creatable_vgpu_types");
  EXPECT_EQ(catalog.substr(0, catalog.find('\n')), "ID    : vGPU Name");
  EXPECT_NE(catalog.find("1064  : NVIDIA H100XM-80C\n"), std::string::npos);
  EXPECT_EQ(ReadAll(node.DeviceDir("0000:1b:00.0") / "sriov_numvfs"), "4\n");
  EXPECT_FALSE(node.module_mapping_file.empty());  // the PFs' module ids, as for H100
}

TEST(HostFakeVgpuNode, GraceNodeHasEgmDevicesAndNvgraceGpus) {
  gfp::testing::TempDir dir;
  const FakeNode node = Build(dir, VgpuNodePreset::kGraceGh200);
  ASSERT_EQ(node.egms.size(), 4u);
  EXPECT_EQ(ReadAll(node.sysfs_root / "class/egm/egm2/gpu_devices"), "0029:01:00.0\n");
  EXPECT_EQ(fs::read_symlink(node.sysfs_root / "class/egm/egm2").string(),
            "../../devices/virtual/egm/egm2");
  EXPECT_TRUE(fs::exists(node.dev_root / "egm2"));
  EXPECT_THAT(node.nvswitches, IsEmpty());
  auto found = adapters::host::DiscoverVfioDevices(node.sysfs_root);
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->devices.size(), 4u);
  EXPECT_EQ(found->devices[3].driver, "nvgrace_gpu_vfio_pci");
  EXPECT_EQ(found->devices[3].numa_node, 3);
  auto db = adapters::host::LoadPciIds(node.pci_ids_file);
  ASSERT_TRUE(db.ok());
  // upstream-behaviour.md §1.3's GH200 example.
  EXPECT_EQ(adapters::host::NameResource(*db, node.gpu_device_id).resource_name,
            "nvidia.com/GH100_GH200_120GB___480GB");
}

TEST(HostFakeVgpuNode, MutatorsForMdevsAndVfs) {
  gfp::testing::TempDir dir;
  const FakeNode node = Build(dir, VgpuNodePreset::kMdevA100);
  const FakeMdev& mdev = node.mdevs[0];
  ASSERT_TRUE(node.RemoveMdev(mdev.uuid).ok());
  EXPECT_FALSE(fs::exists(node.sysfs_root / "bus/mdev/devices" / mdev.uuid));
  EXPECT_FALSE(fs::exists(node.MdevDir(mdev)));
  const Status again = node.RemoveMdev(mdev.uuid);
  EXPECT_EQ(again.code(), ErrorCode::kNotFound);
  EXPECT_EQ(again.message(),
            "fake node: no mdev " + mdev.uuid + " under " + node.sysfs_root.string());
  // A GPU removed takes its mdevs with it, as the kernel unregisters them first.
  ASSERT_TRUE(node.RemoveDevice("0000:0f:00.0").ok());
  EXPECT_FALSE(fs::is_symlink(node.sysfs_root / "bus/mdev/devices" / node.mdevs[2].uuid));
  EXPECT_TRUE(fs::is_symlink(node.sysfs_root / "bus/mdev/devices" / node.mdevs[4].uuid));

  gfp::testing::TempDir vf_dir;
  const FakeNode vf_node = Build(vf_dir, VgpuNodePreset::kVfH100);
  ASSERT_TRUE(vf_node.SetVfVgpuType("0000:43:00.5", "1063").ok());
  EXPECT_EQ(ReadAll(vf_node.DeviceDir("0000:43:00.5") / "nvidia/current_vgpu_type"), "1063\n");
  EXPECT_EQ(vf_node.SetVfVgpuType("0000:43:00.0", "1").code(), ErrorCode::kFailedPrecondition);
  ASSERT_TRUE(vf_node.RemoveDevice("0000:43:00.0").ok());
  EXPECT_FALSE(fs::is_symlink(vf_node.sysfs_root / "bus/pci/devices/0000:43:00.4"));
  EXPECT_FALSE(fs::exists(vf_node.DeviceDir("0000:43:00.7")));
}

}  // namespace
}  // namespace gfp::sim

#include "sim/node/fake_node.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "adapters/host/pci_discovery.h"
#include "adapters/host/pci_ids.h"
#include "adapters/kubelet_naming/resource_naming.h"
#include "common/temp_dir.h"

namespace gfp::sim {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(HostFakeNode, LooksLikeSysfs) {
  gfp::testing::TempDir dir;
  auto node = BuildFakeNode(dir.path(), {NodePreset::kHgxH100, true, true, true});
  ASSERT_TRUE(node.ok()) << node.status().message();
  const std::string bdf = "0000:1b:00.0";
  const fs::path entry = node->sysfs_root / "bus/pci/devices" / bdf;
  // Bus entries and driver/iommu_group links are relative symlinks, as in real sysfs.
  ASSERT_TRUE(fs::is_symlink(entry));
  EXPECT_EQ(fs::read_symlink(entry).string(), "../../../devices/pci0000:1b/0000:1b:00.0");
  EXPECT_EQ(fs::read_symlink(entry / "driver").string(), "../../../bus/pci/drivers/vfio-pci");
  EXPECT_EQ(fs::read_symlink(entry / "iommu_group").string(), "../../../kernel/iommu_groups/40");
  EXPECT_TRUE(fs::is_directory(entry / "driver"));
  EXPECT_TRUE(fs::is_directory(entry / "iommu_group"));
  EXPECT_TRUE(fs::is_directory(entry / "vfio-dev/vfio0"));
  EXPECT_EQ(ReadAll(entry / "vendor"), "0x10de\n");
  EXPECT_EQ(ReadAll(entry / "device"), "0x2330\n");
  EXPECT_EQ(ReadAll(entry / "numa_node"), "0\n");
  EXPECT_TRUE(fs::exists(node->dev_root / "vfio/vfio"));
  EXPECT_TRUE(fs::exists(node->dev_root / "vfio/40"));
  EXPECT_TRUE(fs::exists(node->dev_root / "vfio/devices/vfio0"));
  EXPECT_TRUE(fs::exists(node->dev_root / "iommu"));
  // NVSwitches stay on nvidia.
  EXPECT_EQ(fs::read_symlink(node->sysfs_root / "bus/pci/devices/0000:05:00.0/driver").filename(),
            "nvidia");
}

TEST(HostFakeNode, NoIommufdByDefault) {
  gfp::testing::TempDir dir;
  auto node = BuildFakeNode(dir.path(), {});
  ASSERT_TRUE(node.ok());
  EXPECT_FALSE(fs::exists(node->dev_root / "iommu"));
  EXPECT_FALSE(fs::exists(node->dev_root / "vfio/devices"));
}

TEST(HostFakeNode, MappingFileUsesNvidiaSmiSpellingAndRealH100Order) {
  gfp::testing::TempDir dir;
  auto node = BuildFakeNode(dir.path(), {});
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(node->module_mapping_file.filename(), "gpu-pci-module-mapping.json");
  EXPECT_EQ(ReadAll(node->module_mapping_file),
            "{\"00000000:1B:00.0\": \"8\",\"00000000:43:00.0\": \"5\",\"00000000:52:00.0\": "
            "\"7\",\"00000000:61:00.0\": \"6\",\"00000000:9D:00.0\": \"4\",\"00000000:C3:00.0\": "
            "\"1\",\"00000000:D1:00.0\": \"3\",\"00000000:DF:00.0\": \"2\"}\n");
}

TEST(HostFakeNode, PresetsDifferInModuleOrderFromPciOrder) {
  for (auto preset : {NodePreset::kHgxH100, NodePreset::kHgxB200, NodePreset::kHgxA100x16}) {
    gfp::testing::TempDir dir;
    auto node = BuildFakeNode(dir.path(), {preset, false, true, true});
    ASSERT_TRUE(node.ok()) << NodePresetName(preset);
    bool in_module_order = true;
    for (std::size_t i = 0; i < node->gpus.size(); ++i) {
      in_module_order = in_module_order && node->gpus[i].module_id == i + 1;
    }
    EXPECT_FALSE(in_module_order) << NodePresetName(preset);
    int numa1 = 0;
    for (const auto& gpu : node->gpus) numa1 += gpu.numa_node;
    EXPECT_EQ(numa1, static_cast<int>(node->gpus.size()) / 2) << NodePresetName(preset);
  }
}

TEST(HostFakeNode, PciIdsNamesTheGpus) {
  struct Case {
    NodePreset preset;
    const char* resource;
  };
  for (const Case& c : {Case{NodePreset::kHgxH100, "nvidia.com/GH100_H100_SXM5_80GB"},
                        Case{NodePreset::kHgxB200, "nvidia.com/GB100_B200"},
                        Case{NodePreset::kHgxA100x16, "nvidia.com/GA100_A100_SXM4_80GB"}}) {
    gfp::testing::TempDir dir;
    auto node = BuildFakeNode(dir.path(), {c.preset, false, true, true});
    ASSERT_TRUE(node.ok());
    auto db = adapters::host::LoadPciIds(node->pci_ids_file);
    ASSERT_TRUE(db.ok()) << db.status().message();
    EXPECT_EQ(adapters::host::NameResource(*db, node->gpu_device_id).resource_name, c.resource);
  }
}

TEST(HostFakeNode, OptionalFilesCanBeLeftOut) {
  gfp::testing::TempDir dir;
  auto node = BuildFakeNode(dir.path(), {NodePreset::kHgxB200, false, false, false});
  ASSERT_TRUE(node.ok());
  EXPECT_TRUE(node->module_mapping_file.empty());
  EXPECT_TRUE(node->pci_ids_file.empty());
  EXPECT_FALSE(fs::exists(node->root / "gpu-pci-module-mapping.json"));
  EXPECT_FALSE(fs::exists(node->root / "pci.ids"));
}

TEST(HostFakeNode, RefusesToBuildOverAnExistingTree) {
  gfp::testing::TempDir dir;
  ASSERT_TRUE(BuildFakeNode(dir.path(), {}).ok());
  auto again = BuildFakeNode(dir.path(), {});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(again.status().message(),
            "fake node: " + (fs::absolute(dir.path()) / "sys").string() + " already exists");
}

TEST(HostFakeNode, MutatorsOnUnknownDevices) {
  gfp::testing::TempDir dir;
  auto node = BuildFakeNode(dir.path(), {});
  ASSERT_TRUE(node.ok());
  const Status status = node->RebindDriver("0000:aa:00.0", "nvidia");
  EXPECT_EQ(status.code(), ErrorCode::kNotFound);
  EXPECT_EQ(status.message(),
            "fake node: no device 0000:aa:00.0 under " + node->sysfs_root.string());
  EXPECT_FALSE(node->SetIommuGroup("0000:aa:00.0", "1").ok());
  EXPECT_FALSE(node->RemoveDevice("0000:aa:00.0").ok());
  EXPECT_FALSE(node->RemoveVfioGroupNode("999").ok());
}

TEST(HostFakeNode, RemovedDeviceDisappearsFromDiscovery) {
  gfp::testing::TempDir dir;
  auto node = BuildFakeNode(dir.path(), {NodePreset::kHgxA100x16, false, true, true});
  ASSERT_TRUE(node.ok());
  ASSERT_TRUE(node->RemoveDevice("0000:47:00.0").ok());
  EXPECT_FALSE(fs::exists(node->DeviceDir("0000:47:00.0")));
  auto found = adapters::host::DiscoverVfioDevices(node->sysfs_root);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->devices.size(), 15u);
  EXPECT_EQ(found->Find("0000:47:00.0"), nullptr);
  EXPECT_TRUE(found->warnings.empty());
}

}  // namespace
}  // namespace gfp::sim

// The node inventory: every device kind grouped into resources named like the Go plugin
// (upstream-behaviour.md §1.3 passthrough, §1.4/§1.10 mdev, §3.2 VF), journaled with its kind and
// parent, and the one-Fabric-Manager-mode rule.
#include "plugin/core/node_inventory.h"

#include <gtest/gtest.h>

namespace gfp::plugin::core {
namespace {

adapters::host::PciDevice Gpu(const std::string& bdf, const std::string& device_id = "2330") {
  return {bdf, device_id, "vfio-pci", "40", 0, std::nullopt};
}

adapters::host::VgpuVf Vf(const std::string& bdf, const std::string& parent) {
  return {bdf, parent, "1064", "NVIDIA_H100XM-80C", "90", 1, "2330", "vfio9"};
}

adapters::host::MdevDevice Mdev(const std::string& uuid, const std::string& parent) {
  return {uuid, "GRID_A100-4C", parent, 1};
}

Result<NodeInventory> Make(adapters::host::PciDiscovery pci,
                           adapters::host::VgpuVfDiscovery vfs = {},
                           adapters::host::MdevDiscovery mdevs = {},
                           adapters::host::EgmDiscovery egms = {}) {
  return MakeInventory(std::move(pci), std::move(vfs), std::move(mdevs), std::move(egms),
                       adapters::host::PciIds());
}

TEST(NodeInventoryTest, ResourceNamingOfAnMdevType) {
  const adapters::kubelet_naming::ResourceNaming naming = MdevResourceNaming("GRID_A100-4C");
  EXPECT_EQ(naming.resource_name, "nvidia.com/GRID_A100-4C");
  EXPECT_EQ(naming.socket_name, "kubevirt-GRID_A100-4C.sock");
  EXPECT_EQ(naming.env_key, "MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_A100-4C");
}

TEST(NodeInventoryTest, ResourceNamingOfAVgpuProfile) {  // upstream-behaviour.md §3.2
  const adapters::kubelet_naming::ResourceNaming naming = VgpuVfResourceNaming("NVIDIA_H100XM-80C");
  EXPECT_EQ(naming.resource_name, "nvidia.com/NVIDIA_H100XM-80C");
  EXPECT_EQ(naming.socket_name, "kubevirt-NVIDIA_H100XM-80C.sock");
  EXPECT_EQ(naming.env_key, "PCI_RESOURCE_NVIDIA_COM_NVIDIA_H100XM-80C");
}

TEST(NodeInventoryTest, MdevsAreJournaledWithKindParentAndNuma) {
  adapters::host::MdevDiscovery mdevs;
  mdevs.devices.push_back(Mdev("6a3e2b10-5c7d-4f1e-8a9b-000000000001", "0000:3b:00.0"));
  mdevs.warnings.push_back("x: skipped: no mdev_type");
  adapters::host::PciDiscovery pci;
  pci.warnings.push_back("pci warning");
  auto inventory = Make(pci, {}, mdevs);
  ASSERT_TRUE(inventory.ok()) << inventory.status().message();
  const sm::ObserveInventory command = InventoryCommand(*inventory, 5);
  ASSERT_EQ(command.devices.size(), 1u);
  const events::Device& d = command.devices[0];
  EXPECT_EQ(d.bdf(), "6a3e2b10-5c7d-4f1e-8a9b-000000000001");
  EXPECT_EQ(d.resource(), "nvidia.com/GRID_A100-4C");
  EXPECT_EQ(d.kind(), events::DEVICE_KIND_MDEV);
  EXPECT_EQ(d.parent_bdf(), "0000:3b:00.0");
  EXPECT_EQ(d.numa_node(), 1);
  EXPECT_EQ(command.warnings,
            (std::vector<std::string>{"pci warning", "x: skipped: no mdev_type"}));
}

TEST(NodeInventoryTest, VfsAreOneResourcePerProfileWithTheirParent) {
  adapters::host::VgpuVfDiscovery vfs;
  vfs.vfs = {Vf("0000:1b:00.4", "0000:1b:00.0"), Vf("0000:43:00.4", "0000:43:00.0")};
  auto inventory = Make({}, vfs);
  ASSERT_TRUE(inventory.ok()) << inventory.status().message();
  ASSERT_EQ(inventory->resources.size(), 1u);
  EXPECT_EQ(inventory->resources[0].kind, sm::DeviceKind::kVgpuVf);
  const ServedDevice* vf = inventory->FindDevice("0000:43:00.4");
  ASSERT_NE(vf, nullptr);
  EXPECT_EQ(vf->gpu_bdf(), "0000:43:00.0");
  ASSERT_TRUE(vf->pci.has_value());
  EXPECT_EQ(vf->pci->iommu_group, "90");
  EXPECT_EQ(inventory->FabricGpuBdfs(), (std::vector<std::string>{"0000:1b:00.0", "0000:43:00.0"}));
  const auto command = InventoryCommand(*inventory, 1);
  ASSERT_EQ(command.devices.size(), 2u);
  EXPECT_EQ(command.devices[0].kind(), events::DEVICE_KIND_VGPU_VF);
  EXPECT_EQ(command.devices[0].parent_bdf(), "0000:1b:00.0");
  EXPECT_EQ(command.devices[0].iommu_group(), "90");
}

TEST(NodeInventoryTest, MdevParentsAreNotFabricGpus) {
  adapters::host::MdevDiscovery mdevs;
  mdevs.devices.push_back(Mdev("6a3e2b10-5c7d-4f1e-8a9b-000000000001", "0000:3b:00.0"));
  auto inventory = Make({{Gpu("0000:1b:00.0")}, {}}, {}, mdevs);
  ASSERT_TRUE(inventory.ok());
  EXPECT_EQ(inventory->FabricGpuBdfs(), std::vector<std::string>{"0000:1b:00.0"});
}

TEST(NodeInventoryTest, TwoKindsWithOneResourceNameAreRefused) {
  adapters::host::MdevDiscovery mdevs;
  auto mdev = Mdev("6a3e2b10-5c7d-4f1e-8a9b-000000000001", "0000:3b:00.0");
  mdev.type_name = "2330";  // clashes with the raw device id of the whole GPU
  mdevs.devices.push_back(mdev);
  auto inventory = Make({{Gpu("0000:1b:00.0")}, {}}, {}, mdevs);
  ASSERT_FALSE(inventory.ok());
  EXPECT_EQ(inventory.status().message(),
            "device id 2330 and mdev type 2330 both map to resource nvidia.com/2330");
}

TEST(NodeInventoryTest, WholeGpusAndVfsNeedTwoFabricModes) {
  adapters::host::VgpuVfDiscovery vfs;
  vfs.vfs = {Vf("0000:1b:00.4", "0000:1b:00.0")};
  auto mixed = Make({{Gpu("0000:43:00.0")}, {}}, vfs);
  ASSERT_TRUE(mixed.ok());
  const Status status = CheckOneFabricMode(*mixed);
  EXPECT_EQ(status.code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("nvidia.com/2330, FABRIC_MODE=1"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("nvidia.com/NVIDIA_H100XM-80C, FABRIC_MODE=2"),
            std::string::npos);
  auto only_vfs = Make({}, vfs);
  ASSERT_TRUE(only_vfs.ok());
  EXPECT_TRUE(CheckOneFabricMode(*only_vfs).ok());
  adapters::host::MdevDiscovery mdevs;
  mdevs.devices.push_back(Mdev("6a3e2b10-5c7d-4f1e-8a9b-000000000001", "0000:3b:00.0"));
  auto gpus_and_mdevs = Make({{Gpu("0000:43:00.0")}, {}}, {}, mdevs);
  ASSERT_TRUE(gpus_and_mdevs.ok());
  EXPECT_TRUE(CheckOneFabricMode(*gpus_and_mdevs).ok());
}

}  // namespace
}  // namespace gfp::plugin::core

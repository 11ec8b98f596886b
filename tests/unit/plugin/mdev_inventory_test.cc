// The mdev parts of the node inventory (upstream-behaviour.md §1.4, §1.10, §1.13): one resource
// per mdev type named like the Go plugin, and mdevs journaled as kind MDEV with their parent.
#include <gtest/gtest.h>

#include "plugin/core/node_inventory.h"

namespace gfp::plugin {
namespace {

TEST(MdevInventoryTest, ResourceNamingOfAnMdevType) {
  const adapters::ResourceNaming naming = MdevResourceNaming("GRID_A100-4C");
  EXPECT_EQ(naming.resource_name, "nvidia.com/GRID_A100-4C");
  EXPECT_EQ(naming.socket_name, "kubevirt-GRID_A100-4C.sock");
  EXPECT_EQ(naming.env_key, "MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_A100-4C");
}

TEST(MdevInventoryTest, MdevsAreAppendedWithKindParentAndNuma) {
  adapters::MdevDiscovery mdevs;
  mdevs.devices.push_back(
      {"6a3e2b10-5c7d-4f1e-8a9b-000000000001", "GRID_A100-4C", "0000:3b:00.0", 1});
  mdevs.warnings.push_back("x: skipped: no mdev_type");
  sm::ObserveInventory command;
  command.warnings.push_back("pci warning");
  AppendMdevDevices(mdevs, command);
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

}  // namespace
}  // namespace gfp::plugin

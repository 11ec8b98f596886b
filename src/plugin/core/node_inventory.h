// What this node has: the VFIO-bound NVIDIA functions grouped into kubelet resources, one per
// PCI device id, named like the Go plugin.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "adapters/host/mdev_discovery.h"
#include "adapters/host/pci_device.h"
#include "adapters/host/pci_ids.h"
#include "adapters/host/resource_naming.h"
#include "common/status.h"
#include "statemachine/commands.h"

namespace gfp::plugin {

struct ResourceDevices {
  adapters::ResourceNaming naming;
  std::vector<adapters::PciDevice> devices;  // sorted by BDF
};

struct NodeInventory {
  adapters::PciDiscovery discovery;
  std::vector<ResourceDevices> resources;  // sorted by resource name

  const ResourceDevices* FindResource(const std::string& resource_name) const;
  const adapters::PciDevice* FindDevice(const std::string& bdf) const;
  std::vector<std::string> Bdfs() const;
};

// Scans sysfs and names every device id with pci.ids.
Result<NodeInventory> ScanNode(const std::filesystem::path& sysfs_root,
                               const adapters::PciIds& pci_ids);

sm::ObserveInventory InventoryCommand(const NodeInventory& inventory, sm::Micros now);

// The kubelet resource of one mdev type (upstream-behaviour.md §1.4, §1.10): "nvidia.com/<type>",
// socket "kubevirt-<type>.sock", env key "MDEV_PCI_RESOURCE_NVIDIA_COM_<TYPE>".
// Not yet used by ScanNode: serving mdevs is the next step.
adapters::ResourceNaming MdevResourceNaming(const std::string& type_name);

// Adds the mdevs to an inventory command, kind MDEV, the UUID as the device id, the parent GPU's
// NUMA node; the discovery's warnings are appended to the command's.
void AppendMdevDevices(const adapters::MdevDiscovery& mdevs, sm::ObserveInventory& command);

}  // namespace gfp::plugin

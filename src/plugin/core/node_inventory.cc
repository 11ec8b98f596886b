#include "plugin/core/node_inventory.h"

#include <algorithm>
#include <map>

#include "adapters/host/pci_discovery.h"

namespace gfp::plugin {

const ResourceDevices* NodeInventory::FindResource(const std::string& resource_name) const {
  for (const auto& r : resources) {
    if (r.naming.resource_name == resource_name) return &r;
  }
  return nullptr;
}

const adapters::PciDevice* NodeInventory::FindDevice(const std::string& bdf) const {
  return discovery.Find(bdf);
}

std::vector<std::string> NodeInventory::Bdfs() const {
  std::vector<std::string> out;
  for (const auto& d : discovery.devices) out.push_back(d.bdf);
  return out;
}

Result<NodeInventory> ScanNode(const std::filesystem::path& sysfs_root,
                               const adapters::PciIds& pci_ids) {
  NodeInventory inventory;
  GFP_ASSIGN_OR_RETURN(inventory.discovery, adapters::DiscoverVfioDevices(sysfs_root));
  std::map<std::string, ResourceDevices> by_resource;
  for (const auto& device : inventory.discovery.devices) {
    adapters::ResourceNaming naming = adapters::NameResource(pci_ids, device.device_id);
    auto& entry = by_resource[naming.resource_name];
    if (entry.naming.resource_name.empty()) {
      entry.naming = naming;
    } else if (entry.naming.device_id != naming.device_id) {
      // Two device ids with the same name would share a socket; the Go plugin has the same
      // limitation. Keep them apart by falling back to the raw id for the later one.
      naming.suffix = device.device_id;
      naming.resource_name = adapters::ResourceName(device.device_id);
      naming.socket_name = adapters::PluginSocketName(device.device_id);
      naming.env_key = adapters::AllocationEnvKey(device.device_id);
      by_resource[naming.resource_name].naming = naming;
      by_resource[naming.resource_name].devices.push_back(device);
      continue;
    }
    entry.devices.push_back(device);
  }
  for (auto& [name, resource] : by_resource) inventory.resources.push_back(std::move(resource));
  return inventory;
}

sm::ObserveInventory InventoryCommand(const NodeInventory& inventory, sm::Micros now) {
  sm::ObserveInventory command;
  command.now = now;
  for (const auto& resource : inventory.resources) {
    for (const auto& d : resource.devices) {
      events::Device device;
      device.set_bdf(d.bdf);
      device.set_resource(resource.naming.resource_name);
      device.set_device_id(d.device_id);
      device.set_iommu_group(d.iommu_group);
      device.set_numa_node(static_cast<std::int32_t>(std::max<std::int64_t>(0, d.numa_node)));
      command.devices.push_back(std::move(device));
    }
  }
  command.warnings = inventory.discovery.warnings;
  return command;
}

}  // namespace gfp::plugin

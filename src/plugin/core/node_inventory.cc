#include "plugin/core/node_inventory.h"

#include <algorithm>
#include <map>

#include "adapters/host/pci_discovery.h"
#include "adapters/host/vgpu_naming.h"

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
  std::map<std::string, ResourceDevices> by_device_id;
  for (const auto& device : inventory.discovery.devices) {
    auto& entry = by_device_id[device.device_id];
    if (entry.devices.empty()) entry.naming = adapters::NameResource(pci_ids, device.device_id);
    entry.devices.push_back(device);
  }
  for (auto& [id, resource] : by_device_id) inventory.resources.push_back(std::move(resource));
  std::sort(
      inventory.resources.begin(), inventory.resources.end(),
      [](const auto& a, const auto& b) { return a.naming.resource_name < b.naming.resource_name; });
  // Two device ids whose names sanitize alike would share a socket and a resource name (the Go
  // plugin has the same limitation); refuse rather than serve one of them silently.
  for (std::size_t i = 1; i < inventory.resources.size(); ++i) {
    const auto& a = inventory.resources[i - 1].naming;
    const auto& b = inventory.resources[i].naming;
    if (a.resource_name == b.resource_name) {
      return FailedPrecondition("device ids " + a.device_id + " and " + b.device_id +
                                " both map to resource " + a.resource_name);
    }
  }
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

adapters::ResourceNaming MdevResourceNaming(const std::string& type_name) {
  adapters::ResourceNaming naming;
  naming.suffix = type_name;
  naming.resource_name = adapters::ResourceName(type_name);
  naming.socket_name = adapters::PluginSocketName(type_name);
  naming.env_key = adapters::MdevEnvKey(type_name);
  return naming;
}

void AppendMdevDevices(const adapters::MdevDiscovery& mdevs, sm::ObserveInventory& command) {
  for (const auto& mdev : mdevs.devices) {
    events::Device device;
    device.set_bdf(mdev.uuid);
    device.set_resource(adapters::ResourceName(mdev.type_name));
    device.set_numa_node(static_cast<std::int32_t>(std::max<std::int64_t>(0, mdev.numa_node)));
    device.set_kind(events::DEVICE_KIND_MDEV);
    device.set_parent_bdf(mdev.parent_bdf);
    command.devices.push_back(std::move(device));
  }
  command.warnings.insert(command.warnings.end(), mdevs.warnings.begin(), mdevs.warnings.end());
}

}  // namespace gfp::plugin

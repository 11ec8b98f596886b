#include "plugin/core/node_inventory.h"

#include <algorithm>
#include <map>
#include <set>

#include "adapters/host/pci_discovery.h"
#include "adapters/kubelet_naming/vgpu_naming.h"

namespace gfp::plugin::core {
namespace {

template <typename T>
void Append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

void AddPassthrough(const adapters::host::PciDiscovery& discovery,
                    const adapters::host::PciIds& pci_ids,
                    std::map<std::string, ResourceDevices>& by_name) {
  for (const auto& device : discovery.devices) {
    adapters::kubelet_naming::ResourceNaming naming =
        adapters::host::NameResource(pci_ids, device.device_id);
    auto& entry = by_name[naming.resource_name + "\n" + device.device_id];
    entry.naming = std::move(naming);
    entry.devices.push_back({device.bdf, sm::DeviceKind::kPciPassthrough, device.numa_node, device,
                             std::nullopt, std::nullopt, ""});
  }
}

void AddVfs(const adapters::host::VgpuVfDiscovery& vfs,
            std::map<std::string, ResourceDevices>& by_name) {
  for (const auto& vf : vfs.vfs) {
    adapters::kubelet_naming::ResourceNaming naming = VgpuVfResourceNaming(vf.profile);
    auto& entry = by_name[naming.resource_name + "\nvf"];
    entry.naming = std::move(naming);
    entry.kind = sm::DeviceKind::kVgpuVf;
    entry.devices.push_back({vf.bdf, sm::DeviceKind::kVgpuVf, vf.numa_node,
                             adapters::host::AsPciDevice(vf), std::nullopt, vf, vf.parent_bdf});
  }
}

void AddMdevs(const adapters::host::MdevDiscovery& mdevs,
              std::map<std::string, ResourceDevices>& by_name) {
  for (const auto& mdev : mdevs.devices) {
    adapters::kubelet_naming::ResourceNaming naming = MdevResourceNaming(mdev.type_name);
    auto& entry = by_name[naming.resource_name + "\nmdev"];
    entry.naming = std::move(naming);
    entry.kind = sm::DeviceKind::kMdev;
    entry.devices.push_back({mdev.uuid, sm::DeviceKind::kMdev, mdev.numa_node, std::nullopt, mdev,
                             std::nullopt, mdev.parent_bdf});
  }
}

// What a resource is, for the error naming two resources that clash.
std::string Describe(const ResourceDevices& r) {
  switch (r.kind) {
    case sm::DeviceKind::kMdev:
      return "mdev type " + r.naming.suffix;
    case sm::DeviceKind::kVgpuVf:
      return "vGPU profile " + r.naming.suffix;
    case sm::DeviceKind::kPciPassthrough:
      break;
  }
  return "device id " + r.naming.device_id;
}

}  // namespace

const ResourceDevices* NodeInventory::FindResource(const std::string& resource_name) const {
  for (const auto& r : resources) {
    if (r.naming.resource_name == resource_name) return &r;
  }
  return nullptr;
}

const ServedDevice* NodeInventory::FindDevice(const std::string& id) const {
  for (const auto& r : resources) {
    auto it =
        std::lower_bound(r.devices.begin(), r.devices.end(), id,
                         [](const ServedDevice& d, const std::string& key) { return d.id < key; });
    if (it != r.devices.end() && it->id == id) return &*it;
  }
  return nullptr;
}

std::vector<std::string> NodeInventory::FabricGpuBdfs() const {
  std::set<std::string> gpus;
  for (const auto& r : resources) {
    if (r.kind == sm::DeviceKind::kMdev) continue;
    for (const auto& d : r.devices) gpus.insert(d.gpu_bdf());
  }
  return {gpus.begin(), gpus.end()};
}

bool NodeInventory::Has(sm::DeviceKind kind) const {
  return std::any_of(resources.begin(), resources.end(),
                     [&](const ResourceDevices& r) { return r.kind == kind; });
}

Result<NodeInventory> MakeInventory(const adapters::host::PciDiscovery& passthrough,
                                    const adapters::host::VgpuVfDiscovery& vfs,
                                    const adapters::host::MdevDiscovery& mdevs,
                                    adapters::host::EgmDiscovery egms,
                                    const adapters::host::PciIds& pci_ids) {
  NodeInventory inventory;
  // Keyed by resource name and what names it, so that two sources of one name stay apart and
  // are refused below instead of being merged into one resource.
  std::map<std::string, ResourceDevices> by_name;
  AddPassthrough(passthrough, pci_ids, by_name);
  AddVfs(vfs, by_name);
  AddMdevs(mdevs, by_name);
  for (auto& [key, resource] : by_name) {
    std::sort(resource.devices.begin(), resource.devices.end(),
              [](const ServedDevice& a, const ServedDevice& b) { return a.id < b.id; });
    for (const auto& d : resource.devices) {
      if (d.pci) inventory.pci_functions.push_back(*d.pci);
    }
    inventory.resources.push_back(std::move(resource));
  }
  // Two sources whose names sanitize alike would share a socket and a resource name (the Go
  // plugin has the same limitation); refuse rather than serve one of them silently.
  for (std::size_t i = 1; i < inventory.resources.size(); ++i) {
    const auto& a = inventory.resources[i - 1];
    const auto& b = inventory.resources[i];
    if (a.naming.resource_name == b.naming.resource_name) {
      return FailedPrecondition(Describe(a) + " and " + Describe(b) + " both map to resource " +
                                a.naming.resource_name);
    }
  }
  std::sort(inventory.pci_functions.begin(), inventory.pci_functions.end(),
            [](const auto& a, const auto& b) { return a.bdf < b.bdf; });
  Append(inventory.warnings, passthrough.warnings);
  Append(inventory.warnings, vfs.warnings);
  Append(inventory.warnings, mdevs.warnings);
  Append(inventory.warnings, egms.warnings);
  inventory.egms = std::move(egms);
  return inventory;
}

Result<NodeInventory> ScanNode(const std::filesystem::path& sysfs_root,
                               const std::filesystem::path& dev_root,
                               const adapters::host::PciIds& pci_ids) {
  GFP_ASSIGN_OR_RETURN(auto passthrough, adapters::host::DiscoverVfioDevices(sysfs_root));
  GFP_ASSIGN_OR_RETURN(auto vfs, adapters::host::DiscoverVgpuVfs(sysfs_root));
  GFP_ASSIGN_OR_RETURN(auto mdevs, adapters::host::DiscoverMdevDevices(sysfs_root));
  GFP_ASSIGN_OR_RETURN(auto egms, adapters::host::DiscoverEgmDevices(sysfs_root, dev_root));
  return MakeInventory(passthrough, vfs, mdevs, std::move(egms), pci_ids);
}

Status CheckOneFabricMode(const NodeInventory& inventory) {
  std::vector<std::string> whole;
  std::vector<std::string> vfs;
  for (const auto& r : inventory.resources) {
    if (r.kind == sm::DeviceKind::kPciPassthrough) whole.push_back(r.naming.resource_name);
    if (r.kind == sm::DeviceKind::kVgpuVf) vfs.push_back(r.naming.resource_name);
  }
  if (whole.empty() || vfs.empty()) return Status::Ok();
  auto list = [](const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  };
  return FailedPrecondition(
      "Fabric Manager runs in one mode per node, but this node has whole GPUs on a VFIO driver (" +
      list(whole) + ", FABRIC_MODE=1) and vGPU VFs (" + list(vfs) +
      ", FABRIC_MODE=2); bind every GPU one way, or serve without --fabric-manager");
}

sm::ObserveInventory InventoryCommand(const NodeInventory& inventory, sm::Micros now) {
  sm::ObserveInventory command;
  command.now = now;
  for (const auto& resource : inventory.resources) {
    for (const auto& d : resource.devices) {
      events::Device device;
      device.set_bdf(d.id);
      device.set_resource(resource.naming.resource_name);
      if (d.pci) {
        device.set_device_id(d.pci->device_id);
        device.set_iommu_group(d.pci->iommu_group);
      }
      device.set_numa_node(static_cast<std::int32_t>(std::max<std::int64_t>(0, d.numa_node)));
      device.set_kind(static_cast<events::DeviceKind>(d.kind));
      device.set_parent_bdf(d.parent_bdf);
      command.devices.push_back(std::move(device));
    }
  }
  command.warnings = inventory.warnings;
  return command;
}

adapters::kubelet_naming::ResourceNaming MdevResourceNaming(const std::string& type_name) {
  adapters::kubelet_naming::ResourceNaming naming;
  naming.suffix = type_name;
  naming.resource_name = adapters::kubelet_naming::ResourceName(type_name);
  naming.socket_name = adapters::kubelet_naming::PluginSocketName(type_name);
  naming.env_key = adapters::kubelet_naming::MdevEnvKey(type_name);
  return naming;
}

adapters::kubelet_naming::ResourceNaming VgpuVfResourceNaming(const std::string& profile) {
  adapters::kubelet_naming::ResourceNaming naming;
  naming.suffix = profile;
  naming.resource_name = adapters::kubelet_naming::ResourceName(profile);
  naming.socket_name = adapters::kubelet_naming::PluginSocketName(profile);
  naming.env_key = adapters::kubelet_naming::VgpuVfEnvKey(profile);
  return naming;
}

}  // namespace gfp::plugin::core

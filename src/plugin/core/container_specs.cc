#include "plugin/core/container_specs.h"

#include <spdlog/spdlog.h>

#include "adapters/host/egm_discovery.h"

namespace gfp::plugin::core {

Result<std::vector<adapters::host::DeviceNodeSpec>> ContainerDeviceNodes(
    const ServeConfig& config, const NodeInventory& inventory, const ResourceDevices& resource,
    const std::vector<std::string>& ids, bool iommufd) {
  if (resource.kind == sm::DeviceKind::kMdev) {
    return adapters::host::MdevContainerDeviceSpecs(config.sysfs_root, config.dev_root, ids);
  }
  GFP_ASSIGN_OR_RETURN(auto specs,
                       adapters::host::ContainerDeviceSpecs(inventory.pci_functions, ids, iommufd));
  if (resource.kind != sm::DeviceKind::kPciPassthrough) return specs;
  // Grace EGM: looked up at every Allocate, as the Go plugin does (upstream-behaviour.md §1.9),
  // so an EGM node created after start is handed out too.
  auto egms = adapters::host::DiscoverEgmDevices(config.sysfs_root, config.dev_root);
  if (!egms.ok()) {
    spdlog::warn("EGM discovery: {}", egms.status().message());
    return specs;
  }
  for (const auto& path : adapters::host::EgmDeviceNodesFor(egms->devices, ids)) {
    specs.push_back({path, path, "mrw"});
  }
  return specs;
}

}  // namespace gfp::plugin::core

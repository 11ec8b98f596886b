// The device nodes one container gets in Allocate's answer, by kind: VFIO group nodes (and the
// iommufd cdevs and /dev/iommu when the host uses iommufd) for whole GPUs and VFs, plus the EGM
// node of a Grace GPU whose GPUs are all requested; /dev/vfio/vfio and each mdev's group node
// for mdevs (never the /dev/vfio directory: adapters/host/allocation_device_specs.h).
#pragma once

#include <string>
#include <vector>

#include "adapters/host/allocation_device_specs.h"
#include "common/status.h"
#include "plugin/core/node_inventory.h"
#include "plugin/serve_config.h"

namespace gfp::plugin::core {

Result<std::vector<adapters::host::DeviceNodeSpec>> ContainerDeviceNodes(
    const ServeConfig& config, const NodeInventory& inventory, const ResourceDevices& resource,
    const std::vector<std::string>& ids, bool iommufd);

}  // namespace gfp::plugin::core

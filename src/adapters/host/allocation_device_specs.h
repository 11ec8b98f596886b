// The device nodes one container needs for its GPUs (SPEC §3, Go plugin Allocate): the VFIO
// container node, each requested device's group node, and with iommufd the per-device cdevs of
// the whole group plus /dev/iommu. Paths are always the real /dev ones: kubelet and the
// container runtime resolve them on the host, never under --dev-root.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "adapters/host/pci_device.h"
#include "common/status.h"

namespace gfp::adapters::host {

struct DeviceNodeSpec {
  std::string host_path;
  std::string container_path;
  std::string permissions;  // "mrw"

  bool operator==(const DeviceNodeSpec&) const = default;
};

// `known` are the discovered devices (group siblings are taken from it); `requested` are one
// container's BDFs in request order. Order of the result follows the Go plugin: per requested
// device, the iommufd cdevs of its group's devices, then /dev/vfio/vfio, /dev/vfio/<group>,
// /dev/iommu; duplicates dropped, first occurrence kept. Unknown BDFs are InvalidArgument;
// with iommufd, a group member without a vfio-dev entry is FailedPrecondition.
Result<std::vector<DeviceNodeSpec>> ContainerDeviceSpecs(std::span<const PciDevice> known,
                                                         std::span<const std::string> requested,
                                                         bool iommufd);

// The device nodes of a container given mdev vGPUs (upstream-behaviour.md §1.10): the whole
// /dev/vfio directory, mrw, once, however many mdevs it gets.
std::vector<DeviceNodeSpec> MdevContainerDeviceSpecs();

}  // namespace gfp::adapters::host

// The device nodes one container needs for its GPUs (SPEC §3, Go plugin Allocate): the VFIO
// container node, each requested device's group node, and with iommufd the per-device cdevs of
// the whole group plus /dev/iommu; for mdev vGPUs the container node and each mdev's group node.
// Paths are always the real /dev ones: kubelet and the container runtime resolve them on the
// host, never under --dev-root.
#pragma once

#include <filesystem>
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

// The device nodes of a container given mdev vGPUs `uuids` (in request order): /dev/vfio/vfio,
// then each mdev's group node /dev/vfio/<group>, every path once (mdevs may share a group), mrw.
// The group is the basename of the <sysfs_root>/bus/mdev/devices/<uuid>/iommu_group link, digits
// only, and its node must exist under <dev_root>/vfio; this is what libvirt opens for an mdev.
// Not the whole /dev/vfio directory the Go plugin hands out (upstream-behaviour.md §1.10): a
// runtime expands a directory to every group node of the node, other VMs' included.
// Errors name the mdev: InvalidArgument for an id that is not an mdev UUID; FailedPrecondition
// "mdev <uuid>: no iommu_group under <sysfs_root>/bus/mdev/devices/<uuid>", "mdev <uuid>:
// iommu_group link points to \"etc\", not a group number", "mdev <uuid>: VFIO group node
// <dev_root>/vfio/<group> is missing".
Result<std::vector<DeviceNodeSpec>> MdevContainerDeviceSpecs(
    const std::filesystem::path& sysfs_root, const std::filesystem::path& dev_root,
    std::span<const std::string> uuids);

}  // namespace gfp::adapters::host

// Finds the NVIDIA functions bound to VFIO under a sysfs root, like the Go plugin's
// createIommuDeviceMap, but reporting every skip as a warning instead of only logging it.
#pragma once

#include <filesystem>
#include <string>

#include "adapters/host/pci_device.h"
#include "common/status.h"

namespace gfp::adapters::host {

// Drivers that hand a whole GPU to a VM.
bool IsVfioDriver(const std::string& driver);

// Scans <sysfs_root>/bus/pci/devices/<BDF>. Only failing to list that directory is an error;
// a device that cannot be read is skipped with a warning; non-NVIDIA functions and NVIDIA
// functions on another driver (NVSwitches stay on `nvidia`) are skipped silently.
Result<PciDiscovery> DiscoverVfioDevices(const std::filesystem::path& sysfs_root);

// The first entry starting with "vfio" in <sysfs_root>/bus/pci/devices/<bdf>/vfio-dev/
// (sorted order, as Go's os.ReadDir). NotFound when the directory or such an entry is missing.
Result<std::string> ReadIommufdDeviceName(const std::filesystem::path& sysfs_root,
                                          const std::string& bdf);

// <sysfs_root>/bus/pci/devices/<bdf>
std::filesystem::path PciDevicePath(const std::filesystem::path& sysfs_root,
                                    const std::string& bdf);

}  // namespace gfp::adapters::host

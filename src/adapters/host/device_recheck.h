// Allocate re-reads each device right before handing it out, so a device that was re-bound or
// moved to another IOMMU group since discovery is refused instead of given to a VM.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "adapters/host/pci_device.h"
#include "common/status.h"

namespace gfp::adapters::host {

struct DeviceIdentity {
  std::string vendor;                 // "10de"
  std::string iommu_group;            // "42"
  std::optional<std::string> driver;  // absent when no driver is bound
};

// Reads vendor, iommu_group and driver of <sysfs_root>/bus/pci/devices/<bdf> now.
// Errors name the BDF and the step: "0000:1b:00.0: cannot read vendor: No such file or directory".
Result<DeviceIdentity> ReadDeviceIdentity(const std::filesystem::path& sysfs_root,
                                          const std::string& bdf);

// OK when `identity` (read now) still has the vendor 10de and the IOMMU group recorded at
// discovery; otherwise FailedPrecondition, worded as CheckDeviceUnchanged's.
Status CheckIdentityUnchanged(const PciDevice& device, const DeviceIdentity& identity);

// OK when the device still has the vendor 10de and the IOMMU group recorded at discovery;
// otherwise FailedPrecondition, e.g. "0000:1b:00.0: IOMMU group changed from 42 to 43".
Status CheckDeviceUnchanged(const std::filesystem::path& sysfs_root, const PciDevice& device);

}  // namespace gfp::adapters::host

#include "adapters/host/device_recheck.h"

#include "adapters/host/file_reading.h"
#include "adapters/host/pci_discovery.h"
#include "adapters/host/sysfs_attributes.h"

namespace gfp::adapters::host {

Result<DeviceIdentity> ReadDeviceIdentity(const std::filesystem::path& sysfs_root,
                                          const std::string& bdf) {
  const std::filesystem::path dir = PciDevicePath(sysfs_root, bdf);
  DeviceIdentity identity;
  auto vendor = ReadHexIdAttribute(dir, "vendor");
  if (!vendor.ok()) return vendor.status().WithContext(bdf);
  identity.vendor = *vendor;
  auto group = ReadIommuGroup(dir);
  if (!group.ok()) return group.status().WithContext(bdf);
  identity.iommu_group = *group;
  if (auto driver = ReadLinkBasename(dir / "driver"); driver.ok()) identity.driver = *driver;
  return identity;
}

Status CheckIdentityUnchanged(const PciDevice& device, const DeviceIdentity& identity) {
  if (identity.vendor != kNvidiaVendorId) {
    return FailedPrecondition(device.bdf + ": vendor changed from " + kNvidiaVendorId + " to " +
                              identity.vendor);
  }
  if (identity.iommu_group != device.iommu_group) {
    return FailedPrecondition(device.bdf + ": IOMMU group changed from " + device.iommu_group +
                              " to " + identity.iommu_group);
  }
  return Status::Ok();
}

Status CheckDeviceUnchanged(const std::filesystem::path& sysfs_root, const PciDevice& device) {
  auto identity = ReadDeviceIdentity(sysfs_root, device.bdf);
  if (!identity.ok()) {
    return FailedPrecondition(identity.status().message());
  }
  return CheckIdentityUnchanged(device, *identity);
}

}  // namespace gfp::adapters::host

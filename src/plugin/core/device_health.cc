#include "plugin/core/device_health.h"

#include <spdlog/spdlog.h>

#include "adapters/host/device_recheck.h"
#include "adapters/host/mdev_discovery.h"
#include "adapters/host/pci_discovery.h"
#include "adapters/host/vfio_nodes.h"
#include "adapters/host/vgpu_vf_discovery.h"
#include "plugin/core/log_text.h"

namespace gfp::plugin::core {

DeviceHealth::DeviceHealth(const ServeConfig& config, const NodeInventory& inventory,
                           engine::Engine& engine, ChangeCounter& changes, const Clock& clock)
    : config_(config), inventory_(inventory), engine_(engine), changes_(changes), clock_(clock) {}

Status DeviceHealth::HostCheck(const ServedDevice& served) const {
  switch (served.kind) {
    case sm::DeviceKind::kMdev:
      return adapters::host::CheckMdevUnchanged(config_.sysfs_root, *served.mdev);
    case sm::DeviceKind::kVgpuVf:
      GFP_RETURN_IF_ERROR(adapters::host::CheckVfUnchanged(config_.sysfs_root, *served.vf));
      return adapters::host::CheckVfioGroupNode(config_.dev_root, served.pci->iommu_group);
    case sm::DeviceKind::kPciPassthrough:
      break;
  }
  const adapters::host::PciDevice& device = *served.pci;
  // One read of vendor, group and driver serves every check of a whole GPU.
  auto identity = adapters::host::ReadDeviceIdentity(config_.sysfs_root, device.bdf);
  if (!identity.ok()) return FailedPrecondition(identity.status().message());
  GFP_RETURN_IF_ERROR(adapters::host::CheckIdentityUnchanged(device, *identity));
  if (!identity->driver || !adapters::host::IsVfioDriver(*identity->driver)) {
    return FailedPrecondition(device.bdf + ": bound to " + identity->driver.value_or("no driver") +
                              ", not to a VFIO driver");
  }
  return adapters::host::CheckVfioGroupNode(config_.dev_root, device.iommu_group);
}

Result<bool> DeviceHealth::Recheck(const ServedDevice& device) {
  Status status = HostCheck(device);
  GFP_ASSIGN_OR_RETURN(sm::Decision d, engine_.Execute(sm::ObserveDeviceHealth{
                                           clock_(), device.id, status.ok(), status.message()}));
  if (d.events.empty()) return false;
  if (status.ok()) {
    spdlog::info("device {} is Healthy again", device.id);
  } else {
    spdlog::warn("device {} is Unhealthy: {}", device.id, LogText(status.message(), 512));
  }
  changes_.Bump();
  return true;
}

void DeviceHealth::RecheckAll() {
  for (const auto& resource : inventory_.resources) {
    for (const auto& device : resource.devices) {
      auto changed = Recheck(device);
      if (!changed.ok()) {
        spdlog::error("journaling a health change: {}", changed.status().message());
      }
    }
  }
}

}  // namespace gfp::plugin::core

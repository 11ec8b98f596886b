#include "adapters/host/allocation_device_specs.h"

#include <algorithm>

#include "adapters/host/mdev_discovery.h"
#include "adapters/host/sysfs_attributes.h"
#include "adapters/host/vfio_nodes.h"
#include "common/text_escape.h"

namespace gfp::adapters::host {
namespace {

constexpr const char* kVfioDir = "/dev/vfio";
constexpr const char* kIommuNode = "/dev/iommu";

void AppendOnce(std::vector<DeviceNodeSpec>& specs, const std::string& path) {
  const bool seen = std::any_of(specs.begin(), specs.end(),
                                [&](const DeviceNodeSpec& s) { return s.host_path == path; });
  if (!seen) specs.push_back({path, path, "mrw"});
}

// The IOMMU group of one mdev, its /dev node checked under `dev_root`.
Result<std::string> MdevIommuGroup(const std::filesystem::path& sysfs_root,
                                   const std::filesystem::path& dev_root, const std::string& uuid) {
  if (!IsMdevUuid(uuid)) {
    return InvalidArgument("invalid allocation request: not an mdev UUID: " +
                           EscapeAndTruncate(uuid, 64));
  }
  const std::string what = "mdev " + uuid;
  const std::filesystem::path dir = sysfs_root / "bus" / "mdev" / "devices" / uuid;
  auto group = ReadIommuGroup(dir);
  if (!group.ok() && group.status().code() == ErrorCode::kNotFound) {
    return FailedPrecondition(what + ": no iommu_group under " +
                              EscapeAndTruncate(dir.string(), 300));
  }
  if (!group.ok()) return FailedPrecondition(what + ": " + group.status().message());
  const Status node = CheckVfioGroupNode(dev_root, *group);
  if (!node.ok()) return FailedPrecondition(what + ": " + node.message());
  return *group;
}

}  // namespace

Result<std::vector<DeviceNodeSpec>> ContainerDeviceSpecs(std::span<const PciDevice> known,
                                                         std::span<const std::string> requested,
                                                         bool iommufd) {
  std::vector<DeviceNodeSpec> specs;
  for (const std::string& bdf : requested) {
    const auto it =
        std::find_if(known.begin(), known.end(), [&](const PciDevice& d) { return d.bdf == bdf; });
    if (it == known.end()) {
      return InvalidArgument("invalid allocation request: unknown device: " + bdf);
    }
    const std::string& group = it->iommu_group;
    if (iommufd) {
      // The whole group goes to the VM, so every member needs its cdev.
      for (const PciDevice& member : known) {
        if (member.iommu_group != group) continue;
        if (!member.iommufd_device) {
          return FailedPrecondition("could not determine iommufd device for device " + member.bdf +
                                    ": no vfio* entry under its vfio-dev/");
        }
        AppendOnce(specs, std::string(kVfioDir) + "/devices/" + *member.iommufd_device);
      }
    }
    AppendOnce(specs, std::string(kVfioDir) + "/vfio");
    AppendOnce(specs, std::string(kVfioDir) + "/" + group);
    if (iommufd) AppendOnce(specs, kIommuNode);
  }
  return specs;
}

Result<std::vector<DeviceNodeSpec>> MdevContainerDeviceSpecs(
    const std::filesystem::path& sysfs_root, const std::filesystem::path& dev_root,
    std::span<const std::string> uuids) {
  std::vector<DeviceNodeSpec> specs;
  for (const std::string& uuid : uuids) {
    GFP_ASSIGN_OR_RETURN(const std::string group, MdevIommuGroup(sysfs_root, dev_root, uuid));
    AppendOnce(specs, std::string(kVfioDir) + "/vfio");
    AppendOnce(specs, std::string(kVfioDir) + "/" + group);
  }
  return specs;
}

}  // namespace gfp::adapters::host

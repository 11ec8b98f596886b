#include "adapters/host/allocation_device_specs.h"

#include <algorithm>

namespace gfp::adapters::host {
namespace {

constexpr const char* kVfioDir = "/dev/vfio";
constexpr const char* kIommuNode = "/dev/iommu";

void AppendOnce(std::vector<DeviceNodeSpec>& specs, const std::string& path) {
  const bool seen = std::any_of(specs.begin(), specs.end(),
                                [&](const DeviceNodeSpec& s) { return s.host_path == path; });
  if (!seen) specs.push_back({path, path, "mrw"});
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

std::vector<DeviceNodeSpec> MdevContainerDeviceSpecs() { return {{kVfioDir, kVfioDir, "mrw"}}; }

}  // namespace gfp::adapters::host

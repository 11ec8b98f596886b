#include "adapters/host/vfio_nodes.h"

#include "adapters/host/file_reading.h"

namespace gfp::adapters::host {

Result<bool> DetectIommufd(const std::filesystem::path& dev_root) {
  const std::filesystem::path iommu = dev_root / "iommu";
  auto exists = PathExists(iommu);
  if (!exists.ok()) {
    return exists.status().WithContext("could not determine iommufd support: stat " +
                                       iommu.string());
  }
  return *exists;
}

bool IommufdAvailable(const std::filesystem::path& dev_root) {
  auto available = DetectIommufd(dev_root);
  return available.ok() && *available;
}

Status CheckVfioGroupNode(const std::filesystem::path& dev_root, const std::string& iommu_group) {
  const std::filesystem::path node = dev_root / "vfio" / iommu_group;
  auto exists = PathExists(node);
  if (!exists.ok()) return exists.status().WithContext("VFIO group node " + node.string());
  if (!*exists) return NotFound("VFIO group node " + node.string() + " is missing");
  return Status::Ok();
}

}  // namespace gfp::adapters::host

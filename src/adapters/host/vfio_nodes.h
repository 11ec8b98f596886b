// Checks on the /dev side of VFIO, looked up under --dev-root (tests point it at a fake tree).
#pragma once

#include <filesystem>
#include <string>

#include "common/status.h"

namespace gfp::adapters::host {

// iommufd is usable when <dev_root>/iommu exists (the Go plugin's check). Any stat error
// other than "does not exist" is returned, as the Go plugin fails Allocate on it.
Result<bool> DetectIommufd(const std::filesystem::path& dev_root);

// Convenience form of DetectIommufd: errors count as "not available".
bool IommufdAvailable(const std::filesystem::path& dev_root);

// Health: OK when <dev_root>/vfio/<group> exists; NotFound
// "VFIO group node /dev/vfio/42 is missing" otherwise (naming the dev-root path).
Status CheckVfioGroupNode(const std::filesystem::path& dev_root, const std::string& iommu_group);

}  // namespace gfp::adapters::host

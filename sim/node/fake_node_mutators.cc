// Changes to a built fake node, as a health check or Allocate re-check would observe them on
// a real host (a group node vanishing, a rebind to nvidia, a hot-unplug).
#include <system_error>

#include "sim/node/fake_node.h"
#include "sim/node/fake_tree_writer.h"

namespace gfp::sim {
namespace {

namespace fs = std::filesystem;

Status RequireDevice(const FakeNode& node, const std::string& bdf) {
  std::error_code ec;
  if (!fs::is_directory(node.DeviceDir(bdf), ec)) {
    return NotFound("fake node: no device " + bdf + " under " + node.sysfs_root.string());
  }
  return Status::Ok();
}

}  // namespace

Status FakeNode::RemoveVfioGroupNode(const std::string& iommu_group) const {
  const fs::path node = dev_root / "vfio" / iommu_group;
  std::error_code ec;
  if (!fs::remove(node, ec)) {
    return NotFound("fake node: cannot remove " + node.string() + ": " +
                    (ec ? ec.message() : std::string("it does not exist")));
  }
  return Status::Ok();
}

Status FakeNode::RecreateVfioGroupNode(const std::string& iommu_group) const {
  return WriteTextFile(dev_root / "vfio" / iommu_group, "");
}

Status FakeNode::RebindDriver(const std::string& bdf, const std::string& driver) const {
  GFP_RETURN_IF_ERROR(RequireDevice(*this, bdf));
  const fs::path link = DeviceDir(bdf) / "driver";
  if (driver.empty()) return RemovePath(link);
  const fs::path driver_dir = sysfs_root / "bus" / "pci" / "drivers" / driver;
  GFP_RETURN_IF_ERROR(MakeDirectories(driver_dir));
  return MakeRelativeSymlink(driver_dir, link);
}

Status FakeNode::SetIommuGroup(const std::string& bdf, const std::string& iommu_group) const {
  GFP_RETURN_IF_ERROR(RequireDevice(*this, bdf));
  const fs::path group_dir = sysfs_root / "kernel" / "iommu_groups" / iommu_group;
  GFP_RETURN_IF_ERROR(MakeDirectories(group_dir));
  return MakeRelativeSymlink(group_dir, DeviceDir(bdf) / "iommu_group");
}

Status FakeNode::SetNumaNode(const std::string& bdf, int numa_node) const {
  GFP_RETURN_IF_ERROR(RequireDevice(*this, bdf));
  return WriteTextFile(DeviceDir(bdf) / "numa_node", std::to_string(numa_node) + "\n");
}

Status FakeNode::RemoveDevice(const std::string& bdf) const {
  GFP_RETURN_IF_ERROR(RequireDevice(*this, bdf));
  // Children go first, as when the kernel unregisters a parent.
  for (const FakeMdev& mdev : mdevs) {
    if (mdev.parent_bdf == bdf) {
      GFP_RETURN_IF_ERROR(RemovePath(sysfs_root / "bus" / "mdev" / "devices" / mdev.uuid));
    }
  }
  for (const FakeVf& vf : vfs) {
    if (vf.parent_bdf == bdf) {
      GFP_RETURN_IF_ERROR(RemovePath(sysfs_root / "bus" / "pci" / "devices" / vf.bdf));
      GFP_RETURN_IF_ERROR(RemovePath(DeviceDir(vf.bdf)));
    }
  }
  GFP_RETURN_IF_ERROR(RemovePath(sysfs_root / "bus" / "pci" / "devices" / bdf));
  return RemovePath(DeviceDir(bdf));
}

Status FakeNode::RemoveMdev(const std::string& uuid) const {
  for (const FakeMdev& mdev : mdevs) {
    if (mdev.uuid != uuid) continue;
    std::error_code ec;
    if (!fs::is_directory(MdevDir(mdev), ec)) break;
    GFP_RETURN_IF_ERROR(RemovePath(sysfs_root / "bus" / "mdev" / "devices" / uuid));
    return RemovePath(MdevDir(mdev));
  }
  return NotFound("fake node: no mdev " + uuid + " under " + sysfs_root.string());
}

Status FakeNode::SetVfVgpuType(const std::string& vf_bdf, const std::string& type_id) const {
  GFP_RETURN_IF_ERROR(RequireDevice(*this, vf_bdf));
  std::error_code ec;
  if (!fs::is_symlink(DeviceDir(vf_bdf) / "physfn", ec)) {
    return FailedPrecondition("fake node: " + vf_bdf + " is not a VF (no physfn link)");
  }
  return WriteTextFile(DeviceDir(vf_bdf) / "nvidia" / "current_vgpu_type", type_id + "\n");
}

}  // namespace gfp::sim

// Finds SR-IOV vGPU VFs (Ada/Hopper/Blackwell, vGPU 17+, no mdev) under <sysfs>/bus/pci/devices,
// like the Go plugin's PR 192 (reference/upstream-behaviour.md §3.2): NVIDIA functions on the
// `nvidia` driver with a `physfn` link and a non-empty, non-zero nvidia/current_vgpu_type, named
// by the profile that type has in nvidia/creatable_vgpu_types.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/host/pci_device.h"
#include "common/status.h"

namespace gfp::adapters::host {

struct VgpuVf {
  std::string bdf;                            // the kubelet device id, e.g. "0000:1b:00.4"
  std::string parent_bdf;                     // the physical GPU, from the physfn link
  std::string vgpu_type_id;                   // nvidia/current_vgpu_type, e.g. "1064"
  std::string profile;                        // resource suffix: "NVIDIA_H100XM-80C"
  std::string iommu_group;                    // decimal
  std::int64_t numa_node = 0;                 // the VF's numa_node; 0 when unknown or -1
  std::string device_id;                      // the VF's PCI device id, 4 lower-case hex digits
  std::optional<std::string> iommufd_device;  // "vfio8" from <VF>/vfio-dev/, when present

  bool operator==(const VgpuVf&) const = default;
};

struct VgpuVfDiscovery {
  std::vector<VgpuVf> vfs;  // sorted by BDF
  // "<BDF>: skipped: <reason>" for VFs that look configured but cannot be used.
  std::vector<std::string> warnings;

  // Distinct profiles, sorted (one kubelet resource "nvidia.com/<profile>" each).
  std::vector<std::string> Profiles() const;
};

// A creatable_vgpu_types file: lines matching Go's `^\s*([0-9]+)\s*:\s*(.+?)\s*$` give
// id -> name with whitespace runs turned into "_"; other lines (the "ID : vGPU Name" header,
// garbage) are ignored. The first line for an id wins.
std::map<std::string, std::string> ParseVgpuTypeCatalog(std::string_view content);

// The VF as a passthrough device (PR 192 serves VFs through the passthrough plugin, so Allocate
// builds its device specs exactly as for a whole GPU); driver "nvidia".
PciDevice AsPciDevice(const VgpuVf& vf);

// Health and Allocate's re-check: still an NVIDIA VF on the nvidia driver with the vGPU type,
// parent and IOMMU group recorded at discovery; otherwise FailedPrecondition naming the change,
// e.g. "0000:1b:00.4: vGPU type changed from 1064 to 1065"; a VF whose type was cleared (0) or
// that left the nvidia driver is "0000:1b:00.4: no longer a vGPU VF with a vGPU type on ...".
Status CheckVfUnchanged(const std::filesystem::path& sysfs_root, const VgpuVf& vf);

// Only failing to list <sysfs_root>/bus/pci/devices is an error.
Result<VgpuVfDiscovery> DiscoverVgpuVfs(const std::filesystem::path& sysfs_root);

}  // namespace gfp::adapters::host

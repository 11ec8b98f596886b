// Finds NVIDIA mediated vGPU devices under <sysfs>/bus/mdev/devices, like the Go plugin's
// createVgpuIDMap (reference/upstream-behaviour.md §1.4), reporting every skip as a warning.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/status.h"

namespace gfp::adapters::host {

struct MdevDevice {
  std::string uuid;            // the kubelet device id, e.g. "6a3e2b10-5c7d-4f1e-8a9b-000000000001"
  std::string type_name;       // mdev_type/name, whitespace runs -> "_": "GRID_A100-4C"
  std::string parent_bdf;      // the GPU the mdev lives on (second-to-last part of its link)
  std::int64_t numa_node = 0;  // the parent's numa_node; 0 when unknown or -1

  bool operator==(const MdevDevice&) const = default;
};

struct MdevDiscovery {
  std::vector<MdevDevice> devices;  // sorted by UUID
  // "<uuid>: skipped: <reason>" per mdev not taken, "<uuid>: parent ...: using NUMA node 0".
  std::vector<std::string> warnings;

  // Distinct type names, sorted (one kubelet resource "nvidia.com/<type>" each).
  std::vector<std::string> TypeNames() const;
};

// Scans <sysfs_root>/bus/mdev/devices. A missing directory means no mdev support on the host
// and gives an empty result; only a directory that cannot be listed is an error.
Result<MdevDiscovery> DiscoverMdevDevices(const std::filesystem::path& sysfs_root);

// Health and Allocate's re-check: the mdev and its parent are there, with the parent and type
// recorded at discovery; otherwise FailedPrecondition naming what changed, e.g.
// "mdev 6a3e…: its parent GPU 0000:3b:00.0 is gone".
Status CheckMdevUnchanged(const std::filesystem::path& sysfs_root, const MdevDevice& mdev);

// "6a3e2b10-5c7d-4f1e-8a9b-000000000001": 8-4-4-4-12 lower-case hex digits, as the kernel names
// mdevs.
bool IsMdevUuid(std::string_view text);

}  // namespace gfp::adapters::host

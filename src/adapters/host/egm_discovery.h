// Grace extended GPU memory (EGM): <sysfs>/class/egm/egmN lists in gpu_devices the GPUs whose
// memory it exposes; a VM that gets all of them gets /dev/egmN too (the Go plugin's Allocate,
// reference/upstream-behaviour.md §1.9).
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace gfp::adapters::host {

struct EgmDevice {
  std::string name;                   // "egm0"
  std::vector<std::string> gpu_bdfs;  // canonical, in file order
  bool dev_node_exists = false;       // <dev_root>/<name> was there when discovered

  bool operator==(const EgmDevice&) const = default;
};

struct EgmDiscovery {
  std::vector<EgmDevice> devices;  // sorted by name
  std::vector<std::string> warnings;
};

// Scans <sysfs_root>/class/egm/egm<digits>. A missing class directory (no EGM on the host)
// gives an empty result; an EGM with an empty, unreadable or garbled gpu_devices is skipped
// with a warning (it could never be complete in a request).
Result<EgmDiscovery> DiscoverEgmDevices(const std::filesystem::path& sysfs_root,
                                        const std::filesystem::path& dev_root);

// The rule, pure: "/dev/<name>" for every EGM whose device node exists and whose GPUs are all
// in `requested_bdfs` (one container's request; compared case-insensitively, any BDF spelling),
// sorted by path as the Go plugin does.
std::vector<std::string> EgmDeviceNodesFor(std::span<const EgmDevice> egms,
                                           std::span<const std::string> requested_bdfs);

}  // namespace gfp::adapters::host

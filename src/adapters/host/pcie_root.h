// The PCIe root a PCI function hangs under, from where its sysfs entry really lives: the
// standard DRA attribute resource.kubernetes.io/pcieRoot (SPEC §11), so that a claim can ask for
// GPUs (or a GPU and a NIC) under one root complex.
#pragma once

#include <filesystem>
#include <string>

#include "common/status.h"

namespace gfp::adapters::host {

// "pci0000:17" for a function whose <sysfs_root>/bus/pci/devices/<bdf> resolves to
// <sysfs_root>/devices/pci0000:17/…/<bdf>. NotFound when the entry does not resolve;
// InvalidArgument when it leads outside the sysfs root or not below a pci<domain>:<bus> folder.
Result<std::string> PcieRootOf(const std::filesystem::path& sysfs_root, const std::string& bdf);

}  // namespace gfp::adapters::host

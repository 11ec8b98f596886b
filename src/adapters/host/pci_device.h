// One NVIDIA PCI function bound to a VFIO driver, as found in sysfs. Each one is one kubelet
// device (devices are functions, not IOMMU groups, as in the Go plugin).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gfp::adapters::host {

inline constexpr const char* kNvidiaVendorId = "10de";

struct PciDevice {
  std::string bdf;             // canonical, e.g. "0000:1b:00.0"
  std::string device_id;       // 4 lower-case hex digits without "0x", e.g. "2330"
  std::string driver;          // "vfio-pci" or "nvgrace_gpu_vfio_pci"
  std::string iommu_group;     // decimal, e.g. "42"
  std::int64_t numa_node = 0;  // never negative: -1 ("no affinity") is reported as 0
  // The iommufd character device, e.g. "vfio3" (from <BDF>/vfio-dev/); absent on kernels
  // without the VFIO cdev interface.
  std::optional<std::string> iommufd_device;

  bool operator==(const PciDevice&) const = default;
};

struct PciDiscovery {
  std::vector<PciDevice> devices;  // sorted by BDF
  // One line per skipped NVIDIA-or-unknown function: "<BDF>: skipped: <step>: <reason>", and
  // per device taken despite a bad attribute: "<BDF>: numa_node \"x\" is not a NUMA node id ...".
  std::vector<std::string> warnings;

  const PciDevice* Find(const std::string& bdf) const;
  // Distinct device ids, sorted (one kubelet resource each).
  std::vector<std::string> DeviceIds() const;
};

}  // namespace gfp::adapters::host

#include "adapters/host/pci_discovery.h"

#include <algorithm>
#include <variant>

#include "adapters/host/bdf.h"
#include "adapters/host/file_reading.h"
#include "adapters/host/sysfs_attributes.h"
#include "common/text_escape.h"

namespace gfp::adapters::host {
namespace {

constexpr std::size_t kMaxAttributeBytes = 4096;

// Why one device was not taken; `silent` for devices that are simply not ours.
struct Skip {
  bool silent = false;
  std::string reason;
};

// The device's NUMA node: 0 when there is no numa_node file or it says -1 (no affinity); 0 and
// a warning when it holds something that is not a node id.
std::int64_t ReadNumaNode(const std::filesystem::path& dir, const std::string& name,
                          std::vector<std::string>* warnings) {
  auto content = ReadWholeFile(dir / "numa_node", kMaxAttributeBytes);
  if (!content.ok()) return 0;
  const auto numa = ParseNumaNodeAttribute(*content);
  if (numa) return *numa;
  warnings->push_back(name + ": numa_node " + QuoteAttribute(*content) +
                      " is not a NUMA node id (0.." + std::to_string(kMaxNumaNode) +
                      "); using NUMA node 0");
  return 0;
}

std::variant<PciDevice, Skip> InspectDevice(const std::filesystem::path& sysfs_root,
                                            const std::string& name,
                                            std::vector<std::string>* warnings) {
  const std::filesystem::path dir = PciDevicePath(sysfs_root, name);

  auto vendor = ReadHexIdAttribute(dir, "vendor");
  if (!vendor.ok()) return Skip{false, vendor.status().message()};
  if (*vendor != kNvidiaVendorId) return Skip{true, {}};

  // sysfs names are always canonical; anything else would become a kubelet device id.
  if (!IsCanonicalBdf(name)) return Skip{false, "name is not a PCI address (DDDD:BB:DD.F)"};

  auto driver = ReadLinkBasename(dir / "driver");
  if (!driver.ok()) return Skip{false, "cannot read driver link: " + driver.status().message()};
  if (!IsVfioDriver(*driver)) return Skip{true, {}};

  auto group = ReadIommuGroup(dir);
  if (!group.ok()) return Skip{false, group.status().message()};

  auto device_id = ReadHexIdAttribute(dir, "device");
  if (!device_id.ok()) return Skip{false, device_id.status().message()};
  const std::int64_t numa = ReadNumaNode(dir, name, warnings);

  PciDevice device;
  device.bdf = name;
  device.device_id = *device_id;
  device.driver = *driver;
  device.iommu_group = *group;
  device.numa_node = numa;
  if (auto cdev = ReadIommufdDeviceName(sysfs_root, name); cdev.ok()) {
    device.iommufd_device = *cdev;
  }
  return device;
}

}  // namespace

bool IsVfioDriver(const std::string& driver) {
  return driver == "vfio-pci" || driver == "nvgrace_gpu_vfio_pci";
}

std::filesystem::path PciDevicePath(const std::filesystem::path& sysfs_root,
                                    const std::string& bdf) {
  return sysfs_root / "bus" / "pci" / "devices" / bdf;
}

Result<PciDiscovery> DiscoverVfioDevices(const std::filesystem::path& sysfs_root) {
  const std::filesystem::path devices_dir = sysfs_root / "bus" / "pci" / "devices";
  auto names = ListDirectory(devices_dir);
  if (!names.ok()) {
    return names.status().WithContext("PCI discovery: cannot list " +
                                      EscapeControl(devices_dir.string()));
  }
  PciDiscovery result;
  for (const std::string& name : *names) {  // sorted, so devices come out sorted by BDF
    auto outcome = InspectDevice(sysfs_root, name, &result.warnings);
    if (auto* device = std::get_if<PciDevice>(&outcome)) {
      result.devices.push_back(std::move(*device));
      continue;
    }
    const Skip& skip = std::get<Skip>(outcome);
    // The entry name is whatever the directory holds: escaped before it reaches a log line.
    if (!skip.silent) {
      result.warnings.push_back(EscapeAndTruncate(name, 64) + ": skipped: " + skip.reason);
    }
  }
  return result;
}

Result<std::string> ReadIommufdDeviceName(const std::filesystem::path& sysfs_root,
                                          const std::string& bdf) {
  const std::filesystem::path dir = PciDevicePath(sysfs_root, bdf) / "vfio-dev";
  auto names = ListDirectory(dir);
  if (!names.ok()) return names.status().WithContext("cannot list " + dir.string());
  // The name becomes a /dev/vfio/devices/<name> path in Allocate: "vfio" and digits only, as the
  // kernel names the cdevs (an entry with a newline or escape codes is not one).
  for (const std::string& name : *names) {
    if (name.size() > 4 && name.rfind("vfio", 0) == 0 &&
        std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return name;
    }
  }
  return NotFound("no vfio* entry in " + dir.string());
}

const PciDevice* PciDiscovery::Find(const std::string& bdf) const {
  for (const PciDevice& device : devices) {
    if (device.bdf == bdf) return &device;
  }
  return nullptr;
}

std::vector<std::string> PciDiscovery::DeviceIds() const {
  std::vector<std::string> ids;
  for (const PciDevice& device : devices) ids.push_back(device.device_id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace gfp::adapters::host

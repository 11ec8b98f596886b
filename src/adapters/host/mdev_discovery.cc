#include "adapters/host/mdev_discovery.h"

#include <algorithm>
#include <system_error>

#include "adapters/host/bdf.h"
#include "adapters/host/file_reading.h"
#include "adapters/host/numa_attribute.h"
#include "adapters/host/pci_discovery.h"
#include "adapters/host/sysfs_attributes.h"
#include "adapters/host/sysfs_links.h"
#include "adapters/kubelet_naming/vgpu_naming.h"
#include "common/text_escape.h"

namespace gfp::adapters::host {
namespace {

namespace fs = std::filesystem;
constexpr std::size_t kMaxAttributeBytes = 4096;

// The kernel names mdevs with lower-case hex (%pUl): an upper-case twin is not a kernel entry, and
// taking it would advertise the same device twice.
bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// Go takes element [len-2] of the link target split by "/": the parent device directory.
Result<std::string> ParentBdfOf(const fs::path& entry) {
  std::error_code ec;
  const fs::path target = fs::read_symlink(entry, ec);
  if (ec) return NotFound("cannot read its link: " + ec.message());
  const fs::path parent = target.parent_path().filename();
  if (!IsCanonicalBdf(parent.string())) {
    return InvalidArgument("its link " + QuoteAttribute(target.string()) +
                           " does not lead to a directory under a PCI device");
  }
  return parent.string();
}

Result<std::string> ReadTypeName(const fs::path& entry) {
  auto content = ReadWholeFile(entry / "mdev_type" / "name", kMaxAttributeBytes);
  if (!content.ok()) return content.status().WithContext("cannot read mdev_type/name");
  std::string_view text = *content;
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  while (!text.empty() && text.front() == '\n') text.remove_prefix(1);
  std::string name = kubelet_naming::ReplaceWhitespaceRuns(text);
  if (!kubelet_naming::IsValidResourceSuffix(name)) {
    return InvalidArgument("mdev_type/name " + QuoteAttribute(*content) +
                           " does not make a resource name (1-63 of A-Z a-z 0-9 . _ -)");
  }
  return name;
}

std::int64_t ReadParentNuma(const fs::path& sysfs_root, const std::string& uuid,
                            const std::string& parent, std::vector<std::string>* warnings) {
  auto present = PathExists(PciDevicePath(sysfs_root, parent));
  if (!present.ok() || !*present) {
    warnings->push_back(uuid + ": parent " + parent +
                        " is not in bus/pci/devices; using NUMA node 0");
    return 0;
  }
  return ReadNumaNodeOrZero(PciDevicePath(sysfs_root, parent), uuid + ": parent " + parent,
                            warnings);
}

Result<MdevDevice> InspectMdev(const fs::path& sysfs_root, const std::string& uuid,
                               std::vector<std::string>* warnings) {
  const fs::path entry = sysfs_root / "bus" / "mdev" / "devices" / uuid;
  GFP_RETURN_IF_ERROR(CheckResolvesInside(entry, sysfs_root));
  GFP_ASSIGN_OR_RETURN(std::string parent, ParentBdfOf(entry));
  GFP_RETURN_IF_ERROR(
      CheckResolvesInside(entry / "mdev_type", sysfs_root).WithContext("mdev_type"));
  GFP_ASSIGN_OR_RETURN(std::string type_name, ReadTypeName(entry));
  MdevDevice device{uuid, std::move(type_name), parent, 0};
  device.numa_node = ReadParentNuma(sysfs_root, uuid, parent, warnings);
  return device;
}

}  // namespace

bool IsMdevUuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !IsLowerHex(text[i])) return false;
  }
  return true;
}

Result<MdevDiscovery> DiscoverMdevDevices(const fs::path& sysfs_root) {
  const fs::path devices_dir = sysfs_root / "bus" / "mdev" / "devices";
  MdevDiscovery result;
  auto names = ListDirectory(devices_dir);
  if (!names.ok() && names.status().code() == ErrorCode::kNotFound) return result;
  if (!names.ok()) {
    return names.status().WithContext("mdev discovery: cannot list " +
                                      EscapeControl(devices_dir.string()));
  }
  for (const std::string& name : *names) {
    // The UUID becomes a kubelet device id and an env value: nothing else is taken.
    if (!IsMdevUuid(name)) {
      result.warnings.push_back(
          EscapeAndTruncate(name, 64) +
          ": skipped: not an mdev UUID (lower-case, as the kernel names them)");
      continue;
    }
    auto device = InspectMdev(sysfs_root, name, &result.warnings);
    if (!device.ok()) {
      result.warnings.push_back(name + ": skipped: " + device.status().message());
      continue;
    }
    result.devices.push_back(std::move(*device));
  }
  return result;
}

Status CheckMdevUnchanged(const fs::path& sysfs_root, const MdevDevice& mdev) {
  auto parent = PathExists(PciDevicePath(sysfs_root, mdev.parent_bdf));
  if (!parent.ok() || !*parent) {
    return FailedPrecondition("mdev " + mdev.uuid + ": its parent GPU " + mdev.parent_bdf +
                              " is gone");
  }
  auto entry = PathExists(sysfs_root / "bus" / "mdev" / "devices" / mdev.uuid);
  if (!entry.ok() || !*entry) return FailedPrecondition("mdev " + mdev.uuid + " is gone");
  std::vector<std::string> ignored;
  auto now = InspectMdev(sysfs_root, mdev.uuid, &ignored);
  if (!now.ok()) return FailedPrecondition("mdev " + mdev.uuid + ": " + now.status().message());
  if (now->parent_bdf != mdev.parent_bdf) {
    return FailedPrecondition("mdev " + mdev.uuid + ": parent changed from " + mdev.parent_bdf +
                              " to " + now->parent_bdf);
  }
  if (now->type_name != mdev.type_name) {
    return FailedPrecondition("mdev " + mdev.uuid + ": type changed from " + mdev.type_name +
                              " to " + now->type_name);
  }
  return Status::Ok();
}

std::vector<std::string> MdevDiscovery::TypeNames() const {
  std::vector<std::string> names;
  for (const MdevDevice& device : devices) names.push_back(device.type_name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace gfp::adapters::host

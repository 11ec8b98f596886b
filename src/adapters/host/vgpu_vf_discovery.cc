#include "adapters/host/vgpu_vf_discovery.h"

#include <algorithm>
#include <optional>
#include <set>

#include "adapters/host/bdf.h"
#include "adapters/host/file_reading.h"
#include "adapters/host/numa_attribute.h"
#include "adapters/host/pci_device.h"
#include "adapters/host/pci_discovery.h"
#include "adapters/host/sysfs_attributes.h"
#include "adapters/host/sysfs_links.h"
#include "adapters/kubelet_naming/vgpu_naming.h"
#include "common/text_escape.h"

namespace gfp::adapters::host {
namespace {

namespace fs = std::filesystem;
constexpr std::size_t kMaxAttributeBytes = 4096;
constexpr std::size_t kMaxCatalogBytes = 64 * 1024;  // a page in practice; room for more

bool IsGoSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }

std::string_view TrimGoSpace(std::string_view s) {
  while (!s.empty() && IsGoSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsGoSpace(s.back())) s.remove_suffix(1);
  return s;
}

bool IsDecimal(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The VF's own catalog first, then its PF's (Go merges both per PF).
std::map<std::string, std::string> CatalogFor(const fs::path& vf_dir, const fs::path& pf_dir) {
  std::map<std::string, std::string> catalog;
  for (const fs::path& dir : {vf_dir, pf_dir}) {
    auto content = ReadWholeFile(dir / "nvidia" / "creatable_vgpu_types", kMaxCatalogBytes);
    if (!content.ok()) continue;
    catalog.merge(ParseVgpuTypeCatalog(*content));
  }
  return catalog;
}

Result<std::optional<VgpuVf>> NotOurs() { return std::optional<VgpuVf>(); }

// nullopt: not a configured vGPU VF (silently not ours); error: looks like one but is unusable.
Result<std::optional<VgpuVf>> InspectFunction(const fs::path& sysfs_root, const std::string& name,
                                              std::vector<std::string>* warnings) {
  const fs::path dir = PciDevicePath(sysfs_root, name);
  auto vendor = ReadHexIdAttribute(dir, "vendor");
  if (!vendor.ok() || *vendor != kNvidiaVendorId || !IsCanonicalBdf(name)) return NotOurs();
  auto driver = ReadLinkBasename(dir / "driver");
  if (!driver.ok() || *driver != "nvidia") return NotOurs();
  auto physfn = ReadLinkBasename(dir / "physfn");
  if (!physfn.ok()) return NotOurs();  // a PF or an NVSwitch
  auto type = ReadWholeFile(dir / "nvidia" / "current_vgpu_type", kMaxAttributeBytes);
  if (!type.ok() && type.status().code() == ErrorCode::kNotFound) return NotOurs();
  if (!type.ok()) return type.status().WithContext("cannot read nvidia/current_vgpu_type");
  const std::string type_id(TrimGoSpace(*type));
  if (type_id.empty() || type_id == "0") return NotOurs();

  if (!IsDecimal(type_id)) {
    return InvalidArgument("nvidia/current_vgpu_type " + QuoteAttribute(*type) +
                           " is not a vGPU type id");
  }
  if (!IsCanonicalBdf(*physfn)) {
    return InvalidArgument("physfn link points to " + QuoteAttribute(*physfn) +
                           ", not a PCI address");
  }
  GFP_RETURN_IF_ERROR(CheckResolvesInside(dir / "physfn", sysfs_root).WithContext("physfn link"));
  const auto catalog = CatalogFor(dir, dir / "physfn");
  const auto profile = catalog.find(type_id);
  if (profile == catalog.end()) {
    return NotFound("vGPU type " + type_id + " is not listed in nvidia/creatable_vgpu_types of " +
                    name + " or of its parent " + *physfn);
  }
  GFP_ASSIGN_OR_RETURN(std::string group, ReadIommuGroup(dir));
  const std::int64_t numa = ReadNumaNodeOrZero(dir, name, warnings);
  GFP_ASSIGN_OR_RETURN(std::string device_id, ReadHexIdAttribute(dir, "device"));
  VgpuVf vf{name, *physfn, type_id, profile->second, group, numa, device_id, std::nullopt};
  if (auto cdev = ReadIommufdDeviceName(sysfs_root, name); cdev.ok()) vf.iommufd_device = *cdev;
  return std::optional<VgpuVf>(std::move(vf));
}

}  // namespace

std::map<std::string, std::string> ParseVgpuTypeCatalog(std::string_view content) {
  std::map<std::string, std::string> catalog;
  while (!content.empty()) {
    const std::size_t end = std::min(content.find('\n'), content.size());
    const std::string_view line = content.substr(0, end);
    content.remove_prefix(std::min(end + 1, content.size()));
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view id = TrimGoSpace(line.substr(0, colon));
    const std::string_view name = TrimGoSpace(line.substr(colon + 1));
    if (!IsDecimal(id) || name.empty()) continue;
    catalog.emplace(std::string(id), kubelet_naming::ReplaceWhitespaceRuns(name));
  }
  return catalog;
}

Status CheckVfUnchanged(const fs::path& sysfs_root, const VgpuVf& vf) {
  std::vector<std::string> ignored;
  auto now = InspectFunction(sysfs_root, vf.bdf, &ignored);
  if (!now.ok()) return FailedPrecondition(vf.bdf + ": " + now.status().message());
  if (!now->has_value()) {
    return FailedPrecondition(vf.bdf +
                              ": no longer a vGPU VF with a vGPU type on the nvidia driver");
  }
  const VgpuVf& seen = **now;
  if (seen.vgpu_type_id != vf.vgpu_type_id) {
    return FailedPrecondition(vf.bdf + ": vGPU type changed from " + vf.vgpu_type_id + " to " +
                              seen.vgpu_type_id);
  }
  if (seen.parent_bdf != vf.parent_bdf) {
    return FailedPrecondition(vf.bdf + ": parent GPU changed from " + vf.parent_bdf + " to " +
                              seen.parent_bdf);
  }
  if (seen.iommu_group != vf.iommu_group) {
    return FailedPrecondition(vf.bdf + ": IOMMU group changed from " + vf.iommu_group + " to " +
                              seen.iommu_group);
  }
  return Status::Ok();
}

Result<VgpuVfDiscovery> DiscoverVgpuVfs(const fs::path& sysfs_root) {
  const fs::path devices_dir = sysfs_root / "bus" / "pci" / "devices";
  auto names = ListDirectory(devices_dir);
  if (!names.ok()) {
    return names.status().WithContext("vGPU VF discovery: cannot list " +
                                      EscapeControl(devices_dir.string()));
  }
  VgpuVfDiscovery result;
  for (const std::string& name : *names) {
    auto vf = InspectFunction(sysfs_root, name, &result.warnings);
    if (!vf.ok()) {
      result.warnings.push_back(name + ": skipped: " + vf.status().message());
    } else if (vf->has_value()) {
      if (kubelet_naming::IsValidResourceSuffix((*vf)->profile)) {
        result.vfs.push_back(std::move(**vf));
      } else {
        result.warnings.push_back(name + ": skipped: vGPU profile " +
                                  QuoteAttribute((*vf)->profile) +
                                  " does not make a resource name (1-63 of A-Z a-z 0-9 . _ -)");
      }
    }
  }
  return result;
}

PciDevice AsPciDevice(const VgpuVf& vf) {
  return PciDevice{vf.bdf, vf.device_id, "nvidia", vf.iommu_group, vf.numa_node, vf.iommufd_device};
}

std::vector<std::string> VgpuVfDiscovery::Profiles() const {
  std::set<std::string> profiles;
  for (const VgpuVf& vf : vfs) profiles.insert(vf.profile);
  return {profiles.begin(), profiles.end()};
}

}  // namespace gfp::adapters::host

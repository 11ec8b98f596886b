// The PCI names database (pci.ids), read once at start-up. Lookups follow the Go plugin's
// getDeviceName line by line, so the names (and thus resource names) come out identical.
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/kubelet_naming/resource_naming.h"
#include "common/status.h"

namespace gfp::adapters::host {

// --pci-ids default: the first of these that exists (SPEC §2.1).
inline constexpr std::array<const char*, 3> kDefaultPciIdsPaths = {
    "/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids", "/usr/pci.ids"};

// The first existing file among `candidates`; NotFound listing them all otherwise.
Result<std::filesystem::path> FindPciIdsFile(
    std::span<const char* const> candidates = kDefaultPciIdsPaths);

class PciIds {
 public:
  // An empty database: every lookup falls back to the raw device id.
  PciIds() = default;

  // Parses pci.ids text. InvalidArgument for text that is not a line-oriented text file:
  // a NUL byte, or a line longer than Go's bufio.Scanner accepts (64 KiB).
  static Result<PciIds> Parse(std::string_view text);

  // Whether a line starting with "10de" (the NVIDIA vendor header) was found.
  bool has_nvidia_vendor() const { return has_nvidia_vendor_; }

  // The sanitized name of NVIDIA device `device_id` (e.g. "2330" -> "GH100_H100_SXM5_80GB"),
  // or nullopt when it is not listed or sanitizes to nothing.
  std::optional<std::string> DeviceName(std::string_view device_id) const;

  // DeviceName, falling back to the raw device id like the Go plugin.
  std::string ResourceSuffix(std::string_view device_id) const;

 private:
  bool has_nvidia_vendor_ = false;
  // Lines of the NVIDIA block in file order (comments and '\r' already removed).
  std::vector<std::string> nvidia_lines_;
};

// The kubelet names of NVIDIA device `device_id` (kubelet_naming::NameWholeGpu with its name here).
kubelet_naming::ResourceNaming NameResource(const PciIds& pci_ids, std::string_view device_id);

// Reads and parses `path`; errors name the file: "pci.ids /x/pci.ids: cannot read file: ...".
Result<PciIds> LoadPciIds(const std::filesystem::path& path);

}  // namespace gfp::adapters::host

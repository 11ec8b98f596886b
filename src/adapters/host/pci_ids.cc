#include "adapters/host/pci_ids.h"

#include "adapters/host/file_reading.h"
#include "adapters/kubelet_naming/device_name_sanitizer.h"
#include "common/text_escape.h"

namespace gfp::adapters::host {
namespace {

constexpr std::string_view kNvidiaVendorPrefix = "10de";
constexpr std::size_t kMaxLineBytes = 64 * 1024 - 1;     // Go bufio.MaxScanTokenSize, minus '\n'
constexpr std::size_t kMaxFileBytes = 64 * 1024 * 1024;  // pci.ids is ~1.5 MB today

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

Result<std::filesystem::path> FindPciIdsFile(std::span<const char* const> candidates) {
  std::string tried;
  for (const char* candidate : candidates) {
    auto exists = PathExists(candidate);
    if (exists.ok() && *exists) return std::filesystem::path(candidate);
    tried += tried.empty() ? "" : ", ";
    tried += candidate;
  }
  return NotFound("no pci.ids file found (tried " + tried + ")");
}

Result<PciIds> PciIds::Parse(std::string_view text) {
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    return InvalidArgument("not a text file: NUL byte at offset " + std::to_string(nul));
  }
  PciIds db;
  enum class Phase { kSeekingVendor, kInBlock, kDone } phase = Phase::kSeekingVendor;
  std::size_t line_number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto newline = text.find('\n', pos);
    if (newline == std::string_view::npos) newline = text.size();
    std::string_view line = text.substr(pos, newline - pos);
    pos = newline + 1;
    ++line_number;
    if (line.size() > kMaxLineBytes) {
      return InvalidArgument("line " + std::to_string(line_number) + " is longer than " +
                             std::to_string(kMaxLineBytes) + " bytes");
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // as bufio.ScanLines
    switch (phase) {
      case Phase::kSeekingVendor:
        if (StartsWith(line, kNvidiaVendorPrefix)) {
          db.has_nvidia_vendor_ = true;
          phase = Phase::kInBlock;
        }
        break;
      case Phase::kInBlock:
        if (StartsWith(line, "#")) break;
        // A line without a leading tab is the next vendor: the NVIDIA block has ended.
        if (!StartsWith(line, "\t")) {
          phase = Phase::kDone;
          break;
        }
        db.nvidia_lines_.emplace_back(line);
        break;
      case Phase::kDone:
        break;  // keep scanning only to validate the rest of the file
    }
  }
  return db;
}

std::optional<std::string> PciIds::DeviceName(std::string_view device_id) const {
  const std::string prefix = "\t" + std::string(device_id);
  for (const std::string& line : nvidia_lines_) {
    // A prefix match like Go's, so sub-device lines ("\t\t...") never match and the first
    // matching line decides, even if its name sanitizes to nothing.
    if (!StartsWith(line, prefix)) continue;
    std::string name =
        kubelet_naming::SanitizeDeviceName(std::string_view(line).substr(prefix.size()));
    if (name.empty()) return std::nullopt;
    return name;
  }
  return std::nullopt;
}

std::string PciIds::ResourceSuffix(std::string_view device_id) const {
  auto name = DeviceName(device_id);
  return name ? *name : std::string(device_id);
}

Result<PciIds> LoadPciIds(const std::filesystem::path& path) {
  const std::string context = "pci.ids " + EscapeControl(path.string());
  auto text = ReadWholeFile(path, kMaxFileBytes);
  if (!text.ok()) return text.status().WithContext(context + ": cannot read file");
  auto db = PciIds::Parse(*text);
  if (!db.ok()) return db.status().WithContext(context);
  return db;
}

kubelet_naming::ResourceNaming NameResource(const PciIds& pci_ids, std::string_view device_id) {
  return kubelet_naming::NameWholeGpu(device_id, pci_ids.DeviceName(device_id));
}

}  // namespace gfp::adapters::host

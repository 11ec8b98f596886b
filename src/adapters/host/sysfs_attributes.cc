#include "adapters/host/sysfs_attributes.h"

#include <charconv>

#include "adapters/host/file_reading.h"
#include "common/text_escape.h"

namespace gfp::adapters::host {
namespace {

constexpr std::size_t kMaxAttributeBytes = 4096;  // a sysfs attribute is at most one page

std::string_view TrimAsciiSpace(std::string_view s) {
  const char* space = " \t\n\v\f\r";
  const auto begin = s.find_first_not_of(space);
  if (begin == std::string_view::npos) return {};
  const auto end = s.find_last_not_of(space);
  return s.substr(begin, end - begin + 1);
}

bool IsDecimal(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Escaped, quoted and shortened: attribute content is untrusted and goes into log lines.
std::string Quoted(std::string_view s) { return "\"" + EscapeAndTruncate(s, 32) + "\""; }

}  // namespace

std::string QuoteAttribute(std::string_view content) { return Quoted(TrimAsciiSpace(content)); }

std::optional<std::string> ParseHexIdAttribute(std::string_view content) {
  std::string_view s = TrimAsciiSpace(content);
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.size() != 4) return std::nullopt;
  std::string id;
  for (char c : s) {
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) {
      id += c;
    } else if (c >= 'A' && c <= 'F') {
      id += static_cast<char>(c - 'A' + 'a');
    } else {
      return std::nullopt;
    }
  }
  return id;
}

std::optional<std::int64_t> ParseNumaNodeAttribute(std::string_view content) {
  const std::string_view s = TrimAsciiSpace(content);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (end != s.data() + s.size()) return std::nullopt;
  if (error == std::errc::result_out_of_range) {
    return s.front() == '-' ? std::optional<std::int64_t>(0) : std::nullopt;
  }
  if (error != std::errc()) return std::nullopt;
  if (value < 0) return 0;
  if (value > kMaxNumaNode) return std::nullopt;
  return value;
}

Result<std::string> ReadHexIdAttribute(const std::filesystem::path& device_dir,
                                       const std::string& name) {
  auto content = ReadWholeFile(device_dir / name, kMaxAttributeBytes);
  if (!content.ok()) {
    return Status(content.status().code(),
                  "cannot read " + name + ": " + content.status().message());
  }
  auto id = ParseHexIdAttribute(*content);
  if (!id) {
    return InvalidArgument(name + " " + Quoted(TrimAsciiSpace(*content)) +
                           " is not a 4-digit hex id");
  }
  return *id;
}

Result<std::string> ReadIommuGroup(const std::filesystem::path& device_dir) {
  auto group = ReadLinkBasename(device_dir / "iommu_group");
  if (!group.ok()) {
    return Status(group.status().code(),
                  "cannot read iommu_group link: " + group.status().message());
  }
  // The group becomes a path component (/dev/vfio/<group>), so it must be a plain number.
  if (!IsDecimal(*group)) {
    return InvalidArgument("iommu_group link points to " + Quoted(*group) + ", not a group number");
  }
  return *group;
}

}  // namespace gfp::adapters::host

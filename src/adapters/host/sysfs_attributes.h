// Parsing of the few sysfs attributes discovery needs. Kept apart from the directory walk so
// the re-check at Allocate time reads them exactly the same way.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace gfp::adapters::host {

// "0x10de\n" -> "10de". Strips one "0x"/"0X" and surrounding whitespace, lower-cases, and
// requires exactly 4 hex digits (vendor/device ids are 16-bit).
std::optional<std::string> ParseHexIdAttribute(std::string_view content);

// Linux numbers NUMA nodes below MAX_NUMNODES, at most 1024 (NODES_SHIFT <= 10).
inline constexpr std::int64_t kMaxNumaNode = 1023;

// "1\n" -> 1; "-1\n" (no affinity) and other negative numbers -> 0, as the Go plugin does.
// nullopt for content that is not a NUMA node id: garbage, or a number above kMaxNumaNode
// (which, cast to a narrower int, would turn into -1 or some other node). The caller uses
// node 0 and warns.
std::optional<std::int64_t> ParseNumaNodeAttribute(std::string_view content);

// Attribute content as it may appear in a message: trimmed, escaped, shortened and quoted.
std::string QuoteAttribute(std::string_view content);

// Reads <device_dir>/<name> and parses it as a hex id. Errors say
// "cannot read vendor: <reason>" or "vendor \"xyz\" is not a 4-digit hex id".
Result<std::string> ReadHexIdAttribute(const std::filesystem::path& device_dir,
                                       const std::string& name);

// Reads the iommu_group link; errors say "cannot read iommu_group link: <reason>" or
// "iommu_group link points to \"x\", not a group number".
Result<std::string> ReadIommuGroup(const std::filesystem::path& device_dir);

}  // namespace gfp::adapters::host

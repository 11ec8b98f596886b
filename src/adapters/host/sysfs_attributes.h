// Parsing of the few sysfs attributes discovery needs. Kept apart from the directory walk so
// the re-check at Allocate time reads them exactly the same way.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace gfp::adapters {

// "0x10de\n" -> "10de". Strips one "0x"/"0X" and surrounding whitespace, lower-cases, and
// requires exactly 4 hex digits (vendor/device ids are 16-bit).
std::optional<std::string> ParseHexIdAttribute(std::string_view content);

// "1\n" -> 1; "-1\n", garbage -> 0 (the Go plugin treats both as "NUMA node 0").
std::int64_t ParseNumaNodeAttribute(std::string_view content);

// Reads <device_dir>/<name> and parses it as a hex id. Errors say
// "cannot read vendor: <reason>" or "vendor \"xyz\" is not a 4-digit hex id".
Result<std::string> ReadHexIdAttribute(const std::filesystem::path& device_dir,
                                       const std::string& name);

// Reads the iommu_group link; errors say "cannot read iommu_group link: <reason>" or
// "iommu_group link points to \"x\", not a group number".
Result<std::string> ReadIommuGroup(const std::filesystem::path& device_dir);

}  // namespace gfp::adapters

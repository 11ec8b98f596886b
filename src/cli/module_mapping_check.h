// `module-mapping check` (SPEC §2.3a): the mapping file against the GPUs in sysfs and, when
// given, against Fabric Manager's partition table.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "adapters/fm/fm_types.h"
#include "common/status.h"

namespace gfp::cli {

struct MappingCheckReport {
  std::vector<std::string> problems;  // one line each; any problem means exit 1
  std::vector<std::string> notes;     // worth knowing, not wrong (stderr)
  std::string summary;                // the "consistent" line
};

// Error (exit 2) only when the file or sysfs cannot be read; everything wrong with the content
// is a problem line. `fm_partitions` is FM's supported partitions, when checked against FM.
Result<MappingCheckReport> CheckModuleMappingFile(
    const std::filesystem::path& mapping_file, const std::filesystem::path& sysfs_root,
    const std::optional<std::vector<adapters::fm::PartitionInfo>>& fm_partitions);

}  // namespace gfp::cli

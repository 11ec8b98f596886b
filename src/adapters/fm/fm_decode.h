// Defensive decoding of the structs Fabric Manager fills in. Counts above the documented maxima,
// unterminated strings, duplicate ids and impossible physical ids are reported as errors that
// name the field; nothing is read outside the struct.
#pragma once

#include <cstdint>
#include <vector>

#include "adapters/fm/fm_abi.h"
#include "adapters/fm/fm_types.h"
#include "common/status.h"

namespace gfp::adapters::fm {

Result<std::vector<PartitionInfo>> DecodePartitionList(const abi::FabricPartitionList& list);
Result<std::vector<std::uint32_t>> DecodeUnsupportedPartitions(
    const abi::UnsupportedFabricPartitionList& list);
Result<NvlinkFailedDevices> DecodeNvlinkFailedDevices(const abi::NvlinkFailedDevices& devices);

}  // namespace gfp::adapters::fm

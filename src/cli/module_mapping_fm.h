// Fabric Manager's side of `module-mapping` (SPEC §2.3a): its partition table, and the BDF ->
// module id mapping it implies where it reports GPU PCI bus ids (HGX A100 / HGX-2 class).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "adapters/fm/fm_types.h"
#include "common/status.h"

namespace gfp::cli {

struct FmFlags {
  std::string address;
  std::string library;
};

// Loads the library, connects and reads the supported partitions; the error names the step.
Result<std::vector<adapters::fm::PartitionInfo>> ReadFmPartitions(const FmFlags& flags);

// Canonical BDF -> module id from the partitions' pciBusId fields. FailedPrecondition naming the
// modules when FM reports no bus id for some GPU (H100 and later leave it empty), InvalidArgument
// when the table contradicts itself (one module at two bus ids, one bus id for two modules).
Result<std::map<std::string, std::uint32_t>> MappingFromFmPartitions(
    const std::vector<adapters::fm::PartitionInfo>& partitions);

// The module ids of one partition, "1, 2, 3" style, for messages.
std::string JoinIds(const std::vector<std::uint32_t>& ids);

}  // namespace gfp::cli

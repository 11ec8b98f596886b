// A device's NUMA node for discovery, read the one way every kind of device shares: no file or
// -1 means node 0 silently (as the Go plugin); anything unusable means node 0 and a warning.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace gfp::adapters::host {

// Reads <device_dir>/numa_node. Warnings start with `who` ("0000:1b:00.4",
// "<uuid>: parent 0000:07:00.0"): `<who>: numa_node "x" is not a NUMA node id (0..1023); using
// NUMA node 0` or `<who>: cannot read numa_node: <reason>; using NUMA node 0`.
std::int64_t ReadNumaNodeOrZero(const std::filesystem::path& device_dir, const std::string& who,
                                std::vector<std::string>* warnings);

}  // namespace gfp::adapters::host

// The text of the NFD local feature file (SPEC §8.2): pure, no I/O.
//
// Node Feature Discovery's `local` source reads every file in its features.d directory whose
// name does not start with '.': one `name=value` per line, '#' starts a comment, and a comment
// starting with "# +" is a directive (`# +expiry-time=…`, `# +no-label`, …; an unknown one is
// logged as an error by nfd-worker). A name without a namespace is published as the node label
// `feature.node.kubernetes.io/<name>`. Files above 64 KiB are skipped.
#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace gfp::plugin::labels {

// NFD skips feature files larger than this (nfd-worker's MaxFeatureFileSize).
inline constexpr std::size_t kNfdMaxFeatureFileBytes = 65536;

// For each size S of Fabric Manager's table `gpu-fabric.free-partitions.S=<count>`, sizes
// ascending, then `gpu-fabric.largest-free-partition=<N>` (0 when none is free), after a
// comment header that names the writer. No expiry directive: see docs/scheduling.md.
// `free_by_size` is sm::FreePartitionsBySize's answer.
std::string FormatNodeLabels(const std::map<std::size_t, std::size_t>& free_by_size);

}  // namespace gfp::plugin::labels

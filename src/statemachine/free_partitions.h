// How many partitions of each size a VM could get right now (SPEC §8.1 gpu_fabric_partitions_free,
// §8.2 the NFD labels): the scheduler counts GPUs, this counts whole partitions.
#pragma once

#include <cstddef>
#include <map>

#include "statemachine/state.h"

namespace gfp::sm {

// For every partition size (GPU count) in Fabric Manager's table, the number of partitions of
// that size that are supported, not degraded, whose GPUs are all mapped, healthy (on a vGPU VF
// node: have a healthy VF) and held by no live allocation (directly or through any of its VFs).
// Every size of the table is a key, with 0 when none is free. Empty without Fabric Manager or
// before its table is known.
std::map<std::size_t, std::size_t> FreePartitionsBySize(const State& state);

// The largest size with at least one free partition; 0 when none is free.
std::size_t LargestFreePartition(const std::map<std::size_t, std::size_t>& free_by_size);

}  // namespace gfp::sm

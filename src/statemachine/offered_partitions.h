// The partitions DRA mode offers to the scheduler (SPEC §11). A ResourceSlice attribute
// `partition<S>` holds one partition id per GPU and size, so per size only partitions that share
// no GPU can be offered: the supported, non-degraded partitions of that size in id order, each
// taken when none of its GPUs is in one already taken (a greedy disjoint cover). On most tables
// that is every partition; on the 16-GPU tables the cross-board 8-GPU partitions are left out
// (device-plugin mode still serves them).
#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "statemachine/state.h"

namespace gfp::sm {

struct OfferedPartitions {
  // Per size (GPU count): the offered partitions, in id order.
  std::map<std::size_t, std::vector<PartitionId>> offered;
  // Per size: the supported, non-degraded partitions left out because they overlap an offered
  // one (listed once at start, so an operator knows what DRA cannot reach).
  std::map<std::size_t, std::vector<PartitionId>> left_out;
  // Per GPU module: the offered partition of each size that holds it (the slice's
  // `partition<S>` attributes); a size is absent where no offered partition holds the GPU.
  std::map<ModuleId, std::map<std::size_t, PartitionId>> of_module;
};

// The offer for Fabric Manager's table; empty for an empty table (no FM, or not known yet).
OfferedPartitions OfferPartitions(const std::map<PartitionId, PartitionState>& table);

}  // namespace gfp::sm

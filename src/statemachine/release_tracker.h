// Decides when an allocation's devices have been unused long enough to release it (SPEC §4.6).
// Fed only with successful PodResources Lists; holds the time each allocation was first seen
// absent. Deterministic and clock-free: times come in as arguments. After a restart it starts
// empty, so absence is measured again from the first List: release is delayed, never early.
#pragma once

#include <map>
#include <vector>

#include "statemachine/commands.h"
#include "statemachine/state.h"

namespace gfp::sm {

class ReleaseTracker {
 public:
  struct Due {
    std::vector<AllocationId> allocations;
    std::vector<PartitionId> orphan_partitions;  // adopted or ownerless, no pod holds their GPUs
    // First seen in no pod by this List: released after the grace unless seen again.
    std::vector<AllocationId> newly_absent;
  };

  // One successful List at `now`: which allocations and ownerless partitions are due.
  Due Observe(const State& state, const std::vector<PodContainerDevices>& containers, Micros now);

  // Allocation ids currently held by some container (the last List).
  const std::vector<AllocationId>& held() const { return held_; }

 private:
  std::map<AllocationId, Micros> absent_since_;
  std::map<PartitionId, Micros> orphan_absent_since_;
  std::vector<AllocationId> held_;
};

}  // namespace gfp::sm

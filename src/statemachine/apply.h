// apply(state, event): the only way state changes. Total and deterministic: every event, however
// out of place, yields a state (an event that makes no sense is recorded as an anomaly and
// otherwise changes nothing), and the same events always yield the same state.
#pragma once

#include <cstdint>
#include <string_view>

#include "statemachine/events.pb.h"
#include "statemachine/state.h"

namespace gfp::sm {

// Applies `event`, journaled at `seq`, to `state` in place.
void Apply(State& state, std::uint64_t seq, const events::Event& event);

// The table entry a PartitionTableObserved event records for `partition` (its `active` flag is
// FM's view at the time, not part of the table).
PartitionState PartitionFromEvent(const events::Partition& partition);

// Allocation ids are derived from a counter in the state so that decide() stays deterministic.
inline constexpr std::string_view kAllocationIdPrefix = "alloc-";
AllocationId AllocationIdFor(std::uint64_t number);

}  // namespace gfp::sm

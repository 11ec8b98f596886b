// decide(state, command) -> events to journal + effects to carry out. Pure: it reads the state
// and the command only. The caller journals the events (then applies them), carries out the
// effects in order, and feeds each effect's outcome back as RecordFabricManagerOutcome or
// RecordResyncOutcome, which decides the next step. A multi-step allocation (deactivate stale
// partitions, then activate) is therefore a chain of decisions, each journaled before its effect.
#pragma once

#include <string>
#include <vector>

#include "statemachine/commands.h"
#include "statemachine/events.pb.h"
#include "statemachine/state.h"

namespace gfp::sm {

struct Effect {
  enum class Kind { kActivatePartition, kDeactivatePartition, kSetActivatedPartitions };
  Kind kind = Kind::kActivatePartition;
  PartitionId partition_id = 0;            // activate / deactivate
  std::vector<PartitionId> partition_ids;  // set-activated

  bool operator==(const Effect&) const = default;
};

struct Decision {
  std::vector<events::Event> events;
  std::vector<Effect> effects;
  // For commands that answer a caller (RequestAllocation, EnsurePartitionActive): why it was
  // refused, in words fit for a gRPC error. Empty when not refused.
  std::string refusal;
  // RequestAllocation: the allocation the events are about.
  AllocationId allocation_id;
  // The scratch state Decide reasoned with, once its own events were applied to it. Applying
  // `events` to the state Decide was given must yield exactly this (the property tests check it).
  State state_after;
};

Decision Decide(const State& state, const Command& command);

// The command that reports what Fabric Manager answered to `effect` (the next step of a saga).
Command OutcomeOf(const Effect& effect, Micros now, const events::FmResult& fm);

// The longest device id accepted; longer ones and ids with path characters are refused.
inline constexpr std::size_t kMaxDeviceIdLength = 63;

}  // namespace gfp::sm

// decide(state, command) -> events to journal + effects to carry out. Pure: it reads the state
// and the command only. The caller journals the events (then applies them), carries out the
// effects in order, and feeds each effect's outcome back as RecordFabricManagerOutcome or
// RecordResyncOutcome, which decides the next step. A multi-step allocation (deactivate stale
// partitions, then activate) is therefore a chain of decisions, each journaled before its effect.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "statemachine/commands.h"
#include "statemachine/events.pb.h"
#include "statemachine/state.h"

namespace gfp::sm {

struct Effect {
  enum class Kind { kActivatePartition, kDeactivatePartition, kSetActivatedPartitions };
  Kind kind = Kind::kActivatePartition;
  PartitionId partition_id = 0;            // activate / deactivate
  std::vector<PartitionId> partition_ids;  // set-activated
  // activate: non-empty for vGPU VFs (fmActivateFabricPartitionWithVFs), vf_bdfs[i] on the
  // partition's i-th GPU; empty for whole GPUs (fmActivateFabricPartition).
  std::vector<Bdf> vf_bdfs;

  bool operator==(const Effect&) const = default;
};

// What kind of refusal a decision's `refusal` is, so the caller's error code says it (mapped in
// one place: RefusalErrorCode).
enum class RefusalKind {
  kNone,
  kInvalidRequest,         // malformed, unknown or repeated device ids, another resource's device
  kNotServable,            // valid, but not now: no partition with exactly these GPUs, a GPU
                           // unhealthy or unmapped, a partition degraded or busy
  kFabricManagerUnusable,  // Fabric Manager not connected, its partition table not known yet
  kFabricManagerRefused,   // Fabric Manager answered the call with an error (refusal_fm_code)
  kInterrupted,            // the request did not complete (restart, journal failure): retry
};

struct Decision {
  std::vector<events::Event> events;
  std::vector<Effect> effects;
  // For commands that answer a caller (RequestAllocation, EnsurePartitionActive): why it was
  // refused, in words fit for a gRPC error. Empty when not refused.
  std::string refusal;
  RefusalKind refusal_kind = RefusalKind::kNone;
  int refusal_fm_code = 0;  // kFabricManagerRefused: FM's return code
  // RequestAllocation: the allocation the events are about.
  AllocationId allocation_id;
  // The scratch state Decide reasoned with, once its own events were applied to it; unset when
  // `events` is empty (the state is then the one given). Applying `events` to the state Decide
  // was given must yield exactly this (the property tests check it). Engine::Execute adopts it
  // as its new state instead of applying the events a second time, and returns it unset.
  std::optional<State> state_after;
};

Decision Decide(const State& state, const Command& command);

// The command that reports what Fabric Manager answered to `effect` (the next step of a saga).
Command OutcomeOf(const Effect& effect, Micros now, const events::FmResult& fm);

// The error code a refusal is reported with: INVALID_ARGUMENT, FAILED_PRECONDITION, UNAVAILABLE,
// or for Fabric Manager's refusal the category of its code (fm_codes/fm_codes.h).
ErrorCode RefusalErrorCode(RefusalKind kind, int fm_return = 0);
inline ErrorCode RefusalErrorCode(const Decision& d) {
  return RefusalErrorCode(d.refusal_kind, d.refusal_fm_code);
}

// The longest device id accepted; longer ones and ids with path characters are refused.
inline constexpr std::size_t kMaxDeviceIdLength = 63;

}  // namespace gfp::sm
